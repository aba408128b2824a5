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

#include "access.h"
#include "text.h"
#include "util.h"

#include "cli.h"

const struct cmd	*cli_cmd;

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
print_usage(FILE *f, const char *lead, const struct cmd *c)
{
	fprintf(f, "%s hookbox [-d DIR] %s%s%s%s%s\n", lead, c->name,
	    c->sub != NULL ? " " : "", c->sub != NULL ? c->sub : "",
	    c->usage[0] != '\0' ? " " : "", c->usage);
}

int
usage_of(const struct cmd *c)
{
	print_usage(stderr, "usage:", c);
	return EXIT_USAGE;
}

int
usage(void)
{
	return usage_of(cli_cmd);
}

/* Exit code for a configuration status. */
int
config_exit(enum config_status s)
{
	return s == CONFIG_OK ? EXIT_OK : s == CONFIG_BUSY ? EXIT_TEMPFAIL :
	    EXIT_FAIL;
}

int
store_exit(enum store_status s)
{
	return s == STORE_OK ? EXIT_OK : s == STORE_BUSY ? EXIT_TEMPFAIL :
	    EXIT_FAIL;
}

/*
 * PostgreSQL: why a connection or its first statement failed, in the
 * words of libpq or the server (host, socket, role, the relation or
 * schema refused; never the password), where a status's sentence would
 * only say "database error".  One more connection, on a failure path
 * only: the server cannot be reached, or the role cannot do need.
 * Returns non-zero when it reported.
 */
static int
pg_explain(const struct settings *e, enum access_need need)
{
	char	why[512];

	if (access_probe(e->dir, e->busy_ms, need, why, sizeof(why)) ==
	    ACCESS_OK)
		return 0;
	cli_warn("%s: %s", e->shown, why);
	return 1;
}

int
cli_pg_unreachable(const struct settings *e)
{
	return pg_explain(e, ACCESS_CONNECT);
}

/* Reports a state.db failure; returns its exit code. */
int
store_fail(const struct settings *e, enum store_status s)
{
	if (s == STORE_OK || s == STORE_NOMEM || !cli_pg_unreachable(e))
		cli_warn("%s: %s", settings_state_name(e), store_strerror(s));
	return store_exit(s);
}

/* Reports a store_open() failure, with the store's reason. */
static int
store_open_fail(const struct settings *e, enum store_status s)
{
	if (s == STORE_NOMEM)
		return store_fail(e, s);
	cli_warn("%s: %s", e->pg ? e->shown : settings_state_name(e),
	    store_errmsg(NULL));
	return store_exit(s);
}

int
parse_int(const char *s, long long min, long long max, const char *what,
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
read_bounded(int fd, char *buf, size_t max)
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
 * Reads a secret from a file, or standard input for "-", into buf; one
 * trailing newline is dropped.  Returns its length, or -1 (reported).
 */
ssize_t
read_secret(const char *path, unsigned char *buf, size_t max)
{
	ssize_t	n;
	int	fd;

	if (strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		cli_warn("%s: %s", path, strerror(errno));
		return -1;
	}
	n = read_bounded(fd, (char *)buf, max);
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
open_config(struct settings *e, enum config_mode mode, struct config **cfg)
{
	enum config_status	rc;

	config_env = e;
	if ((rc = config_open(e->config_path, mode, e->busy_ms, cfg)) !=
	    CONFIG_OK) {
		if (rc == CONFIG_NOMEM || !pg_explain(e, ACCESS_CONFIG))
			cli_warn("%s: %s", settings_config_name(e),
			    config_strerror(rc));
		return config_exit(rc) == EXIT_OK ? EXIT_FAIL : config_exit(rc);
	}
	return EXIT_OK;
}

int
open_store(struct settings *e, int create, struct store **st)
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
	else if (config_env->pg)
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
config_done(enum config_status rc, const char *what,
    const char *const *why)
{
	if (rc == CONFIG_OK)
		return EXIT_OK;
	/* why by address: it is set by the call that is our first argument. */
	if (rc == CONFIG_INVALID && why != NULL && *why != NULL)
		cli_warn("%s: invalid %s", what, *why);
	else if (rc == CONFIG_DENIED)
		config_denied(what);
	else
		cli_warn("%s: %s", what, config_strerror(rc));
	return config_exit(rc);
}

/* Copies an argument into a bounded field, or fails loudly. */
int
set_field(char *dst, size_t len, const char *src, const char *what)
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
next_opt(int argc, char **argv, const struct option *opts)
{
	return getopt_long(argc, argv, "", opts, NULL);
}

/* Prints a JSON array and frees it. */
int
print_json(cJSON *arr)
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

/* Closes state.db after a read-out, then reports or prints its result. */
int
list_done(const struct settings *e, struct store *st, enum store_status src,
    cJSON *arr)
{
	store_close(st);
	if (src != STORE_OK)
		return store_fail(e, src);
	return print_json(arr);
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
	/* read_bounded() says -1 for both; only a failed read sets errno. */
	errno = 0;
	if ((n = read_bounded(fd, *text, max)) < 0) {
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
