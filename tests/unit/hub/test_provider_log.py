"""The provider's log, followed for refused second factors (gpuportal_spawner.provider_log)."""

from __future__ import annotations

from pathlib import Path

from gpuportal_spawner.provider_log import ProviderLogFollower

REFUSED = "[Thu Nov 26 23:50:19 2026] [LLNG:1] [notice] totp2f: invalid attempt for {}\n"
OTHER = "[Thu Nov 26 23:50:19 2026] [LLNG:1] [notice] User alice connected\n"
PASSWORD = "[Fri Nov 27 00:07:30 2026] [LLNG:15461] [warn] Bad password for {} (10.213.0.1)\n"
CODE = "second factor refused"


def test_only_refusals_written_after_the_start_count(tmp_path: Path) -> None:
    log = tmp_path / "portal.log"
    log.write_text(REFUSED.format("bob"))  # before the hub started: not this hub's to count
    follower = ProviderLogFollower(str(log))
    assert follower.read_new() == []
    with log.open("a") as out:
        out.write(OTHER + REFUSED.format("alice") + REFUSED.format("carol"))
    assert follower.read_new() == [(CODE, "alice"), (CODE, "carol")]
    assert follower.read_new() == []


def test_a_line_being_written_waits_for_its_end(tmp_path: Path) -> None:
    log = tmp_path / "portal.log"
    log.write_text("")
    follower = ProviderLogFollower(str(log))
    line = REFUSED.format("alice")
    with log.open("a") as out:
        out.write(line[:30])
    assert follower.read_new() == []
    with log.open("a") as out:
        out.write(line[30:])
    assert follower.read_new() == [(CODE, "alice")]


def test_a_rotated_log_is_read_from_its_start(tmp_path: Path) -> None:
    log = tmp_path / "portal.log"
    log.write_text(OTHER * 20)
    follower = ProviderLogFollower(str(log))
    log.rename(tmp_path / "portal.log.1")
    log.write_text(REFUSED.format("dave"))
    assert follower.read_new() == [(CODE, "dave")]


def test_a_missing_log_reads_nothing_until_it_appears(tmp_path: Path) -> None:
    log = tmp_path / "portal.log"
    follower = ProviderLogFollower(str(log))
    assert follower.read_new() == []
    log.write_text(REFUSED.format("erin"))
    assert follower.read_new() == [(CODE, "erin")]


def test_a_name_that_is_no_user_name_is_not_taken(tmp_path: Path) -> None:
    log = tmp_path / "portal.log"
    log.write_text("")
    follower = ProviderLogFollower(str(log))
    log.write_text(REFUSED.format("Robert'); DROP") + REFUSED.format("frank"))
    assert follower.read_new() == [(CODE, "frank")]


def test_a_wrong_password_at_the_provider_is_one_too(tmp_path: Path) -> None:
    log = tmp_path / "portal.log"
    log.write_text("")
    follower = ProviderLogFollower(str(log))
    with log.open("a") as out:
        out.write(PASSWORD.format("bob") + REFUSED.format("bob"))
    assert follower.read_new() == [("wrong name or password", "bob"), (CODE, "bob")]


def test_a_code_used_twice_is_its_own_refusal(tmp_path: Path) -> None:
    # The demo provider's OnceTOTP (deploy/local/sso_plugins) writes this for a replayed code.
    log = tmp_path / "portal.log"
    log.write_text("")
    follower = ProviderLogFollower(str(log))
    with log.open("a") as out:
        out.write(
            "[Sun Nov 29 01:10:00 2026] [LLNG:7] [notice] totp2f: code already used by erin\n"
        )
    assert follower.read_new() == [("second factor reused", "erin")]


def test_lemonldap_221s_words_for_a_wrong_code(tmp_path: Path) -> None:
    log = tmp_path / "portal.log"
    log.write_text("")
    follower = ProviderLogFollower(str(log))
    with log.open("a") as out:
        out.write("[notice] totp2f: code did not match any of the registered TOTP for frank\n")
    assert follower.read_new() == [(CODE, "frank")]
