#include "CMicroHTTPDShim.h"
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

/* A daemon with two guards libmicrohttpd lacks.
 * - A gate at accept: in epoll mode libmicrohttpd stops accepting at its connection limit,
 *   leaving more clients waiting in the backlog with no answer; the gate counts open
 *   connections and refuses the ones past the limit at once.
 * - Deadlines: libmicrohttpd's timeout counts idle time only, so a client sending its
 *   headers or its body a byte every few seconds keeps a connection forever. Each
 *   connection has a deadline while it sends (the header timeout from its start, then the
 *   one its server sets with bd_connection_deadline); a watchman thread shuts down the
 *   socket of one past its deadline, and libmicrohttpd then closes it. */
struct bd_watch {
    struct bd_watch *previous, *next;
    struct bd_daemon *daemon;
    MHD_socket socket;
    time_t deadline; /* 0: none, while a request is being answered */
};

struct bd_daemon {
    struct MHD_Daemon *mhd;
    atomic_uint open;
    unsigned int limit;
    unsigned int header_timeout;
    pthread_mutex_t lock; /* guards the watch list and every watch in it */
    struct bd_watch watched; /* sentinel of a circular list */
    pthread_t watchman;
    atomic_bool stopping;
};

static int bd_hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Percent-decodes the path or a query argument in place, as libmicrohttpd's default does,
 * except that "%00" stays as it is: a decoded NUL would end the C string early, so
 * "/feeds/a%00junk" would reach the server as "/feeds/a". Kept, "%00" makes the feed id or
 * argument invalid, and the request gets a 400. */
static size_t bd_unescape(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls;
    (void)connection;
    char *out = text;
    const char *in = text;
    while (*in != '\0') {
        int high, low;
        if (in[0] == '%' && (high = bd_hex_digit(in[1])) >= 0 && (low = bd_hex_digit(in[2])) >= 0 && (high | low) != 0) {
            *out++ = (char)(high * 16 + low);
            in += 3;
        } else {
            *out++ = *in++;
        }
    }
    *out = '\0';
    return (size_t)(out - text);
}

static enum MHD_Result bd_admit(void *cls, const struct sockaddr *address, socklen_t length) {
    (void)address;
    (void)length;
    struct bd_daemon *daemon = cls;
    return atomic_load(&daemon->open) < daemon->limit ? MHD_YES : MHD_NO;
}

static void bd_track(void *cls, struct MHD_Connection *connection, void **socket_context,
                     enum MHD_ConnectionNotificationCode code) {
    struct bd_daemon *daemon = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        atomic_fetch_add(&daemon->open, 1);
        struct bd_watch *watch = calloc(1, sizeof *watch);
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (watch == NULL || info == NULL) {
            free(watch);
            return;
        }
        watch->daemon = daemon;
        watch->socket = info->connect_fd;
        watch->deadline = time(NULL) + (time_t)daemon->header_timeout;
        pthread_mutex_lock(&daemon->lock);
        watch->next = daemon->watched.next;
        watch->previous = &daemon->watched;
        daemon->watched.next->previous = watch;
        daemon->watched.next = watch;
        pthread_mutex_unlock(&daemon->lock);
        *socket_context = watch;
    } else {
        atomic_fetch_sub(&daemon->open, 1);
        struct bd_watch *watch = *socket_context;
        if (watch == NULL) return;
        pthread_mutex_lock(&daemon->lock);
        watch->previous->next = watch->next;
        watch->next->previous = watch->previous;
        pthread_mutex_unlock(&daemon->lock);
        free(watch);
        *socket_context = NULL;
    }
}

static void *bd_watch_deadlines(void *cls) {
    struct bd_daemon *daemon = cls;
    while (!atomic_load(&daemon->stopping)) {
        struct timespec pause = {0, 250 * 1000 * 1000};
        nanosleep(&pause, NULL);
        time_t now = time(NULL);
        pthread_mutex_lock(&daemon->lock);
        for (struct bd_watch *watch = daemon->watched.next; watch != &daemon->watched; watch = watch->next) {
            if (watch->deadline != 0 && now > watch->deadline) {
                shutdown(watch->socket, SHUT_RDWR);
                watch->deadline = 0;
            }
        }
        pthread_mutex_unlock(&daemon->lock);
    }
    return NULL;
}

void bd_connection_deadline(struct MHD_Connection *connection, unsigned int seconds) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (info == NULL || info->socket_context == NULL) return;
    struct bd_watch *watch = info->socket_context;
    pthread_mutex_lock(&watch->daemon->lock);
    watch->deadline = seconds == 0 ? 0 : time(NULL) + (time_t)seconds;
    pthread_mutex_unlock(&watch->daemon->lock);
}

struct bd_daemon *bd_start_daemon(const struct bd_daemon_config *config,
                                  MHD_AccessHandlerCallback handler, void *handler_cls,
                                  MHD_RequestCompletedCallback completed, void *completed_cls,
                                  char *error, size_t error_size) {
    struct addrinfo hints, *found = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    char port[8];
    snprintf(port, sizeof port, "%u", (unsigned)config->port);
    int status = getaddrinfo(config->host, port, &hints, &found);
    if (status != 0 || found == NULL) {
        snprintf(error, error_size, "cannot resolve host '%s': %s", config->host, gai_strerror(status));
        return NULL;
    }
    struct bd_daemon *daemon = calloc(1, sizeof *daemon);
    if (daemon == NULL) {
        freeaddrinfo(found);
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    atomic_init(&daemon->open, 0);
    atomic_init(&daemon->stopping, false);
    daemon->limit = config->connection_limit;
    daemon->header_timeout = config->header_timeout;
    pthread_mutex_init(&daemon->lock, NULL);
    daemon->watched.next = daemon->watched.previous = &daemon->watched;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    if (found->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    daemon->mhd = MHD_start_daemon(
        flags, config->port, bd_admit, daemon, handler, handler_cls,
        MHD_OPTION_SOCK_ADDR, found->ai_addr,
        MHD_OPTION_THREAD_POOL_SIZE, config->threads,
        /* The gate refuses first; libmicrohttpd's own limit only backs it up. */
        MHD_OPTION_CONNECTION_LIMIT, config->connection_limit + 64,
        MHD_OPTION_CONNECTION_TIMEOUT, config->connection_timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, config->connection_memory_limit,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_NOTIFY_CONNECTION, bd_track, daemon,
        MHD_OPTION_UNESCAPE_CALLBACK, bd_unescape, NULL,
        MHD_OPTION_END);
    freeaddrinfo(found);
    if (daemon->mhd == NULL || pthread_create(&daemon->watchman, NULL, bd_watch_deadlines, daemon) != 0) {
        if (daemon->mhd != NULL) MHD_stop_daemon(daemon->mhd);
        pthread_mutex_destroy(&daemon->lock);
        free(daemon);
        snprintf(error, error_size, "cannot listen on %s:%u (address in use, or not allowed)",
                 config->host, (unsigned)config->port);
        return NULL;
    }
    return daemon;
}

uint16_t bd_daemon_port(struct bd_daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon->mhd, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

void bd_quiesce_daemon(struct bd_daemon *daemon) {
    MHD_socket socket = MHD_quiesce_daemon(daemon->mhd);
    if (socket != MHD_INVALID_SOCKET) close(socket);
}

void bd_stop_daemon(struct bd_daemon *daemon) {
    atomic_store(&daemon->stopping, true);
    pthread_join(daemon->watchman, NULL);
    MHD_stop_daemon(daemon->mhd);
    pthread_mutex_destroy(&daemon->lock);
    free(daemon);
}
