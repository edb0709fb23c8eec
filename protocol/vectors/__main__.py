"""`python -m protocol.vectors [--check] [--out DIR]`: rebuild the test vectors from the
engines (into this package's directory unless --out), or with --check say which shipped file
differs from what the engines give now (exit status 1) without writing anything."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from protocol.vectors import VECTORS_DIR
from protocol.vectors.generate import MAX_FILE_BYTES, build_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m protocol.vectors", description=__doc__)
    parser.add_argument("--out", type=Path, default=VECTORS_DIR, help="directory to write to")
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for name, text in build_all().items():
        target = args.out / name
        size = len(text.encode("utf-8"))
        if size > MAX_FILE_BYTES:
            print(f"{name}: {size} bytes, over the limit of {MAX_FILE_BYTES}", file=sys.stderr)
            return 1
        if args.check:
            current = target.read_text(encoding="utf-8") if target.exists() else None
            if current != text:
                stale.append(name)
            continue
        target.write_text(text, encoding="utf-8")
        print(f"{target}: {text.count(chr(10)) - 1} vectors, {size} bytes")
    if stale:
        print(f"out of date (run python -m protocol.vectors): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
