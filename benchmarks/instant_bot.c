/*
 * The instant-reply C bot of benchmarks/referee.py and benchmarks/tournament.py, and the raw
 * pipe ping-pong they measure it against.
 *
 *   instant_bot                 a bot (JSON Lines): answers `hello` with `ready` asking for the
 *                               legal list (and offering sessions), every `turn` with the first
 *                               legal action, at once; exits on `end` unless a session goes on
 *   instant_bot pingpong N      the floor: a parent and a forked child pass one byte back and
 *                               forth over two pipes N times; prints the median round trip in ns
 *
 * Nothing here parses JSON properly: it looks for `"type":"...` and `"legal":["...` in the
 * referee's own compact output, which is all an instant bot needs.
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

static void answer(const char *line) {
    char out[512];
    if (strncmp(line, "{\"type\":\"hello\"", 15) == 0) {
        say("{\"type\":\"ready\",\"name\":\"instant-c\",\"legal\":true,\"sessions\":true}\n");
    } else if (strncmp(line, "{\"type\":\"turn\"", 14) == 0) {
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

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "pingpong") == 0) return pingpong(atol(argv[2]));
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
