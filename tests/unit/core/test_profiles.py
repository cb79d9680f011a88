import re

import pytest
from pydantic import ValidationError

from gpuportal_core.profiles import (
    ProfileError,
    ResourceProfile,
    default_profile_config,
    load_profiles,
    profile_from_config,
    visible_profiles,
)
from gpuportal_core.slurm_time import RuntimeFormatError, format_runtime, parse_runtime


def test_runtime_round_trip():
    assert parse_runtime("08:00:00") == 8 * 3600
    assert parse_runtime("36:30:15") == 36 * 3600 + 30 * 60 + 15
    assert format_runtime(8 * 3600) == "08:00:00"
    assert format_runtime(parse_runtime("100:05:09")) == "100:05:09"


@pytest.mark.parametrize(
    "text", ["8h", "8:00", "08:60:00", "-1:00:00", "08:00:00\n", "", "1-00:00:00"]
)
def test_runtime_rejects_other_forms(text):
    with pytest.raises(RuntimeFormatError, match="HH:MM:SS"):
        parse_runtime(text)


def test_shipped_profiles_follow_the_per_gpu_rule():
    profiles = {p.slug: p for p in load_profiles(default_profile_config())}
    assert sorted(profiles) == ["gpu-1", "gpu-2", "gpu-4"]
    two = profiles["gpu-2"]
    assert (two.gpus, two.cores, two.mem_gb) == (2, 16, 96)
    assert two.default_runtime == 8 * 3600
    assert profiles["gpu-4"].cores == 32 and profiles["gpu-4"].mem_gb == 192
    assert two.summary() == "2 GPUs · 16 CPU cores · 96 GB memory · default 8 h, up to 24 h"


def test_per_gpu_figures_are_configurable():
    profile = profile_from_config({"slug": "big", "gpus": 3}, cores_per_gpu=12, mem_per_gpu_gb=80)
    assert (profile.cores, profile.mem_gb) == (36, 240)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"slug": "gpu-8", "gpus": 65}, "gpus: Input should be less than or equal to 64"),
        ({"slug": "gpu-0", "gpus": 0}, "gpus: Input should be greater than or equal to 1"),
        ({"slug": "Bad Slug", "gpus": 1}, "slug"),
        ({"slug": "p", "gpus": 1, "partition": "gpu\n#SBATCH --uid=0"}, "partition"),
        ({"slug": "p", "gpus": 1, "default_runtime": "30:00:00"}, "default_runtime"),
        ({"slug": "p", "gpus": 1, "max_runtime": "eight hours"}, "HH:MM:SS"),
        ({"slug": "p", "gpus": 1, "colour": "red"}, "unknown key 'colour'; allowed: title, "),
        ({"gpus": 1}, "lacks"),
        ({"slug": "p", "gpus": 1, "gpu_type": "a100:1"}, "gpu_type: must be a GPU kind"),
    ],
)
def test_bad_profile_config_names_the_rule(entry, message):
    with pytest.raises(ProfileError, match=message):
        profile_from_config(entry)


def test_a_profile_fits_on_one_node_of_the_configured_size():
    with pytest.raises(ProfileError, match="gpus must be between 1 and 4 \\(one node\\), got 8"):
        load_profiles([{"slug": "gpu-8", "gpus": 8}], max_gpus_per_node=4)
    assert load_profiles([{"slug": "gpu-8", "gpus": 8}], max_gpus_per_node=8)[0].cores == 64


def test_duplicate_slugs_are_refused():
    with pytest.raises(ProfileError, match="duplicate"):
        load_profiles([{"slug": "a", "gpus": 1}, {"slug": "a", "gpus": 2}])


def test_profile_is_immutable():
    profile = ResourceProfile(slug="x", title="X", gpus=1)
    with pytest.raises(ValidationError, match="frozen"):
        profile.gpus = 4  # type: ignore[misc]


def test_profile_groups_decide_who_sees_it() -> None:
    open_to_all = ResourceProfile(slug="gpu-1", title="1 GPU", gpus=1)
    ml_only = ResourceProfile(slug="gpu-4", title="4 GPUs", gpus=4, groups=frozenset({"ml"}))
    assert visible_profiles([open_to_all, ml_only], ["ds"]) == [open_to_all]
    assert visible_profiles([open_to_all, ml_only], ["ds", "ml"]) == [open_to_all, ml_only]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"wrap": "id"}, "sbatch option 'wrap' is not allowed; allowed: account, qos"),
        ({"account": "ml\n#SBATCH --uid=0"}, "account value"),
        ({"qos": "a b"}, "qos value"),
        ({"constraint": "a100;rm"}, "constraint value"),
    ],
)
def test_extra_sbatch_options_are_allow_listed(options: dict[str, str], message: str) -> None:
    with pytest.raises(ProfileError, match=re.escape(message)):
        profile_from_config({"slug": "gpu-1", "gpus": 1, "sbatch_options": options})


def test_a_group_name_with_a_newline_is_refused() -> None:
    with pytest.raises(ProfileError, match="is not a group name"):
        profile_from_config({"slug": "gpu-1", "gpus": 1, "groups": ["ds\nx"]})


def test_a_profile_of_one_kind_says_so() -> None:
    slice_ = profile_from_config(
        {
            "slug": "slice",
            "gpus": 1,
            "gpu_type": "1g.10gb",
            "cores_per_gpu": 2,
            "mem_per_gpu_gb": 12,
        }
    )
    assert slice_.summary().startswith("1 GPU (1g.10gb) · 2 CPU cores · 12 GB memory")
    assert profile_from_config({"slug": "any", "gpus": 2}).gpu_type == ""
