"""An environment other users run must be root's (gpuportal_adapters.root_owned): a prefix or
image that another account can change is refused, saying what to change. Run as root (as make
test is): the test makes folders of another owner with chown."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuportal_adapters.root_owned import not_root_owned

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="makes folders of other owners")
NOBODY = 65534


@pytest.fixture
def area(tmp_path: Path) -> Path:
    """A software area as root keeps one: root's, writable by root alone."""
    folder = tmp_path / "envs"
    (folder / "torch" / "bin").mkdir(parents=True)
    for path in (tmp_path, folder, folder / "torch", folder / "torch" / "bin"):
        path.chmod(0o755)
    return folder


def test_a_root_owned_prefix_passes_under_a_sticky_folder(area: Path) -> None:
    # /tmp above it: others may write there, but the sticky bit keeps root's entries root's.
    assert str(area).startswith("/tmp/")
    assert not_root_owned(str(area / "torch")) is None


def test_a_prefix_of_another_account_is_refused(area: Path) -> None:
    os.chown(area / "torch", NOBODY, NOBODY)  # as in an admin's home
    problem = not_root_owned(str(area / "torch"))
    assert problem is not None and "belongs to nobody, not root" in problem


def test_a_folder_others_may_write_is_refused_anywhere_above(area: Path) -> None:
    area.chmod(0o777)  # another account could replace torch/ with its own
    problem = not_root_owned(str(area / "torch"))
    assert problem is not None and f"{area} can be written by others than root" in problem
    assert f"chmod go-w {area}" in problem


def test_a_writable_bin_inside_is_refused(area: Path) -> None:
    (area / "torch" / "bin").chmod(0o777)
    problem = not_root_owned(str(area / "torch"))
    assert problem is not None and "torch/bin can be written by others" in problem


def test_a_link_is_followed_to_what_it_names(area: Path, tmp_path: Path) -> None:
    theirs = tmp_path / "home-carol-env"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    (area / "linked").symlink_to(theirs)
    problem = not_root_owned(str(area / "linked"))
    assert problem is not None and f"(a link to {theirs})" in problem


def test_a_path_not_on_the_login_host_is_refused(area: Path) -> None:
    problem = not_root_owned(str(area / "missing"))
    assert problem is not None and "does not exist on the login host" in problem
