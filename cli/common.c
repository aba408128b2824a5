/*
 * The helpers every command uses: messages, usage, exit codes, option
 * parsing, reading secrets, opening config.db and state.db.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "base/text.h"
#include "base/util.h"
#include "db/access.h"

#include "cli.h"

const struct cli_command	*cli_cmd;
const char			*cli_registrar;

/* The settings open_config() last opened with, for config_done(). */
static const struct settings	*config_env;

void
cli_warn(const char *fmt, ...)
{
	va_list	ap;

	fputs("hookbox: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* c's usage line to f, after lead ("usage:"). */
void
cli_print_usage(FILE *f, const char *lead, const struct cli_command *c)
{
	fprintf(f, "%s hookbox [-d DIR] %s%s%s%s%s\n", lead, c->name,
	    c->sub != NULL ? " " : "", c->sub != NULL ? c->sub : "",
	    c->usage[0] != '\0' ? " " : "", c->usage);
}

static int
usage_of(const struct cli_command *c)
{
	cli_print_usage(stderr, "usage:", c);
	return EXIT_USAGE;
}

int
cli_usage(void)
{
	return usage_of(cli_cmd);
}

/* Exit code for a configuration status. */
int
cli_config_exit(enum config_status s)
{
	return s == CONFIG_OK ? EXIT_OK : s == CONFIG_BUSY ? EXIT_TEMPFAIL :
	    EXIT_FAIL;
}

/* Exit code for a state.db status. */
static int
store_exit(enum store_status s)
{
	return s == STORE_OK ? EXIT_OK : s == STORE_BUSY ? EXIT_TEMPFAIL :
	    EXIT_FAIL;
}

/*
 * A server's location: why a connection or its first statement failed,
 * in the words of libpq or the server (host, socket, role, the relation
 * or schema refused; never the password), where a status's sentence
 * would only say "database error".  One more connection, on a failure
 * path only: the server cannot be reached, or the role cannot do need.
 * Returns non-zero when it reported; a directory's never does.
 */
static int
server_explain(const struct settings *e, enum access_need need)
{
	char	why[512];

	if (access_probe(e->dir, e->busy_ms, need, why, sizeof(why)) ==
	    ACCESS_OK)
		return 0;
	cli_warn("%s: %s", e->shown, why);
	return 1;
}

int
cli_server_unreachable(const struct settings *e)
{
	return server_explain(e, ACCESS_CONNECT);
}

/* Reports a state.db failure; returns its exit code. */
int
cli_store_fail(const struct settings *e, enum store_status s)
{
	if (s == STORE_OK || s == STORE_NOMEM || !cli_server_unreachable(e))
		cli_warn("%s: %s", settings_state_name(e), store_strerror(s));
	return store_exit(s);
}

/* Reports a store_open() failure, with the store's reason. */
static int
store_open_fail(const struct settings *e, enum store_status s)
{
	if (s == STORE_NOMEM)
		return cli_store_fail(e, s);
	cli_warn("%s: %s", settings_state_name(e), store_errmsg(NULL));
	return store_exit(s);
}

int
cli_parse_int(const char *s, long long min, long long max, const char *what,
    long long *out)
{
	const char	*err;

	*out = util_strtonum(s, min, max, &err);
	if (err != NULL) {
		cli_warn("%s: %s", what, err);
		return -1;
	}
	return 0;
}

/*
 * Reads all of fd into buf (at most max bytes).  Returns the length, or
 * -1 on error or when there is more than max.
 */
ssize_t
cli_read_bounded(int fd, char *buf, size_t max)
{
	size_t	used = 0;
	ssize_t	n;
	char	extra;

	while (used < max) {
		n = read(fd, buf + used, max - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return (ssize_t)used;
		used += (size_t)n;
	}
	while ((n = read(fd, &extra, 1)) < 0 && errno == EINTR)
		;
	return n == 0 ? (ssize_t)used : -1;
}

/*
 * Reads standard input, a request's body: at most HB_BODY_MAX_DEFAULT
 * bytes, into *body (free(), even on failure) and *len.  EXIT_OK, or
 * EXIT_FAIL reported.
 */
int
cli_read_body(char **body, size_t *len)
{
	ssize_t	n;

	*len = 0;
	if ((*body = malloc(HB_BODY_MAX_DEFAULT)) == NULL) {
		cli_warn("out of memory");
		return EXIT_FAIL;
	}
	if ((n = cli_read_bounded(STDIN_FILENO, *body,
	    HB_BODY_MAX_DEFAULT)) < 0) {
		cli_warn("standard input: unreadable or over %d bytes",
		    HB_BODY_MAX_DEFAULT);
		return EXIT_FAIL;
	}
	*len = (size_t)n;
	return EXIT_OK;
}

/*
 * Reads a secret from a file, or standard input for "-", into buf; one
 * trailing newline is dropped.  Returns its length, or -1 (reported).
 */
ssize_t
cli_read_secret(const char *path, unsigned char *buf, size_t max)
{
	ssize_t	n;
	int	fd;

	if (strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		cli_warn("%s: %s", path, strerror(errno));
		return -1;
	}
	n = cli_read_bounded(fd, (char *)buf, max);
	if (fd != STDIN_FILENO)
		close(fd);
	if (n < 0) {
		cli_warn("%s: unreadable, or longer than %zu bytes", path, max);
		return -1;
	}
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	if (n == 0) {
		cli_warn("%s: empty secret", path);
		return -1;
	}
	return n;
}

int
cli_open_config(struct settings *e, enum config_mode mode, struct config **cfg)
{
	enum config_status	rc;

	config_env = e;
	if ((rc = config_open(e->config_path, mode, e->busy_ms, cfg)) !=
	    CONFIG_OK) {
		if (rc == CONFIG_NOMEM || !server_explain(e, ACCESS_CONFIG))
			cli_warn("%s: %s", settings_config_name(e),
			    config_strerror(rc));
		return cli_config_exit(rc) == EXIT_OK ? EXIT_FAIL :
		    cli_config_exit(rc);
	}
	if (cli_registrar == NULL)
		return EXIT_OK;
	if ((rc = config_registrar_scope(*cfg, cli_registrar)) == CONFIG_OK)
		return EXIT_OK;
	if (rc == CONFIG_NOTFOUND)
		cli_warn("user %s may register no tenant's jobs: root names"
		    " a registrar with `hookbox registrar add --tenant T %s`",
		    cli_registrar, cli_registrar);
	else
		cli_warn("%s: %s", settings_config_name(e),
		    config_strerror(rc));
	config_close(*cfg);
	*cfg = NULL;
	return rc == CONFIG_NOTFOUND ? EXIT_FAIL : cli_config_exit(rc);
}

int
cli_open_store(struct settings *e, int create, struct store **st)
{
	struct store_opts	opts;
	enum store_status	rc;

	memset(&opts, 0, sizeof(opts));
	opts.busy_ms = e->busy_ms;
	opts.sync_normal = e->sync_normal;
	opts.create = create;
	if ((rc = store_open(e->state_path, &opts, st)) != STORE_OK)
		return store_open_fail(e, rc);
	return EXIT_OK;
}

/*
 * A write the configuration refused to this user or role (CONFIG_DENIED):
 * which file, and for whom, or which role.
 */
static void
config_denied(const char *what)
{
	struct passwd	*pw;
	uid_t		 uid = geteuid();

	if (config_env == NULL)
		cli_warn("%s: %s", what, config_strerror(CONFIG_DENIED));
	else if (config_env->server)
		cli_warn("%s: the PostgreSQL role of %s has no write permission"
		    " on the configuration (hookbox_config): it may not change"
		    " it", what, settings_config_name(config_env));
	else if ((pw = getpwuid(uid)) != NULL && pw->pw_name != NULL)
		cli_warn("%s: %s is read-only for user %s, who may not change"
		    " the configuration", what,
		    settings_config_name(config_env), pw->pw_name);
	else
		cli_warn("%s: %s is read-only for uid %lu, who may not change"
		    " the configuration", what,
		    settings_config_name(config_env), (unsigned long)uid);
}

/* Reports a configuration write's outcome. */
int
cli_config_done(enum config_status rc, const char *what,
    const char *const *why)
{
	if (rc == CONFIG_OK)
		return EXIT_OK;
	/* why by address: it is set by the call that is our first argument. */
	if (rc == CONFIG_INVALID && why != NULL && *why != NULL)
		cli_warn("%s: invalid %s", what, *why);
	else if (rc == CONFIG_DENIED && cli_registrar != NULL)
		cli_warn("%s: %s (registrar %s)", what, why != NULL &&
		    *why != NULL ? *why : "not the registrar's to change",
		    cli_registrar);
	else if (rc == CONFIG_DENIED)
		config_denied(what);
	else
		cli_warn("%s: %s", what, config_strerror(rc));
	return cli_config_exit(rc);
}

/* Copies an argument into a bounded field, or fails loudly. */
int
cli_set_field(char *dst, size_t len, const char *src, const char *what)
{
	if (strlen(src) >= len) {
		cli_warn("%s: too long (at most %zu bytes)", what, len - 1);
		return -1;
	}
	memcpy(dst, src, strlen(src) + 1);
	return 0;
}

/*
 * getopt_long over a subcommand's arguments (argv[0] is the subcommand).
 * Resets getopt's state for each use.
 */
int
cli_next_opt(int argc, char **argv, const struct option *opts)
{
	return getopt_long(argc, argv, "", opts, NULL);
}

/* Prints a JSON array and frees it. */
int
cli_print_json(cJSON *arr)
{
	char	*s;

	if ((s = cJSON_Print(arr)) == NULL) {
		cJSON_Delete(arr);
		cli_warn("out of memory");
		return EXIT_FAIL;
	}
	puts(s);
	cJSON_free(s);
	cJSON_Delete(arr);
	return EXIT_OK;
}

int
cli_read_file(const char *opt, const char *path, size_t max, char **text,
    size_t *len)
{
	char	 esc[PATH_MAX];
	ssize_t	 n;
	int	 fd, rc = EXIT_OK;

	*text = NULL;
	*len = 0;
	(void)text_escape(path, (size_t)-1, esc, sizeof(esc));
	if (strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		cli_warn("%s \"%s\": %s", opt, esc, strerror(errno));
		return EXIT_FAIL;
	}
	if ((*text = malloc(max + 1)) == NULL) {
		cli_warn("out of memory");
		rc = EXIT_FAIL;
		goto out;
	}
	/* cli_read_bounded() says -1 for both; only a failed read: errno. */
	errno = 0;
	if ((n = cli_read_bounded(fd, *text, max)) < 0) {
		if (errno != 0) {
			cli_warn("%s \"%s\": %s", opt, esc, strerror(errno));
			rc = EXIT_FAIL;
		} else {
			cli_warn("%s \"%s\": longer than %zu bytes", opt, esc,
			    max);
			rc = EXIT_USAGE;
		}
		goto out;
	}
	(*text)[n] = '\0';
	*len = (size_t)n;
out:
	if (fd != STDIN_FILENO)
		close(fd);
	if (rc != EXIT_OK) {
		free(*text);
		*text = NULL;
	}
	return rc;
}

/* ---- options as a table, and the config.db edits ------------------ */

/* getopt_long's value for row i: above every character it returns. */
#define OPT_VAL	0x100

/* How messages name option o: o->as, else "--" and its name. */
static const char *
opt_name(const struct cli_opt *o, char *buf, size_t len)
{
	if (o->as != NULL)
		return o->as;
	(void)snprintf(buf, len, "--%s", o->name);
	return buf;
}

/*
 * Fills o's field in args from arg (NULL for an option without one).
 * EXIT_OK, or EXIT_USAGE reported.
 */
static int
opt_fill(const struct cli_opt *opts, size_t n, const struct cli_opt *o,
    const char *arg, void *args)
{
	char		*f = (char *)args + o->off, name[64];
	long long	 v;
	int64_t		 d;
	size_t		 i;

	switch (o->arg) {
	case CLI_ONE:
		if (*(int *)f != -1 && *(int *)f != (int)o->val) {
			/* The pair's names, the one that says 1 first. */
			for (i = 0; i < n; i++)
				if (opts[i].arg == CLI_ONE &&
				    opts[i].off == o->off &&
				    opts[i].val != o->val)
					break;
			cli_warn("--%s and --%s: one or the other",
			    o->val ? o->name : opts[i].name,
			    o->val ? opts[i].name : o->name);
			return EXIT_USAGE;
		}
		/* FALLTHROUGH */
	case CLI_FLAG:
		*(int *)f = (int)o->val;
		return EXIT_OK;
	case CLI_PTR:
		*(const char **)f = arg;
		return EXIT_OK;
	case CLI_TEXT:
		return cli_set_field(f, o->len, arg, opt_name(o, name,
		    sizeof(name))) == 0 ? EXIT_OK : EXIT_USAGE;
	case CLI_INT:
		if (cli_parse_int(arg, o->val, o->max, opt_name(o, name,
		    sizeof(name)), &v) != 0)
			return EXIT_USAGE;
		if (o->len == sizeof(int))
			*(int *)f = (int)v;
		else
			*(int64_t *)f = v;
		return EXIT_OK;
	case CLI_SINCE:
		if (util_parse_since(arg, util_now_ms(), (int64_t *)f) != 0) {
			cli_warn("--since: %s: expected a duration (30m, 24h,"
			    " 7d) or a UTC date (YYYY-MM-DD or"
			    " YYYY-MM-DDTHH:MM:SSZ)", arg);
			return EXIT_USAGE;
		}
		return EXIT_OK;
	case CLI_DURATION:
		if (util_parse_duration(arg, &d) != 0 || d < o->val ||
		    d > o->max) {
			cli_warn("%s: %s: expected a duration, %llds to %llds"
			    " (90s, 30m, 24h, 3d)", opt_name(o, name,
			    sizeof(name)), arg, o->val, o->max);
			return EXIT_USAGE;
		}
		*(int64_t *)f = d;
		return EXIT_OK;
	case CLI_FN:
		return o->fn(arg, args) == 0 ? EXIT_OK : EXIT_USAGE;
	}
	return EXIT_USAGE;
}

/*
 * getopt_long over argv (argv[0] is the subcommand) against the rows of
 * opts that take command cmd, each filling its field in args; optind is
 * then the first operand, and noperands (unless -1) must follow.  *given
 * (unless NULL) counts the options given that are not CLI_REQUIRED.
 * EXIT_OK, or EXIT_USAGE reported (an unknown option, the operands: the
 * usage line).
 */
int
cli_parse(int argc, char **argv, const struct cli_opt *opts, size_t n,
    unsigned cmd, void *args, int *given, int noperands)
{
	struct option	lo[CLI_OPTS_MAX + 1];
	size_t		i, k = 0;
	int		ch, rc;

	if (given != NULL)
		*given = 0;
	memset(lo, 0, sizeof(lo));
	for (i = 0; i < n && k < CLI_OPTS_MAX; i++) {
		if ((opts[i].cmds & cmd) == 0)
			continue;
		lo[k].name = opts[i].name;
		lo[k].has_arg = opts[i].arg == CLI_FLAG ||
		    opts[i].arg == CLI_ONE ? no_argument : required_argument;
		lo[k++].val = OPT_VAL + (int)i;
	}
	while ((ch = cli_next_opt(argc, argv, lo)) != -1) {
		if (ch < OPT_VAL)
			return cli_usage();
		i = (size_t)(ch - OPT_VAL);
		if ((rc = opt_fill(opts, n, &opts[i], optarg, args)) !=
		    EXIT_OK)
			return rc;
		if ((opts[i].flags & CLI_REQUIRED) == 0 && given != NULL)
			(*given)++;
	}
	if (noperands != -1 && argc - optind != noperands)
		return cli_usage();
	return EXIT_OK;
}

/* Whether a required row of command cmd's was not given. */
static int
opt_missing(const struct cli_opt *opts, size_t n, unsigned cmd,
    const void *args)
{
	const char	*f;
	size_t		 i;

	for (i = 0; i < n; i++) {
		if ((opts[i].cmds & cmd) == 0 ||
		    (opts[i].flags & CLI_REQUIRED) == 0)
			continue;
		f = (const char *)args + opts[i].off;
		if (opts[i].arg == CLI_TEXT ? f[0] == '\0' :
		    *(const char *const *)f == NULL)
			return 1;
	}
	return 0;
}

/* Fills operand o's field in args from arg; -1 when too long (reported). */
static int
operand_fill(const struct cli_opt *o, const char *arg, void *args)
{
	char	*f = (char *)args + o->off;

	if (o->arg == CLI_TEXT)
		return cli_set_field(f, o->len, arg, o->name);
	*(const char **)f = arg;
	return 0;
}

/* Opens config.db for writing and starts its transaction. */
static int
edit_begin(struct settings *e, struct config **cfg, const char *what)
{
	int	rc;

	if ((rc = cli_open_config(e, CONFIG_WRITE, cfg)) != EXIT_OK)
		return rc;
	if ((rc = cli_config_done(config_begin(*cfg), what, NULL)) != EXIT_OK) {
		config_close(*cfg);
		*cfg = NULL;
	}
	return rc;
}

/* Commits cfg's transaction when rc is EXIT_OK, else rolls it back. */
static int
edit_finish(struct config *cfg, int rc, const char *what)
{
	if (rc == EXIT_OK)
		rc = cli_config_done(config_commit(cfg), what, NULL);
	if (rc != EXIT_OK)
		config_rollback(cfg);
	config_close(cfg);
	return rc;
}

/*
 * Runs edit c over argv into args (size bytes, the struct its rows
 * describe; wiped at the end, secrets and all): the options; the
 * operands, a missing required option or nothing to change being the
 * usage line; c->check; c->work inside one transaction; then the line
 * that says it was done.  Returns an exit code, reported.
 */
int
cli_edit(struct settings *e, int argc, char **argv, const struct cli_edit *c,
    void *args, size_t size)
{
	struct config	*cfg = NULL;
	const char	*what, *tenant;
	int		 rc, given;

	memset(args, 0, size);
	if (c->init != NULL)
		c->init(args);
	if ((rc = cli_parse(argc, argv, c->opts, c->nopts, c->cmd, args,
	    &given, c->noperands)) != EXIT_OK)
		goto out;
	if (opt_missing(c->opts, c->nopts, c->cmd, args) ||
	    (c->change && given == 0) ||
	    operand_fill(&c->operand, argv[optind], args) != 0) {
		rc = cli_usage();
		goto out;
	}
	what = argv[optind];
	if (c->check != NULL && (rc = c->check(args, argv + optind)) !=
	    EXIT_OK)
		goto out;
	if ((rc = edit_begin(e, &cfg, what)) != EXIT_OK)
		goto out;
	if ((rc = edit_finish(cfg, c->work(cfg, args), what)) != EXIT_OK ||
	    (c->said != NULL && c->said(args)) || c->done == NULL)
		goto out;
	tenant = c->tenant != NULL ? c->tenant(args) : NULL;
	printf("%s %s%s%s %s\n", cli_cmd->name, what, tenant != NULL ?
	    " of tenant " : "", tenant != NULL ? tenant : "", c->done);
out:
	if (c->clear != NULL)
		c->clear(args);
	sodium_memzero(args, size);
	return rc;
}
