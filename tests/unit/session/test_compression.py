"""Static assets gzipped, pages not: a real tornado server with the session's transforms."""

from __future__ import annotations

import gzip
from pathlib import Path

from tornado import web
from tornado.httpclient import AsyncHTTPClient
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from gpuportal_session.compression import TORNADO_TRANSFORMS

SCRIPT = b"function f() { return 'jupyterlab'; }\n" * 5000
PAGE = "<html><body>" + "<div>xsrf token beside what a user typed</div>" * 1000 + "</body></html>"


class Page(web.RequestHandler):
    def get(self) -> None:
        self.write(PAGE)


async def answers(tmp_path: Path) -> dict[str, tuple[str | None, bytes]]:
    (tmp_path / "jlab_core.js").write_bytes(SCRIPT)
    app = web.Application(
        [
            (r"/user/alice/static/(.*)", web.StaticFileHandler, {"path": str(tmp_path)}),
            (
                r"/user/alice/lab/extensions/x/static/(.*)",
                web.StaticFileHandler,
                {"path": str(tmp_path)},
            ),
            (r"/user/alice/lab", Page),
            (r"/hub/home", Page),
        ],
        transforms=TORNADO_TRANSFORMS,
    )
    sockets = bind_sockets(0, "127.0.0.1")
    server = HTTPServer(app)
    server.add_sockets(sockets)
    port = sockets[0].getsockname()[1]
    client = AsyncHTTPClient()
    got = {}
    try:
        for path in (
            "/user/alice/static/jlab_core.js",
            "/user/alice/lab/extensions/x/static/jlab_core.js",
            "/user/alice/lab",
            "/hub/home",
        ):
            response = await client.fetch(
                f"http://127.0.0.1:{port}{path}",
                headers={"Accept-Encoding": "gzip"},
                decompress_response=False,
            )
            got[path] = (response.headers.get("Content-Encoding"), response.body)
    finally:
        server.stop()
    return got


async def test_static_assets_are_gzipped_and_pages_are_not(tmp_path: Path) -> None:
    got = await answers(tmp_path)
    for path in (
        "/user/alice/static/jlab_core.js",
        "/user/alice/lab/extensions/x/static/jlab_core.js",
    ):
        encoding, body = got[path]
        assert encoding == "gzip", path
        assert gzip.decompress(body) == SCRIPT
        assert len(body) * 4 < len(SCRIPT)
    for path in ("/user/alice/lab", "/hub/home"):
        encoding, body = got[path]
        assert encoding is None, path
        assert body.decode() == PAGE
