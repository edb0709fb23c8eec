/*
 * Bots that spend their time in chosen ways, for the fair-clock tests (tests/referee/
 * test_fair_clocks.py), and the host's CPU hog they are tested beside. JSON Lines; every
 * `turn` is answered with the first legal action once MODE has been done, with D = the turn's
 * deadline in seconds:
 *
 *   timing_bot sleep F          sleep F*D, then answer (the bot's own choice: charged)
 *   timing_bot busy F           burn F*D of its own CPU time, then answer
 *   timing_bot threads N F      N busy threads, all on this bot's first CPU, for F*D of wall
 *                               time (they wait for each other: not a host stall)
 *   timing_bot fork F S         a forked helper and this process, both busy on the bot's first
 *                               CPU for F*D, the helper exits; then sleep until S*D and answer
 *   timing_bot spread N F       N busy threads on any CPUs (not pinned) for F*D of wall time
 *   timing_bot swarm N F        on `hello`, fork N helpers busy until the bot is killed (on any
 *                               CPUs: the whole machine, but for a CPU cap), and log `swarm P`
 *                               (its pid); then sleep F*D per turn and answer
 * With TIMING_RT in its environment the bot logs `pid N` on `hello` and waits until the test
 * has made it SCHED_FIFO 1 (it cannot itself: no capability), so that on a shared test
 * machine nothing but the hog (priority 2) holds it off its CPU. With TIMING_PID it logs
 * `pid N` on `hello` and goes on (the test gives its CPU-capped cgroup more weight: a
 * real-time task cannot be in one).
 *
 *   timing_bot hog CPU BUSY PERIOD
 *                               not a bot: the host's hog. SCHED_FIFO on CPU, priority 2, busy BUSY ms
 *                               of every PERIOD ms until killed (the kernel keeps 5% for others)
 *
 * Build: cc -O2 -pthread -o timing_bot timing_bot.c   (-static for a FROM scratch image)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_for(double s) {
    if (s <= 0) return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static volatile unsigned long sink;

static void burn_cpu(double s) { /* s seconds of this thread's own CPU time */
    double end = now(CLOCK_THREAD_CPUTIME_ID) + s;
    while (now(CLOCK_THREAD_CPUTIME_ID) < end)
        for (int i = 0; i < 10000; i++) sink += (unsigned long)i;
}

static void burn_wall(double until) { /* busy until the monotonic clock reads `until` */
    while (now(CLOCK_MONOTONIC) < until)
        for (int i = 0; i < 10000; i++) sink += (unsigned long)i;
}

static void pin_first_cpu(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) {
            CPU_ZERO(&set);
            CPU_SET(c, &set);
            sched_setaffinity(0, sizeof set, &set);
            return;
        }
}

static void *thread_main(void *arg) {
    burn_wall(*(double *)arg);
    return NULL;
}

static int argc_;
static char **argv_;

static void spend(double deadline) {
    const char *mode = argv_[1];
    double start = now(CLOCK_MONOTONIC);
    if (strcmp(mode, "sleep") == 0) {
        sleep_for(atof(argv_[2]) * deadline);
    } else if (strcmp(mode, "busy") == 0) {
        burn_cpu(atof(argv_[2]) * deadline);
    } else if (strcmp(mode, "threads") == 0) {
        int n = atoi(argv_[2]);
        double until = start + atof(argv_[3]) * deadline;
        pthread_t t[64];
        pin_first_cpu(); /* inherited by the threads */
        for (int i = 0; i < n && i < 64; i++) pthread_create(&t[i], NULL, thread_main, &until);
        for (int i = 0; i < n && i < 64; i++) pthread_join(t[i], NULL);
    } else if (strcmp(mode, "spread") == 0) {
        int n = atoi(argv_[2]);
        double until = start + atof(argv_[3]) * deadline;
        pthread_t t[64];
        for (int i = 0; i < n && i < 64; i++) pthread_create(&t[i], NULL, thread_main, &until);
        for (int i = 0; i < n && i < 64; i++) pthread_join(t[i], NULL);
    } else if (strcmp(mode, "swarm") == 0) {
        sleep_for(atof(argv_[3]) * deadline);
    } else if (strcmp(mode, "fork") == 0) {
        double until = start + atof(argv_[2]) * deadline;
        pin_first_cpu();
        pid_t pid = fork();
        if (pid == 0) {
            burn_wall(until);
            _exit(0);
        }
        burn_wall(until);
        waitpid(pid, NULL, 0);
        sleep_for(start + atof(argv_[3]) * deadline - now(CLOCK_MONOTONIC));
    }
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
        if (strcmp(argv_[1], "swarm") == 0) {
            for (int i = 0; i < atoi(argv_[2]); i++)
                if (fork() == 0) burn_wall(1e300); /* until killed with the bot's tree */
            snprintf(out, sizeof out, "{\"type\":\"log\",\"message\":\"swarm %d\"}\n",
                     (int)getpid());
            say(out);
        }
        if (getenv("TIMING_PID")) {
            snprintf(out, sizeof out, "{\"type\":\"log\",\"message\":\"pid %d\"}\n", (int)getpid());
            say(out);
        }
        if (getenv("TIMING_RT")) { /* wait (5 s at most) until the test made it real-time */
            snprintf(out, sizeof out, "{\"type\":\"log\",\"message\":\"pid %d\"}\n", (int)getpid());
            say(out);
            for (int i = 0; i < 5000 && sched_getscheduler(0) != SCHED_FIFO; i++) sleep_for(0.001);
        }
        say("{\"type\":\"ready\",\"name\":\"timing\",\"legal\":true}\n");
    } else if (strncmp(line, "{\"type\":\"turn\"", 14) == 0) {
        const char *d = strstr(line, "\"deadline\":");
        spend(d ? atof(d + 11) : 0.0);
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
}

static int hog(int cpu, double busy, double period) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) return 2;
    struct sched_param sp = {.sched_priority = 2};
    if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) return 3;
    say("hogging\n");
    for (double t = now(CLOCK_MONOTONIC);; t += period) {
        burn_wall(t + busy);
        sleep_for(t + period - now(CLOCK_MONOTONIC));
    }
}

int main(int argc, char **argv) {
    argc_ = argc;
    argv_ = argv;

    if (argc > 4 && strcmp(argv[1], "hog") == 0)
        return hog(atoi(argv[2]), atof(argv[3]) / 1e3, atof(argv[4]) / 1e3);
    if (argc < 3) return 2;
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
