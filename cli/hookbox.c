/*
 * hookbox: the operator's command-line tool.
 *
 * It parses arguments, reads secrets from files or standard input (never
 * from argv), calls the library and prints.  Exit codes (sysexits style):
 *   0  success
 *   1  operation refused or failed
 *   2  usage error
 *   75 temporarily unavailable (database busy); try again
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>
#include <sodium.h>

#include "accept.h"
#include "config_admin.h"
#include "hook.h"
#include "http.h"
#include "outbox.h"
#include "poller.h"
#include "settings.h"
#include "store.h"
#include "store_ops.h"
#include "store_outbox.h"
#include "super.h"
#include "tornado.h"
#include "util.h"

#define EXIT_OK		0
#define EXIT_FAIL	1
#define EXIT_USAGE	2
#define EXIT_TEMPFAIL	75

/*
 * Defaults of the commands' options, named once: the code and the help
 * table both use them.
 */
#define DEST_TIMEOUT_MS_DEFAULT		10000
#define DEST_ATTEMPTS_DEFAULT		10
#define POLL_LIMIT_DEFAULT		100
#define POLL_TIMEOUT_MS_DEFAULT		10000
#define LIST_LIMIT_DEFAULT		100
#define PRUNE_RECEIPTS_DAYS_DEFAULT	7
#define PRUNE_ACTIONS_DAYS_DEFAULT	90
#define RESOLVE_NOTE_DEFAULT		"resolved by an operator"

/* One command: its words, its function, its usage line and its help. */
struct cmd {
	const char	*name;
	const char	*sub;	/* NULL for single-word commands */
	int		(*fn)(struct settings *, int, char **);
	const char	*usage;
	const char	*help;	/* one line per option, with its default */
};

static const struct cmd *current;

static void warnx(const char *, ...) __attribute__((format(printf, 1, 2)));

static void
warnx(const char *fmt, ...)
{
	va_list	ap;

	fputs("hookbox: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* c's usage line to f, after lead ("usage:"). */
static void
print_usage(FILE *f, const char *lead, const struct cmd *c)
{
	fprintf(f, "%s hookbox [-d DIR] %s%s%s%s%s\n", lead, c->name,
	    c->sub != NULL ? " " : "", c->sub != NULL ? c->sub : "",
	    c->usage[0] != '\0' ? " " : "", c->usage);
}

static int
usage_of(const struct cmd *c)
{
	print_usage(stderr, "usage:", c);
	return EXIT_USAGE;
}

static int
usage(void)
{
	return usage_of(current);
}

/* Exit code for a configuration status. */
static int
config_exit(enum config_status s)
{
	return s == CONFIG_OK ? EXIT_OK : s == CONFIG_BUSY ? EXIT_TEMPFAIL :
	    EXIT_FAIL;
}

static int
store_exit(enum store_status s)
{
	return s == STORE_OK ? EXIT_OK : s == STORE_BUSY ? EXIT_TEMPFAIL :
	    EXIT_FAIL;
}

/* Reports a state.db failure; returns its exit code. */
static int
store_fail(const struct settings *e, enum store_status s)
{
	warnx("%s: %s", e->state_path, store_strerror(s));
	return store_exit(s);
}

static int
parse_int(const char *s, long long min, long long max, const char *what,
    long long *out)
{
	const char	*err;

	*out = util_strtonum(s, min, max, &err);
	if (err != NULL) {
		warnx("%s: %s", what, err);
		return -1;
	}
	return 0;
}

/*
 * Reads all of fd into buf (at most max bytes).  Returns the length, or
 * -1 on error or when there is more than max.
 */
static ssize_t
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
static ssize_t
read_secret(const char *path, unsigned char *buf, size_t max)
{
	ssize_t	n;
	int	fd;

	if (strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		warnx("%s: %s", path, strerror(errno));
		return -1;
	}
	n = read_bounded(fd, (char *)buf, max);
	if (fd != STDIN_FILENO)
		close(fd);
	if (n < 0) {
		warnx("%s: unreadable, or longer than %zu bytes", path, max);
		return -1;
	}
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	if (n == 0) {
		warnx("%s: empty secret", path);
		return -1;
	}
	return n;
}

static int
open_config(struct settings *e, enum config_mode mode, struct config **cfg)
{
	enum config_status	rc;

	if ((rc = config_open(e->config_path, mode, e->busy_ms, cfg)) !=
	    CONFIG_OK) {
		warnx("%s: %s", e->config_path, config_strerror(rc));
		return config_exit(rc) == EXIT_OK ? EXIT_FAIL : config_exit(rc);
	}
	return EXIT_OK;
}

static int
open_store(struct settings *e, int create, struct store **st)
{
	struct store_opts	opts;
	enum store_status	rc;

	memset(&opts, 0, sizeof(opts));
	opts.busy_ms = e->busy_ms;
	opts.sync_normal = e->sync_normal;
	opts.create = create;
	if ((rc = store_open(e->state_path, &opts, st)) != STORE_OK)
		return store_fail(e, rc);
	return EXIT_OK;
}

/* Reports a configuration write's outcome. */
static int
config_done(enum config_status rc, const char *what,
    const char *const *why)
{
	if (rc == CONFIG_OK)
		return EXIT_OK;
	/* why by address: it is set by the call that is our first argument. */
	if (rc == CONFIG_INVALID && why != NULL && *why != NULL)
		warnx("%s: invalid %s", what, *why);
	else
		warnx("%s: %s", what, config_strerror(rc));
	return config_exit(rc);
}

/* Copies an argument into a bounded field, or fails loudly. */
static int
set_field(char *dst, size_t len, const char *src, const char *what)
{
	if (strlen(src) >= len) {
		warnx("%s: too long (at most %zu bytes)", what, len - 1);
		return -1;
	}
	memcpy(dst, src, strlen(src) + 1);
	return 0;
}

/*
 * getopt_long over a subcommand's arguments (argv[0] is the subcommand).
 * Resets getopt's state for each use.
 */
static int
next_opt(int argc, char **argv, const struct option *opts)
{
	return getopt_long(argc, argv, "", opts, NULL);
}

/* ---- init --------------------------------------------------------- */

static int
cmd_init(struct settings *e, int argc, char **argv)
{
	struct store		*st = NULL;
	enum config_status	 crc;
	int			 rc;

	(void)argv;
	if (argc != 1)
		return usage();
	if (mkdir(e->dir, 0750) != 0 && errno != EEXIST) {
		warnx("%s: %s", e->dir, strerror(errno));
		return EXIT_FAIL;
	}
	crc = config_create(e->config_path);
	if (crc != CONFIG_OK && crc != CONFIG_EXISTS) {
		warnx("%s: %s", e->config_path, config_strerror(crc));
		return config_exit(crc);
	}
	if ((rc = open_store(e, 1, &st)) != EXIT_OK)
		return rc;
	store_close(st);
	printf("initialised %s\n", e->dir);
	return EXIT_OK;
}

/* ---- tenant ------------------------------------------------------- */

static int
cmd_tenant_add(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "inactive", no_argument, NULL, 'i' },
		{ "status-base", required_argument, NULL, 'b' },
		{ "api-key-file", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 }
	};
	struct config_tenant	 t;
	struct config		*cfg = NULL;
	unsigned char		 key[CONFIG_SECRET_MAX + 1];
	ssize_t			 keylen = 0;
	const char		*keyfile = NULL, *why = NULL;
	int			 ch, rc;

	memset(&t, 0, sizeof(t));
	t.active = 1;
	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'i':
			t.active = 0;
			break;
		case 'b':
			if (set_field(t.status_base, sizeof(t.status_base),
			    optarg, "--status-base") != 0)
				return EXIT_USAGE;
			break;
		case 'k':
			keyfile = optarg;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 ||
	    set_field(t.id, sizeof(t.id), argv[optind], "tenant") != 0)
		return usage();
	if (keyfile != NULL &&
	    (keylen = read_secret(keyfile, key, CONFIG_SECRET_MAX)) < 0)
		return EXIT_FAIL;
	if ((rc = open_config(e, CONFIG_WRITE, &cfg)) == EXIT_OK) {
		rc = config_done(config_tenant_add(cfg, &t, keylen > 0 ? key :
		    NULL, (size_t)keylen, &why), t.id, &why);
		config_close(cfg);
	}
	sodium_memzero(key, sizeof(key));
	return rc;
}

/* ---- endpoint ----------------------------------------------------- */

static int
parse_expiry(const char *s, int64_t *out)
{
	long long	v;

	if (parse_int(s, 1, INT64_MAX / 1000, "--expires", &v) != 0)
		return -1;
	*out = v;
	return 0;
}

static int
add_secret(struct config *cfg, const char *endpoint, const char *file,
    int64_t expires)
{
	unsigned char	 buf[CONFIG_SECRET_MAX + 1];
	ssize_t		 n;
	const char	*why = NULL;
	int		 rc;

	if ((n = read_secret(file, buf, CONFIG_SECRET_MAX)) < 0)
		return EXIT_FAIL;
	rc = config_done(config_secret_add(cfg, endpoint, buf, (size_t)n,
	    expires, &why), endpoint, &why);
	sodium_memzero(buf, sizeof(buf));
	return rc;
}

static int
cmd_endpoint_add(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tenant", required_argument, NULL, 't' },
		{ "kind", required_argument, NULL, 'k' },
		{ "auth", required_argument, NULL, 'a' },
		{ "header", required_argument, NULL, 'h' },
		{ "key-header", required_argument, NULL, 'h' },
		{ "tolerance", required_argument, NULL, 'T' },
		{ "secret-file", required_argument, NULL, 's' },
		{ "expires", required_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 }
	};
	struct config_endpoint	 ep;
	struct config		*cfg = NULL;
	const char		*secret = NULL, *why = NULL;
	long long		 v;
	int64_t			 expires = 0;
	int			 ch, rc;

	memset(&ep, 0, sizeof(ep));
	ep.kind = CONFIG_KIND_JOB;
	ep.auth = CONFIG_AUTH_HMAC;
	ep.tolerance = AUTH_TOLERANCE_DEFAULT;
	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 't':
			if (set_field(ep.tenant, sizeof(ep.tenant), optarg,
			    "--tenant") != 0)
				return EXIT_USAGE;
			break;
		case 'k':
			if (config_kind_parse(optarg, &ep.kind) != 0) {
				warnx("--kind: tornado-job or tornado-org");
				return EXIT_USAGE;
			}
			break;
		case 'a':
			if (config_auth_parse(optarg, &ep.auth) != 0) {
				warnx("--auth: hmac, key or standard");
				return EXIT_USAGE;
			}
			break;
		case 'h':
			if (set_field(ep.key_header, sizeof(ep.key_header),
			    optarg, "--header") != 0)
				return EXIT_USAGE;
			break;
		case 'T':
			if (parse_int(optarg, 1, 86400, "--tolerance", &v) != 0)
				return EXIT_USAGE;
			ep.tolerance = v;
			break;
		case 's':
			secret = optarg;
			break;
		case 'x':
			if (parse_expiry(optarg, &expires) != 0)
				return EXIT_USAGE;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 || ep.tenant[0] == '\0' || secret == NULL ||
	    set_field(ep.name, sizeof(ep.name), argv[optind], "endpoint") != 0)
		return usage();
	if (ep.auth == CONFIG_AUTH_KEY && ep.key_header[0] == '\0') {
		warnx("--auth key needs --header");
		return EXIT_USAGE;
	}
	if ((rc = open_config(e, CONFIG_WRITE, &cfg)) != EXIT_OK)
		return rc;
	/* The endpoint and its first secret commit together or not at all. */
	if ((rc = config_done(config_begin(cfg), ep.name, NULL)) == EXIT_OK &&
	    (rc = config_done(config_endpoint_add(cfg, &ep, &why), ep.name,
	    &why)) == EXIT_OK &&
	    (rc = add_secret(cfg, ep.name, secret, expires)) == EXIT_OK)
		rc = config_done(config_commit(cfg), ep.name, NULL);
	if (rc != EXIT_OK)
		config_rollback(cfg);
	config_close(cfg);
	return rc;
}

static int
cmd_endpoint_secret(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "secret-file", required_argument, NULL, 's' },
		{ "expires", required_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 }
	};
	struct config	*cfg = NULL;
	const char	*secret = NULL;
	int64_t		 expires = 0;
	int		 ch, rc;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 's':
			secret = optarg;
			break;
		case 'x':
			if (parse_expiry(optarg, &expires) != 0)
				return EXIT_USAGE;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 || secret == NULL)
		return usage();
	if ((rc = open_config(e, CONFIG_WRITE, &cfg)) != EXIT_OK)
		return rc;
	rc = add_secret(cfg, argv[optind], secret, expires);
	config_close(cfg);
	return rc;
}

/* ---- destination -------------------------------------------------- */

static int
cmd_destination_add(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tenant", required_argument, NULL, 't' },
		{ "url", required_argument, NULL, 'u' },
		{ "idempotent", no_argument, NULL, 'i' },
		{ "status-url", required_argument, NULL, 'S' },
		{ "secret-file", required_argument, NULL, 's' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "max-attempts", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 }
	};
	struct config_destination	 d;
	struct config			*cfg = NULL;
	unsigned char			 key[CONFIG_SECRET_MAX + 1];
	ssize_t				 keylen = 0;
	const char			*keyfile = NULL, *why = NULL;
	long long			 v;
	int				 ch, rc;

	memset(&d, 0, sizeof(d));
	d.timeout_ms = DEST_TIMEOUT_MS_DEFAULT;
	d.max_attempts = DEST_ATTEMPTS_DEFAULT;
	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 't':
			if (set_field(d.tenant, sizeof(d.tenant), optarg,
			    "--tenant") != 0)
				return EXIT_USAGE;
			break;
		case 'u':
			if (set_field(d.url, sizeof(d.url), optarg,
			    "--url") != 0)
				return EXIT_USAGE;
			break;
		case 'i':
			d.idempotent = 1;
			break;
		case 'S':
			if (set_field(d.status_url, sizeof(d.status_url),
			    optarg, "--status-url") != 0)
				return EXIT_USAGE;
			break;
		case 's':
			keyfile = optarg;
			break;
		case 'T':
			if (parse_int(optarg, 1, 600000, "--timeout-ms",
			    &v) != 0)
				return EXIT_USAGE;
			d.timeout_ms = (int)v;
			break;
		case 'm':
			if (parse_int(optarg, 1, 1000, "--max-attempts",
			    &v) != 0)
				return EXIT_USAGE;
			d.max_attempts = (int)v;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 || d.tenant[0] == '\0' || d.url[0] == '\0' ||
	    set_field(d.name, sizeof(d.name), argv[optind], "destination") != 0)
		return usage();
	if (keyfile != NULL &&
	    (keylen = read_secret(keyfile, key, CONFIG_SECRET_MAX)) < 0)
		return EXIT_FAIL;
	if ((rc = open_config(e, CONFIG_WRITE, &cfg)) == EXIT_OK) {
		rc = config_done(config_destination_add(cfg, &d,
		    keylen > 0 ? key : NULL, (size_t)keylen, &why), d.name,
		    &why);
		config_close(cfg);
	}
	sodium_memzero(key, sizeof(key));
	return rc;
}

/* ---- job ---------------------------------------------------------- */

static int
cmd_job_add(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tenant", required_argument, NULL, 't' },
		{ "attempt", required_argument, NULL, 'a' },
		{ "step", required_argument, NULL, 's' },
		{ "destination", required_argument, NULL, 'D' },
		{ "source-url", required_argument, NULL, 'u' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	struct config_job	 j;
	struct config		*cfg = NULL;
	const char		*why = NULL;
	int			 ch, rc;

	memset(&j, 0, sizeof(j));
	while ((ch = next_opt(argc, argv, opts)) != -1) {
		switch (ch) {
		case 't':
			rc = set_field(j.tenant, sizeof(j.tenant), optarg,
			    "--tenant");
			break;
		case 'a':
			rc = set_field(j.attempt, sizeof(j.attempt), optarg,
			    "--attempt");
			break;
		case 's':
			rc = set_field(j.step, sizeof(j.step), optarg,
			    "--step");
			break;
		case 'D':
			rc = set_field(j.destination, sizeof(j.destination),
			    optarg, "--destination");
			break;
		case 'u':
			rc = set_field(j.source_url, sizeof(j.source_url),
			    optarg, "--source-url");
			break;
		case 'o':
			rc = set_field(j.output, sizeof(j.output), optarg,
			    "--output");
			break;
		default:
			return usage();
		}
		if (rc != 0)
			return EXIT_USAGE;
	}
	if (argc - optind != 1 || j.tenant[0] == '\0' ||
	    j.attempt[0] == '\0' || j.step[0] == '\0' ||
	    j.destination[0] == '\0' ||
	    set_field(j.job_id, sizeof(j.job_id), argv[optind], "job") != 0)
		return usage();
	if ((rc = open_config(e, CONFIG_WRITE, &cfg)) != EXIT_OK)
		return rc;
	rc = config_done(config_job_add(cfg, &j, &why), j.job_id, &why);
	config_close(cfg);
	return rc;
}

/* ---- list and remove, for every table ----------------------------- */

static int
table_of(const char *name, enum config_table *t)
{
	static const char *const names[] = {
		[CONFIG_TENANTS] = "tenant",
		[CONFIG_ENDPOINTS] = "endpoint",
		[CONFIG_DESTINATIONS] = "destination",
		[CONFIG_JOBS] = "job",
	};
	size_t	i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0) {
			*t = (enum config_table)i;
			return 0;
		}
	return -1;
}

/* Prints a JSON array and frees it. */
static int
print_json(cJSON *arr)
{
	char	*s;

	if ((s = cJSON_Print(arr)) == NULL) {
		cJSON_Delete(arr);
		warnx("out of memory");
		return EXIT_FAIL;
	}
	puts(s);
	cJSON_free(s);
	cJSON_Delete(arr);
	return EXIT_OK;
}

/* Closes state.db after a read-out, then reports or prints its result. */
static int
list_done(const struct settings *e, struct store *st, enum store_status src,
    cJSON *arr)
{
	store_close(st);
	if (src != STORE_OK)
		return store_fail(e, src);
	return print_json(arr);
}

static int
cmd_list(struct settings *e, int argc, char **argv)
{
	struct config		*cfg = NULL;
	cJSON			*arr = NULL;
	enum config_table	 t;
	int			 rc;

	(void)argv;
	if (argc != 1 || table_of(current->name, &t) != 0)
		return usage();
	if ((rc = open_config(e, CONFIG_READ, &cfg)) != EXIT_OK)
		return rc;
	rc = config_done(config_list(cfg, t, &arr), current->name, NULL);
	config_close(cfg);
	if (rc != EXIT_OK)
		return rc;
	return print_json(arr);
}

static int
cmd_remove(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tenant", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	struct config		*cfg = NULL;
	enum config_table	 t;
	const char		*tenant = NULL;
	int			 ch, rc, scoped;

	if (table_of(current->name, &t) != 0)
		return usage();
	scoped = t == CONFIG_DESTINATIONS || t == CONFIG_JOBS;
	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 't':
			tenant = optarg;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 || (scoped != (tenant != NULL)))
		return usage();
	if ((rc = open_config(e, CONFIG_WRITE, &cfg)) != EXIT_OK)
		return rc;
	rc = config_done(scoped ?
	    config_remove(cfg, t, tenant, argv[optind]) :
	    config_remove(cfg, t, argv[optind], NULL), argv[optind], NULL);
	config_close(cfg);
	return rc;
}

/* ---- observe ------------------------------------------------------ */

static int
cmd_observe(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tenant", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	struct accept_req	 req;
	struct accept_res	 res;
	struct obs		 o;
	struct config		*cfg = NULL;
	struct store		*st = NULL;
	char			*body = NULL, out[1024];
	const char		*tenant = NULL;
	ssize_t			 len;
	enum tornado_err	 perr;
	int			 ch, rc;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 't':
			tenant = optarg;
			break;
		default:
			return usage();
		}
	if (argc != optind || tenant == NULL)
		return usage();
	if ((body = malloc(HB_BODY_MAX_DEFAULT)) == NULL) {
		warnx("out of memory");
		return EXIT_FAIL;
	}
	memset(&res, 0, sizeof(res));
	if ((len = read_bounded(STDIN_FILENO, body, HB_BODY_MAX_DEFAULT)) < 0) {
		warnx("standard input: unreadable or over %d bytes",
		    HB_BODY_MAX_DEFAULT);
		rc = EXIT_FAIL;
		goto out;
	}
	if ((perr = tornado_parse_status(body, (size_t)len, &o, res.why,
	    sizeof(res.why))) != TORNADO_OK) {
		res.result = perr == TORNADO_NOMEM ? HB_NOMEM : HB_MALFORMED;
		res.detail = res.why;
	} else {
		if ((rc = open_config(e, CONFIG_READ, &cfg)) != EXIT_OK ||
		    (rc = open_store(e, 0, &st)) != EXIT_OK)
			goto out;
		memset(&req, 0, sizeof(req));
		req.tenant = tenant;
		req.obs = &o;
		req.body = body;
		req.bodylen = (size_t)len;
		req.now_ms = util_now_ms();
		if (accept_observation(st, cfg, &req, &res) == HB_UNAVAILABLE)
			warnx("%s: %s", e->state_path, store_errmsg(st));
	}
	if (accept_res_json(&res, out, sizeof(out)) == 0)
		puts(out);
	rc = hb_result_is_ack(res.result) ? EXIT_OK :
	    res.result == HB_UNAVAILABLE ? EXIT_TEMPFAIL : EXIT_FAIL;
out:
	store_close(st);
	config_close(cfg);
	free(body);
	return rc;
}

/* ---- sign --------------------------------------------------------- */

static int
cmd_sign(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "endpoint", required_argument, NULL, 'e' },
		{ "timestamp", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	struct config_endpoint	 ep;
	struct config_secrets	 sec;
	struct config		*cfg = NULL;
	const char		*name = NULL, *hname;
	char			*body = NULL, sig[AUTH_HEADER_MAX], id[40];
	unsigned char		 rnd[12];
	ssize_t			 len;
	long long		 v;
	int64_t			 now = util_now(), t = now;
	int			 ch, rc;

	memset(&sec, 0, sizeof(sec));
	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'e':
			name = optarg;
			break;
		case 't':
			if (parse_int(optarg, 0, INT64_MAX / 1000,
			    "--timestamp", &v) != 0)
				return EXIT_USAGE;
			t = v;
			break;
		default:
			return usage();
		}
	if (argc != optind || name == NULL)
		return usage();
	if ((body = malloc(HB_BODY_MAX_DEFAULT)) == NULL) {
		warnx("out of memory");
		return EXIT_FAIL;
	}
	if ((len = read_bounded(STDIN_FILENO, body, HB_BODY_MAX_DEFAULT)) < 0) {
		warnx("standard input: unreadable or over %d bytes",
		    HB_BODY_MAX_DEFAULT);
		rc = EXIT_FAIL;
		goto out;
	}
	if ((rc = open_config(e, CONFIG_READ, &cfg)) != EXIT_OK)
		goto out;
	if ((rc = config_done(config_endpoint_get(cfg, name, &ep), name,
	    NULL)) != EXIT_OK ||
	    (rc = config_done(config_endpoint_secrets(cfg, name, now, &sec),
	    name, NULL)) != EXIT_OK)
		goto out;
	rc = EXIT_FAIL;
	switch (ep.auth) {
	case CONFIG_AUTH_KEY:
		warnx("%s: key endpoints keep only a hash; send the key in"
		    " %s", name, ep.key_header);
		goto out;
	case CONFIG_AUTH_HMAC:
		hname = ep.key_header[0] != '\0' ? ep.key_header :
		    HOOK_HMAC_HEADER;
		if (auth_sign_tsig(sec.s, sec.n, now, t,
		    (const unsigned char *)body, (size_t)len, sig,
		    sizeof(sig)) != 0) {
			warnx("%s: no active secret", name);
			goto out;
		}
		printf("%s: %s\n", hname, sig);
		break;
	case CONFIG_AUTH_STANDARD:
		randombytes_buf(rnd, sizeof(rnd));
		memcpy(id, "msg_", 4);
		sodium_bin2hex(id + 4, sizeof(id) - 4, rnd, sizeof(rnd));
		if (sec.n == 0 || auth_sign_stdwebhooks(sec.s[0].key,
		    sec.s[0].keylen, id, t, (const unsigned char *)body,
		    (size_t)len, sig, sizeof(sig)) != 0) {
			warnx("%s: no active secret that decodes", name);
			goto out;
		}
		printf("webhook-id: %s\nwebhook-timestamp: %lld\n"
		    "webhook-signature: %s\n", id, (long long)t, sig);
		break;
	}
	rc = EXIT_OK;
out:
	config_secrets_clear(&sec);
	config_close(cfg);
	free(body);
	return rc;
}

/* ---- status ------------------------------------------------------- */

static int
cmd_status(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	struct store_counts	 c;
	struct store		*st = NULL;
	enum store_status	 src;
	enum store_state	 i;
	int64_t			 age;
	int			 ch, json = 0, rc;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'j':
			json = 1;
			break;
		default:
			return usage();
		}
	if (argc != optind)
		return usage();
	if ((rc = open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_counts(st, &c);
	store_close(st);
	if (src != STORE_OK)
		return store_fail(e, src);
	age = store_counts_age(&c, util_now_ms());
	if (json) {
		printf("{\"outbox\":{");
		for (i = 0; i < STORE_STATE__N; i++)
			printf("%s\"%s\":%lld", i > 0 ? "," : "",
			    store_state_name(i), (long long)c.outbox[i]);
		printf("},\"conflicts_open\":%lld,\"oldest_pending_age_s\":"
		    "%lld}\n", (long long)c.conflicts_open, (long long)age);
	} else {
		printf("outbox:");
		for (i = 0; i < STORE_STATE__N; i++)
			printf("%s %lld %s", i > 0 ? "," : "",
			    (long long)c.outbox[i], store_state_name(i));
		printf("\nopen conflicts: %lld\noldest pending: %lld s\n",
		    (long long)c.conflicts_open, (long long)age);
	}
	return EXIT_OK;
}

/* ---- dispatch ------------------------------------------------------ */

/* dispatch --once also waits for what falls due within this. */
#define ONCE_HORIZON_MS	1000


static volatile sig_atomic_t	stop_requested;

static void
on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void
sleep_ms(int64_t ms)
{
	struct timespec	ts;

	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);	/* a signal cuts it short: fine */
}

static int
env_ms(const char *name, int64_t *out)
{
	const char	*s, *err;
	long long	 v;

	if ((s = getenv(name)) == NULL)
		return 0;
	v = util_strtonum(s, 1, INT64_MAX / 4, &err);
	if (err != NULL) {
		warnx("%s: %s", name, err);
		return -1;
	}
	*out = v;
	return 0;
}

/*
 * A dispatcher's connections, opened again when a file is no longer the
 * one at its path (a restored backup, a removed state.db): a long-running
 * worker must deliver from, and record into, the files operators see.
 */
struct dispatcher {
	struct config	*cfg;
	struct store	*st;
	struct outbox	*ob;
};

static void
dispatcher_close(struct dispatcher *d)
{
	outbox_free(d->ob);
	store_close(d->st);
	config_close(d->cfg);
	memset(d, 0, sizeof(*d));
}

static int
dispatcher_open(struct settings *e, const struct outbox_opts *opts,
    struct dispatcher *d)
{
	int	rc;

	if (d->ob != NULL && store_check_file(d->st) == STORE_OK &&
	    config_same_file(d->cfg))
		return EXIT_OK;
	dispatcher_close(d);
	if ((rc = open_config(e, CONFIG_READ, &d->cfg)) != EXIT_OK ||
	    (rc = open_store(e, 0, &d->st)) != EXIT_OK)
		goto fail;
	if ((d->ob = outbox_new(d->st, d->cfg, opts)) == NULL) {
		warnx("out of memory");
		rc = EXIT_FAIL;
		goto fail;
	}
	return EXIT_OK;
fail:
	dispatcher_close(d);
	return rc;
}

/* One dispatcher worker: its own connections, its own lease owner id. */
static int
dispatch_worker(struct settings *e, int once)
{
	struct outbox_opts	 opts;
	struct dispatcher	 d;
	enum outbox_status	 s;
	char			 host[64], owner[HB_ID_MAX + 1];
	int64_t			 wait;
	int			 rc;

	memset(&d, 0, sizeof(d));
	memset(&opts, 0, sizeof(opts));
	if (env_ms("HOOKBOX_BACKOFF_MS", &opts.backoff_base_ms) != 0 ||
	    env_ms("HOOKBOX_BACKOFF_MAX_MS", &opts.backoff_max_ms) != 0 ||
	    env_ms("HOOKBOX_LEASE_MARGIN_MS", &opts.lease_margin_ms) != 0 ||
	    env_ms("HOOKBOX_RECHECK_MS", &opts.recheck_ms) != 0)
		return EXIT_USAGE;
	if (gethostname(host, sizeof(host)) != 0)
		memcpy(host, "localhost", sizeof("localhost"));
	host[sizeof(host) - 1] = '\0';
	(void)snprintf(owner, sizeof(owner), "%s:%ld", host, (long)getpid());
	opts.owner = owner;
	rc = EXIT_OK;
	while (!stop_requested) {
		if ((rc = dispatcher_open(e, &opts, &d)) != EXIT_OK) {
			if (once)
				break;
			sleep_ms(1000);
			continue;
		}
		s = outbox_step(d.ob);
		if (s == OUTBOX_WORKED)
			continue;
		if (s == OUTBOX_IDLE) {
			/* --once: done when nothing is due within a second. */
			wait = outbox_idle_ms(d.ob, once ? ONCE_HORIZON_MS :
			    250);
			if (once && wait >= ONCE_HORIZON_MS)
				break;
			sleep_ms(wait > 0 ? wait : 1);
			continue;
		}
		warnx("%s: %s", e->state_path, s == OUTBOX_BUSY ?
		    "busy" : store_errmsg(d.st));
		if (once) {
			rc = s == OUTBOX_BUSY ? EXIT_TEMPFAIL : EXIT_FAIL;
			break;
		}
		sleep_ms(s == OUTBOX_BUSY ? 50 : 1000);
	}
	if (stop_requested && rc != EXIT_OK && !once)
		rc = EXIT_OK;
	dispatcher_close(&d);
	return rc;
}

/* What each of dispatch --workers N gets: the fork's copy. */
struct dispatch_job {
	struct settings	*e;
	int		 once;
};

static int
dispatch_child(void *arg)
{
	const struct dispatch_job	*j = arg;

	return dispatch_worker(j->e, j->once);
}

static int
cmd_dispatch(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "once", no_argument, NULL, 'o' },
		{ "workers", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 }
	};
	struct sigaction	 sa;
	struct super_opts	 so;
	struct dispatch_job	 j;
	long long		 workers = 1;
	int			 ch, once = 0;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'o':
			once = 1;
			break;
		case 'w':
			if (parse_int(optarg, 1, SUPER_WORKERS_MAX, "--workers",
			    &workers) != 0)
				return EXIT_USAGE;
			break;
		default:
			return usage();
		}
	if (argc != optind)
		return usage();
	if (http_global_init() != 0) {
		warnx("libcurl failed to initialise");
		return EXIT_FAIL;
	}
	/* Every batch allocates and frees much the same memory. */
	util_keep_heap();
	/*
	 * SIGTERM: finish the batch in flight, record it, then leave.  With
	 * --workers the supervisor takes the signal and passes it on to each
	 * worker, which starts with this handler (super.h).
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* One line at start-up: which build serves which directory. */
	fprintf(stderr, "hookbox %s: dispatching from %s (state.db,"
	    " config.db), %lld worker(s)%s\n", HB_VERSION, e->dir, workers,
	    once ? ", once" : "");
	if (workers == 1)
		return dispatch_worker(e, once);
	/*
	 * Run to completion, not respawned: a worker left under init would
	 * go on claiming and sending beside the dispatcher started next, so
	 * each dies with the supervisor.  The exit status is the first
	 * failing worker's.
	 */
	memset(&so, 0, sizeof(so));
	so.name = "hookbox";
	so.workers = (int)workers;
	so.respawn = 0;
	j.e = e;
	j.once = once;
	return super_run(&so, dispatch_child, &j);
}

/* ---- poll ---------------------------------------------------------- */

static void
poll_report(void *arg, const struct poll_report *r)
{
	char	out[1024];

	(void)arg;
	if (r->res != NULL && accept_res_json(r->res, out, sizeof(out)) == 0)
		printf("%s\t%s\t%s\n", r->tenant, r->job_id, out);
	else
		printf("%s\t%s\t{\"error\":\"%s\"}\n", r->tenant, r->job_id,
		    r->error != NULL ? r->error : "unknown");
}

static int
cmd_poll(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "limit", required_argument, NULL, 'l' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 }
	};
	struct poll_stats	 ps;
	struct config		*cfg = NULL;
	struct store		*st = NULL;
	struct http		*http = NULL;
	enum store_status	 src;
	long long		 limit = POLL_LIMIT_DEFAULT;
	long long		 timeout = POLL_TIMEOUT_MS_DEFAULT;
	int			 ch, rc;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'l':
			if (parse_int(optarg, 1, 100000, "--limit", &limit) != 0)
				return EXIT_USAGE;
			break;
		case 'T':
			if (parse_int(optarg, 1, 600000, "--timeout-ms",
			    &timeout) != 0)
				return EXIT_USAGE;
			break;
		default:
			return usage();
		}
	if (argc != optind)
		return usage();
	if (http_global_init() != 0 || (http = http_new()) == NULL) {
		warnx("libcurl failed to initialise");
		return EXIT_FAIL;
	}
	if ((rc = open_config(e, CONFIG_READ, &cfg)) != EXIT_OK ||
	    (rc = open_store(e, 0, &st)) != EXIT_OK)
		goto out;
	src = poller_run(st, cfg, http, (int)limit, (long)timeout, poll_report,
	    NULL, &ps);
	fprintf(stderr, "hookbox: polled %d: %d answered, %d failed,"
	    " %d unavailable\n", ps.asked, ps.answered, ps.failed,
	    ps.unavailable);
	if (src != STORE_OK)
		rc = store_fail(e, src);
	else
		rc = ps.unavailable > 0 ? EXIT_TEMPFAIL : EXIT_OK;
out:
	http_free(http);
	store_close(st);
	config_close(cfg);
	return rc;
}

/* ---- operator read-outs and moves ---------------------------------- */

static int
cmd_list_state(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 }
	};
	struct store		*st = NULL;
	cJSON			*arr = NULL;
	enum store_status	 src;
	enum store_state	 state;
	const char		*name = NULL;
	long long		 limit = LIST_LIMIT_DEFAULT;
	int			 ch, rc;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 's':
			name = optarg;
			break;
		case 'l':
			if (parse_int(optarg, 1, 1000000, "--limit",
			    &limit) != 0)
				return EXIT_USAGE;
			break;
		default:
			return usage();
		}
	if (argc != optind || name == NULL)
		return usage();
	if (store_state_parse(name, &state) != 0) {
		warnx("--state: pending, leased, delivered, dead or unknown");
		return EXIT_USAGE;
	}
	if ((rc = open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_outbox_list(st, state, (int)limit, &arr);
	return list_done(e, st, src, arr);
}

static int
cmd_attempts(struct settings *e, int argc, char **argv)
{
	struct store		*st = NULL;
	cJSON			*arr = NULL;
	enum store_status	 src;
	int			 rc;

	if (argc != 2)
		return usage();
	if ((rc = open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_attempts_list(st, argv[1], &arr);
	return list_done(e, st, src, arr);
}

/* Applies one operator move to an action; 1 when it was not applicable. */
static int
move(struct settings *e, const char *action, enum store_move m,
    const char *note, const char *from)
{
	struct store		*st = NULL;
	enum store_status	 src;
	int			 changed, rc;

	if ((rc = open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_outbox_move(st, action, m, util_now_ms(), 0, note,
	    &changed);
	store_close(st);
	if (src != STORE_OK)
		return store_fail(e, src);
	if (!changed) {
		warnx("%s: no such action in state %s", action, from);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int
cmd_requeue(struct settings *e, int argc, char **argv)
{
	if (argc != 2)
		return usage();
	return move(e, argv[1], STORE_MOVE_REQUEUE, "requeued by an operator",
	    "dead or unknown");
}

static int
cmd_reconcile(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "delivered", no_argument, NULL, 'd' },
		{ "resend", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 }
	};
	int	ch, how = 0;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'd':
		case 'r':
			if (how != 0)
				return usage();
			how = ch;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 || how == 0)
		return usage();
	if (how == 'd')
		return move(e, argv[optind], STORE_MOVE_DELIVERED,
		    "reconciled by an operator: delivered", "unknown or dead");
	return move(e, argv[optind], STORE_MOVE_RESEND,
	    "reconciled by an operator: resend", "unknown");
}

static int
cmd_conflicts(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 }
	};
	struct store		*st = NULL;
	cJSON			*arr = NULL;
	enum store_status	 src;
	int			 ch, all = 0, rc;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'a':
			all = 1;
			break;
		default:
			return usage();
		}
	if (argc != optind)
		return usage();
	if ((rc = open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_conflicts_list(st, all, &arr);
	return list_done(e, st, src, arr);
}

static int
cmd_resolve(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "note", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 }
	};
	struct store		*st = NULL;
	enum store_status	 src;
	const char		*note = RESOLVE_NOTE_DEFAULT;
	long long		 id;
	int			 ch, changed, rc;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'n':
			if (!util_valid_text(optarg, HB_TEXT_MAX)) {
				warnx("--note: too long or not UTF-8");
				return EXIT_USAGE;
			}
			note = optarg;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 ||
	    parse_int(argv[optind], 1, INT64_MAX, "ID", &id) != 0)
		return usage();
	if ((rc = open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_conflict_resolve(st, id, note, util_now_ms(), &changed);
	store_close(st);
	if (src != STORE_OK)
		return store_fail(e, src);
	if (!changed) {
		warnx("conflict %lld: not found or already resolved", id);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int
cmd_prune(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "receipts-days", required_argument, NULL, 'r' },
		{ "actions-days", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 }
	};
	struct store_pruned	 p;
	struct store		*st = NULL;
	enum store_status	 src;
	long long		 rdays = PRUNE_RECEIPTS_DAYS_DEFAULT;
	long long		 adays = PRUNE_ACTIONS_DAYS_DEFAULT;
	int64_t			 now = util_now_ms(), day = 86400000;
	int			 ch, rc;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'r':
			if (parse_int(optarg, 0, 36500, "--receipts-days",
			    &rdays) != 0)
				return EXIT_USAGE;
			break;
		case 'a':
			if (parse_int(optarg, 1, 36500, "--actions-days",
			    &adays) != 0)
				return EXIT_USAGE;
			break;
		default:
			return usage();
		}
	if (argc != optind)
		return usage();
	if ((rc = open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_prune(st, now - rdays * day, now - adays * day, &p);
	store_close(st);
	if (src != STORE_OK)
		return store_fail(e, src);
	printf("pruned %lld receipts, %lld delivered actions\n",
	    (long long)p.receipts, (long long)p.actions);
	return EXIT_OK;
}

/* ---- dispatch table and main -------------------------------------- */

/*
 * Every command, its usage and its help: the one place that says what a
 * command takes.  A help line is "  OPTION  what it does (default X)";
 * the defaults come from the constants the commands use.
 */
static const struct cmd cmds[] = {
	{ "init", NULL, cmd_init, "",
	    "" },
	{ "tenant", "add", cmd_tenant_add,
	    "[--inactive] [--status-base URL] [--api-key-file FILE|-] ID",
	    "  --inactive             add the tenant inactive (default active)\n"
	    "  --status-base URL      base of the provider's status API, for"
	    " poll (default none)\n"
	    "  --api-key-file FILE|-  the status API's key, from a file or"
	    " standard input\n"
	    "                         (default none)\n" },
	{ "tenant", "list", cmd_list, "",
	    "" },
	{ "tenant", "remove", cmd_remove, "ID",
	    "" },
	{ "endpoint", "add", cmd_endpoint_add,
	    "--tenant T [--kind tornado-job|tornado-org]\n"
	    "       [--auth hmac|key|standard] [--header H]"
	    " [--tolerance S]\n"
	    "       --secret-file FILE|- [--expires UNIXTIME] NAME",
	    "  --tenant T             the tenant the endpoint belongs to"
	    " (required)\n"
	    "  --kind K               tornado-job or tornado-org"
	    " (default tornado-job)\n"
	    "  --auth A               hmac, key or standard (default hmac)\n"
	    "  --header H             the key's header (required with --auth"
	    " key); for hmac,\n"
	    "                         the signature's (default "
	    HOOK_HMAC_HEADER ")\n"
	    "  --key-header H         the same as --header\n"
	    "  --tolerance S          timestamp tolerance in seconds, 1..86400"
	    " (default " HB_STR(AUTH_TOLERANCE_DEFAULT) ")\n"
	    "  --secret-file FILE|-   the first secret, from a file or standard"
	    " input (required)\n"
	    "  --expires UNIXTIME     when the secret stops being accepted"
	    " (default never)\n" },
	{ "endpoint", "secret", cmd_endpoint_secret,
	    "--secret-file FILE|- [--expires UNIXTIME] NAME",
	    "  --secret-file FILE|-   the new secret, from a file or standard"
	    " input (required)\n"
	    "  --expires UNIXTIME     when it stops being accepted"
	    " (default never)\n" },
	{ "endpoint", "list", cmd_list, "",
	    "" },
	{ "endpoint", "remove", cmd_remove, "NAME",
	    "" },
	{ "destination", "add", cmd_destination_add,
	    "--tenant T --url URL [--idempotent] [--status-url URL]\n"
	    "       [--secret-file FILE|-] [--timeout-ms N]"
	    " [--max-attempts N] NAME",
	    "  --tenant T             the tenant it belongs to (required)\n"
	    "  --url URL              where actions are sent, http or https"
	    " (required)\n"
	    "  --idempotent           it honours Idempotency-Key, so a"
	    " delivery may be resent\n"
	    "                         (default not)\n"
	    "  --status-url URL       where to ask an unknown delivery's"
	    " outcome (default none)\n"
	    "  --secret-file FILE|-   the signing secret for deliveries, from"
	    " a file or\n"
	    "                         standard input (default none)\n"
	    "  --timeout-ms N         per-request timeout, 1..600000 (default "
	    HB_STR(DEST_TIMEOUT_MS_DEFAULT) ")\n"
	    "  --max-attempts N       attempts before dead, 1..1000 (default "
	    HB_STR(DEST_ATTEMPTS_DEFAULT) ")\n" },
	{ "destination", "list", cmd_list, "",
	    "" },
	{ "destination", "remove", cmd_remove, "--tenant T NAME",
	    "  --tenant T             the tenant it belongs to (required)\n" },
	{ "job", "add", cmd_job_add,
	    "--tenant T --attempt A --step S --destination D\n"
	    "       [--source-url URL] [--output JSON] JOB_ID",
	    "  --tenant T             the tenant that owns the job (required)\n"
	    "  --attempt A            the attempt id (required)\n"
	    "  --step S               the step to create when it completes"
	    " (required)\n"
	    "  --destination D        where that step's action goes"
	    " (required)\n"
	    "  --source-url URL       carried in the action (default none)\n"
	    "  --output JSON          carried in the action (default none)\n" },
	{ "job", "list", cmd_list, "",
	    "" },
	{ "job", "remove", cmd_remove, "--tenant T JOB_ID",
	    "  --tenant T             the tenant that owns the job"
	    " (required)\n" },
	{ "observe", NULL, cmd_observe, "--tenant T < status.json",
	    "  --tenant T             the tenant the document is for"
	    " (required)\n" },
	{ "sign", NULL, cmd_sign,
	    "--endpoint E [--timestamp UNIXTIME] < body",
	    "  --endpoint E           the endpoint whose secret signs"
	    " (required)\n"
	    "  --timestamp UNIXTIME   the time signed (default now)\n" },
	{ "status", NULL, cmd_status, "[--json]",
	    "  --json                 one JSON object (default text)\n" },
	{ "dispatch", NULL, cmd_dispatch, "[--once] [--workers N]",
	    "  --once                 deliver what is due within a second,"
	    " then exit\n"
	    "                         (default run until SIGTERM)\n"
	    "  --workers N            worker processes, 1.."
	    HB_STR(SUPER_WORKERS_MAX) " (default 1)\n" },
	{ "poll", NULL, cmd_poll, "[--limit N] [--timeout-ms N]",
	    "  --limit N              jobs asked about, 1..100000 (default "
	    HB_STR(POLL_LIMIT_DEFAULT) ")\n"
	    "  --timeout-ms N         per-request timeout, 1..600000 (default "
	    HB_STR(POLL_TIMEOUT_MS_DEFAULT) ")\n" },
	{ "list", NULL, cmd_list_state,
	    "--state pending|leased|delivered|dead|unknown [--limit N]",
	    "  --state S              pending, leased, delivered, dead or"
	    " unknown (required)\n"
	    "  --limit N              rows, 1..1000000 (default "
	    HB_STR(LIST_LIMIT_DEFAULT) ")\n" },
	{ "attempts", NULL, cmd_attempts, "ACTION",
	    "" },
	{ "requeue", NULL, cmd_requeue, "ACTION",
	    "" },
	{ "reconcile", NULL, cmd_reconcile, "--delivered|--resend ACTION",
	    "  --delivered            the action did arrive: mark it"
	    " delivered\n"
	    "  --resend               it did not: send it again\n" },
	{ "conflicts", NULL, cmd_conflicts, "[--all]",
	    "  --all                  resolved ones too (default open"
	    " only)\n" },
	{ "resolve", NULL, cmd_resolve, "[--note TEXT] ID",
	    "  --note TEXT            recorded with it (default \""
	    RESOLVE_NOTE_DEFAULT "\")\n" },
	{ "prune", NULL, cmd_prune,
	    "[--receipts-days N] [--actions-days N]",
	    "  --receipts-days N      keep receipts this many days, 0..36500"
	    " (default " HB_STR(PRUNE_RECEIPTS_DAYS_DEFAULT) ")\n"
	    "  --actions-days N       keep delivered actions this many days,"
	    " 1..36500\n"
	    "                         (default " HB_STR(PRUNE_ACTIONS_DAYS_DEFAULT)
	    ")\n" },
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

/* The lines every command's help ends with. */
#define COMMON_HELP \
	"  -d DIR                 the data directory, before or after the" \
	" command\n" \
	"                         (default $HOOKBOX_DIR)\n" \
	"  -h, --help             this help\n"

static void
print_version(void)
{
	printf("hookbox %s\n", HB_VERSION);
}

/* The command list; to f, as help (stdout) or as a usage error (stderr). */
static void
print_main(FILE *f)
{
	const char	*prev = "";
	size_t		 i;

	fputs("usage: hookbox [-d DIR] COMMAND [ARGS]\n"
	    "       hookbox help [COMMAND]\n"
	    "       hookbox --version\n\ncommands:\n", f);
	/* A group's commands are adjacent in the table: one line each. */
	for (i = 0; i < NCMDS; i++) {
		if (cmds[i].sub == NULL)
			fprintf(f, "  %s\n", cmds[i].name);
		else if (strcmp(cmds[i].name, prev) != 0)
			fprintf(f, "  %s {%s", cmds[i].name, cmds[i].sub);
		else
			fprintf(f, "|%s", cmds[i].sub);
		if (cmds[i].sub != NULL && (i + 1 == NCMDS ||
		    strcmp(cmds[i + 1].name, cmds[i].name) != 0))
			fputs("}\n", f);
		prev = cmds[i].name;
	}
	fputs("\nDIR (or $HOOKBOX_DIR) holds state.db and config.db; -d may"
	    " also follow\nthe command.  `hookbox help COMMAND` or"
	    " `hookbox COMMAND --help` shows its\noptions and defaults.\n"
	    "Exit codes: 0 success, 1 refused or failed, 2 usage,"
	    " 75 temporarily\nunavailable.\n", f);
}

static int
main_usage(void)
{
	print_main(stderr);
	return EXIT_USAGE;
}

/* c's help: its usage, then every option with its default, to stdout. */
static int
cmd_help(const struct cmd *c)
{
	print_usage(stdout, "usage:", c);
	printf("\noptions:\n%s%s", c->help, COMMON_HELP);
	return EXIT_OK;
}

/* Non-zero when name is the first word of two-word commands. */
static int
is_group(const char *name)
{
	size_t	i;

	for (i = 0; i < NCMDS; i++)
		if (cmds[i].sub != NULL && strcmp(cmds[i].name, name) == 0)
			return 1;
	return 0;
}

/* The usage of every command of group name, to f. */
static void
group_usage(FILE *f, const char *name)
{
	size_t	i;
	int	first = 1;

	for (i = 0; i < NCMDS; i++) {
		if (cmds[i].sub == NULL || strcmp(cmds[i].name, name) != 0)
			continue;
		print_usage(f, first ? "usage:" : "      ", &cmds[i]);
		first = 0;
	}
	fprintf(f, "\n`hookbox %s COMMAND --help` shows its options.\n", name);
}

/*
 * The command that argv's first words name (argv[0], and argv[1] for a
 * two-word command), or NULL; *words is how many it took.
 */
static const struct cmd *
find_cmd(int argc, char **argv, int *words)
{
	size_t	i;

	for (i = 0; i < NCMDS; i++) {
		if (strcmp(argv[0], cmds[i].name) != 0)
			continue;
		*words = cmds[i].sub != NULL ? 2 : 1;
		if (*words == 2 && (argc < 2 ||
		    strcmp(argv[1], cmds[i].sub) != 0))
			continue;
		return &cmds[i];
	}
	return NULL;
}

/* Reports words that name no command; the usage error's exit code. */
static int
unknown(int argc, char **argv)
{
	warnx("unknown command: %s%s%s", argv[0], argc > 1 ? " " : "",
	    argc > 1 ? argv[1] : "");
	if (is_group(argv[0])) {
		group_usage(stderr, argv[0]);
		return EXIT_USAGE;
	}
	return main_usage();
}

/* hookbox help [TOPIC...]: help to stdout, or an unknown topic. */
static int
help(int argc, char **argv)
{
	const struct cmd	*c;
	int			 words;

	if (argc == 0 || strcmp(argv[0], "help") == 0 ||
	    strcmp(argv[0], "version") == 0) {
		print_main(stdout);
		return EXIT_OK;
	}
	if ((c = find_cmd(argc, argv, &words)) != NULL && argc == words)
		return cmd_help(c);
	if (argc == 1 && is_group(argv[0])) {
		group_usage(stdout, argv[0]);
		return EXIT_OK;
	}
	return unknown(argc, argv);
}

/*
 * Takes -d DIR (or -dDIR) out of a command's arguments (argv[0] is the
 * command's last word, kept), wherever it stands before "--", into *dir:
 * so -d may follow the command as well as precede it, and the last wins.
 * Returns the new argc, or -1 when -d lacks its value.
 * XXX an option value that is itself "-d..." must be written --opt=-d...
 */
static int
take_dir(int argc, char **argv, const char **dir)
{
	int	i, j;

	for (i = j = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < argc)
				argv[j++] = argv[i++];
			break;
		}
		if (strncmp(argv[i], "-d", 2) != 0) {
			argv[j++] = argv[i];
			continue;
		}
		if (argv[i][2] != '\0')
			*dir = argv[i] + 2;
		else if (i + 1 < argc)
			*dir = argv[++i];
		else
			return -1;
	}
	argv[j] = NULL;
	return j;
}

/* Non-zero when a command's arguments ask for help (before "--"). */
static int
wants_help(int argc, char **argv)
{
	int	i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

static int
env_setup(struct settings *e, const char *dir)
{
	const char	*why;

	if (settings_load(e, dir, -1, 1, &why) != 0) {
		warnx("%s", why);
		return -1;
	}
	return 0;
}

/*
 * What c needs of the data directory before it opens anything; -1 for
 * init, which makes the files.
 */
static int
dir_need(const struct cmd *c)
{
	int	(*fn)(struct settings *, int, char **) = c->fn;

	if (fn == cmd_init)
		return -1;
	if (fn == cmd_tenant_add || fn == cmd_endpoint_add ||
	    fn == cmd_endpoint_secret || fn == cmd_destination_add ||
	    fn == cmd_job_add || fn == cmd_remove)
		return SETTINGS_NEED_CONFIG_WRITE;
	if (fn == cmd_list || fn == cmd_sign)
		return SETTINGS_NEED_CONFIG_READ;
	if (fn == cmd_observe || fn == cmd_dispatch || fn == cmd_poll)
		return SETTINGS_NEED_CONFIG_READ | SETTINGS_NEED_STATE_WRITE;
	/* The rest work on state.db, which SQLite must be able to write. */
	return SETTINGS_NEED_STATE_WRITE;
}

/* Reports a data directory c cannot use; -1 then, else 0. */
static int
check_dir(const struct settings *e, const struct cmd *c)
{
	char	why[PATH_MAX + 128];
	int	need;

	if ((need = dir_need(c)) < 0)
		return 0;
	if (settings_check_dir(e, need, why, sizeof(why)) != SETTINGS_DIR_OK) {
		warnx("%s", why);
		return -1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct settings	 e;
	const char	*dir = NULL;
	int		 ch, words;

	while ((ch = getopt_long(argc, argv, "+d:hV", opts, NULL)) != -1)
		switch (ch) {
		case 'd':
			dir = optarg;
			break;
		case 'h':
			print_main(stdout);
			return EXIT_OK;
		case 'V':
			print_version();
			return EXIT_OK;
		default:
			return main_usage();
		}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return main_usage();
	if (strcmp(argv[0], "help") == 0)
		return help(argc - 1, argv + 1);
	if (strcmp(argv[0], "version") == 0 && argc == 1) {
		print_version();
		return EXIT_OK;
	}
	if ((current = find_cmd(argc, argv, &words)) == NULL) {
		if (argc == 1 && is_group(argv[0])) {
			group_usage(stdout, argv[0]);
			return EXIT_OK;
		}
		return unknown(argc, argv);
	}
	argc -= words - 1;
	argv += words - 1;
	if (wants_help(argc, argv))
		return cmd_help(current);
	if ((argc = take_dir(argc, argv, &dir)) < 0)
		return usage();
	if (util_init() != 0) {
		warnx("libsodium failed to initialise");
		return EXIT_FAIL;
	}
	if (env_setup(&e, dir) != 0)
		return EXIT_USAGE;
	if (check_dir(&e, current) != 0)
		return EXIT_FAIL;
	optind = 0;	/* reset getopt for the subcommand */
	return current->fn(&e, argc, argv);
}
