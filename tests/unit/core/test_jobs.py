import pytest

from gpuportal_core.jobs import (
    ParseError,
    Phase,
    describe_reason,
    parse_sacct,
    parse_sbatch_parsable,
    parse_scontrol_job,
    parse_squeue,
)

SQUEUE = """\
4|RUNNING|None|gpu01|2026-11-22T10:13:58|alice|8:00:00|gpu01|gpuportal:session:local:alice:
5|PENDING|Resources|n/a|2026-11-22T18:13:58|bob|1-00:00:00|(null)|(null)
6|PENDING|QOSMaxGRESPerUser|n/a|N/A|carol|8:00:00||
7|SUSPENDED|None|gpu02|2026-11-22T09:00:00|alice|8:00:00|gpu02|
8|COMPLETING|None|gpu02|2026-11-22T09:00:00|alice|8:00:00|gpu02|
9|NODE_FAIL|None|gpu02|2026-11-22T09:00:00|bob|8:00:00|gpu02|
10|REQUEUED|BeginTime|n/a|N/A|bob|8:00:00|(null)|
11|RUNNING|None|gpu01|2026-11-22T09:00:00|bob|2:00|gpu[01-02]|my|own|comment
"""


def test_squeue_lines_become_jobs():
    jobs = parse_squeue(SQUEUE)
    assert jobs["4"].host == "gpu01" and jobs["4"].phase is Phase.RUNNING
    assert jobs["5"].host == "" and jobs["5"].phase is Phase.QUEUED
    assert jobs["7"].phase is Phase.SUSPENDED
    assert jobs["8"].phase is Phase.ENDING
    assert jobs["9"].phase is Phase.ENDED
    assert jobs["10"].phase is Phase.REQUEUED


def test_squeue_lines_carry_limit_nodes_and_the_whole_comment():
    jobs = parse_squeue(SQUEUE)
    assert (jobs["4"].time_limit, jobs["4"].nodes) == ("8:00:00", "gpu01")
    assert jobs["4"].comment == "gpuportal:session:local:alice:"
    assert (jobs["5"].nodes, jobs["5"].comment) == ("", "")
    # A user's own comment may hold the separator: it is the last field, kept whole.
    assert (jobs["11"].nodes, jobs["11"].comment) == ("gpu[01-02]", "my|own|comment")


def test_waiting_message_explains_the_reason_and_start():
    jobs = parse_squeue(SQUEUE)
    assert jobs["5"].waiting_message() == (
        "Job 5 is queued: waiting for GPUs to become free. Expected start: 2026-11-22 18:13:58."
    )
    assert (
        jobs["6"].waiting_message() == "Job 6 is queued: you are at your QOS limit of GPUs in use."
    )


def test_unknown_reason_is_passed_through():
    job = parse_squeue("11|PENDING|SomeNewReason|n/a|N/A|bob|8:00:00||")["11"]
    assert "Slurm says: SomeNewReason" in job.waiting_message()


def test_bad_squeue_line_is_an_error_not_an_empty_queue():
    with pytest.raises(ParseError):
        parse_squeue("slurm_load_jobs error: Socket timed out on send/recv operation")


@pytest.mark.parametrize(
    ("output", "job_id"), [("123\n", "123"), ("124;local\n", "124"), ("warn\n125", "125")]
)
def test_sbatch_parsable_output(output, job_id):
    assert parse_sbatch_parsable(output) == job_id


@pytest.mark.parametrize("output", ["", "Submitted batch job abc", "12a"])
def test_sbatch_garbage_is_an_error(output):
    with pytest.raises(ParseError):
        parse_sbatch_parsable(output)


def test_scontrol_detail_of_a_failed_job() -> None:
    text = (
        "JobId=341 JobName=wrap UserId=alice(10001) GroupId=alice(10001) JobState=FAILED "
        "Reason=NonZeroExitCode Dependency=(null) ExitCode=3:0 SubmitTime=2026-11-22T11:33:48 "
        "StartTime=2026-11-22T11:33:48 EndTime=2026-11-22T11:33:50 NodeList=gpu01 "
        "Command=(null) WorkDir=/home/alice\n"
    )
    detail = parse_scontrol_job(text)
    assert detail is not None
    assert (detail.job_id, detail.user, detail.state) == ("341", "alice", "FAILED")
    assert (detail.exit_code, detail.signal, detail.nodes) == (3, 0, "gpu01")
    assert detail.end_time == "2026-11-22T11:33:50"


def test_scontrol_detail_of_a_pending_job_has_no_exit_code_yet() -> None:
    text = (
        "JobId=12 UserId=bob(10002) JobState=PENDING Reason=Resources ExitCode=0:0 "
        "SubmitTime=2026-11-22T11:00:00 StartTime=Unknown EndTime=Unknown NodeList=(null)\n"
    )
    detail = parse_scontrol_job(text)
    assert detail is not None
    assert (detail.exit_code, detail.start_time, detail.nodes) == (None, "", "")
    assert parse_scontrol_job("") is None


def test_sacct_lines_for_a_job_and_an_array():
    text = (
        "22|bob|CANCELLED by 0|0:0|2026-11-23T10:39:48|None|2026-11-23T10:39:51|None assigned|"
        "None\n30_1|alice|FAILED|3:0|2026-11-23T10:00:00|2026-11-23T10:00:01|"
        "2026-11-23T10:05:00|gpu01|None\n"
        "30_[2-3]|alice|PENDING|0:0|2026-11-23T10:00:00|Unknown|Unknown||AssocGrpGRES\n"
    )
    cancelled, failed, waiting = parse_sacct(text)
    assert (cancelled.job_id, cancelled.state, cancelled.nodes, cancelled.start_time) == (
        "22",
        "CANCELLED",
        "",
        "",
    )
    assert (failed.job_id, failed.array_task, failed.exit_code, failed.nodes) == (
        "30",
        "1",
        3,
        "gpu01",
    )
    assert (waiting.array_task, waiting.exit_code, waiting.reason) == ("2-3", None, "AssocGrpGRES")


def test_a_job_held_by_a_maintenance_window_says_so():
    # squeue's reason for a job whose time limit runs into a MAINT reservation (Slurm 22.05).
    why = describe_reason("ReqNodeNotAvail, Reserved for maintenance")
    assert why.startswith("its time limit runs into a maintenance window")
