import pytest

from gpuportal_core.tags import (
    BatchTag,
    DaskTag,
    SessionTag,
    batch_tag,
    dask_tag,
    parse_tag,
    session_tag,
)


def test_session_tag_round_trips():
    tag = session_tag(hub="local", user="alice", server="")
    assert str(tag) == "gpuportal:session:local:alice:"
    assert parse_tag(str(tag)) == SessionTag("local", "alice", "")
    named = session_tag(hub="hub-2", user="bob.smith", server="big-run")
    assert parse_tag(str(named)) == named


def test_batch_tag_round_trips():
    tag = batch_tag(hub="local", user="alice", key="42")
    assert str(tag) == "gpuportal:job:local:alice:42"
    assert parse_tag(str(tag)) == BatchTag("local", "alice", "42")


def test_dask_tag_round_trips_and_is_not_a_session():
    tag = dask_tag(hub="local", user="alice", server="big-run")
    assert str(tag) == "gpuportal:dask:local:alice:big-run"
    parsed = parse_tag(str(tag))
    assert parsed == DaskTag("local", "alice", "big-run")
    # The hub's resume and the portal's session history look for SessionTag only.
    assert not isinstance(parsed, SessionTag)


@pytest.mark.parametrize(
    "comment",
    [
        "",
        "(null)",
        "my own comment",
        "gpuportal:session:local",
        "gpuportal:other:a:b:c",
        "gpuportal:session:local:al ice:",
        "gpuportal:job:local:alice:",
        "gpuportal:dask::alice:",
    ],
)
def test_comments_that_are_not_our_tags(comment):
    assert parse_tag(comment) is None


@pytest.mark.parametrize(("user", "server"), [("al:ice", ""), ("alice", "a b"), ("", "x")])
def test_names_that_cannot_go_into_a_tag(user, server):
    with pytest.raises(ValueError):
        session_tag(hub="local", user=user, server=server)
