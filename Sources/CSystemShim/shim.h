#ifndef KC_CSYSTEMSHIM_H
#define KC_CSYSTEMSHIM_H
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
/* prctl is variadic and absent from Swift's Glibc module: wrap what kc needs. */
static inline int kc_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
static inline int kc_disable_core_files(void) {
    struct rlimit zero = { 0, 0 };
    return setrlimit(RLIMIT_CORE, &zero);
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
#endif
