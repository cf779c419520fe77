#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
/* libpq from Debian's libpq-dev; the safe Swift layer is Sources/PostgreSQL. */
#include <libpq-fe.h>
#endif
