import dataclasses
import os

import pytest

from gpuportal_core.sbatch import (
    ScriptError,
    SingleUserJob,
    render_singleuser_script,
    template_environment,
)
from tests.golden_jobs import GOLDEN_CASES, golden_job, golden_path


@pytest.mark.parametrize(("slug", "environment"), GOLDEN_CASES)
def test_rendered_script_matches_golden(slug, environment):
    script = render_singleuser_script(golden_job(slug, environment=environment))
    path = golden_path(slug, environment)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(script)
    assert script == path.read_text(), f"{path} differs; UPDATE_GOLDEN=1 pytest rewrites it"


def test_two_gpu_script_asks_for_the_derived_resources():
    script = render_singleuser_script(golden_job("gpu-2"))
    lines = script.splitlines()
    for line in [
        "#SBATCH --gres=gpu:2",
        "#SBATCH --cpus-per-task=16",
        "#SBATCH --mem=96G",
        "#SBATCH --time=08:00:00",
        "#SBATCH --nodes=1",
        "#SBATCH --export=HOME,JUPYTERHUB_API_URL,PATH,USER",
    ]:
        assert line in lines
    assert lines[-1].startswith(
        "exec /opt/gpuportal/venv/bin/python -m gpuportal_session.singleuser jupyterhub-singleuser"
    )


def test_the_token_comes_from_a_file_and_is_never_exported():
    script = render_singleuser_script(golden_job("gpu-1"))
    assert "JUPYTERHUB_API_TOKEN=$(cat /home/alice/.jupyterhub-logs/token-default)" in script
    # Kept while the job lives, so that a requeued job can read it again (the hub removes it).
    assert "rm -f" not in script
    with pytest.raises(ScriptError, match="token"):
        _with(export_vars=("PATH", "JUPYTERHUB_API_TOKEN"))


def _with(**changes):
    job = golden_job("gpu-1")
    fields = {name: getattr(job, name) for name in job.__dataclass_fields__}
    fields.update(changes)
    return SingleUserJob(**fields)


@pytest.mark.parametrize(
    "changes",
    [
        {"partition": "gpu\n#SBATCH --uid=0"},
        {"user": "alice\nrm"},
        {"tag": "gpuportal:session:local:alice:\n#SBATCH --uid=0"},
        {"tag": "a b"},
        {"output": "/home/alice/log\n#SBATCH --mem=1T"},
        {"workdir": "relative/dir"},
        {"venv": "/opt/venv; rm -rf /"},
        {"export_vars": ("PATH", "X=1")},
        {"command": ("jupyterhub-singleuser", "--x\n#SBATCH")},
        {"command": ()},
        {"gpus": 0},
        {"runtime": 10},
    ],
)
def test_unsafe_values_never_render(changes):
    with pytest.raises(ScriptError):
        _with(**changes)


def test_arguments_are_shell_quoted():
    script = render_singleuser_script(_with(command=("jupyterhub-singleuser", "--x=$(id)")))
    assert "exec jupyterhub-singleuser '--x=$(id)'" in script


def test_extra_sbatch_options_of_the_profile_become_sbatch_lines() -> None:
    job = golden_job("gpu-1")
    script = render_singleuser_script(
        dataclasses.replace(job, extra_options=(("account", "ml"), ("constraint", "a100&ib")))
    )
    assert "#SBATCH --account=ml\n#SBATCH --constraint=a100&ib\n" in script


def test_an_extra_option_outside_the_allow_list_never_renders() -> None:
    with pytest.raises(ScriptError, match="not allowed"):
        dataclasses.replace(golden_job("gpu-1"), extra_options=(("uid", "0"),))


def test_the_template_is_compiled_once_and_an_edit_on_disk_still_shows(tmp_path) -> None:
    (tmp_path / "sbatch").mkdir()
    script = tmp_path / "sbatch" / "singleuser.sh.j2"
    script.write_text("#!/bin/bash\necho {{ user }} one\n")
    job = golden_job("gpu-1")
    loads = []
    env = template_environment(tmp_path)
    loader_load = env.loader.load

    def counted(*args, **kwargs):
        loads.append(args[1])
        return loader_load(*args, **kwargs)

    env.loader.load = counted  # type: ignore[method-assign]
    first = render_singleuser_script(job, templates_dir=tmp_path)
    assert render_singleuser_script(job, templates_dir=tmp_path) == first
    assert len(loads) == 1, loads
    assert first.endswith(" one\n")
    # An admin's edit (a later modification time) is read again.
    script.write_text("#!/bin/bash\necho {{ user }} two\n")
    os.utime(script, (script.stat().st_mtime + 10, script.stat().st_mtime + 10))
    assert render_singleuser_script(job, templates_dir=tmp_path).endswith(" two\n")


@pytest.mark.parametrize(("kind", "gres"), [("a100", "gpu:a100:1"), ("1g.10gb", "gpu:1g.10gb:1")])
def test_a_profile_of_one_kind_asks_slurm_for_that_kind(kind, gres):
    assert f"#SBATCH --gres={gres}" in render_singleuser_script(_with(gpu_type=kind)).splitlines()


def test_a_kind_that_is_no_gres_name_never_renders():
    with pytest.raises(ScriptError, match="GPU kind"):
        _with(gpu_type="a100:2 --uid=0")
