"""The session's side of internal TLS (gpuportal_spawner.session_tls): its certificate, for calling
the hub's API and for serving, read from the paths the hub put in the job's environment.

JupyterHub's `jupyterhub.utils.make_ssl_context` builds the same contexts, but importing that
module costs the launcher about 0.6 s of every spawn; these are the few lines it needs.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping


def _files(environ: Mapping[str, str]) -> tuple[str, str, str] | None:
    certfile = environ.get("JUPYTERHUB_SSL_CERTFILE", "")
    if not certfile:
        return None  # internal TLS is off: plain HTTP
    keyfile = environ.get("JUPYTERHUB_SSL_KEYFILE", "") or certfile
    return certfile, keyfile, environ.get("JUPYTERHUB_SSL_CLIENT_CA", "")


def client_context(environ: Mapping[str, str] = os.environ) -> ssl.SSLContext | None:
    """For requests to the hub: checks the hub's certificate and name, shows the session's."""
    files = _files(environ)
    if files is None:
        return None
    certfile, keyfile, cafile = files
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cafile or None)
    context.load_cert_chain(certfile, keyfile)
    return context


def server_context(environ: Mapping[str, str] = os.environ) -> ssl.SSLContext | None:
    """For a server of the session: TLS only, and only clients with a certificate of the
    hub's CAs (the hub's, the proxy's)."""
    files = _files(environ)
    if files is None:
        return None
    certfile, keyfile, cafile = files
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=cafile or None)
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_cert_chain(certfile, keyfile)
    return context
