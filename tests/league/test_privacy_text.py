"""The text rules of arena/league/privacy.py as properties: whatever surrounds a server path, it
does not survive `neutral_paths`; URLs and plain words do; a traceback is kept whole."""

from __future__ import annotations

import sys

from hypothesis import given
from hypothesis import strategies as st

from arena.league.privacy import (
    neutral_paths,
    public_command,
    public_detail,
    public_record,
    stderr_excerpt,
)
from arena.referee.channel import STDERR_SEPARATOR

BOT = "/srv/league/bots/17"
words = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/"), max_size=30
)
components = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=12),
    min_size=1,
    max_size=5,
)


@given(before=words, after=words, parts=components)
def test_no_server_path_survives(before: str, after: str, parts: list[str]) -> None:
    for root in (BOT, sys.prefix, "/home/someone/.cache/arena-worker"):
        path = root + "/" + "/".join(parts)
        shown = neutral_paths(f"{before} {path} {after}", [BOT])
        assert root not in shown
        assert parts[-1] in shown  # the file is still named
        assert neutral_paths(shown, [BOT]) == shown


@given(text=words)
def test_text_without_paths_is_left_alone(text: str) -> None:
    assert neutral_paths(text, [BOT]) == text
    for url in ("http://127.0.0.1:8000/api/v1/worker/archives/ab", "https://x.example/a/b"):
        assert neutral_paths(f"{text} {url}") == f"{text} {url}"


def test_the_bots_and_the_arenas_files_keep_their_place() -> None:
    line = f'File "{BOT}/lib/x.py", line 3; {sys.executable} -m y'
    assert neutral_paths(line, [BOT]) == 'File "<bot>/lib/x.py", line 3; <arena>/bin/' + (
        sys.executable.rsplit("/", 1)[1] + " -m y"
    )
    assert public_command([sys.executable, f"{BOT}/bot.py", "--fast"], BOT) == [
        "python3",
        "bot.py",
        "--fast",
    ]


@given(noise=st.lists(words, max_size=60), depth=st.integers(1, 40))
def test_a_traceback_is_kept_whole_after_any_noise(noise: list[str], depth: int) -> None:
    frames = [f'  File "<bot>/bot.py", line {i}, in f{i}\n    f{i + 1}()' for i in range(depth)]
    traceback = "\n".join(["Traceback (most recent call last):", *frames, "ValueError: boom"])
    clean = [n for n in noise if "Traceback" not in n]
    excerpt = stderr_excerpt("\n".join([*clean, traceback]))
    assert excerpt == traceback


def test_chained_tracebacks_are_kept_together() -> None:
    first = 'Traceback (most recent call last):\n  File "a.py", line 1\nKeyError: 1'
    second = 'Traceback (most recent call last):\n  File "a.py", line 2\nValueError: 2'
    middle = "\nDuring handling of the above exception, another exception occurred:\n\n"
    assert stderr_excerpt("noise\n" + first + "\n" + middle + second) == (
        first + "\n" + middle + second
    )
    assert stderr_excerpt("\n".join(str(i) for i in range(50))) == "\n".join(
        str(i) for i in range(30, 50)
    )


@given(secret=st.text(min_size=1, max_size=40).filter(lambda s: s.strip()))
def test_the_public_record_carries_no_stderr(secret: str) -> None:
    detail = f"red (x) crashed: exited with status 1{STDERR_SEPARATOR}{secret}"
    record = {
        "format": "arena-record/1",
        "result": {
            "detail": detail,
            "failure": {
                "reason": "both_failed_start",
                "seats": [{"detail": detail, "stderr_tail": secret}, {"detail": "x"}],
            },
        },
        "stderr": [secret, secret],
        "logs": [{"seat": 0, "message": secret}],
    }
    public = public_record(record)
    assert "stderr" not in public and "logs" not in public
    assert public["result"]["detail"] == public_detail(detail)
    assert public["result"]["detail"] == "red (x) crashed: exited with status 1"
    assert "stderr_tail" not in public["result"]["failure"]["seats"][0]
