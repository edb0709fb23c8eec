"""Every page on a phone, as a visitor, a user and an admin: headless Chromium emulating a
390 px wide phone against a real `arena league serve` on loopback that has played games between
house bots, one of which logs every turn.

On every page: nothing wider than the screen (a wide table scrolls inside its own box), the
header in two lines at most with every page's link on one line and none cut off, a chart's text
at least 10 px high, every timestamp in the one format inside a `<time datetime>`, and no
reason code where words belong. Then, one by one, what a person meets on these pages: the logs
page's turn column, a replay that opens at its end or at the step its address names, a page
past the end of a list, retiring with a confirmation, the Elo column's word on when it fills,
and the favicon. Screenshots of every page are saved under tmp_path (docs/league-phone.png is
one of them).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator

import pytest

from arena.league.db.schema import VOID_WORDS
from arena.referee.outcome import REASON_WORDS

from ..support import (
    BOTS,
    PHONE,
    Server,
    add_user,
    cli,
    console_errors,
    make_league,
    phone_fixture,
    wait,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: finished games the league plays before the pages are opened
GAMES = 4
#: a bot that logs every turn, in markup that must stay text
LOGGER = """from protocol.sdk import run_bot

def choose(turn, bot):
    bot.log("<b>turn %d</b>" % turn["turn"])
    return bot.rng.choice(turn["legal"])

raise SystemExit(run_bot(choose))
"""

driver = phone_fixture()


class World:
    def __init__(self, server: Server, user: str, admin: str, game: int) -> None:
        self.server = server
        self.user = user
        self.admin = admin
        #: a finished game the logger played
        self.game = game


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("phone-league")
    d = make_league(
        tmp / "league",
        games='["stripes"]',
        concurrency="1",
        time_control='"20+0.2"',
        opening_turns="0",
        # no refit during the test: the Elo column stays empty and says when it fills
        official_every="3600",
    )
    user = add_user(d, "op")
    admin = cli("league", "user", "add", "boss", "--admin", "-C", str(d)).strip().splitlines()[-1]
    for name in ("random-a", "a-bot-with-a-rather-long-name-indeed", "spare"):
        bot = tmp / name
        shutil.copytree(BOTS / "random-py", bot)
        manifest = bot / "bot.toml"
        manifest.write_text(re.sub(r'(?m)^name = ".*"$', f'name = "{name}"', manifest.read_text()))
        cli("league", "bot", "add", str(bot), "--owner", "op", "-C", str(d))
    logger = tmp / "logger"
    logger.mkdir()
    (logger / "bot.toml").write_text('name = "logger"\ncommand = ["python3", "bot.py"]\n')
    (logger / "bot.py").write_text(LOGGER)
    cli("league", "bot", "add", str(logger), "--owner", "op", "-C", str(d))

    def logged_game(server: Server) -> int | None:
        games = server.get("/api/v1/games", params={"limit": 50}).json()["items"]
        finished = [g for g in games if g["state"] == "finished"]
        mine = [g["id"] for g in finished if "logger" in [s["bot"] for s in g["seats"]]]
        return mine[0] if len(finished) >= GAMES and mine else None

    with Server(d) as server:
        game = server.wait_for(lambda: logged_game(server), 120, "games with the logger")
        yield World(server, user, admin, game)


def log_in(driver, world: World, token: str | None) -> None:
    """A fresh session: a visitor (None), or logged in with `token` through the form."""
    driver.delete_all_cookies()
    if token is None:
        return
    driver.get(f"{world.server.url}/login")
    driver.find_element("id", "token").send_keys(token)
    driver.find_element("id", "login").click()
    wait(
        driver,
        lambda d: (
            "/login" not in d.current_url
            and d.execute_script("return document.readyState") == "complete"
        ),
        20,
        "logged in",
    )


#: what a page looks like on the phone, read in one script
FACTS = """
const nav = document.querySelector('header.top nav');
const box = nav.getBoundingClientRect();
const links = Array.from(nav.querySelectorAll('a')).filter(a => a.getClientRects().length);
const shown = el => el.getClientRects().length > 0;
return {
  scroll: document.documentElement.scrollWidth,
  width: document.documentElement.clientWidth,
  header: document.querySelector('header.top').getBoundingClientRect().height,
  navLines: new Set(links.map(a => Math.round(a.getBoundingClientRect().top))).size,
  navCut: links.filter(a => {
    const r = a.getBoundingClientRect();
    return r.right > box.right + 0.5 || r.left < box.left - 0.5;
  }).map(a => a.textContent),
  charts: document.querySelectorAll('figure.chart').length,
  chartText: Array.from(document.querySelectorAll('figure.chart svg text')).filter(shown)
    .map(t => t.getBoundingClientRect().height),
  times: Array.from(document.querySelectorAll('time'))
    .map(t => [t.getAttribute('datetime'), t.textContent]),
  text: document.body.innerText,
};
"""
#: the one format of a timestamp on the pages, and of its machine-readable form
SHOWN_TIME = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$")
MACHINE_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
#: anything that looks like a date and time in a page's text
ANY_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?Z?( UTC)?")
#: codes that must never show as they are (those with an underscore cannot be words)
CODES = sorted(c for c in (*REASON_WORDS, *VOID_WORDS) if "_" in c)


def pages(world: World, who: str) -> list[str]:
    game = world.game
    public = [
        "/",
        "/leaderboard",
        "/leaderboard/stripes",
        "/leaderboard/stripes?page=7",
        "/games",
        "/games?before=1",
        f"/games/{game}",
        "/bots/logger",
        "/bots/a-bot-with-a-rather-long-name-indeed",
        "/live",
        "/workers",
        "/submissions/1",
        "/no-such-page",
    ]
    if who == "visitor":
        return [*public, "/login"]
    return [*public, f"/games/{game}/logs", "/submit", "/play", "/bots/spare/retire"]


def check_page(facts: dict, where: str) -> None:
    assert facts["width"] == PHONE[0], f"{where}: not a phone's width: {facts['width']}"
    assert facts["scroll"] <= facts["width"], f"{where}: {facts['scroll']} px wide on a phone"
    assert facts["navLines"] == 1 and not facts["navCut"], f"{where}: nav {facts}"
    assert facts["header"] <= 80, f"{where}: a header of {facts['header']} px (3+ lines)"
    if facts["charts"]:
        assert facts["chartText"], f"{where}: no chart text shown"
        assert min(facts["chartText"]) >= 10, f"{where}: chart text {min(facts['chartText'])}"
    for machine, shown in facts["times"]:
        assert MACHINE_TIME.match(machine or "") and SHOWN_TIME.match(shown), (where, machine)
    for m in ANY_TIME.finditer(facts["text"]):
        assert SHOWN_TIME.match(m.group(0)), f"{where}: a timestamp as {m.group(0)!r}"
    for code in CODES:  # (a game option of the same name, "max_turns=400", is no reason)
        found = re.search(rf"\b{code}\b(?!=)", facts["text"])
        assert not found, f"{where}: the code {code!r} where words belong"
    assert not re.search(r"\bwins by \w+_", facts["text"]), where


@pytest.mark.parametrize("who", ["visitor", "user", "admin"])
def test_every_page_fits_a_phone_and_says_things_one_way(driver, world, who, tmp_path):
    log_in(driver, world, {"visitor": None, "user": world.user, "admin": world.admin}[who])
    driver.get_log("browser")
    for path in pages(world, who):
        driver.get(f"{world.server.url}{path}")
        wait(
            driver,
            lambda d: d.execute_script("return document.readyState") == "complete",
            20,
            path,
        )
        if path.startswith("/games/") and path.count("/") == 2:
            wait(driver, lambda d: d.find_elements("css selector", ".arena-board svg"), 20, path)
        facts = driver.execute_script(FACTS)
        name = re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-") or "home"
        driver.save_screenshot(str(tmp_path / f"{who}-{name}.png"))
        check_page(facts, f"{who} {path}")
    # the pages' own requests (the 404 page and the past-the-end pages are 404s on purpose)
    errors = [e for e in console_errors(driver) if "404" not in e["message"]]
    assert errors == []


def test_the_logs_page_shows_each_lines_turn(driver, world):
    from selenium.webdriver.common.by import By

    log_in(driver, world, world.user)
    driver.get(f"{world.server.url}/games/{world.game}/logs")
    rows = driver.find_elements(By.CSS_SELECTOR, "table.logs tbody tr")
    seen = 0
    for row in rows:
        turn, _, message = (c.text for c in row.find_elements(By.TAG_NAME, "td"))
        m = re.fullmatch(r"<b>turn (\d+)</b>", message)  # the bot's markup is text
        if m:
            assert turn == m.group(1), (turn, message)
            seen += 1
    assert seen >= 2, [r.text for r in rows]


def test_the_replay_opens_at_the_end_or_at_the_step_in_the_address(driver, world):
    from selenium.webdriver.common.keys import Keys

    url = f"{world.server.url}/games/{world.game}"
    where = (
        "var v = window.arenaViewers && window.arenaViewers[0];"
        " return v && [v.position(), v.count];"
    )

    def opened(d):
        return d.execute_script(where)

    driver.get(url)
    position, count = wait(driver, opened, 20, "the viewer")
    assert count > 3 and position == count - 1  # the headline gives the result: at the end
    driver.get(f"{world.server.url}/games")
    driver.get(f"{url}#step=2")
    assert wait(driver, opened, 20, "the viewer")[0] == 2
    driver.execute_script("window.location.hash = '#end';")
    wait(driver, lambda d: opened(d)[0] == count - 1, 10, "the end after #end")
    driver.find_element("tag name", "body").send_keys(Keys.HOME)
    wait(driver, lambda d: opened(d)[0] == 0, 10, "the start after Home")
    assert driver.execute_script("return window.location.hash;") == "#step=0"  # linkable


def test_a_page_past_the_end_says_so_and_links_to_the_last(driver, world):
    from selenium.webdriver.common.by import By

    log_in(driver, world, None)
    driver.get(f"{world.server.url}/leaderboard/stripes?page=7")
    said = driver.find_element(By.ID, "past-end").text
    assert "page 7 is past its end" in said and "No active" not in driver.page_source
    driver.find_element(By.ID, "last-page").click()
    wait(driver, lambda d: "page=1" in d.current_url, 20, "the last page")
    assert driver.find_elements(By.CSS_SELECTOR, "table.leaderboard tbody tr a")
    driver.get(f"{world.server.url}/games?before=1")
    assert "past the end" in driver.find_element(By.ID, "past-end").text
    driver.find_element(By.ID, "last-page").click()
    wait(driver, lambda d: d.current_url.endswith("/games"), 20, "the newest games")
    assert driver.find_elements(By.CSS_SELECTOR, "table.games tbody tr a")


def test_retiring_asks_first_and_the_version_reads_retired(driver, world):
    from selenium.webdriver.common.by import By

    server = world.server
    log_in(driver, world, world.user)
    driver.get(f"{server.url}/bots/spare")
    driver.find_element(By.ID, "retire").click()
    wait(driver, lambda d: d.current_url.endswith("/bots/spare/retire"), 20, "the confirmation")
    assert server.get("/api/v1/bots/spare").json()["disabled"] is False  # nothing yet
    # the box is required; a browser that ignores that (or a crafted form) is asked again
    driver.execute_script("document.getElementById('confirm').removeAttribute('required');")
    driver.find_element(By.CSS_SELECTOR, "#retire-form button[type=submit]").click()
    error = wait(driver, lambda d: d.find_elements(By.ID, "retire-error"), 20, "asked again")
    assert "Tick the box" in error[0].text
    assert server.get("/api/v1/bots/spare").json()["disabled"] is False
    driver.find_element(By.ID, "confirm").click()
    driver.find_element(By.CSS_SELECTOR, "#retire-form button[type=submit]").click()
    wait(driver, lambda d: d.current_url.endswith("/bots/spare"), 20, "the bot's page")
    assert server.get("/api/v1/bots/spare").json()["disabled"] is True
    assert "retired" in driver.find_element(By.TAG_NAME, "h1").text
    states = driver.find_elements(By.CSS_SELECTOR, "table.versions tbody td .state")
    assert [s.text for s in states] == ["retired"]
    assert driver.find_elements(By.XPATH, "//button[text()='Reactivate this bot']")


def test_the_elo_column_says_when_it_fills(driver, world):
    from selenium.webdriver.common.by import By

    log_in(driver, world, None)
    driver.get(f"{world.server.url}/leaderboard/stripes")
    pending = driver.find_elements(By.CSS_SELECTOR, "table.leaderboard abbr.pending")
    assert pending, "no Elo is fitted yet in this league (refits are an hour apart)"
    assert all("refitted every 60 minutes" in p.get_attribute("title") for p in pending)
    note = driver.find_element(By.ID, "elo-note").text
    assert "refitted over all rated games every 60 minutes" in note


def test_the_favicon_is_served(driver, world):
    driver.get(f"{world.server.url}/")
    status, kind, size = driver.execute_async_script(
        "const done = arguments[0];"
        "fetch('/favicon.ico').then(r => r.arrayBuffer().then(b =>"
        " done([r.status, r.headers.get('content-type'), b.byteLength])));"
    )
    assert (status, kind) == (200, "image/x-icon") and size > 100
    assert driver.find_element("css selector", 'link[rel="icon"]').get_attribute("href")
