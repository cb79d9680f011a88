"""Files the job tests run, put in a user's ~/jobs as that user would."""

from __future__ import annotations

import subprocess
from pathlib import Path

DATA = Path(__file__).parent / "jobs_data"


def install_job_files(user: str) -> None:
    subprocess.run(["sudo", "-u", user, "mkdir", "-p", f"/home/{user}/jobs"], check=True)
    for path in DATA.iterdir():
        mode = "755" if path.suffix == ".sh" else "644"
        subprocess.run(
            ["install", "-o", user, "-m", mode, str(path), f"/home/{user}/jobs/{path.name}"],
            check=True,
        )
