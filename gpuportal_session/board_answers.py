"""What both board proxies (a private board's, gpuportal_session.board_proxy, and a shared
board's, gpuportal_session.board_server) change in a TensorBoard's answers.

TensorBoard's index page asks for its Roboto font at the site's root (`url(/font-roboto/...)`),
which behind the hub is the hub's root, not the board's: four 404s on every board page, and the
fallback font. The index page is handed on with those addresses relative, so they reach the
board, which serves the font itself.

TensorBoard sends its own Content-Security-Policy without `frame-ancestors`, so any site could
frame a board; the proxies add that rule to TensorBoard's policy, keeping the rest of it."""

from __future__ import annotations

from collections.abc import Iterable

# A board may be framed by the session's own pages (`%tensorboard` in a notebook, the
# TensorBoard page's view), by nothing else.
FRAMING = "frame-ancestors 'self'"

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


def board_headers(given: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The headers of ours a board's answer gets, given the headers TensorBoard sent: its
    policy with our framing rule added (or ours alone), and no content-type guessing."""
    policy = next((v for k, v in given if k.lower() == "content-security-policy"), "")
    if "frame-ancestors" not in policy:
        policy = f"{policy.rstrip('; ')}; {FRAMING}" if policy.strip() else FRAMING
    return {"Content-Security-Policy": policy, "X-Content-Type-Options": "nosniff"}
