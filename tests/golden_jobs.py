"""The fixed inputs of the golden sbatch scripts, shared by unit and integration tests.

One golden script per shipped profile, and one per kind of software environment (on gpu-1).
"""

from pathlib import Path

from gpuportal_core.batch import BatchJob, Container
from gpuportal_core.environments import SoftwareEnvironment
from gpuportal_core.launchers import LAUNCHERS
from gpuportal_core.profiles import default_profile_config, load_profiles
from gpuportal_core.request import parse_user_options
from gpuportal_core.sbatch import SingleUserJob, singleuser_command
from gpuportal_core.tags import session_tag

GOLDEN_DIR = Path(__file__).parent / "golden"
PROFILES = load_profiles(default_profile_config())
SHIPPED_SLUGS = [p.slug for p in PROFILES]
ENVIRONMENTS = {
    "venv": SoftwareEnvironment(
        slug="analysis", title="Analysis", kind="venv", prefix="/opt/gpuportal/envs/analysis"
    ),
    "conda": SoftwareEnvironment(
        slug="conda-torch", title="Torch", kind="conda", prefix="/opt/conda/envs/torch"
    ),
    "modules": SoftwareEnvironment(
        slug="tools", title="Tools", kind="modules", modules=("demo-tools/1.0", "cuda/12.4")
    ),
    "container": SoftwareEnvironment(
        slug="ngc", title="NGC", kind="container", image="/opt/images/pytorch-24.10.sif"
    ),
    "podman": SoftwareEnvironment(
        slug="session-image",
        title="Session image",
        kind="container",
        engine="podman",
        image="/srv/gpuportal-images/gpuportal-session.tar",
    ),
}
# What the goldens cover: each profile, then each environment kind on gpu-1.
GOLDEN_CASES = [(slug, "") for slug in SHIPPED_SLUGS] + [("gpu-1", kind) for kind in ENVIRONMENTS]


def golden_job(slug: str, user: str = "alice", environment: str = "") -> SingleUserJob:
    env = ENVIRONMENTS[environment] if environment else None
    options = {"profile": slug, **({"environment": env.slug} if env else {})}
    request = parse_user_options(options, PROFILES, [env] if env else [])
    return SingleUserJob.from_request(
        request,
        user=user,
        output=f"/home/{user}/.jupyterhub-logs/jupyter-%j.log",
        workdir=f"/home/{user}",
        export_vars=["PATH", "JUPYTERHUB_API_URL", "HOME", "USER"],
        command=singleuser_command(
            ["--SingleUserNotebookApp.default_url=/lab"],
            environment=request.environment,
            session_venv="/opt/gpuportal/venv",
        ),
        venv="/opt/gpuportal/venv",
        token_file=f"/home/{user}/.jupyterhub-logs/token-default",
        tag=str(session_tag(hub="local", user=user, server="")),
        container_mounts=["/projects"],
    )


def golden_path(slug: str, environment: str = "") -> Path:
    suffix = f"-{environment}" if environment else ""
    return GOLDEN_DIR / f"singleuser-{slug}{suffix}.sh"


# Multi-node jobs: every launcher bare, in a Pyxis container and in an Apptainer image.
CONTAINERS = {
    "": None,
    "pyxis": Container("pyxis", "nvcr.io#nvidia/pytorch:24.10-py3"),
    "apptainer": Container("apptainer", "/opt/images/pytorch-24.10.sif"),
    "podman": Container("podman", "/srv/gpuportal-images/gpuportal-session.tar"),
}
BATCH_CASES = [(launcher, container) for launcher in LAUNCHERS for container in CONTAINERS]


def golden_batch_job(launcher: str, container: str = "", user: str = "alice") -> BatchJob:
    # A notebook job runs one notebook on one node, its arguments name=value parameters.
    notebook = launcher == "notebook"
    return BatchJob(
        user=user,
        name="train-resnet",
        launcher=launcher,
        nodes=1 if notebook else 2,
        gpus_per_node=2,
        cores_per_gpu=8,
        mem_per_gpu_gb=48,
        runtime=2 * 3600,
        partition="gpu",
        script=f"/home/{user}/project/train.{'ipynb' if notebook else 'py'}",
        args=("epochs=3", "lr=0.1") if notebook else ("--epochs", "3", "--lr=0.1"),
        workdir=f"/home/{user}/project",
        output=f"/home/{user}/.gpuportal-jobs/%x-%j.out",
        environment=None if container else ENVIRONMENTS["venv"],
        container=CONTAINERS[container],
        allowed_roots=(f"/home/{user}", "/projects"),
        session_venv="/opt/gpuportal/venv",
    )


def golden_batch_path(launcher: str, container: str = "") -> Path:
    suffix = f"-{container}" if container else ""
    return GOLDEN_DIR / f"batch-{launcher}{suffix}.sh"
