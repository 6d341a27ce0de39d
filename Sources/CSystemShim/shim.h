#ifndef KC_CSYSTEMSHIM_H
#define KC_CSYSTEMSHIM_H
#include <sys/prctl.h>
#include <malloc.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <poll.h>
#include <spawn.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
/* Not visible to Swift without _GNU_SOURCE, so declared or defined here: pipe2 and accept4 (both
 * since glibc 2.10); posix_spawn's closing of every descriptor above the ones a child is given
 * (glibc 2.34 and later: the child closes every descriptor from `from` up before it runs the
 * program); and glibc's posix_spawn flag that makes the child a session leader (setsid),
 * POSIX_SPAWN_SETSID, whose value is 0x80 since glibc 2.26. */
#ifndef __USE_GNU
extern int pipe2(int fds[2], int flags);
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
#endif
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
#define KC_POSIX_SPAWN_SETSID 0x80

/* prctl is variadic and absent from Swift's Glibc module: wrap what kc needs. */
static inline int kc_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
static inline int kc_disable_core_files(void) {
    struct rlimit zero = { 0, 0 };
    return setrlimit(RLIMIT_CORE, &zero);
}

/* The soft RLIMIT_MEMLOCK in bytes; -1 when unlimited or unknown. */
/* The f_type of the file system holding `path` (statfs), or -1. */
static inline long long kc_file_system_type(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    return (long long)info.f_type;
}

static inline long long kc_locked_memory_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return -1;
    return (long long)limit.rlim_cur;
}

/* Waiting for a lock in the kernel, not by polling: waiters queue on the lock, and one is woken
 * as soon as it is free. A per-thread timer (a real-time signal whose handler does nothing and
 * is installed without SA_RESTART) interrupts flock after `seconds`; it repeats every 10 ms after
 * that, so a signal that lands just before flock is entered cannot leave the wait unbounded.
 * Returns 0, or -1 with errno (EWOULDBLOCK when the time ran out). */
static void kc_lock_timer_fired(int signal) { (void)signal; }

static inline double kc_monotonic_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static inline int kc_flock_waiting(int fd, int operation, double seconds) {
    if (flock(fd, operation | LOCK_NB) == 0) return 0;
    if (errno != EWOULDBLOCK && errno != EINTR) return -1;
    if (seconds <= 0) { errno = EWOULDBLOCK; return -1; }
    int signal_number = SIGRTMIN + 3;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = kc_lock_timer_fired;
    sigemptyset(&action.sa_mask);
    /* Left installed afterwards: a tick generated just before the timer is deleted must never
     * meet the default action (which ends the process). */
    if (sigaction(signal_number, &action, NULL) != 0) return -1;
    sigset_t timer_signal, previous_mask;
    sigemptyset(&timer_signal);
    sigaddset(&timer_signal, signal_number);
    pthread_sigmask(SIG_UNBLOCK, &timer_signal, &previous_mask);
    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = signal_number;
    event._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) {
        int saved = errno;
        pthread_sigmask(SIG_SETMASK, &previous_mask, NULL);
        errno = saved;
        return -1;
    }
    struct itimerspec when;
    memset(&when, 0, sizeof when);
    when.it_value.tv_sec = (time_t)seconds;
    when.it_value.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9);
    if (when.it_value.tv_sec == 0 && when.it_value.tv_nsec == 0) when.it_value.tv_nsec = 1;
    when.it_interval.tv_nsec = 10 * 1000 * 1000;
    timer_settime(timer, 0, &when, NULL);
    double deadline = kc_monotonic_seconds() + seconds;
    int result;
    int saved = 0;
    while ((result = flock(fd, operation)) != 0) {
        saved = errno;
        if (saved != EINTR) break;
        if (kc_monotonic_seconds() >= deadline) { saved = EWOULDBLOCK; break; }
    }
    timer_delete(timer);
    pthread_sigmask(SIG_SETMASK, &previous_mask, NULL);
    if (result != 0) errno = saved;
    return result;
}

/* ---- Unix-domain sockets, peer credentials, clocks, signals and detached spawning (the agent). */

/* Gives the heap's free pages back to the system (after a large load's temporaries are freed). */
static inline void kc_release_free_memory(void) { malloc_trim(0); }

/* Seconds on CLOCK_BOOTTIME: monotonic, and counting time spent in suspend. */
static inline double kc_boottime_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_BOOTTIME, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* Sleeps until CLOCK_BOOTTIME reads `deadline` seconds (an absolute time, so time spent in suspend
   counts); 0 once reached, else the error number (EINTR when a signal handler ran). */
static inline int kc_sleep_until_boottime(double deadline) {
    struct timespec until;
    until.tv_sec = (time_t)deadline;
    until.tv_nsec = (long)((deadline - (double)until.tv_sec) * 1e9);
    if (until.tv_nsec < 0) until.tv_nsec = 0;
    if (until.tv_nsec > 999999999) until.tv_nsec = 999999999;
    return clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME, &until, NULL);
}

/* Fills a sockaddr_un for `path`; -1 with ENAMETOOLONG when it does not fit sun_path. */
static inline int kc_unix_address(const char *path, struct sockaddr_un *address) {
    size_t length = strlen(path);
    if (length == 0 || length >= sizeof address->sun_path) { errno = ENAMETOOLONG; return -1; }
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    memcpy(address->sun_path, path, length + 1);
    return 0;
}

/* A connected stream socket (close-on-exec), or -1 with errno. */
static inline int kc_unix_connect(const char *path, double timeout) {
    struct sockaddr_un address;
    if (kc_unix_address(path, &address) != 0) return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (timeout > 0) {
        /* A Unix stream connect to a full listen backlog waits up to SO_SNDTIMEO, then fails with EAGAIN. */
        struct timeval tv;
        tv.tv_sec = (time_t)timeout;
        tv.tv_usec = (suseconds_t)((timeout - (double)tv.tv_sec) * 1e6);
        if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0) { int saved = errno; close(fd); errno = saved; return -1; }
    }
    int result;
    do { result = connect(fd, (struct sockaddr *)&address, sizeof address); } while (result != 0 && errno == EINTR);
    if (result != 0) { int saved = errno; close(fd); errno = saved; return -1; }
    return fd;
}

/* A listening stream socket bound at `path`, created under umask 0177 (mode 0600). */
static inline int kc_unix_listen(const char *path, int backlog) {
    struct sockaddr_un address;
    if (kc_unix_address(path, &address) != 0) return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    mode_t previous = umask(0177);
    int result = bind(fd, (struct sockaddr *)&address, sizeof address);
    int saved = errno;
    umask(previous);
    if (result != 0 || listen(fd, backlog) != 0) {
        if (result == 0) saved = errno;
        close(fd); errno = saved; return -1;
    }
    return fd;
}

/* A connection accepted on `fd`, close-on-exec from the start (accept4): no child started by
 * another thread meanwhile inherits it. */
static inline int kc_unix_accept(int fd) {
    int result;
    do { result = accept4(fd, NULL, NULL, SOCK_CLOEXEC); } while (result < 0 && errno == EINTR);
    return result;
}

/* The peer's process id and user id (SO_PEERCRED). */
static inline int kc_peer_credentials(int fd, int *pid, unsigned *uid) {
    struct { pid_t pid; uid_t uid; gid_t gid; } credentials;   /* struct ucred (_GNU_SOURCE) */
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *pid = credentials.pid;
    *uid = credentials.uid;
    return 0;
}

/* Send and receive timeouts of a socket. */
static inline int kc_socket_timeouts(int fd, double seconds) {
    struct timeval tv;
    tv.tv_sec = (time_t)seconds;
    tv.tv_usec = (suseconds_t)((seconds - (double)tv.tv_sec) * 1e6);
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) return -1;
    return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* Sends every byte without raising SIGPIPE; -1 with errno. */
static inline int kc_send_all(int fd, const void *bytes, size_t count) {
    size_t done = 0;
    while (done < count) {
        ssize_t n = send(fd, (const char *)bytes + done, count - done, MSG_NOSIGNAL);
        if (n < 0) { if (errno == EINTR) continue; return -1; }
        done += (size_t)n;
    }
    return 0;
}

/* Receives exactly `count` bytes; 0 on success, 1 on end of stream first, -1 with errno. */
static inline int kc_receive_exactly(int fd, void *bytes, size_t count) {
    size_t done = 0;
    while (done < count) {
        ssize_t n = recv(fd, (char *)bytes + done, count - done, 0);
        if (n < 0) { if (errno == EINTR) continue; return -1; }
        if (n == 0) return 1;
        done += (size_t)n;
    }
    return 0;
}

/* A pipe whose two ends are close-on-exec from the start (pipe2). */
static inline int kc_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

/* A descriptor that becomes readable when process `pid` exits (pidfd_open). */
static inline int kc_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

/* Waits until `fd` is readable or `seconds` pass: 1 readable, 0 timed out, -1 error. */
static inline int kc_wait_readable(int fd, double seconds) {
    struct pollfd entry = { fd, POLLIN, 0 };
    double deadline = kc_monotonic_seconds() + seconds;
    for (;;) {
        double left = deadline - kc_monotonic_seconds();
        if (left < 0) left = 0;
        int result = poll(&entry, 1, (int)(left * 1000.0 + 0.999));
        if (result < 0 && errno == EINTR) continue;
        if (result < 0) return -1;
        return result > 0 ? 1 : 0;
    }
}

/* Blocks SIGTERM, SIGHUP and SIGINT and returns a signalfd that reads them (close-on-exec). */
static inline int kc_termination_signalfd(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGINT);
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0) return -1;
    return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Waits for the first of two descriptors to become readable: bit 0 for `a`, bit 1 for `b`,
 * 0 on timeout, -1 on error. A negative `seconds` waits forever. */
static inline int kc_poll_two(int a, int b, double seconds) {
    struct pollfd entries[2] = { { a, POLLIN, 0 }, { b, POLLIN, 0 } };
    int timeout = seconds < 0 ? -1 : (int)(seconds * 1000.0 + 0.999);
    int result = poll(entries, 2, timeout);
    if (result < 0) return errno == EINTR ? 0 : -1;
    return (entries[0].revents ? 1 : 0) | (entries[1].revents ? 2 : 0);
}

#endif
