"""`gpuportal jobs ...`: list, submit (and follow), show, follow, cancel, remove batch jobs."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import click

from gpuportal_cli.client import CliError
from gpuportal_cli.output import as_json, table


def register(cli: click.Group) -> None:
    @cli.group()
    def jobs() -> None:
        """Batch jobs on one node or many (torchrun, DeepSpeed, Horovod, MPI, srun)."""

    @jobs.command("list")
    @click.option("--phase", type=click.Choice(["waiting", "running", "ended"]))
    @click.option("--kind", type=click.Choice(["job", "session"]), help="Jobs or sessions only.")
    @click.option("-q", "--search", default="", help="Names that contain this.")
    @click.pass_obj
    def jobs_list(obj: Any, phase: str | None, kind: str | None, search: str) -> None:
        """Your jobs and sessions, newest first."""
        params = {"mine": "true", "q": search}
        params |= {"phase": phase} if phase else {}
        params |= {"kind": kind} if kind else {}
        found = obj.client.portal("GET", "/jobs", params=params)
        if obj.json:
            as_json(found)
            return
        table(
            [
                (
                    j["id"],
                    j["name"],
                    j["launcher"],
                    j["slurm_job_id"],
                    j["state"],
                    j["nodes"],
                    "" if j["exit_code"] is None else j["exit_code"],
                )
                for j in found
            ],
            ["#", "name", "launcher", "slurm", "state", "nodes", "exit"],
        )

    @jobs.command("launchers")
    @click.pass_obj
    def jobs_launchers(obj: Any) -> None:
        """The launchers a job can name, and what each does."""
        found = obj.client.portal("GET", "/launchers")
        if obj.json:
            as_json(found)
            return
        table(
            [
                (
                    launcher["name"],
                    "one per node" if launcher["one_task_per_node"] else "one per GPU",
                    launcher["command_help"],
                )
                for launcher in found
            ],
            ["launcher", "tasks", "a command is"],
        )

    @jobs.command("submit")
    @click.option("--name", default="job", show_default=True)
    @click.option(
        "--launcher",
        default="srun",
        show_default=True,
        help="One of `gpuportal jobs launchers` (the portal's list).",
    )
    @click.option("--nodes", type=int, default=1, show_default=True)
    @click.option("--gpus-per-node", type=int, default=1, show_default=True)
    @click.option(
        "--gpu-type", default="", help="The GPUs' kind, e.g. a100 or 1g.10gb. Default: any."
    )
    @click.option("--runtime", default="01:00:00", show_default=True, help="HH:MM:SS")
    @click.option("--partition", default="", help="Default: the portal's.")
    @click.option("--command", "command", default="", help="Run as given, e.g. 'hostname'.")
    @click.option("--script", default="", help="A script in your home or a project area.")
    @click.option("--arg", "args", multiple=True, help="A script argument (repeat).")
    @click.option("--workdir", default="")
    @click.option("--array", default="", help="A job array, e.g. 0-3.")
    @click.option("--venv", default="", help="A venv to activate first.")
    @click.option("--follow", is_flag=True, help="Print its output until it ends.")
    @click.pass_obj
    def jobs_submit(
        obj: Any, /, follow: bool, venv: str, args: tuple[str, ...], **fields: Any
    ) -> None:
        """Submit a job as you. Give --command or --script."""
        body: dict[str, Any] = {**fields, "args": list(args)}
        if venv:
            body["environment"] = {"kind": "venv", "prefix": venv}
        # One key per invocation: a retry inside the request never submits twice.
        headers = {"Idempotency-Key": str(uuid.uuid4())}
        job = obj.client.portal("POST", "/jobs", json=body, headers=headers)
        if not follow:
            as_json(job) if obj.json else click.echo(
                f"Submitted #{job['id']} as Slurm job {job['slurm_job_id']}."
            )
            return
        click.echo(f"Submitted #{job['id']} as Slurm job {job['slurm_job_id']}.", err=True)
        _follow(obj, job["id"])

    @jobs.command("show")
    @click.argument("job_id", type=int)
    @click.pass_obj
    def jobs_show(obj: Any, job_id: int) -> None:
        """One job: state, why it waits, nodes, exit code, what it used (once ended), a
        notebook job's executed notebook, the end of its output."""
        job = obj.client.portal("GET", f"/jobs/{job_id}")
        use = _use(obj, job)
        if obj.json:
            as_json({**job, "use": use})
            return
        click.echo(
            f"#{job['id']} {job['name']} ({job['launcher']}), Slurm job {job['slurm_job_id']}"
        )
        click.echo(
            f"state: {job['state']}"
            + (f" ({job['waiting_because']})" if job["waiting_because"] else "")
        )
        for key in ("nodes", "expected_start", "started_at", "ended_at", "exit_code"):
            if job.get(key) not in ("", None):
                click.echo(f"{key.replace('_', ' ')}: {job[key]}")
        for task, state in sorted(job.get("tasks", {}).items()):
            click.echo(f"task {task}: {state}")
        if use is not None:
            click.echo(f"use: {use['summary']}")
        outputs = job.get("outputs") or {}
        if outputs.get("notebook"):  # a notebook job's run
            click.echo(f"executed notebook: {outputs['notebook']}")
        if outputs.get("html"):
            click.echo(f"html: {outputs['html']}")
        click.echo("\n".join(job["output_tail"]))

    @jobs.command("follow")
    @click.argument("job_id", type=int)
    @click.pass_obj
    def jobs_follow(obj: Any, job_id: int) -> None:
        """Print a job's output as it comes, until it ends (exit code: the job's)."""
        _follow(obj, job_id)

    @jobs.command("cancel")
    @click.argument("job_id", type=int)
    @click.pass_obj
    def jobs_cancel(obj: Any, job_id: int) -> None:
        """Cancel a job (scancel, as you)."""
        job = obj.client.portal("DELETE", f"/jobs/{job_id}")
        as_json(job) if obj.json else click.echo(f"#{job_id}: {job['state'].lower()}.")

    @jobs.command("remove")
    @click.argument("job_id", type=int)
    @click.pass_obj
    def jobs_remove(obj: Any, job_id: int) -> None:
        """Remove an ended job from your history (its output file stays)."""
        obj.client.portal("DELETE", f"/jobs/{job_id}/record")
        as_json({"removed": job_id}) if obj.json else click.echo(f"#{job_id} removed.")


def _follow(obj: Any, job_id: int) -> None:
    """Print the job's output as it is written until it ends; exit with its exit code.

    The output is read by byte offset (GET /jobs/{id}/output), so a burst between two looks
    (a traceback of thirty frames) is printed whole; the job's last lines would skip some.
    """
    read = _OutputRead()
    while True:
        # The state first: once it is final, the output read after it is all there is.
        job = obj.client.portal("GET", f"/jobs/{job_id}")
        for task in _output_tasks(job):
            read.print_new(obj, job_id, task)
        if job["final"]:  # the portal says (gpuportal_core/states.py): nothing changes any more
            click.echo(f"#{job_id} {job['state'].lower()}, exit code {job['exit_code']}", err=True)
            raise SystemExit(job["exit_code"] or (0 if job["state"] == "COMPLETED" else 1))
        time.sleep(2)


def _output_tasks(job: dict[str, Any]) -> list[str]:
    """Whose output to read: the job's (""), or each started task's of an array job."""
    if not job["request"].get("array"):
        return [""]
    started = (t for t, state in job["tasks"].items() if t.isdigit() and state != "PENDING")
    return sorted(started, key=int)


@dataclass
class _OutputRead:
    """How far the job's output (or each task's) was printed, and whose was printed last."""

    offsets: dict[str, int] = field(default_factory=dict)
    last_task: str = ""

    def print_new(self, obj: Any, job_id: int, task: str) -> None:
        """Print what the job (or one task) wrote since the last look; a task under a heading."""
        while True:
            params: dict[str, str | int] = {"offset": self.offsets.get(task, 0)}
            if task:
                params["task"] = task
            part = obj.client.portal("GET", f"/jobs/{job_id}/output", params=params)
            if part["text"]:
                if task and task != self.last_task:
                    click.echo(f"==> task {task} <==")
                    self.last_task = task
                click.echo(part["text"], nl=False)
            self.offsets[task] = part["next_offset"]
            if not part["more"]:
                return


def _use(obj: Any, job: dict[str, Any]) -> dict[str, Any] | None:
    """What an ended job used (Slurm's accounting); None while it runs or when unknown."""
    if not job.get("final"):
        return None
    try:
        use: dict[str, Any] = obj.client.portal("GET", f"/jobs/{job['id']}/use")
    except CliError:
        return None
    return use
