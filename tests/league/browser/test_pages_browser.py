"""The read-only pages in a real browser: headless Chromium against a real `arena league serve`
on loopback that has played a few games between two house bots. The home page, a leaderboard
sorted by a header link, a bot's page with its rating chart, the games list and a game's page,
whose replay steps by the keyboard and by a button (the board changes), with nothing on the
browser console. Screenshots of every page are saved under tmp_path."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator

import pytest

from ..support import BOTS, Server, cli, console_errors, driver_fixture, make_league, wait

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: finished games the league plays before the pages are opened
GAMES = 3

driver = driver_fixture()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("pages-league")
    d = make_league(
        tmp / "league",
        games='["stripes"]',
        concurrency="1",
        time_control='"20+0.2"',
        opening_turns="0",
    )
    cli("league", "user", "add", "op", "-C", str(d))
    for name in ("random-a", "random-b"):
        bot = tmp / name
        shutil.copytree(BOTS / "random-py", bot)
        manifest = bot / "bot.toml"
        manifest.write_text(re.sub(r'(?m)^name = ".*"$', f'name = "{name}"', manifest.read_text()))
        cli("league", "bot", "add", str(bot), "--owner", "op", "-C", str(d))
    with Server(d) as server:
        server.wait_for(
            lambda: len(server.get("/api/v1/games").json()["items"]) >= GAMES,
            90,
            f"{GAMES} games recorded",
        )
        yield server


def board_html(d) -> str:
    return d.execute_script("return document.querySelector('.arena-board').innerHTML;")


def test_leaderboard_bot_and_game_pages_and_the_replay_steps(driver, server, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver.get_log("browser")  # what earlier tests' pages said is theirs
    driver.get(f"{server.url}/")
    assert driver.find_element(By.CSS_SELECTOR, 'a[href="/leaderboard/stripes"]')
    driver.save_screenshot(str(tmp_path / "home.png"))

    driver.get(f"{server.url}/leaderboard/stripes")
    rows = driver.find_elements(By.CSS_SELECTOR, "table.leaderboard tbody tr")
    assert {r.find_elements(By.TAG_NAME, "td")[1].text for r in rows} == {"random-a", "random-b"}
    assert driver.find_elements(By.CSS_SELECTOR, "figure.chart svg polyline")
    driver.save_screenshot(str(tmp_path / "leaderboard.png"))
    driver.find_element(By.LINK_TEXT, "games").click()  # sorting is a link
    wait(driver, lambda d: "sort=games" in d.current_url, 20, "the leaderboard sorted by games")
    assert driver.find_element(By.CSS_SELECTOR, "th.sorted").text.startswith("games")
    driver.save_screenshot(str(tmp_path / "leaderboard-by-games.png"))

    driver.find_element(By.LINK_TEXT, "random-a").click()
    wait(driver, lambda d: d.current_url.endswith("/bots/random-a"), 20, "the bot's page")
    assert driver.find_elements(By.CSS_SELECTOR, "figure.chart svg")
    assert driver.find_elements(By.CSS_SELECTOR, "table.crosstable tbody tr")
    driver.save_screenshot(str(tmp_path / "bot.png"))

    driver.get(f"{server.url}/games")
    driver.save_screenshot(str(tmp_path / "games.png"))
    driver.find_element(By.CSS_SELECTOR, "table.games tbody tr td a").click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".arena-board svg"), 20, "the viewer")
    assert driver.find_element(By.CSS_SELECTOR, "table.players")
    # the viewer opens at the end (the headline gives the result); Home goes to the start, a
    # key press steps one action, a button the next
    at = "var v = window.arenaViewers[0]; return [v.position(), v.count];"
    position, count = driver.execute_script(at)
    assert position == count - 1
    end = board_html(driver)
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.HOME)
    wait(driver, lambda d: board_html(d) != end, 10, "the board at the start")
    first = board_html(driver)
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
    wait(driver, lambda d: board_html(d) != first, 10, "the board after the → key")
    second = board_html(driver)
    driver.find_element(By.CSS_SELECTOR, 'button[title^="next action"]').click()
    wait(driver, lambda d: board_html(d) not in (first, second), 10, "the board after a click")
    driver.find_element(By.CSS_SELECTOR, 'button[title^="end"]').click()
    driver.execute_script("window.scrollTo(0, 0);")
    driver.save_screenshot(str(tmp_path / "game.png"))
    assert console_errors(driver) == []
