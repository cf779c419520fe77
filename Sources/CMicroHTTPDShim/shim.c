#include "CMicroHTTPDShim.h"
#include <netdb.h>
#include <stdio.h>
#include <string.h>

struct MHD_Daemon *bd_start_daemon(const struct bd_daemon_config *config,
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
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    if (found->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    struct MHD_Daemon *daemon = MHD_start_daemon(
        flags, config->port, NULL, NULL, handler, handler_cls,
        MHD_OPTION_SOCK_ADDR, found->ai_addr,
        MHD_OPTION_THREAD_POOL_SIZE, config->threads,
        MHD_OPTION_CONNECTION_LIMIT, config->connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, config->connection_timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, config->connection_memory_limit,
        MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_END);
    freeaddrinfo(found);
    if (daemon == NULL) {
        snprintf(error, error_size, "cannot listen on %s:%u (address in use, or not allowed)",
                 config->host, (unsigned)config->port);
    }
    return daemon;
}

uint16_t bd_daemon_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

const char *bd_header(struct MHD_Connection *connection, const char *name) {
    return MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
}

const char *bd_query(struct MHD_Connection *connection, const char *name) {
    return MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, name);
}

#include <malloc.h>
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
