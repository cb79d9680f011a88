"""Gzip for static assets, in each session's Jupyter server and in the hub (which uses it too).

JupyterLab's first load is 5.2 MB of scripts and styles, about a quarter of that gzipped; on a
cluster's network (VPN, campus Wi-Fi) that transfer is much of the wait for the lab. Tornado's
own `compress_response` would gzip every answer, pages and API JSON included: those carry the
XSRF token (JupyterHub's, the same in every answer, not masked per answer as Tornado's own)
beside text that another site can put into them, which is what BREACH needs to read a secret
from compressed sizes. Static assets carry no secret, so only they are compressed.
"""

from __future__ import annotations

from tornado import httputil
from tornado.web import GZipContentEncoding

# The assets of the hub (/hub/static/), of Jupyter Server and JupyterLab (/user/NAME/static/)
# and of lab extensions (/user/NAME/lab/extensions/PKG/static/): all under a "static" segment.
STATIC_SEGMENT = "/static/"


class StaticAssetsGzip(GZipContentEncoding):
    """Tornado's gzip transform (level 6, text, JavaScript, JSON, SVG over 1 KB), for paths
    with a static segment only."""

    def __init__(self, request: httputil.HTTPServerRequest) -> None:
        super().__init__(request)
        self._gzipping = self._gzipping and STATIC_SEGMENT in request.path


# Given as the Application's output transforms through tornado_settings (JupyterHub and Jupyter
# Server pass their settings to tornado.web.Application as keywords, `transforms` among them).
TORNADO_TRANSFORMS = [StaticAssetsGzip]
