"""``pmux-widget notify add|list|remove|test|settings``, ``pmux_widget.notify_settings`` and
doctor's notification lines: secrets stored 0600 and never printed, tests sent for real to
local servers."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from typing import Any

import pytest

import pmux_widget
from pmux_widget.cli import commands as cli
from pmux_widget.hooks import doctor
from pmux_widget.notify import webpush

from .notify_servers import PushService, Recorder

SECRET = "tk_s3cr3tTokenValue"


@pytest.fixture
def http() -> Iterator[Recorder]:
    server = Recorder().start()
    yield server
    server.stop()


def run(*argv: str) -> int:
    return cli.main(list(argv))


def test_add_list_remove_keep_the_url_secret(homes: Any, http: Recorder, capsys: Any) -> None:
    url = f"ntfy://{SECRET}@127.0.0.1:{http.port}/claude"
    assert run("notify", "add", url, "--states", "needs-input", "--projects", "web-*") == 0
    assert run("notify", "add", f"json://127.0.0.1:{http.port}/hook") == 0
    assert run("notify", "add", url) == 2  # already there
    assert run("notify", "add", "nope://x") == 2
    path = homes.pmux.root / "notify.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert SECRET in path.read_text()
    assert run("notify", "list") == 0
    assert run("notify", "list", "--json") == 0
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err
    assert "1: ntfy://" in out.out and "only states=needs-input; projects=web-*" in out.out
    listed = json.loads(out.out[out.out.index("{") :])
    assert [c["n"] for c in listed["channels"]] == [1, 2]
    assert run("notify", "remove", "3") == 2
    assert run("notify", "remove", "1") == 0
    out = capsys.readouterr().out
    assert SECRET not in out and "removed" in out
    assert SECRET not in path.read_text()


def test_notify_test_sends_to_each_destination(homes: Any, http: Recorder, capsys: Any) -> None:
    push = PushService().start()
    try:
        run("notify", "add", f"json://127.0.0.1:{http.port}/ok")
        run("notify", "add", f"json://127.0.0.1:{http.port}/broken")
        http.status["/broken"] = 500
        browser = push.browser("phone")
        webpush.add_subscription(
            homes.pmux, webpush.Subscription.from_json(browser.subscription(), device="phone")
        )
        capsys.readouterr()
        assert run("notify", "test") == 1  # one channel fails
        out = capsys.readouterr().out
        assert out.count("OK  ") == 2 and out.count("FAIL") == 1, out
        assert http.count("/ok") == 1 and http.count("/broken") == 1
        (pushed,) = push.delivered
        assert pushed.payload["title"] == "Test · pmux-widget"
        # the failure is what doctor reports, by its masked name
        checks = doctor(homes.claude, homes.pmux)
        bad = [c for c in checks if c.name.startswith("notify ")]
        assert bad and not bad[0].ok and "broken" in bad[0].name
        assert run("notify", "test", "1") == 0
        assert run("notify", "test", "9") == 2
    finally:
        push.stop()


def test_settings_from_cli_and_python(homes: Any, capsys: Any) -> None:
    assert run("notify", "settings", "delay_s=0", "quiet_start=22:00", "quiet_end=07:00") == 0
    assert pmux_widget.notify_settings().delay_s == 0
    s = pmux_widget.notify_settings(muted_projects={"scratch": 0}, generic=True)
    assert s.generic and s.muted_projects == {"scratch": 0} and s.quiet_start == "22:00"
    with pytest.raises(ValueError):
        pmux_widget.notify_settings(delay_s=-5)
    assert run("notify", "settings", "vapid_subject=mailto:me@localhost") == 2
    assert "Apple" in capsys.readouterr().err
    assert pmux_widget.notify_settings().generic  # the refused change lost nothing


def test_doctor_is_silent_until_notifications_are_set_up(
    homes: Any, http: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [c.name for c in doctor(homes.claude, homes.pmux)]
    assert not [n for n in names if "notif" in n or n in ("channels", "web push")]
    run("notify", "add", f"json://127.0.0.1:{http.port}/ok")
    checks = {c.name: c for c in doctor(homes.claude, homes.pmux)}
    assert checks["channels"].ok
    (homes.pmux.root / "notify.json").chmod(0o644)
    monkeypatch.setenv("PMUX_WIDGET_NOTIFY_DELAY", "soon")
    checks = {c.name: c for c in doctor(homes.claude, homes.pmux)}
    assert not checks["notify files"].ok
    assert not checks["PMUX_WIDGET_NOTIFY_DELAY"].ok
