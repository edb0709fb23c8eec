// A starter bot for the arena, in TypeScript for Node, without npm packages at run time.
//
// It speaks the protocol's JSON Lines encoding (docs/protocol.md): one JSON object per line
// on stdin and stdout. It asks for the legal actions in `ready`, so it plays every game
// without rules code of its own: put your strategy in `choose`. It offers sessions, so a
// tournament with `reuse = true` keeps it running between games.

type Message = { type: string; [field: string]: unknown };

interface Turn extends Message {
  type: "turn";
  turn: number;
  position: Record<string, unknown>;
  legal: string[];
  deadline: number | null;
}

const MASK = (1n << 64n) - 1n;

/** splitmix64 on BigInt: seeded from `hello.seed`, so a game replays identically. */
class Rng {
  constructor(private state: bigint) {}

  next(): bigint {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  }

  below(n: number): number {
    return Number(this.next() % BigInt(n));
  }
}

let rng = new Rng(0n);

/** Your strategy: the actions to play now, at least one (the referee asks again while the
 *  turn needs more). `turn` is the whole `turn` message: position, clocks, deadline... */
function choose(turn: Turn): string[] {
  return [turn.legal[rng.below(turn.legal.length)]];
}

function send(message: Message): void {
  // One write per message. Node writes to a pipe synchronously on Linux, so nothing waits in
  // a buffer; elsewhere it may queue: never exit before it drained (see "end" below).
  process.stdout.write(JSON.stringify(message) + "\n");
}

function handle(line: string): void {
  const msg = JSON.parse(line) as Message;
  switch (msg.type) {
    case "hello": {
      // a new game (in a session, after the previous one's `end`): start afresh. The seed is
      // read from the raw line: JSON.parse rounds integers above 2^53.
      const seed = BigInt(/"seed"\s*:\s*(\d+)/.exec(line)?.[1] ?? "0");
      rng = new Rng((seed * 2n + BigInt(Number(msg.seat))) & MASK);
      send({ type: "log", message: `playing ${msg.game} as ${msg.colour}` });
      send({ type: "ready", name: "typescript-kit", version: "1.0", legal: true, sessions: true });
      break;
    }
    case "turn":
      send({ type: "move", actions: choose(msg as Turn) });
      break;
    default:
      // `end` (the next game's `hello` or the end of stdin follows) and any type a later
      // protocol adds: nothing to do
      break;
  }
}

let pending = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  pending += chunk;
  let newline: number;
  while ((newline = pending.indexOf("\n")) >= 0) {
    const line = pending.slice(0, newline).trim();
    pending = pending.slice(newline + 1);
    if (line) handle(line);
  }
});
// the end of stdin: exit once everything written has left (the callback waits for it)
process.stdin.on("end", () => process.stdout.write("", () => process.exit(0)));
