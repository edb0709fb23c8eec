"""The test suite. Every test folder is a package, so a test file is named after the module it
pins (tests/tournaments/test_store.py beside tests/league/test_store.py) and imports its
folder's helpers relatively (`from .support import ...`)."""
