"""JupyterHub wiring for the GPU portal: no logic here, only which parts and which values.

Read by `gpuportal-hub -f deploy/jupyterhub_config.py` (JupyterHub's command, started sooner:
gpuportal_spawner.hub_command). Values a deployment changes come from environment variables
with a PORTAL_ prefix, so the demo, the tests and a real cluster share this one file.
"""

import json
import logging
import secrets
import sys
from pathlib import Path

import gpuportal_session.compression
import gpuportal_spawner.audit
import gpuportal_spawner.metrics
from gpuportal_adapters.settings import HubSettings
from gpuportal_core.resources import TEMPLATES_DIR
from gpuportal_core.slurm_time import cluster_offset_minutes
from gpuportal_portal.settings import passed_by_the_hub
from gpuportal_session.lab_static import ENV as LAB_STATIC_ENV
from gpuportal_session.lab_static import for_hub
from gpuportal_spawner import hub_routes, request_log
from gpuportal_spawner.errors import RefusalsWithoutTraceback
from gpuportal_spawner.hub_app import GpuPortalHub
from gpuportal_spawner.named_sessions import kept_limit
from gpuportal_spawner.unused_traits import refuse_unused

c = get_config()  # noqa: F821  (provided by JupyterHub when it loads this file)

# Every PORTAL_* setting of the hub, typed and with its default, in one model
# (gpuportal_adapters.settings; the README lists them).
settings = HubSettings()
state = Path(settings.hub_state)
state.mkdir(parents=True, exist_ok=True, mode=0o700)
port = settings.hub_port
session_venv = settings.session_venv

# -- the hub and its proxy --------------------------------------------------------------
# HTTPS in front (docs/explanation/security.md): the proxy serves the site's certificate,
# plain HTTP on PORTAL_HTTP_REDIRECT_PORT answers with a redirect, and browsers are told to keep
# to HTTPS (HSTS). JupyterHub marks its cookies Secure on an HTTPS request by itself. Without a
# certificate the hub serves HTTP, for a front end (nginx) that ends TLS and sends
# X-Forwarded-Proto: https.
public_tls = bool(settings.public_tls_cert)
if public_tls:
    c.JupyterHub.ssl_cert = settings.public_tls_cert
    c.JupyterHub.ssl_key = settings.public_tls_key
c.JupyterHub.bind_url = f"{'https' if public_tls else 'http'}://{settings.hub_bind}:{port}"
# The hub's API, which jobs on the compute nodes call (the port callback, activity, GPU
# readings): on the login host's address on the cluster network. `hub` is the login host's name
# in the local cluster (deploy/local/hosts.sh) and in docker-compose.yml.
c.JupyterHub.hub_ip = settings.hub_connect_ip
# Where jobs reach the hub's API when it listens on every address (docker-compose.yml: "hub").
if settings.hub_api_host:
    c.JupyterHub.hub_connect_ip = settings.hub_api_host
c.JupyterHub.hub_port = port + 81
# -- internal TLS (JupyterHub's internal_ssl, with gpuportal_spawner.session_tls for jobs on the
# nodes) --
# The hub, its proxy, its services and every session talk TLS with certificates of the hub's
# own CAs (made once in the state folder), and each side checks the other's. The browser side
# (bind_url) is left to the site's front end. PORTAL_INTERNAL_TLS=0 turns it off.
internal_tls = settings.internal_tls
c.JupyterHub.internal_ssl = internal_tls
c.JupyterHub.internal_certs_location = str(state / "internal-ssl")
# The proxy's API speaks TLS too, then (JupyterHub hands it its certificates).
c.ConfigurableHTTPProxy.api_url = f"{'https' if internal_tls else 'http'}://127.0.0.1:{port + 1}"
# The names jobs and services call the hub by: in its certificate (made once: a changed name
# needs `recreate_internal_certs` or an empty internal-ssl folder).
hub_names = {settings.hub_api_host, c.JupyterHub.hub_ip} - {"", "0.0.0.0"}
c.JupyterHub.trusted_alt_names = [
    f"IP:{name}" if name.replace(".", "").isdigit() else f"DNS:{name}" for name in sorted(hub_names)
]
c.ConfigurableHTTPProxy.command = [
    settings.proxy_command,
    *(
        ["--redirect-port", str(settings.http_redirect_port), "--redirect-to", str(port)]
        if settings.http_redirect_port
        else []
    ),
]
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
# JupyterHub's own database: PostgreSQL for production (many users: concurrent writers, no
# file lock), SQLite for the demo.
c.JupyterHub.db_url = settings.hub_database_url or f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
# SameSite=Lax on the hub's cookies; the hub hands the same options to every server
# (JUPYTERHUB_COOKIE_OPTIONS), so the jupyterhub-user-* cookies get it too: another site's
# page cannot post to a session with them.
# Secure too where users reach the hub over HTTPS (JupyterHub itself marks only some of its
# cookies so, by the request: not the _xsrf one).
secure_cookies = public_tls or settings.tls_in_front
c.JupyterHub.tornado_settings = {
    "cookie_options": {"samesite": "Lax", **({"secure": True} if secure_cookies else {})},
    # Static assets gzipped, pages and API answers not (gpuportal_session.compression says why).
    "transforms": gpuportal_session.compression.TORNADO_TRANSFORMS,
    # The spawn request waits this long before the user is sent to the waiting page (stock:
    # 10 s of a blank browser while the job sits in the queue). A session that is ready in
    # time opens straight away; any other shows where it stands from the first second.
    "slow_spawn_timeout": 1,
    # JupyterHub's request log; each user's last call (the idle limit) and an admin let into
    # someone's server (the audit stream) noted from it.
    "log_function": request_log.log_request,
    # A year of HTTPS only, once a browser has seen the site over it (none without TLS here:
    # the front end that ends TLS sends it then).
    "headers": {"Strict-Transport-Security": "max-age=31536000"} if public_tls else {},
}
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
# The audit streams (JSON lines, rotated), the hub's and the portal's: /services/portal/admin/audit.
audit_dir = state / "audit"
gpuportal_spawner.audit.configure(audit_dir)
# The portal's own figures join the hub's at /hub/metrics (Slurm calls, queue wait, capacity,
# sessions, login failures); the portal has its own at /services/portal/metrics.
gpuportal_spawner.metrics.install()
# Stopping or restarting the hub must never cancel users' jobs.
c.JupyterHub.cleanup_servers = False
# The hub's pages, then what they share with the portal's (the navigation).
c.JupyterHub.template_paths = [str(TEMPLATES_DIR / "hub"), str(TEMPLATES_DIR / "shared")]

# -- login: the cluster's LDAP password form, or the site's single sign-on ---------------
# PORTAL_LOGIN=ldap: the hub's form binds as the user (gpuportal_spawner.ldap_authenticator).
# PORTAL_LOGIN=sso: the site's OpenID Connect provider signs users in (authorization code with
# PKCE, its certificate checked), LDAP stays the directory (gpuportal_spawner.sso_authenticator;
# docs/how-to/sso.md). Both read LDAP the same way (ClusterDirectory's settings below).
c.JupyterHub.authenticator_class = "cluster-sso" if settings.login == "sso" else "cluster-ldap"
# LDAPS, with the server's certificate checked against the directory's CA (the demo makes its
# own, deploy/local/cluster.sh). A plain ldap:// URI stops the hub unless allowed explicitly.
c.ClusterDirectory.server_uri = settings.ldap_uri
c.ClusterDirectory.tls_ca_file = settings.ldap_ca_file or f"{settings.state}/ldap-ca.pem"
c.ClusterDirectory.user_search_base = settings.ldap_user_base
c.ClusterDirectory.group_search_base = settings.ldap_group_base
# Also the groups the service account's sudo rule acts for (gpuportal-admin sudoers).
c.ClusterDirectory.allowed_ldap_groups = set(settings.user_groups)
# The cluster's admins: the hub's (the role cluster-admin) and the portal's (PORTAL_ADMIN_GROUPS).
ADMIN_GROUPS = ["hpc-admins"]
c.ClusterDirectory.admin_ldap_groups = set(ADMIN_GROUPS)
# Admins manage users and servers; they enter users' servers only where the site says so, each
# entry audited (gpuportal_spawner.admin_entry).
c.ClusterDirectory.admins_enter_sessions = settings.admins_enter_sessions
# A hub login lasts PORTAL_SESSION_HOURS, and ends after PORTAL_SESSION_IDLE_HOURS without a
# call (gpuportal_spawner.login_limits).
c.JupyterHub.cookie_max_age_days = settings.session_hours / 24
c.ClusterDirectory.session_idle_seconds = settings.session_idle_hours * 3600
# The hub's groups follow LDAP at each login, and are read again every auth_refresh_age
# seconds: profile visibility and the portal's admin check read them.
c.Authenticator.manage_groups = True
c.Authenticator.auth_refresh_age = settings.auth_refresh_age
if settings.login == "sso":
    c.ClusterOIDCAuthenticator.issuer = settings.sso_issuer
    c.ClusterOIDCAuthenticator.login_service = settings.sso_name
    c.ClusterOIDCAuthenticator.client_id = settings.sso_client_id
    secret_file = Path(
        settings.sso_client_secret_file or f"{settings.state}/sso-client/client-secret"
    )
    c.ClusterOIDCAuthenticator.client_secret = secret_file.read_text().strip()
    c.ClusterOIDCAuthenticator.ca_file = settings.sso_ca_file or f"{settings.state}/demo-ca/ca.pem"
    c.ClusterOIDCAuthenticator.groups_claim = settings.sso_groups_claim
    # Used logout tokens' ids, kept across restarts until each expires.
    c.ClusterOIDCAuthenticator.logout_state_dir = str(state)
    # Refused second factors, from the provider's log (the local cluster's: deploy/local/sso.sh).
    provider_log = Path(settings.sso_provider_log or f"{settings.state}/sso-log/portal.log")
    if settings.sso_provider_log or provider_log.exists():
        c.ClusterOIDCAuthenticator.provider_log = str(provider_log)
    c.ClusterOIDCAuthenticator.code_failures_allowed = settings.sso_code_failures
    c.ClusterOIDCAuthenticator.code_lock_seconds = settings.sso_code_lock_minutes * 60.0
    # PKCE (S256) on every sign-in; OAuthenticator's default, said here so that it stays on.
    c.ClusterOIDCAuthenticator.enable_pkce = True
    c.ClusterOIDCAuthenticator.tls_in_front = settings.tls_in_front

# -- GPU profiles, each a Slurm job ----------------------------------------------------
# The hub's own endpoints, /hub/gpuportal/... (capacity, session cards, notices, notebook jobs).
c.JupyterHub.extra_handlers = hub_routes.extra_handlers()
# Several sessions per user: the default one plus this many named ones at a time.
c.JupyterHub.allow_named_servers = True
named_sessions = settings.named_sessions
# That many run at a time (checked before each spawn); JupyterHub keeps stopped ones and shared
# TensorBoards (tb-*, no GPU) besides (gpuportal_spawner.named_sessions).
c.GpuProfilesSpawner.named_sessions = named_sessions
c.JupyterHub.named_server_limit_per_user = kept_limit(named_sessions)
c.JupyterHub.spawner_class = "gpu-profiles"
# A refused spawn (bad options, a limit) is logged as one line, not as a traceback. The hub's
# logger is named after its class, as traitlets names an application's.
logging.getLogger(GpuPortalHub.__name__).addFilter(RefusalsWithoutTraceback())
c.GpuProfilesSpawner.partition = settings.partition
c.GpuSlurmSpawner.session_venv = session_venv
c.GpuSlurmSpawner.shared_dir = settings.shared_dir
# Empty: JupyterLab listens on its node's own address, the one the hub connects to.
c.GpuSlurmSpawner.listen_ip = settings.session_listen_ip
# Names this hub in its jobs' tags (sbatch --comment): a restarted hub finds its jobs by it.
hub_id = settings.hub_id
c.GpuSlurmSpawner.hub_id = hub_id
# Where the Slurm commands are, and how long one may take (empty: on PATH; 20 s).
c.GpuSlurmSpawner.slurm_bin_dir = settings.slurm_bin_dir
c.GpuSlurmSpawner.slurm_timeout = settings.slurm_timeout
# One squeue of every job serves the hub and the portal: each reads the other's last read here.
queue_file = settings.queue_file or str(state / "queue.json")
c.GpuSlurmSpawner.queue_file = queue_file
# The same for the services that call Slurm (the portal, the resumer).
cluster_env = {
    "PORTAL_HUB_ID": hub_id,
    "PORTAL_SLURM_BIN_DIR": settings.slurm_bin_dir,
    "PORTAL_SLURM_TIMEOUT": str(settings.slurm_timeout),
    "PORTAL_QUEUE_FILE": queue_file,
}
# Users cannot pip-install into the shared session venv, so the PyPI extension manager's
# install buttons could only fail; the read-only one lists what is installed (and starts faster).
# (Spawner, not GpuSlurmSpawner: the profile chooser links its own args onto the child.)
c.Spawner.args = ["--LabApp.extension_manager=readonly"]
c.Spawner.default_url = "/lab"
# How long JupyterLab may take to start once its job runs; a spawn also waits its profile's
# queue limit in the queue (GpuProfilesSpawner adds it:
# gpuportal_core.culling.CullLimits.start_wait).
c.Spawner.start_timeout = settings.start_timeout
c.Spawner.http_timeout = 60
# JupyterHub counts a session waiting in the Slurm queue as a spawn under way, and refuses
# spawns past concurrent_spawn_limit (100 by default) with 429: a course of 300 asking at once
# on 100 free GPUs would have 100 of them refused rather than queued. A queued spawn costs the
# hub little (one shared squeue for all: gpuportal_adapters.poller), so the limit is Slurm's
# queue, with a hub-wide bound as the safety net (bench/scale.py).
c.JupyterHub.concurrent_spawn_limit = settings.spawn_limit
# How often the hub asks each server's job how it is (one shared squeue for all of them).
c.Spawner.poll_interval = settings.poll_interval

# -- culling (each profile's idle, GPU-idle and queue limits; gpuportal_core.culling) -------------
# How often a session tells the hub it is in use, and the hub reads the proxy's activity; and
# how often a session reads its GPUs (gpuportal_session.gpu_activity). Seconds.
c.JupyterHub.last_activity_interval = settings.activity_interval
# Activity is written when it moved on by this: JupyterHub's 30 s meant a commit (a wait for the
# disk in the hub's loop) for every user's page every 30 s; half the sessions' interval is enough.
c.JupyterHub.activity_resolution = max(30, settings.activity_interval // 2)
c.Spawner.environment = {
    "JUPYTERHUB_ACTIVITY_INTERVAL": str(settings.activity_interval),
    "GPUPORTAL_GPU_SAMPLE_SECONDS": str(settings.gpu_sample_seconds),
}


def service_token(name: str) -> str:
    """A service's API token, made once in the hub's state (0600) and kept across restarts."""
    token_file = state / f"{name}-api-token"
    if not token_file.exists():
        token_file.touch(mode=0o600)
        token_file.write_text(secrets.token_hex(32))
    return token_file.read_text().strip()


# -- the portal (live profiles, admin pages, REST API) at /services/portal/ -------------
# The hub gives the portal this token; the spawner presents it to read every profile.
portal_token = service_token("portal")
portal_url = f"http://127.0.0.1:{port + 82}"
# Members of these LDAP groups edit profiles (hub admins may too).
portal_admin_groups = ADMIN_GROUPS
portal_db = settings.database_url or f"sqlite:///{state / 'portal.db'}"
# The portal's first start stores these software environments (deploy/local/environments.sh
# makes the demo's); admins change them on the admin page afterwards.
seed_environments = [
    {
        "slug": "session",
        "title": "Session default",
        "kind": "venv",
        "prefix": session_venv,
        "description": "JupyterLab's own environment; PyTorch is the PyTorch kernel's "
        "(in a terminal: source /opt/gpuportal/envs/torch/bin/activate)",
    },
    {
        "slug": "analysis",
        "title": "Analysis venv",
        "kind": "venv",
        "prefix": "/opt/gpuportal/envs/analysis",
        "description": "A venv of its own, layered on the session's",
    },
    {
        "slug": "torch",
        "title": "PyTorch",
        "kind": "venv",
        "prefix": "/opt/gpuportal/envs/torch",
        "description": "PyTorch 2.13, layered on the session's venv",
    },
    {
        "slug": "demo-tools",
        "title": "Demo tools module",
        "kind": "modules",
        "modules": ["demo-tools/1.0"],
        "description": "Lmod: module load demo-tools/1.0",
    },
]
# The demo's session image, where deploy/local/podman.sh session-image made it (install.sh, on
# Debian 12): JupyterLab in a container image, run by podman as the user.
session_archive = Path("/srv/gpuportal-images/gpuportal-session.tar")
if session_archive.exists():
    seed_environments.append(
        {
            "slug": "session-image",
            "title": "Session image (podman)",
            "kind": "container",
            "engine": "podman",
            "image": str(session_archive),
            "description": "JupyterLab and PyTorch in a container image, run by podman as you",
        }
    )
# JupyterLab's bundles from one shared place (gpuportal_session.lab_static): the portal serves the
# session venv's and the seeded environments' builds, jobs are told which, the hub's pages
# prefetch the session venv's largest bundles. Under the hub's base_url, "/" here.
lab_static = for_hub(session_venv, seed_environments, "/services/portal/lab-static")
c.Spawner.environment[LAB_STATIC_ENV] = lab_static.job_env
c.GpuProfilesSpawner.portal_url = portal_url + "/services/portal"
# The navigation on the hub's pages links to the portal's (templates/shared/nav_items.html).
c.JupyterHub.template_vars = {
    "portal_prefix": "/services/portal",  # under the hub's base_url, "/" here
    "profile_admin_groups": portal_admin_groups,
    "named_sessions": named_sessions,
    "lab_prefetch": lab_static.prefetch,
    # Pages show times in the reader's zone, and name it where it is not the cluster's
    # (templates/shared/times.html); a callable: asked at each page, so it follows DST.
    "cluster_offset": lambda user: cluster_offset_minutes(),
}
c.GpuProfilesSpawner.portal_token = portal_token
# The portal's last answer, on disk: spawns and resumes right after a restart need not wait.
c.GpuProfilesSpawner.profiles_cache = str(state / "profiles-cache.json")


def hub_service(module: str, *args: str) -> list[str]:
    """The command of a service the hub runs: through gpuportal_adapters.hub_service, which ties its
    life to the hub's (it dies with the hub, and stops at once when the hub asks)."""
    return [sys.executable, "-m", "gpuportal_adapters.hub_service", module, *args]


# -- the hub's services -------------------------------------------------------------------
# JupyterHub starts them in this order and waits for each one that has a URL before it goes on
# (and before it routes to any session): the portal first, so that nothing else the hub starts
# competes with its start. The spawn-resumer brings back servers whose job was still queued when
# the hub stopped; it has no URL, nor has the culler.
c.JupyterHub.services = [
    {
        "name": "portal",
        "url": portal_url,
        "command": hub_service("gpuportal_portal"),
        "api_token": portal_token,
        "oauth_no_confirm": True,
        # The user's own model, with `admin`, so that hub admins are portal admins too.
        "oauth_client_allowed_scopes": ["read:users!user"],
        "environment": {
            **passed_by_the_hub(),  # the portal's own PORTAL_* that this environment sets
            **cluster_env,
            "PORTAL_DATABASE_URL": portal_db,
            "PORTAL_ADMIN_GROUPS": json.dumps(portal_admin_groups),
            "PORTAL_DEFAULT_PARTITION": settings.partition,
            "PORTAL_SEED_ENVIRONMENTS": json.dumps(seed_environments),
            "PORTAL_SESSION_VENV": session_venv,
            "PORTAL_LAB_STATIC_DIRS": json.dumps([str(d) for d in lab_static.folders]),
            "PORTAL_AUDIT_DIR": str(audit_dir),
            # What ended jobs used is read from sacct once per poll interval of the hub's.
            "PORTAL_USE_LOOK_SECONDS": str(settings.poll_interval),
        },
        "display": True,
    },
    {
        "name": "spawn-resumer",
        "command": hub_service("gpuportal_spawner.resume_service"),
        # The same Slurm settings as the spawner's; it also removes named servers never started
        # (two looks in a row, ten of the hub's poll intervals apart: 5 min by default).
        "environment": {**cluster_env, "PORTAL_SWEEP_SECONDS": str(10 * settings.poll_interval)},
    },
]
# jupyterhub-idle-culler stops idle sessions; the hub tells it which are due (its arbiter).
c.JupyterHub.services.append(
    {
        "name": "idle-culler",
        "command": hub_service(
            "jupyterhub_idle_culler",
            f"--config={Path(__file__).with_name('idle_culler_config.py')}",
            f"--cull-every={settings.cull_every}",
            # Only a fallback for the culler's own arithmetic: the profiles' limits decide.
            "--timeout=86400",
            # The hub's own certificate, read from its store (the culler's documented way).
            *(
                ["--ssl-enabled=True", f"--internal-certs-location={state / 'internal-ssl'}"]
                if internal_tls
                else []
            ),
        ),
    },
)
# Prometheus (deploy/local/prometheus.sh) scrapes the hub's /hub/metrics and the portal's
# /services/portal/metrics with this service's token, which may read metrics and nothing else.
c.JupyterHub.services.append({"name": "prometheus", "api_token": service_token("prometheus")})
# Who may do what: users, their sessions' tokens, admins, the services (hub_routes says each).
c.JupyterHub.custom_scopes = hub_routes.CUSTOM_SCOPES
c.JupyterHub.load_roles = hub_routes.roles(
    c.ClusterDirectory.admin_ldap_groups, admins_enter=settings.admins_enter_sessions
)

# A batchspawner setting GpuSlurmSpawner does not read stops the hub here, saying what to set.
refuse_unused(c)
