/* Placeholder until the command lands; owned by the helper implementing it. */
#include "db_cmd.h"

#include <stdio.h>

int db_cmd_ls(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "dumpbisect: %s: not implemented yet\n", argv[0]);
	return 2;
}
