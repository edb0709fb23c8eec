"""A bot that makes one of the mistakes every bot author makes: `mistakes.py MODE`.

Written the way a first bot is written, from docs/protocol.md and without the SDK (plain `json`
or `msgpack`, `print` and `sys.stdout`), so that the referee's diagnostics are tested against
the real thing. Each MODE answers `hello` wrongly in one way, then plays nothing:

- unflushed:      JSON Lines, `sys.stdout.write` without flush (the output sits in the buffer
                  until the bot exits at end of input)
- print_msgpack:  msgpack, but a debug `print()` on stdout before its ready
- print_json:     JSON Lines, but a debug `print()` on stdout before its ready
- json_first:     speaks JSON Lines (manifest says msgpack), sends ready before reading
- json_waits:     speaks JSON Lines (manifest says msgpack), waits for a hello line
- msgpack_first:  speaks msgpack (manifest says json), sends ready before reading
- msgpack_waits:  speaks msgpack (manifest says json), waits for a hello map
- pretty:         JSON Lines, pretty-printed over several lines
- no_newline:     JSON Lines, without the newline after the message
- stderr:         JSON Lines, its ready written to stderr (`console.error`, `eprintln!`)
- bom:            JSON Lines, a UTF-8 byte order mark before its first message (.NET)
- reads_to_eof:   JSON Lines, flushed, but it reads its whole input (to end of file) before
                  answering anything
- json_crash_go:  reads JSON Lines (manifest says msgpack) and crashes on the msgpack hello
                  with the words of Go's encoding/json
- msgpack_crash_rust: reads msgpack (manifest says json) and crashes on the JSON hello with
                  the words of Rust's rmp-serde
"""

from __future__ import annotations

import json
import sys

import msgpack

MODE = sys.argv[1]
READY = {"type": "ready", "name": f"mistake-{MODE}", "legal": True}


def wait_for_end_of_input() -> None:
    while sys.stdin.buffer.read1(65536):
        pass


def main() -> int:
    out = sys.stdout
    if MODE == "unflushed":
        sys.stdin.readline()
        out.write(json.dumps(READY) + "\n")  # no flush: a pipe is block-buffered
        wait_for_end_of_input()
    elif MODE == "print_msgpack":
        msgpack.Unpacker(raw=False).feed(sys.stdin.buffer.read1(65536))
        print("starting up, loading the opening book", flush=True)
        out.buffer.write(msgpack.packb(READY))
        out.flush()
        wait_for_end_of_input()
    elif MODE == "print_json":
        sys.stdin.readline()
        print("Starting my bot", flush=True)
        print(json.dumps(READY), flush=True)
        wait_for_end_of_input()
    elif MODE == "json_first":
        print(json.dumps(READY), flush=True)
        wait_for_end_of_input()
    elif MODE == "json_waits":
        hello = json.loads(sys.stdin.readline())  # never a line: the hello is msgpack
        print(json.dumps({**READY, "seat": hello["seat"]}), flush=True)
        wait_for_end_of_input()
    elif MODE == "msgpack_first":
        out.buffer.write(msgpack.packb(READY))
        out.flush()
        wait_for_end_of_input()
    elif MODE == "msgpack_waits":
        unpacker = msgpack.Unpacker(raw=False)
        unpacker.feed(sys.stdin.buffer.read1(65536))
        for msg in unpacker:
            if msg["type"] == "hello":  # the JSON text unpacks to integers: this fails
                out.buffer.write(msgpack.packb(READY))
                out.flush()
        wait_for_end_of_input()
    elif MODE == "pretty":
        sys.stdin.readline()
        print(json.dumps(READY, indent=2), flush=True)
        wait_for_end_of_input()
    elif MODE == "no_newline":
        sys.stdin.readline()
        out.write(json.dumps(READY))
        out.flush()
        wait_for_end_of_input()
    elif MODE == "stderr":
        sys.stdin.readline()
        print(json.dumps(READY), file=sys.stderr, flush=True)
        wait_for_end_of_input()
    elif MODE == "bom":
        sys.stdin.readline()
        out.buffer.write(b"\xef\xbb\xbf" + json.dumps(READY).encode() + b"\n")
        out.flush()
        wait_for_end_of_input()
    elif MODE == "reads_to_eof":
        messages = sys.stdin.read().splitlines()  # waits for an end of input that never comes
        for line in messages:
            if json.loads(line)["type"] == "hello":
                print(json.dumps(READY), flush=True)
    elif MODE == "json_crash_go":
        first = sys.stdin.buffer.read1(65536)
        # what `json.NewDecoder(os.Stdin).Decode(&msg)` then `panic(err)` prints in Go
        sys.stderr.write(
            f"panic: invalid character '\\x{first[0]:02x}' looking for beginning of value\n\n"
            "goroutine 1 [running]:\nmain.main()\n\t/bot/main.go:31 +0x1d4\n"
        )
        return 2
    elif MODE == "msgpack_crash_rust":
        sys.stdin.buffer.read1(65536)
        # what `rmp_serde::from_read(stdin)?` returned from main prints in Rust
        sys.stderr.write('Error: Syntax("invalid type: integer `123`, expected map")\n')
        return 1
    else:
        raise SystemExit(f"unknown mode {MODE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
