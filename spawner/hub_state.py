"""What the hub's spawners and handlers share for the hub's life: one profile source per
portal, one job poller per Slurm configuration, the cluster snapshots, the accounts' GPU
limits read from Slurm's accounting, the notice boards, each user's last call, the notebooks
CA that signs sessions' certificates.

It belongs to the hub app, not to a class: JupyterHub hands every user the app's settings
(`user.settings`), and the state is kept there, made on first use. Two hubs in one process
(the tests start several) share nothing, and nothing outlives its hub.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuportal_adapters.cluster_snapshot import ClusterSnapshot
    from gpuportal_adapters.poller import JobPoller
    from gpuportal_core.accounting import Associations
    from gpuportal_spawner.login_limits import IdleLogins
    from gpuportal_spawner.notices import NoticeBoard
    from gpuportal_spawner.profile_source import ProfileSource

SETTINGS_KEY = "gpuportal_hub_state"


@dataclass
class HubState:
    # By portal URL: spawners share the last answer the portal gave.
    profile_sources: dict[str, ProfileSource] = field(default_factory=dict)
    # By (run_as, timeout, bin_dir): one squeue for every session of the hub.
    pollers: dict[tuple[Any, ...], JobPoller] = field(default_factory=dict)
    # By (bin_dir, timeout, TTL): one look at the cluster per TTL for every page.
    snapshots: dict[tuple[str, float, float], ClusterSnapshot] = field(default_factory=dict)
    # By (bin_dir, timeout): when they were read, and what they said.
    group_limits: dict[tuple[str, float], tuple[float, Associations]] = field(default_factory=dict)
    # By portal URL.
    notice_boards: dict[str, NoticeBoard] = field(default_factory=dict)
    # Each user's last call, for the idle limit of hub logins (made on first use).
    idle_logins: IdleLogins | None = None
    # By user name: the token the hub asks the portal with for their notebook jobs, and when
    # it expires (time.monotonic()) (gpuportal_spawner.notebook_jobs).
    notebook_job_tokens: dict[str, tuple[str, float]] = field(default_factory=dict)
    # By certificate store: the notebooks CA's certificate and key, which sign sessions'
    # certificates (gpuportal_spawner.session_tls).
    notebooks_ca: dict[str, tuple[Any, Any]] = field(default_factory=dict)


def hub_state(user: Any) -> HubState:
    """The hub's state, reached through one of its users (a spawner's `user`, a handler's
    `current_user`). A user without the hub's settings (a spawner built alone, in unit tests)
    keeps a state of its own."""
    settings = getattr(user, "settings", None)
    if isinstance(settings, MutableMapping):
        state = settings.get(SETTINGS_KEY)
        if not isinstance(state, HubState):
            state = settings[SETTINGS_KEY] = HubState()
        return state
    own = getattr(user, "_gpuportal_hub_state", None)
    if not isinstance(own, HubState):
        own = HubState()
        user._gpuportal_hub_state = own
    return own
