"""`arena tournament report --format html` on a real tournament (an SPRT of the strong bot
against the HTML-named bot): one file with standings, charts, the SPRT, every game listed and
its replay embedded; then the page in headless Chromium."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from xml.etree import ElementTree

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.wait import WebDriverWait

from arena.referee import GameRecord
from arena.viewer import replay_data
from arena.viewer.report import unpack_replay

from .viewer_helpers import BOTS, HOSTILE_NAME, HTMLBOT, ROOT, distinct_colours, keep_screenshot

CONFIG = f"""
name = "<i>viewer</i> test"
seed = 4
rounds = 20
bots = ["{BOTS / "strong"}", "{HTMLBOT}"]
time_control = "20+0.2"
results = "results.sqlite"
[[games]]
name = "stripes"
[sprt]
elo0 = 0
elo1 = 200
alpha = 0.2
beta = 0.2
"""


def arena(*argv: str) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(
        [sys.executable, "-m", "arena", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    return out


@pytest.fixture(scope="module")
def tournament(tmp_path_factory):
    where = tmp_path_factory.mktemp("tournament")
    config = where / "t.toml"
    config.write_text(CONFIG, encoding="utf-8")
    arena("tournament", "run", str(config), "--quiet", "-j", "2")
    page = where / "report.html"
    arena("tournament", "report", str(config), "--format", "html", "-o", str(page))
    games = json.loads(
        arena("tournament", "report", str(config), "--games", "--format", "json").stdout
    )["games"]
    report = json.loads(arena("tournament", "report", str(config), "--format", "json").stdout)
    return config, page, games, report


def embedded(page_text: str, element_id: str):
    m = re.search(rf'<script type="application/json" id="{element_id}">(.*?)</script>', page_text,
                  re.S)  # fmt: skip
    assert m, element_id
    return json.loads(m.group(1))


def test_report_page_holds_everything(tournament):
    config, page, games, report = tournament
    text = page.read_text(encoding="utf-8")
    assert report["sprt"]["decision"] in ("H1", "H0")
    # every recorded game listed, linked to its replay, and the replay is the game's
    packed = embedded(text, "arena-replays")
    assert len(games) >= 2 and len(packed) == len(games)
    for i, g in enumerate(games, 1):
        assert f'href="#game-{i}"' in text
        assert html.escape(g["game_id"]) in text
    last = len(games)
    record = GameRecord.from_dict(
        json.loads(arena("tournament", "record", str(config), games[-1]["game_id"]).stdout)
    )
    assert unpack_replay(packed[f"game-{last}"]) == json.loads(json.dumps(replay_data(record)))
    # the SPRT: its verdict, its summary line and the LLR chart (a point per game pair)
    assert f"{report['sprt']['decision']} accepted" in text
    assert html.escape(report["sprt"]["summary"]) in text
    charts = re.findall(r'<svg xmlns="http://www.w3.org/2000/svg" class="arena-chart".*?</svg>',
                        text, re.S)  # fmt: skip
    assert len(charts) == 3  # Elo overall, Elo in stripes, the LLR
    for chart in charts:
        ElementTree.fromstring(chart)
    llr = next(c for c in charts if "game pairs" in c)
    points = re.search(r'<polyline points="([^"]+)"', llr).group(1).split()
    assert len(points) == report["sprt"]["pairs"] + 1
    # standings, crosstable and reasons, with the HTML name as text
    for reason in report["reasons"]:
        assert f'<td class="arena-bot">{reason}</td>' in text
    assert html.escape(HOSTILE_NAME) in text
    assert "&lt;i&gt;viewer&lt;/i&gt;" in text
    assert text.count("<script") == 2 and "<i>" not in text
    assert "https://" not in text


@pytest.mark.browser
def test_report_in_the_browser_opens_a_replay(browser, tournament):
    _, page, games, _ = tournament
    browser.get_log("browser")
    browser.get(page.as_uri())
    assert browser.find_element(By.ID, "replay").get_attribute("hidden") is not None
    keep_screenshot(browser.get_screenshot_as_png(), "report-top.png")
    names = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#standings td.arena-bot")]
    assert HOSTILE_NAME in names
    link = browser.find_elements(By.CSS_SELECTOR, "a.arena-replay-link")[1]
    link.click()
    # the replay is unpacked asynchronously (DecompressionStream): wait for it to be shown
    WebDriverWait(browser, 60).until(
        lambda b: b.find_element(By.ID, "replay").get_attribute("data-open") == "game-2"
    )
    viewer = browser.find_element(By.CSS_SELECTOR, "#replay .arena-viewer")
    assert games[1]["game_id"] in browser.find_element(By.CSS_SELECTOR, ".arena-replay-id").text
    # it opens at the end: the viewer's header gives the result
    assert viewer.get_attribute("data-step") != "0"
    end = viewer.find_element(By.CSS_SELECTOR, ".arena-board svg").get_attribute("innerHTML")
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.HOME)
    assert viewer.get_attribute("data-step") == "0"
    start = viewer.find_element(By.CSS_SELECTOR, ".arena-board svg").get_attribute("innerHTML")
    assert end != start
    shot = browser.get_screenshot_as_png()
    keep_screenshot(shot, "report-replay.png")
    assert distinct_colours(shot) > 20
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == []
