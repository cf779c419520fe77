#ifndef CGLIBC_EXTRAS_SHIM_H
#define CGLIBC_EXTRAS_SHIM_H
/* What the server needs from glibc beyond Swift's Glibc module. */

/* The allocator's settings (mallopt). */
#include <malloc.h>

/* poll(2)'s "peer closed its end" event (Linux 2.6.17), which glibc defines only under
 * _GNU_SOURCE, as it does in bits/poll.h. */
#define BD_POLLRDHUP 0x2000

#endif
