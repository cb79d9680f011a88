"""The profile chooser: a wrapspawner ProfilesSpawner whose profiles are GPU resource profiles."""

from __future__ import annotations

from typing import Any

import jinja2
from traitlets import Callable, Dict, Integer, List, Type, Unicode, Union, default
from wrapspawner import ProfilesSpawner

from spawner.core.profiles import (
    ProfileError,
    ResourceProfile,
    default_profile_config,
    load_profiles,
)
from spawner.core.request import (
    InvalidRequest,
    SpawnRequest,
    options_from_form_data,
    parse_user_options,
)
from spawner.core.runtime import format_runtime
from spawner.core.sbatch import TEMPLATES_DIR
from spawner.errors import spawn_error
from spawner.slurm_spawner import GpuSlurmSpawner

_FORMS = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR / "hub")), autoescape=True
)


class GpuProfilesSpawner(ProfilesSpawner):
    """Offers the resource profiles on the spawn page; each profile names the spawner it runs."""

    resource_profiles = List(
        Dict(),
        default_value=default_profile_config(),
        config=True,
        help="Profiles offered, e.g. [{'slug': 'gpu-2', 'title': '2 GPUs', 'gpus': 2, "
        "'max_runtime': '24:00:00'}]. Cores and memory follow the GPU count.",
    )
    cores_per_gpu = Integer(8, config=True, help="CPU cores per GPU, e.g. 8.")
    mem_per_gpu_gb = Integer(48, config=True, help="Memory in GB per GPU, e.g. 48.")
    partition = Unicode("gpu", config=True, help="Default Slurm partition, e.g. gpu.")
    max_gpus_per_node = Integer(4, config=True, help="GPUs on one node of the partition, e.g. 4.")
    profile_spawner_class = Type(
        GpuSlurmSpawner,
        klass="jupyterhub.spawner.Spawner",
        config=True,
        help="Spawner class each profile runs with, e.g. spawner.slurm_spawner.GpuSlurmSpawner.",
    )
    options_form = Union([Unicode(), Callable()])

    _request: SpawnRequest | None = None
    _previous_job_id = ""
    _resume_job_id = ""

    def resource_profile_list(self) -> list[ResourceProfile]:
        try:
            return load_profiles(
                self.resource_profiles,
                cores_per_gpu=self.cores_per_gpu,
                mem_per_gpu_gb=self.mem_per_gpu_gb,
                partition=self.partition,
                max_gpus_per_node=self.max_gpus_per_node,
            )
        except ProfileError as error:
            self.log.error("Resource profiles are misconfigured: %s", error)
            raise spawn_error(
                "The resource profiles are misconfigured; please tell the cluster admins.",
                reason="profiles_config",
                status_code=500,
            ) from None

    @default("profiles")
    def _profiles_default(self) -> list[tuple[str, str, type, dict[str, Any]]]:
        # wrapspawner's view of the same list: (title, key, spawner class, child config).
        return [
            (p.title, p.slug, self.profile_spawner_class, {}) for p in self.resource_profile_list()
        ]

    @default("apply_user_options")
    def _apply_user_options_default(self) -> Any:
        # user_options are handled by run_pre_spawn_hook (not configurable, so that no config
        # can skip validation); this tells the hub they are not ignored.
        return lambda spawner, user_options: None

    @default("options_form")
    def _options_form_default(self) -> Any:
        return _render_form

    def parse_options(self, options: dict[str, Any]) -> SpawnRequest:
        try:
            return parse_user_options(options, self.resource_profile_list())
        except InvalidRequest as error:
            raise spawn_error(str(error), reason="invalid_options") from None

    def options_from_form(self, formdata: dict[str, list[str]]) -> dict[str, str]:
        try:
            options = options_from_form_data(formdata)
        except InvalidRequest as error:
            raise spawn_error(str(error), reason="invalid_options") from None
        return self.parse_options(options).as_user_options()

    def run_pre_spawn_hook(self) -> Any:
        # The REST API sets user_options without the form: validate them here, before start(),
        # so that a bad request is a 400 and nothing is submitted.
        self._request = self.parse_options(dict(self.user_options or {}))
        return super().run_pre_spawn_hook()

    def construct_child(self) -> Any:
        super().construct_child()  # wrapspawner's returns nothing: read child_spawner instead
        child = self.child_spawner
        if isinstance(child, GpuSlurmSpawner):
            if self._request is not None:
                child.spawn_request = self._request
            child.persist_state = self._persist_state
            child.adopt_job_id, self._previous_job_id = self._previous_job_id, ""
        return child

    def clear_state(self) -> None:
        # A new spawn starts by clearing state; remember the last job so that the child can
        # re-attach to it if it is still queued (see GpuSlurmSpawner._reattach). A job the
        # child let go at a hub restart also stays in the saved state, for the resume service.
        child = self.child_spawner
        child_state = child.get_state() if child else self.child_state
        detached = child.detached_job_id if isinstance(child, GpuSlurmSpawner) else ""
        self._previous_job_id = (
            detached or str((child_state or {}).get("job_id", "")) or self._resume_job_id
        )
        super().clear_state()
        self._resume_job_id = detached

    def get_state(self) -> dict[str, Any]:
        state: dict[str, Any] = super().get_state()
        if self._resume_job_id:
            state["resume_job_id"] = self._resume_job_id
        return state

    def load_state(self, state: dict[str, Any]) -> None:
        self._resume_job_id = str(state.get("resume_job_id", ""))
        super().load_state(state)

    def _persist_state(self) -> None:
        if self.orm_spawner is not None:
            self.orm_spawner.state = self.get_state()
            self.db.commit()


async def _render_form(spawner: GpuProfilesSpawner) -> str:
    profiles = spawner.resource_profile_list()
    previous = spawner.user_options or {}
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
    return _FORMS.get_template("spawn_form.html").render(
        profiles=rows, selected=selected, runtime=format_runtime(chosen.default_runtime)
    )
