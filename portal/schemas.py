"""What the API takes and gives: each field checked where it comes in, named in errors.

The profile schemas derive from the one spec (gpuportal_core.profiles.ProfileSpec); rules that
need more than one field, or the cluster, live in gpuportal_portal.profile_rules.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, create_model

from gpuportal_core.profile_fields import Description, Groups, Slug, Title, one_line
from gpuportal_core.profiles import ProfileSpec


def _with_zone(moment: datetime) -> datetime:
    # SQLite hands back timestamps without their zone; every one the portal stores is UTC.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


# A timestamp as the API gives it: always with its time zone (RFC 3339 date-time).
UtcDateTime = Annotated[datetime, AfterValidator(_with_zone)]


class ProfileCreate(ProfileSpec):
    """A new profile. Runtimes are HH:MM:SS; cores and memory are per GPU. Without a
    partition it gets the deployment's (PORTAL_DEFAULT_PARTITION)."""

    slug: Slug


def _partial(spec: type[BaseModel]) -> type[BaseModel]:
    """The spec with every field optional (None or left out: unchanged), and `version`."""
    fields: dict[str, Any] = {}
    for name, field in spec.model_fields.items():
        kind: Any = field.annotation
        if field.metadata:
            kind = Annotated[(kind, *field.metadata)]
        words = Field(None, title=field.title, description=field.description)
        fields[name] = (kind | None, words)
    return create_model(
        "ProfileUpdate",
        __config__=ConfigDict(extra="forbid"),
        __doc__="Changes to a profile; `version` is the one the editor saw (a newer one: 409).",
        version=(int, ...),
        **fields,
    )


if TYPE_CHECKING:

    class ProfileUpdate(BaseModel):
        version: int

else:
    ProfileUpdate = _partial(ProfileSpec)


class ProfileOrder(BaseModel):
    """Every profile's slug, in the order the spawn page should show them."""

    model_config = ConfigDict(extra="forbid")

    slugs: list[Slug]


class ProfilePublic(ProfileSpec):
    slug: str
    position: int
    version: int
    updated_at: UtcDateTime
    updated_by: str


class AuditPublic(BaseModel):
    at: UtcDateTime
    actor: str
    action: str
    kind: str
    subject: str
    changes: dict[str, list[object]]


Modules = Annotated[list[str], Field(max_length=20)]
ProfileSlugs = Annotated[list[Slug], Field(max_length=100)]


class EnvironmentCreate(BaseModel):
    """A software environment: a venv or conda prefix, modules to load, or a container image."""

    model_config = ConfigDict(extra="forbid")

    slug: Slug
    title: Title
    description: Description = ""
    kind: Literal["venv", "conda", "modules", "container"]
    # A container's engine: apptainer (a .sif or a reference), podman (an OCI archive's path
    # or a registry reference), rootless as the user in the job.
    engine: Literal["apptainer", "podman"] = "apptainer"
    prefix: str = Field("", max_length=250)
    modules: Modules = Field(default_factory=list)
    image: str = Field("", max_length=300)
    profiles: ProfileSlugs = Field(default_factory=list)
    enabled: bool = True


class EnvironmentUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int
    title: Title | None = None
    description: Description | None = None
    kind: Literal["venv", "conda", "modules", "container"] | None = None
    engine: Literal["apptainer", "podman"] | None = None
    prefix: str | None = Field(None, max_length=250)
    modules: Modules | None = None
    image: str | None = Field(None, max_length=300)
    profiles: ProfileSlugs | None = None
    enabled: bool | None = None


class EnvironmentPublic(BaseModel):
    slug: str
    title: str
    description: str
    kind: str
    engine: str
    prefix: str
    modules: list[str]
    image: str
    profiles: list[str]
    enabled: bool
    position: int
    version: int
    updated_at: UtcDateTime
    updated_by: str


NoticeText = Annotated[str, Field(max_length=500), AfterValidator(one_line)]


class NoticeCreate(BaseModel):
    """A notice for every page from `starts_at` (default: now) until `ends_at`; to the members
    of `groups`, or to everyone when there are none."""

    model_config = ConfigDict(extra="forbid")

    text: NoticeText
    level: Literal["info", "warning", "danger"] = "info"
    starts_at: datetime | None = None
    ends_at: datetime
    groups: Groups = Field(default_factory=tuple)


class NoticePublic(BaseModel):
    id: int
    text: str
    level: str
    starts_at: datetime
    ends_at: datetime
    groups: list[str]
    created_by: str


class MaintenanceCreate(BaseModel):
    """A maintenance window: from `starts_at` (default: now) until `ends_at`, the cluster's local
    time, on `nodes` (ALL, or a Slurm list such as gpu[01-02]); with `notice`, a notice to
    everyone until it ends."""

    model_config = ConfigDict(extra="forbid")

    starts_at: datetime | None = None
    ends_at: datetime
    nodes: str = Field("ALL", max_length=500)
    notice: bool = True


class MaintenancePublic(BaseModel):
    name: str
    starts_at: datetime
    ends_at: datetime
    nodes: list[str]
    whole_cluster: bool
    running_now: bool
