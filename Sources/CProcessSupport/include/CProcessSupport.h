#ifndef CPROCESS_SUPPORT_H
#define CPROCESS_SUPPORT_H
#include <stdint.h>

/* What a server process needs from the C library beyond libmicrohttpd. */
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
