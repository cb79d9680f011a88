"""What the API takes and gives: each field checked where it comes in, named in errors.

A profile's schemas derive from one spec (gpuportal_core.profiles.ProfileSpec), an
environment's from EnvironmentSpec: Create adds the slug, Update makes each field optional,
Public adds what the portal keeps. Rules that need more than one field, or the cluster, live in
gpuportal_portal.profile_rules and gpuportal_core.environments.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

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


class ProfileChanges(BaseModel):
    """Changes to a profile: the fields given change, the others stay. `version` is the one the
    editor saw (a newer one: 409)."""

    model_config = ConfigDict(extra="forbid")

    version: int


Changes = TypeVar("Changes", bound=BaseModel)


def _partial(spec: type[BaseModel], base: type[Changes], name: str) -> type[Changes]:
    """The spec's fields, each optional (None or left out: unchanged), on `base`, which
    carries the version the editor saw."""
    fields: dict[str, Any] = {}
    for field_name, field in spec.model_fields.items():
        kind: Any = field.annotation
        if field.metadata:
            kind = Annotated[(kind, *field.metadata)]
        words = Field(None, title=field.title, description=field.description)
        fields[field_name] = (kind | None, words)
    return create_model(
        name,
        __base__=base,
        __doc__=base.__doc__,
        **fields,
    )


# Pydantic has no "every field optional" model that type checkers follow (pydantic#1673,
# #3120: closed, "make it at run time"). Each Update is made from its spec, so a new field needs
# nothing here; mypy sees its base, which is all the portal reads of it (version, model_dump).
if TYPE_CHECKING:
    ProfileUpdate = ProfileChanges
else:
    ProfileUpdate = _partial(ProfileSpec, ProfileChanges, "ProfileUpdate")


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


class EnvironmentSpec(BaseModel):
    """A software environment: a venv or conda prefix, modules to load, or a container image.
    The one list of its fields: Create, Update and Public derive from it."""

    model_config = ConfigDict(extra="forbid")

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


class EnvironmentCreate(EnvironmentSpec):
    """A new software environment: a venv or conda prefix, modules to load, or a container
    image."""

    slug: Slug


class EnvironmentChanges(BaseModel):
    """Changes to a software environment: the fields given change, the others stay. `version`
    is the one the editor saw (a newer one: 409)."""

    model_config = ConfigDict(extra="forbid")

    version: int


if TYPE_CHECKING:
    EnvironmentUpdate = EnvironmentChanges
else:
    EnvironmentUpdate = _partial(EnvironmentSpec, EnvironmentChanges, "EnvironmentUpdate")


class EnvironmentPublic(EnvironmentSpec):
    slug: str
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
