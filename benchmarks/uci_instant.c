/*
 * An instant UCI engine for benchmarks/versus.py: what fastchess plays in place of the arena's
 * instant bot (benchmarks/instant_bot.c), so that fastchess's own cost per ply is measured.
 *
 * fastchess checks every move and ends a game on an illegal one, so an instant engine must
 * play legal chess. The simplest honest way: every game is the same scripted legal game, and
 * the engine answers `go` with the script's move number k, k being the number of moves in the
 * `position startpos moves ...` line before it (counting words: what any UCI engine must read
 * anyway). No search, no board: the engine's work per ply is reading two lines and writing one,
 * as the arena's instant bot does. The script is 420 plies of a legal game that neither side
 * can end early (no mate, stalemate, threefold repetition, 50-move draw or dead position
 * before ply 420); fastchess ends it with `-maxmoves N` (a draw adjudicated after N moves, 2N
 * plies), which is how the benchmark sets a game's length: 4 plies, or 364 like a Wrigglers
 * 19x19 game's 363 turns. (Made once with a seeded random mover that prefers quiet moves and
 * a pawn move when the 50-move counter runs high; the list below is all that was kept.)
 *
 * With INSTANT_STAMP=FILE in the environment, the engine appends "go <CLOCK_MONOTONIC ns>"
 * to FILE at its first `go` (start-up timing).
 *
 * Build: cc -O2 -o uci_instant uci_instant.c
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const script[] = {
    "b2b3", "g7g5", "a2a3", "f8g7", "d2d3", "a7a5", "c1b2", "g7c3", "b1d2", "b8c6", "b2c1",
    "c6e5", "g1f3", "a8a6", "g2g3", "a6f6", "h1g1", "e5g6", "g1g2", "c7c6", "f3h4", "b7b5",
    "h2h3", "g5g4", "f2f3", "f6f4", "a3a4", "g6e5", "e2e3", "g8f6", "a1b1", "f4c4", "g2h2",
    "e5g6", "e3e4", "e7e5", "h2e2", "e8f8", "c1b2", "c8a6", "e2g2", "f6g8", "g2g1", "f8e8",
    "f1e2", "d7d5", "g1g2", "g6f4", "h4f5", "d8h4", "f5d6", "e8f8", "d6c8", "h4e7", "c8b6",
    "g8h6", "b6c8", "e7b4", "b1c1", "a6b7", "c1a1", "f4h5", "a1a2", "b4c5", "a2a3", "h5f4",
    "d1b1", "b5b4", "b2a1", "c3b2", "g2h2", "h6f5", "a3a2", "b2a3", "e2f1", "c5d4", "h3h4",
    "c4c3", "c8d6", "f8g8", "h2h3", "d4e3", "e1d1", "a3c1", "b1b2", "e3g1", "a2a3", "f4h5",
    "d6c4", "b7a8", "c4b6", "g8g7", "d1e1", "c3c5", "d2b1", "a8b7", "b1c3", "c1h6", "e1e2",
    "h8g8", "a3a2", "d5d4", "f3f4", "g1f2", "e2d1", "g8e8", "b6d7", "g7h8", "b2b1", "b7a8",
    "a2a3", "f2e2", "d1c1", "e2e1", "c1b2", "e8d8", "c3a2", "f5e7", "d7b8", "f7f5", "b1d1",
    "h6g7", "c2c4", "d8d6", "f1g2", "d6d8", "b2c2", "h7h6", "h3h2", "e7g6", "h2h1", "e1c3",
    "c2b1", "d8f8", "h1g1", "f8c8", "d1e2", "c5d5", "g2f1", "h8g8", "f1h3", "d5d7", "e2e3",
    "d7d6", "e3e1", "g8h8", "e1f2", "g6f8", "f2f1", "c3c1", "f1c1", "d6g6", "a2c3", "g6e6",
    "g1e1", "f8g6", "c3d1", "h5f6", "c1c3", "f6h5", "b1a2", "h5f6", "e1e2", "g6e7", "b8a6",
    "f6e8", "a2b1", "e6d6", "e2c2", "a8b7", "h4h5", "c8a8", "c3d2", "h8h7", "d2c1", "h7h8",
    "a6b8", "h8g8", "c2h2", "d6f6", "b1b2", "g7f8", "c1e3", "f8g7", "h2d2", "g7h8", "a3a2",
    "e7d5", "h3g2", "g8f8", "d2c2", "e8g7", "e3e1", "f8g8", "b8a6", "f6f8", "b2b1", "d5e7",
    "a1b2", "a8a7", "e1c3", "e7d5", "a2a1", "d5e3", "c2e2", "f8f6", "a1a3", "e3c2", "b1a2",
    "c2e3", "a2b1", "f6f8", "e2d2", "a7a8", "c3c1", "f8f6", "a3a2", "e3d5", "g2h3", "g7e8",
    "a6b8", "g8f7", "d1e3", "f7f8", "b8a6", "a8a7", "b2a1", "h8g7", "c1g1", "e8c7", "a2a3",
    "g7h8", "c4c5", "f8g8", "d2g2", "c7e8", "a6b8", "g8f8", "g2e2", "e8c7", "e3d1", "f6d6",
    "h3g2", "d5f6", "e2c2", "d6e6", "b8d7", "f8e7", "d1e3", "h8g7", "b1a2", "f6e8", "g2f1",
    "e6d6", "c2f2", "c7d5", "e3g2", "d6g6", "f2e2", "d5c3", "a2b2", "c3a2", "g2e1", "g7f8",
    "e2c2", "e7e6", "c2c3", "g6g7", "c3c1", "a2c3", "g1h1", "f8e7", "d7b8", "b7a8", "c1b1",
    "c3d1", "b2c1", "e8d6", "e1f3", "a7b7", "f3e1", "e7g5", "b1b2", "g5h4", "b2a2", "b7c7",
    "a1c3", "c7d7", "a2g2", "d1b2", "c1d2", "e6f7", "h1g1", "b2d1", "f4e5", "d6c4", "d2e2",
    "f7f8", "e1f3", "f8e7", "b8a6", "e7e6", "f3h2", "g7g5", "c3e1", "g5g8", "a3a1", "h4e7",
    "a1a3", "d7b7", "h2f3", "e7h4", "g2h2", "h4g5", "h2h1", "g8g7", "g1h2", "b7d7", "f1h3",
    "g5c1", "h3g2", "g7h7", "h2h4", "c4e3", "e1d2", "h7f7", "h4d8", "e3d5", "d8b8", "f7f6",
    "d2g5", "d5b6", "b8a7", "d1b2", "h1h3", "d7f7", "g5f4", "c1e3", "f4g5", "e3d2", "a7c7",
    "f5f4", "c7b7", "f7g7", "a6c7", "e6d7", "b7a7", "b2c4", "a7a6", "d2c1", "c7e6", "g7e7",
    "h3h4", "f6g6", "f3e1", "e7g7", "e2f1", "f4f3", "g5f6", "g7e7", "h4h3", "g6g5", "e6g7",
    "b6d5", "g2h1", "c4d2", "f1g1", "g5f5", "f6h4", "c1b2", "a6c4", "d7c7", "c4c3", "e7d7",
    "g1h2", "f5f6", "g7e6", "c7b8", "e1c2", "f3f2", "h4g5", "f6f5", "h1g2", "d5e7", "e6f4",
    "f5f7", "h3h4", "d7d8", "f4e6", "f2f1b", "a3a2", "b8a7", "e6f4", "f7f6", "f4e2", "e7f5",
    "h2h1", "f6e6", "a2a3", "f5g7", "a3a1", "d8b8", "a1c1", "e6e7", "c2e1", "b2a3", "c3c4",
    "b8b5", "g5f4", "g7f5", "c4c3", "e7e6", "c1a1", "b5b8", "e1c2", "d2f3", "a1a2", "a3b2",
    "f4g5", "b8e8",
};
#define PLIES (sizeof script / sizeof script[0])

static void say(const char *s) {
    size_t len = strlen(s);
    while (len) {
        ssize_t w = write(1, s, len);
        if (w <= 0) exit(0);
        s += w;
        len -= (size_t)w;
    }
}

static size_t moves_in(const char *line) {
    const char *p = strstr(line, " moves");
    size_t n = 0;
    if (!p) return 0;
    for (p += 6; *p; p++)
        if (*p == ' ' && p[1] && p[1] != ' ') n++;
    return n;
}

static const char *stamp_path;

static void stamp(void) {
    if (!stamp_path) return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    FILE *f = fopen(stamp_path, "a");
    if (f) {
        fprintf(f, "go %ld\n", ts.tv_sec * 1000000000L + ts.tv_nsec);
        fclose(f);
    }
    stamp_path = NULL;
}

int main(void) {
    char out[64];
    size_t ply = 0;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    stamp_path = getenv("INSTANT_STAMP");
    for (;;) {
        if (len == cap) buf = realloc(buf, cap *= 2);
        ssize_t r = read(0, buf + len, cap - len);
        if (r <= 0) return 0;
        len += (size_t)r;
        char *start = buf, *nl;
        while ((nl = memchr(start, '\n', (size_t)(buf + len - start)))) {
            *nl = 0;
            if (nl > start && nl[-1] == '\r') nl[-1] = 0;
            if (strcmp(start, "uci") == 0) {
                say("id name instant\nid author arena\nuciok\n");
            } else if (strcmp(start, "isready") == 0) {
                say("readyok\n");
            } else if (strncmp(start, "position", 8) == 0) {
                ply = moves_in(start);
            } else if (strncmp(start, "go", 2) == 0) {
                stamp();
                snprintf(out, sizeof out, "bestmove %s\n", ply < PLIES ? script[ply] : "0000");
                say(out);
            } else if (strcmp(start, "quit") == 0) {
                return 0;
            }
            start = nl + 1;
        }
        len = (size_t)(buf + len - start);
        memmove(buf, start, len);
    }
}
