// A starter bot for the arena, in Java with nothing but the JDK.
//
// It speaks the protocol's JSON Lines encoding (docs/protocol.md): one JSON object per line
// on stdin and stdout. It asks for the legal actions in `ready`, so it plays every game
// without rules code of its own: put your strategy in `choose`. It offers sessions, so a
// tournament with `reuse = true` keeps it running between games.

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Random;

public final class Bot {
    private final BufferedWriter out =
            new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
    private Random rng = new Random();

    /** Your strategy: the actions to play now, at least one (the referee asks again while the
     *  turn needs more). `turn` is the whole `turn` message: position, clocks, deadline... */
    List<String> choose(Map<String, Object> turn, List<String> legal) {
        return List.of(legal.get(rng.nextInt(legal.size())));
    }

    void send(Map<String, Object> message) throws IOException {
        out.write(Json.write(message));
        out.write('\n');
        out.flush(); // every message, or the referee waits for it while your clock runs
    }

    @SuppressWarnings("unchecked")
    void run() throws IOException {
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            Map<String, Object> msg = (Map<String, Object>) Json.parse(line);
            switch (String.valueOf(msg.get("type"))) {
                case "hello" -> {
                    // a new game (in a session, after the previous one's `end`): start afresh
                    long seed = ((Number) msg.get("seed")).longValue();
                    long seat = ((Number) msg.get("seat")).longValue();
                    rng = new Random(seed * 2 + seat);
                    send(Map.of("type", "log", "message",
                            "playing " + msg.get("game") + " as " + msg.get("colour")));
                    send(Map.of("type", "ready", "name", "java-kit", "version", "1.0",
                            "legal", true, "sessions", true));
                }
                case "turn" -> {
                    List<String> legal = (List<String>) msg.get("legal");
                    send(Map.of("type", "move", "actions", choose(msg, legal)));
                }
                default -> {
                    // `end` (the next game's `hello` or the end of stdin follows) and any
                    // type a later protocol adds: nothing to do
                }
            }
        }
    }

    public static void main(String[] args) throws IOException {
        new Bot().run();
    }
}
