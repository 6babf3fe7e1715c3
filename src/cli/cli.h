/* cli.h — the `inkwell key ...` commands. */
#ifndef INK_CLI_H
#define INK_CLI_H

/* argv[0] is "key". Returns the process exit code. */
int cli_key(int argc, char **argv);

#endif
