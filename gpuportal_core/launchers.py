"""Every launcher a batch job can name, once: what it is called, what it does in the form's
words, how many tasks it starts on a node, and how it runs a command instead of a script.

Its sbatch template is `templates/sbatch/launchers/<name>.sh.j2` (extending
`templates/sbatch/batch_job.sh.j2`). The checks (gpuportal_core.batch), the API's schema and
`GET /api/launchers`, the jobs page and the command line all read this table: a new launcher is
one template and one entry here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Launcher:
    name: str  # what a request names: "torchrun"
    title: str  # as the page shows it: "DeepSpeed"
    about: str  # what it does with the job, in the form's words
    command_help: str  # what it does with a command (the form's hint)
    # It starts one task per node and fans out to the GPUs itself; else one task per GPU.
    one_task_per_node: bool
    # The program it starts the job's tasks with: a command that begins with it asks for a
    # launch inside a launch (gpuportal_core.batch.check_not_a_launch).
    program: str
    # How it is told that a command is not a Python script ("--no-python"); "" where it starts
    # a command as it is anyway.
    no_python_flag: str = ""
    # The program comes with the job's Python environment (pip installs torchrun with PyTorch),
    # not with Slurm: a job must run in an environment that has it.
    from_environment: bool = False

    @property
    def template(self) -> str:
        return f"sbatch/launchers/{self.name}.sh.j2"


LAUNCHERS: dict[str, Launcher] = {
    launcher.name: launcher
    for launcher in (
        Launcher(
            name="torchrun",
            title="torchrun",
            about="One torchrun per node starts a worker per GPU, with c10d rendezvous on the "
            "first node. A script is run with Python; a command is started as is (torchrun "
            "--no-python).",
            command_help="started by torchrun once per GPU, e.g. python -m mypkg.train",
            one_task_per_node=True,
            program="torchrun",
            no_python_flag="--no-python",
            from_environment=True,
        ),
        Launcher(
            name="deepspeed",
            title="DeepSpeed",
            about="The deepspeed launcher starts a worker per GPU on every node (hostfile from "
            "the allocation). A script is run with Python; a command as is (--no_python).",
            command_help="started by deepspeed once per GPU",
            one_task_per_node=True,
            program="deepspeed",
            no_python_flag="--no_python",
            from_environment=True,
        ),
        Launcher(
            name="horovod",
            title="Horovod",
            about="horovodrun starts one process per GPU across the nodes. Your environment "
            "must have Horovod: its last release (0.28.1, 2023) does not build with PyTorch 2.1 "
            "or newer, so an environment with a newer PyTorch has none; use torchrun or "
            "DeepSpeed there, or an environment or container of your own with Horovod.",
            command_help="started by horovodrun once per GPU",
            one_task_per_node=True,
            program="horovodrun",
            from_environment=True,
        ),
        Launcher(
            name="mpi",
            title="MPI",
            about="srun starts one MPI rank per GPU; the cluster's MPI plugin wires them up.",
            command_help="one rank per GPU, e.g. python train.py or ./a.out by absolute path",
            one_task_per_node=False,
            program="srun",
        ),
        Launcher(
            name="notebook",
            title="Notebook",
            about="Runs a notebook (.ipynb) headless on one node, its cells in order with the "
            "kernel it names; parameters (name=value) go into a cell after the one tagged "
            "`parameters`. The executed notebook and its HTML go into a dated folder beside it "
            "(NAME-runs/), written after every cell; a cell that raises fails the job.",
            command_help="a notebook job takes no command: give the notebook as the script",
            one_task_per_node=True,
            program="srun",
        ),
        Launcher(
            name="srun",
            title="srun",
            about="srun runs it once per node, with all of the node's GPUs: hostname on 2 nodes "
            "prints both node names.",
            command_help="run once per node, without a shell, e.g. hostname or nvidia-smi -L",
            one_task_per_node=True,
            program="srun",
        ),
    )
}
# The form's first choice.
DEFAULT_LAUNCHER = "srun"


def launcher_named(name: str) -> Launcher | None:
    return LAUNCHERS.get(name)


def one_of() -> str:
    """The names, as a message lists them: "torchrun, deepspeed, horovod, mpi or srun"."""
    names = list(LAUNCHERS)
    return ", ".join(names[:-1]) + f" or {names[-1]}"
