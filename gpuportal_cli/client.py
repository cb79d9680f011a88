"""The HTTP side of the CLI: the hub's URL and a token, and answers turned into plain errors.

Everything goes through the hub's public URL, as a browser's requests do: the hub's own API
(/hub/api), its portal endpoints (/hub/gpuportal) and the portal service (/services/portal).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

TOKEN_FILE = Path.home() / ".config" / "gpuportal" / "token"


class CliError(Exception):
    """What went wrong, in words for the user; the CLI prints it and exits 1."""


def find_token(given: str | None) -> str:
    """--token, else $GPUPORTAL_TOKEN, else ~/.config/gpuportal/token."""
    if given:
        return given.strip()
    if os.environ.get("GPUPORTAL_TOKEN"):
        return os.environ["GPUPORTAL_TOKEN"].strip()
    if TOKEN_FILE.is_file():
        return TOKEN_FILE.read_text().strip()
    raise CliError(
        "No token. Make one on the hub's Token page, then pass --token, set GPUPORTAL_TOKEN, "
        f"or put it in {TOKEN_FILE}."
    )


def _detail(answer: requests.Response) -> str:
    """The server's own words for a refusal: FastAPI's detail, the hub's message or error."""
    try:
        body = answer.json()
    except ValueError:
        return answer.text.strip()[:200] or answer.reason
    if isinstance(body, dict):
        detail = body.get("detail") or body.get("message") or body.get("error")
        if isinstance(detail, list):  # a 422: field and message
            return "; ".join(f"{_field(item)}: {item.get('msg')}" for item in detail)
        if detail:
            return str(detail)
    return str(body)[:200]


def _field(problem: dict[str, Any]) -> str:
    """The field a 422 names ("body.nodes" -> "nodes")."""
    return ".".join(str(part) for part in problem.get("loc", [])[1:]) or "request"


def untrusted(url: str, error: Exception) -> str:
    """A TLS failure in words: most often the site's own CA, which this machine lacks."""
    why = str(error)
    if "CERTIFICATE_VERIFY_FAILED" in why or "certificate verify failed" in why:
        return (
            f"The hub at {url} presents a certificate this machine does not trust. If your site "
            "has its own certificate authority, add it to the machine's certificates (Debian: "
            "copy it to /usr/local/share/ca-certificates/NAME.crt, run update-ca-certificates) "
            "or name its file in REQUESTS_CA_BUNDLE."
        )
    return f"No secure connection to the hub at {url}: {why[:200]}"


@dataclass
class Client:
    url: str
    token: str
    timeout: float = 60.0

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """path under the hub's URL; the decoded JSON answer (None for an empty one)."""
        headers = {"Authorization": f"token {self.token}", **kwargs.pop("headers", {})}
        try:
            answer = requests.request(
                method, self.url.rstrip("/") + path, headers=headers, timeout=self.timeout, **kwargs
            )
        except requests.exceptions.SSLError as error:
            raise CliError(untrusted(self.url, error)) from None
        except requests.ConnectionError:
            raise CliError(
                f"Cannot reach the hub at {self.url} (is it up? is --url right?)"
            ) from None
        except requests.Timeout:
            raise CliError(
                f"The hub at {self.url} did not answer within {self.timeout:g} s"
            ) from None
        if answer.status_code == 401 or (
            answer.status_code == 403 and path.startswith("/hub/api/user")
        ):
            raise CliError("The hub does not accept this token: make a new one on its Token page.")
        if answer.status_code >= 400:
            raise CliError(f"{_detail(answer)} (HTTP {answer.status_code})")
        if answer.status_code == 204 or not answer.content:
            return None
        try:
            return answer.json()
        except ValueError:
            raise CliError(
                f"{method} {path} did not answer with JSON; is --url the hub's?"
            ) from None

    # -- the three APIs ----------------------------------------------------------------

    def hub(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.call(method, "/hub/api" + path, **kwargs)

    def portal(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.call(method, "/services/portal/api" + path, **kwargs)

    def pages(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.call(method, "/hub/gpuportal/" + path, **kwargs)

    def me(self) -> dict[str, Any]:
        who: dict[str, Any] = self.hub("GET", "/user")
        return who
