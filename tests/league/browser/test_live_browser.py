"""Submitting and watching in a real browser: headless Chromium against a real `arena league
serve` on loopback. A user logs in with the API token, uploads bots/random-py packed by
`pack_bot_dir` through the form, and sees the page follow the validation by itself until the
version is active and on the leaderboard; then opens a game in flight and sees its board
advance without a reload, until the page turns into the recorded replay.

Two house bots that wait 0.15 s per move keep a game running for several seconds, so the game
is still being played when the page opens. Screenshots of every page are saved under tmp_path.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from arena.league.archives import pack_bot_dir

from ..support import (
    BOTS,
    Server,
    add_slow_bots,
    add_user,
    browser_login,
    console_errors,
    driver_fixture,
    make_league,
    wait,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


driver = driver_fixture()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    tmp = tmp_path_factory.mktemp("live-league")
    d = make_league(
        tmp / "league",
        games='["stripes"]',
        concurrency="1",
        time_control='"60+1"',
        opening_turns="0",
        # generous: on a loaded machine random-py must not forfeit its validation on time
        validation_time_control='"30+1"',
    )
    add_slow_bots(d, 0.15)
    token = add_user(d, "dana")
    with Server(d) as server:
        yield server, token


def test_log_in_submit_and_see_the_validation_and_the_leaderboard(driver, served, tmp_path):
    from selenium.webdriver.common.by import By

    server, token = served
    browser_login(driver, server, "/submit", token)
    # a file that is no archive: refused on the form, in words
    junk = tmp_path / "notes.txt"
    junk.write_text("<b>not an archive</b>")
    driver.find_element(By.ID, "archive").send_keys(str(junk))
    driver.find_element(By.ID, "submit").click()
    error = wait(driver, lambda d: d.find_elements(By.ID, "submit-error"), 20, "the refusal")[0]
    assert error.text == "not a tar.gz, tar or zip archive"
    driver.save_screenshot(str(tmp_path / "submit-refused.png"))
    driver.get_log("browser")  # the refusal's 400 is reported as a failed load
    archive = tmp_path / "random-py.tar.gz"
    archive.write_bytes(pack_bot_dir(BOTS / "random-py"))
    driver.find_element(By.ID, "archive").send_keys(str(archive))
    driver.save_screenshot(str(tmp_path / "submit.png"))
    driver.find_element(By.ID, "submit").click()
    wait(driver, lambda d: "/submissions/" in d.current_url, 20, "the submission's page")
    driver.execute_script("window.arenaNotReloaded = true;")
    driver.save_screenshot(str(tmp_path / "submission-running.png"))
    # read in one script: the block is replaced whenever the server sends a new one
    state = "return document.getElementById('submission-state').getAttribute('data-state');"
    assert driver.execute_script(state) in ("queued", "validating", "active")
    wait(driver, lambda d: d.execute_script(state) == "active", 60, "the version active")
    # the page followed by itself: the marker set after it loaded is still there
    assert driver.execute_script("return window.arenaNotReloaded === true;")
    assert "Validation report" in driver.page_source
    driver.save_screenshot(str(tmp_path / "submission-active.png"))
    assert console_errors(driver) == []

    driver.get(f"{server.url}/leaderboard/stripes")
    if "random-py" in driver.page_source:
        driver.save_screenshot(str(tmp_path / "leaderboard.png"))
    else:  # the leaderboard page is another helper's; the API says the same
        board = server.get("/api/v1/leaderboard/stripes").json()["items"]
        assert "random-py" in [row["bot"] for row in board]


def test_a_game_in_flight_advances_on_its_page_then_shows_the_replay(driver, served, tmp_path):
    from selenium.webdriver.common.by import By

    server, _ = served
    driver.get_log("browser")  # drop what earlier pages said
    # a game being played (not one claimed ahead), read in one script: the list replaces
    # itself as games start and end, so an element found now may be gone at the click
    playing = (
        "var a = document.querySelector('table.live-games tr[data-live] a'); return a && a.href;"
    )
    mounted = "[data-live-game][data-live-steps]"
    # a game read as in flight may end before its page loads (a loaded machine): that page is
    # the finished replay, so another game in flight is picked, a bounded number of times
    for tries_left in reversed(range(4)):
        driver.get(f"{server.url}/live")
        href = wait(driver, lambda d: d.execute_script(playing), 60, "a game in flight on /live")
        driver.save_screenshot(str(tmp_path / "live-list.png"))
        driver.get(href)
        if tries_left == 0:
            break
        try:
            wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, mounted), 20, "live viewer")
            break
        except AssertionError:
            continue
    wait(
        driver,
        lambda d: d.find_element(By.CSS_SELECTOR, mounted),
        20,
        "the viewer mounted on the game so far",
    )
    driver.execute_script("window.arenaNotReloaded = true;")
    # the count and the board read in one script, so no event can come in between
    snapshot = (
        "var n = document.querySelector('[data-live-game]');"
        "return [Number(n && n.getAttribute('data-live-steps')),"
        " document.querySelector('.arena-board').innerHTML, window.arenaNotReloaded === true];"
    )
    first, board, _ = driver.execute_script(snapshot)
    driver.save_screenshot(str(tmp_path / "live-game.png"))
    later = wait(
        driver,
        lambda d: (s := d.execute_script(snapshot))[0] > first and s,
        20,
        "the next turn on the page",
    )
    assert later[2]  # no reload: the page that was opened is the page that advanced
    assert later[1] != board  # the board itself changed
    driver.save_screenshot(str(tmp_path / "live-game-later.png"))
    # the game ends: the page reloads into the recorded replay
    started = time.monotonic()
    wait(
        driver,
        lambda d: d.find_elements(By.CSS_SELECTOR, "[data-arena-replay] .arena-board"),
        60,
        "the recorded replay after the game",
    )
    assert "no result recorded" not in driver.page_source
    # shown at its last step, where the live view was
    assert driver.execute_script(
        "var v = window.arenaViewers[0]; return v.position() === v.count - 1;"
    )
    assert time.monotonic() - started < 60
    driver.save_screenshot(str(tmp_path / "live-game-over.png"))
    assert console_errors(driver) == []


#: the games /live or the home page lists as in flight, by id
IN_FLIGHT_IDS = (
    "Array.from(document.querySelectorAll('table.live-games tbody tr'))"
    ".map(r => Number(r.querySelector('td a').textContent))"
)
IN_FLIGHT = f"return {IN_FLIGHT_IDS};"
COUNTS = "document.getElementById('counts').textContent"
NOT_RELOADED = "return window.arenaNotReloaded === true;"


def test_live_and_home_follow_the_games_by_themselves(driver, served, tmp_path):
    from selenium.webdriver.common.by import By

    server, _ = served
    driver.get_log("browser")
    driver.get(f"{server.url}/live")
    driver.execute_script("window.arenaNotReloaded = true;")
    listed = wait(driver, lambda d: d.execute_script(IN_FLIGHT), 60, "a game listed on /live")
    game = listed[0]
    driver.save_screenshot(str(tmp_path / "live-before.png"))
    # the game ends: it leaves the list, and the next one comes, with no reload
    wait(
        driver,
        lambda d: game not in (ids := d.execute_script(IN_FLIGHT)) and ids,
        120,
        f"game {game} gone from /live and the next one listed",
    )
    assert driver.execute_script(NOT_RELOADED), "/live was reloaded, not updated"
    assert server.get(f"/api/v1/games/{game}").json()["state"] in ("finished", "failed")
    driver.save_screenshot(str(tmp_path / "live-after.png"))
    # its "watch" link, followed late, says the game is over and opens its replay at the end
    driver.get(f"{server.url}/live/{game}")
    assert "ended before you got here" in driver.find_element(By.ID, "ended-notice").text
    at = "var v = window.arenaViewers[0]; return v.position() === v.count - 1;"
    assert wait(driver, lambda d: d.execute_script(at), 20, "the replay at its end")

    driver.get(f"{server.url}/")
    driver.execute_script("window.arenaNotReloaded = true;")
    counts = f"return {COUNTS};"
    played = int(driver.execute_script(counts).split()[0])
    recent = "return document.querySelector('table.games tbody tr td a').textContent;"
    newest = driver.execute_script(recent)
    # the count in flight is the list's own length (one query, the one /live shows)
    text, ids = driver.execute_script(f"return [{COUNTS}, {IN_FLIGHT_IDS}];")  # one moment
    assert re.search(rf"\b{len(ids)} in flight", text), (text, ids)
    wait(
        driver,
        lambda d: (
            int(d.execute_script(counts).split()[0]) > played and d.execute_script(recent) != newest
        ),
        120,
        "the home page's count of games played and its recent games moving on",
    )
    assert driver.execute_script(NOT_RELOADED), "the home page was reloaded, not updated"
    driver.save_screenshot(str(tmp_path / "home-after.png"))
    assert console_errors(driver) == []
