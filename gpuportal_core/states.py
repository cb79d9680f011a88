"""Every Slurm job state and what it means: the one table the spawner, the portal, the pages and
the tests read.

Slurm's states (squeue(1), "JOB STATE CODES") fall into a few phases. What matters for a
notebook session or a batch job is the phase, whether the state is final, and the words a user
reads. A state Slurm adds later is read as `unknown_state` (never as "ended"): a session is
kept, and the next poll asks again.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Phase(enum.Enum):
    """What a job state means for a notebook server or a batch job."""

    QUEUED = "queued"  # waiting to start (pending, configuring, held)
    REQUEUED = "requeued"  # put back in the queue after it ran: it starts again by itself
    RUNNING = "running"
    SUSPENDED = "suspended"  # holds its allocation, its processes stopped; resumes in place
    ENDING = "ending"  # completing or staging out: its processes are gone or going
    ENDED = "ended"  # final


@dataclass(frozen=True)
class JobState:
    """One Slurm state: its phase and the words a user reads."""

    name: str
    phase: Phase
    # What happened, as the end of "Your session ..." / "The job ..." (lower case, no stop).
    meaning: str
    # Slurm may still put the job back in the queue (JobRequeue=1, PreemptMode=REQUEUE): a
    # record in this state keeps being refreshed, and a session in it is cancelled when it ends
    # so that a requeued copy cannot run on with nobody attached.
    may_requeue: bool = False

    @property
    def alive(self) -> bool:
        """The job still holds, or waits for, an allocation."""
        return self.phase not in (Phase.ENDING, Phase.ENDED)

    @property
    def final(self) -> bool:
        """Nothing will change any more: a job record in this state need not be asked again."""
        return self.phase is Phase.ENDED and not self.may_requeue


def _table(*states: JobState) -> dict[str, JobState]:
    return {state.name: state for state in states}


STATES: dict[str, JobState] = _table(
    JobState("PENDING", Phase.QUEUED, "is waiting in the queue"),
    JobState("CONFIGURING", Phase.QUEUED, "has its nodes and is being set up"),
    JobState("RESV_DEL_HOLD", Phase.QUEUED, "is held because its reservation was deleted"),
    JobState("REQUEUE_FED", Phase.REQUEUED, "was put back in the queue by the federation"),
    JobState("REQUEUE_HOLD", Phase.REQUEUED, "was put back in the queue and is held"),
    JobState("REQUEUED", Phase.REQUEUED, "was put back in the queue and will start again"),
    JobState("RUNNING", Phase.RUNNING, "is running"),
    JobState("RESIZING", Phase.RUNNING, "is running (being resized)"),
    JobState("SIGNALING", Phase.RUNNING, "is running (being signalled)"),
    JobState("SUSPENDED", Phase.SUSPENDED, "was suspended by an administrator"),
    JobState("STOPPED", Phase.SUSPENDED, "was stopped (SIGSTOP) by an administrator"),
    JobState("COMPLETING", Phase.ENDING, "is ending"),
    JobState("STAGE_OUT", Phase.ENDING, "is ending (staging out its files)"),
    JobState("COMPLETED", Phase.ENDED, "ended"),
    JobState("CANCELLED", Phase.ENDED, "was cancelled"),
    JobState("TIMEOUT", Phase.ENDED, "reached its time limit"),
    JobState("DEADLINE", Phase.ENDED, "reached its deadline"),
    JobState("FAILED", Phase.ENDED, "failed"),
    JobState("OUT_OF_MEMORY", Phase.ENDED, "ran out of memory and was killed"),
    JobState("NODE_FAIL", Phase.ENDED, "ended because its node failed", may_requeue=True),
    JobState("BOOT_FAIL", Phase.ENDED, "could not start: its node failed to boot"),
    JobState("PREEMPTED", Phase.ENDED, "was preempted by a higher-priority job", may_requeue=True),
    JobState("REVOKED", Phase.ENDED, "was revoked (it runs on another cluster)"),
    JobState("SPECIAL_EXIT", Phase.ENDED, "ended with a special exit and is held"),
    # Not Slurm's: the job left squeue (MinJobAge after it ended, or purged).
    JobState("ENDED", Phase.ENDED, "ended (Slurm no longer lists it)"),
    # Not Slurm's: the portal's record of a submission sbatch has not answered yet, and of one
    # it never answered and that no job carries the tag of.
    JobState("SUBMITTING", Phase.QUEUED, "is being submitted"),
    JobState(
        "NOT_SUBMITTED",
        Phase.ENDED,
        "was not submitted: sbatch gave no answer and no job carries its tag",
    ),
)


# The states a job record is never asked about again (a database filter's list).
FINAL_STATES = [name for name, state in STATES.items() if state.final]


def job_state(name: str) -> JobState:
    """The table's entry for a state; an unknown one counts as still alive (never as ended)."""
    known = STATES.get(name)
    if known is not None:
        return known
    return JobState(name, Phase.RUNNING, f"is in a state this portal does not know ({name})")


def phase_of(name: str) -> Phase:
    return job_state(name).phase


# The phases a job list is filtered by, as users name them.
_FILTER_PHASES = {
    "waiting": (Phase.QUEUED, Phase.REQUEUED),
    "running": (Phase.RUNNING, Phase.SUSPENDED, Phase.ENDING),
    "ended": (Phase.ENDED,),
}


def states_in(group: str) -> list[str]:
    """The states of one filter group ("waiting", "running", "ended")."""
    return [name for name, state in STATES.items() if state.phase in _FILTER_PHASES[group]]


def states_for_pages() -> dict[str, dict[str, object]]:
    """The table as the pages' JavaScript reads it (rendered into them as JSON)."""
    return {
        name: {
            "phase": state.phase.value,
            "meaning": state.meaning,
            "alive": state.alive,
            "final": state.final,
        }
        for name, state in STATES.items()
    }
