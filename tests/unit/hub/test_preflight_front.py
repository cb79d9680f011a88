"""The preflight's word on the public certificate when TLS ends in front of the hub (nginx, as
the Ansible role's `portal_nginx_server_name` sets it up): no warning of plain HTTP then, unless
the hub also answers on an address browsers reach."""

from __future__ import annotations

from gpuportal_adapters.settings import HubSettings
from gpuportal_core.preflight import Outcome
from gpuportal_spawner.preflight_certificates import check_certificates


def verdict(**settings: object) -> tuple[Outcome, str]:
    [check] = check_certificates(HubSettings(internal_tls=False, public_tls_cert="", **settings))
    return check.outcome, check.detail


def test_a_hub_behind_a_tls_front_on_loopback_passes() -> None:
    outcome, detail = verdict(tls_in_front=True, hub_bind="127.0.0.1")
    assert outcome == Outcome.PASS and "TLS ends in front of the hub" in detail


def test_a_hub_behind_a_front_that_also_listens_elsewhere_is_warned_of() -> None:
    outcome, detail = verdict(tls_in_front=True, hub_bind="0.0.0.0")
    assert outcome == Outcome.WARN and "plain HTTP on 0.0.0.0" in detail


def test_a_hub_without_a_certificate_or_a_front_serves_plain_http() -> None:
    assert verdict(tls_in_front=False) == (Outcome.WARN, "the hub serves plain HTTP")
