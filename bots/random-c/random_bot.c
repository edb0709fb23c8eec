/*
 * random-c: a uniformly random arena bot in plain C (C99 + POSIX getline), no libraries.
 *
 * It shows what a bot in a language without the Python SDK has to do, and nothing more:
 * speak the JSON Lines encoding of the protocol (one JSON object per line on stdin/stdout),
 * answer `hello` with `ready` asking for the legal action list, answer every `turn` with one
 * action drawn from that list, and after `end` wait for the next game's `hello` (it offers
 * sessions in `ready`) or the end of stdin.
 *
 * The JSON scanner below is deliberately tiny: it walks the top level of one message object,
 * skips every value it does not need (nested objects, arrays, numbers, literals, strings with
 * escapes), and reads only `type` (string), `seed` and `seat` (integers) and `legal` (array of
 * strings). That is enough because the protocol's messages are flat at the top level and
 * actions are short ASCII tokens.
 *
 * Randomness: splitmix64 seeded from hello.seed and the seat, so a game between
 * deterministic bots replays exactly for the same seed (same idea as the Python SDK).
 *
 * Build: cc -O2 -o random_bot random_bot.c   (also works with -static)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers -------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t splitmix64(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* uniform in [0, n) without modulo bias */
static size_t rng_below(size_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t r;
    do {
        r = splitmix64();
    } while (r >= limit);
    return (size_t)(r % n);
}

/* ---- a minimal JSON scanner ------------------------------------------------------------ */

typedef struct {
    const char *p;   /* current position */
    const char *end; /* end of the line */
} Scanner;

static void skip_ws(Scanner *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
        s->p++;
}

/* Parses a JSON string at s->p. If out != NULL, writes the decoded text (at most cap-1
 * bytes, NUL-terminated; \uXXXX escapes outside ASCII become '?', which never occurs in
 * action notation). Returns 0 on success, -1 on malformed input. */
static int parse_string(Scanner *s, char *out, size_t cap) {
    size_t n = 0;
    if (s->p >= s->end || *s->p != '"')
        return -1;
    s->p++;
    while (s->p < s->end) {
        char c = *s->p++;
        if (c == '"') {
            if (out)
                out[n < cap ? n : cap - 1] = '\0';
            return 0;
        }
        if (c == '\\') {
            if (s->p >= s->end)
                return -1;
            char e = *s->p++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                unsigned v = 0;
                for (int i = 0; i < 4; i++) {
                    if (s->p >= s->end)
                        return -1;
                    char h = *s->p++;
                    v <<= 4;
                    if (h >= '0' && h <= '9') v |= (unsigned)(h - '0');
                    else if (h >= 'a' && h <= 'f') v |= (unsigned)(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F') v |= (unsigned)(h - 'A' + 10);
                    else return -1;
                }
                c = v < 0x80 ? (char)v : '?';
                break;
            }
            default: c = e; break; /* \" \\ \/ */
            }
        }
        if (out && n + 1 < cap)
            out[n] = c;
        n++;
    }
    return -1;
}

static int skip_value(Scanner *s);

/* skips an object or array, whose opening bracket is at s->p */
static int skip_container(Scanner *s) {
    char close = *s->p == '{' ? '}' : ']';
    int is_object = close == '}';
    s->p++;
    skip_ws(s);
    if (s->p < s->end && *s->p == close) {
        s->p++;
        return 0;
    }
    for (;;) {
        skip_ws(s);
        if (is_object) {
            if (parse_string(s, NULL, 0) < 0)
                return -1;
            skip_ws(s);
            if (s->p >= s->end || *s->p != ':')
                return -1;
            s->p++;
        }
        if (skip_value(s) < 0)
            return -1;
        skip_ws(s);
        if (s->p >= s->end)
            return -1;
        if (*s->p == ',') {
            s->p++;
            continue;
        }
        if (*s->p == close) {
            s->p++;
            return 0;
        }
        return -1;
    }
}

static int skip_value(Scanner *s) {
    skip_ws(s);
    if (s->p >= s->end)
        return -1;
    switch (*s->p) {
    case '"': return parse_string(s, NULL, 0);
    case '{':
    case '[': return skip_container(s);
    default:
        /* number, true, false, null: everything up to the next delimiter */
        while (s->p < s->end && !strchr(",}] \t\r\n", *s->p))
            s->p++;
        return 0;
    }
}

static int parse_int64(Scanner *s, long long *out) {
    skip_ws(s);
    char *endp;
    /* seeds may use all 64 bits: read non-negative numbers as unsigned (wrapping is fine,
     * only determinism matters) */
    long long v = *s->p == '-' ? strtoll(s->p, &endp, 10)
                               : (long long)strtoull(s->p, &endp, 10);
    if (endp == s->p)
        return skip_value(s); /* null or something else: keep the default */
    *out = v;
    /* a fractional/exponent tail would be a referee bug; skip it rather than choke */
    s->p = endp;
    while (s->p < s->end && !strchr(",}] \t\r\n", *s->p))
        s->p++;
    return 0;
}

/* ---- the legal action list ------------------------------------------------------------- */

typedef struct {
    char **items;
    size_t count, cap;
} StrList;

static void list_clear(StrList *l) {
    for (size_t i = 0; i < l->count; i++)
        free(l->items[i]);
    l->count = 0;
}

static int parse_string_array(Scanner *s, StrList *l) {
    list_clear(l);
    skip_ws(s);
    if (s->p >= s->end || *s->p != '[')
        return skip_value(s);
    s->p++;
    skip_ws(s);
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        return 0;
    }
    for (;;) {
        skip_ws(s);
        const char *start = s->p;
        if (parse_string(s, NULL, 0) < 0)
            return -1;
        size_t cap = (size_t)(s->p - start) + 1; /* decoded text is never longer */
        char *buf = malloc(cap);
        if (!buf)
            return -1;
        s->p = start;
        parse_string(s, buf, cap);
        if (l->count == l->cap) {
            l->cap = l->cap ? l->cap * 2 : 64;
            char **grown = realloc(l->items, l->cap * sizeof *grown);
            if (!grown)
                return -1;
            l->items = grown;
        }
        l->items[l->count++] = buf;
        skip_ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == ']') {
            s->p++;
            return 0;
        }
        return -1;
    }
}

/* ---- one message ----------------------------------------------------------------------- */

typedef struct {
    char type[32];
    long long seed, seat;
    int has_legal;
    StrList legal;
} Message;

/* Reads the top-level keys of one JSON object we care about; -1 if the line is malformed. */
static int parse_message(const char *line, size_t len, Message *m) {
    Scanner s = {line, line + len};
    m->type[0] = '\0';
    m->has_legal = 0;
    skip_ws(&s);
    if (s.p >= s.end || *s.p != '{')
        return -1;
    s.p++;
    skip_ws(&s);
    if (s.p < s.end && *s.p == '}')
        return 0;
    for (;;) {
        char key[32];
        skip_ws(&s);
        if (parse_string(&s, key, sizeof key) < 0)
            return -1;
        skip_ws(&s);
        if (s.p >= s.end || *s.p != ':')
            return -1;
        s.p++;
        skip_ws(&s);
        int rc;
        if (strcmp(key, "type") == 0)
            rc = parse_string(&s, m->type, sizeof m->type);
        else if (strcmp(key, "seed") == 0)
            rc = parse_int64(&s, &m->seed);
        else if (strcmp(key, "seat") == 0)
            rc = parse_int64(&s, &m->seat);
        else if (strcmp(key, "legal") == 0) {
            rc = parse_string_array(&s, &m->legal);
            m->has_legal = rc == 0;
        } else
            rc = skip_value(&s);
        if (rc < 0)
            return -1;
        skip_ws(&s);
        if (s.p < s.end && *s.p == ',') {
            s.p++;
            continue;
        }
        if (s.p < s.end && *s.p == '}')
            return 0;
        return -1;
    }
}

/* writes a JSON string literal; actions are plain ASCII, but escape properly anyway */
static void put_json_string(const char *str) {
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)str; *c; c++) {
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else if (*c < 0x20)
            printf("\\u%04x", *c);
        else
            putchar(*c);
    }
    putchar('"');
}

int main(void) {
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t len;
    Message m;
    memset(&m, 0, sizeof m);

    while ((len = getline(&line, &line_cap, stdin)) >= 0) {
        if (parse_message(line, (size_t)len, &m) < 0) {
            fprintf(stderr, "random-c: cannot parse message: %.200s\n", line);
            return 1;
        }
        if (strcmp(m.type, "hello") == 0) {
            /* seed and seat arrive together in hello; mix both so each seat differs */
            rng_state = (uint64_t)m.seed * 0x100000001b3ULL ^ (uint64_t)m.seat;
            splitmix64();
            printf("{\"type\":\"ready\",\"name\":\"random-c\",\"version\":\"1.0\","
                   "\"author\":\"arena\",\"legal\":true,\"protocol\":1,\"sessions\":true}\n");
        } else if (strcmp(m.type, "turn") == 0) {
            if (!m.has_legal || m.legal.count == 0) {
                /* no legal action: resign rather than guess */
                printf("{\"type\":\"resign\",\"reason\":\"no legal action listed\"}\n");
            } else {
                const char *pick = m.legal.items[rng_below(m.legal.count)];
                printf("{\"type\":\"move\",\"actions\":[");
                put_json_string(pick);
                printf("]}\n");
            }
        }
        /* `end`: nothing to do; a session's next `hello` or the end of stdin follows */
        /* unknown types: ignore (forward compatibility) */
        fflush(stdout);
    }
    list_clear(&m.legal);
    free(m.legal.items);
    free(line);
    return 0;
}
