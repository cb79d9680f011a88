"""The profile chooser: a wrapspawner ProfilesSpawner whose profiles are GPU resource profiles."""

from __future__ import annotations

from typing import Any, ClassVar

import jinja2
from jupyterhub.utils import maybe_future
from traitlets import Callable, Dict, Integer, List, Type, Unicode, Union, default
from wrapspawner import ProfilesSpawner

from spawner.core.profiles import (
    ProfileError,
    ResourceProfile,
    default_profile_config,
    load_profiles,
    visible_profiles,
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
from spawner.profile_source import Offer, ProfileSource
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
    portal_url = Unicode(
        "",
        config=True,
        help="The portal service, where admins edit profiles live, e.g. "
        "http://127.0.0.1:8082/services/portal. Empty: use resource_profiles only.",
    )
    portal_token = Unicode(
        "", config=True, help="The API token the hub gave the portal service (reads all profiles)."
    )
    options_form = Union([Unicode(), Callable()])

    # One source per portal for all spawners: they share the last answer it gave.
    _sources: ClassVar[dict[str, ProfileSource]] = {}
    _request: SpawnRequest | None = None
    _previous_job_id = ""
    _resume_job_id = ""

    async def offer(self) -> Offer:
        """The profiles this user may see and spawn, and the environments that go with them,
        live from the portal when there is one."""
        if self.portal_url:
            source = self._sources.get(self.portal_url)
            if source is None:
                source = ProfileSource(
                    url=self.portal_url, token=self.portal_token, fallback=self.configured_profiles
                )
                self._sources[self.portal_url] = source
            offer = await source.offer()
        else:
            offer = Offer(self.configured_profiles(), [])
        profiles = visible_profiles(offer.profiles, [group.name for group in self.user.groups])
        slugs = {profile.slug for profile in profiles}
        environments = [
            env for env in offer.environments if not env.profiles or env.profiles & slugs
        ]
        return Offer(profiles, environments)

    def configured_profiles(self) -> list[ResourceProfile]:
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
        # wrapspawner's static list is not used: profiles are live, and select_profile below
        # picks the one spawner class for every profile.
        return [("GPU job", "", self.profile_spawner_class, {})]

    def select_profile(self, profile: str) -> None:
        # Whatever the profile, the child is the Slurm spawner; the profile itself reaches it
        # as the validated spawn_request, never as child config.
        self.child_class = self.profile_spawner_class
        self.child_config = {}

    @default("apply_user_options")
    def _apply_user_options_default(self) -> Any:
        # user_options are handled by run_pre_spawn_hook (not configurable, so that no config
        # can skip validation); this tells the hub they are not ignored.
        return lambda spawner, user_options: None

    @default("options_form")
    def _options_form_default(self) -> Any:
        return _render_form

    async def parse_options(self, options: dict[str, Any]) -> SpawnRequest:
        try:
            offer = await self.offer()
            return parse_user_options(options, offer.profiles, offer.environments)
        except InvalidRequest as error:
            raise spawn_error(str(error), reason="invalid_options") from None

    async def options_from_form(self, formdata: dict[str, list[str]]) -> dict[str, str]:
        try:
            options = options_from_form_data(formdata)
        except InvalidRequest as error:
            raise spawn_error(str(error), reason="invalid_options") from None
        return (await self.parse_options(options)).as_user_options()

    async def run_pre_spawn_hook(self) -> Any:
        # The REST API sets user_options without the form: validate them here, before start(),
        # so that a bad request is a 400 and nothing is submitted.
        self._request = await self.parse_options(dict(self.user_options or {}))
        return await maybe_future(super().run_pre_spawn_hook())

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
    offer = await spawner.offer()
    profiles = offer.profiles
    if not profiles:
        return _FORMS.get_template("spawn_form.html").render(profiles=[], selected="", runtime="")
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
        runtime=format_runtime(chosen.default_runtime),
        environments=environments,
        selected_environment=chosen_env,
    )
