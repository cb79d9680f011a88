"""What every portal page shares: rendering with the CSRF token, form errors, redirects."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from fastapi import Request, status
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError
from starlette.datastructures import FormData

from gpuportal_core.profiles import EXTRA_SBATCH_OPTIONS
from gpuportal_portal.cluster import ClusterUnavailable
from gpuportal_portal.identity import COOKIE_NAME, HubIdentity
from gpuportal_portal.profile_service import RuleViolation

# Which navigation entry each page lights up (templates/shared/nav_items.html).
NAV_ENTRY = {
    "jobs.html": "jobs",
    "admin.html": "profiles",
    "profile_form.html": "profiles",
    "environment_form.html": "profiles",
    "docs.html": "api",
    "audit.html": "profiles",
    "maintenance.html": "profiles",
}


def render(
    request: Request, template: str, context: dict[str, Any], *, status_code: int = 200
) -> HTMLResponse:
    templates: Jinja2Templates = request.app.state.templates
    identity: HubIdentity = request.app.state.identity
    base = {
        "active": NAV_ENTRY.get(template, ""),
        "csrf": identity.csrf_token(request.cookies.get(COOKIE_NAME, "")),
        "sbatch_option_names": list(EXTRA_SBATCH_OPTIONS),
    }
    return templates.TemplateResponse(
        request, template, {**base, **context}, status_code=status_code
    )


def csrf_ok(request: Request, form: FormData, identity: HubIdentity) -> bool:
    expected = identity.csrf_token(request.cookies.get(COOKIE_NAME, ""))
    return str(form.get("csrf", "")) == expected


def forbidden_form(request: Request) -> HTMLResponse:
    return render(
        request,
        "message.html",
        {"title": "Form expired", "message": "This form is stale. Open the page again and retry."},
        status_code=status.HTTP_403_FORBIDDEN,
    )


SaveError = ValidationError | RuleViolation | ClusterUnavailable


def field_errors(error: SaveError) -> dict[str, str]:
    """What to show next to each field of the form."""
    if isinstance(error, RuleViolation):
        return {p.field: p.message for p in error.problems}
    if isinstance(error, ClusterUnavailable):
        return {"form": f"Cannot check the profile against the cluster now ({error}); retry."}
    errors: dict[str, str] = {}
    for item in error.errors():
        loc = [str(part) for part in item["loc"]]
        name = loc[0] if loc else "form"
        errors.setdefault(name, _in_words(item))
    return errors


def _in_words(item: Any) -> str:
    """A pydantic refusal in the forms' own voice ("must be at most 64"), as the rules that
    know the cluster say theirs ("must be at most 4: the nodes of partition gpu ...")."""
    limits = item.get("ctx") or {}
    words = {
        "less_than_equal": f"must be at most {limits.get('le')}",
        "greater_than_equal": f"must be at least {limits.get('ge')}",
        "int_parsing": "must be a whole number",
        "int_from_float": "must be a whole number",
        "missing": "is required",
        "string_too_long": f"must be at most {limits.get('max_length')} characters",
        "literal_error": f"must be one of {limits.get('expected')}",
    }
    return words.get(item["type"]) or str(item["msg"]).removeprefix("Value error, ")


def after_save(request: Request, what: str, slug: str, page: str = "/admin") -> RedirectResponse:
    """Back to the admin page (or another of the portal's pages), which then says what was
    saved (saved_note).

    Post/redirect/get: a reload of the list never re-submits the form."""
    prefix: str = request.app.state.settings.prefix
    query = urlencode({"saved": f"{what}:{slug}"})
    return RedirectResponse(f"{prefix}{page}?{query}", status.HTTP_303_SEE_OTHER)


SAVED_RE = re.compile(r"(profile|environment|order|notice|removed|deleted):([a-z0-9-]{1,40})")


def saved_note(request: Request) -> str:
    """The admin page's "Saved" line after a save; only our own shape of it, never free text
    from the address bar."""
    match = SAVED_RE.fullmatch(request.query_params.get("saved", ""))
    if match is None:
        return ""
    what, slug = match.groups()
    if what == "order":
        return "Saved the order of the profiles; spawn pages show it now."
    if what == "notice":
        return f"Posted notice {slug}; pages show it from its start (within a minute)."
    if what == "removed":
        return f"Removed notice {slug}; pages drop it within a minute."
    if what == "deleted":
        return f"Deleted profile {slug}; spawn pages drop it now, its sessions run on."
    return f"Saved {what} {slug}; users see it on their next spawn page."


def not_found(request: Request, what: str, slug: str) -> HTMLResponse:
    return render(
        request,
        "message.html",
        {"title": f"No such {what}", "message": f"There is no {what} {slug!r}."},
        status_code=status.HTTP_404_NOT_FOUND,
    )
