"""A software environment's container image run by podman, rootless, as the user inside the
Slurm job: JupyterLab (or a job's task) in the image, with the job's GPUs, the user's home and
project areas, the node's names, and the job's environment; nothing of it left after the job.

    python -m gpuportal_session.container --image IMAGE [--mount DIR]... -- COMMAND...

IMAGE is an OCI archive an admin published (an absolute path: loaded once into the user's own
storage, and again when the file changes) or a registry reference (pulled when missing). It
runs with the node's session venv, outside the image; the image brings its own Python, with
JupyterLab and gpuportal_session (deploy/docker/session.Containerfile).

Why each `podman run` option: see `run_argv`. Why not `exec podman`: the container's processes
are conmon's children, not the job's, so Slurm's SIGTERM (Stop, the time limit, scancel) would
end podman and leave the container running; this process forwards the signal, then stops and
removes the container itself within Slurm's KillWait.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuportal_core.capacity import expand_hostlist

PODMAN = os.environ.get("GPUPORTAL_PODMAN", "podman")
GRES_CONF = Path(os.environ.get("GPUPORTAL_GRES_CONF", "/etc/slurm/gres.conf"))
CDI_DIRS = (Path("/etc/cdi"), Path("/var/run/cdi"))
# Device files every NVIDIA container needs besides the GPUs' own, where the node has them.
NVIDIA_CONTROL = (
    "/dev/nvidiactl",
    "/dev/nvidia-uvm",
    "/dev/nvidia-uvm-tools",
    "/dev/nvidia-modeset",
)
# What of the job's environment goes in (podman takes a trailing * as "every name so
# starting"): Slurm's, the GPUs' as Slurm set them, the hub's, the portal's, Dask's (a worker's
# job finds its session's TLS set-up there), the locale.
PASSED_ENV = (
    "SLURM_*",
    "SLURMD_NODENAME",
    "CUDA_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "ROCR_VISIBLE_DEVICES",
    "JUPYTERHUB_*",
    "JPY_*",
    "GPUPORTAL_*",
    "DASK_*",
    "MEM_LIMIT",
    "CPU_LIMIT",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "TZ",
    "MASTER_ADDR",
    "MASTER_PORT",
)
# The node's Slurm client set-up, mounted read-only where it exists, so that srun, sbatch and
# squeue in the image (its own Slurm commands, of the cluster's release) reach the cluster as
# the job's: the configuration (slurm.conf, plugstack.conf, gres.conf) and munged's socket,
# which vouches for the user (munged reads the caller's uid from the socket, the host's).
MUNGE_SOCKET_DIR = os.environ.get("GPUPORTAL_MUNGE_SOCKET_DIR", "/run/munge")
# The environment variable that carries, inside the image, the command prefix that runs a
# task of srun (which runs on the node, outside any image) in the same image again:
#   srun $GPUPORTAL_IN_IMAGE python train.py
IN_IMAGE_ENV = "GPUPORTAL_IN_IMAGE"
# Seconds between the container's SIGTERM and its SIGKILL: within Slurm's KillWait (5 s on the
# local cluster, 30 s by default), with room for `podman rm` after it.
STOP_GRACE_S = 2


class ContainerError(Exception):
    """What the job's log should say instead of a traceback."""


@dataclass(frozen=True)
class GresFile:
    index: int
    path: str


def gres_files(gres_conf: str, node: str) -> list[GresFile]:
    """The node's GPU device files, in Slurm's index order (the order gres.conf lists them):
    empty where the node's GPUs are found by AutoDetect (then /dev/nvidiaN holds GPU N)."""
    files: list[str] = []
    for raw in gres_conf.splitlines():
        line = raw.split("#", 1)[0].strip()
        fields = dict(re.findall(r"(\w+)=(\S+)", line))
        if fields.get("Name") != "gpu" or "File" not in fields:
            continue
        if "NodeName" in fields and node not in expand_hostlist(fields["NodeName"]):
            continue
        files.extend(expand_hostlist(fields["File"]))
    return [GresFile(index, path) for index, path in enumerate(files)]


def job_gpu_indices(env: Mapping[str, str]) -> list[int]:
    """The GPUs Slurm gave this step (a task of srun) or job (the batch script)."""
    listed = env.get("SLURM_STEP_GPUS") or env.get("SLURM_JOB_GPUS") or ""
    return [int(part) for part in listed.split(",") if part.strip().isdigit()]


def cdi_has_nvidia(dirs: Sequence[Path] = CDI_DIRS) -> bool:
    """Whether the node describes its GPUs for containers (CDI, made by the NVIDIA Container
    Toolkit's `nvidia-ctk cdi generate`): podman then injects the driver's libraries too."""
    for folder in dirs:
        for spec in sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.json")):
            with contextlib.suppress(OSError):
                if "nvidia.com/gpu" in spec.read_text(errors="replace"):
                    return True
    return False


def device_options(
    indices: Sequence[int], files: Sequence[GresFile], *, cdi: bool, exists: object = os.path.exists
) -> list[str]:
    """`--device` options for the job's GPUs: by CDI name where the node has a CDI spec, else
    their device files (gres.conf's, or /dev/nvidiaN) and the driver's control files."""
    if not indices:
        return []
    if cdi:
        return [f"--device=nvidia.com/gpu={index}" for index in indices]
    by_index = {file.index: file.path for file in files}
    paths = [by_index.get(index, f"/dev/nvidia{index}") for index in indices]
    present = [path for path in NVIDIA_CONTROL if exists(path)]  # type: ignore[operator]
    return [f"--device={path}" for path in [*paths, *present]]


def mounts(env: Mapping[str, str], extra: Sequence[str], *, cwd: str) -> list[str]:
    """What the container sees of the node's files, each at its own path: the user's home,
    the shared data area, the project areas, the working folder, the hub's TLS files where
    they are not under those, and the node's names (/etc/hosts, as a job outside sees them)."""
    wanted: list[str] = []
    for path in (env.get("HOME", ""), env.get("GPUPORTAL_SHARED_DIR", ""), *extra, cwd):
        if path and os.path.isdir(path):
            wanted.append(os.path.realpath(path))
    for name in ("JUPYTERHUB_SSL_KEYFILE", "JUPYTERHUB_SSL_CERTFILE", "JUPYTERHUB_SSL_CLIENT_CA"):
        if env.get(name):
            wanted.append(os.path.dirname(os.path.realpath(env[name])))
    kept: list[str] = []
    for path in sorted(set(wanted), key=len):
        if not any(path == top or path.startswith(top.rstrip("/") + "/") for top in kept):
            kept.append(path)
    options = [f"--volume={path}:{path}" for path in kept]
    options += [f"--volume={name}:{name}:ro" for name in ("/etc/hosts", "/etc/resolv.conf")]
    options += [f"--volume={path}:{path}:ro" for path in slurm_client_paths(env)]
    return options


def slurm_client_paths(env: Mapping[str, str]) -> list[str]:
    """The Slurm configuration's folder (SLURM_CONF's, or /etc/slurm) and munged's socket
    folder, those of them the node has."""
    conf = env.get("SLURM_CONF") or "/etc/slurm/slurm.conf"
    wanted = (os.path.dirname(os.path.realpath(conf)), MUNGE_SOCKET_DIR)
    return [path for path in wanted if os.path.isdir(path)]


def in_image_prefix(image: str, extra_mounts: Sequence[str]) -> str:
    """The command, for the node outside the image, that runs what follows it in the image:
    this module, with the node's Python that runs it now."""
    argv = [sys.executable, "-m", "gpuportal_session.container", "--image", image]
    for mount in extra_mounts:
        argv += ["--mount", mount]
    return shlex.join([*argv, "--"])


def container_name(env: Mapping[str, str]) -> str:
    """One per job, or per task of a job's step (each task of srun runs one)."""
    name = f"gpuportal-job-{env.get('SLURM_JOB_ID', os.getpid())}"
    if "SLURM_STEP_ID" in env and "SLURM_PROCID" in env:
        name += f"-{env['SLURM_STEP_ID']}-{env['SLURM_PROCID']}"
    return name


def run_argv(
    image: str,
    command: Sequence[str],
    *,
    name: str,
    devices: Sequence[str],
    volumes: Sequence[str],
    cwd: str,
    settings: Mapping[str, str] | None = None,
) -> list[str]:
    return [
        PODMAN,
        "run",
        "--rm",
        f"--name={name}",
        # The user is the user inside too (uid, gid, home), not root of a user namespace:
        # files written in the home are theirs, and JupyterLab runs as they.
        "--userns=keep-id",
        # The node's network and name: JupyterLab listens on the node's address, where the hub
        # connects, and the port callback and the hub's API are reached as from the job.
        "--network=host",
        "--uts=host",
        # A small init as pid 1: it passes SIGTERM on to JupyterLab and reaps its children.
        "--init",
        # Signals reach the container through `podman stop` (supervise), not podman's proxy.
        "--sig-proxy=false",
        # The container's output is the job's output file, unbuffered by conmon.
        "--log-driver=passthrough",
        f"--workdir={cwd}",
        *[f"--env={name_}" for name_ in PASSED_ENV],
        *[f"--env={key}={value}" for key, value in (settings or {}).items()],
        *devices,
        *volumes,
        image,
        *command,
    ]


def podman_env(env: Mapping[str, str]) -> dict[str, str]:
    """Rootless podman needs a runtime folder of the user's own; a Slurm job has none (no
    login session made one), so it gets one in /tmp, the user's alone. And a job has no session
    bus: podman then starts one of its own (dbus-launch), which outlived the job here; it needs
    none (cgroupfs, events in a file), so it is told there is none."""
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if not runtime or not os.access(runtime, os.W_OK):
        runtime = f"/tmp/gpuportal-podman-{os.getuid()}"
        os.makedirs(runtime, mode=0o700, exist_ok=True)
    bus = env.get("DBUS_SESSION_BUS_ADDRESS") or "disabled:"
    return {**env, "XDG_RUNTIME_DIR": runtime, "DBUS_SESSION_BUS_ADDRESS": bus}


def _podman(args: Sequence[str], env: Mapping[str, str], *, check: bool = True) -> str:
    result = subprocess.run(
        [PODMAN, *args], env=dict(env), capture_output=True, text=True, check=False
    )
    if check and result.returncode != 0:
        detail = (result.stderr.strip().splitlines() or ["no message"])[-1]
        raise ContainerError(f"podman {args[0]} failed: {detail}")
    return result.stdout.strip()


def archive_tag(path: str) -> str:
    """The name an archive's image has in the user's storage: its file's name, and a digest of
    its path, size and time, so that a new file of the same name is loaded again."""
    stat = os.stat(path)
    stamp = hashlib.sha256(f"{path}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:12]
    stem = re.sub(r"[^a-z0-9._-]+", "-", Path(path).name.lower().removesuffix(".tar")).strip(".-")
    return f"localhost/gpuportal-archive/{stem or 'image'}:{stamp}"


def resolve_image(image: str, env: Mapping[str, str]) -> str:
    """The image to run: an archive loaded into the user's storage (once per version), or a
    registry reference as is."""
    if not image.startswith("/"):
        return image
    if not os.access(image, os.R_OK):
        raise ContainerError(f"the image archive {image} is missing or not readable by you")
    tag = archive_tag(image)
    if subprocess.run([PODMAN, "image", "exists", tag], env=dict(env), check=False).returncode:
        print(f"[container] loading {image} into your podman storage (once)", flush=True)
        image_id = _podman(["pull", "-q", f"oci-archive:{image}"], env).splitlines()[-1]
        _podman(["tag", image_id, tag], env)
        # Earlier versions of the same archive: gone from the node's disk (one in use by a
        # running session stays, refused by podman).
        repository = tag.rsplit(":", 1)[0]
        names = "{{.Repository}}:{{.Tag}}"
        listed = _podman(
            ["images", "--format", names, "--filter", f"reference={repository}"], env, check=False
        )
        for old in set(listed.split()) - {tag}:
            _podman(["rmi", old], env, check=False)
    return tag


def run(image: str, command: Sequence[str], extra_mounts: Sequence[str]) -> int:
    env = podman_env(os.environ)
    cwd = os.getcwd()
    node = env.get("SLURMD_NODENAME", "")
    gres_conf = GRES_CONF.read_text() if GRES_CONF.is_file() else ""
    devices = device_options(
        job_gpu_indices(env), gres_files(gres_conf, node), cdi=cdi_has_nvidia()
    )
    name = container_name(env)
    argv = run_argv(
        resolve_image(image, env),
        command,
        name=name,
        devices=devices,
        volumes=mounts(env, extra_mounts, cwd=cwd),
        cwd=cwd,
        settings={IN_IMAGE_ENV: in_image_prefix(image, extra_mounts)},
    )
    # A container of this name left by an earlier try of the same job (a requeue).
    _podman(["rm", "--force", "--ignore", name], env, check=False)
    return supervise(argv, name, env)


def supervise(argv: Sequence[str], name: str, env: Mapping[str, str]) -> int:
    """Runs `podman run` and, on the job's end, stops and removes the container itself.

    Slurm signals every process of the job at once (Stop, scancel, the time limit: SIGCONT,
    SIGTERM, then SIGKILL after KillWait): podman's own passing of signals into the container
    was seen to fail then (its `runc kill` was itself terminated), JupyterLab ran on, and
    SIGKILL left the container behind. So podman passes nothing (--sig-proxy=false), and this
    process, once signalled, runs `podman stop` (SIGTERM to the container's init, SIGKILL
    after STOP_GRACE_S) and `podman rm` as new processes, which Slurm's signals did not reach.
    """
    ending: list[int] = []

    def note(signum: int, _frame: object) -> None:
        ending.append(signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, note)
    child = subprocess.Popen(argv, env=dict(env))
    try:
        while child.poll() is None and not ending:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=0.2)
        if ending:
            print(f"[container] signal {ending[0]}: stopping {name}", flush=True)
            _podman(["stop", f"--time={STOP_GRACE_S}", "--ignore", name], env, check=False)
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=2)
        return child.returncode if child.returncode is not None else 128 + ending[0]
    finally:
        _podman(["rm", "--force", "--ignore", "--time=0", name], env, check=False)
        if child.poll() is None:
            child.kill()
        end_pause_process(env)


def end_pause_process(env: Mapping[str, str]) -> None:
    """Rootless podman keeps a pause process per user and runtime folder (`catatonit -P`, it
    holds the user's namespace) after its last container. On a node a job's end should leave no
    process of the user (Slurm sites check; the tests do): once the user has no container left
    here, it goes too, and the next start makes a new one."""
    if _podman(["ps", "--all", "--quiet"], env, check=False):
        return  # another job of the user on this node still runs one
    pid_file = Path(env["XDG_RUNTIME_DIR"]) / "libpod" / "tmp" / "pause.pid"
    with contextlib.suppress(OSError, ValueError):
        os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuportal_session.container")
    parser.add_argument("--image", required=True, help="an OCI archive's path or a reference")
    parser.add_argument("--mount", action="append", default=[], help="a folder to mount too")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run in the image after --")
    try:
        return run(args.image, command, args.mount)
    except ContainerError as error:
        print(f"[container] error: {error}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
