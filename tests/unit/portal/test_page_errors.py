"""Issue 54, item 8: a page the portal does not have is a page in its look, not FastAPI's raw
`{"detail": "Not Found"}`; the API keeps its JSON."""

from __future__ import annotations

from fastapi.testclient import TestClient

from gpuportal_portal.identity import COOKIE_NAME, HubIdentity
from tests.unit.portal.conftest import API


def test_a_missing_page_is_a_page_and_the_api_answers_json(
    client: tuple[TestClient, HubIdentity],
) -> None:
    page = client[0].get("/services/portal/jobs/99999")
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    assert "There is nothing here" in page.text and "No page of the portal" in page.text
    api = client[0].get(f"{API}/nowhere", headers={"Authorization": "token full"})
    assert (api.status_code, api.json()) == (404, {"detail": "Not Found"})


def test_a_signed_in_reader_keeps_the_navigation_and_notices_there(
    client: tuple[TestClient, HubIdentity],
) -> None:
    """Its bar had no entries and no notices: the page did not know who reads it."""
    test_client = client[0]
    test_client.cookies.set(COOKIE_NAME, "full")
    page = test_client.get("/services/portal/jobs/99999")
    assert page.status_code == 404
    assert 'id="who">bob<' in page.text and 'id="gp-notices"' in page.text
    test_client.cookies.set(COOKIE_NAME, "not-a-token")
    assert 'id="who"' not in test_client.get("/services/portal/jobs/99999").text
