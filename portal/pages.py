"""What every portal page shares: rendering with the CSRF token, form errors, redirects."""

from __future__ import annotations

from typing import Any

from fastapi import Request, status
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError
from starlette.datastructures import FormData

from core.profiles import EXTRA_SBATCH_OPTIONS
from portal.cluster import ClusterUnavailable
from portal.identity import COOKIE_NAME, HubIdentity
from portal.profile_service import RuleViolation

# Which navigation entry each page lights up (templates/shared/nav_items.html).
NAV_ENTRY = {
    "jobs.html": "jobs",
    "admin.html": "profiles",
    "profile_form.html": "profiles",
    "environment_form.html": "profiles",
    "docs.html": "api",
    "audit.html": "profiles",
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
        errors.setdefault(name, item["msg"].removeprefix("Value error, "))
    return errors


def after_save(request: Request) -> RedirectResponse:
    # Post/redirect/get: a reload of the list never re-submits the form.
    prefix: str = request.app.state.settings.prefix
    return RedirectResponse(f"{prefix}/admin", status.HTTP_303_SEE_OTHER)


def not_found(request: Request, what: str, slug: str) -> HTMLResponse:
    return render(
        request,
        "message.html",
        {"title": f"No such {what}", "message": f"There is no {what} {slug!r}."},
        status_code=status.HTTP_404_NOT_FOUND,
    )
