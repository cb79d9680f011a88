"""Which servers the resume service starts again: only those the hub let go on that job."""

import asyncio

from gpuportal_core.jobs import JobInfo
from gpuportal_core.tags import SessionTag
from gpuportal_spawner.resume_service import RESUME_KEY, resume_once, server_path, to_resume


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


class FakeHub:
    """The hub's API as the service calls it: a paged list of active servers, a user, a start."""

    def __init__(self, pages: list[list[dict]], users: dict[str, dict]):
        self.pages, self.users, self.calls = pages, users, []

    async def call(self, method, path, body=None):
        self.calls.append(f"{method} {path.split('?')[0]}")
        if path.startswith("/users?"):
            index = int(path.split("offset=")[1].split("&")[0])
            following = {"offset": index + 1} if index + 1 < len(self.pages) else None
            return {"items": self.pages[index], "_pagination": {"next": following}}
        if method == "GET":
            return self.users[path.split("/")[2].split("?")[0]]
        return None


class FakeSlurm:
    def __init__(self, jobs):
        self.jobs = jobs

    async def tagged(self):
        return self.jobs


def _job(job_id, user, state="PENDING"):
    tag = str(SessionTag("local", user, ""))
    return JobInfo(job_id, state, "Priority", "", "N/A", user, "8:00:00", "", tag)


def test_a_round_asks_the_hub_per_server_only_for_those_it_lacks():
    """At rest the hub has every server: one paged list, no look per job (300 a round at 300
    sessions, a third of the hub's CPU); a server it let go is looked at and resumed."""
    jobs = [_job("1", "ann"), _job("2", "bob", "RUNNING"), _job("3", "cid"), _job("4", "dee")]
    pages = [[{"name": "ann", "servers": {"": {}}}], [{"name": "bob", "servers": {"": {}}}]]
    users = {
        "cid": {"servers": {"": _server(state={"resume_job_id": "3"})}},
        "dee": {"servers": {}},  # stopped on purpose meanwhile
    }
    hub = FakeHub(pages, users)
    resumed = asyncio.run(resume_once(hub, FakeSlurm(jobs), "local"))
    assert resumed == ["cid"]
    assert hub.calls == [
        "GET /users", "GET /users", "GET /users/cid", "POST /users/cid/server", "GET /users/dee"
    ]  # fmt: skip
