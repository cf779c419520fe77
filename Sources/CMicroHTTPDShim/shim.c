#include "CMicroHTTPDShim.h"

/* The Swift side reads these types as it sees them imported; these hold it to that. */
_Static_assert(sizeof(MHD_socket) == sizeof(int), "MHD_socket is a file descriptor");
_Static_assert(sizeof(intptr_t) == sizeof(void *), "a callback fits an option item's value");
_Static_assert(sizeof(((struct MHD_OptionItem *)0)->value) == sizeof(intptr_t), "option values are intptr_t");

struct MHD_Daemon *bd_start_daemon(unsigned int flags, uint16_t port,
                                   MHD_AcceptPolicyCallback accept_policy, void *accept_policy_cls,
                                   MHD_AccessHandlerCallback handler, void *handler_cls,
                                   MHD_RequestCompletedCallback completed, void *completed_cls,
                                   MHD_NotifyConnectionCallback notify_connection, void *notify_connection_cls,
                                   bd_unescape_callback unescape, void *unescape_cls,
                                   const struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, port, accept_policy, accept_policy_cls, handler, handler_cls,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_NOTIFY_CONNECTION, notify_connection, notify_connection_cls,
                            MHD_OPTION_UNESCAPE_CALLBACK, unescape, unescape_cls,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

const union MHD_ConnectionInfo *bd_connection_info(struct MHD_Connection *connection, enum MHD_ConnectionInfoType kind) {
    return MHD_get_connection_info(connection, kind);
}

const union MHD_DaemonInfo *bd_daemon_info(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType kind) {
    return MHD_get_daemon_info(daemon, kind);
}
