/* Placeholder until the TUI lands. */
#include "tui.h"

#include <stdio.h>

int tui_main(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "%s: the TUI is not implemented yet\n", argv[0]);
	return 2;
}
