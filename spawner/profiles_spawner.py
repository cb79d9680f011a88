"""The profile chooser: a wrapspawner ProfilesSpawner whose profiles are GPU resource profiles."""

from __future__ import annotations

from typing import Any, cast

from jupyterhub.spawner import SpawnException
from jupyterhub.utils import maybe_future
from traitlets import (
    Callable,
    Dict,
    Integer,
    List,
    TraitError,
    Type,
    Unicode,
    Union,
    default,
    validate,
)
from wrapspawner import ProfilesSpawner, WrapSpawner

from gpuportal_adapters.cluster_snapshot import Snapshot
from gpuportal_core.accounting import group_use
from gpuportal_core.culling import CullLimits
from gpuportal_core.lifecycle import Stage
from gpuportal_core.profiles import (
    DEFAULT_CORES_PER_GPU,
    DEFAULT_MEM_PER_GPU_GB,
    ProfileError,
    ResourceProfile,
    default_profile_config,
    load_profiles,
    visible_profiles,
)
from gpuportal_core.request import (
    InvalidRequest,
    SpawnRequest,
    options_from_form_data,
    parse_user_options,
)
from gpuportal_spawner import capacity
from gpuportal_spawner.board_spawner import SharedBoardSpawner, check_folder, is_board
from gpuportal_spawner.capacity import capacity_view
from gpuportal_spawner.errors import spawn_error
from gpuportal_spawner.hub_state import hub_state
from gpuportal_spawner.named_sessions import check_running_limit
from gpuportal_spawner.profile_source import Offer, ProfileSource
from gpuportal_spawner.slurm_spawner import GpuSlurmSpawner
from gpuportal_spawner.spawn_form import ReturnedForm, ReturnedForms, render_form

# The resume service adds this key to the stored options when it starts a server again after
# a hub restart: take over that job (never submit one). Never stored.
RESUME_KEY = "resume_job"


def check_options(spawner: GpuProfilesSpawner, user_options: dict[str, Any]) -> Any:
    """GpuProfilesSpawner's apply_user_options: its own check of the options (not a setting)."""
    return spawner.check_user_options(user_options)


class GpuProfilesSpawner(ProfilesSpawner):
    """Offers the resource profiles on the spawn page; each profile names the spawner it runs."""

    resource_profiles = List(
        Dict(),
        default_value=default_profile_config(),
        config=True,
        help="Profiles offered, e.g. [{'slug': 'gpu-2', 'title': '2 GPUs', 'gpus': 2, "
        "'max_runtime': '24:00:00'}]. Cores and memory follow the GPU count.",
    )
    cores_per_gpu = Integer(DEFAULT_CORES_PER_GPU, config=True, help="CPU cores per GPU, e.g. 8.")
    mem_per_gpu_gb = Integer(
        DEFAULT_MEM_PER_GPU_GB, config=True, help="Memory in GB per GPU, e.g. 48."
    )
    partition = Unicode("gpu", config=True, help="Default Slurm partition, e.g. gpu.")
    max_gpus_per_node = Integer(4, config=True, help="GPUs on one node of the partition, e.g. 4.")
    named_sessions = Integer(
        2, config=True, help="Named sessions a user runs at a time besides the default one."
    )
    profile_spawner_class = Type(
        GpuSlurmSpawner,
        klass="jupyterhub.spawner.Spawner",
        config=True,
        help="Spawner class each profile runs with, e.g. "
        "gpuportal_spawner.slurm_spawner.GpuSlurmSpawner.",
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

    profiles_cache = Unicode(
        "",
        config=True,
        help="File keeping the portal's last answer, so that spawns and resumes right after a "
        "hub restart do not wait for the portal, e.g. /var/lib/jupyterhub/profiles-cache.json.",
    )

    _request: SpawnRequest | None = None
    _limits = CullLimits()  # the request's culling limits, worked out once per spawn
    # The form's options as checked by options_from_form, with the request they made: the hub
    # hands the same options to apply_user_options, which need not fetch the offer and check
    # them again (one validation per spawn).
    _form_checked: tuple[dict[str, str], SpawnRequest] | None = None
    # The options of the last spawn that passed the checks: stored back whenever a request
    # fails them, so that bad options are never kept (they would break every later page).
    _good_options: dict[str, Any]
    # Traits of the bases (JupyterHub's Spawner, wrapspawner's), which are Any to mypy.
    start_timeout: int
    # Set when the hub, starting up, let go of this server while its job waited: the resume
    # service starts the server again on that job.
    _resume_job_id = ""
    _resume_request = ""
    # Why the last session ended, for the home page ("reached its 8 h time limit").
    _last_note = ""
    # Whether the last spawn's time limit was the user's own, not its profile's default then: a
    # default is not remembered (the profile's default may have changed since; the form then
    # shows today's, as the profile's card does).
    _runtime_chosen = True

    def __init__(self, **kwargs: Any) -> None:
        self._good_options = {}
        # Refused forms on their way to the page (gpuportal_spawner.spawn_form.ReturnedForms):
        # the default server's spawner keeps the user's.
        self.returned_forms = ReturnedForms()
        super().__init__(**kwargs)
        # The configured start_timeout: how long JupyterLab may take once its job runs. Each
        # spawn adds its profile's queue limit to it (check_user_options).
        self._startup_timeout = int(self.start_timeout)

    async def offer(self) -> Offer:
        """The profiles this user may see and spawn, and the environments that go with them,
        live from the portal when there is one."""
        if self.portal_url:
            sources = hub_state(self.user).profile_sources
            source = sources.get(self.portal_url)
            if source is None:
                source = ProfileSource(
                    url=self.portal_url,
                    token=self.portal_token,
                    fallback=self.configured_profiles,
                    cache_file=self.profiles_cache,
                )
                sources[self.portal_url] = source
            offer = await source.offer()
        else:
            offer = Offer(self.configured_profiles(), [])
        profiles = visible_profiles(offer.profiles, [group.name for group in self.user.groups])
        slugs = {profile.slug for profile in profiles}
        environments = [
            env for env in offer.environments if not env.profiles or env.profiles & slugs
        ]
        return Offer(profiles, environments)

    async def capacity(self, profiles: list[ResourceProfile] | None = None) -> dict[str, Any]:
        """Free GPUs, and whether each of this user's profiles starts now
        (gpuportal_spawner.capacity).

        profiles: the offer's, when the caller already has them (the form does).
        """
        child = self._session_config()
        if profiles is None:
            profiles = (await self.offer()).profiles
        taken = await self.cluster_snapshot()
        assocs = await capacity.group_limits(
            hub_state(self.user),
            bin_dir=child.get("slurm_bin_dir", ""),
            timeout=float(child.get("slurm_timeout", 20.0)),
        )
        group = group_use(assocs, self.user.name, taken.jobs) if taken is not None else None
        return capacity_view(profiles, taken, group)

    async def cluster_snapshot(self) -> Snapshot | None:
        """The cluster's jobs, nodes and reservations as of a few seconds ago, shared by all
        users' pages (None: Slurm did not answer within 2 s)."""
        child = self._session_config()
        snapshot = capacity.snapshot(
            hub_state(self.user),
            bin_dir=child.get("slurm_bin_dir", ""),
            timeout=float(child.get("slurm_timeout", 20.0)),
            ttl=float(child.get("capacity_ttl", 10.0)),
        )
        return await snapshot.get_within(2.0)

    def _session_config(self) -> dict[str, Any]:
        """The session spawner's config section: the Slurm settings are its own, and this
        wrapper has no Slurm of its own."""
        spawner_class = cast(type, self.profile_spawner_class)
        return dict(self.config.get(spawner_class.__name__, {}))

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
        return [("GPU job", "", cast(type, self.profile_spawner_class), {})]

    def select_profile(self, profile: str) -> None:
        # Whatever the profile, the child is the Slurm spawner; the profile itself reaches it
        # as the validated spawn_request, never as child config.
        self.child_class = self.profile_spawner_class
        self.child_config: dict[str, Any] = {}

    @default("apply_user_options")
    def _apply_user_options_default(self) -> Any:
        # JupyterHub (5.3+) calls this hook with the options of every spawn, from the form or
        # the REST API, before the admin's pre_spawn_hook and before start().
        return check_options

    @validate("apply_user_options")
    def _keep_the_check(self, proposal: Any) -> Any:
        if proposal["value"] is not check_options:
            raise TraitError(
                "GpuProfilesSpawner.apply_user_options is the portal's own check of the spawn "
                "options and cannot be replaced; put a hook of your own in pre_spawn_hook."
            )
        return proposal["value"]

    @default("options_form")
    def _options_form_default(self) -> Any:
        return render_form

    async def parse_options(self, options: dict[str, Any]) -> SpawnRequest:
        try:
            offer = await self.offer()
            return parse_user_options(options, offer.profiles, offer.environments)
        except InvalidRequest as error:
            raise spawn_error(str(error), reason="invalid_options", field=error.field) from None

    async def options_from_form(self, formdata: dict[str, list[str]]) -> dict[str, str]:
        # A refused form comes back as it was sent, the message at the field (see render_form).
        sent = {key: values[-1] for key, values in formdata.items() if values and key != "_xsrf"}
        try:
            request = await self.parse_options(options_from_form_data(formdata))
            checked = request.as_user_options()
            self._form_checked = (checked, request)
            return checked
        except InvalidRequest as error:
            self.user.spawner.returned_forms.put(ReturnedForm(sent, error.field, str(error)))
            raise spawn_error(str(error), reason="invalid_options") from None
        except SpawnException as error:
            field = str(getattr(error, "field", ""))
            self.user.spawner.returned_forms.put(ReturnedForm(sent, field, error.log_message))
            raise

    async def check_user_options(self, user_options: dict[str, Any]) -> None:
        """Check a spawn's options (the form's, already checked by options_from_form, or the
        REST API's) and keep the request they make; a bad request is a 400 and nothing is
        submitted. JupyterHub has stored the raw options: the checked ones (or the last good
        ones, when these fail) take their place on the spawner's record, which the hub commits
        with the spawn or its failure."""
        options = dict(user_options or {})
        if is_board(self.name):
            # A shared TensorBoard (gpuportal_spawner.board_spawner): a folder, no profile.
            try:
                folder = check_folder(str(options.get("tensorboard", "")))
            except ValueError as error:
                raise spawn_error(str(error), reason="invalid_options") from None
            groups: Any = options.get("groups", [])
            if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
                raise spawn_error("groups must be a list of group names", reason="invalid_options")
            self._good_options = {"tensorboard": folder, "groups": groups}
            self._keep_options(self._good_options)
            return
        resume = options.pop(RESUME_KEY, "")
        self._resume_request = resume if isinstance(resume, str) else ""
        if not self._resume_request:  # a resume takes back a job it already had
            try:
                check_running_limit(self.user, self.name, self.named_sessions)
            except SpawnException:
                self._keep_options(self._good_options)
                raise
        self._last_note = ""
        form, self._form_checked = self._form_checked, None
        try:
            if form is not None and form[0] == options:
                self._request = form[1]
            else:
                self._request = await self.parse_options(options)
        except SpawnException:
            self._request = None
            if not self._resume_request:
                self._keep_options(self._good_options)
                raise
            # A resume submits nothing, so it needs no valid options: the job was checked when
            # it was submitted (the portal may not be up yet, or a profile has changed since).
            self.log.warning("Resuming %s on job %s", self._log_name, self._resume_request)
        else:
            self._good_options = self._request.as_user_options()
            self._runtime_chosen = self._request.runtime != self._request.profile.default_runtime
        # A resumed job is past its submission: let it wait as long as Slurm keeps it.
        self._limits = CullLimits.of(self._request.profile) if self._request else CullLimits()
        self.start_timeout = self._limits.start_wait(self._startup_timeout)
        self._keep_options(self._good_options)

    def _keep_options(self, options: dict[str, Any]) -> None:
        """These options on the spawner and its record (committed by the hub, not here)."""
        self.user_options = dict(options)
        if self.orm_spawner is not None:
            self.orm_spawner.user_options = dict(options)

    def construct_child(self) -> Any:
        # wrapspawner's construct_child reads user_options["profile"] into a Unicode trait,
        # which raises for a non-string and so broke every page of that user; the profile is
        # not needed here (see select_profile).
        self.child_profile = ""
        self.select_profile("")
        if is_board(self.name):
            self.child_class = SharedBoardSpawner
        WrapSpawner.construct_child(self)
        child = self.child_spawner
        if isinstance(child, SharedBoardSpawner):
            options = self._good_options or self.user_options or {}
            child.logdir = str(options.get("tensorboard", ""))
            child.groups = list(options.get("groups", []))
            # wrapspawner builds the child without the server (its name is ""): the scopes that let
            # someone in (JUPYTERHUB_OAUTH_ACCESS_SCOPES) must name this server, tb-NAME,
            # which its shares grant, not the owner's default server.
            child.board_name = self.name
            child.oauth_access_scopes = self.oauth_access_scopes
        if isinstance(child, GpuSlurmSpawner):
            child.spawn_request = self._request
            child.resume_job_id = self._resume_request
            if self._request is not None:
                child.cull_limits = self._limits
        return child

    # Internal TLS: JupyterHub asks the wrapper for the certificate before start(); the child
    # (built here, early, with the checked request) knows where its job may run.
    async def create_certs(self) -> dict[str, str]:
        return dict(await maybe_future(self.construct_child().create_certs()))

    async def move_certs(self, pair: dict[str, str]) -> dict[str, str]:
        return dict(await maybe_future(self.child_spawner.move_certs(pair)))

    async def poll(self) -> int | None:
        child = self.child_spawner
        if isinstance(child, GpuSlurmSpawner):
            # _check_pending: the hub is starting up and checking the servers it had.
            return await child.poll_session(hub_check=self._check_pending)
        status: int | None = await maybe_future(super().poll())
        return status

    @property
    def ever_started(self) -> bool:
        """Whether this server was ever started, or is starting. JupyterHub makes a named
        server's record as soon as its spawn page is opened, and keeps it after a refused
        start; such a record is no session of the user's (the home page shows no card)."""
        return bool(self.active or self.pending or self._good_options or self._last_note)

    @property
    def session_note(self) -> str:
        """What the home page says of this server: suspended, requeued, or why it ended."""
        child = self.child_spawner
        if isinstance(child, GpuSlurmSpawner) and child.stage in (Stage.SUSPENDED, Stage.REQUEUED):
            return child.note
        if isinstance(child, GpuSlurmSpawner) and child.stage is Stage.READY and child.note:
            return child.note  # the hub cannot reach its node (gpuportal_core.lifecycle)
        return "" if self.active else self._last_note

    def clear_state(self) -> None:
        child = self.child_spawner
        if isinstance(child, GpuSlurmSpawner):
            handed_over = child.stage is Stage.HANDED_OVER
            self._resume_job_id = child.job_id if handed_over else ""
            if child.stage is Stage.ENDED and child.note:
                self._last_note = child.note
        super().clear_state()

    def get_state(self) -> dict[str, Any]:
        state: dict[str, Any] = super().get_state()
        state["options"] = self._good_options
        if self._resume_job_id:
            state["resume_job_id"] = self._resume_job_id
        if self._last_note:
            state["last_note"] = self._last_note
        state["runtime_chosen"] = self._runtime_chosen
        return state

    def load_state(self, state: dict[str, Any]) -> None:
        self._resume_job_id = str(state.get("resume_job_id", ""))
        self._last_note = str(state.get("last_note", ""))
        self._runtime_chosen = bool(state.get("runtime_chosen", True))
        options = state.get("options")
        self._good_options = dict(options) if isinstance(options, dict) else {}
        super().load_state(state)
