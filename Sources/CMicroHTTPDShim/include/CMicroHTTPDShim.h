#ifndef CMICROHTTPD_SHIM_START_H
#define CMICROHTTPD_SHIM_START_H
#include <stddef.h>
#include <stdint.h>
#include "../../CMicroHTTPD/shim.h"

/// What `bd_start_daemon` needs: fixed arguments instead of MHD_start_daemon's variadic list.
struct bd_daemon_config {
    const char *host;              /* numeric address or host name to bind */
    uint16_t port;                 /* 0 picks an ephemeral port */
    unsigned int threads;          /* size of the thread pool (>= 1) */
    unsigned int connection_limit; /* simultaneous connections */
    unsigned int connection_timeout; /* seconds a connection may stay idle */
    size_t connection_memory_limit; /* bytes of header buffer per connection */
};

/// Starts an epoll thread-pool daemon that allows suspend/resume and quiescing.
/// Returns NULL and writes a reason into `error` when it cannot start.
struct MHD_Daemon *bd_start_daemon(const struct bd_daemon_config *config,
                                   MHD_AccessHandlerCallback handler, void *handler_cls,
                                   MHD_RequestCompletedCallback completed, void *completed_cls,
                                   char *error, size_t error_size);

/// The port the daemon listens on (useful after asking for port 0).
uint16_t bd_daemon_port(struct MHD_Daemon *daemon);

/// The value of a request header, or NULL.
const char *bd_header(struct MHD_Connection *connection, const char *name);

/// The value of a query argument, or NULL.
const char *bd_query(struct MHD_Connection *connection, const char *name);

#endif
