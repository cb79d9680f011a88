"""Group GPU limits from sacctmgr, and a group's use of its limit from the running jobs."""

from __future__ import annotations

from gpuportal_core.accounting import group_use, parse_associations
from gpuportal_core.capacity import GpuJob, parse_jobs

SACCTMGR = """\
root||
root|root|
ds||gres/gpu=6
ds|alice|
ds|bob|
vision||cpu=64,gres/gpu:a100=2
vision|dave|
hpc-admins||
hpc-admins|carol|
"""


def job(job_id: str, account: str, user: str, gpus: int, *, running: bool = True) -> GpuJob:
    return GpuJob(job_id, running, "gpu", gpus, 1, 3600, None, 0, (), account, user)


def test_limits_and_accounts():
    assocs = parse_associations(SACCTMGR)
    assert assocs.gpu_limits == {"ds": 6, "vision": 2}
    assert (assocs.account_of("bob"), assocs.account_of("nobody")) == ("ds", "")


def test_use_counts_running_jobs_of_the_group_only():
    assocs = parse_associations(SACCTMGR)
    jobs = [
        job("1", "ds", "alice", 4),
        job("2", "ds", "bob", 1),
        job("3", "ds", "bob", 2, running=False),  # waiting: not in use
        job("4", "vision", "dave", 2),
    ]
    use = group_use(assocs, "bob", jobs)
    assert use is not None
    assert (use.used, use.limit, use.mine) == (5, 6, 1)
    assert use.describe().startswith("Your group ds uses 5 of its 6 GPUs (you: 1)")
    assert use.fits(1) and not use.fits(2)
    assert use.waits(2).startswith("Waits for your group's GPU limit: 5 of 6 in use, this needs 2")
    assert group_use(assocs, "carol", jobs) is None  # hpc-admins: no limit


def test_squeue_lines_carry_account_and_user():
    [parsed] = parse_jobs("7|RUNNING|gpu|gres/gpu:2|2|8:00:00|N/A|100|gpu[01-02]|ds|alice\n")
    assert (parsed.account, parsed.user, parsed.gpus) == ("ds", "alice", 4)
