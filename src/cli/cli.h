/* cli.h — the `inkwell key ...` and `inkwell backup` commands. */
#ifndef INK_CLI_H
#define INK_CLI_H

/* argv[0] is "key". Returns the process exit code. */
int cli_key(int argc, char **argv);
/* argv[0] is "backup" (backup_cli.c). Returns the process exit code. */
int cli_backup(int argc, char **argv);

#endif
