import re

import pytest

from gpuportal_core.environments import EnvironmentSpecError, SoftwareEnvironment
from gpuportal_core.profiles import ResourceProfile
from gpuportal_core.request import InvalidRequest, parse_user_options
from gpuportal_core.sbatch import singleuser_command

GPU1 = ResourceProfile(slug="gpu-1", title="1 GPU", gpus=1)
GPU4 = ResourceProfile(slug="gpu-4", title="4 GPUs", gpus=4)
SESSION = SoftwareEnvironment(slug="session", title="Session", kind="venv", prefix="/opt/venv")
TOOLS = SoftwareEnvironment(
    slug="tools",
    title="Tools",
    kind="modules",
    modules=("cuda/12.4",),
    profiles=frozenset({"gpu-4"}),
)


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"kind": "nix"}, "kind", "must be one of venv, conda, modules, container"),
        ({"kind": "venv", "prefix": "relative/path"}, "prefix", "absolute path"),
        ({"kind": "venv", "prefix": "/opt/x; rm -rf /"}, "prefix", "absolute path"),
        ({"kind": "modules"}, "modules", "at least one module"),
        ({"kind": "modules", "modules": ("cuda 12",)}, "modules", "'cuda 12'"),
        ({"kind": "modules", "modules": ("$(id)",)}, "modules", "'$(id)'"),
        ({"kind": "container", "image": "ubuntu"}, "image", "docker://"),
        (
            {"kind": "container", "engine": "docker", "image": "/i.sif"},
            "engine",
            "apptainer, podman",
        ),
        # podman: an archive's path or a registry reference, nothing a shell would read.
        ({"kind": "container", "engine": "podman", "image": "/i.sif"}, "image", "OCI archive"),
        ({"kind": "container", "engine": "podman", "image": "ubuntu"}, "image", "registry"),
        (
            {"kind": "container", "engine": "podman", "image": "/srv/i.tar;id"},
            "image",
            "OCI archive",
        ),
    ],
)
def test_each_kind_has_its_rule(fields: dict[str, object], field: str, message: str) -> None:
    with pytest.raises(EnvironmentSpecError, match=re.escape(message)) as caught:
        SoftwareEnvironment(slug="e", title="E", **fields)  # type: ignore[arg-type]
    assert caught.value.field == field


@pytest.mark.parametrize(
    "image",
    [
        "/srv/gpuportal-images/gpuportal-session.tar",
        "registry.example.org/team/session:1",
        "registry.example.org:5000/team/session@sha256:" + "a" * 64,
    ],
)
def test_podman_takes_an_archive_or_a_registry_reference(image: str) -> None:
    env = SoftwareEnvironment(slug="s", title="S", kind="container", engine="podman", image=image)
    assert env.summary() == f"container {image} (podman)"


def test_the_profiles_first_environment_is_the_default() -> None:
    request = parse_user_options({"profile": "gpu-4"}, [GPU1, GPU4], [SESSION, TOOLS])
    assert request.environment == SESSION
    request = parse_user_options(
        {"profile": "gpu-4", "environment": "tools"}, [GPU1, GPU4], [SESSION, TOOLS]
    )
    assert request.environment == TOOLS
    assert request.as_user_options()["environment"] == "tools"


def test_an_environment_not_offered_with_the_profile_is_refused() -> None:
    with pytest.raises(
        InvalidRequest, match="'tools' is not offered with gpu-1; choose one of: session"
    ):
        parse_user_options(
            {"profile": "gpu-1", "environment": "tools"}, [GPU1, GPU4], [SESSION, TOOLS]
        )


def test_naming_an_environment_when_none_is_offered_is_refused() -> None:
    with pytest.raises(InvalidRequest, match="gpu-1 offers no software environments"):
        parse_user_options({"profile": "gpu-1", "environment": "tools"}, [GPU1], [TOOLS])


def test_jupyterlab_runs_with_the_python_of_the_environment() -> None:
    own = singleuser_command(["--x"], environment=SESSION, session_venv="/opt/venv")
    assert own == ["python", "-m", "gpuportal_session.singleuser", "jupyterhub-singleuser", "--x"]
    # Modules go on top of the session venv, whose Python is named in full.
    modules = singleuser_command([], environment=TOOLS, session_venv="/opt/venv")
    assert modules[0] == "/opt/venv/bin/python"
    assert (
        singleuser_command([], environment=None, session_venv="/opt/venv")[0]
        == "/opt/venv/bin/python"
    )
