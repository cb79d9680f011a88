"""REST API for maintenance windows (admins): list, make, cancel. Slurm keeps them
(gpuportal_portal.maintenance_service)."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, HTTPException, status

from gpuportal_portal import maintenance_service
from gpuportal_portal.api_errors import declared
from gpuportal_portal.deps import ApiAdmin, SessionDep, SlurmDep
from gpuportal_portal.schemas import MaintenanceCreate, MaintenancePublic

router = APIRouter(prefix="/api", tags=["maintenance"], responses=declared(401, 403, 503))


@router.get("/maintenance", response_model=list[MaintenancePublic])
async def list_maintenance(slurm: SlurmDep, _admin: ApiAdmin) -> list[MaintenancePublic]:
    """Every maintenance window not over yet (Slurm's MAINT reservations), the next first."""
    return await maintenance_service.list_windows(slurm, datetime.now())


@router.post(
    "/maintenance",
    response_model=MaintenancePublic,
    status_code=status.HTTP_201_CREATED,
)
async def create_maintenance(
    data: MaintenanceCreate, session: SessionDep, slurm: SlurmDep, admin: ApiAdmin
) -> MaintenancePublic:
    """Make a maintenance window (a Slurm reservation, MAINT, IGNORE_JOBS, for root): no job
    starts whose time limit runs into it; with `notice`, everyone reads of it until it ends."""
    return await maintenance_service.schedule(
        session, slurm, data=data, actor=admin.name, now=datetime.now()
    )


@router.delete(
    "/maintenance/{name}", status_code=status.HTTP_204_NO_CONTENT, responses=declared(404, 409)
)
async def cancel_maintenance(
    name: str, session: SessionDep, slurm: SlurmDep, admin: ApiAdmin
) -> None:
    """Cancel a maintenance window (scontrol delete reservation), and the notice made with it."""
    try:
        await maintenance_service.cancel(
            session, slurm, name=name, actor=admin.name, now=datetime.now()
        )
    except maintenance_service.NoSuchWindow:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND, f"No maintenance window {name} ahead or under way."
        ) from None
    except maintenance_service.CancelRefused as refused:
        raise HTTPException(status.HTTP_409_CONFLICT, str(refused)) from None
