"""Tests of the bundled bots and the SDK (a package: its conftest must not shadow tests/referee's
when both folders run in one session)."""
