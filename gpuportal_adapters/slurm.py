"""An async Slurm client: argv lists (never a shell), each call with a timeout."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from gpuportal_adapters.slurm_commands import (
    DEFAULT_RUN_AS,
    CommandResult,
    command_env,
    run_command,
)

# The client's two errors, where its callers import them from (explicit re-exports).
from gpuportal_adapters.slurm_commands import SlurmError as SlurmError
from gpuportal_adapters.slurm_commands import SlurmUnavailable as SlurmUnavailable
from gpuportal_core.accounting import ASSOC_FORMAT, Associations, parse_associations
from gpuportal_core.capacity import (
    HOLDING,
    JOBS_FORMAT,
    NODES_FORMAT,
    GpuJob,
    NodeGpus,
    parse_jobs,
    parse_nodes,
)
from gpuportal_core.efficiency import SACCT_USE_FORMAT, Efficiency, parse_use
from gpuportal_core.jobs import (
    SACCT_FORMAT,
    SQUEUE_FORMAT,
    JobDetail,
    JobInfo,
    parse_sacct,
    parse_sbatch_parsable,
    parse_scontrol_jobs,
    parse_squeue,
)
from gpuportal_core.partitions import SINFO_FORMAT, Partition, parse_sinfo
from gpuportal_core.reservations import Reservation, parse_reservations
from gpuportal_core.tags import parse_tag
from gpuportal_core.usage import (
    SACCT_GPU_FORMAT,
    SSHARE_FORMAT,
    FairShare,
    gpu_hours,
    parse_fairshare,
)

log = logging.getLogger(__name__)

# What a helper command run as a user may print (its output is theirs to choose): more than a
# job's page shows, or a session's GPU readings hold. A caller that reads more says so.
USER_OUTPUT_MAX = 1024 * 1024

# squeue/scancel say this for a job id that has left slurmctld's memory: the job is gone.
_GONE_MARKERS = ("Invalid job id specified", "Invalid job id")
# These mean the controller could not be asked: state unknown, not "job gone".
_UNREACHABLE_MARKERS = (
    "Unable to contact slurm controller",
    "Socket timed out",
    "Connection refused",
    "Zero Bytes were transmitted",
)


def _last_line(text: str) -> str:
    """The last non-empty line: Slurm's commands print their warnings first and the error (or
    the answer) last."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _raise_for(argv: Sequence[str], result: CommandResult) -> None:
    message = _last_line(result.stderr) or _last_line(result.stdout) or "no output"
    # sbatch prefixes its errors with "sbatch: error: "; the rest is what a user needs to read.
    for prefix in ("sbatch: error: ", "squeue: error: ", "scancel: error: ", "sinfo: error: "):
        message = message.removeprefix(prefix)
    if any(marker in result.stderr for marker in _UNREACHABLE_MARKERS):
        raise SlurmUnavailable(argv, result.returncode, message)
    raise SlurmError(argv, result.returncode, message)


class SlurmClient:
    """Submits, queries and cancels jobs; submission and cancel run as the job's user."""

    def __init__(
        self,
        *,
        run_as: Sequence[str] = DEFAULT_RUN_AS,
        timeout: float = 20.0,
        bin_dir: str = "",
    ) -> None:
        self._run_as = list(run_as)
        self._timeout = timeout
        self._bin = bin_dir.rstrip("/") + "/" if bin_dir else ""

    def _as_user(self, user: str, *argv: str, keep: Iterable[str] = ()) -> list[str]:
        """run_as filled in; a part naming {keep} is left out when no variable is kept."""
        kept = ",".join(sorted(keep))
        prefix = [
            part.replace("{user}", user).replace("{keep}", kept)
            for part in self._run_as
            if kept or "{keep}" not in part
        ]
        return [*prefix, *argv]

    def user_command(self, user: str, *argv: str, keep: Iterable[str] = ()) -> list[str]:
        """argv as the user (the run-as prefix), for a process the caller runs itself; keep:
        the variables of its environment that pass through sudo (SESSION_ENV's names)."""
        return self._as_user(user, *argv, keep=keep)

    async def submit(
        self,
        script: str,
        *,
        user: str,
        env: Mapping[str, str],
        test_only: bool = False,
        tag: str = "",
    ) -> str:
        """Submit script as user; return the job id (or sbatch's verdict with test_only).

        tag: the job's comment (gpuportal_core.tags), by which it is found again if sbatch times
        out after submitting.
        """
        options = [f"--comment={tag}"] if tag else []
        argv = self._as_user(
            user,
            self._bin + "sbatch",
            "--test-only" if test_only else "--parsable",
            *options,
            keep=env,
        )
        result = await run_command(
            argv, input_text=script, env=command_env(env), timeout=self._timeout
        )
        if result.returncode != 0:
            _raise_for(argv, result)
        if test_only:
            # --test-only answers on stderr: "sbatch: Job 12 to start at ... on nodes gpu01".
            return _last_line(result.stderr)
        return parse_sbatch_parsable(result.stdout)

    async def jobs(self, job_ids: Iterable[str]) -> dict[str, JobInfo]:
        """One squeue for all the given jobs; jobs missing from the answer have ended."""
        # Numeric order where ids are numbers ("12_3", an array task's, after them).
        ids = sorted({j for j in job_ids if j}, key=lambda j: (not j.isdigit(), len(j), j))
        if not ids:
            return {}
        argv = [
            self._bin + "squeue",
            "--noheader",
            "--states=all",
            f"--jobs={','.join(ids)}",
            f"--format={SQUEUE_FORMAT}",
        ]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            if any(marker in result.stderr for marker in _GONE_MARKERS):
                # A lone purged id makes squeue fail; any others then are gone too or
                # get asked again next time, so treat the whole answer as empty.
                return {}
            _raise_for(argv, result)
        return parse_squeue(result.stdout)

    async def queue(self, *, user: str = "", users: Iterable[str] = ()) -> list[JobInfo]:
        """Every job Slurm lists (ended ones too, while it does), in one squeue; of `user`, or
        of `users`, if given."""
        argv = [self._bin + "squeue", "--noheader", "--states=all", f"--format={SQUEUE_FORMAT}"]
        names = sorted({user, *users} - {""})
        if names:
            argv.append(f"--user={','.join(names)}")
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        return list(parse_squeue(result.stdout).values())

    async def job_names(self, job_ids: Iterable[str]) -> dict[str, str]:
        """The names of these jobs (a job Slurm no longer lists has none)."""
        ids = sorted(set(job_ids))
        if not ids:
            return {}
        argv = [self._bin + "squeue", "--noheader", "--states=all", "--format=%i|%j"]
        argv.append(f"--jobs={','.join(ids)}")
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            return {}  # a job that just left makes squeue fail: the names are a nicety
        pairs = (line.split("|", 1) for line in result.stdout.splitlines() if "|" in line)
        return {job_id.strip(): name.strip() for job_id, name in pairs}

    async def tagged(
        self, *tags: str, user: str = "", users: Iterable[str] = (), alive_only: bool = True
    ) -> list[JobInfo]:
        """Jobs whose comment is one of `tags` (with none: any of the portal's tags), in one
        squeue; of `user`, or of `users`, if given.

        This is how a job is found again after a hub restart or a submission that timed out.
        alive_only=False also returns jobs that have ended but that Slurm still lists (a short
        job may be done before the answer is read).
        """
        jobs = [job for job in await self.queue(user=user, users=users) if job.comment]
        if alive_only:
            jobs = [job for job in jobs if job.described.alive]
        if not tags:
            return [job for job in jobs if parse_tag(job.comment) is not None]
        return [job for job in jobs if job.comment in tags]

    async def job_detail(self, job_id: str) -> JobDetail | None:
        """What scontrol knows of one job (until Slurm forgets it, MinJobAge after it ends)."""
        details = await self.job_details(job_id)
        return details[0] if details else None

    async def job_details(self, job_id: str) -> list[JobDetail]:
        """Every record scontrol has for a job id: the job, or each task of an array."""
        argv = [self._bin + "scontrol", "show", "job", "--oneliner", job_id]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            if any(marker in result.stderr for marker in _GONE_MARKERS):
                return []
            _raise_for(argv, result)
        return parse_scontrol_jobs(result.stdout)

    async def accounting(self, job_id: str) -> list[JobDetail]:
        """What Slurm's accounting (sacct, slurmdbd) keeps of a job after the controller forgot
        it: the job, or each task of an array. SlurmError where there is no accounting."""
        argv = [self._bin + "sacct", "-X", "-n", "-P", f"--format={SACCT_FORMAT}", f"-j{job_id}"]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        return parse_sacct(result.stdout)

    async def associations(self) -> Associations:
        """Accounts' GPU limits and users' accounts (sacctmgr); SlurmError without accounting."""
        argv = [self._bin + "sacctmgr", "-n", "-P", "show", "assoc", f"format={ASSOC_FORMAT}"]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        return parse_associations(result.stdout)

    async def gpu_nodes(self) -> list[NodeGpus]:
        """Every node's GPUs, used and total (one sinfo)."""
        argv = [self._bin + "sinfo", "--Node", "--noheader", f"--Format={NODES_FORMAT}"]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        return parse_nodes(result.stdout)

    async def gpu_jobs(self) -> list[GpuJob]:
        """Every job that holds or waits for GPUs, of all users (one squeue)."""
        argv = [
            self._bin + "squeue",
            "--noheader",
            f"--states={','.join((*HOLDING, 'PENDING'))}",
            f"--format={JOBS_FORMAT}",
        ]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        return parse_jobs(result.stdout)

    async def use(self, job_id: str) -> Efficiency | None:
        """What an ended job used of what it asked for (sacct, from slurmdbd); None if the
        accounting has no record of it."""
        argv = [self._bin + "sacct", "-n", "-P", f"--format={SACCT_USE_FORMAT}", f"-j{job_id}"]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        return parse_use(result.stdout)

    async def gpu_hours(
        self, *, since: datetime, user: str = "", account: str = ""
    ) -> dict[tuple[str, str, str], float]:
        """GPU-hours per (user, account, kind) of jobs since `since` (the cluster's local
        time): one user's, or every user's of one account (sacct)."""
        argv = [self._bin + "sacct", "-X", "-n", "-P", f"--format={SACCT_GPU_FORMAT}"]
        argv += ["-S", since.strftime("%Y-%m-%dT%H:%M:%S"), "-E", "now"]
        argv += ["-a", f"-A{account}"] if account else [f"-u{user}"]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        return gpu_hours(result.stdout)

    async def fair_share(self, user: str) -> list[FairShare]:
        """The user's fair-share standing in each of their accounts (sshare); values of None
        where the cluster's priority plugin keeps no fair share (priority/basic)."""
        config = await run_command(
            [self._bin + "scontrol", "show", "config"], timeout=self._timeout
        )
        argv = [self._bin + "sshare", "-n", "-P", f"-u{user}", f"--format={SSHARE_FORMAT}"]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        shares = parse_fairshare(result.stdout, user)
        if "priority/multifactor" not in config.stdout:
            shares = [replace(share, value=None) for share in shares]
        return shares

    async def reservations(self) -> list[Reservation]:
        """Every reservation, maintenance windows among them (one scontrol)."""
        argv = [self._bin + "scontrol", "show", "reservation", "--oneliner"]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        return parse_reservations(result.stdout)

    async def change_reservation(self, args: Sequence[str]) -> None:
        """scontrol create/delete reservation ARGS, as this process's own Slurm user: Slurm
        lets operators make reservations (the portal's account is one), not users."""
        argv = [self._bin + "scontrol", *args]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)

    async def partitions(self) -> dict[str, Partition]:
        """Every partition's time limit and node shapes (one sinfo)."""
        argv = [self._bin + "sinfo", "--noheader", f"--format={SINFO_FORMAT}"]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        return parse_sinfo(result.stdout)

    async def ping(self, *, timeout: float) -> None:
        """SlurmUnavailable unless the controller answers within `timeout` (scontrol ping: one
        RPC, milliseconds when it is up; over a broken network it would hang)."""
        argv = [self._bin + "scontrol", "ping"]
        result = await run_command(argv, timeout=min(timeout, self._timeout))
        if result.returncode != 0 or " is UP" not in result.stdout:
            # "Slurmctld(primary) at slurmctld is DOWN", then a banner of asterisks.
            said = next((line for line in result.stdout.splitlines() if " is " in line), "")
            said = said.strip() or _last_line(result.stderr) or "the controller is down"
            raise SlurmUnavailable(argv, result.returncode, said)

    async def cancel(self, job_id: str, *, user: str) -> None:
        argv = self._as_user(user, self._bin + "scancel", job_id)
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0 and not any(m in result.stderr for m in _GONE_MARKERS):
            _raise_for(argv, result)

    async def set_time_limit(self, job_id: str, seconds: int) -> None:
        """Give a job a new time limit (whole minutes), as this process's own Slurm user.

        Slurm lets only operators and admins raise a limit, so this is not run as the job's
        user: the caller has checked that the job is theirs and the limit within bounds.
        """
        argv = [self._bin + "scontrol", "update", f"JobId={job_id}", f"TimeLimit={seconds // 60}"]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)

    async def read_as_user(
        self, user: str, path: str, *, count: int, offset: int = 0, through_links: bool = True
    ) -> CommandResult:
        """At most `count` bytes of the user's file from byte `offset` on, read as the user (dd:
        bounded in bytes whatever the file is). through_links=False refuses a link (a session's
        readings made a link to /dev/zero) and gives a FIFO's present bytes, never waiting."""
        flags = "skip_bytes,count_bytes" + ("" if through_links else ",nofollow,nonblock")
        argv = ["dd", f"if={path}", f"iflag={flags}", f"skip={offset}", f"count={count}"]
        return await self.run_as_user(user, [*argv, "status=none"], max_output=count)

    async def tail_as_user(self, user: str, paths: Sequence[str], *, count: int) -> CommandResult:
        """The last `count` bytes of each file (tail -c: a file with no newline is not read
        whole, as -n reads it), under tail's "==> file <==" headings when there are several."""
        most = (count + 4096) * len(paths)  # the headings besides the bytes
        return await self.run_as_user(
            user, ["tail", "-c", str(count), "--", *paths], max_output=most
        )

    async def run_as_user(
        self,
        user: str,
        argv: Sequence[str],
        *,
        input_text: str | None = None,
        max_output: int = USER_OUTPUT_MAX,
    ) -> CommandResult:
        """A small helper command as the user (mkdir, tail): home dirs may be root-squashed.

        What it prints is the user's to choose (a file they wrote, or made a link to a device):
        past max_output bytes it is killed and its result marked truncated."""
        return await run_command(
            self._as_user(user, *argv),
            input_text=input_text,
            timeout=self._timeout,
            max_output=max_output,
            keep_truncated=True,
        )
