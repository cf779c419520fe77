#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
/* SQLite from Debian's libsqlite3-dev; the safe Swift layer is Sources/SQLite. */
#include <sqlite3.h>
#endif
