"""`gpuportal-hub -f jupyterhub_config.py`: the hub (gpuportal_spawner.hub_app), started sooner.

JupyterHub imports jupyter_events, which imports jsonschema, which imports rfc3987_syntax for
its "iri" format checks if it is installed; that module builds its Lark parsers at import,
at every start and restart (`--version` on the 2-core machine, four timings each: 4.4 to
7.4 s with it, 2.3 to 3.2 s without). No schema of JupyterHub's uses those formats, and
without the module jsonschema simply does not check them
(https://github.com/python-jsonschema/jsonschema/issues/1428). It is kept out here, before
JupyterHub is imported, by gpuportal_adapters.compat's IRI_PARSERS (while jsonschema imports it
only optionally), which the session uses too. Everything else is JupyterHub's
command-line application, with the portal's two routes (GpuPortalHub). `jupyterhub -f ...`
starts a hub that lacks them: its spawner then refuses to start sessions, and says why.
"""

from __future__ import annotations

from gpuportal_adapters import compat


def main() -> None:
    # Before any TLS: the hub's connections are all TLS (gpuportal_adapters.compat).
    compat.install()
    compat.apply([compat.IRI_PARSERS])  # before JupyterHub imports jsonschema
    from gpuportal_spawner.hub_app import GpuPortalHub

    GpuPortalHub.launch_instance()


if __name__ == "__main__":
    main()
