/* The pickle VM's allowlist (private to src/): the only names GLOBAL and
 * STACK_GLOBAL may resolve — tensor rebuild functions, storage classes,
 * dtypes, qschemes, OrderedDict, _codecs.encode, torch.Size. */
#ifndef DB_PICKLE_ALLOW_H
#define DB_PICKLE_ALLOW_H
#include "pickle_vm.h"

/* A DB_PK_GLOBAL value for mod.name, or NULL with vm->err set naming op
 * when the name is not on the list. */
db_pk_val *db_pk_resolve(db_pk *vm, size_t at, const char *op, const char *mod, const char *name);

/* "module.name" read from a file, for messages: Python 2 module names
 * mapped as torch does, each part made safe by db_pk_clean and cut to 199
 * bytes. buf of DB_PK_NAME_BUF bytes holds it whole. Returns buf. */
#define DB_PK_NAME_BUF 400
const char *db_pk_shown_name(const char *mod, const char *name, char *buf, size_t len);

#endif
