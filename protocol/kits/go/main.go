// A starter bot for the arena, in Go with nothing but the standard library.
//
// It speaks the protocol's JSON Lines encoding (docs/protocol.md): one JSON object per line
// on stdin and stdout. It asks for the legal actions in `ready`, so it plays every game
// without rules code of its own: put your strategy in choose. It offers sessions, so a
// tournament with `reuse = true` keeps it running between games.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
)

// message holds the fields of the referee's messages this bot reads; encoding/json ignores
// the others (a later protocol may add some). Add what your strategy needs, e.g. Position.
type message struct {
	Type     string          `json:"type"`
	Game     string          `json:"game"`
	Colour   string          `json:"colour"`
	Seat     int64           `json:"seat"`
	Seed     int64           `json:"seed"`
	Turn     int             `json:"turn"`
	Position json.RawMessage `json:"position"`
	Legal    []string        `json:"legal"`
	Deadline *float64        `json:"deadline"`
}

type bot struct {
	out *bufio.Writer
	rng *rand.Rand
}

// choose is your strategy: the actions to play now, at least one (the referee asks again
// while the turn needs more).
func (b *bot) choose(turn *message) []string {
	return []string{turn.Legal[b.rng.Intn(len(turn.Legal))]}
}

func (b *bot) send(msg map[string]any) {
	line, err := json.Marshal(msg)
	if err != nil {
		panic(err)
	}
	b.out.Write(line)
	b.out.WriteByte('\n')
	// every message, or it waits in the buffer while your clock runs
	if err := b.out.Flush(); err != nil {
		os.Exit(0) // the referee has gone
	}
}

func main() {
	b := &bot{out: bufio.NewWriter(os.Stdout), rng: rand.New(rand.NewSource(1))}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64*1024), 2<<20) // messages may reach max_message_bytes (1 MiB)
	for in.Scan() {
		if len(in.Bytes()) == 0 {
			continue
		}
		var msg message
		if err := json.Unmarshal(in.Bytes(), &msg); err != nil {
			fmt.Fprintln(os.Stderr, "bad message:", err) // stderr: shown when the bot fails
			os.Exit(1)
		}
		switch msg.Type {
		case "hello":
			// a new game (in a session, after the previous one's `end`): start afresh
			b.rng = rand.New(rand.NewSource(msg.Seed*2 + msg.Seat))
			b.send(map[string]any{"type": "log", "message": "playing " + msg.Game + " as " + msg.Colour})
			b.send(map[string]any{
				"type": "ready", "name": "go-kit", "version": "1.0",
				"legal": true, "sessions": true,
			})
		case "turn":
			b.send(map[string]any{"type": "move", "actions": b.choose(&msg)})
		default:
			// `end` (the next game's `hello` or the end of stdin follows) and any type a
			// later protocol adds: nothing to do
		}
	}
}
