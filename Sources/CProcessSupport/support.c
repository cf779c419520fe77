#include "CProcessSupport.h"
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <malloc.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int bd_http_get_status(const char *host, uint16_t port, const char *path, int timeout_seconds) {
    struct addrinfo hints, *found = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    char service[8];
    snprintf(service, sizeof service, "%u", (unsigned)port);
    if (getaddrinfo(host, service, &hints, &found) != 0 || found == NULL) return -1;
    int status = -1;
    int fd = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
    if (fd >= 0) {
        struct timeval timeout = {timeout_seconds, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
        char request[512];
        int length = snprintf(request, sizeof request, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, host);
        char answer[64] = {0};
        if (connect(fd, found->ai_addr, found->ai_addrlen) == 0 && length > 0 && length < (int)sizeof request &&
            send(fd, request, (size_t)length, MSG_NOSIGNAL) == length && recv(fd, answer, sizeof answer - 1, 0) > 12) {
            int code = 0;
            if (sscanf(answer, "HTTP/%*d.%*d %d", &code) == 1) status = code;
        }
        close(fd);
    }
    freeaddrinfo(found);
    return status;
}

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
