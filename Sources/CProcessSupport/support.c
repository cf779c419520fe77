#include "CProcessSupport.h"
#include <string.h>
#include <errno.h>
#include <malloc.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

void bd_keep_freed_memory(void) {
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
}

void bd_raise_open_file_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
}

static sem_t bd_stop_requested;

static void bd_request_stop(int signal_number) {
    (void)signal_number;
    sem_post(&bd_stop_requested); /* async-signal-safe */
}

void bd_catch_stop_signals(void) {
    sem_init(&bd_stop_requested, 0, 0);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = bd_request_stop;
    action.sa_flags = SA_RESTART; /* system calls interrupted on other threads go on */
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    signal(SIGPIPE, SIG_IGN);
}

void bd_wait_for_stop_signal(void) {
    while (sem_wait(&bd_stop_requested) != 0 && errno == EINTR) {
    }
}
