#ifndef CMALLOC_SHIM_H
#define CMALLOC_SHIM_H
/* glibc's allocator tuning (mallopt), which the Glibc module does not bring to Swift. */
#include <malloc.h>
#endif
