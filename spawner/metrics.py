"""The hub's own figures at /hub/metrics (JupyterHub's Prometheus endpoint; read:metrics scope).

gpuportal_slurm_calls_total{command, outcome}   Slurm commands the hub ran
gpuportal_slurm_call_seconds{command}           how long they took
gpuportal_queue_wait_seconds{profile}           submit to running, per profile
gpuportal_gpus{partition, kind, state}          free and total GPUs per kind (at the last look)
gpuportal_sessions{state, profile}              sessions now, by state and profile
gpuportal_login_failures_total{why}             refused logins
gpuportal_culls_total{reason}                   sessions stopped by the culler
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Iterator
from typing import Any

from prometheus_client import REGISTRY, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from gpuportal_adapters.slurm_metrics import count_slurm_calls
from gpuportal_core.culling import Reason

QUEUE_WAIT = Histogram(
    "gpuportal_queue_wait_seconds",
    "Seconds from submission until the session's JupyterLab answered, per profile",
    ["profile"],
    buckets=(1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200),
)
LOGIN_FAILURES = Counter("gpuportal_login_failures", "Refused logins", ["why"])
CULLS = Counter("gpuportal_culls", "Sessions stopped by a culling limit", ["reason"])
_gpus: dict[tuple[str, str, str], int] = {}
_seen: set[tuple[str, str]] = set()


def record_capacity(partition: str, counts: dict[str, tuple[int, int]]) -> None:
    """A partition's free and total GPUs per kind ("" for untyped GPUs), as last looked at."""
    for kind, (free, total) in counts.items():
        _gpus[(partition, kind, "free")] = free
        _gpus[(partition, kind, "total")] = total


class HubCollector(Collector):
    """Figures read when Prometheus scrapes: capacity at the last look, sessions now."""

    def describe(self) -> Iterator[Any]:
        # Names only, so that registering never reads the hub (it may not be up yet).
        yield GaugeMetricFamily("gpuportal_gpus", "GPUs per partition and kind")
        yield GaugeMetricFamily("gpuportal_sessions", "Sessions by state and profile")

    def collect(self) -> Iterator[Any]:
        gpus = GaugeMetricFamily(
            "gpuportal_gpus", "GPUs per partition and kind", labels=["partition", "kind", "state"]
        )
        for (partition, kind, state), value in sorted(_gpus.items()):
            gpus.add_metric([partition, kind, state], value)
        yield gpus
        sessions = GaugeMetricFamily(
            "gpuportal_sessions", "Sessions by state and profile", labels=["state", "profile"]
        )
        now = _sessions()
        # A state and profile seen once stays, at 0 when none is left: a graph then falls to 0
        # rather than ending at its last count, and a dashboard's query has data.
        _seen.update(now)
        for key in sorted(_seen):
            sessions.add_metric(list(key), now.get(key, 0))
        yield sessions


def _sessions() -> Tally[tuple[str, str]]:
    from jupyterhub.app import JupyterHub

    tally: Tally[tuple[str, str]] = Tally()
    if not JupyterHub.initialized():
        return tally
    for user in JupyterHub.instance().users.values():
        for spawner in list(user.spawners.values()):
            if spawner.name.startswith("tb-"):
                continue
            state = "running" if spawner.ready else spawner.pending or ""
            if state:
                profile = str((spawner.user_options or {}).get("profile", ""))
                tally[(state, profile)] += 1
    return tally


# Every reason a login is refused for (gpuportal_spawner.ldap_authenticator, and
# gpuportal_spawner.sso_authenticator with single sign-on).
LOGIN_FAILURE_REASONS = (
    "not a user name",
    "throttled",
    "wrong name or password",
    "in no allowed group",
    "not in the directory",
    "refused by the provider",
    "second factor refused",
    "second factor reused",
    "second factor locked",
    "ID token refused",
)


def install() -> None:
    count_slurm_calls("gpuportal", "hub")
    REGISTRY.register(HubCollector())
    # Each label value known in advance at 0, so that a dashboard's rate reads 0 rather than no
    # data before the first cull or refused login.
    for why in LOGIN_FAILURE_REASONS:
        LOGIN_FAILURES.labels(why)
    for reason in Reason:
        CULLS.labels(reason.value)
