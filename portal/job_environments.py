"""The environment a job runs in when its launcher comes with one (torchrun and DeepSpeed come
with PyTorch's and DeepSpeed's pip packages, horovodrun with Horovod's), not with Slurm.

A job that names no environment runs in the first of the site's environments (the admins'
order) that has its launcher's program: a user who picks torchrun expects it to be there, as
a tutorial's command line gives no environment. One that names an environment without it is
refused at the field, with the site's environments that have it: before, such a job failed on
the nodes with `execve(): torchrun: No such file or directory`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuportal_core.batch import BatchJobError
from gpuportal_core.launchers import LAUNCHERS
from gpuportal_portal.job_schemas import JobCreate, JobEnvironment
from gpuportal_portal.models import Environment

# Where an environment keeps its programs, by kind (modules are looked for on the nodes only).
_WITH_BIN = ("venv", "conda")


@dataclass(frozen=True)
class SiteEnvironment:
    title: str
    kind: str
    prefix: str

    def has(self, program: str) -> bool:
        return has_program(self.prefix, program) is True


def site_environments(records: Iterable[Environment]) -> list[SiteEnvironment]:
    """The enabled venv and conda environments, in the admins' order."""
    return [
        SiteEnvironment(env.title, env.kind, env.prefix)
        for env in records
        if env.enabled and env.kind in _WITH_BIN and env.prefix
    ]


def has_program(prefix: str, program: str) -> bool | None:
    """Whether PREFIX/bin/PROGRAM is there; None where the portal may not look (a venv in a
    private home): the nodes find out, as they did before."""
    try:
        return (Path(prefix) / "bin" / program).is_file()
    except OSError:
        return None


def programs_in(prefix: str) -> list[str]:
    """The launcher programs an environment has: what the jobs page picks an environment by."""
    names = {entry.program for entry in LAUNCHERS.values() if entry.from_environment}
    return sorted(name for name in names if has_program(prefix, name))


def job_environment(data: JobCreate, site: Sequence[SiteEnvironment]) -> JobEnvironment | None:
    """The environment the job runs in; BatchJobError at `environment` when it lacks the
    launcher's program."""
    launcher = LAUNCHERS.get(data.launcher)
    if launcher is None or not launcher.from_environment or data.container is not None:
        return data.environment  # the container brings its own; the checks name a bad launcher
    program, chosen = launcher.program, data.environment
    if chosen is None:
        for candidate in site:
            if candidate.has(program):
                return JobEnvironment(kind=candidate.kind, prefix=candidate.prefix)
        return None  # none has it: the nodes' own system may
    if chosen.kind in _WITH_BIN and has_program(chosen.prefix, program) is False:
        having = [env.title for env in site if env.has(program)]
        advice = (
            f"choose {' or '.join(having)}, which {'has' if len(having) == 1 else 'have'} it"
            if having
            else "choose an environment or a container that has it"
        )
        raise BatchJobError("environment", f"{program} is not in {chosen.prefix}: {advice}")
    return chosen
