"""`gpuportal`: sessions, jobs, capacity and (for admins) profiles from the command line.

    gpuportal --help
    gpuportal session start --profile gpu-2 --wait
    gpuportal jobs submit --launcher torchrun --nodes 2 --gpus-per-node 4 \\
        --script ~/train.py --arg=--epochs --arg=10 --follow

The hub's URL comes from --url or $GPUPORTAL_URL; the token (from the hub's Token page) from
--token, $GPUPORTAL_TOKEN or ~/.config/gpuportal/token. Every command takes --json.
Shell completion: eval "$(_GPUPORTAL_COMPLETE=bash_source gpuportal)" (zsh_source, fish_source).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click
import truststore

from gpuportal_cli import jobs_commands, session_commands
from gpuportal_cli.client import TOKEN_FILE, Client, CliError, find_token
from gpuportal_cli.output import as_json, table


class Context:
    def __init__(self, url: str, token: str | None, json_out: bool) -> None:
        self.url = url
        self._token = token
        self.json = json_out
        self._client: Client | None = None

    @property
    def client(self) -> Client:
        if self._client is None:
            self._client = Client(self.url, find_token(self._token))
            say_notices(self._client)
        return self._client


def say_notices(client: Client) -> None:
    """The cluster team's notices showing now, on stderr before the command's own output (so
    that --json output stays what scripts read); none when the hub cannot say."""
    try:
        notices = client.pages("GET", "notices")
    except CliError:
        return
    for notice in notices if isinstance(notices, list) else []:
        label = "Notice" if notice.get("level") == "info" else f"Notice ({notice.get('level')})"
        click.echo(
            click.style(f"{label}: ", fg="yellow", bold=True) + str(notice.get("text")), err=True
        )


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--url",
    envvar="GPUPORTAL_URL",
    default="https://127.0.0.1:8000",
    show_default=True,
    help="The hub's address ($GPUPORTAL_URL).",
)
@click.option("--token", envvar="GPUPORTAL_TOKEN", help="A hub API token ($GPUPORTAL_TOKEN).")
@click.option("--json", "json_out", is_flag=True, help="Print JSON, for scripts.")
@click.pass_context
def cli(ctx: click.Context, url: str, token: str | None, json_out: bool) -> None:
    """The GPU portal: JupyterLab sessions and batch jobs on the cluster."""
    ctx.obj = Context(url, token, json_out)


@cli.command()
@click.pass_obj
def login(obj: Context) -> None:
    """Keep a token from the hub's Token page (asked for, not echoed) in
    ~/.config/gpuportal/token, readable by you alone, once the hub has accepted it: later
    commands need no --token."""
    token = click.prompt("A token from the hub's Token page", hide_input=True).strip()
    me = Client(obj.url, token).me()
    TOKEN_FILE.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with os.fdopen(os.open(TOKEN_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(token + "\n")
    TOKEN_FILE.chmod(0o600)  # a file there before keeps its mode otherwise
    click.echo(f"Signed in to {obj.url} as {me['name']}; the token is in {TOKEN_FILE}.")


@cli.command()
@click.pass_obj
def whoami(obj: Context) -> None:
    """Who the token belongs to, and their groups."""
    me = obj.client.me()
    if obj.json:
        as_json(me)
    else:
        admin = " (hub admin)" if me.get("admin") else ""
        click.echo(f"{me['name']}{admin}, groups: {', '.join(me.get('groups', [])) or 'none'}")


@cli.command()
@click.pass_obj
def capacity(obj: Context) -> None:
    """Free GPUs now, and when each profile could start."""
    answer: dict[str, Any] = obj.client.pages("GET", "capacity")
    if obj.json:
        as_json(answer)
        return
    if not answer.get("known"):
        raise CliError("The hub cannot see the cluster right now (Slurm not answering); retry.")
    for name, kinds in sorted(answer["partitions"].items()):
        free = ", ".join(
            f"{k['free']} of {k['total']} {k['type'] + ' ' if k['type'] else ''}GPUs" for k in kinds
        )
        click.echo(f"Partition {name}: {free} free (as of {answer['as_of']})")
    rows = [(slug, p["text"]) for slug, p in answer["profiles"].items()]
    table(rows, ["profile", "starts"])


@cli.group()
def profiles() -> None:
    """Resource profiles (editing: admins)."""


@profiles.command("list")
@click.option("--all", "everything", is_flag=True, help="Disabled ones too (admins).")
@click.pass_obj
def profiles_list(obj: Context, everything: bool) -> None:
    """The profiles you can use (admins: --all)."""
    found = obj.client.portal("GET", "/profiles", params={"all": str(everything).lower()})
    if obj.json:
        as_json(found)
        return
    table(
        [
            (
                p["slug"],
                p["gpus"],
                p["default_runtime"],
                p["max_runtime"],
                p["partition"],
                ",".join(p["groups"]) or "everyone",
                "yes" if p["enabled"] else "no",
            )
            for p in found
        ],
        ["profile", "gpus", "default", "max", "partition", "groups", "enabled"],
    )


@profiles.command("set")
@click.argument("slug")
@click.option("--title")
@click.option("--gpus", type=int)
@click.option("--default-runtime", help="HH:MM:SS")
@click.option("--max-runtime", help="HH:MM:SS")
@click.option("--partition")
@click.option("--group", "groups", multiple=True, help="Who sees it (repeat; none: everyone).")
@click.option("--enable/--disable", "enabled", default=None)
@click.pass_obj
def profiles_set(obj: Context, /, slug: str, groups: tuple[str, ...], **fields: Any) -> None:
    """Change a profile (admins); users see it on their next spawn page."""
    current = obj.client.portal("GET", f"/profiles/{slug}")
    change = {k: v for k, v in fields.items() if v is not None}
    if groups:
        change["groups"] = list(groups)
    if not change:
        raise CliError("Nothing to change: give at least one option (see --help).")
    saved = obj.client.portal(
        "PATCH", f"/profiles/{slug}", json={"version": current["version"], **change}
    )
    as_json(saved) if obj.json else click.echo(f"{slug} saved (version {saved['version']}).")


@cli.command()
@click.pass_obj
def usage(obj: Context) -> None:
    """GPU-hours this week and month, yours and your groups', their limits, and fair share."""
    got = obj.client.portal("GET", "/usage")
    if obj.json:
        as_json(got)
        return
    hours = got["gpu_hours"]
    click.echo(f"{got['user']}: {hours['week']} GPU-hours this week, {hours['month']} this month")
    for kind in hours.get("kinds", []):
        name = kind["kind"] or "(kind not tracked)"
        click.echo(f"  {name}: {kind['week']} this week, {kind['month']} this month")
    for group in got["groups"]:
        its = group["gpu_hours"]
        click.echo(f"group {group['account']}: {its['week']} this week, {its['month']} this month")
        click.echo(f"  {group['limits']}")
        click.echo(f"  {group['standing']}")


session_commands.register(cli)
jobs_commands.register(cli)


def main() -> None:
    # The machine's own CA certificates, where a site adds its CA, rather than certifi's list.
    truststore.inject_into_ssl()
    try:
        cli.main(standalone_mode=False)
    except CliError as error:
        click.echo(click.style("error: ", fg="red", bold=True) + str(error), err=True)
        sys.exit(1)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
