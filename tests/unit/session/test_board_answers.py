"""TensorBoard's index page, as the installed TensorBoard ships it, asks for its font at the
site's root; handed on, it asks the board itself."""

from __future__ import annotations

import zipfile
from io import BytesIO
from pathlib import Path

import tensorboard
from jupyter_server_proxy.handlers import RewritableResponse
from tornado.httpclient import HTTPRequest, HTTPResponse
from tornado.httputil import HTTPHeaders

from gpuportal_session.board_answers import board_headers, fix_index, is_index, plain_request
from gpuportal_session.board_proxy import finish_board_response

WEBFILES = Path(tensorboard.__file__).parent / "webfiles.zip"


def test_the_index_asks_for_the_font_at_the_board_not_at_the_hubs_root() -> None:
    with zipfile.ZipFile(WEBFILES) as files:
        index = files.read("index.html")
        fonts = {name for name in files.namelist() if name.startswith("font-roboto/")}
    assert b"url(/font-roboto/" in index  # what TensorBoard does: 404s behind the hub
    fixed = fix_index(index)
    assert b"url(/font-roboto/" not in fixed
    asked = {
        "font-roboto/" + part.split(b")", 1)[0].decode()
        for part in fixed.split(b"url(font-roboto/")[1:]
    }
    assert asked and asked <= fonts  # each one is a file the board serves


def test_only_the_index_is_edited_and_asked_for_unzipped() -> None:
    assert is_index("") and is_index("/") and is_index("index.html?x=1")
    assert not is_index("data/plugin/scalars/tags") and not is_index("font-roboto/a.woff2")
    assert plain_request({"Accept-Encoding": "gzip", "Accept": "*/*"}) == {"Accept": "*/*"}


def test_the_board_proxy_edits_only_the_index_and_adds_the_framing_rule() -> None:
    def answer(body: bytes, **headers: str) -> RewritableResponse:
        sent = HTTPResponse(
            HTTPRequest("http://localhost/"),
            200,
            headers=HTTPHeaders(headers),
            buffer=BytesIO(body),
        )
        return RewritableResponse(orig_response=sent)

    index = answer(b"a{src:url(/font-roboto/x.woff2)}")
    finish_board_response(index, "")
    assert index.body == b"a{src:url(font-roboto/x.woff2)}"
    assert index.headers["Content-Security-Policy"] == "frame-ancestors 'self'"
    assert index.headers["X-Content-Type-Options"] == "nosniff"
    data = answer(b"url(/font-roboto/", **{"Content-Security-Policy": "default-src 'self'"})
    finish_board_response(data, "data/plugin/scalars/tags")
    assert data.body == b"url(/font-roboto/"  # not the index: as TensorBoard sent it
    # TensorBoard's own policy, with the framing rule it lacks.
    assert data.headers["Content-Security-Policy"] == "default-src 'self'; frame-ancestors 'self'"


def test_tensorboards_own_policy_is_kept_and_gets_the_framing_rule() -> None:
    """What TensorBoard 2.x sends with its index page: a policy without frame-ancestors."""
    sent = [("Content-Security-Policy", "default-src 'self'; script-src 'self' 'unsafe-eval';")]
    policy = board_headers(sent)["Content-Security-Policy"]
    assert policy == "default-src 'self'; script-src 'self' 'unsafe-eval'; frame-ancestors 'self'"
    # A board that sets its own framing rule keeps it; no policy at all gets ours alone.
    own = [("content-security-policy", "frame-ancestors 'none'")]
    assert board_headers(own)["Content-Security-Policy"] == "frame-ancestors 'none'"
    assert board_headers([])["Content-Security-Policy"] == "frame-ancestors 'self'"
