"""TensorBoard's index page asks for its Roboto font at the site's root (`url(/font-roboto/...)`),
which behind the hub is the hub's root, not the board's: four 404s on every board page, and the
fallback font. Both board proxies (a private board's, gpuportal_session.board_proxy, and a
shared board's) hand the index page on with those addresses relative, so they reach the board,
which serves the font itself."""

from __future__ import annotations

ABSOLUTE = b"url(/font-roboto/"
RELATIVE = b"url(font-roboto/"


def is_index(path: str) -> bool:
    """Whether a path (relative to the board) is TensorBoard's index page."""
    return path.split("?", 1)[0].strip("/") in ("", "index.html")


def plain_request(headers: dict[str, str]) -> dict[str, str]:
    """The index page's request headers without Accept-Encoding: its body is edited here, so
    TensorBoard must not gzip it."""
    return {key: value for key, value in headers.items() if key.lower() != "accept-encoding"}


def fix_index(body: bytes) -> bytes:
    return body.replace(ABSOLUTE, RELATIVE)
