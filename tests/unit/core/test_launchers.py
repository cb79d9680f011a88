"""The launcher registry (gpuportal_core.launchers) is the one list: every entry has its
template and every template an entry, and the checks read it (the API's list and schema:
tests/unit/portal/test_launchers_api.py)."""

from __future__ import annotations

from gpuportal_core.batch import BatchJobError, check_not_a_launch
from gpuportal_core.launchers import LAUNCHERS
from gpuportal_core.resources import TEMPLATES_DIR


def test_every_launcher_has_its_template_and_every_template_a_launcher() -> None:
    templates = {
        path.name.removesuffix(".sh.j2")
        for path in (TEMPLATES_DIR / "sbatch" / "launchers").glob("*.sh.j2")
    }
    assert templates == set(LAUNCHERS)
    for launcher in LAUNCHERS.values():
        assert (TEMPLATES_DIR / launcher.template).is_file()


def test_a_command_that_starts_any_launchers_program_is_refused() -> None:
    for launcher in LAUNCHERS.values():
        try:
            check_not_a_launch((launcher.program, "train.py"), "srun")
        except BatchJobError as error:
            assert error.field == "command"
        else:
            raise AssertionError(f"{launcher.program} was let through")
