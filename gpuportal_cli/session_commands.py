"""`gpuportal session ...`: list, start (and wait), stop, extend JupyterLab sessions."""

from __future__ import annotations

import time
from typing import Any

import click

from gpuportal_cli.client import CliError
from gpuportal_cli.output import as_json, table


def _server_path(user: str, name: str) -> str:
    return f"/users/{user}/servers/{name}" if name else f"/users/{user}/server"


def register(cli: click.Group) -> None:
    @cli.group()
    def session() -> None:
        """JupyterLab sessions: each a Slurm job with the GPUs of its profile."""

    @session.command("list")
    @click.pass_obj
    def session_list(obj: Any) -> None:
        """Your sessions: state, profile, node, time left."""
        cards = obj.client.pages("GET", "sessions")["sessions"]
        if obj.json:
            as_json(cards)
            return
        table(
            [
                (
                    c.get("name") or "default",
                    c.get("state", ""),
                    c.get("profile") or "",
                    c.get("node") or "",
                    c.get("job_id") or "",
                    _left(c),
                )
                for c in cards
            ],
            ["session", "state", "profile", "node", "job", "time left"],
        )

    @session.command("start")
    @click.argument("name", default="")
    @click.option("--profile", required=True, help="e.g. gpu-2 (see: gpuportal profiles list)")
    @click.option("--runtime", help="Time limit HH:MM:SS (default: the profile's)")
    @click.option("--environment", help="A software environment's slug")
    @click.option("--wait/--no-wait", default=True, show_default=True, help="Until it is ready.")
    @click.option("--timeout", default=600, show_default=True, help="Seconds to wait.")
    @click.pass_obj
    def session_start(
        obj: Any,
        name: str,
        profile: str,
        runtime: str | None,
        environment: str | None,
        wait: bool,
        timeout: int,
    ) -> None:
        """Start a session (NAME: a named one; default: your default session)."""
        user = obj.client.me()["name"]
        options = {"profile": profile}
        if runtime:
            options["runtime"] = runtime
        if environment:
            options["environment"] = environment
        obj.client.hub("POST", _server_path(user, name), json={"user_options": options})
        server = _wait_ready(obj, user, name, timeout) if wait else {}
        if obj.json:
            as_json(server or {"name": name, "pending": "spawn"})
        elif wait:
            click.echo(f"Ready: {obj.url.rstrip('/')}{server['url']}lab")
        else:
            click.echo("Starting; `gpuportal session list` shows where it stands.")

    @session.command("stop")
    @click.argument("name", default="")
    @click.pass_obj
    def session_stop(obj: Any, name: str) -> None:
        """Stop a session: its job ends, queued or running."""
        user = obj.client.me()["name"]
        obj.client.hub("DELETE", _server_path(user, name))
        as_json({"stopped": name}) if obj.json else click.echo("Stopped.")

    @session.command("extend")
    @click.argument("name", default="")
    @click.option("--add", required=True, help="How much more, HH:MM:SS (within the profile's max)")
    @click.pass_obj
    def session_extend(obj: Any, name: str, add: str) -> None:
        """Give a running session more time."""
        cards = obj.client.pages("POST", "extend", json={"server": name, "add": add})["sessions"]
        card: dict[str, Any] = next((c for c in cards if (c.get("name") or "") == name), {})
        as_json(card) if obj.json else click.echo(f"Extended: {_left(card)} left.")


def _left(card: dict[str, Any]) -> str:
    left = card.get("left")
    if not isinstance(left, int | float):
        return ""
    hours, minutes = divmod(int(left) // 60, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


def _wait_ready(obj: Any, user: str, name: str, timeout: int) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        model = obj.client.hub("GET", f"/users/{user}")
        server = model.get("servers", {}).get(name)
        if server is None:
            raise CliError("The session did not start; `gpuportal session list` says why.")
        if server.get("ready"):
            found: dict[str, Any] = server
            return found
        time.sleep(1)
    raise CliError(f"Not ready after {timeout} s; it may still be queued (gpuportal session list).")
