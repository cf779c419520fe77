#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* Fixed-argument forms of libmicrohttpd's variadic calls, which Swift cannot call. The
 * logic around them (options, callbacks, the accept gate, deadlines, percent decoding) is
 * Swift, in Sources/HTTPServer/MicroHTTPD.swift. */

/// libmicrohttpd's macros with casts, which Swift does not import.
static const uint64_t bd_size_unknown = MHD_SIZE_UNKNOWN;
static const ssize_t bd_content_reader_end_of_stream = MHD_CONTENT_READER_END_OF_STREAM;
static const ssize_t bd_content_reader_end_with_error = MHD_CONTENT_READER_END_WITH_ERROR;

/// What MHD_OPTION_UNESCAPE_CALLBACK calls: decodes `text` in place, returns its new length.
typedef size_t (*bd_unescape_callback)(void *cls, struct MHD_Connection *connection, char *text);

/// MHD_start_daemon with its callbacks as arguments and every other option in `options`
/// (an array ending with MHD_OPTION_END).
struct MHD_Daemon *bd_start_daemon(unsigned int flags, uint16_t port,
                                   MHD_AcceptPolicyCallback accept_policy, void *accept_policy_cls,
                                   MHD_AccessHandlerCallback handler, void *handler_cls,
                                   MHD_RequestCompletedCallback completed, void *completed_cls,
                                   MHD_NotifyConnectionCallback notify_connection, void *notify_connection_cls,
                                   bd_unescape_callback unescape, void *unescape_cls,
                                   const struct MHD_OptionItem *options);

/// MHD_get_connection_info for a kind that takes no further argument.
const union MHD_ConnectionInfo *bd_connection_info(struct MHD_Connection *connection, enum MHD_ConnectionInfoType kind);

/// MHD_get_daemon_info for a kind that takes no further argument.
const union MHD_DaemonInfo *bd_daemon_info(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType kind);

#endif
