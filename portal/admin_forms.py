"""The admin pages' form flow, one for every versioned thing an admin edits (profiles,
software environments): the CSRF check, the form read into API values, the save through the
same service the REST API uses, and what the page says when the save is refused: each field's
error (422), a slug already taken, or someone else's save in between (409, with what is stored
now and what this admin typed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from fastapi import Request, status
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from starlette.datastructures import FormData

from gpuportal_portal import crud, pages
from gpuportal_portal.cluster import ClusterUnavailable
from gpuportal_portal.identity import Caller, HubIdentity
from gpuportal_portal.models import Environment, Profile
from gpuportal_portal.profile_service import RuleViolation

Stored = TypeVar("Stored", Profile, Environment)
# Refusals shown next to the fields they concern.
FIELD_ERRORS = (ValidationError, RuleViolation, ClusterUnavailable)


@dataclass(frozen=True)
class AdminForm(Generic[Stored]):
    kind: str  # "profile": the words of the pages and the saved note
    template: str
    blank: Callable[[], dict[str, Any]]  # the form of a new one
    stored: Callable[[Stored], dict[str, Any]]  # the form of one as stored
    read: Callable[[FormData, bool], dict[str, Any]]  # the form's fields (creating?) as API values
    # More for the template, e.g. the profiles an environment may name.
    context: Callable[[], dict[str, Any]] = dict

    def page(
        self,
        request: Request,
        admin: Caller,
        *,
        creating: bool,
        form: dict[str, Any],
        errors: dict[str, str] | None = None,
        conflict: dict[str, Any] | None = None,
        status_code: int = status.HTTP_200_OK,
        extra: dict[str, Any] | None = None,
    ) -> HTMLResponse:
        return pages.render(
            request,
            self.template,
            {
                "caller": admin,
                "creating": creating,
                "form": form,
                "errors": errors or {},
                "conflict": conflict,
                **self.context(),
                **(extra or {}),
            },
            status_code=status_code,
        )

    def create(
        self,
        request: Request,
        form: FormData,
        identity: HubIdentity,
        admin: Caller,
        save: Callable[[dict[str, Any]], str],
        extra: dict[str, Any] | None = None,
    ) -> Response:
        """A new one from the form: `save` checks the values, stores them and gives the slug."""
        if not pages.csrf_ok(request, form, identity):
            return pages.forbidden_form(request)
        values = self.read(form, True)
        try:
            slug = save(values)
        except FIELD_ERRORS as error:
            errors = pages.field_errors(error)
        except crud.SlugTaken:
            errors = {"slug": f"this slug is taken by another {self.kind}; choose another"}
        else:
            return pages.after_save(request, self.kind, slug)
        return self.page(
            request,
            admin,
            creating=True,
            form={**self.blank(), **values},
            errors=errors,
            status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
            extra=extra,
        )

    def edit(
        self,
        request: Request,
        form: FormData,
        identity: HubIdentity,
        admin: Caller,
        *,
        slug: str,
        current: Stored | None,
        save: Callable[[Stored, dict[str, Any]], object],
        extra: dict[str, Any] | None = None,
    ) -> Response:
        """Changes to a stored one, saved against the version the form was opened with."""
        if not pages.csrf_ok(request, form, identity):
            return pages.forbidden_form(request)
        if current is None:
            return pages.not_found(request, self.kind, slug)
        values = self.read(form, False)
        try:
            save(current, values)
        except FIELD_ERRORS as error:
            errors = pages.field_errors(error)
        except crud.VersionConflict as stale:
            # What is stored now, with the version to save against, and what this admin typed.
            now = stale.current if isinstance(stale.current, type(current)) else current
            return self.page(
                request,
                admin,
                creating=False,
                form=self.stored(now),
                conflict={"by": now.updated_by, "yours": values},
                status_code=status.HTTP_409_CONFLICT,
                extra=extra,
            )
        else:
            return pages.after_save(request, self.kind, slug)
        return self.page(
            request,
            admin,
            creating=False,
            form={**self.stored(current), **values, "slug": slug},
            errors=errors,
            status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
            extra=extra,
        )
