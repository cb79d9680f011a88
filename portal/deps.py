"""FastAPI dependencies: the database session, the caller, and the admin check."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Annotated, Literal

from fastapi import Depends, HTTPException, Request, Security, status
from fastapi.security import APIKeyHeader
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from gpuportal_adapters.slurm import SlurmClient
from gpuportal_core.partitions import Partition
from gpuportal_portal.cluster import ClusterUnavailable, PartitionCatalog
from gpuportal_portal.identity import COOKIE_NAME, Caller, HubIdentity, MissingScope
from gpuportal_portal.job_output import OutputFolders
from gpuportal_portal.job_queue import QueueView
from gpuportal_portal.job_watcher import JobWatcher
from gpuportal_portal.settings import PortalSettings


class LoginRequired(Exception):
    """A page needs a logged-in user: send the browser through the hub's OAuth."""

    def __init__(self, next_url: str) -> None:
        super().__init__(next_url)
        self.next_url = next_url


class PageForbidden(Exception):
    """A page this user may not see."""

    def __init__(self, caller: Caller) -> None:
        super().__init__(caller.name)
        self.caller = caller  # the page still shows them the navigation


def get_session(request: Request) -> Iterator[Session]:
    yield from request.app.state.database.session()


def get_identity(request: Request) -> HubIdentity:
    identity: HubIdentity = request.app.state.identity
    return identity


def get_slurm(request: Request) -> SlurmClient:
    slurm: SlurmClient = request.app.state.slurm
    return slurm


def get_output_folders(request: Request) -> OutputFolders:
    folders: OutputFolders = request.app.state.output_folders
    return folders


def get_queue(request: Request) -> QueueView:
    queue: QueueView = request.app.state.queue
    return queue


def get_watcher(request: Request) -> JobWatcher:
    watcher: JobWatcher = request.app.state.watcher
    return watcher


def get_settings(request: Request) -> PortalSettings:
    settings: PortalSettings = request.app.state.settings
    return settings


def get_catalog(request: Request) -> PartitionCatalog:
    catalog: PartitionCatalog = request.app.state.catalog
    return catalog


# Declared as a security scheme so that the API docs (/services/portal/docs) offer an
# "Authorize" button: paste `token <your hub API token>` there.
authorization_header = APIKeyHeader(
    name="Authorization",
    scheme_name="hub token",
    description="A JupyterHub API token: `token <token>` (from the hub's Token page).",
    auto_error=False,
)


def _bearer(header: str) -> str:
    scheme, _, token = header.partition(" ")
    if scheme.lower() not in ("token", "bearer") or not token.strip():
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "The Authorization header must be 'token <hub API token>' (or 'Bearer <token>').",
            headers={"WWW-Authenticate": "token"},
        )
    return token.strip()


async def get_caller(
    request: Request,
    identity: Annotated[HubIdentity, Depends(get_identity)],
    header: Annotated[str | None, Security(authorization_header)],
) -> Caller | None:
    """Who calls, from the Authorization header if there is one, else from the portal's cookie.

    A header that is there but is not a token is refused, never passed over for the cookie:
    the CSRF check below relies on knowing which of the two proved the caller.
    """
    via: Literal["header", "cookie"]
    header = request.headers.get("authorization", header)  # "" too, which the scheme drops
    if header is not None:
        token, via = _bearer(header), "header"
    else:
        token, via = request.cookies.get(COOKIE_NAME, ""), "cookie"
    if not token:
        return None
    try:
        caller = await identity.caller_for_token(token)
    except MissingScope as error:
        raise HTTPException(status.HTTP_403_FORBIDDEN, str(error)) from None
    return replace(caller, via=via) if caller is not None else None


SessionDep = Annotated[Session, Depends(get_session)]
IdentityDep = Annotated[HubIdentity, Depends(get_identity)]
CatalogDep = Annotated[PartitionCatalog, Depends(get_catalog)]


async def get_partitions(catalog: CatalogDep) -> dict[str, Partition] | ClusterUnavailable:
    """The cluster's partitions, read on the event loop (sinfo, cached) so that the route that
    checks a profile against them can be a plain function in the thread pool; if Slurm could
    not say, why (raised where a profile is checked, as the route's answer)."""
    try:
        return await catalog.partitions()
    except ClusterUnavailable as error:
        return error


async def get_form(request: Request) -> FormData:
    """A page's posted form, read on the event loop for a route in the thread pool."""
    return await request.form()


PartitionsDep = Annotated[dict[str, Partition] | ClusterUnavailable, Depends(get_partitions)]
FormDep = Annotated[FormData, Depends(get_form)]
SlurmDep = Annotated[SlurmClient, Depends(get_slurm)]
WatcherDep = Annotated[JobWatcher, Depends(get_watcher)]
QueueDep = Annotated[QueueView, Depends(get_queue)]
OutputFoldersDep = Annotated[OutputFolders, Depends(get_output_folders)]
SettingsDep = Annotated[PortalSettings, Depends(get_settings)]
MaybeCaller = Annotated[Caller | None, Depends(get_caller)]


def _known(caller: Caller | None) -> Caller:
    if caller is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "Log in: send a hub API token as 'Authorization: token <token>'.",
            headers={"WWW-Authenticate": "token"},
        )
    return caller


def api_caller(caller: MaybeCaller) -> Caller:
    known = _known(caller)
    if known.kind == "service":
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, "A service's token may read /metrics here, nothing else."
        )
    return known


def metrics_reader(caller: MaybeCaller) -> Caller:
    """An admin, or a token with the hub's read:metrics scope (Prometheus' service)."""
    known = _known(caller)
    if not (known.reads_metrics or (known.kind == "user" and known.is_admin)):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, "Reading the metrics needs the read:metrics scope."
        )
    return known


def api_writer(
    request: Request,
    caller: Annotated[Caller, Depends(api_caller)],
    identity: Annotated[HubIdentity, Depends(get_identity)],
) -> Caller:
    """A caller allowed to change things. A browser (proved by its cookie) must also send the
    page's X-CSRF-Token, so another site cannot make its browser post here."""
    if caller.via == "cookie":
        expected = identity.csrf_token(request.cookies.get(COOKIE_NAME, ""))
        if request.headers.get("x-csrf-token", "") != expected:
            raise HTTPException(
                status.HTTP_403_FORBIDDEN,
                "Send a hub token in the Authorization header (or use the portal's pages).",
            )
    return caller


def api_admin(caller: Annotated[Caller, Depends(api_writer)]) -> Caller:
    if not caller.is_admin:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "Only admins may do this.")
    return caller


def page_caller(request: Request, caller: MaybeCaller) -> Caller:
    if caller is None or caller.kind != "user":
        # Back to the same page after the hub's login, filters and all (the query was lost:
        # an audit link with ?user=alice opened the whole log).
        query = request.url.query
        raise LoginRequired(request.url.path + (f"?{query}" if query else ""))
    return caller


def page_admin(caller: Annotated[Caller, Depends(page_caller)]) -> Caller:
    if not caller.is_admin:
        raise PageForbidden(caller)
    return caller


ApiCaller = Annotated[Caller, Depends(api_caller)]
ApiWriter = Annotated[Caller, Depends(api_writer)]
ApiAdmin = Annotated[Caller, Depends(api_admin)]
MetricsReader = Annotated[Caller, Depends(metrics_reader)]
PageCaller = Annotated[Caller, Depends(page_caller)]
PageAdmin = Annotated[Caller, Depends(page_admin)]
