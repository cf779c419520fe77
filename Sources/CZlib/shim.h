#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
/* zlib from Debian's zlib1g-dev; the safe Swift layer is Sources/Gzip. zlib's init calls
   are macros, which Swift cannot call: these wrappers fix the gzip framing. */
#include <zlib.h>

/* A deflate stream that writes one gzip member. */
static inline int batchdiff_deflate_init_gzip(z_streamp stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, MAX_WBITS + 16, 8, Z_DEFAULT_STRATEGY);
}

/* An inflate stream that reads gzip (and zlib) members. */
static inline int batchdiff_inflate_init_gzip(z_streamp stream) {
    return inflateInit2(stream, MAX_WBITS + 32);
}
#endif
