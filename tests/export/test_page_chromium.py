"""The session page in a real headless Chromium (Debian's package, installed by scripts/test.sh):
it loads without console errors, switches branches, searches, shows images and tool calls, and
has a dark mode. Screenshots are kept in tests/artifacts/ (ignored by git)."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import rich
from .chromium import Chromium
from .conftest import export

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


@pytest.fixture
def page(sidecar, rich_session, tmp_path: Path):
    sid, ids = rich_session
    target = tmp_path / "session.html"
    export(sidecar, sid, format="html", path=str(target))
    with Chromium() as browser:
        browser.open(target.as_uri())
        yield browser, ids


def main_text(browser: Chromium) -> str:
    return browser.evaluate("document.getElementById('main').innerText")


def test_page_loads_without_errors_and_shows_the_current_branch(page):
    browser, ids = page
    assert browser.errors() == []
    text = main_text(browser)
    assert "Instead, try rotating the signing key." in text and "Rotated the zebra signing key" in text
    assert "Fix the cookie then." not in text  # the other branch
    assert "Tried fixing the cookie flags" in text  # the branch summary, in place
    assert browser.evaluate("document.title") == "Login bug hunt"
    # Both branches listed, the current one marked.
    assert browser.evaluate("document.querySelectorAll('nav .branch').length") == 2
    assert browser.evaluate("document.querySelector('nav .branch.current').innerText").startswith("rotation")
    ARTIFACTS.mkdir(exist_ok=True)
    shot = browser.screenshot(ARTIFACTS / "session-page-light.png")
    print(f"screenshot: {shot}")


def test_switching_branches_shows_the_other_path(page):
    browser, ids = page
    browser.evaluate("document.querySelector('.switch [data-branch-step=\"1\"]').click()")
    text = main_text(browser)
    assert "Fix the cookie then." in text and "rotating the signing key" not in text
    assert browser.evaluate("document.body.dataset.leaf") == ids["main_leaf"]
    # The compaction in place, with what it folded still above it.
    assert "Compaction" in text and "48211 tokens" in text
    assert text.index("The login page rejects valid users") < text.index("Compaction")
    # The tool call collapsed, its result inside it (once), redacted.
    assert browser.evaluate("document.querySelectorAll('details.tool').length") >= 2
    assert browser.evaluate("document.querySelector('details.tool').open") is False
    inside = browser.evaluate("document.querySelector('details.tool').textContent")
    assert "cat .env" in inside and "[REDACTED:aws-access-key:1]" in inside and rich.AWS_KEY not in inside
    assert text.count("LOG_LEVEL=debug") == 0  # collapsed: not shown until opened
    # The screenshot is an image shown inline.
    assert browser.evaluate("document.querySelector('details.tool img') !== null")
    width = browser.evaluate(
        "new Promise(r => { const i = document.querySelector('img'); i.complete ? r(i.naturalWidth) : i.onload = () => r(i.naturalWidth); })"
    )
    assert width == 1
    # Model and token usage per reply, labels as badges.
    assert "claude-sonnet-4" in text and "1200 in · 340 out" in text
    assert browser.evaluate("[...document.querySelectorAll('.badge')].map(b => b.textContent)") == ["bug report"]
    # And back through the sidebar.
    browser.evaluate("document.querySelector('nav .branch[data-leaf]:not(.current)').click()")
    assert "rotating the signing key" in main_text(browser)
    assert browser.errors() == []


def test_search_finds_text_on_any_branch(page):
    browser, ids = page
    browser.evaluate("window.sessionView.switchTo(document.querySelector('nav .branch:not(.current)').dataset.leaf)")
    assert "zebra" not in main_text(browser)
    browser.evaluate("""(() => { const box = document.getElementById('search'); box.value = 'ZEBRA';
        box.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'})); })()""")
    assert browser.evaluate("document.getElementById('hits').textContent") == "1 / 1"
    assert browser.evaluate("document.querySelector('mark').textContent") == "zebra"
    assert browser.evaluate("document.querySelector('.entry.hit').dataset.entryId") == ids["other_done"]
    # Text inside a collapsed tool result is found too, and its call opened.
    browser.evaluate("""(() => { const box = document.getElementById('search'); box.value = 'LOG_LEVEL';
        box.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'})); })()""")
    assert browser.evaluate("document.getElementById('hits').textContent") == "1 / 1"
    assert browser.evaluate("document.querySelector('details.tool[open]') !== null")
    assert browser.errors() == []


def _background(browser: Chromium) -> list[int]:
    color = browser.evaluate("getComputedStyle(document.body).backgroundColor")
    return [int(x) for x in color[color.index("(") + 1 : color.index(")")].split(",")[:3]]


def test_dark_mode_follows_the_system_and_the_toggle(page):
    browser, _ = page
    assert sum(_background(browser)) > 600  # light
    browser.dark(True)
    assert sum(_background(browser)) < 150
    browser.evaluate("document.querySelector('.switch [data-branch-step=\"1\"]').click()")
    ARTIFACTS.mkdir(exist_ok=True)
    shot = browser.screenshot(ARTIFACTS / "session-page-dark.png")
    print(f"screenshot: {shot}")
    browser.evaluate("document.getElementById('theme').click()")  # the toggle: back to light
    assert sum(_background(browser)) > 600
    assert browser.errors() == []
