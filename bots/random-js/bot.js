// random-js: a uniformly random arena bot for Node, no npm dependencies.
//
// It speaks the JSON Lines encoding of the protocol (one JSON object per line on
// stdin/stdout): it answers `hello` with `ready` asking for the legal action list, answers
// every `turn` with one action drawn from that list, and after `end` waits for the next game's
// `hello` (it offers sessions in `ready`) or the end of stdin. A bot in any
// language with a JSON library looks just like this.
//
// Randomness: splitmix64 (BigInt) seeded from hello.seed and the seat, so a game between
// deterministic bots replays exactly for the same seed. The seed is read from the raw line
// because JSON.parse would round integers above 2^53.
"use strict";

const readline = require("node:readline");

const MASK = (1n << 64n) - 1n;
let state = 0x9e3779b97f4a7c15n;

function next64() {
  state = (state + 0x9e3779b97f4a7c15n) & MASK;
  let z = state;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
  return z ^ (z >> 31n);
}

function below(n) {
  // uniform in [0, n) without modulo bias
  const bn = BigInt(n);
  const limit = MASK + 1n - ((MASK + 1n) % bn);
  let r;
  do {
    r = next64();
  } while (r >= limit);
  return Number(r % bn);
}

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + "\n");
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });

rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  switch (msg.type) {
    case "hello": {
      const m = /"seed"\s*:\s*(-?\d+)/.exec(line);
      const seed = m ? BigInt(m[1]) : 0n;
      state = ((seed * 0x100000001b3n) ^ BigInt(msg.seat || 0)) & MASK;
      next64();
      send({ type: "ready", name: "random-js", version: "1.0", author: "arena", legal: true, protocol: 1, sessions: true });
      break;
    }
    case "turn": {
      const legal = msg.legal || [];
      if (legal.length === 0) {
        send({ type: "resign", reason: "no legal action listed" });
      } else {
        send({ type: "move", actions: [legal[below(legal.length)]] });
      }
      break;
    }
    case "end":
      // a session's next `hello` follows, or the end of stdin (then "close" below)
      break;
    default:
      // unknown types: ignore (forward compatibility)
      break;
  }
});

rl.on("close", () => {
  process.stdout.write("", () => process.exit(0));
});
