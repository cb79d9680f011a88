import pytest
from traitlets.config import Config

from gpuportal_spawner.unused_traits import refuse_unused


def test_a_batchspawner_trait_nobody_reads_is_refused_with_what_to_set():
    config = Config()
    config.SlurmSpawner.req_partition = "big"
    with pytest.raises(
        ValueError, match=r"req_partition is not used.*GpuProfilesSpawner\.partition"
    ):
        refuse_unused(config)


def test_our_own_settings_pass():
    config = Config()
    config.GpuSlurmSpawner.session_venv = "/opt/venv"
    refuse_unused(config)
