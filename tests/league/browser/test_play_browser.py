"""A person plays a whole game against bots/random-py by clicking, in headless Chromium against
a real `arena league serve` on loopback: log in, fill the /play form, then at every prompt click
one of the cells the page highlights as legal, until the result shows; on the way, an illegal
click (on the bot's stone) is explained in the game's words, and a line is typed in notation. The
game is recorded unrated (kind `challenge`) and its replay page opens.

The variant is Papagra on a 3x3 board with a turn limit of 7: multi-action turns (two actions
after the first), and a game of a few seconds. Screenshots of each stage are saved under
tmp_path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import partial

import pytest

from arena.games.phages import PASS
from arena.referee.outcome import reason_text

from ..support import (
    BOTS,
    Server,
    add_user,
    browser_login,
    cli,
    console_errors,
    driver_fixture,
    make_league,
    wait,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GAMES = (
    '[{name = "papagra", label = "papagra-mini", options = {board = "square 3", max_turns = 7}},'
    ' {name = "quadraphages", label = "quadra-mini", options = {max_turns = 4}},'
    ' {name = "stripes", label = "stripes-mini", options = {max_turns = 6}}]'
)


driver = driver_fixture()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    d = make_league(tmp_path_factory.mktemp("play-league") / "league", games=GAMES)
    token = add_user(d, "ada")
    cli("league", "bot", "add", str(BOTS / "random-py"), "--owner", "ada", "-C", str(d))
    with Server(d) as server:
        yield server, token


def state(driver) -> tuple[str, str]:
    play = driver.find_element("id", "play")
    return play.get_attribute("data-state") or "", play.get_attribute("data-ask") or ""


def my_turn_or_end(driver, since: str) -> bool:
    now, ask = state(driver)
    return now in ("over", "final") or (now == "asking" and ask != since)


def asked_again(driver, since: str) -> bool:
    return state(driver)[1] != since


def test_play_a_whole_game_against_random_py_by_clicking(driver, served, tmp_path):
    from selenium.webdriver.common.by import By

    server, token = served
    browser_login(driver, server, "/play", token)
    assert "random-py" in driver.find_element(By.ID, "bot").text
    assert driver.find_element(By.ID, "variant").get_attribute("value") == "papagra-mini"
    driver.save_screenshot(str(tmp_path / "play-form.png"))
    driver.find_element(By.ID, "start").click()
    wait(driver, lambda d: "/play/" in d.current_url, 20, "the game's board")
    game_id = int(driver.current_url.rsplit("/", 1)[1])

    clicks = illegal = typed = 0
    last_ask = ""
    while True:
        wait(driver, partial(my_turn_or_end, since=last_ask), 30, "my turn or the end")
        now, last_ask = state(driver)
        if now != "asking":
            break
        if clicks == 0:
            driver.save_screenshot(str(tmp_path / "play-first-turn.png"))
        blocked = driver.find_elements(By.CSS_SELECTOR, "#board g[data-cell]:not(.play-legal)")
        if clicks >= 1 and not illegal:
            if blocked:
                # a cell without a dot (the bot's stone): the game says why it is illegal
                blocked[0].find_element(By.XPATH, "./*[1]").click()
                expected = "occupied by a black stone"
            else:  # the bot left no stone on the board: an illegal line instead
                driver.find_element(By.ID, "line").send_keys("zz9")
                driver.find_element(By.ID, "send").click()
                expected = "zz9"
            message = driver.find_element(By.ID, "message")
            wait(driver, lambda d: d.find_element(By.ID, "message").text, 20, "explained")
            assert expected in message.text, message.text
            assert "error" in message.get_attribute("class")
            driver.save_screenshot(str(tmp_path / "play-illegal.png"))
            illegal += 1
            wait(driver, partial(asked_again, since=last_ask), 20, "asked again")
            last_ask = state(driver)[1]
            # what a person types comes back as text, never as markup
            hostile = '<img src=x id=injected onerror="document.title=1">'
            driver.find_element(By.ID, "line").send_keys(hostile)
            driver.find_element(By.ID, "send").click()
            wait(driver, partial(asked_again, since=last_ask), 20, "asked again")
            last_ask = state(driver)[1]
            assert driver.find_element(By.ID, "message").text.startswith("<img")
            assert not driver.find_elements(By.ID, "injected")
        legal = driver.find_elements(By.CSS_SELECTOR, "#board g.play-legal")
        assert legal, "my turn, yet no cell is highlighted"
        if clicks == 2 and not typed:
            # the text box takes the notation too
            cell = legal[-1].get_attribute("data-cell")
            driver.find_element(By.ID, "line").send_keys(cell)
            driver.find_element(By.ID, "send").click()
            typed += 1
        else:
            legal[0].find_element(By.XPATH, "./*[1]").click()
        clicks += 1
        assert clicks < 40, "the game should have ended"

    # the bot's end, its exit and the record's commit: seconds on a loaded machine (three test
    # processes on two cores once took more than 30)
    wait(driver, lambda d: state(d)[0] == "final", 120, "the game recorded")
    result = driver.find_element(By.ID, "result")
    assert result.is_displayed(), "no result shown"
    assert re.match(r"(You win|You lose|Draw) \((1-0|0-1|1/2-1/2), ", result.text), result.text
    driver.save_screenshot(str(tmp_path / "play-result.png"))
    assert clicks >= 3 and illegal == 1 and typed == 1
    assert console_errors(driver) == []

    detail = server.get(f"/api/v1/games/{game_id}").json()
    assert detail["kind"] == "challenge" and detail["rated"] is False
    # how it ended, in words (the reason code is the API's)
    assert detail["state"] == "finished" and f", {reason_text(detail['reason'])})" in result.text
    assert detail["seats"][0]["bot"] == "@ada"
    board = server.get("/api/v1/leaderboard/papagra-mini").json()["items"]
    assert [(r["bot"], r["games"]) for r in board] == [("random-py", 0)]

    driver.find_element(By.ID, "replay-link").click()
    wait(driver, lambda d: d.current_url.endswith(f"/games/{game_id}"), 20, "the game's page")
    if driver.find_elements(By.CSS_SELECTOR, "[data-arena-replay], .arena-viewer"):
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".arena-board svg"), 20, "replay")
        driver.save_screenshot(str(tmp_path / "play-replay.png"))
        assert console_errors(driver) == []
    else:  # the game page is another helper's: the record behind it replays
        record = server.get(f"/api/v1/games/{game_id}/record").json()
        assert record["result"]["reason"] == detail["reason"]


def clicks_state(driver) -> tuple[str, str, str]:
    play = driver.find_element("id", "play")
    return tuple(play.get_attribute(a) or "" for a in ("data-state", "data-ask", "data-picked"))


def moved_on(driver, since: tuple[str, str, str]) -> bool:
    now = clicks_state(driver)
    return now[0] in ("over", "final") or (now[0] == "asking" and now != since)


@pytest.mark.parametrize("variant", ["quadra-mini", "stripes-mini"])
def test_two_cell_actions_and_buttons_by_clicking(driver, served, tmp_path, variant):
    """Quadraphages: the announced number is a button, a stone's move is the stone then its
    landing cell; Stripes: a stripe is its two ends. The person picks the first highlighted
    cell each time, then what completes it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    server, token = served
    driver.get_log("browser")  # what earlier pages said
    driver.get(f"{server.url}/play")
    if driver.find_elements(By.ID, "token"):
        driver.find_element(By.ID, "token").send_keys(token)
        driver.find_element(By.ID, "login").click()
    wait(driver, lambda d: d.find_elements(By.ID, "variant"), 20, "the play form")
    Select(driver.find_element(By.ID, "variant")).select_by_value(variant)
    driver.find_element(By.ID, "start").click()
    wait(driver, lambda d: "/play/" in d.current_url, 20, "the game's board")
    game_id = int(driver.current_url.rsplit("/", 1)[1])
    seen = ("", "", "")
    picks = buttons = sent = 0
    shot = False
    while True:
        wait(driver, partial(moved_on, since=seen), 30, "my turn, a pick or the end")
        seen = clicks_state(driver)
        if seen[0] != "asking":
            break
        if seen[2] and not shot:
            shot = True
            driver.save_screenshot(str(tmp_path / f"{variant}-picked.png"))
        cells = driver.find_elements(By.CSS_SELECTOR, "#board g.play-legal")
        choices = driver.find_elements(By.CSS_SELECTOR, "#choices button")
        if cells:
            picks += bool(not seen[2])
            cells[0].find_element(By.XPATH, "./*[1]").click()
        else:
            assert choices, "my turn, yet nothing to click"
            buttons += 1
            choices[0].click()
        sent += 1
        assert sent < 80, "the game should have ended"
    wait(driver, lambda d: clicks_state(d)[0] == "final", 30, "the game recorded")
    driver.save_screenshot(str(tmp_path / f"{variant}-result.png"))
    assert console_errors(driver) == []
    detail = server.get(f"/api/v1/games/{game_id}").json()
    assert detail["kind"] == "challenge" and detail["state"] == "finished"
    assert reason_text(detail["reason"]) in driver.find_element(By.ID, "result").text
    record = server.get(f"/api/v1/games/{game_id}/record").json()
    mine = [t for t in record["turns"] if t["seat"] == 0]
    assert mine and not any(a.get("illegal") for t in mine for a in t["actions"])
    if variant == "quadra-mini":
        assert buttons >= 1  # the numbers
    # every two-cell action took two clicks: a pick, then its end
    two_cell = [
        a["action"]
        for t in mine
        for a in t["actions"]
        if len(a["action"]) >= 4 and a["action"] != PASS  # a pass is a button
    ]
    assert two_cell and picks >= len(two_cell)
