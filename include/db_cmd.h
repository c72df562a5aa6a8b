/* Headless commands, shared by the binary's dispatcher (ui/main.c). Each
 * takes the arguments after its name (argv[0] = command name) and returns
 * the process exit code: 0 all ok, 1 something diverges/changed, 2 usage or
 * input error. */
#ifndef DB_CMD_H
#define DB_CMD_H

int db_cmd_compare(int argc, char **argv);
int db_cmd_ls(int argc, char **argv);
int db_cmd_schema(int argc, char **argv);
int db_cmd_bisect(int argc, char **argv);
int db_cmd_replay(int argc, char **argv);
int db_cmd_export(int argc, char **argv);

#endif
