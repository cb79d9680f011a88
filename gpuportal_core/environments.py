"""Software environments: what a job activates before JupyterLab starts.

A venv or conda prefix (JupyterLab and this package's `session` extras installed in it), a list
of environment modules (Lmod, loaded on top of the session venv), or a container image with
JupyterLab inside, run by its engine: apptainer (a .sif file or a reference), or podman,
rootless as the user (an OCI archive an admin published, or a registry reference:
gpuportal_session.container). Admins say which profiles offer each one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpuportal_core.profiles import SLUG_RE

KINDS = ("venv", "conda", "modules", "container")
# Kinds whose own python runs JupyterLab (the others use the session venv's).
OWN_PYTHON_KINDS = frozenset({"venv", "conda", "container"})
PREFIX_RE = re.compile(r"/[A-Za-z0-9_.+/-]{0,200}")
MODULE_RE = re.compile(r"[A-Za-z0-9_.+-]{1,60}(?:/[A-Za-z0-9_.+-]{1,60}){0,3}")
IMAGE_RE = re.compile(r"(?:/|docker://|oras://|library://)[A-Za-z0-9_.+/:@-]{1,250}")
# What runs a container environment's image.
ENGINES = ("apptainer", "podman")
# podman: an OCI archive's absolute path (podman save --format oci-archive), or a registry
# reference: host[:port]/path[:tag][@sha256:digest].
PODMAN_IMAGE_RE = re.compile(
    r"/[A-Za-z0-9_.+/-]{1,240}\.tar"
    r"|[a-z0-9][a-z0-9.-]{0,100}(?::[0-9]{1,5})?/[a-z0-9._/-]{1,120}"
    r"(?::[A-Za-z0-9_.-]{1,64})?(?:@sha256:[0-9a-f]{64})?"
)


class EnvironmentSpecError(ValueError):
    """An environment definition that breaks a rule of one field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class SoftwareEnvironment:
    slug: str
    title: str
    kind: str
    prefix: str = ""
    modules: tuple[str, ...] = ()
    image: str = ""
    # Profiles that offer it; empty means every profile.
    profiles: frozenset[str] = field(default_factory=frozenset)
    description: str = ""
    engine: str = "apptainer"  # a container's: one of ENGINES

    def __post_init__(self) -> None:
        check_environment_fields(
            kind=self.kind,
            prefix=self.prefix,
            modules=self.modules,
            image=self.image,
            engine=self.engine,
        )
        if not SLUG_RE.fullmatch(self.slug):
            raise EnvironmentSpecError(
                "slug", f"{self.slug!r}: use 1-40 lowercase letters, digits and inner dashes"
            )
        if not self.title.strip() or "\n" in self.title:
            raise EnvironmentSpecError("title", "must be one non-empty line")

    def offered_with(self, profile_slug: str) -> bool:
        return not self.profiles or profile_slug in self.profiles

    def summary(self) -> str:
        if self.kind == "modules":
            return "modules: " + " ".join(self.modules)
        if self.kind == "container":
            return f"container {self.image} ({self.engine})"
        return f"{self.kind} {self.prefix}"


def check_environment_fields(
    *, kind: str, prefix: str, modules: Sequence[str], image: str, engine: str = "apptainer"
) -> None:
    """The rule of each kind: what it needs, and the alphabet of each value (they reach bash)."""
    if kind not in KINDS:
        raise EnvironmentSpecError("kind", f"must be one of {', '.join(KINDS)}, not {kind!r}")
    if kind in ("venv", "conda") and not PREFIX_RE.fullmatch(prefix):
        raise EnvironmentSpecError(
            "prefix", "must be an absolute path of letters, digits and _ . + / -, e.g. /opt/envs/x"
        )
    if kind == "modules":
        if not modules:
            raise EnvironmentSpecError("modules", "must name at least one module, e.g. cuda/12.4")
        for module in modules:
            if not MODULE_RE.fullmatch(module):
                raise EnvironmentSpecError(
                    "modules", f"{module!r}: use letters, digits and _ . + - with / between parts"
                )
    if kind != "container":
        return
    if engine not in ENGINES:
        raise EnvironmentSpecError("engine", f"must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine == "apptainer" and not IMAGE_RE.fullmatch(image):
        raise EnvironmentSpecError(
            "image", "must be an absolute .sif path or a docker://, oras://, library:// reference"
        )
    if engine == "podman" and not PODMAN_IMAGE_RE.fullmatch(image):
        raise EnvironmentSpecError(
            "image",
            "must be an OCI archive's absolute path (/srv/images/session.tar, made by podman "
            "save --format oci-archive) or a registry reference such as "
            "registry.example.org/team/session:1",
        )


def environment_from_record(record: Mapping[str, Any]) -> SoftwareEnvironment:
    """An environment from the portal's API answer."""
    try:
        return SoftwareEnvironment(
            slug=str(record["slug"]),
            title=str(record["title"]),
            kind=str(record["kind"]),
            prefix=str(record.get("prefix") or ""),
            modules=tuple(str(m) for m in record.get("modules") or ()),
            image=str(record.get("image") or ""),
            profiles=frozenset(str(p) for p in record.get("profiles") or ()),
            description=str(record.get("description") or ""),
            engine=str(record.get("engine") or "apptainer"),
        )
    except (KeyError, TypeError) as error:
        raise EnvironmentSpecError("record", f"{record.get('slug', '?')!r} lacks {error}") from None


def offered_with(
    environments: Iterable[SoftwareEnvironment], profile_slug: str
) -> list[SoftwareEnvironment]:
    return [env for env in environments if env.offered_with(profile_slug)]
