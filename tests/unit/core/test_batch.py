import dataclasses
import os
import re

import pytest

from gpuportal_core.batch import BatchJobError, Container, check_user_path, render_batch_script
from tests.golden_jobs import BATCH_CASES, golden_batch_job, golden_batch_path


@pytest.mark.parametrize(("launcher", "container"), BATCH_CASES)
def test_rendered_batch_script_matches_golden(launcher: str, container: str) -> None:
    script = render_batch_script(golden_batch_job(launcher, container))
    path = golden_batch_path(launcher, container)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(script)
    assert script == path.read_text(), f"{path} differs; UPDATE_GOLDEN=1 pytest rewrites it"


def test_torchrun_runs_one_agent_per_node_with_a_worker_per_gpu() -> None:
    script = render_batch_script(golden_batch_job("torchrun"))
    assert "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:2\n" in script
    assert "#SBATCH --cpus-per-task=16\n#SBATCH --mem=96G\n" in script
    assert "--nnodes=2 --nproc-per-node=2" in script
    assert '--rdzv-backend=c10d --rdzv-endpoint="$head_node:$rdzv_port"' in script
    assert "source /opt/gpuportal/envs/analysis/bin/activate" in script


def test_mpi_runs_one_rank_per_gpu() -> None:
    script = render_batch_script(golden_batch_job("mpi"))
    assert "#SBATCH --ntasks-per-node=2\n" in script
    assert "#SBATCH --cpus-per-task=8\n" in script
    assert script.rstrip().endswith(
        "srun --kill-on-bad-exit=1 python3 /home/alice/project/train.py --epochs 3 --lr=0.1"
    )


def test_arguments_are_quoted_for_the_shell() -> None:
    job = dataclasses.replace(golden_batch_job("srun"), args=("$(id)", "a b", "x;y"))
    assert "train.py '$(id)' 'a b' 'x;y'" in render_batch_script(job)


@pytest.mark.parametrize(
    ("change", "field", "rule"),
    [
        ({"nodes": 0}, "nodes", "at least 1"),
        ({"gpus_per_node": 0}, "gpus_per_node", "at least 1"),
        ({"name": "train\n#SBATCH --uid=0"}, "name", "1-64 letters"),
        (
            {"launcher": "pdsh"},
            "launcher",
            "must be torchrun, deepspeed, horovod, mpi, notebook or srun",
        ),
        ({"script": "/home/bob/train.py"}, "script", "inside your own areas: /home/alice"),
        ({"script": "/home/alice/../bob/train.py"}, "script", "must not contain '..'"),
        ({"script": "train.py"}, "script", "absolute path"),
        ({"workdir": "/etc"}, "workdir", "inside your own areas"),
        ({"args": ("ok", "two\nlines")}, "args", "one line"),
        ({"runtime": 10}, "runtime", "at least 00:01:00"),
        ({"gpu_type": "a100:2,gpu:h100"}, "gpu_type", "GPU kind"),
        ({"begin": "now\n#SBATCH --uid=0"}, "begin", "YYYY-MM-DDTHH:MM:SS"),
    ],
)
def test_bad_values_name_their_field(change: dict[str, object], field: str, rule: str) -> None:
    with pytest.raises(BatchJobError, match=re.escape(rule)) as caught:
        dataclasses.replace(golden_batch_job("torchrun"), **change)
    assert caught.value.field == field


def test_a_job_with_a_begin_waits_in_the_queue_until_then() -> None:
    job = dataclasses.replace(golden_batch_job("notebook"), begin="2026-12-01T03:00:00")
    assert "#SBATCH --begin=2026-12-01T03:00:00\n" in render_batch_script(job)
    assert "--begin" not in render_batch_script(golden_batch_job("notebook"))


def test_container_images_are_checked() -> None:
    with pytest.raises(BatchJobError, match="registry reference"):
        Container("pyxis", "nvcr.io#x; rm -rf ~")
    with pytest.raises(BatchJobError, match="docker://"):
        Container("apptainer", "ubuntu")


def test_project_areas_count_as_the_users_own() -> None:
    roots = ("/home/alice", "/projects")
    assert check_user_path("/projects/vision/train.py", roots=roots, what="script") == (
        "/projects/vision/train.py"
    )
    with pytest.raises(BatchJobError):
        check_user_path("/projectsX/train.py", roots=roots, what="script")


def test_a_job_of_one_kind_asks_slurm_for_that_kind() -> None:
    job = dataclasses.replace(golden_batch_job("torchrun"), gpu_type="h100")
    assert "#SBATCH --gres=gpu:h100:2\n" in render_batch_script(job)


def _notebook_job(**change: object) -> object:
    return dataclasses.replace(golden_batch_job("notebook"), **change)


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"script": "/home/alice/project/train.py"}, "script", "must be a notebook (.ipynb)"),
        ({"nodes": 2}, "nodes", "a notebook runs on one node"),
        ({"array": "0-3"}, "array", "a notebook job runs once"),
        ({"args": ("lr",)}, "args", "write it as name=value"),
        ({"args": ("x=[1,",)}, "args", "is not a JSON or YAML value"),
        ({"script": "", "command": ("hostname",)}, "command", "give it as the script"),
    ],
)
def test_a_notebook_job_is_one_notebook_once_on_one_node(
    change: dict[str, object], field: str, words: str
) -> None:
    with pytest.raises(BatchJobError, match=re.escape(words)) as caught:
        _notebook_job(**change)
    assert caught.value.field == field


def test_a_notebook_given_to_another_launcher_says_which_to_choose() -> None:
    with pytest.raises(BatchJobError, match="choose the notebook launcher") as caught:
        dataclasses.replace(golden_batch_job("srun"), script="/home/alice/project/train.ipynb")
    assert caught.value.field == "script"


def test_a_notebook_runs_with_the_session_venvs_python_unless_its_environment_has_one() -> None:
    own = render_batch_script(golden_batch_job("notebook"))  # a venv: its own python3
    assert "srun --kill-on-bad-exit=1 python3 -m gpuportal_session.notebook_run " in own
    bare = render_batch_script(_notebook_job(environment=None))
    assert (
        "srun --kill-on-bad-exit=1 /opt/gpuportal/venv/bin/python -m "
        "gpuportal_session.notebook_run /home/alice/project/train.ipynb epochs=3 lr=0.1\n"
    ) in bare
    assert "#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n" in bare
