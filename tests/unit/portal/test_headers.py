"""Every portal response says: no framing, no sniffing, only this origin (issue 10, 5)."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from gpuportal_portal.identity import COOKIE_NAME, HubIdentity
from tests.unit.portal.conftest import API


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        (f"{API}/profiles", {"Authorization": "token full"}),
        (f"{API}/profiles", {}),  # a 401 carries them too
        ("/services/portal/jobs", {}),  # a page (here: the redirect to log in)
        ("/services/portal/docs", {}),
        ("/services/portal/nowhere", {}),
    ],
)
def test_each_response_forbids_framing_and_sniffing(
    client: tuple[TestClient, HubIdentity], path: str, headers: dict[str, str]
) -> None:
    answer = client[0].get(path, headers=headers, follow_redirects=False)
    policy = answer.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "default-src 'self'" in policy
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["x-frame-options"] == "DENY"


def test_the_api_docs_load_nothing_from_another_host(
    client: tuple[TestClient, HubIdentity],
) -> None:
    test_client = client[0]
    test_client.cookies.set(COOKIE_NAME, "full")  # logged in through the hub
    docs = test_client.get("/services/portal/docs")
    assert docs.status_code == 200
    assert not re.search(r"https?://", docs.text), "the docs page names another host"
    loaded = re.findall(r'(?:src|href)="([^"#]+)"', docs.text)
    # Swagger UI from the portal itself; the page's look (Bootstrap, dark mode) from the hub.
    ours = [a for a in loaded if a.startswith("/services/portal/static/")]
    assert len(ours) == 2, loaded
    for asset in ours:
        assert test_client.get(asset).status_code == 200, asset
    others = [a for a in loaded if a not in ours and a.endswith((".js", ".css", ".ico"))]
    assert others and all(a.startswith("/hub/static/") for a in others), others
