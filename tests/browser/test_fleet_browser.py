"""The fleet widget in real JupyterLab: ``pmux_widget.show(fleet=URL)`` over two real hubs that
publish to a real nats-server groups by host, then workspace; a host that says goodbye is shown
offline with its rows kept and dimmed, and axe-core finds no WCAG 2 A/AA violation in it (the
dimmed rows included), in the light and the dark theme. Sessions that end on either host leave
the live list for the "Ended" section, under their host.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("nats")

from pmux_widget import fleet
from pmux_widget.runtime.hub import Hub

from ..helpers import post_hook
from ..nats_server import NatsServer, nats_server_binary
from .conftest import LabPage, Workspace
from .test_ux_browser import assert_no_axe_violation_with_the_sheet_open
from .test_widget_browser import shown

pytestmark = [
    pytest.mark.browser,
    pytest.mark.fleet,
    pytest.mark.skipif(nats_server_binary() is None, reason="nats-server not installed"),
]

#: host → its sessions: (workspace folder, the hooks each session gets, in order)
FLEET: dict[str, list[tuple[str, list[str]]]] = {
    "devbox": [
        ("api", ["SessionStart", "UserPromptSubmit"]),
        ("api", ["SessionStart", "UserPromptSubmit", "Stop"]),
        ("api", ["SessionStart"]),
        ("web", ["SessionStart"]),
    ],
    "laptop": [
        ("api", ["SessionStart", "UserPromptSubmit", "Stop"]),
        ("docs", ["SessionStart"]),
    ],
}


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[NatsServer]:
    server = NatsServer(tmp_path / "nats").start()
    try:
        yield server
    finally:
        server.kill()


def _hook(event: str, session_id: str, cwd: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": f"/home/dev/.claude/projects/x/{session_id}.jsonl",
        "cwd": cwd,
        "hook_event_name": event,
    }
    if event == "SessionStart":
        body["source"] = "startup"
    if event == "UserPromptSubmit":
        body["prompt"] = "run the tests"
    return body


def test_the_fleet_widget_groups_by_host_and_dims_an_offline_one_within_aa(
    lab: LabPage, workspace: Workspace, broker: NatsServer, tmp_path: Path
) -> None:
    hubs: list[Hub] = []
    publishers: dict[str, fleet.Publisher] = {}
    try:
        for host, sessions in FLEET.items():
            hub = Hub(home=tmp_path / host / "pmux", claude_home=tmp_path / host).start()
            hubs.append(hub)
            publishers[host] = fleet.start_publisher(hub, broker.url, host=host)
            for folder, events in sessions:
                sid = str(uuid.uuid4())
                for event in events:
                    body = _hook(event, sid, f"/home/dev/projects/{folder}")
                    assert post_hook(hub.port, hub.token, body) == 204
        shown(lab, workspace, f'import pmux_widget; pmux_widget.show(fleet="{broker.url}")')
        root = lab.root()
        root.locator('.pmux-host[data-host="laptop"] .pmux-row').nth(1).wait_for()
        root.locator('.pmux-host[data-host="devbox"] .pmux-row').nth(3).wait_for()
        # both hosts hold a review (their dot): by name
        hosts = root.locator(".pmux-host").evaluate_all("(ns) => ns.map((n) => n.dataset.host)")
        assert hosts == ["devbox", "laptop"]
        api = '.pmux-host[data-host="devbox"] .pmux-group[data-workspace="api"]'
        assert root.locator(f"{api} .pmux-group-head").is_visible()  # two sessions: headed
        # its review is in the host's own "Needs you" block, which the bell counts
        needs = root.locator('.pmux-host[data-host="devbox"] .pmux-group[data-group="Needs you"]')
        assert needs.locator(".pmux-row.pmux-row--review").count() == 1

        publishers.pop("laptop").stop()  # says goodbye: offline at once, its rows stay
        offline = root.locator('.pmux-host--offline[data-host="laptop"]')
        offline.wait_for()
        assert "offline · last seen" in offline.locator(".pmux-host-status").inner_text()
        assert offline.locator(".pmux-row").count() == 2

        assert_no_axe_violation_with_the_sheet_open(lab)
    finally:
        for publisher in publishers.values():
            publisher.stop()
        for hub in hubs:
            hub.stop()


def test_sessions_that_end_on_two_hosts_reach_the_ended_section_under_their_hosts(
    lab: LabPage, workspace: Workspace, broker: NatsServer, tmp_path: Path
) -> None:
    hubs: dict[str, Hub] = {}
    publishers: list[fleet.Publisher] = []
    #: host → (workspace folder, ends?) of each session
    plan = {
        "devbox": [("api", True), ("web", True), ("api", False)],
        "laptop": [("docs", True), ("docs", True), ("ops", False)],
    }
    ids: dict[str, list[tuple[str, bool]]] = {}
    folders: dict[str, str] = {}
    try:
        for host, sessions in plan.items():
            hub = hubs[host] = Hub(
                home=tmp_path / host / "pmux", claude_home=tmp_path / host
            ).start()
            publishers.append(fleet.start_publisher(hub, broker.url, host=host))
            ids[host] = []
            for folder, ends in sessions:
                sid = str(uuid.uuid4())
                ids[host].append((sid, ends))
                folders[sid] = folder
                body = _hook("SessionStart", sid, f"/home/dev/projects/{folder}")
                assert post_hook(hub.port, hub.token, body) == 204

        def end(host: str, sid: str) -> None:
            body = _hook("SessionEnd", sid, f"/home/dev/projects/{folders[sid]}")
            body["reason"] = "prompt_input_exit"
            assert post_hook(hubs[host].port, hubs[host].token, body) == 204

        ending = [(host, sid) for host in plan for sid, ends in ids[host] if ends]
        end(*ending[0])  # one ends before the widget opens (its snapshot), the rest after
        shown(lab, workspace, f'import pmux_widget; pmux_widget.show(fleet="{broker.url}")')
        root = lab.root()
        summary = root.locator(".pmux-ended-summary")
        summary.wait_for()
        assert summary.inner_text() == "Ended (1)"
        for host, sid in ending[1:]:
            end(host, sid)
        root.locator('.pmux-ended-summary:text-is("Ended (4)")').wait_for()
        # the live list keeps one row per host, its live one
        for host in plan:
            live = root.locator(f'.pmux-host[data-host="{host}"] .pmux-row')
            live.first.wait_for()
            assert live.count() == 1
            assert live.first.get_attribute("data-session-id") == ids[host][2][0]

        summary.click()  # the section opens: its rows are drawn then, grouped by host
        ended = root.locator(".pmux-ended")
        ended.locator(".pmux-ended-host .pmux-row").nth(3).wait_for()
        names = ended.locator(".pmux-ended-host").evaluate_all(
            "(ns) => ns.map((n) => n.dataset.host)"
        )
        assert sorted(names) == ["devbox", "laptop"]
        for host in plan:
            under = ended.locator(f'.pmux-ended-host[data-host="{host}"]')
            shown_ids = under.locator(".pmux-row").evaluate_all(
                "(ns) => ns.map((n) => n.dataset.sessionId)"
            )
            assert sorted(shown_ids) == sorted(sid for sid, ends in ids[host] if ends)
            assert under.locator(".pmux-host-name").inner_text() == host
            assert under.locator(".pmux-host-summary").inner_text() == "2 sessions"
            assert under.locator(".pmux-row.pmux-row--ended").count() == 2
        laptop = ended.locator('.pmux-ended-host[data-host="laptop"]')
        docs = laptop.locator('.pmux-ended-group[data-workspace="docs"]')
        assert docs.locator(".pmux-group-head").is_visible()  # two sessions: headed
        devbox = ended.locator('.pmux-ended-host[data-host="devbox"]')
        groups = devbox.locator(".pmux-ended-group").evaluate_all(
            "(ns) => ns.map((n) => n.dataset.workspace)"
        )
        assert sorted(groups) == ["api", "web"]
    finally:
        for publisher in publishers:
            publisher.stop()
        for hub in hubs.values():
            hub.stop()
