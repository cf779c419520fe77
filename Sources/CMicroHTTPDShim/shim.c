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
