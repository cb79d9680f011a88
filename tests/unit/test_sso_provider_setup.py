"""The identity provider's install checks (deploy/local/sso_config.py, sso.sh check): the Perl
modules its configuration loads are named from that configuration, and one that does not load
is said with the file Perl missed and its likely Debian package (issue 53: a fresh machine's
provider failed its start on IO::Socket::Timeout and said only that it did not answer)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
SSO_CONFIG = REPO / "deploy" / "local" / "sso_config.py"
SSO_SH = REPO / "deploy" / "local" / "sso.sh"


def load_sso_config() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sso_config", SSO_CONFIG)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["sso_config"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def demo_configuration(sso_config: ModuleType) -> dict[str, object]:
    args = argparse.Namespace(
        portal="https://sso.example.org/",
        domain="example.org",
        ldap="ldaps://ldap:6360/",
        ldap_ca="/ca.pem",
        client_id="hub",
        redirect_uri=["https://127.0.0.1:8000/hub/oauth_callback"],
        logout_uri=[],
        issuer_name="demo",
        state="/state",
    )
    config: dict[str, object] = sso_config.configuration(args, sso_config.Keys())
    return config


def test_the_modules_follow_the_configurations_choices() -> None:
    sso_config = load_sso_config()
    config = demo_configuration(sso_config)
    modules = sso_config.perl_modules(config)
    for needed in (
        "Lemonldap::NG::Portal::Auth::LDAP",
        "Lemonldap::NG::Portal::UserDB::LDAP",
        "Lemonldap::NG::Portal::2F::TOTP",
        "Lemonldap::NG::Portal::2F::OnceTOTP",
        "Lemonldap::NG::Portal::Issuer::OpenIDConnect",
        "Apache::Session::File",
    ):
        assert needed in modules
    # Another choice names other modules: the list is read from the configuration.
    other = sso_config.perl_modules(
        {
            **config,
            "authentication": "Demo",
            "oncetotp2fActivation": 0,
            "totp2fSelfRegistration": 0,
        }
    )
    assert "Lemonldap::NG::Portal::Auth::Demo" in other
    assert "Lemonldap::NG::Portal::UserDB::Demo" in other
    assert not [module for module in other if "TOTP" in module]


def test_the_module_list_needs_no_keys_or_files() -> None:
    printed = subprocess.run(
        [sys.executable, str(SSO_CONFIG), "--modules"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.split()
    assert printed[0] == "Lemonldap::NG::Portal::Main"
    assert "Lemonldap::NG::Portal::Auth::LDAP" in printed


needs_provider = pytest.mark.skipif(
    not shutil.which("llng-fastcgi-server") and os.environ.get("CI") != "true",
    reason="LemonLDAP::NG is not installed (install.sh installs it)",
)


@needs_provider
def test_the_check_passes_where_the_install_ran() -> None:
    checked = subprocess.run(["bash", str(SSO_SH), "check"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


@needs_provider
def test_a_module_that_does_not_load_is_named_with_its_package(tmp_path: Path) -> None:
    # IO::Socket::Timeout as a fresh Debian 12 lacked it: a stand-in that fails as Perl does.
    stand_in = tmp_path / "IO" / "Socket" / "Timeout.pm"
    stand_in.parent.mkdir(parents=True)
    stand_in.write_text('die "Can\'t locate IO/Socket/Timeout.pm in \\@INC\\n";\n')
    checked = subprocess.run(
        ["bash", str(SSO_SH), "check"],
        capture_output=True,
        text=True,
        env={**os.environ, "PERL5LIB": str(tmp_path)},
    )
    assert checked.returncode == 1
    assert (
        "Lemonldap::NG::Portal::Auth::LDAP does not load: IO/Socket/Timeout.pm is missing"
        " (Debian package: probably libio-socket-timeout-perl; apt-file search"
        " IO/Socket/Timeout.pm names it)"
    ) in checked.stderr
    assert "install them (apt-get install) and run this again" in checked.stderr


def test_every_lemonldap_version_here_asks_the_code_through_oncetotp() -> None:
    """2.16 (Debian 12) loads a module of available2F by its own key and takes its rule from
    there; 2.21 (Debian 13) takes the rule from the module's prefix, TOTP's. Without the second
    key, 2.21 asked no code at all (the Debian 13 demo's smoke)."""
    config = demo_configuration(load_sso_config())
    assert config["available2F"] == "OnceTOTP"  # TOTP's own module is not loaded beside it
    assert config["oncetotp2fActivation"] == config["totp2fActivation"] == 'has2f("TOTP")'
