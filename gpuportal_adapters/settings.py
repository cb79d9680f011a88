"""Every PORTAL_* setting, read by pydantic-settings, one model per process.

The hub (deploy/jupyterhub_config.py), the spawn resumer and the portal each read their
settings from the environment through one of these models and nothing else, so that a name
means one thing everywhere and has one default. ClusterSettings holds what all three share
(the hub's name in job tags, where the Slurm commands are). The docs' settings reference is
generated from these models (docs/_ext/gpuportal_reference.py).
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ClusterSettings(BaseSettings):
    """What every process of the portal needs to know of the cluster."""

    model_config = SettingsConfigDict(env_prefix="PORTAL_", extra="ignore", populate_by_name=True)

    hub_id: str = Field(
        "local", description="Names the hub in its jobs' tags (sbatch --comment), e.g. ds-hub."
    )
    slurm_bin_dir: str = Field(
        "", description="Directory of the Slurm commands, e.g. /usr/bin; empty: on PATH."
    )
    slurm_timeout: float = Field(20.0, description="Seconds before a Slurm command is given up.")
    queue_file: str = Field(
        "",
        description="The file in which the hub and the portal share their last squeue of every "
        "job, so that one read serves both; empty: each reads for itself. The hub sets it.",
    )
    session_venv: str = Field(
        "/opt/gpuportal/venv",
        description="The venv JupyterLab runs from on the nodes (it also runs the podman "
        "images of sessions and jobs: gpuportal_session.container).",
    )


class HubSettings(ClusterSettings):
    """The hub's settings (deploy/jupyterhub_config.py)."""

    hub_state: str = Field(
        "/var/lib/portal-local/hub",
        description="The hub's own folder: its database, cookie secret, certificates, audit.",
    )
    hub_port: int = Field(8000, description="The browser's port; the hub's API is this + 81.")
    hub_bind: str = Field("127.0.0.1", description="The address the browser side listens on.")
    hub_connect_ip: str = Field(
        "hub", description="The hub API's address on the cluster network, where jobs call it."
    )
    hub_api_host: str = Field(
        "", description="Where jobs reach the hub's API when it listens on every address."
    )
    internal_tls: bool = Field(True, description="TLS between hub, proxy, services, sessions.")
    proxy_command: str = Field(
        "/opt/gpuportal/chp/bin/configurable-http-proxy",
        description="The configurable-http-proxy command (on its own Node: install.sh).",
    )
    ldap_uri: str = Field("ldaps://ldap:6360/", description="The directory, ldaps:// checked.")
    ldap_user_base: str = Field(
        "ou=people,dc=example,dc=org", description="Where the directory keeps its users."
    )
    ldap_group_base: str = Field(
        "ou=groups,dc=example,dc=org", description="Where the directory keeps its groups."
    )
    ldap_ca_file: str = Field(
        "", description="The CA of the directory's certificate; empty: ldap-ca.pem in state."
    )
    state: str = Field(
        "/var/lib/portal-local", description="The local cluster's folder (deploy/local scripts)."
    )
    login: str = Field(
        "ldap",
        pattern="^(ldap|sso)$",
        description="How users sign in: ldap (the hub's form checks the LDAP password) or sso "
        "(the site's OpenID Connect provider, LDAP still the directory).",
    )
    sso_issuer: str = Field(
        "https://sso.example.org",
        description="The provider's issuer URL, e.g. https://login.example.org/realms/hpc; its "
        "discovery document gives the endpoints.",
    )
    sso_name: str = Field("single sign-on", description="What the login button calls the provider.")
    sso_client_id: str = Field("gpuportal-hub", description="The hub's client id there.")
    sso_client_secret_file: str = Field(
        "",
        description="A file with the hub's client secret, the service account's alone; empty: "
        "sso-client/client-secret in state.",
    )
    sso_ca_file: str = Field(
        "",
        description="The CA of the provider's certificate; empty: the demo CA in state "
        "(demo-ca/ca.pem); a site's provider with a public certificate: the system's CAs "
        "(/etc/ssl/certs/ca-certificates.crt).",
    )
    sso_provider_log: str = Field(
        "",
        description="The provider's log on the hub host, whose refused second factors go to the "
        "audit stream; empty: sso-log/portal.log in state where it exists.",
    )
    sso_code_failures: int = Field(
        5,
        ge=0,
        description="Second factors the provider may refuse a user (read from its log) within "
        "sso_code_lock_minutes before the hub refuses that user's sign-ins for as long; 0: "
        "never.",
    )
    sso_code_lock_minutes: int = Field(
        15, ge=1, description="How long those refusals count, and how long the hub then refuses."
    )
    sso_groups_claim: str = Field(
        "",
        description="The claim with the user's groups, e.g. groups; empty: groups from LDAP.",
    )
    session_hours: float = Field(
        12.0,
        gt=0,
        description="How long a hub login lasts from the login, in hours (the browser's "
        "cookie, and the cookies of the servers and services it opens); then log in again.",
    )
    session_idle_hours: float = Field(
        2.0,
        ge=0,
        description="A hub login ends after this many hours without a request of the "
        "person's browser (a hub page, or the portal or a server checking its token; a "
        "session's own calls do not count), with the tokens it gave the portal and the "
        "servers; checked at the next request; 0: no idle limit. Tokens made on the token "
        "page keep their own expiry.",
    )
    admins_enter_sessions: bool = Field(
        False,
        description="Whether the admin groups' members may open users' servers (JupyterLab, "
        "terminals, shared TensorBoards) through JupyterHub's consent page, each entry "
        "audited (never as JupyterHub admins, who could make a token for the user); false: "
        "they manage users and servers (start, stop, the admin page) without entering.",
    )
    auth_refresh_age: int = Field(
        300, description="Seconds before a user's LDAP groups are read again."
    )
    named_sessions: int = Field(2, description="Named sessions a user may run at a time.")
    user_groups: list[str] = Field(
        ["ds", "hpc-admins", "vision"],
        description="LDAP groups whose members may log in; the service account's sudo rule "
        "acts as their members only. JSON list.",
    )
    public_tls_cert: str = Field(
        "",
        description="The browser side's certificate (PEM, chain included); empty: plain HTTP, "
        "for TLS ended in front of the hub (nginx).",
    )
    public_tls_key: str = Field("", description="Its key, the service account's alone (0600).")
    settings_file: str = Field(
        "/etc/gpuportal/hub.env",
        description="The hub's settings as it runs with them (PORTAL_*='value' lines, as "
        "systemd's EnvironmentFile reads them; deploy/local/hub.sh writes it): "
        "`gpuportal-admin` reads them from there, under its own environment's.",
    )
    tls_in_front: bool = Field(
        False,
        description="TLS is ended in front of the hub (nginx): its cookies are Secure all the "
        "same.",
    )
    http_redirect_port: int = Field(
        0, description="A plain-HTTP port that redirects to the HTTPS one; 0: none."
    )
    service_user: str = Field(
        "gpuportal",
        description="The unprivileged account the hub, its proxy and services run as.",
    )
    partition: str = Field("gpu", description="The partition of the configured profiles.")
    shared_dir: str = Field(
        "/srv/gpuportal-shared", description="The shared folder every session links to."
    )
    session_listen_ip: str = Field(
        "", description="Where JupyterLab listens in its job; empty: its node's own address."
    )
    start_timeout: int = Field(
        300, description="Seconds JupyterLab may take to start once its job runs."
    )
    spawn_limit: int = Field(
        2000,
        description="Sessions starting or queued at once, hub-wide (429 past it). 0: no limit.",
    )
    poll_interval: int = Field(
        30, description="Seconds between the hub's checks of every session (one squeue)."
    )
    activity_interval: int = Field(
        300, description="Seconds between a session's activity reports to the hub."
    )
    gpu_sample_seconds: int = Field(60, description="Seconds between a session's GPU readings.")
    cull_every: int = Field(60, description="Seconds between the idle culler's rounds.")
    database_url: str = Field(
        "", description="The portal's database (SQLAlchemy URL); empty: SQLite in hub_state."
    )
    hub_database_url: str = Field(
        "",
        description="JupyterHub's own database (SQLAlchemy URL; PostgreSQL in production, "
        "postgresql+psycopg://...); empty: SQLite in hub_state.",
    )
