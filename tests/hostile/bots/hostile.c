/* The hostile bot catalogue: one static binary, one misbehaviour per mode.
 *
 * usage: hostile MODE TOKEN [ARG]
 *   TOKEN is ignored by the bot; the tests put it in every bot's argv so they can find any
 *   process the bot left behind (children inherit the argv) in /proc.
 *
 * Speaks protocol v1 in JSON Lines, asks for the legal actions and plays the first one, until
 * its mode makes it misbehave. Static (cc -static) so it runs in a FROM scratch image too.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static const char *mode = "good";
static const char *arg = "";
static int turns_played = 0;

static void forever(void) {
    for (;;) pause();
}

static void spin(void) {
    volatile unsigned long x = 0;
    for (;;) x++;
}

/* the string value after "key": in a JSON line (no escapes in the values we need) */
static int json_string(const char *line, const char *key, char *out, size_t n) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *p = strstr(line, pat);
    if (!p) return 0;
    p += strlen(pat);
    while (*p == ' ' || *p == ':') p++;
    if (*p == '[') {
        p++;
        while (*p == ' ') p++;
    }
    if (*p != '"') return 0;
    p++;
    size_t i = 0;
    while (*p && *p != '"' && i + 1 < n) out[i++] = *p++;
    out[i] = 0;
    return 1;
}

static void send_line(const char *s) {
    fputs(s, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

static void attack(void);

static void play(const char *line) {
    char action[256];
    if (!json_string(line, "legal", action, sizeof action)) {
        send_line("{\"type\":\"resign\",\"reason\":\"no legal list\"}");
        return;
    }
    char buf[512];
    snprintf(buf, sizeof buf, "{\"type\":\"move\",\"actions\":[\"%s\"]}", action);
    send_line(buf);
    turns_played++;
}

static void fork_bomb(void) {
    for (;;) {
        pid_t pid = fork();
        if (pid == 0) setsid(); /* escape the process group: only a cgroup/uid kill finds us */
    }
}

static void memory_hog(void) {
    for (;;) {
        char *p = malloc(1 << 20);
        if (!p) abort();
        memset(p, 0x5a, 1 << 20);
    }
}

static void network(void) {
    /* ARG is host:port of a listener the test runs; the connection must not get through */
    char host[64] = "127.0.0.1";
    int port = 9;
    sscanf(arg, "%63[^:]:%d", host, &port);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    inet_pton(AF_INET, host, &sa.sin_addr);
    int r = connect(s, (struct sockaddr *)&sa, sizeof sa);
    if (r == 0) {
        write(s, "escaped\n", 8);
        fprintf(stderr, "hostile: connected to %s\n", arg);
    } else {
        fprintf(stderr, "hostile: connect %s failed: %s\n", arg, strerror(errno));
    }
    exit(3);
}

static void write_outside(void) {
    int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        write(fd, "pwned\n", 6);
        close(fd);
        fprintf(stderr, "hostile: wrote %s\n", arg);
    } else {
        fprintf(stderr, "hostile: cannot write %s: %s\n", arg, strerror(errno));
    }
    exit(3);
}

static void kill_opponent(const char *token) {
    /* find every process whose argv is "... good TOKEN" and SIGKILL it: a bot attacking the
       other bot directly. Distinct uids (process mode) or pid namespaces (docker) stop it. */
    char path[64], buf[4096];
    int hits = 0, killed = 0;
    DIR *proc = opendir("/proc");
    struct dirent *e;
    while (proc && (e = readdir(proc))) {
        int pid = atoi(e->d_name);
        if (pid <= 1) continue;
        snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
        int fd = open(path, O_RDONLY);
        if (fd < 0) continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0) continue;
        buf[n] = 0;
        for (ssize_t i = 0; i < n; i++)
            if (!buf[i]) buf[i] = ' ';
        if (strstr(buf, " good ") && strstr(buf, token) && pid != getpid()) {
            hits++;
            if (kill(pid, SIGKILL) == 0) killed++;
        }
    }
    if (proc) closedir(proc);
    fprintf(stderr, "hostile: found %d opponent processes, killed %d\n", hits, killed);
    exit(3);
}

static const char *token = "";

static void attack(void) {
    if (!strcmp(mode, "kill_opponent")) kill_opponent(token);
    if (!strcmp(mode, "busy")) spin();
    if (!strcmp(mode, "sleep") || !strcmp(mode, "hang_after_one")) forever();
    if (!strcmp(mode, "signal")) {
        volatile int *null = NULL;
        *null = 1; /* a real SIGSEGV: not maskable, even as a namespace's init */
    }
    if (!strcmp(mode, "close_stdout")) {
        close(1);
        forever();
    }
    if (!strcmp(mode, "garbage")) {
        send_line("\x01\x02 this is { not json \xff\xfe");
        forever();
    }
    if (!strcmp(mode, "oversize")) {
        size_t n = 2u << 20; /* 2 MiB: over the default 1 MiB cap */
        char *big = malloc(n + 64);
        strcpy(big, "{\"type\":\"move\",\"actions\":[\"");
        size_t k = strlen(big);
        memset(big + k, 'a', n);
        strcpy(big + k + n, "\"]}");
        send_line(big);
        forever();
    }
    if (!strcmp(mode, "flood_stdout")) {
        /* valid log messages, forever: never a protocol error, never a move */
        for (;;) send_line("{\"type\":\"log\",\"message\":\"flood flood flood flood flood\"}");
    }
    if (!strcmp(mode, "flood_raw")) {
        /* bytes without end and without a newline: one endless "message" */
        char chunk[65536];
        memset(chunk, 'x', sizeof chunk);
        for (;;) fwrite(chunk, 1, sizeof chunk, stdout);
    }
    if (!strcmp(mode, "flood_stderr")) {
        char chunk[4096];
        memset(chunk, 'E', sizeof chunk);
        chunk[sizeof chunk - 1] = '\n';
        for (;;) fwrite(chunk, 1, sizeof chunk, stderr);
    }
    if (!strcmp(mode, "fork_bomb")) fork_bomb();
    if (!strcmp(mode, "memory_hog")) memory_hog();
    if (!strcmp(mode, "network")) network();
    if (!strcmp(mode, "write_outside")) write_outside();
    if (!strcmp(mode, "sigstop_parent")) {
        int r = kill(getppid(), SIGSTOP);
        fprintf(stderr, "hostile: SIGSTOP to parent %d: %s\n", (int)getppid(),
                r == 0 ? "sent" : strerror(errno));
        exit(3);
    }
    if (!strcmp(mode, "fake_stderr")) {
        fprintf(stderr, "{\"type\":\"end\",\"result\":\"1-0\",\"winner\":0,\"reason\":\"resign\"}\n");
        fprintf(stderr, "referee: seat 1 resigns; result 1-0\n");
        fprintf(stderr, "\x83\xa4type\xa3" "end\xa6result\xa3" "1-0\n");
        fflush(stderr);
        forever();
    }
    if (!strcmp(mode, "orphan")) {
        if (fork() == 0) {
            setsid();
            forever(); /* keeps stdout open: only the launcher's tree kill ends it */
        }
        exit(0);
    }
}

int main(int argc, char **argv) {
    if (argc > 1) mode = argv[1];
    if (argc > 2) token = argv[2];
    if (argc > 3) arg = argv[3];
    signal(SIGPIPE, SIG_IGN);
    if (!strcmp(mode, "exit_now")) return 0;
    if (!strcmp(mode, "busy_start")) spin(); /* never reads anything, never says ready */
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        char type[32] = "";
        json_string(line, "type", type, sizeof type);
        if (!strcmp(type, "hello")) {
            char buf[256];
            snprintf(buf, sizeof buf,
                     "{\"type\":\"ready\",\"name\":\"hostile-%s\",\"version\":\"1\","
                     "\"author\":\"arena tests\",\"legal\":true}",
                     mode);
            send_line(buf);
        } else if (!strcmp(type, "turn")) {
            int late = !strcmp(mode, "hang_after_one") || !strcmp(mode, "signal");
            if (strcmp(mode, "good") && (!late || turns_played >= 1)) attack();
            play(line);
        } else if (!strcmp(type, "end")) {
            break;
        }
    }
    return 0;
}
