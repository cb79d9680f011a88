"""The spawn page's options form: one card per profile with its capacity, the environments the
chosen profile offers, and the time limit; a refused form comes back as it was sent."""

from __future__ import annotations

from contextvars import ContextVar
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


# Set by options_from_form and read by the render of the refused form, in the same request (one
# asyncio task, whose context this variable's value lives in): JupyterHub draws the refused form
# with the user's default server's spawner, whichever server was asked for (its SpawnHandler
# calls `user.spawner.get_options_form()`), so no spawner can hold it, and a dict keyed by user
# gave two named sessions' requests each other's messages.
_returned: ContextVar[ReturnedForm | None] = ContextVar("returned_form", default=None)


def return_form(form: ReturnedForm) -> None:
    """Keep a refused form for this request's render of the form."""
    _returned.set(form)


async def render_form(spawner: Any) -> str:
    """The options form of a GpuProfilesSpawner: its profiles, capacity and environments."""
    offer = await spawner.offer()
    profiles = offer.profiles
    if not profiles:
        return _FORMS.get_template("spawn_form.html").render(profiles=[], selected="", runtime="")
    returned = _returned.get()
    _returned.set(None)
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
