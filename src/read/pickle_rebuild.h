/* Rebuilding values from a pickle's calls (private to src/): REDUCE of an
 * allowlisted function and BINPERSID storage ids. Results are owned by vm;
 * NULL with vm->err set when the call or id is not one torch.save writes. */
#ifndef DB_PICKLE_REBUILD_H
#define DB_PICKLE_REBUILD_H
#include "pickle_vm.h"

/* fn(*args): fn a DB_PK_GLOBAL, args a tuple. */
db_pk_val *db_pk_reduce(db_pk *vm, size_t at, const db_pk_val *fn, const db_pk_val *args);
/* ('storage', class, key, location, numel[, view]); 6 fields if vm->legacy.
 * The storage is also listed by db_pk_storages. */
db_pk_val *db_pk_persistent_load(db_pk *vm, size_t at, const db_pk_val *pid);

#endif
