"""Slurm calls as Prometheus figures: a counter by command and outcome and a latency histogram,
fed by gpuportal_adapters.slurm's command observer. The hub and the portal each make their own (the
hub's `gpuportal_slurm_*`, the portal's `gpuportal_portal_slurm_*`), as each is its own process.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from gpuportal_adapters.slurm_commands import observe_commands

OUTCOMES = ("ok", "error", "timeout")
BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


def count_slurm_calls(prefix: str, who: str) -> tuple[Counter, Histogram]:
    """{prefix}_slurm_calls_total{command, outcome} and {prefix}_slurm_call_seconds{command},
    counting every Slurm command this process runs from now on."""
    calls = Counter(
        f"{prefix}_slurm_calls", f"Slurm commands run by the {who}", ["command", "outcome"]
    )
    seconds = Histogram(
        f"{prefix}_slurm_call_seconds",
        f"Seconds a Slurm command took ({who})",
        ["command"],
        buckets=BUCKETS,
    )

    seen: set[str] = set()

    def observe(command: str, took: float, outcome: str) -> None:
        if command not in seen:
            # Its failures at 0 from its first call, so that a dashboard's error rate reads 0
            # rather than no data (Prometheus' advice on labels known in advance).
            seen.add(command)
            for failed in OUTCOMES:
                calls.labels(command, failed)
        calls.labels(command, outcome).inc()
        seconds.labels(command).observe(took)

    observe_commands(observe)
    return calls, seconds
