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
    unsigned int connection_limit; /* simultaneous connections; more are refused at accept */
    unsigned int connection_timeout; /* seconds a connection may stay idle */
    unsigned int header_timeout;   /* seconds a connection may take to send a request's headers */
    size_t connection_memory_limit; /* bytes of header buffer per connection */
};

/// A running daemon, the gate that refuses connections past the limit at accept, and the
/// watch that closes connections slow to send their headers.
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

/// Tells the header watch that `connection` is serving a request (its headers are in), or
/// is done with it and waits for the next one's headers.
void bd_connection_serving(struct MHD_Connection *connection, int serving);

/// The value of a request header, or NULL.
const char *bd_header(struct MHD_Connection *connection, const char *name);

#endif

#ifndef CMICROHTTPD_SHIM_PROBE_H
#define CMICROHTTPD_SHIM_PROBE_H
/// Sends `GET path` to host:port over HTTP/1.0 and returns the response's status code,
/// or -1 when there is no answer within `timeout_seconds`.
int bd_http_get_status(const char *host, uint16_t port, const char *path, int timeout_seconds);

/// Keeps freed memory for reuse instead of returning each large block to the kernel, so
/// big requests do not fault their memory in again every time.
void bd_keep_freed_memory(void);

/// Installs handlers for SIGTERM and SIGINT (at once, so no signal sent after this returns
/// is lost) and ignores SIGPIPE.
void bd_catch_stop_signals(void);

/// Blocks until SIGTERM or SIGINT arrives (after bd_catch_stop_signals).
void bd_wait_for_stop_signal(void);

/// Raises the soft limit of open files to the hard limit: every connection, parked long
/// polls included, holds one.
void bd_raise_open_file_limit(void);
#endif
