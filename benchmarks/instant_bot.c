/*
 * The instant-reply C bot of benchmarks/referee.py and benchmarks/tournament.py, and the raw
 * pipe ping-pong they measure it against.
 *
 *   instant_bot                 a bot (JSON Lines): answers `hello` with `ready` asking for the
 *                               legal list (and offering sessions), every `turn` with the first
 *                               legal action, at once; exits on `end` unless a session goes on
 *   instant_bot msgpack         the same bot speaking msgpack (benchmarks/versus.py)
 *   instant_bot pingpong N      the floor: a parent and a forked child pass one byte back and
 *                               forth over two pipes N times; prints the median round trip in ns
 *
 * Nothing here parses JSON properly: it looks for `"type":"...` and `"legal":["...` in the
 * referee's own compact output, which is all an instant bot needs. The msgpack mode walks each
 * message just far enough to find where it ends (msgpack needs no framing) and to read its
 * `type` and the first string of its `legal`.
 *
 * With a `stamp` argument (after `msgpack`, if any) the bot writes one line to stderr when its
 * first `turn` arrives, "first-turn <CLOCK_MONOTONIC ns>": the arena keeps a bot's stderr in
 * the game record, where benchmarks/versus.py reads it to time the arena's start-up.
 *
 * Build: cc -O2 -o instant_bot instant_bot.c
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static int pingpong(long n) {
    int a[2], b[2];
    char c = 'x';
    if (pipe(a) || pipe(b)) return 1;
    pid_t pid = fork();
    if (pid == 0) {
        close(a[1]);
        close(b[0]);
        while (read(a[0], &c, 1) == 1)
            if (write(b[1], &c, 1) != 1) break;
        _exit(0);
    }
    close(a[0]);
    close(b[1]);
    long *t = malloc(sizeof(long) * (size_t)n);
    for (long i = 0; i < n; i++) {
        long t0 = now_ns();
        if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1) return 1;
        t[i] = now_ns() - t0;
    }
    close(a[1]);
    qsort(t, (size_t)n, sizeof(long), cmp);
    printf("%ld\n", t[n / 2]);
    return 0;
}

static void say(const char *s) {
    size_t len = strlen(s);
    while (len) {
        ssize_t w = write(1, s, len);
        if (w <= 0) exit(0);
        s += w;
        len -= (size_t)w;
    }
}

static int stamp_wanted;

/* one line on stderr at the first turn: when the first game started playing */
static void stamp(void) {
    if (!stamp_wanted) return;
    fprintf(stderr, "first-turn %ld\n", now_ns());
    fflush(stderr);
    stamp_wanted = 0;
}

static void answer(const char *line) {
    char out[512];
    if (strncmp(line, "{\"type\":\"hello\"", 15) == 0) {
        say("{\"type\":\"ready\",\"name\":\"instant-c\",\"legal\":true,\"sessions\":true}\n");
    } else if (strncmp(line, "{\"type\":\"turn\"", 14) == 0) {
        stamp();
        const char *p = strstr(line, "\"legal\":[\"");
        const char *action = "x";
        size_t len = 1;
        if (p) {
            action = p + 10;
            len = strcspn(action, "\"");
            if (len > 400) len = 400;
        }
        snprintf(out, sizeof out, "{\"type\":\"move\",\"actions\":[\"%.*s\"]}\n", (int)len, action);
        say(out);
    }
    /* `end`: nothing to say; with a session the next `hello` follows, otherwise stdin closes */
}


/* --- msgpack ------------------------------------------------------------------------------ */

static size_t mp_be(const unsigned char *p, int k) {
    size_t n = 0;
    for (int i = 0; i < k; i++) n = n << 8 | p[i];
    return n;
}

/* Where the value at p ends (NULL: not complete before end); a string's bytes in str, slen. */
static const unsigned char *mp_skip(const unsigned char *p, const unsigned char *end,
                                    const unsigned char **str, size_t *slen) {
    static const signed char fixed[32] = {
        /* 0xc0 .. 0xdf: bytes after the type byte, -1: length follows, -2: unsupported */
        0, -2, 0, 0, -1, -1, -1, -2, -2, -2, 4, 8, 1, 2, 4, 8,
        1, 2, 4, 8, -2, -2, -2, -2, -2, -1, -1, -1, -1, -1, -1, -1};
    if (p >= end) return NULL;
    unsigned c = *p++;
    size_t n, items;
    int kv = 0, k;
    if (c <= 0x7f || c >= 0xe0) return p;
    if ((c & 0xe0) == 0xa0) { n = c & 0x1f; goto string; }
    if ((c & 0xf0) == 0x90) { items = c & 0x0f; goto array; }
    if ((c & 0xf0) == 0x80) { items = c & 0x0f; kv = 1; goto array; }
    if (fixed[c - 0xc0] >= 0) return (size_t)(end - p) < (size_t)fixed[c - 0xc0] ? NULL : p + fixed[c - 0xc0];
    if (fixed[c - 0xc0] == -2) return NULL; /* ext types: the referee sends none */
    k = (c == 0xc4 || c == 0xd9) ? 1 : (c == 0xc5 || c == 0xda || c == 0xdc || c == 0xde) ? 2 : 4;
    if ((size_t)(end - p) < (size_t)k) return NULL;
    n = mp_be(p, k);
    p += k;
    if (c >= 0xdc) { items = n; kv = c >= 0xde; goto array; }
string: /* strings and binary alike */
    if ((size_t)(end - p) < n) return NULL;
    if (str) { *str = p; *slen = n; }
    return p + n;
array:
    for (size_t i = 0; i < items << kv; i++)
        if (!(p = mp_skip(p, end, NULL, NULL))) return NULL;
    return p;
}

static int mp_is(const unsigned char *s, size_t n, const char *lit) {
    return s && n == strlen(lit) && memcmp(s, lit, n) == 0;
}

static void mp_answer(const unsigned char *p, const unsigned char *end) {
    /* a top-level map: fixmap, map16 or map32 */
    size_t items;
    if ((*p & 0xf0) == 0x80) items = *p++ & 0x0f;
    else if (*p == 0xde) { items = (size_t)p[1] << 8 | p[2]; p += 3; }
    else { items = (size_t)p[1] << 24 | (size_t)p[2] << 16 | (size_t)p[3] << 8 | p[4]; p += 5; }
    const unsigned char *type = NULL, *legal = NULL;
    size_t type_len = 0, legal_len = 0;
    for (size_t i = 0; i < items && p; i++) {
        const unsigned char *key = NULL, *val = NULL;
        size_t klen = 0, vlen = 0;
        p = mp_skip(p, end, &key, &klen);
        if (!p) return;
        const unsigned char *v = p;
        p = mp_skip(p, end, &val, &vlen);
        if (mp_is(key, klen, "type")) { type = val; type_len = vlen; }
        else if (mp_is(key, klen, "legal") && ((*v & 0xf0) == 0x90 || *v == 0xdc || *v == 0xdd)) {
            const unsigned char *first = v + ((*v & 0xf0) == 0x90 ? 1 : *v == 0xdc ? 3 : 5);
            if (first < p) mp_skip(first, end, &legal, &legal_len);
        }
    }
    unsigned char out[512];
    size_t len = 0;
    if (mp_is(type, type_len, "hello")) {
        static const char ready[] = "\x84\xa4type\xa5ready\xa4name\xa9instant-c"
                                    "\xa5legal\xc3\xa8sessions\xc3";
        memcpy(out, ready, len = sizeof ready - 1);
    } else if (mp_is(type, type_len, "turn")) {
        stamp();
        static const char move[] = "\x82\xa4type\xa4move\xa7" "actions\x91";
        memcpy(out, move, len = sizeof move - 1);
        if (!legal) { legal = (const unsigned char *)"x"; legal_len = 1; }
        if (legal_len > 255) legal_len = 255;
        if (legal_len < 32) out[len++] = (unsigned char)(0xa0 | legal_len);
        else { out[len++] = 0xd9; out[len++] = (unsigned char)legal_len; }
        memcpy(out + len, legal, legal_len);
        len += legal_len;
    } else {
        return; /* `end`: nothing to say */
    }
    const char *s = (const char *)out;
    while (len) {
        ssize_t w = write(1, s, len);
        if (w <= 0) exit(0);
        s += w;
        len -= (size_t)w;
    }
}

static int serve_msgpack(void) {
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (len == cap) buf = realloc(buf, cap *= 2);
        ssize_t r = read(0, buf + len, cap - len);
        if (r <= 0) return 0;
        len += (size_t)r;
        unsigned char *start = buf;
        const unsigned char *next;
        while ((next = mp_skip(start, buf + len, NULL, NULL))) {
            mp_answer(start, next);
            start = (unsigned char *)next;
        }
        len = (size_t)(buf + len - start);
        memmove(buf, start, len);
    }
}

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "pingpong") == 0) return pingpong(atol(argv[2]));
    stamp_wanted = argc > 1 && strcmp(argv[argc - 1], "stamp") == 0;
    if (argc > 1 && strcmp(argv[1], "msgpack") == 0) return serve_msgpack();
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len == cap) buf = realloc(buf, cap *= 2);
        ssize_t r = read(0, buf + len, cap - len);
        if (r <= 0) return 0;
        len += (size_t)r;
        char *start = buf, *nl;
        while ((nl = memchr(start, '\n', (size_t)(buf + len - start)))) {
            *nl = 0;
            answer(start);
            start = nl + 1;
        }
        len = (size_t)(buf + len - start);
        memmove(buf, start, len);
    }
}
