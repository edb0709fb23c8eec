"""The HTML replay in a real headless Chromium: it loads without console errors, stepping by
action, by turn, by keyboard and by slider changes the board, the last action is outlined, text
from bots stays text, and the screenshot shows a board."""

from __future__ import annotations

import pytest
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from arena.viewer import action_cells, replay_data, replay_page

from .viewer_helpers import BOTS, HOSTILE_NAME, HTMLBOT, distinct_colours, keep_screenshot, play

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def replay_file(tmp_path_factory):
    """A real Quadraphages game (several actions per turn) with an HTML-named, HTML-logging
    bot, as the page `arena replay --html` writes."""
    record = play("quadraphages", HTMLBOT, BOTS / "random-py", seed=11, max_turns="16")
    path = tmp_path_factory.mktemp("replay") / "game.html"
    data = replay_data(record)
    path.write_text(replay_page(data), encoding="utf-8")
    return path, data


def load(browser, path, at: str = "#step=0"):
    """The page opened at `at` (it opens at the end without one: its header gives the
    result), loaded afresh."""
    browser.get("about:blank")
    browser.get_log("browser")  # drop what earlier pages said
    browser.get(path.as_uri() + at)
    browser.find_element(By.CSS_SELECTOR, ".arena-viewer svg")
    return browser


def board(browser) -> dict[str, str]:
    """What every cell shows (marked cells are moved to the end of the drawing, so the order
    of the SVG's children is no measure)."""
    return browser.execute_script(
        "return Object.fromEntries(Array.from("
        "document.querySelectorAll('.arena-board g[data-cell]'),"
        "g => [g.getAttribute('data-cell'), g.innerHTML]))"
    )


def step(browser) -> int:
    return int(browser.find_element(By.CSS_SELECTOR, ".arena-viewer").get_attribute("data-step"))


def console_errors(browser) -> list:
    return [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]


def test_page_loads_without_console_errors_and_shows_a_board(browser, replay_file):
    path, _data = replay_file
    load(browser, path)
    assert console_errors(browser) == []
    assert browser.title.startswith("Quadraphages: ")
    cells = browser.find_elements(By.CSS_SELECTOR, ".arena-board g[data-cell]")
    assert len(cells) == 81  # 9 x 9, every cell named for clicking
    assert {c.get_attribute("data-cell") for c in cells} >= {"a1", "e5", "i9"}
    shot = browser.get_screenshot_as_png()
    keep_screenshot(shot, "replay-start.png")
    assert distinct_colours(shot) > 20  # a board with stones, text and controls, not a blank


def test_stepping_changes_the_board(browser, replay_file):
    path, data = replay_file
    load(browser, path)
    start = board(browser)
    assert step(browser) == 0
    # the first action that changes a cell (Quadraphages opens with an announced number)
    first = next(i for i, s in enumerate(data["steps"]) if s.get("cells"))
    for _ in range(first):
        browser.find_element(By.CSS_SELECTOR, "button[title^='next action']").click()
    assert step(browser) == first
    assert board(browser) != start
    # the last action's cells are outlined
    action = data["steps"][first]["action"]
    assert action_cells(action)
    marked = browser.find_elements(By.CSS_SELECTOR, ".arena-board g.arena-last")
    assert {m.get_attribute("data-cell") for m in marked} == set(action_cells(action))
    for _ in range(first):
        browser.find_element(By.CSS_SELECTOR, "button[title^='previous action']").click()
    assert step(browser) == 0 and board(browser) == start
    # by turn: to the last action of the first turn
    browser.find_element(By.CSS_SELECTOR, "button[title^='next turn']").click()
    first_turn = [s for s in data["steps"][1:] if s["turn"] == data["steps"][1]["turn"]]
    assert step(browser) == len(first_turn)
    # keyboard: End, Home, arrows, shift+arrows
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.END)
    assert step(browser) == len(data["steps"]) - 1
    end = board(browser)
    body.send_keys(Keys.HOME)
    assert step(browser) == 0 and board(browser) == start
    body.send_keys(Keys.ARROW_RIGHT)
    body.send_keys(Keys.ARROW_RIGHT)
    assert step(browser) == 2
    body.send_keys(Keys.SHIFT, Keys.ARROW_LEFT)
    assert step(browser) == 0
    # the slider jumps anywhere; going back and forth ends on the same picture
    browser.execute_script(
        "const s = document.querySelector('.arena-slider');"
        "s.value = s.max; s.dispatchEvent(new Event('input'));"
    )
    assert board(browser) == end
    keep_screenshot(browser.get_screenshot_as_png(), "replay-end.png")
    assert "arena-at-end" in browser.find_element(By.CSS_SELECTOR, ".arena-result").get_attribute(
        "class"
    )
    assert console_errors(browser) == []


def test_text_from_bots_stays_text(browser, replay_file):
    path, data = replay_file
    load(browser, path)
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018  (no script of the bot's ran)
    heading = browser.find_element(By.TAG_NAME, "h1").text
    assert HOSTILE_NAME in heading
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.END)
    # every log shown as the characters it had, and no element made of it
    step_logs = browser.find_element(By.CSS_SELECTOR, ".arena-logs").text
    start, stop = data["steps"][-1]["logs"]
    for log in data["logs"][start:stop]:
        assert log["message"] in step_logs
    for selector in ("img", ".arena-viewer script", ".arena-logs b", ".arena-logs svg"):
        assert browser.find_elements(By.CSS_SELECTOR, selector) == []
    assert browser.execute_script("return document.scripts.length") == 2


GROW = """
const [data, k] = arguments;
// every cell's drawing, by name (marking moves groups, so the DOM order is no measure)
const cells = el => JSON.stringify(Array.from(el.querySelectorAll('g[data-cell]'),
  g => [g.getAttribute('data-cell'), g.innerHTML]).sort());
const whole = document.createElement('div');
const part = document.createElement('div');
document.body.append(whole, part);
const a = ArenaViewer.mount(whole, data);
const b = ArenaViewer.mount(part, Object.assign({}, data, {steps: data.steps.slice(0, k)}));
b.show(k - 1);
b.append(data.steps.slice(k, k + 3));
b.append(data.steps.slice(k + 3));
const bad = [];
if (b.count !== a.count) bad.push('count ' + b.count + ' != ' + a.count);
if (b.position() !== a.count - 1) bad.push('did not follow the last step');
const buttons = el => el.querySelectorAll('.arena-moves button').length;
if (buttons(part) !== buttons(whole)) bad.push('move list');
for (let i = a.count - 1; i >= 0; i--) {
  a.show(i); b.show(i);
  if (cells(whole) !== cells(part)) bad.push('board at step ' + i);
}
whole.remove(); part.remove();
return bad;
"""


def test_a_viewer_that_grows_by_append_shows_what_a_whole_one_shows(browser, replay_file):
    """The league's live pages mount the steps so far and append the rest as they are
    played: every step then looks as in a viewer mounted on the whole replay."""
    path, data = replay_file
    load(browser, path)
    n = len(data["steps"])
    for k in (1, 2, n // 2, n - 1):
        assert browser.execute_script(GROW, data, k) == [], k
    assert console_errors(browser) == []
