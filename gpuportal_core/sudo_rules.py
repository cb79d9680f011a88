"""The one privilege of the portal's service account: a sudoers rule, rendered from this table.

The hub, its proxy, the portal and the hub's services run as an unprivileged account. What they
do as a cluster user (submit and cancel that user's jobs, write the job's token, read its output)
goes through sudo, and this module is the single list of it: every command, with a pattern for
its arguments (sudo's regular expressions, 1.9.10 and newer), only as members of the cluster's
groups, with only the named environment variables. Never as root, never a shell, never a
command that runs another (`env`, `sh -c`). The spawner and the portal build their command lines
so that they match these patterns; `gpuportal-admin sudoers` prints the rule for a site, and
`gpuportal-admin preflight` compares it with the installed one.

sbatch and srun run whatever job the user asks for, by design: the patterns narrow how they are
called, not what the user's job does. What the account cannot do is act as root, or as any
account outside the cluster's groups (munge, slurm, a service).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

# A path as the product passes it: absolute, no spaces (sudo joins the arguments with spaces).
_PATH = r"/[^ ]+"


@dataclass(frozen=True)
class UserCommand:
    """One program the service account runs as a cluster user, and why."""

    program: str
    args: str  # sudo's regular expression for the whole argument string, ^...$
    why: str


USER_COMMANDS: tuple[UserCommand, ...] = (
    UserCommand(
        "sbatch",
        r"^(--parsable|--test-only)( --comment=[^ ]+)?$",
        "submit a session's or a job's script (read from stdin) as its user",
    ),
    UserCommand("scancel", r"^[0-9]+(_[0-9]+)?$", "end a session or a job"),
    UserCommand(
        "srun",
        r"^--jobid=[0-9]+ --overlap .+$",
        "a shared TensorBoard, as a step inside the user's own session job",
    ),
    UserCommand(
        "squeue",
        r"^--steps --jobs=[0-9]+ --noheader --format=%i %j$",
        "find that step again after a hub restart (sites may hide others' jobs)",
    ),
    # Every read of a user's file is bounded in bytes: the last N bytes (tail -c, never -n,
    # which reads a file of no newline whole), or N bytes from an offset (dd count=).
    UserCommand(
        "tail",
        rf"^-c [0-9]+ --( {_PATH})+$",
        "read the end of a job's output and of a session's log in the user's home",
    ),
    UserCommand(
        "dd",
        rf"^if={_PATH} iflag=skip_bytes,count_bytes(,nofollow,nonblock)? skip=[0-9]+ "
        "count=[0-9]+ status=none$",
        "read a job's output from where its follower left off (gpuportal jobs ... --follow), "
        "a notebook job's report and a session's GPU readings (not through a link)",
    ),
    UserCommand(
        "test",
        rf"^-[dfrwx] {_PATH}( -a -[dfrwx] {_PATH})*$",
        "check a job's folder or script as the user sees it (homes may be root-squashed)",
    ),
    UserCommand("install", rf"^-d -m 0700 {_PATH}$", "make a job's private output or log folder"),
    UserCommand("tee", rf"^{_PATH}$", "write the job's token and TLS files (umask 077: 0600)"),
    UserCommand("rm", rf"^-f( {_PATH})+$", "remove them once the job has ended"),
)

# The variables sbatch and srun may take from the service's environment into the user's job:
# JupyterHub's own (Spawner.get_env) and ours. Nothing that changes how a program loads
# (LD_*, PYTHONPATH), and never the token, which goes in a 0600 file.
SESSION_ENV: frozenset[str] = frozenset(
    {
        "LANG",
        "LC_ALL",
        "CPU_GUARANTEE",
        "CPU_LIMIT",
        "MEM_GUARANTEE",
        "MEM_LIMIT",
        "JUPYTERHUB_ACTIVITY_INTERVAL",
        "JUPYTERHUB_ACTIVITY_URL",
        "JUPYTERHUB_ADMIN_ACCESS",
        "JUPYTERHUB_API_URL",
        "JUPYTERHUB_BASE_URL",
        "JUPYTERHUB_CLIENT_ID",
        "JUPYTERHUB_COOKIE_HOST_PREFIX_ENABLED",
        "JUPYTERHUB_COOKIE_OPTIONS",
        "JUPYTERHUB_DEBUG",
        "JUPYTERHUB_DEFAULT_URL",
        "JUPYTERHUB_DISABLE_USER_CONFIG",
        "JUPYTERHUB_HOST",
        "JUPYTERHUB_OAUTH_ACCESS_SCOPES",
        "JUPYTERHUB_OAUTH_CALLBACK_URL",
        "JUPYTERHUB_OAUTH_CLIENT_ALLOWED_SCOPES",
        "JUPYTERHUB_OAUTH_SCOPES",
        "JUPYTERHUB_PUBLIC_HUB_URL",
        "JUPYTERHUB_PUBLIC_URL",
        "JUPYTERHUB_ROOT_DIR",
        "JUPYTERHUB_SERVER_NAME",
        "JUPYTERHUB_SERVICE_PREFIX",
        "JUPYTERHUB_SERVICE_URL",
        "JUPYTERHUB_SINGLEUSER_APP",
        "JUPYTERHUB_SSL_CERTFILE",
        "JUPYTERHUB_SSL_CLIENT_CA",
        "JUPYTERHUB_SSL_KEYFILE",
        "JUPYTERHUB_USER",
        "GPUPORTAL_BOARD_IP",
        "GPUPORTAL_DASK_TAG",
        "GPUPORTAL_GPU_SAMPLE_SECONDS",
        "GPUPORTAL_LAB_STATIC",
        "GPUPORTAL_SESSION_RUNTIME",
        "GPUPORTAL_SHARED_DIR",
        "GPUPORTAL_TEMPLATES_DIR",
    }
)

_NAME = re.compile(r"^[a-z_][a-z0-9_.-]*$")


class RuleError(ValueError):
    """A value that cannot go into a sudoers file as given; the message says which."""


# What sudo sets itself for the target user (env_reset; PATH from its secure_path, and it
# refuses to keep the caller's): never passed, never missed.
SET_BY_SUDO = frozenset({"HOME", "LOGNAME", "MAIL", "PATH", "SHELL", "USER"})


def split_env(env: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """What of env may pass into a job (SESSION_ENV), and the names left out (but for those
    sudo sets to the user's own)."""
    kept = {name: value for name, value in env.items() if name in SESSION_ENV}
    return kept, sorted(set(env) - SESSION_ENV - SET_BY_SUDO)


def render(
    *,
    service_user: str,
    user_groups: Iterable[str],
    programs: Mapping[str, str],
    alias: str = "GPUPORTAL_USERS",
) -> str:
    """The sudoers file: service_user may run USER_COMMANDS as members of user_groups.

    programs: each program's absolute path on this host (`sudo` matches the path it resolves).
    """
    groups = sorted(set(user_groups))
    if not _NAME.match(service_user) or service_user == "root":
        raise RuleError(f"the service account {service_user!r} is not a valid non-root user name")
    if not groups:
        raise RuleError("name at least one group of cluster users (the hub's allowed groups)")
    for group in groups:
        if not _NAME.match(group):
            raise RuleError(f"{group!r} is not a group name sudoers can hold")
    for command in USER_COMMANDS:
        path = programs.get(command.program, "")
        if not path.startswith("/") or " " in path:
            raise RuleError(f"no absolute path for {command.program} (got {path!r})")
    lines = [
        "# The GPU portal's service account: what it may run, as whom (gpuportal-admin sudoers).",
        "# Generated; change the hub's settings and generate it again rather than edit it.",
        f"Defaults:{service_user} env_reset, !lecture, umask=0077, !setenv",
        f'Defaults:{service_user} env_keep = "{" ".join(sorted(SESSION_ENV))}"',
        f"Runas_Alias {alias} = {runas_list(groups)}",
    ]
    for command in USER_COMMANDS:
        lines.append(f"# {command.program}: {command.why}")
        lines.append(f"{service_user} ALL = ({alias}) NOPASSWD: {command_line(command, programs)}")
    return "\n".join(lines) + "\n"


def runas_list(user_groups: Iterable[str]) -> str:
    """The Runas list of the rule, as sudoers writes it and `sudo -l` prints it back."""
    return ", ".join("%" + group for group in sorted(set(user_groups)))


def command_line(command: UserCommand, programs: Mapping[str, str]) -> str:
    return f"{programs[command.program]} {command.args}"


def listed_rules(
    *, user_groups: Iterable[str], programs: Mapping[str, str]
) -> set[tuple[str, str]]:
    """(Runas list, command with its arguments) of each rule, as `sudo -l -U` lists them once
    installed: what the preflight compares the host's rules with."""
    runas = runas_list(user_groups)
    return {(runas, command_line(command, programs)) for command in USER_COMMANDS}


def allows(argv: Sequence[str]) -> bool:
    """Whether the rule lets the service account run argv (the program first, by name or path)
    as a cluster user: the tests hold every command line the product builds to it."""
    if not argv:
        return False
    program = argv[0].rsplit("/", 1)[-1]
    command = next((c for c in USER_COMMANDS if c.program == program), None)
    # sudo matches the arguments joined by single spaces, with POSIX extended expressions; the
    # ones above mean the same to Python's re.
    return command is not None and re.fullmatch(command.args, " ".join(argv[1:])) is not None
