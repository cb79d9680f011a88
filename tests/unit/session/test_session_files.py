from pathlib import Path

from gpuportal_session.session_files import link_shared, sync_templates


def shipped(tmp_path: Path, files: dict[str, str]) -> Path:
    source = tmp_path / "shipped"
    source.mkdir(exist_ok=True)
    for name, text in files.items():
        (source / name).write_text(text)
    return source


def test_first_start_copies_everything(tmp_path: Path) -> None:
    source = shipped(tmp_path, {"a.ipynb": "A1", "b.ipynb": "B1"})
    report = sync_templates(source, tmp_path / "templates")
    assert report.copied == ["a.ipynb", "b.ipynb"]
    assert (tmp_path / "templates" / "a.ipynb").read_text() == "A1"


def test_a_new_shipped_version_replaces_an_untouched_copy_only(tmp_path: Path) -> None:
    source = shipped(tmp_path, {"a.ipynb": "A1", "b.ipynb": "B1"})
    target = tmp_path / "templates"
    sync_templates(source, target)
    (target / "b.ipynb").write_text("B1 with my notes")
    (source / "a.ipynb").write_text("A2")
    (source / "b.ipynb").write_text("B2")
    report = sync_templates(source, target)
    assert (report.updated, report.kept) == (["a.ipynb"], ["b.ipynb"])
    assert (target / "a.ipynb").read_text() == "A2"
    assert (target / "b.ipynb").read_text() == "B1 with my notes"
    # Stable afterwards: nothing more to do.
    again = sync_templates(source, target)
    assert (again.copied, again.updated, again.kept) == ([], [], ["b.ipynb"])


def test_a_deleted_template_stays_deleted_until_it_changes(tmp_path: Path) -> None:
    source = shipped(tmp_path, {"a.ipynb": "A1"})
    target = tmp_path / "templates"
    sync_templates(source, target)
    (target / "a.ipynb").unlink()
    assert sync_templates(source, target).copied == []
    (source / "a.ipynb").write_text("A2")
    assert sync_templates(source, target).copied == ["a.ipynb"]


def test_a_file_the_user_had_before_is_never_overwritten(tmp_path: Path) -> None:
    source = shipped(tmp_path, {"a.ipynb": "A1"})
    target = tmp_path / "templates"
    target.mkdir()
    (target / "a.ipynb").write_text("mine")
    assert sync_templates(source, target).kept == ["a.ipynb"]
    assert (target / "a.ipynb").read_text() == "mine"


def test_shared_link_is_made_once_and_never_replaces_the_users_own(tmp_path: Path) -> None:
    shared = tmp_path / "srv-shared"
    shared.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    assert link_shared(home, shared)
    assert (home / "shared").resolve() == shared
    assert not link_shared(home, shared)
    other = tmp_path / "home2"
    (other / "shared").mkdir(parents=True)
    assert not link_shared(other, shared)
    assert not link_shared(tmp_path / "home3", tmp_path / "missing")
