#ifndef CMICROHTTPD_SHIM_START_H
#define CMICROHTTPD_SHIM_START_H
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// What `bd_start_daemon` needs: fixed arguments instead of MHD_start_daemon's variadic list.
struct bd_daemon_config {
    const char *host;              /* numeric address or host name to bind */
    uint16_t port;                 /* 0 picks an ephemeral port */
    unsigned int threads;          /* size of the thread pool (>= 1) */
    unsigned int connection_limit; /* simultaneous connections; more are refused at accept */
    unsigned int connection_timeout; /* seconds a connection may stay idle */
    unsigned int header_timeout;   /* seconds a connection may take to send a request's headers */
    size_t connection_memory_limit; /* bytes of header buffer per connection */
};

/// A running daemon, the gate that refuses connections past the limit at accept, and the
/// watch that closes connections slow to send their headers or bodies.
struct bd_daemon;

/// Starts an epoll thread-pool daemon that allows suspend/resume and quiescing.
/// Returns NULL and writes a reason into `error` when it cannot start.
struct bd_daemon *bd_start_daemon(const struct bd_daemon_config *config,
                                  MHD_AccessHandlerCallback handler, void *handler_cls,
                                  MHD_RequestCompletedCallback completed, void *completed_cls,
                                  char *error, size_t error_size);

/// The port the daemon listens on (useful after asking for port 0).
uint16_t bd_daemon_port(struct bd_daemon *daemon);

/// Stops accepting connections; the open ones are served on.
void bd_quiesce_daemon(struct bd_daemon *daemon);

/// Stops the daemon and frees it.
void bd_stop_daemon(struct bd_daemon *daemon);

/// Sets the time `connection` has, from now, to send what it must (a body, the next
/// request's headers) before the watch shuts it down; 0 means no deadline.
void bd_connection_deadline(struct MHD_Connection *connection, unsigned int seconds);


#endif
