//! A starter bot for the arena, in Rust with nothing but the standard library.
//!
//! It speaks the protocol's JSON Lines encoding (docs/protocol.md): one JSON object per line
//! on stdin and stdout. It asks for the legal actions in `ready`, so it plays every game
//! without rules code of its own: put your strategy in `choose`. It offers sessions, so a
//! tournament with `reuse = true` keeps it running between games.

mod json;

use json::Json;
use std::io::{self, BufRead, BufWriter, Write};

/// splitmix64: a small seeded generator, so a game replays identically for the same seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Your strategy: the actions to play now, at least one (the referee asks again while the
/// turn needs more). `turn` is the whole `turn` message: position, clocks, deadline...
fn choose(_turn: &Json, legal: &[String], rng: &mut Rng) -> Vec<String> {
    vec![legal[rng.below(legal.len())].clone()]
}

fn send(out: &mut impl Write, message: Json) -> io::Result<()> {
    writeln!(out, "{}", message)?;
    out.flush() // every message, or it waits in the buffer while your clock runs
}

fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut out = BufWriter::new(io::stdout().lock());
    let mut rng = Rng(0);
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let msg = match Json::parse(&line) {
            Ok(msg) => msg,
            Err(e) => {
                eprintln!("bad message: {}", e); // stderr: shown when the bot fails
                std::process::exit(1);
            }
        };
        match msg.get("type").as_str() {
            Some("hello") => {
                // a new game (in a session, after the previous one's `end`): start afresh
                let seed = msg.get("seed").as_u64().unwrap_or(0);
                let seat = msg.get("seat").as_u64().unwrap_or(0);
                rng = Rng(seed.wrapping_mul(2).wrapping_add(seat));
                let game = msg.get("game").as_str().unwrap_or("?").to_string();
                let colour = msg.get("colour").as_str().unwrap_or("?").to_string();
                let log = format!("playing {} as {}", game, colour);
                send(
                    &mut out,
                    Json::object(vec![("type", "log".into()), ("message", log.into())]),
                )?;
                send(
                    &mut out,
                    Json::object(vec![
                        ("type", "ready".into()),
                        ("name", "rust-kit".into()),
                        ("version", "1.0".into()),
                        ("legal", Json::Bool(true)),
                        ("sessions", Json::Bool(true)),
                    ]),
                )?;
            }
            Some("turn") => {
                let legal: Vec<String> = msg
                    .get("legal")
                    .as_array()
                    .iter()
                    .filter_map(|a| a.as_str().map(str::to_string))
                    .collect();
                let actions = choose(&msg, &legal, &mut rng);
                let actions = Json::Array(actions.into_iter().map(Json::from).collect());
                send(
                    &mut out,
                    Json::object(vec![("type", "move".into()), ("actions", actions)]),
                )?;
            }
            // `end` (the next game's `hello` or the end of stdin follows) and any type a
            // later protocol adds: nothing to do
            _ => {}
        }
    }
    Ok(())
}
