"""The lab extensions' scripts cached as JupyterLab means them to be (the session's Jupyter
config, jupyter_config/jupyter_server_config.py, sets what this gives).

JupyterLab marks its own bundles and every federated extension's `static/` folder as immutable
(content-hashed names: `Cache-Control: immutable`, a year). For the extensions it lists their URLs
without the server's base URL (`/lab/extensions/<name>/static`), while a session serves them
under `/user/<name>/lab/extensions/...`; no request matched, so a returning browser asked again
for each of the 30-odd extension files of a lab's start (`bench/click_to_lab.py` counted them).
Upstream: jupyterlab_server's LabServerApp.initialize_settings joins `labextensions_url`
without `base_url`. Given as the server's own `static_immutable_cache`, which JupyterLab adds
its list to.
"""

from __future__ import annotations

from glob import glob
from os.path import relpath

from jupyter_core.paths import jupyter_path
from jupyter_server.utils import url_path_join

# JupyterLab's default labextensions_url, under the app's URL (LabServerApp's default).
EXTENSIONS_URL = "lab/extensions/"


def immutable_extension_urls(base_url: str, folders: list[str] | None = None) -> list[str]:
    """Each lab extension's static/ folder as the server serves it under base_url, found as
    JupyterLab finds them (every labextensions folder on the Jupyter path)."""
    urls: list[str] = []
    for folder in folders if folders is not None else jupyter_path("labextensions"):
        for static in sorted(glob(f"{folder}/**/static", recursive=True)):
            url = url_path_join(base_url, EXTENSIONS_URL, relpath(static, folder))
            if url not in urls:
                urls.append(url)
    return urls
