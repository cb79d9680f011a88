"""Which servers the resume service starts again: only those the hub let go on that job."""

from gpuportal_spawner.resume_service import RESUME_KEY, server_path, to_resume


def _server(**fields):
    base = {"ready": False, "pending": None, "state": {}, "user_options": {"profile": "gpu-1"}}
    return {**base, **fields}


def test_a_server_let_go_on_this_job_is_resumed_with_the_key():
    server = _server(state={"resume_job_id": "12"})
    assert to_resume(server, "12") == {"profile": "gpu-1", RESUME_KEY: "12"}


def test_stopped_on_purpose_running_pending_or_another_job_is_left_alone():
    assert to_resume(_server(), "12") is None  # stopped by its user: no marker
    assert to_resume(_server(state={"resume_job_id": "11"}), "12") is None
    assert to_resume(_server(ready=True, state={"resume_job_id": "12"}), "12") is None
    assert to_resume(_server(pending="spawn", state={"resume_job_id": "12"}), "12") is None
    assert to_resume(None, "12") is None


def test_server_paths():
    assert server_path("alice", "") == "/users/alice/server"
    assert server_path("alice", "big-run") == "/users/alice/servers/big-run"
