"""A job that runs a command instead of a script, and job arrays (issue 12)."""

import dataclasses
import re

import pytest

from gpuportal_core.batch import BatchJobError, array_size, render_batch_script, split_command
from tests.golden_jobs import golden_batch_job


def command_job(launcher: str, command: str, **change: object) -> object:
    job = golden_batch_job(launcher)
    return dataclasses.replace(job, script="", args=(), command=split_command(command), **change)


def test_srun_runs_a_command_as_given_on_every_node() -> None:
    script = render_batch_script(command_job("srun", "hostname"))
    assert script.rstrip().endswith("srun --kill-on-bad-exit=1 hostname")


def test_a_command_is_not_shell_code() -> None:
    script = render_batch_script(command_job("mpi", "echo 'a b' '$(id)' x>y"))
    assert script.rstrip().endswith("srun --kill-on-bad-exit=1 echo 'a b' '$(id)' 'x>y'")


@pytest.mark.parametrize(
    ("launcher", "flag"), [("torchrun", "--no-python"), ("deepspeed", "--no_python")]
)
def test_python_launchers_start_a_command_without_python(launcher: str, flag: str) -> None:
    script = render_batch_script(command_job(launcher, "/usr/bin/env python -m mypkg.train"))
    assert f"    {flag} /usr/bin/env python -m mypkg.train\n" in script


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("", "is empty"),
        ("'unclosed", "cannot be split"),
        ("./train.sh", "must start with a program name"),
        ("$(id)", "must start with a program name"),
        ("echo a\x07", "printable"),
    ],
)
def test_bad_commands_say_what_to_fix(command: str, rule: str) -> None:
    with pytest.raises(BatchJobError, match=rule) as caught:
        split_command(command)
    assert caught.value.field == "command"


def test_a_command_and_a_script_together_are_refused() -> None:
    job = golden_batch_job("srun")
    with pytest.raises(BatchJobError, match="not both"):
        dataclasses.replace(job, command=("hostname",))
    with pytest.raises(BatchJobError, match="arguments in the command") as caught:
        dataclasses.replace(job, script="", command=("hostname",))
    assert caught.value.field == "args"


def test_an_array_job_says_so_to_sbatch() -> None:
    script = render_batch_script(command_job("srun", "hostname", array="0-3"))
    assert "#SBATCH --array=0-3\n" in script
    assert "--array" not in render_batch_script(command_job("srun", "hostname"))


@pytest.mark.parametrize(
    ("spec", "tasks"), [("0-3", 4), ("1,5,9", 3), ("0-15:4", 4), ("0-9%2", 10), ("7", 1)]
)
def test_array_sizes(spec: str, tasks: int) -> None:
    assert array_size(spec) == tasks


@pytest.mark.parametrize(
    ("spec", "rule"),
    [("3-1", "ends before it starts"), ("0-5000", "at most 1000"), ("a-b", "such as 0-3")],
)
def test_bad_arrays_say_what_to_fix(spec: str, rule: str) -> None:
    with pytest.raises(BatchJobError, match=rule):
        array_size(spec)


@pytest.mark.parametrize(
    ("launcher", "command", "said"),
    [
        ("srun", "srun hostname", "the srun launcher starts the command on every node itself: "
         "leave out 'srun' and give what it should run ('hostname')"),
        ("mpi", "/usr/bin/mpirun -np 4 ./a.out", "leave out 'mpirun'"),
        ("torchrun", "torchrun train.py", "leave out 'torchrun'"),
        ("srun", "sbatch job.sh", "give what the job should run, not sbatch"),
    ],
)  # fmt: skip
def test_a_command_that_launches_again_is_refused_at_its_field(
    launcher: str, command: str, said: str
) -> None:
    with pytest.raises(BatchJobError, match=re.escape(said)) as caught:
        command_job(launcher, command)
    assert caught.value.field == "command"
