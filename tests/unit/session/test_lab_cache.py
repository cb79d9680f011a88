"""The lab extensions' static folders as immutable URLs under the session's base URL."""

from __future__ import annotations

from pathlib import Path

from gpuportal_session.lab_cache import immutable_extension_urls


def test_each_extensions_static_folder_under_the_base_url(tmp_path: Path) -> None:
    system, user = tmp_path / "system", tmp_path / "user"
    (system / "@jupyterlab" / "git" / "static").mkdir(parents=True)
    (system / "jupyterlab_pygments" / "static").mkdir(parents=True)
    (system / "jupyterlab_pygments" / "install.json").write_text("{}")
    (user / "jupyterlab_pygments" / "static").mkdir(parents=True)  # also a user's copy: once
    urls = immutable_extension_urls("/user/alice/", [str(system), str(user)])
    assert urls == [
        "/user/alice/lab/extensions/@jupyterlab/git/static",
        "/user/alice/lab/extensions/jupyterlab_pygments/static",
    ]


def test_a_folder_without_extensions_gives_none(tmp_path: Path) -> None:
    assert immutable_extension_urls("/user/alice/", [str(tmp_path / "absent")]) == []
