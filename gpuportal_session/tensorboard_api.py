"""A Jupyter server extension of the session: POST /gpuportal/tensorboard opens TensorBoard on a
folder of the file browser ("Open in TensorBoard" in its context menu, the @gpuportal/session
lab extension).

The board is the same kind the TensorBoard page starts (gpuportal_session.tensorboard_private,
found again through the runtime folder), so it is served at tensorboard/tb/<number>/ (this
extension's other route, gpuportal_session.board_proxy) and listed and closed on that page.
jupyter_server checks the user and the XSRF token of the request.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from gpuportal_session.board_proxy import board_handlers
from gpuportal_session.tensorboard_page import open_board

ROUTE = "gpuportal/tensorboard"


def folder_in(root: Path, path: object) -> Path:
    """The folder a file-browser path names, under the server's root; ValueError if not one."""
    if not isinstance(path, str):
        raise ValueError('send {"path": "a/folder"}, a folder as the file browser names it')
    folder = (root / path.lstrip("/")).resolve()
    if folder != root and root not in folder.parents:
        raise ValueError("that folder is outside your files")
    if not folder.is_dir():
        raise ValueError(f"there is no folder {path!r}")
    return folder


def open_folder(root_dir: str, path: object) -> tuple[int, str]:
    """Start (or find) TensorBoard on a file-browser folder: (number, folder); ValueError if not."""
    root = Path(root_dir).expanduser().resolve()
    folder = folder_in(root, path)
    number, problem = open_board(str(folder))
    if number is None:
        raise ValueError(problem)
    return number, str(folder)


class OpenTensorBoard(APIHandler):
    @web.authenticated
    async def post(self) -> None:
        body = self.get_json_body()
        path = body.get("path") if isinstance(body, dict) else None
        try:
            # Starting TensorBoard takes seconds: not on the server's event loop.
            number, folder = await asyncio.to_thread(
                open_folder, self.settings["server_root_dir"], path
            )
        except ValueError as error:
            raise web.HTTPError(400, str(error)) from None
        url = url_path_join(self.base_url, "tensorboard", "tb", str(number), "")
        self.finish({"number": number, "url": url, "logdir": folder})


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "gpuportal_session.tensorboard_api"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    base_url = serverapp.web_app.settings["base_url"]
    handlers: list[Any] = [(url_path_join(base_url, ROUTE), OpenTensorBoard)]
    # The boards themselves, through jupyter-server-proxy (gpuportal_session.board_proxy).
    serverapp.web_app.add_handlers(".*$", handlers + board_handlers(base_url))
