"""A user's spawn choice, checked against the profiles before anything reaches Slurm."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuportal_core.environments import SoftwareEnvironment, offered_with
from gpuportal_core.profiles import ResourceProfile, find_profile
from gpuportal_core.slurm_time import (
    RuntimeFormatError,
    describe_runtime,
    format_runtime,
    parse_runtime,
)

ALLOWED_OPTIONS = ("profile", "runtime", "environment")


class InvalidRequest(ValueError):
    """A spawn choice that is not allowed; the message tells the user what is.

    field: the option at fault ("profile", "runtime", "environment"), so that a form can show
    the message next to it; "" when it is the request as a whole.
    """

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class SpawnRequest:
    """A validated choice: a known profile and a runtime within its maximum."""

    profile: ResourceProfile
    runtime: int
    environment: SoftwareEnvironment | None = None

    def as_user_options(self) -> dict[str, str]:
        options = {"profile": self.profile.slug, "runtime": format_runtime(self.runtime)}
        if self.environment is not None:
            options["environment"] = self.environment.slug
        return options


def parse_user_options(
    options: Mapping[str, object],
    profiles: Sequence[ResourceProfile],
    environments: Sequence[SoftwareEnvironment] = (),
) -> SpawnRequest:
    """Check raw user_options (from the form or the REST API) and return the request.

    Every key and value is checked here, and only the resulting SpawnRequest is used later: raw
    options never reach the batch script.
    """
    if not isinstance(options, Mapping):
        raise InvalidRequest('user_options must be an object like {"profile": "gpu-1"}')
    unknown = sorted(str(key) for key in options if key not in ALLOWED_OPTIONS)
    if unknown:
        raise InvalidRequest(
            f"unknown option(s) {', '.join(unknown)}; allowed options: {', '.join(ALLOWED_OPTIONS)}"
        )
    if not profiles:
        raise InvalidRequest("no resource profile is open to you; ask the cluster admins")
    slugs = ", ".join(p.slug for p in profiles)

    raw_profile = options.get("profile", profiles[0].slug)
    if not isinstance(raw_profile, str):
        raise InvalidRequest(f"profile must be a string, one of: {slugs}", field="profile")
    profile = find_profile(profiles, raw_profile)
    if profile is None:
        shown = raw_profile if raw_profile.isprintable() and len(raw_profile) <= 40 else "given"
        raise InvalidRequest(f"unknown profile {shown!r}; choose one of: {slugs}", field="profile")

    environment = _environment(options.get("environment"), profile, environments)
    raw_runtime = options.get("runtime")
    if raw_runtime is None or raw_runtime == "":
        return SpawnRequest(
            profile=profile, runtime=profile.default_runtime, environment=environment
        )
    if not isinstance(raw_runtime, str):
        raise InvalidRequest(
            "runtime must be a string in the form HH:MM:SS, e.g. 08:00:00", field="runtime"
        )
    try:
        runtime = parse_runtime(raw_runtime)
    except RuntimeFormatError:
        raise InvalidRequest(
            "runtime must be in the form HH:MM:SS, e.g. 08:00:00, "
            f"at most {format_runtime(profile.max_runtime)} for {profile.slug}",
            field="runtime",
        ) from None
    if runtime < 60:
        raise InvalidRequest("runtime must be at least 00:01:00", field="runtime")
    if runtime > profile.max_runtime:
        raise InvalidRequest(
            f"runtime {raw_runtime} is over the maximum of {format_runtime(profile.max_runtime)} "
            f"({describe_runtime(profile.max_runtime)}) for profile {profile.slug}",
            field="runtime",
        )
    return SpawnRequest(profile=profile, runtime=runtime, environment=environment)


def _environment(
    raw: object, profile: ResourceProfile, environments: Sequence[SoftwareEnvironment]
) -> SoftwareEnvironment | None:
    """The chosen environment, or the profile's first one when none is named."""
    offered = offered_with(environments, profile.slug)
    if raw is None or raw == "":
        return offered[0] if offered else None
    if not offered:
        raise InvalidRequest(
            f"profile {profile.slug} offers no software environments", field="environment"
        )
    names = ", ".join(env.slug for env in offered)
    if not isinstance(raw, str):
        raise InvalidRequest(f"environment must be a string, one of: {names}", field="environment")
    chosen = next((env for env in offered if env.slug == raw), None)
    if chosen is None:
        shown = raw if raw.isprintable() and len(raw) <= 40 else "given"
        raise InvalidRequest(
            f"environment {shown!r} is not offered with {profile.slug}; choose one of: {names}",
            field="environment",
        )
    return chosen


def options_from_form_data(form: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """The spawn form's fields as user_options; unknown fields are kept so validation names them."""
    options: dict[str, str] = {}
    for key, values in form.items():
        if key == "_xsrf":  # the hub's own CSRF field, not a spawn option
            continue
        if len(values) != 1:
            raise InvalidRequest(f"form field {key!r} must be given exactly once")
        options[key] = values[0].strip()
    return options
