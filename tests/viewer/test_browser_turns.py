"""What the HTML replay shows beside each step, in a real headless Chromium: the debug marks
of the turn on the board, a toggle per seat that hides them, a bot's hostile mark text shown
as text; the turn's logs and stderr lines; and where the page opens (the end, `#step=N`,
`#end`), keeping the address at the step shown."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from arena.referee import load_bot
from arena.viewer import replay_data, replay_page

from .viewer_helpers import BOTS, play

pytestmark = pytest.mark.browser

MARKBOT = Path(__file__).resolve().parents[1] / "referee" / "bots" / "markbot.py"
HOSTILE = "<script>x"  # within the 12 characters a mark's text may have
PLAN = [
    [{"cell": "a1", "text": HOSTILE, "colour": "red"}, {"cell": "zz1"}],
    [{"cell": "b2"}, {"arrow": ["a1", "c3"], "colour": "blue"}, {"cell": "m13", "text": "<b>"}],
]


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A real Stripes game: markbot (marks, logs, stderr every turn) against random-py."""
    tmp = tmp_path_factory.mktemp("turns")
    plan = tmp / "plan.json"
    plan.write_text(json.dumps(PLAN), encoding="utf-8")
    bot = load_bot(f"json:{sys.executable} {MARKBOT} {plan}")
    record = play("stripes", bot, BOTS / "random-py", seed=4)
    assert not record.result["forfeit"], record.result
    data = replay_data(record)
    path = tmp / "game.html"
    path.write_text(replay_page(data), encoding="utf-8")
    return path, data


def open_at(browser, path: Path, at: str = "") -> None:
    browser.get("about:blank")
    browser.get_log("browser")
    browser.get(path.as_uri() + at)
    browser.find_element(By.CSS_SELECTOR, ".arena-viewer svg")


def shown_step(browser) -> int:
    return int(browser.find_element(By.CSS_SELECTOR, ".arena-viewer").get_attribute("data-step"))


def marks(browser, seat: int) -> list[dict]:
    return browser.execute_script(
        "return Array.from(document.querySelectorAll("
        f"'.arena-board .arena-mark[data-seat=\"{seat}\"]'),"
        "e => ({tag: e.tagName, text: e.textContent}))"
    )


def test_the_page_opens_at_the_end_and_at_the_step_its_address_names(browser, page):
    path, data = page
    last = len(data["steps"]) - 1
    open_at(browser, path)
    assert shown_step(browser) == last
    open_at(browser, path, "#step=3")
    assert shown_step(browser) == 3
    browser.find_element(By.CSS_SELECTOR, "button[title^='next action']").click()
    assert browser.execute_script("return window.location.hash") == "#step=4"  # linkable
    browser.execute_script("window.location.hash = '#end'")  # followed: hashchange
    WebDriverWait(browser, 10).until(lambda d: shown_step(d) == last)
    open_at(browser, path, "#end")
    assert shown_step(browser) == last


def test_each_turn_shows_its_marks_logs_and_stderr(browser, page):
    path, data = page
    first = next(i for i, s in enumerate(data["steps"]) if s["seat"] == 0)
    turn = data["steps"][first]["turn"]
    open_at(browser, path, f"#step={first}")
    drawn = marks(browser, 0)
    # turn 1: the log's text mark (its bad cell dropped) and the move's three marks
    assert sorted(d["tag"] for d in drawn) == ["circle", "g", "text", "text"], drawn
    texts = sorted(d["text"] for d in drawn if d["tag"] == "text")
    assert texts == sorted([HOSTILE, "<b>"])
    # the bot's text is text: no element was made of it, no script ran
    assert (
        browser.execute_script(
            "return document.querySelectorAll('.arena-board script, .arena-board b').length"
        )
        == 0
    )
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018
    logs = browser.find_element(By.CSS_SELECTOR, ".arena-logs").text
    assert f"log of turn {turn}" in logs
    assert "arena: marks dropped (1 kept): mark 1: cell 'zz1' is not a cell of this board" in logs
    stderr = browser.find_element(By.CSS_SELECTOR, ".arena-stderr").text
    assert f"stderr of turn {turn}" in stderr and "before the first turn" not in stderr
    # the start shows what came before the first turn
    open_at(browser, path, "#step=0")
    assert (
        "stderr before the first turn"
        in browser.find_element(By.CSS_SELECTOR, ".arena-stderr").text
    )
    assert marks(browser, 0) == []


def test_a_seats_toggle_hides_and_shows_its_marks(browser, page):
    path, data = page
    first = next(i for i, s in enumerate(data["steps"]) if s["seat"] == 0)
    open_at(browser, path, f"#step={first}")
    toggle = browser.find_element(By.CSS_SELECTOR, ".arena-mark-toggles input[data-seat='0']")
    assert toggle.is_selected()  # on by default in a local viewer
    # random-py draws nothing: no toggle for it
    assert browser.find_elements(By.CSS_SELECTOR, ".arena-mark-toggles input[data-seat='1']") == []
    assert marks(browser, 0)
    toggle.click()
    assert marks(browser, 0) == []
    browser.find_element(By.CSS_SELECTOR, "button[title^='next action']").click()
    browser.find_element(By.CSS_SELECTOR, "button[title^='next action']").click()
    assert marks(browser, 0) == []  # stays off while stepping
    toggle.click()
    assert marks(browser, 0)
