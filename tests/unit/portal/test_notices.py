"""Notices through the portal's API: admins post and remove (audited), everyone reads the ones
showing to them now, the hub reads every one not ended (gpuportal_portal.notice_service)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient

from gpuportal_portal import audit_stream
from gpuportal_portal.identity import HubIdentity
from gpuportal_portal.models import Notice
from gpuportal_portal.notice_service import current_for
from tests.unit.portal.conftest import ADMIN_TOKEN, API

ADMIN = {"Authorization": f"token {ADMIN_TOKEN}"}
BOB = {"Authorization": "token full"}
HUB = {"Authorization": "token hub-secret"}


def at(hours: float) -> str:
    return (datetime.now(UTC) + timedelta(hours=hours)).isoformat()


def test_admins_post_and_remove_notices_that_readers_see_while_they_run(
    client: tuple[TestClient, HubIdentity], tmp_path: Path
) -> None:
    api = client[0]
    audit_stream.configure(str(tmp_path))  # the audit stream, as the portal runs it
    now = api.post(
        f"{API}/notices",
        headers=ADMIN,
        json={"text": "Maintenance tonight 18:00-20:00", "level": "warning", "ends_at": at(2)},
    )
    assert now.status_code == 201, now.text
    later = api.post(
        f"{API}/notices",
        headers=ADMIN,
        json={"text": "Later", "starts_at": at(1), "ends_at": at(3)},
    )
    teachers = api.post(
        f"{API}/notices",
        headers=ADMIN,
        json={"text": "For the course", "groups": ["teaching"], "ends_at": at(1)},
    )
    assert later.status_code == teachers.status_code == 201
    # bob (no groups) sees the one showing now and meant for everyone.
    shown = api.get(f"{API}/notices", headers=BOB).json()
    assert [(n["text"], n["level"]) for n in shown] == [
        ("Maintenance tonight 18:00-20:00", "warning")
    ]
    assert api.get(f"{API}/notices?all=true", headers=BOB).status_code == 403
    # The hub lists every one not ended (it picks each user's by their groups).
    assert len(api.get(f"{API}/notices?all=true", headers=HUB).json()) == 3
    # Removing is admins' only, audited.
    first = now.json()["id"]
    assert api.delete(f"{API}/notices/{first}", headers=BOB).status_code == 403
    assert api.delete(f"{API}/notices/{first}", headers=ADMIN).status_code == 204
    assert api.get(f"{API}/notices", headers=BOB).json() == []
    assert api.delete(f"{API}/notices/{first}", headers=ADMIN).status_code == 404
    audit = api.get(f"{API}/audit", headers=ADMIN).json()
    notices = [(a["action"], a["subject"]) for a in audit if a["kind"] == "notice"]
    assert ("create", str(first)) in notices and ("delete", str(first)) in notices
    lines = [
        json.loads(line) for line in (tmp_path / "audit-portal.jsonl").read_text().splitlines()
    ]
    said = [(line["action"], line["change"]) for line in lines]
    assert said.count(("notice_edit", "create")) == 3 and ("notice_edit", "delete") in said
    audit_stream.configure("")


def test_a_notice_that_would_never_show_is_refused_at_its_field(
    client: tuple[TestClient, HubIdentity],
) -> None:
    api = client[0]
    cases = [
        ({"text": "x", "ends_at": at(-1)}, "ends_at"),
        ({"text": "x", "starts_at": at(2), "ends_at": at(1)}, "ends_at"),
        ({"text": "", "ends_at": at(1)}, "text"),
        ({"text": "x", "level": "panic", "ends_at": at(1)}, "level"),
        ({"text": "x", "ends_at": at(1), "groups": ["no spaces"]}, "groups"),
    ]
    for body, field in cases:
        answer = api.post(f"{API}/notices", headers=ADMIN, json=body)
        assert answer.status_code == 422, (body, answer.text)
        assert field in answer.text, (body, answer.text)


def test_group_notices_show_to_members_only() -> None:
    now = datetime.now(UTC)
    notice = Notice(
        text="x", level="info", starts_at=now - timedelta(minutes=1), ends_at=now + timedelta(1),
        groups=["vision"], created_by="carol",
    )  # fmt: skip
    assert current_for([notice], ["ds", "vision"], now) == [notice]
    assert current_for([notice], ["ds"], now) == []
    assert current_for([notice], ["vision"], now + timedelta(2)) == []


def test_a_notice_number_beyond_any_record_is_refused_not_a_server_error(
    client: tuple[TestClient, HubIdentity],
) -> None:
    test_client = client[0]
    answer = test_client.delete(
        f"{API}/notices/{2**64}", headers={"Authorization": f"token {ADMIN_TOKEN}"}
    )
    assert answer.status_code == 422, answer.text
