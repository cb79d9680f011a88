"""The profile chooser: a wrapspawner WrapSpawner whose child runs the chosen GPU profile.

wrapspawner's ProfilesSpawner maps a static list of profiles to spawner classes and their
config; here the profiles are live (the portal's), every one runs with the same spawner class,
and a profile reaches the child as the checked request, never as child config. So this is a
WrapSpawner (the base wrapspawner provides for that) whose construct_child picks the child's
class from the server (a shared TensorBoard, or a JupyterLab session) and hands it what the
checks made of the options.
"""

from __future__ import annotations

from typing import Any, cast

from jupyterhub.spawner import Spawner, SpawnException
from jupyterhub.utils import maybe_future
from traitlets import (
    Callable,
    Integer,
    TraitError,
    Unicode,
    Union,
    default,
    validate,
)
from wrapspawner import WrapSpawner

from gpuportal_core.boards import is_board
from gpuportal_core.culling import CullLimits
from gpuportal_core.lifecycle import Stage
from gpuportal_core.request import (
    InvalidRequest,
    SpawnRequest,
    options_from_form_data,
    parse_user_options,
)
from gpuportal_spawner.board_spawner import SharedBoardSpawner, board_options
from gpuportal_spawner.errors import spawn_error
from gpuportal_spawner.hub_app import plain_jupyterhub
from gpuportal_spawner.named_sessions import check_running_limit
from gpuportal_spawner.profile_offer import ProfileOffer
from gpuportal_spawner.slurm_spawner import GpuSlurmSpawner
from gpuportal_spawner.spawn_form import ReturnedForm, ReturnedForms, render_form

# The resume service adds this key to the stored options when it starts a server again after
# a hub restart: take over that job (never submit one). Never stored.
RESUME_KEY = "resume_job"


def check_options(spawner: GpuProfilesSpawner, user_options: dict[str, Any]) -> Any:
    """GpuProfilesSpawner's apply_user_options: its own check of the options (not a setting)."""
    return spawner.check_user_options(user_options)


class GpuProfilesSpawner(WrapSpawner, ProfileOffer):
    """Offers the resource profiles on the spawn page (ProfileOffer) and runs the chosen one in
    its child."""

    named_sessions = Integer(
        2, config=True, help="Named sessions a user runs at a time besides the default one."
    )
    options_form = Union([Unicode(), Callable()])

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

    @default("db")
    def _no_shared_db(self) -> None:
        # JupyterHub's shared session (deprecated): nothing of ours uses it, nor batchspawner
        # outside the start() we replace. wrapspawner hands it to the child, and reading the
        # default logged JupyterHub's deprecation warning at every spawn.
        return None

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
        if is_board(self.name):  # a shared TensorBoard: a folder, no profile
            self._good_options = board_options(options)
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

    # -- the child ----------------------------------------------------------------------

    def _child_class(self) -> type[Spawner]:
        """A shared TensorBoard's server runs a board; every other server a JupyterLab job."""
        if is_board(self.name):
            return SharedBoardSpawner
        return self.profile_spawner_class

    def load_child_class(self, state: dict[str, Any]) -> None:
        # WrapSpawner's hook for the class of a child rebuilt from its stored state.
        self.child_class = self._child_class()

    def construct_child(self) -> Spawner:
        """The child (built once, by wrapspawner), handed what this spawn's checks made of its
        options: called before each start, as the options change from one spawn to the next."""
        self.child_class = self._child_class()
        child = super().construct_child()
        if is_board(self.name):
            options = self._good_options or self.user_options or {}
            cast(SharedBoardSpawner, child).set_up(
                options, board_name=self.name, oauth_access_scopes=self.oauth_access_scopes
            )
        else:
            session = cast(GpuSlurmSpawner, child)
            session.spawn_request = self._request
            session.resume_job_id = self._resume_request
            if self._request is not None:
                session.cull_limits = self._limits
        return child

    @property
    def session(self) -> GpuSlurmSpawner | None:
        """This server's JupyterLab session (the spawner of its Slurm job), once built; None
        for a shared TensorBoard, which runs inside another server's job."""
        if is_board(self.name):
            return None
        return cast(GpuSlurmSpawner | None, self.child_spawner)

    def report_port(self, port: int) -> None:
        """The port the server's job reported (gpuportal_spawner.port_handler), for the child
        that waits for it (each kind of child takes it)."""
        if self.child_spawner is not None:
            self.child_spawner.report_port(port)

    async def current_host(self) -> str:
        """Where the session's job runs now (a requeued job may run on another node); "" for a
        shared TensorBoard, which stays where its session is."""
        session = self.session
        return await session.current_host() if session is not None else ""

    async def start(self) -> tuple[str, int]:
        if plain_jupyterhub():
            self.log.error("This hub was started as `jupyterhub`; start it as `gpuportal-hub`.")
            raise spawn_error(
                "The hub was started without the portal's routes; please tell the cluster "
                "admins (start it with gpuportal-hub).",
                reason="plain_jupyterhub",
                status_code=500,
            )
        child = self.construct_child()
        address: tuple[str, int] = await maybe_future(child.start())
        return address

    # Internal TLS: JupyterHub asks the wrapper for the certificate before start(); the child
    # (built here, early, with the checked request) knows where its job may run.
    async def create_certs(self) -> dict[str, str]:
        return dict(await maybe_future(self.construct_child().create_certs()))

    async def move_certs(self, pair: dict[str, str]) -> dict[str, str]:
        return dict(await maybe_future(self.child_spawner.move_certs(pair)))

    async def poll(self) -> int | None:
        session = self.session
        if session is not None:
            # _check_pending: the hub is starting up and checking the servers it had.
            return await session.poll_session(hub_check=self._check_pending)
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
        session = self.session
        if session is not None and session.stage in (Stage.SUSPENDED, Stage.REQUEUED):
            return session.note
        if session is not None and session.stage is Stage.READY and session.note:
            return session.note  # the hub cannot reach its node (gpuportal_core.lifecycle)
        return "" if self.active else self._last_note

    def clear_state(self) -> None:
        session = self.session
        if session is not None:
            handed_over = session.stage is Stage.HANDED_OVER
            self._resume_job_id = session.job_id if handed_over else ""
            if session.stage is Stage.ENDED and session.note:
                self._last_note = session.note
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
