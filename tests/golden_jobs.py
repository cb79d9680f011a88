"""The fixed inputs of the golden sbatch scripts, shared by unit and integration tests."""

from pathlib import Path

from spawner.core.profiles import default_profile_config, load_profiles
from spawner.core.request import parse_user_options
from spawner.core.sbatch import SingleUserJob

GOLDEN_DIR = Path(__file__).parent / "golden"
PROFILES = load_profiles(default_profile_config())
SHIPPED_SLUGS = [p.slug for p in PROFILES]


def golden_job(slug: str, user: str = "alice") -> SingleUserJob:
    request = parse_user_options({"profile": slug}, PROFILES)
    return SingleUserJob.from_request(
        request,
        user=user,
        output=f"/home/{user}/.jupyterhub-logs/jupyter-%j.log",
        workdir=f"/home/{user}",
        export_vars=["PATH", "JUPYTERHUB_API_URL", "HOME", "USER"],
        command=[
            "gpuportal-singleuser",
            "jupyterhub-singleuser",
            "--SingleUserNotebookApp.default_url=/lab",
        ],
        venv="/opt/gpuportal/venv",
        token_file=f"/home/{user}/.jupyterhub-logs/token-default",
    )


def golden_path(slug: str) -> Path:
    return GOLDEN_DIR / f"singleuser-{slug}.sh"
