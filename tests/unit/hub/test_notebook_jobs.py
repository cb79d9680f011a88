"""The hub's side of notebook jobs (gpuportal_spawner.notebook_jobs): a session's request for a
notebook job becomes the portal's job request, with the profile's GPUs and time and the
environment as jobs name one; a profile or environment the user is not offered is refused at
its field before anything reaches the portal."""

from __future__ import annotations

import pytest

from gpuportal_core.environments import SoftwareEnvironment
from gpuportal_core.profiles import default_profile_config, load_profiles
from gpuportal_spawner.notebook_definitions import unnest
from gpuportal_spawner.notebook_jobs import Refused, choices, job_request

PROFILES = load_profiles(default_profile_config())
ENVIRONMENTS = [
    SoftwareEnvironment(slug="torch", title="PyTorch", kind="venv", prefix="/opt/envs/torch"),
    SoftwareEnvironment(
        slug="tools",
        title="Tools",
        kind="modules",
        modules=("cuda/12.4",),
        profiles=frozenset({"gpu-1"}),
    ),
    SoftwareEnvironment(
        slug="image", title="Image", kind="container", engine="podman", image="/srv/images/s.tar"
    ),
]
ASKED = {
    "name": "overnight",
    "notebook": "/home/alice/train.ipynb",
    "profile": "gpu-2",
    "parameters": ["lr=0.1"],
}


def test_the_profile_gives_the_gpus_the_partition_and_the_default_time() -> None:
    assert job_request(ASKED, PROFILES, ENVIRONMENTS) == {
        "name": "overnight",
        "launcher": "notebook",
        "nodes": 1,
        "gpus_per_node": 2,
        "gpu_type": "",
        "runtime": "08:00:00",
        "partition": "gpu",
        "script": "/home/alice/train.ipynb",
        "args": ["lr=0.1"],
    }


def test_an_environment_becomes_the_jobs_environment_or_container() -> None:
    venv = job_request({**ASKED, "environment": "torch"}, PROFILES, ENVIRONMENTS)
    assert venv["environment"] == {"kind": "venv", "prefix": "/opt/envs/torch", "modules": []}
    image = job_request(
        {**ASKED, "environment": "image", "runtime": "02:00:00"}, PROFILES, ENVIRONMENTS
    )
    assert image["container"] == {"kind": "podman", "image": "/srv/images/s.tar"}
    assert image["runtime"] == "02:00:00" and "environment" not in image


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (
            {"profile": "gpu-8"},
            "profile",
            "gpu-8 is not one you may use (yours: gpu-1, gpu-2, gpu-4)",
        ),
        ({"profile": ""}, "profile", "no profile is not one you may use"),
        (
            {"environment": "tools"},
            "environment",
            "tools is not offered with gpu-2 (offered: torch, image)",
        ),
        ({"environment": "nope"}, "environment", "nope is not offered with gpu-2"),
    ],
)
def test_what_the_user_is_not_offered_is_refused_at_its_field(
    change: dict[str, str], field: str, words: str
) -> None:
    with pytest.raises(Refused) as refused:
        job_request({**ASKED, **change}, PROFILES, ENVIRONMENTS)
    assert refused.value.field == field
    assert words in refused.value.message


def test_the_choices_say_what_each_profile_gives() -> None:
    offered = choices(PROFILES[:1], ENVIRONMENTS[:2], session_venv="/opt/envs/torch")
    assert offered["profiles"] == [
        {
            "slug": "gpu-1",
            "title": PROFILES[0].title,
            "summary": "1 GPU · 8 CPU cores · 48 GB memory · default 8 h, up to 24 h",
            "gpus": 1,
            "gpu_type": "",
            "default_runtime": "08:00:00",
            "max_runtime": "24:00:00",
        }
    ]
    assert offered["environments"] == [
        {"slug": "torch", "title": "PyTorch", "kind": "venv", "profiles": [], "session_venv": True},
        {
            "slug": "tools",
            "title": "Tools",
            "kind": "modules",
            "profiles": ["gpu-1"],
            "session_venv": False,
        },
    ]


def test_a_definitions_refusal_names_the_jobs_fields_as_for_a_job() -> None:
    answer = {
        "detail": [
            {"loc": ["body", "job", "args"], "msg": "lr: '[1,' is not a JSON or YAML value"},
            {"loc": ["body", "schedule"], "msg": "'x' is not a cron schedule"},
        ]
    }
    assert [item["loc"] for item in unnest(answer)["detail"]] == [
        ["body", "args"],
        ["body", "schedule"],
    ]
    assert unnest({"detail": "Slurm said no"}) == {"detail": "Slurm said no"}
