"""The spawn page's options form: one card per profile with its capacity, the environments the
chosen profile offers, and the time limit; a refused form comes back as it was sent."""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import jinja2

from gpuportal_core.profiles import ResourceProfile
from gpuportal_core.resources import TEMPLATES_DIR
from gpuportal_core.slurm_time import format_runtime, parse_runtime
from gpuportal_spawner.capacity import CAPACITY_PATH

_FORMS = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR / "hub")), autoescape=True
)


@dataclass(frozen=True)
class ReturnedForm:
    """A form the checks refused: what was sent, the field at fault and why."""

    sent: dict[str, str]
    field: str
    error: str
    at: float = dataclasses.field(default_factory=time.monotonic)


# A refused form waits for the render that follows it in the same request for at most this long.
RETURNED_FOR_S = 10.0


class ReturnedForms:
    """The user's refused forms, each kept from the check that refused it (options_from_form) to
    the render of the page that follows it in the same request, oldest first.

    Kept by the user's default spawner: JupyterHub draws a refused form with that spawner
    whichever server was asked for (its SpawnHandler's POST calls
    `user.spawner.get_options_form()`; its GET with query options, the server's own), so no
    other spawner is common to the check and the render. Each check is followed by exactly one
    render, in the order the checks ended, so two named sessions' forms refused at once each
    get their own (a single slot per user gave them each other's).
    """

    def __init__(self) -> None:
        self._waiting: deque[ReturnedForm] = deque()

    def put(self, form: ReturnedForm) -> None:
        self._waiting.append(form)

    def take(self) -> ReturnedForm | None:
        now = time.monotonic()
        while self._waiting:
            form = self._waiting.popleft()
            if now - form.at < RETURNED_FOR_S:  # never a form left from a request long gone
                return form
        return None


async def render_form(spawner: Any) -> str:
    """The options form of a GpuProfilesSpawner: its profiles, capacity and environments."""
    # First, before any wait: the renders take the refused forms in the order of their checks.
    returned = spawner.user.spawner.returned_forms.take()
    offer = await spawner.offer()
    profiles = offer.profiles
    if not profiles:
        return _FORMS.get_template("spawn_form.html").render(profiles=[], selected="", runtime="")
    previous = returned.sent if returned else (spawner.user_options or {})
    selected = previous.get("profile") if isinstance(previous, dict) else None
    if selected not in {p.slug for p in profiles}:
        selected = profiles[0].slug
    chosen = next(p for p in profiles if p.slug == selected)
    rows = [
        {
            "slug": p.slug,
            "title": p.title,
            "summary": p.summary(),
            "description": p.description,
            "default_runtime_hms": format_runtime(p.default_runtime),
            "max_runtime_hms": format_runtime(p.max_runtime),
        }
        for p in profiles
    ]
    capacity = await spawner.capacity(profiles)
    environments = [
        {
            "slug": env.slug,
            "title": env.title,
            "summary": env.summary(),
            "description": env.description,
            "profiles": " ".join(sorted(env.profiles)),
            "offered": env.offered_with(chosen.slug),
        }
        for env in offer.environments
    ]
    chosen_env = previous.get("environment") if isinstance(previous, dict) else None
    offered = [env["slug"] for env in environments if env["offered"]]
    if chosen_env not in offered:
        chosen_env = offered[0] if offered else ""
    return _FORMS.get_template("spawn_form.html").render(
        profiles=rows,
        selected=selected,
        runtime=previous.get("runtime", "")
        if returned
        else _last_runtime(previous if spawner._runtime_chosen else {}, chosen),
        error_field=returned.field if returned else "",
        error=returned.error if returned else "",
        environments=environments,
        selected_environment=chosen_env,
        capacity=capacity,
        capacity_url=spawner.hub.base_url + CAPACITY_PATH,
    )


def _last_runtime(previous: Any, chosen: ResourceProfile) -> str:
    """The time limit of the user's last spawn of this profile, else the profile's default."""
    if isinstance(previous, dict) and previous.get("profile") == chosen.slug:
        try:
            seconds = parse_runtime(str(previous.get("runtime") or ""))
        except ValueError:
            seconds = 0
        if 0 < seconds <= chosen.max_runtime:
            return format_runtime(seconds)
    return format_runtime(chosen.default_runtime)
