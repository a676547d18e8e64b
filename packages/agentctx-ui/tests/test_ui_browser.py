"""End to end in real headless Chromium (Debian `chromium`, driven by Playwright): the served page,
the real uvicorn server on a free 127.0.0.1 port, the real store. Screenshots go to
`test-artifacts/ui/` (kept by CI as artifacts, ignored by git)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from agentctx_store import Project, RecordNotFound, Store

from agentctx_ui.server import bind, make_server

if TYPE_CHECKING:
    from conftest import Proposed, Seeded
    from playwright.sync_api import Browser, Locator, Page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "ui"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def live_url(seeded: Seeded) -> Iterator[str]:
    """The dashboard served by uvicorn in a thread, exactly as `agentctx ui` serves it."""
    sock = bind(0)
    server = make_server(seeded.project, sock)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()


@pytest.fixture
def page(browser: Browser, live_url: str) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    opened.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    opened.on(
        "request",
        lambda request: (
            None if request.url.startswith((live_url, "data:")) else problems.append(f"request off-box: {request.url}")
        ),
    )
    opened.set_default_timeout(10_000)
    try:
        yield opened
        assert problems == [], problems  # no script errors, nothing fetched from anywhere but this server
    finally:
        context.close()


def shot(page: Page, name: str) -> None:
    """Save a screenshot, after checking the page shows no leaked `null` / `undefined` / `[object …]`."""
    text = page.locator("body").inner_text()
    assert not re.search(r"\bnull\b|\bundefined\b|\[object |\bNaN\b", text), f"{name}: {text}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def ready(page: Page, view: str) -> None:
    page.wait_for_selector(f'body[data-ready="{view}"] main[aria-busy="false"]')


def test_search_edit_supersede_then_see_the_chain_in_the_graph(page: Page, live_url: str, seeded: Seeded) -> None:
    page.goto(live_url)
    ready(page, "records")
    shot(page, "01-records")

    page.get_by_label("Search", exact=True).fill("storage")
    page.wait_for_selector("#result-summary:has-text('for “storage”')")
    rows = page.locator("#results tbody tr")
    assert rows.count() == 1  # the superseded MySQL record is hidden by default
    shot(page, "02-search")

    rows.first.get_by_role("button", name="Use Postgres for storage").click()
    page.wait_for_selector("#detail-title:has-text('Use Postgres for storage')")
    page.get_by_text("Correct (edit in place)").click()
    page.locator("#edit-title").fill("Use Postgres 16 for storage")
    page.get_by_role("button", name="Save correction").click()
    page.wait_for_selector("#detail-title:has-text('Use Postgres 16 for storage')")
    with Store.open() as store:
        assert store.get(seeded.project, seeded.decision).title == "Use Postgres 16 for storage"
    shot(page, "03-edited")

    page.get_by_text("Supersede (the fact changed)").click()
    page.locator("#sup-title").fill("Use SQLite for storage")
    page.locator("#sup-body").fill("Data lives in one SQLite file in WAL mode.")
    page.locator("#sup-rationale").fill("No database server to run")
    page.get_by_role("button", name="Supersede", exact=True).click()
    page.wait_for_selector("#detail-title:has-text('Use SQLite for storage')")
    chain = page.locator("ol.chain li")
    assert chain.count() == 3
    shot(page, "04-superseded")

    page.get_by_role("link", name="Show this chain in the graph").click()
    ready(page, "graph")
    chain_text = page.locator("#chain-list li").first.inner_text()
    assert (
        re.sub(r"\s+", " ", chain_text)
        == "Use MySQL for storage → Use Postgres 16 for storage → Use SQLite for storage"
    )
    assert page.locator("svg.graph line.edge-supersedes").count() == 2
    assert page.locator("svg.graph g.node.focus").count() == 3  # the chain of the record we came from
    assert page.locator("svg.graph g.node.superseded").count() == 2
    shot(page, "05-graph")

    with Store.open() as store:
        history = store.history(seeded.project, seeded.old_decision)
    assert [record.title for record in history] == [
        "Use MySQL for storage",
        "Use Postgres 16 for storage",
        "Use SQLite for storage",
    ]
    assert history[-1].is_current and not history[0].is_current


def test_every_view_renders_at_desktop_and_narrow_width(page: Page, live_url: str, seeded: Seeded) -> None:
    expectations = {
        "projects": "alpha",
        "records": "Tabs in Makefiles",
        "graph": "src/parser.py",
        "profile": "Prefers pytest",
        "sessions": "branch main · 2 files",
        "sync": "Use MySQL for storage",
        "inbox": "Nothing left to review",
    }
    for width, label in ((1280, "desktop"), (420, "narrow")):
        page.set_viewport_size({"width": width, "height": 800})
        for view, text in expectations.items():
            page.goto(f"{live_url}#/{view}")
            ready(page, view)
            assert text in page.locator("main").inner_text(), view
            shot(page, f"view-{view}-{label}")
            overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 1, f"{view}: the page scrolls sideways at {width}px ({overflow}px)"


def test_delete_asks_first_and_cancel_keeps_the_record(page: Page, live_url: str, seeded: Seeded) -> None:
    page.goto(f"{live_url}#/records?id={seeded.convention}")
    ready(page, "records")
    page.wait_for_selector("#detail-title:has-text('Tabs in Makefiles')")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_role("button", name="Delete…").click()
    with Store.open() as store:
        assert store.get(seeded.project, seeded.convention).title == "Tabs in Makefiles"
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete…").click()
    page.wait_for_selector("#detail:has-text('Record deleted')")
    page.locator(f"#results tr[data-id='{seeded.convention}']").wait_for(state="detached")
    with Store.open() as store:
        assert store.list_records(seeded.project, types=["convention"]) == []


def test_keyboard_only_search_and_open(page: Page, live_url: str) -> None:
    page.goto(live_url)
    ready(page, "records")
    page.keyboard.press("Tab")  # the skip link comes first
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.locator("#search-q").focus()
    page.keyboard.type("makefile")
    page.keyboard.press("Enter")
    page.wait_for_selector("#result-summary:has-text('for “makefile”')")
    button = page.locator("#results tbody button.link").first
    button.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#detail-title:has-text('Tabs in Makefiles')")
    assert page.evaluate("document.activeElement.id") == "detail-title"  # focus moves to what opened


def test_project_picker_switches_to_another_project(page: Page, live_url: str, seeded: Seeded) -> None:
    page.goto(live_url)
    ready(page, "records")
    assert "Beta uses Postgres too" not in page.locator("#results").inner_text()
    page.get_by_label("Project").select_option("p-beta")
    page.wait_for_selector("#results:has-text('Beta uses Postgres too')")
    assert "Tabs in Makefiles" not in page.locator("#results").inner_text()


def test_graph_nodes_open_with_the_keyboard(page: Page, live_url: str, seeded: Seeded) -> None:
    page.goto(f"{live_url}#/graph")
    ready(page, "graph")
    node = page.locator(f"svg.graph g.node[data-id='{seeded.decision}']")
    assert node.get_attribute("aria-label") == "decision: Use Postgres for storage (current)"
    node.focus()
    page.keyboard.press("Enter")
    ready(page, "records")
    page.wait_for_selector("#detail-title:has-text('Use Postgres for storage')")


def test_profile_remove_asks_then_deletes(page: Page, live_url: str, seeded: Seeded) -> None:
    page.goto(f"{live_url}#/profile")
    ready(page, "profile")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Remove Prefers pytest").click()
    page.wait_for_selector("main:has-text('No global preferences recorded yet.')")
    with Store.open() as store:
        assert store.list_records(seeded.project, scope="global") == []


def test_a_big_graph_leaves_unlinked_records_out_until_asked(page: Page, live_url: str, seeded: Seeded) -> None:
    from agentctx_store import NewRecord
    from playwright.sync_api import expect

    with Store.open() as store, store.transaction():
        for index in range(90):
            store.add(seeded.project, NewRecord(type="decision", title=f"Standalone decision {index}", body="b"))
    page.goto(f"{live_url}#/graph")
    ready(page, "graph")
    note = page.locator("#unlinked-note")
    assert note.inner_text().startswith("90 records with no chain and no file link are not drawn.")
    # the chain (2 records), the linked discovery and its file are drawn
    assert page.locator("svg.graph g.node").count() == 4
    shot(page, "06-graph-big")
    note.get_by_role("button", name="Draw them too").click()
    expect(page.locator("svg.graph g.node")).to_have_count(94)
    assert page.locator("svg.graph g.node text").count() == 94  # one row each: every label stays readable


def test_record_a_new_fact_and_pin_it(page: Page, live_url: str, seeded: Seeded) -> None:
    page.goto(live_url)
    ready(page, "records")
    page.get_by_text("New record").click()
    page.get_by_label("Title", exact=True).first.fill("Run migrations with alembic")
    page.locator("#new-body").fill("Schema changes go through alembic revisions.")
    page.locator("#new-type").select_option("convention")
    page.get_by_role("button", name="Record", exact=True).click()
    page.wait_for_selector("#detail-title:has-text('Run migrations with alembic')")
    page.wait_for_selector("#results:has-text('Run migrations with alembic')")
    page.get_by_role("button", name="Pin", exact=True).click()
    page.wait_for_selector("#detail .badge-pinned")
    shot(page, "07-new-pinned")
    with Store.open() as store:
        created = store.list_records(seeded.project, types=["convention"], pinned=True)
    assert [(record.title, record.source, record.confidence) for record in created] == [
        ("Run migrations with alembic", "cli", "explicit")
    ]


def test_a_superseded_record_shows_its_successor_and_cannot_be_superseded(
    page: Page, live_url: str, seeded: Seeded
) -> None:
    page.goto(f"{live_url}#/records?id={seeded.old_decision}")
    ready(page, "records")
    page.wait_for_selector("#detail-title:has-text('Use MySQL for storage')")
    detail = page.locator("#detail")
    assert "Superseded by" in detail.inner_text()
    assert detail.get_by_text("Supersede (the fact changed)").count() == 0
    shot(page, "08-superseded-detail")
    detail.get_by_role("button", name=seeded.decision).click()
    page.wait_for_selector("#detail-title:has-text('Use Postgres for storage')")


def test_the_inbox_accepts_edits_rejects_and_skips(page: Page, live_url: str, seeded: Seeded) -> None:
    """Issue 14: the Inbox view does what `agentctx review` does, with the page's write token."""
    from agentctx_store import NewRecord

    titles = [
        "Queue jobs in Postgres",
        "Deploy with Docker Compose",
        "Keep migrations in alembic",
        "Name branches by ticket",
    ]
    ids: dict[str, str] = {}
    with Store.open() as store:
        for title in titles:
            time.sleep(0.003)  # newest first is by recording time: no two in the same millisecond
            ids[title] = store.add(
                seeded.project,
                NewRecord(
                    type="decision",
                    title=title,
                    body=f"{title}, said in a session.",
                    confidence="inferred",
                    source="llm_extraction",
                    session_id="sess-alpha-1",
                    reinforce_count=1,
                ),
            ).record_id
    page.goto(f"{live_url}#/inbox")
    ready(page, "inbox")
    items = page.locator("ol.inbox > li h3")
    assert items.all_inner_texts() == list(reversed(titles))  # newest first
    assert "4 records to review" in page.locator("#inbox-summary").inner_text()
    shot(page, "inbox-01")

    page.get_by_role("button", name="Accept Name branches by ticket").click()
    page.locator(f"li[data-id='{ids['Name branches by ticket']}']").wait_for(state="detached")
    assert page.evaluate("document.activeElement.textContent") == "Keep migrations in alembic"  # focus moves on

    page.get_by_role("button", name="Edit Keep migrations in alembic").click()
    page.get_by_label("Title").fill("Keep migrations in Alembic, one per change")
    shot(page, "inbox-02-edit")
    page.get_by_role("button", name="Accept with changes").click()
    page.locator(f"li[data-id='{ids['Keep migrations in alembic']}']").wait_for(state="detached")

    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_role("button", name="Reject Deploy with Docker Compose").click()
    assert page.locator(f"li[data-id='{ids['Deploy with Docker Compose']}']").count() == 1  # cancelled: kept
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Reject Deploy with Docker Compose").click()
    page.locator(f"li[data-id='{ids['Deploy with Docker Compose']}']").wait_for(state="detached")

    page.get_by_role("button", name="Skip Queue jobs in Postgres").click()
    page.wait_for_selector("#inbox-summary:has-text('Nothing left to review')")
    with Store.open() as store:
        assert store.get(seeded.project, ids["Name branches by ticket"]).confidence == "explicit"
        edited = store.get(seeded.project, ids["Keep migrations in alembic"])
        assert (edited.title, edited.confidence) == ("Keep migrations in Alembic, one per change", "explicit")
        current = {record.record_id for record in store.list_records(seeded.project, include_superseded=True)}
        assert ids["Deploy with Docker Compose"] not in current
        assert store.get(seeded.project, ids["Queue jobs in Postgres"]).confidence == "inferred"  # skipped

    page.reload()
    ready(page, "inbox")
    assert page.locator("ol.inbox > li h3").all_inner_texts() == ["Queue jobs in Postgres"]
    page.get_by_label("Every unconfirmed record, not only extraction results").check()
    page.wait_for_selector("ol.inbox h3:has-text('Parser is slow on big files')")  # inferred, written by hand
    shot(page, "inbox-03-all")


def open_re_verification(page: Page, live_url: str) -> Locator:
    """The Inbox view, loaded, and its Re-verification section."""
    page.goto(f"{live_url}#/inbox")
    ready(page, "inbox")
    return page.get_by_role("region", name="Re-verification")


def test_the_inbox_accepts_and_dismisses_re_verification_proposals(
    page: Page, live_url: str, seeded: Seeded, proposed: Proposed
) -> None:
    """The Inbox's Re-verification section resolves proposals as `agentctx review` does."""
    from agentctx_store.stale import reverify

    section = open_re_verification(page, live_url)
    items = section.locator("ol.proposals > li h3")
    assert items.all_inner_texts() == ["Retries: three attempts", "One queue", "Timeout is 30 s"]
    assert "Beta retries once" not in page.locator("main").inner_text()  # the other project's
    summary = page.locator("#proposals-summary")
    assert "3 proposals to decide" in summary.inner_text()
    update = section.locator(f"li[data-proposal='{proposed.update[0]}']")
    assert "Draft: Retries: five attempts" in update.inner_text()
    assert "retry() calls five times." in update.inner_text() and "range(3) became range(5)." in update.inner_text()
    shot(page, "inbox-proposals-01")

    page.get_by_role("button", name="Accept proposal for Retries: three attempts").click()
    update.wait_for(state="detached")
    assert "Accepted: “Retries: three attempts” superseded by the draft. 2 proposals" in summary.inner_text()
    assert page.evaluate("document.activeElement.textContent") == "One queue"  # focus moves on

    for _ in range(3):  # keyboard only, from the focused heading: "The record now", Accept, Dismiss
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Dismiss"
    page.keyboard.press("Enter")
    section.locator(f"li[data-proposal='{proposed.no_longer_true[0]}']").wait_for(state="detached")
    assert "Dismissed: “One queue” is unchanged. 1 proposal to decide" in summary.inner_text()
    shot(page, "inbox-proposals-02")

    with Store.open() as store:
        old = store.get(seeded.project, proposed.update[1], include_superseded=True)
        assert old.superseded_by is not None
        assert store.get(seeded.project, old.superseded_by).title == "Retries: five attempts"
        assert store.get(seeded.project, proposed.no_longer_true[1]).title == "One queue"  # dismissed: kept
        statuses = {p.proposal_id: p.status for p in reverify.proposals(store, seeded.project, status=None)}
        assert statuses == {
            proposed.update[0]: "accepted",
            proposed.no_longer_true[0]: "rejected",
            proposed.still_true[0]: "open",
        }
        assert [p.status for p in reverify.proposals(store, seeded.other, status=None)] == ["open"]

    page.reload()
    ready(page, "inbox")
    assert page.get_by_role("region", name="Re-verification").locator("ol.proposals > li h3").all_inner_texts() == [
        "Timeout is 30 s"
    ]
    page.set_viewport_size({"width": 360, "height": 800})
    shot(page, "inbox-proposals-03-narrow")
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1, f"the Inbox scrolls sideways at 360px ({overflow}px)"


def test_accepting_a_no_longer_true_proposal_asks_first_and_cancel_keeps_the_record(
    page: Page, live_url: str, seeded: Seeded, proposed: Proposed
) -> None:
    from agentctx_store.stale import reverify

    section = open_re_verification(page, live_url)
    card = section.locator(f"li[data-proposal='{proposed.no_longer_true[0]}']")
    accept = page.get_by_role("button", name="Accept proposal for One queue")
    page.once("dialog", lambda dialog: dialog.dismiss())
    accept.click()
    assert card.count() == 1 and accept.is_enabled()
    with Store.open() as store:
        assert store.get(seeded.project, proposed.no_longer_true[1]).title == "One queue"
        assert reverify.open_proposal(store, seeded.project, proposed.no_longer_true[0]).status == "open"
    page.once("dialog", lambda dialog: dialog.accept())
    accept.click()
    card.wait_for(state="detached")
    assert "Accepted: “One queue”" in page.locator("#proposals-summary").inner_text()
    with Store.open() as store, pytest.raises(RecordNotFound):
        store.get(seeded.project, proposed.no_longer_true[1], include_superseded=True)


def test_sessions_show_extraction_tokens_and_the_months_spend(page: Page, live_url: str, seeded: Seeded) -> None:
    with Store.open() as store:
        store.update_session_meta(
            seeded.project,
            "sess-alpha-1",
            extraction={"calls": 1, "input_tokens": 9000, "output_tokens": 420, "runs_log": [{"trigger": "end"}]},
        )
    page.goto(f"{live_url}#/sessions")
    ready(page, "sessions")
    text = page.locator("main").inner_text()
    assert "1 run (last: end): 9,000 in · 0 cached · 420 out" in text
    assert "Extraction this month (all projects): $0.0042 of the $5.00 cap." in text
    shot(page, "sessions-extraction")


def test_a_long_record_list_says_how_many_are_not_shown(page: Page, live_url: str, seeded: Seeded) -> None:
    # issue 10 item 10: 102 records used to read "100 records"
    from agentctx_store import NewRecord
    from playwright.sync_api import expect

    with Store.open() as store, store.transaction():
        for index in range(98):
            store.add(seeded.project, NewRecord(type="decision", title=f"Decision number {index}", body="b"))
    page.goto(f"{live_url}#/records")
    ready(page, "records")
    expect(page.locator("#result-summary")).to_have_text("Showing 100 of 102 records, newest first")
    page.get_by_role("button", name="Show more").click()
    expect(page.locator("#result-summary")).to_have_text("102 records, newest first")
    expect(page.get_by_role("button", name="Show more")).to_have_count(0)


def test_the_dashboard_shows_client_and_hook_in_the_detail_and_the_injection_log(
    page: Page, live_url: str, seeded: Seeded, origins: dict[str, str]
) -> None:
    """Issue 20: which client and hook produced a record, and each session's client and injection log."""
    made = origins
    page.goto(f"{live_url}#/records?id={made['stub']}")
    ready(page, "records")
    page.wait_for_selector("#detail-origin")
    assert page.locator("#detail-origin").inner_text() == "gemini / AfterTool"
    shot(page, "origin-record-detail")
    page.goto(f"{live_url}#/records?id={seeded.convention}")
    page.wait_for_selector("#detail-title:has-text('Tabs in Makefiles')")
    assert page.locator("#detail-origin").inner_text() == "—"

    page.goto(f"{live_url}#/sessions")
    ready(page, "sessions")
    row = page.locator("tr", has=page.locator("td[title='gemini-sess-1']"))
    assert row.locator("td").nth(1).inner_text() == "gemini"
    log = row.locator("details.injection-log")
    assert log.locator("summary").inner_text() == "2 prompt injections"
    log.locator("summary").click()
    entries = log.locator("li").all_inner_texts()
    assert len(entries) == 2
    assert "gemini / BeforeAgent · 85 tokens · " + seeded.decision[-8:] in entries[0]
    assert "gemini / BeforeAgent · 140 tokens · " in entries[1] and seeded.linked[-8:] in entries[1]
    log.locator("a", has_text=seeded.linked[-8:]).click()  # a logged record opens in the records view
    page.wait_for_selector("#detail-title:has-text('Parser is slow on big files')")
    page.goto(f"{live_url}#/sessions")
    ready(page, "sessions")
    codex = page.locator("tr", has=page.locator("td[title='codex-sess-1']"))
    assert codex.locator("td").nth(1).inner_text() == "codex"
    shot(page, "origin-sessions")


# -- issue 33: the graph, sync and sessions views on a project set up through the real CLI -------

AGENTCTX = Path(sys.executable).with_name("agentctx")
ADR_FIXTURES = Path(__file__).resolve().parents[2] / "agentctx-store" / "tests" / "learn" / "fixtures" / "project-docs"
RULES = """# Project rules

## Testing
- Run the whole suite with `pytest -q` before every push.

## Storage
- Use MySQL for storage.
"""


def cli(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [str(AGENTCTX), *args], capture_output=True, text=True, cwd=cwd, timeout=60, check=False,
        env=os.environ | {"AGENTCTX_NO_SERVICE": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@dataclass(frozen=True, kw_only=True)
class Everyday:
    url: str
    project: Project
    published: str  # anchored to a symbol whose code changed
    legacy: str  # anchored to a file that is gone
    timeout: str  # head of a chain of three
    mysql: str  # superseded, still written in CLAUDE.md


@pytest.fixture
def everyday(tmp_path: Path) -> Iterator[Everyday]:
    """A repository with ADRs (from alphagov/forms, `learn`'s fixtures), a CLAUDE.md, anchored
    records, a chain of three, then an edit and a deletion; served as `agentctx ui` serves it."""
    from agentctx_store import resolve_project

    repo = tmp_path / "shop"
    for folder in ("docs/adr", "app/models", "app/jobs", "config"):
        (repo / folder).mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for name in ("ADR021-use-auth0.md", "ADR025-use-aasm-to-manage-form-state.md", "ADR032-use-statuspage.md"):
        shutil.copy(ADR_FIXTURES / "alphagov-forms" / "ADR" / name, repo / "docs" / "adr" / name)
    (repo / "CLAUDE.md").write_text(RULES, encoding="utf-8")
    (repo / "app/models/form.py").write_text("class Form:\n    def publish(self):\n        return 'live'\n")
    (repo / "app/jobs/legacy.py").write_text("def old_helper():\n    return 1\n")
    (repo / "config/settings.py").write_text("TIMEOUT = 30\n")
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    cli("learn", cwd=repo)

    def record(*args: str) -> str:
        return json.loads(cli("record", *args, "--json", cwd=repo))["id"]

    published = record("-t", "decision", "--title", "Forms are published through Form.publish only",
                       "--body", "Never set the state column by hand.", "--anchor", "app/models/form.py:publish")  # fmt: skip
    legacy = record("-t", "bugfix", "--title", "Legacy helper double-counted reminders",
                    "--body", "old_helper returned 1 for every call.", "--anchor", "app/jobs/legacy.py:old_helper")  # fmt: skip
    first = record("-t", "decision", "--title", "HTTP timeout is 10 seconds", "--body", "10 s.",
                   "--anchor", "config/settings.py")  # fmt: skip
    second = json.loads(cli("supersede", first, "--title", "HTTP timeout is 20 seconds", "--body", "20 s.", "--json",
                            cwd=repo))["new"]["id"]  # fmt: skip
    timeout = json.loads(cli("supersede", second, "--title", "HTTP timeout is 30 seconds", "--body", "30 s.",
                             "--json", cwd=repo))["new"]["id"]  # fmt: skip
    mysql = record("-t", "decision", "--title", "Use MySQL for storage", "--body", "Use MySQL for storage.")
    cli("supersede", mysql, "--title", "Use SQLite for storage", "--body", "One SQLite file in WAL mode.", cwd=repo)
    (repo / "app/models/form.py").write_text("class Form:\n    def publish(self):\n        return 'published'\n")
    (repo / "app/jobs/legacy.py").unlink()

    project = resolve_project(repo)
    sock = bind(0)
    server = make_server(project, sock)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
        yield Everyday(url=url, project=project, published=published, legacy=legacy, timeout=timeout, mysql=mysql)
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()


@pytest.fixture
def wide(browser: Browser) -> Iterator[Page]:
    """A 1400×900 window, the size the issue's screenshots are judged at."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    opened.set_default_timeout(10_000)
    try:
        yield opened
        assert problems == [], problems
    finally:
        context.close()


def test_the_graph_shows_which_records_rest_on_which_files_what_went_stale_and_the_chains(
    wide: Page, everyday: Everyday
) -> None:
    page = wide
    page.goto(f"{everyday.url}#/graph")
    ready(page, "graph")
    svg = page.locator("svg.graph")
    folders = svg.locator("g.folder text").all_text_contents()  # SVG text has no layout text
    assert {"app/models/", "app/jobs/", "config/", "docs/adr/"} <= set(folders), folders
    form = svg.locator("g.node.entity", has_text="form.py")
    assert "state-changed" in (form.get_attribute("class") or "") and "changed" in (form.text_content() or "")
    assert "state-missing" in (svg.locator("g.node.entity", has_text="legacy.py").get_attribute("class") or "")
    changed_edge = svg.locator(f"path.edge-anchor.state-changed[data-to='{everyday.published}']")
    assert changed_edge.count() == 1 and changed_edge.get_attribute("data-from") == "app/models/form.py"
    assert svg.locator(f"path.edge-anchor.state-missing[data-to='{everyday.legacy}']").count() == 1
    for stale in (everyday.published, everyday.legacy):
        node = svg.locator(f"g.node[data-id='{stale}']")
        assert "stale" in (node.get_attribute("class") or "") and "⚠ stale" in (node.text_content() or "")
    learned = svg.locator("path.edge-anchor[data-from='docs/adr/ADR021-use-auth0.md']")
    assert learned.count() == 1 and "state-fresh" in (learned.get_attribute("class") or "")
    assert svg.locator("line.edge-supersedes").count() == 3  # 10 s → 20 s → 30 s, MySQL → SQLite
    assert svg.locator(f"line.edge-supersedes[data-to='{everyday.timeout}']").count() == 1
    assert page.locator("#graph-summary").inner_text().endswith("; 2 stale; 2 supersession chains.")
    assert "No file links recorded" not in page.locator("main").inner_text()
    stale_list = page.locator("#stale-list li").all_inner_texts()
    assert any("app/models/form.py:publish changed" in item for item in stale_list), stale_list
    sizes = page.evaluate(
        """() => [...document.querySelectorAll('svg.graph text')].map((text) =>
             parseFloat(getComputedStyle(text).fontSize) * text.getScreenCTM().a)"""
    )
    assert sizes and min(sizes) >= 11, sizes  # read at a glance: no label drawn smaller than 11 px
    shot(page, "everyday-graph-1400x900")


def test_sync_shows_the_lines_that_matter_with_their_reason(wide: Page, everyday: Everyday) -> None:
    page = wide
    page.goto(f"{everyday.url}#/sync")
    ready(page, "sync")
    wrong = page.locator("#sync-contradicted li")
    assert wrong.count() == 1
    assert wrong.inner_text().startswith("Update or remove CLAUDE.md:7: Use MySQL for storage.\n")
    assert "was superseded on" in wrong.locator(".reason").inner_text()
    assert "Use SQLite for storage" in wrong.locator(".reason").inner_text()
    missing = page.locator("#sync-missing > li")
    assert 1 <= missing.count() <= 8
    reasons = missing.locator(".reason").all_inner_texts()
    assert len(reasons) == missing.count()
    assert any("learned from docs/adr/ADR021-use-auth0.md:1-" in reason for reason in reasons), reasons
    assert not page.locator("pre.diff").is_visible()  # the diff is one click away, not the page
    lines = [line for line in page.locator("main").inner_text().splitlines() if line.strip()]
    assert len(lines) <= 60, len(lines)
    shot(page, "everyday-sync-1400x900")


def test_sessions_count_the_digest_and_the_prompts_apart(wide: Page, everyday: Everyday) -> None:
    from agentctx_store.digest_file import Pending
    from agentctx_store.prompt_answer import Asked, Injection, account

    with Store.open() as store:  # what a SessionStart digest then one prompt record, as the prompt hook does
        asked = Asked(prompt="timeout", session_id="sess-33", pending=Pending(tokens=300, ids=[], count=1))
        injection = Injection(text="(records)", full_ids=[everyday.timeout], tokens=60)
        account(store, everyday.project, asked, injection, path="keyword", at="2026-12-01T10:00:00Z")
    page = wide
    page.goto(f"{everyday.url}#/sessions")
    ready(page, "sessions")
    row = page.locator("tr", has=page.locator("td[title='sess-33']"))
    assert row.locator("td").nth(4).inner_text() == "2 (1 at start, 1 prompt)"
    assert row.locator("details.injection-log summary").inner_text() == "1 prompt injection"
    shot(page, "everyday-sessions")


def test_the_record_detail_shows_where_a_fact_came_from_and_each_anchor(wide: Page, everyday: Everyday) -> None:
    page = wide
    page.goto(f"{everyday.url}#/records?id={everyday.published}")
    ready(page, "records")
    page.wait_for_selector("#detail-anchors")
    assert page.locator("#detail-anchors").inner_text() == "app/models/form.py:publish changed"
    page.goto(f"{everyday.url}#/records")
    ready(page, "records")
    page.get_by_label("Search", exact=True).fill("statuspage")
    page.wait_for_selector("#result-summary:has-text('statuspage')")
    page.locator("#results tbody tr").first.get_by_role("button").first.click()
    page.wait_for_selector("#detail-source")
    assert page.locator("#detail-source").inner_text().startswith("docs/adr/ADR032-use-statuspage.md:1-")
    assert page.locator("#detail-anchors").inner_text().endswith("fresh")
    shot(page, "everyday-record-detail")


def test_the_inbox_shows_two_heads_and_keeps_the_one_chosen(page: Page, live_url: str, seeded: Seeded) -> None:
    """Issue 35: a record two machines superseded at once shows both heads; Keep supersedes the other."""
    from agentctx_store import NewRecord

    with Store.open() as store:
        old = store.add(seeded.project, NewRecord(type="decision", title="Cache layer", body="We cache in memory."))
        _, redis = store.supersede(seeded.project, old.record_id, body="We cache in Redis.")
        memcached = store.add(
            seeded.project, NewRecord(type="decision", title="Cache layer", body="We cache in Memcached.")
        )
        store.add_edge(memcached.record_id, old.record_id, "supersedes")
    page.goto(f"{live_url}#/inbox")
    ready(page, "inbox")
    section = page.get_by_role("region", name="Two heads")
    assert "1 record with two heads" in section.locator("#heads-summary").inner_text()
    assert section.locator("li[data-head]").count() == 2
    shot(page, "inbox-04-two-heads")
    section.get_by_role("button", name="Keep Cache layer: We cache in Memcached.").click()
    page.wait_for_selector("#heads-summary:has-text('No two heads')")
    with Store.open() as store:
        assert store.get(seeded.project, redis.record_id).superseded_by == memcached.record_id
        assert store.get(seeded.project, memcached.record_id).superseded_at is None
