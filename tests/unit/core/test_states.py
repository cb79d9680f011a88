"""The one table of Slurm job states."""

import pytest

from gpuportal_core.states import STATES, Phase, job_state, phase_of, states_for_pages

# Every state squeue(1) of Slurm 22.05 lists under JOB STATE CODES.
SLURM_STATES = [
    "BOOT_FAIL",
    "CANCELLED",
    "COMPLETED",
    "CONFIGURING",
    "COMPLETING",
    "DEADLINE",
    "FAILED",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PENDING",
    "PREEMPTED",
    "RUNNING",
    "RESV_DEL_HOLD",
    "REQUEUE_FED",
    "REQUEUE_HOLD",
    "REQUEUED",
    "RESIZING",
    "REVOKED",
    "SIGNALING",
    "SPECIAL_EXIT",
    "STAGE_OUT",
    "STOPPED",
    "SUSPENDED",
    "TIMEOUT",
]


def test_every_slurm_state_is_in_the_table():
    assert set(SLURM_STATES) <= set(STATES)


@pytest.mark.parametrize(
    ("state", "phase", "alive", "final"),
    [
        ("PENDING", Phase.QUEUED, True, False),
        ("CONFIGURING", Phase.QUEUED, True, False),
        ("REQUEUED", Phase.REQUEUED, True, False),
        ("REQUEUE_HOLD", Phase.REQUEUED, True, False),
        ("RUNNING", Phase.RUNNING, True, False),
        ("SUSPENDED", Phase.SUSPENDED, True, False),
        ("COMPLETING", Phase.ENDING, False, False),
        ("COMPLETED", Phase.ENDED, False, True),
        ("TIMEOUT", Phase.ENDED, False, True),
        ("OUT_OF_MEMORY", Phase.ENDED, False, True),
        # Slurm requeues these by default: ended for a session, but a record keeps refreshing.
        ("NODE_FAIL", Phase.ENDED, False, False),
        ("PREEMPTED", Phase.ENDED, False, False),
    ],
)
def test_state_phase_alive_final(state, phase, alive, final):
    described = job_state(state)
    assert (described.phase, described.alive, described.final) == (phase, alive, final)


def test_a_state_slurm_adds_later_is_never_read_as_ended():
    described = job_state("SOME_NEW_STATE")
    assert described.alive and not described.final
    assert phase_of("SOME_NEW_STATE") is Phase.RUNNING
    assert "SOME_NEW_STATE" in described.meaning


def test_pages_get_the_same_table():
    table = states_for_pages()
    assert table.keys() == STATES.keys()
    assert table["NODE_FAIL"] == {
        "phase": "ended",
        "meaning": "ended because its node failed",
        "alive": False,
        "final": False,
    }
