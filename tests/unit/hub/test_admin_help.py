"""Issue 54, item 15: `gpuportal-admin --help` says its whole first sentence (it stopped at "(the
`gpuportal` command is for")."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuportal_spawner.admin_command import build_parser, hub_settings


def test_the_admin_commands_help_is_a_whole_sentence() -> None:
    description = build_parser().description or ""
    assert description.endswith("(the `gpuportal` command is for users)."), description


def test_the_admin_command_reads_the_hubs_settings_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 15: root's preflight in a plain shell warned "the hub serves plain HTTP" of a hub
    serving HTTPS: it read none of the hub's settings."""
    monkeypatch.delenv("PORTAL_PUBLIC_TLS_CERT", raising=False)
    monkeypatch.delenv("PORTAL_LOGIN", raising=False)
    settings_file = tmp_path / "hub.env"
    settings_file.write_text(
        "PORTAL_PUBLIC_TLS_CERT='/var/lib/portal-local/hub-tls/hub.crt'\n"
        "PORTAL_SEED_PROFILES='[{\"slug\": \"it\\'s\"}]'\nPORTAL_LOGIN='sso'\n"
    )
    assert hub_settings(str(settings_file)).public_tls_cert.endswith("hub.crt")
    assert hub_settings(str(tmp_path / "none")).public_tls_cert == ""
    monkeypatch.setenv("PORTAL_PUBLIC_TLS_CERT", "/elsewhere.crt")  # the environment wins
    assert hub_settings(str(settings_file)).public_tls_cert == "/elsewhere.crt"
