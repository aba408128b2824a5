/*
 * The command-line tool's shared parts: exit codes, the defaults its help
 * states, the command table's entry, and the helpers every command uses
 * (messages, option parsing, secrets, opening the two databases); options
 * read by a table of them (cli_parse()), and config.db's edits run by one
 * driver (cli_edit()).
 *
 * The commands themselves live by subject: cmd_config.c (config.db),
 * cmd_list.c (the config.db lists), cmd_state.c (state.db read-outs and
 * moves), cmd_daemon.c (dispatch and poll); hookbox.c holds the table,
 * help and main.
 */
#ifndef HB_CLI_H
#define HB_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include <cJSON.h>

#include "config/admin.h"
#include "config/config.h"
#include "config/registrar.h"
#include "run/settings.h"
#include "store/store.h"

/* Exit codes (sysexits style). */
#define EXIT_OK		0
#define EXIT_FAIL	1	/* refused or failed */
#define EXIT_USAGE	2
#define EXIT_TEMPFAIL	75	/* database busy: try again */

/*
 * Defaults of the commands' options, named once: the code and the help
 * table both use them.
 */
#define DEST_TIMEOUT_MS_DEFAULT		10000
/* A destination's retry horizon, and its limits and circuit's count. */
#define DEST_RETRY_FOR_MAX_S		(365 * 86400)
#define DEST_LIMIT_MAX			10000
#define POLL_LIMIT_DEFAULT		100
#define POLL_TIMEOUT_MS_DEFAULT		10000
#define LIST_LIMIT_DEFAULT		100
#define PRUNE_RECEIPTS_DAYS_DEFAULT	7
#define PRUNE_ACTIONS_DAYS_DEFAULT	90
#define RESOLVE_NOTE_DEFAULT		"resolved by an operator"

/* One command: its words, its function, its usage line and its help. */
struct cli_command {
	const char	*name;
	const char	*sub;	/* NULL for single-word commands */
	int		(*fn)(struct settings *, int, char **);
	int		 need;	/* SETTINGS_NEED_*, or -1: checks nothing */
	const char	*usage;
	const char	*help;	/* one line per option, with its default */
};

/* The command being run (set by main). */
extern const struct cli_command	*cli_cmd;
/*
 * The registrar the registrar service runs the command for, or NULL:
 * cli_open_config() narrows the configuration to it (config/registrar.h).
 */
extern const char		*cli_registrar;

void	cli_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	cli_print_usage(FILE *, const char *, const struct cli_command *);
int	cli_usage(void);

int	cli_config_exit(enum config_status);
int	cli_store_fail(const struct settings *, enum store_status);
int	cli_server_unreachable(const struct settings *);
int	cli_config_done(enum config_status, const char *, const char *const *);

int	cli_parse_int(const char *, long long, long long, const char *,
	    long long *);
int	cli_set_field(char *, size_t, const char *, const char *);
int	cli_next_opt(int, char **, const struct option *);
ssize_t	cli_read_bounded(int, char *, size_t);
ssize_t	cli_read_secret(const char *, unsigned char *, size_t);
int	cli_read_body(char **, size_t *);
/*
 * Reads the file named by option opt (path, or "-" for standard input),
 * at most max bytes, into *text (NUL-terminated, free()) and *len.
 * EXIT_OK; EXIT_USAGE, naming the file, when it is longer; EXIT_FAIL
 * when it cannot be read.
 */
int	cli_read_file(const char *, const char *, size_t, char **, size_t *);

int	cli_open_config(struct settings *, enum config_mode, struct config **);
int	cli_open_store(struct settings *, int, struct store **);

int	cli_print_json(cJSON *);
int	cli_table_of(const char *, enum config_table *);

/* ---- options as a table, and the config.db edits (common.c) ---- */

#define CLI_OPTS_MAX	24	/* the rows one table may hold */

/* How an option fills its field in the struct a table describes. */
enum cli_arg {
	CLI_FLAG = 0,	/* no argument: the int becomes val */
	CLI_ONE,	/* no argument: the int (-1 until given) becomes val;
			   the pair's other value given too is a usage error */
	CLI_PTR,	/* the argument itself, a const char * into argv */
	CLI_TEXT,	/* a copy in a char[len]; a longer one: usage error */
	CLI_INT,	/* a whole number min..max, in an int or an int64_t
			   (len says which) */
	CLI_SINCE,	/* --since's forms (util_parse_since()): int64_t ms */
	CLI_DURATION,	/* util_parse_duration()'s forms, min..max seconds,
			   into an int64_t */
	CLI_FN		/* fn(argument, the struct): 0, or -1 (reported) */
};

/* Must be given (a CLI_TEXT not ""): cli_edit() checks it. */
#define CLI_REQUIRED	0x1

/*
 * One option of an entity's table: its name, the commands that take it
 * (a mask of the table's own bits), and the field it fills.  A name may
 * stand twice, with different commands, where they take it differently.
 */
struct cli_opt {
	const char	*name;	/* without "--"; an operand's: its word */
	unsigned	 cmds;
	enum cli_arg	 arg;
	size_t		 off;	/* the field: its offset in the struct */
	size_t		 len;	/* and its size */
	long long	 val;	/* CLI_FLAG, CLI_ONE: the value; CLI_INT: min */
	long long	 max;	/* CLI_INT */
	int		 flags;	/* CLI_REQUIRED */
	const char	*as;	/* the name messages give, when not --name */
	int		(*fn)(const char *, void *);	/* CLI_FN */
};

/* A row's field, for a struct cli_opt: its offset and its size. */
#define CLI_FIELD(type, f)	offsetof(type, f), sizeof(((type *)0)->f)

/*
 * Rows of a table: name, commands, then the field f of the struct the
 * file names CLI_ROWS_OF where it writes the table.
 */
#define CLI_OPT_FLAG(n, c, f, v) \
	{ n, c, CLI_FLAG, CLI_FIELD(CLI_ROWS_OF, f), v, 0, 0, NULL, NULL }
#define CLI_OPT_ONE(n, c, f, v) \
	{ n, c, CLI_ONE, CLI_FIELD(CLI_ROWS_OF, f), v, 0, 0, NULL, NULL }
#define CLI_OPT_PTR(n, c, f, fl) \
	{ n, c, CLI_PTR, CLI_FIELD(CLI_ROWS_OF, f), 0, 0, fl, NULL, NULL }
#define CLI_OPT_TEXT(n, c, f, fl, as) \
	{ n, c, CLI_TEXT, CLI_FIELD(CLI_ROWS_OF, f), 0, 0, fl, as, NULL }
#define CLI_OPT_INT(n, c, f, lo, hi) \
	{ n, c, CLI_INT, CLI_FIELD(CLI_ROWS_OF, f), lo, hi, 0, NULL, NULL }
#define CLI_OPT_DURATION(n, c, f, lo, hi) \
	{ n, c, CLI_DURATION, CLI_FIELD(CLI_ROWS_OF, f), lo, hi, 0, NULL, \
	    NULL }
#define CLI_OPT_FN(n, c, fn)	{ n, c, CLI_FN, 0, 0, 0, 0, 0, NULL, fn }
/* --json, --limit N and --since WHEN, into the struct cli_list_opts f. */
#define CLI_OPT_LIST(c, f) \
	CLI_OPT_FLAG("json", c, f.json, 1), \
	CLI_OPT_INT("limit", c, f.limit, 1, LIST_LIMIT_MAX), \
	{ "since", c, CLI_SINCE, CLI_FIELD(CLI_ROWS_OF, f.since), 0, 0, 0, \
	    NULL, NULL }
/* A table's rows and their count, for a struct cli_edit. */
#define CLI_OPTIONS(a)	.opts = (a), .nopts = sizeof(a) / sizeof((a)[0])

/* Reads argv's options into a struct, by the rows of command cmd. */
int	cli_parse(int, char **, const struct cli_opt *, size_t, unsigned,
	    void *, int *, int);
/* The rows of a table, for cli_parse(). */
#define CLI_ROWS(a)	(a), sizeof(a) / sizeof((a)[0])

/*
 * One command that edits config.db, as a table: its options and operands
 * are read into a struct, checked, then written in one transaction (begin,
 * work, commit or roll back, close); on success a line on stdout says what
 * it did.
 */
struct cli_edit {
	const char		*name, *sub;	/* its words; name NULL: any */
	const struct cli_opt	*opts;		/* the entity's options */
	size_t			 nopts;
	unsigned		 cmd;		/* this command's bit in them */
	struct cli_opt		 operand;	/* the first: PTR or TEXT */
	int			 noperands;
	int			 change;	/* needs one not required */
	const char		*done;		/* "added": the line's verb */
	/* Each may be NULL but work; each gets the struct. */
	void		(*init)(void *);	/* defaults, before argv */
	int		(*check)(void *, char **);	/* the operands */
	int		(*work)(struct config *, void *);
	const char	*(*tenant)(const void *);	/* the line's tenant */
	int		(*said)(const void *);	/* printed its own: 1 */
	void		(*clear)(void *);
};

int	cli_edit(struct settings *, int, char **, const struct cli_edit *,
	    void *, size_t);

/* The commands. */
int	cmd_init(struct settings *, int, char **);
int	cmd_grants(struct settings *, int, char **);
int	cmd_edit(struct settings *, int, char **);
int	cmd_endpoint_secret(struct settings *, int, char **);
int	cmd_endpoint_show(struct settings *, int, char **);
int	cmd_list(struct settings *, int, char **);
int	cmd_sign(struct settings *, int, char **);
int	cmd_observe(struct settings *, int, char **);
int	cmd_status(struct settings *, int, char **);
int	cmd_list_state(struct settings *, int, char **);
int	cmd_attempts(struct settings *, int, char **);
int	cmd_requeue(struct settings *, int, char **);
int	cmd_destination_pause(struct settings *, int, char **);
int	cmd_reconcile(struct settings *, int, char **);
int	cmd_conflicts(struct settings *, int, char **);
int	cmd_resolve(struct settings *, int, char **);
int	cmd_prune(struct settings *, int, char **);
int	cmd_dispatch(struct settings *, int, char **);
int	cmd_poll(struct settings *, int, char **);
int	cmd_disorder(struct settings *, int, char **);
int	cmd_registrar_edit(struct settings *, int, char **);
int	cmd_registrar_serve(struct settings *, int, char **);

/* ---- registrars (cmd_registrar.c, hookbox.c) ---- */

/* Where the registrar service listens unless HOOKBOX_REGISTRAR says. */
#define REGISTRAR_SOCKET_DEFAULT	"/run/hookbox/registrar.sock"
#define REGISTRAR_ARGS_MAX		64	/* a request's arguments */

/*
 * Runs a job command (argv: its words, then its arguments) as the
 * registrar service does for cli_registrar: no other command, no -d.
 * Returns its exit code.
 */
int	cli_run_registrar(struct settings *, int, char **);
/*
 * Sends a job command (argv as above) to the registrar service at path,
 * prints its answer and returns its exit code.
 */
int	cli_registrar_forward(const char *, int, const char *const *);

/* ---- the read-outs' printing (cmd_list.c) ---- */

#define LIST_LIMIT_MAX	1000000

/* How a column shows its JSON value. */
enum cli_list_kind {
	CLI_LIST_TEXT = 0,	/* strings as they are; true/false as yes/no */
	CLI_LIST_NUMBER,	/* right-aligned */
	CLI_LIST_TIME	/* unix ms as "YYYY-MM-DD HH:MM:SSZ", UTC */
};

/* One column of a read-out's table: its JSON key, heading and width. */
struct cli_list_col {
	const char	*key;
	const char	*head;
	enum cli_list_kind	 kind;
	size_t		 max;	/* 0: as wide as its widest cell */
};

/* The options every read-out takes: --json, --limit N, --since WHEN. */
struct cli_list_opts {
	int	json;
	int	limit;
	int64_t	since;	/* unix ms; 0: all */
};

void	cli_list_time(int64_t, char *, size_t);
int	cli_list_print(cJSON *, const struct cli_list_col *, size_t, int, int);
int	cli_known_tenant(struct config *, const char *);
int	cli_known_destination(struct config *, const char *, const char *);

/* ---- job import (cmd_jobs.c) ---- */

#define IMPORT_BATCH_DEFAULT	1000	/* lines per transaction */

int	cmd_job_import(struct settings *, int, char **);
/*
 * What a job registered already differs in from j, the field
 * config_job_import() named: "exists already with attempt "a", not "b"".
 */
void	cli_job_conflict(struct config *, const struct config_job *,
	    const char *, char *, size_t);

#endif /* HB_CLI_H */
