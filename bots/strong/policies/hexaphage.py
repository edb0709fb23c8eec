"""Hexaphage policy: the one-turn search shared with Quadraphages (see `_phages`)."""

from __future__ import annotations

try:
    from ._phages import choose_turn
except ImportError:  # loaded as a plain file, not as part of the `policies` package
    import importlib.util
    from pathlib import Path

    _spec = importlib.util.spec_from_file_location(
        "_phages_policy", Path(__file__).with_name("_phages.py")
    )
    _mod = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
    _spec.loader.exec_module(_mod)  # type: ignore[union-attr]
    choose_turn = _mod.choose_turn

__all__ = ["choose_turn"]
