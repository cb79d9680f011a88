"""The portal's settings: the only reader of the environment (PORTAL_*, the hub's JUPYTERHUB_*)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, field_validator

from gpuportal_adapters.settings import ClusterSettings
from gpuportal_core.gres import GPU_KIND_RE
from gpuportal_core.profiles import DEFAULT_CORES_PER_GPU, DEFAULT_MEM_PER_GPU_GB


class PortalSettings(ClusterSettings):
    """Settings from PORTAL_* variables; the hub sets them in the service's environment.
    (populate_by_name, from ClusterSettings: tests and tools may pass hub_api_token=...
    instead of the variable name.) hub_id, slurm_bin_dir, slurm_timeout: ClusterSettings."""

    database_url: str = Field(
        "sqlite:////var/lib/gpuportal/portal.db",
        description="SQLAlchemy URL, e.g. sqlite:////var/lib/gpuportal/portal.db or "
        "postgresql+psycopg://portal:secret@db/portal",
    )
    admin_groups: list[str] = Field(
        default=["hpc-admins"], description="LDAP groups whose members may edit profiles."
    )
    seed_profiles: list[dict[str, Any]] = Field(
        default=[],
        description="Profiles stored on first start after the shipped gpu-1, gpu-2 and gpu-4, as "
        'JSON, e.g. [{"slug": "slice", "title": "1 MIG slice", "gpus": 1, "gpu_type": '
        '"1g.10gb", "cores_per_gpu": 2, "mem_per_gpu_gb": 12, "partition": "mig"}]',
    )
    seed_environments: list[dict[str, Any]] = Field(
        default=[],
        description="Software environments stored on first start, as JSON, e.g. "
        '[{"slug": "analysis", "title": "Analysis", "kind": "venv", "prefix": "/opt/envs/a"}]',
    )
    lab_static_dirs: list[str] = Field(
        default=[],
        description="JupyterLab builds served to every session at /services/portal/lab-static/"
        "<build>/ (gpuportal_session.lab_static): each a share/jupyter/lab/static folder, as "
        'JSON, e.g. ["/opt/envs/session/share/jupyter/lab/static"]; the hub sets it.',
    )
    project_roots: list[str] = Field(
        default=["/projects"],
        description="Shared project areas where job scripts may live, besides users' homes.",
    )
    job_output_dir: str = Field(
        "{home}/.gpuportal-jobs", description="Where job output goes, created as the user."
    )
    cores_per_gpu: int = Field(
        DEFAULT_CORES_PER_GPU, description="The per-GPU rule for multi-node jobs: cores."
    )
    mem_per_gpu_gb: int = Field(
        DEFAULT_MEM_PER_GPU_GB, description="The per-GPU rule for multi-node jobs: GB."
    )
    gpu_kinds: dict[str, tuple[int, int]] = Field(
        default={},
        description="Cores and GB of memory per GPU of a kind, where they are not "
        'cores_per_gpu and mem_per_gpu_gb, as JSON, e.g. {"h100": [28, 240], "1g.10gb": [2, 12]} '
        "(a kind as the nodes' gres.conf names it; a MIG slice's profile is one).",
    )
    default_partition: str = Field("gpu", description="Partition of the seeded profiles.")
    audit_dir: str = Field(
        "",
        description="Folder of the audit streams (audit-hub.jsonl, audit-portal.jsonl), e.g. "
        "/var/lib/gpuportal/audit; empty: no audit stream.",
    )
    job_look_seconds: float = Field(
        5.0,
        description="How often one squeue brings every job record up to date (batch jobs, "
        "sessions, Dask workers) and records new sessions in the job history; 0: never (a "
        "record then changes only when a cancel asks).",
    )
    use_look_seconds: float = Field(
        0.0,
        description="How often sacct is read for what ended jobs used, e.g. 30 (the hub sets "
        "its poll interval); 0: never.",
    )
    schedules_per_user: int = Field(
        20, ge=0, description="How many notebook job definitions on a schedule a user may keep."
    )
    schedule_min_minutes: int = Field(
        15,
        ge=1,
        description="The shortest time between two runs of a definition, in minutes (a "
        "schedule whose runs come closer is refused at its field).",
    )
    schedule_pause_after: int = Field(
        3,
        ge=1,
        description="A definition whose next run could not be queued this many times in a "
        "row is paused, with the reason on its page.",
    )
    begin_max_days: int = Field(
        366, ge=1, description="How far ahead a job's begin (sbatch --begin) may be, in days."
    )
    cluster_cache_seconds: float = Field(
        60.0, description="How long partition limits from sinfo are reused."
    )
    docs_dir: str = Field(
        "",
        description="The built docs site (make docs) served at /services/portal/manual/; "
        "empty: the checkout's docs/_build/html.",
    )
    # Where the hub reaches the portal (JUPYTERHUB_SERVICE_URL) and under which prefix
    # (JUPYTERHUB_SERVICE_PREFIX); both are set by the hub for a managed service.
    service_url: str = Field("http://127.0.0.1:8090", validation_alias="JUPYTERHUB_SERVICE_URL")
    service_prefix: str = Field("/services/portal/", validation_alias="JUPYTERHUB_SERVICE_PREFIX")
    hub_api_token: str = Field("", validation_alias="JUPYTERHUB_API_TOKEN", repr=False)
    hub_api_url: str = Field("http://127.0.0.1:8081/hub/api", validation_alias="JUPYTERHUB_API_URL")
    # The portal's certificate for the hub's API under internal TLS (the hub sets these for a
    # managed service); empty: plain HTTP.
    hub_ssl_keyfile: str = Field("", validation_alias="JUPYTERHUB_SSL_KEYFILE")
    hub_ssl_certfile: str = Field("", validation_alias="JUPYTERHUB_SSL_CERTFILE")
    hub_ssl_client_ca: str = Field("", validation_alias="JUPYTERHUB_SSL_CLIENT_CA")

    @field_validator("gpu_kinds")
    @classmethod
    def _kinds_and_figures(cls, kinds: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
        for kind, (cores, mem_gb) in kinds.items():
            if not GPU_KIND_RE.fullmatch(kind):
                raise ValueError(
                    f"{kind!r} is not a GPU kind as gres.conf names it (a100, 1g.10gb)"
                )
            if cores < 1 or mem_gb < 1:
                raise ValueError(f"{kind}: give at least 1 core and 1 GB per GPU, as [cores, GB]")
        return kinds

    def per_gpu(self, kind: str) -> tuple[int, int]:
        """Cores and GB of memory per GPU of a kind: the site's figures for it, else the rule."""
        return self.gpu_kinds.get(kind, (self.cores_per_gpu, self.mem_per_gpu_gb))

    # For the browser's OAuth round trip through the hub.
    oauth_client_id: str = Field("service-portal", validation_alias="JUPYTERHUB_CLIENT_ID")
    oauth_callback_url: str = Field(
        "/services/portal/oauth_callback", validation_alias="JUPYTERHUB_OAUTH_CALLBACK_URL"
    )
    hub_host: str = Field("", validation_alias="JUPYTERHUB_HOST")
    hub_base_url: str = Field("/", validation_alias="JUPYTERHUB_BASE_URL")

    @property
    def prefix(self) -> str:
        """The service prefix without its trailing slash ("/services/portal")."""
        return "/" + self.service_prefix.strip("/")

    @property
    def service_name(self) -> str:
        """The hub's name for this service: the last part of its prefix ("portal")."""
        return self.service_prefix.strip("/").rsplit("/", 1)[-1]

    @property
    def hub_prefix(self) -> str:
        """The hub's URL prefix ("/hub/"), under JUPYTERHUB_BASE_URL."""
        base = self.hub_base_url.strip("/")
        return f"/{base}/hub/" if base else "/hub/"


def passed_by_the_hub() -> dict[str, str]:
    """The portal's own settings (PORTAL_PROJECT_ROOTS, PORTAL_DOCS_DIR, ...) that the hub's
    environment sets, as variables for the portal service's environment: JupyterHub passes a
    service only what its `environment` names and a few of its own (PATH, LANG). The hub's
    config adds them (deploy/jupyterhub_config.py); what it sets itself wins."""
    from gpuportal_adapters.settings import HubSettings

    read = PortalSettings()
    passed = {}
    for name in sorted(read.model_fields_set):
        field = PortalSettings.model_fields[name]
        if name in HubSettings.model_fields or field.validation_alias is not None:
            continue  # the hub's own, or the hub's to set (JUPYTERHUB_*)
        value = getattr(read, name)
        shown = json.dumps(value) if isinstance(value, list | dict) else str(value)
        passed[f"PORTAL_{name.upper()}"] = shown
    return passed
