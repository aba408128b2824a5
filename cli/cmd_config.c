/*
 * The commands over config.db: init and grants; add, set, list and remove
 * for every table; an endpoint's secrets (add, list, revoke); and sign.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "base/text.h"
#include "base/util.h"
#include "config/admin.h"
#include "config/bulk.h"
#include "config/check.h"
#include "config/edit.h"
#include "config/map.h"
#include "db/access.h"
#include "db/pg_schema.h"
#include "delivery/dispatch.h"
#include "intake/webhook.h"
#include "provider/mapping.h"
#include "provider/scheme.h"
#include "store/metrics.h"
#include "store/store.h"

#include "cli.h"
#include "table.h"

/*
 * The commands the option rows name (bits).  Every add, set and remove is
 * one struct cli_edit (cli.h) at the end of its entity's section: its
 * options, its checks, its work; cmd_edit() runs it.  The others read
 * theirs by other_rows.
 */
#define ADD		0x001
#define SET		0x002
#define REMOVE		0x004
#define SECRET_ADD	0x008
#define SECRET_REVOKE	0x010
#define INIT		0x020
#define SHOW		0x040
#define SECRET_LIST	0x080
#define SIGN		0x100
#define GRANTS		0x200

/* ---- init and grants ---------------------------------------------- */

/* The most --grant options one init takes. */
#define GRANTS_MAX	16
/* pg_schema_grants()'s text for one role fits, with room. */
#define GRANTS_LEN	1024

/*
 * role's GRANT lines into buf, or a warning and -1 for a name that is not
 * a plain PostgreSQL role name (it would need quoting; we never quote).
 */
static int
grants_of(enum access_role kind, const char *role, char *buf, size_t len)
{
	char	esc[HB_ID_MAX * 2];

	if ((kind == ACCESS_ROLE_REGISTRAR ? pg_schema_registrar_grants(role,
	    buf, len) : pg_schema_grants(role, buf, len)) == 0)
		return 0;
	cli_warn("role \"%s\": expected 1..63 of a-z 0-9 _, not starting with"
	    " a digit", text_escape(role, (size_t)-1, esc, sizeof(esc)));
	return -1;
}

/* What the commands that are not edits read from their options. */
struct other_opts {
	const char	*roles[GRANTS_MAX];	/* init --grant and */
	enum access_role kinds[GRANTS_MAX];	/* --grant-registrar */
	int		 nroles;
	int		 registrar;	/* grants --registrar */
	int		 only;		/* endpoint show --mapping */
	int		 json;		/* endpoint secret list --json */
	const char	*endpoint;	/* sign --endpoint */
	int64_t		 t;		/* sign --timestamp */
	const char	*key;		/* sign --private-key */
	const char	*query;		/* sign --query */
};

/* --grant ROLE: at most GRANTS_MAX, each a plain role name. */
static int
add_grant(enum access_role kind, const char *role, struct other_opts *a)
{
	char	text[GRANTS_LEN];

	if (a->nroles == GRANTS_MAX)
		cli_warn("--grant: at most %d roles", GRANTS_MAX);
	else if (grants_of(kind, role, text, sizeof(text)) == 0) {
		a->kinds[a->nroles] = kind;
		a->roles[a->nroles++] = role;
		return 0;
	}
	cli_usage();
	return -1;
}

static int
init_grant(const char *role, void *p)
{
	return add_grant(ACCESS_ROLE_SERVE, role, p);
}

static int
init_grant_registrar(const char *role, void *p)
{
	return add_grant(ACCESS_ROLE_REGISTRAR, role, p);
}

#define CLI_ROWS_OF	struct other_opts
static const struct cli_opt other_rows[] = {
	CLI_OPT_FN("grant", INIT, init_grant),
	CLI_OPT_FN("grant-registrar", INIT, init_grant_registrar),
	CLI_OPT_FLAG("registrar", GRANTS, registrar, 1),
	CLI_OPT_FLAG("mapping", SHOW, only, 1),
	CLI_OPT_FLAG("json", SECRET_LIST, json, 1),
	CLI_OPT_PTR("endpoint", SIGN, endpoint, 0),
	CLI_OPT_INT("timestamp", SIGN, t, 0, INT64_MAX / 1000),
	CLI_OPT_PTR("private-key", SIGN, key, 0),
	CLI_OPT_PTR("query", SIGN, query, 0),
};
#undef CLI_ROWS_OF

/* Reads command cmd's options into *a; then n operands must follow. */
static int
other_args(int argc, char **argv, unsigned cmd, int n, struct other_opts *a)
{
	memset(a, 0, sizeof(*a));
	a->t = util_now();
	return cli_parse(argc, argv, CLI_ROWS(other_rows), cmd, a, NULL, n);
}

/*
 * Runs role's GRANT lines (one transaction) on e's database as the
 * connecting (admin) role; role is one grants_of() took.  Returns an
 * exit code, reported.
 */
static int
grant(const struct settings *e, enum access_role kind, const char *role)
{
	char			why[512];
	enum access_status	rc;

	switch ((rc = access_grant(e->dir, e->busy_ms, kind, role, why,
	    sizeof(why)))) {
	case ACCESS_OK:
		break;
	case ACCESS_UNREACHABLE:
		cli_warn("%s: %s", e->shown, why);
		return EXIT_TEMPFAIL;
	default:
		cli_warn("--grant %s: %s", role, why);
		return rc == ACCESS_BUSY ? EXIT_TEMPFAIL : EXIT_FAIL;
	}
	printf(kind == ACCESS_ROLE_REGISTRAR ? "granted %s: register jobs\n" :
	    "granted %s: read hookbox_config, write hookbox_state\n", role);
	return EXIT_OK;
}

/*
 * Upgrades an existing configuration to this release's schema, saying so
 * when it did.  Returns an exit code, reported.
 */
static int
upgrade(const struct settings *e, int *moved)
{
	enum config_status	rc;
	int			from = 0;

	if ((rc = config_upgrade(e->config_path, e->busy_ms, &from)) !=
	    CONFIG_OK) {
		if (rc == CONFIG_NOMEM || !cli_server_unreachable(e))
			cli_warn("%s: upgrading the configuration's schema:"
			    " %s%s", settings_config_name(e),
			    config_strerror(rc), e->server ? " (as the schema's"
			    " owner, the admin role?)" : "");
		return cli_config_exit(rc);
	}
	if ((*moved = from != CONFIG_SCHEMA_VERSION))
		printf("upgraded %s: configuration schema version %d to %d\n",
		    settings_config_name(e), from, CONFIG_SCHEMA_VERSION);
	return EXIT_OK;
}

/*
 * init [--grant ROLE]...: a directory gets config.db and state.db; a
 * PostgreSQL database its two schemas, and each ROLE the grants a serving
 * role needs.  Run twice, it changes nothing (grants are idempotent), and
 * says which: made, upgraded (each schema that was), or current already.
 */
int
cmd_init(struct settings *e, int argc, char **argv)
{
	struct other_opts	 a;
	struct store		*st = NULL;
	enum config_status	 crc;
	int			 rc, i, from, to, made, moved = 0;

	if ((rc = other_args(argc, argv, INIT, 0, &a)) != EXIT_OK)
		return rc;
	if (a.nroles > 0 && !e->server) {
		cli_warn("--grant: only for a PostgreSQL database; a"
		    " directory's files are guarded by their modes");
		return EXIT_FAIL;
	}
	if (!e->server && mkdir(e->dir, 0750) != 0 && errno != EEXIST) {
		cli_warn("%s: %s", e->dir, strerror(errno));
		return EXIT_FAIL;
	}
	crc = config_create(e->config_path);
	if (crc != CONFIG_OK && crc != CONFIG_EXISTS) {
		if (crc == CONFIG_NOMEM || !cli_server_unreachable(e))
			cli_warn("%s: %s", settings_config_name(e),
			    config_strerror(crc));
		return cli_config_exit(crc);
	}
	/* There already: brought up to this release's schema. */
	if (crc == CONFIG_EXISTS && (rc = upgrade(e, &moved)) != EXIT_OK)
		return rc;
	if ((rc = cli_open_store(e, 1, &st)) != EXIT_OK) {
		/*
		 * Refused (a link planted at state.db, say): a config.db this
		 * run made goes with it, so that a refused init leaves the
		 * directory as it found it.
		 */
		if (crc == CONFIG_OK && !e->server &&
		    unlink(e->config_path) != 0)
			cli_warn("%s: %s", e->config_path, strerror(errno));
		return rc;
	}
	made = store_schema_moved(st, &from, &to) && from == 0;
	if (!made && to != 0) {
		printf("upgraded %s: state schema version %d to %d\n",
		    settings_state_name(e), from, to);
		moved = 1;
	}
	store_close(st);
	if (crc == CONFIG_OK || made)
		printf("initialised %s\n", e->shown);
	else if (!moved)
		printf("%s: initialised already, its schemas current;"
		    " nothing changed\n", e->shown);
	for (i = 0; i < a.nroles; i++)
		if ((rc = grant(e, a.kinds[i], a.roles[i])) != EXIT_OK)
			return rc;
	return EXIT_OK;
}

/*
 * grants ROLE: prints the GRANT lines a DBA runs for a serving role on a
 * database whose schemas `hookbox init` made.  Needs no location.
 */
int
cmd_grants(struct settings *e, int argc, char **argv)
{
	struct other_opts	 a;
	char			 text[GRANTS_LEN], *p, *semi;
	int			 rc;

	(void)e;
	if ((rc = other_args(argc, argv, GRANTS, 1, &a)) != EXIT_OK)
		return rc;
	if (grants_of(a.registrar ? ACCESS_ROLE_REGISTRAR : ACCESS_ROLE_SERVE,
	    argv[optind], text, sizeof(text)) != 0)
		return EXIT_USAGE;
	/* One statement a line: the text is one line, ';' between them. */
	for (p = text; *p != '\0'; p = semi + 1) {
		if ((semi = strchr(p, ';')) == NULL) {
			if (*p != '\0')
				puts(p);
			break;
		}
		printf("%.*s;\n", (int)(semi - p), p);
	}
	return EXIT_OK;
}

/* ---- what every add and set shares -------------------------------- */

/*
 * Exit codes: 2 (EXIT_USAGE) when the command line cannot be read: an
 * unknown option, a missing argument, a number, time or choice that does
 * not parse, nothing to change; 1 (EXIT_FAIL) when it reads but config.db
 * refuses it: a value that breaks a rule, a row that does not exist or is
 * still referenced, a duplicate.
 */

/* "--opt "value": expected ...": a refused value; returns EXIT_FAIL. */
static int
refuse(const char *opt, const char *value, const char *expected)
{
	char	esc[HB_ID_MAX * 2];

	cli_warn("%s \"%s\": %s", opt, text_escape(value, (size_t)-1, esc,
	    sizeof(esc)), expected);
	return EXIT_FAIL;
}

#define NAME_EXPECTED	"expected 1..128 of A-Z a-z 0-9 . _ -, starting with" \
			" a letter or digit"

/* A name given as opt: EXIT_OK, or reported and EXIT_FAIL. */
static int
check_name(const char *opt, const char *value)
{
	return text_valid_name(value) ? EXIT_OK :
	    refuse(opt, value, NAME_EXPECTED);
}

/* A URL given as opt ("" = none, when allowed). */
static int
check_url(const char *opt, const char *value)
{
	const char	*why;

	if ((why = config_check_url(value)) != NULL)
		return refuse(opt, value, why);
	return EXIT_OK;
}

/*
 * A tenant's job API base: a URL (check_url()) at no internal address,
 * however it is spelled: the tenant's API key goes with every poll, and
 * the poller refuses one all the same.
 */
static int
check_status_base(const char *value)
{
	const char	*what;
	char		 host[HB_TEXT_MAX + 1], esc[HB_TEXT_MAX * 4 + 1];
	char		 why[HB_TEXT_MAX * 4 + 160];
	int		 rc;

	if ((rc = check_url("--status-base", value)) != EXIT_OK)
		return rc;
	if ((what = config_check_address(value, host, sizeof(host))) == NULL)
		return EXIT_OK;
	(void)snprintf(why, sizeof(why), "%s is %s: refused, for the tenant's"
	    " API key goes with every poll", text_escape(host, (size_t)-1,
	    esc, sizeof(esc)), what);
	return refuse("--status-base", value, why);
}

/*
 * Reads the secret of option opt from path (a file, or "-" for standard
 * input) into buf; warns when the file is readable by its group or by
 * others.  Returns the length, or -1 (reported).
 */
static ssize_t
get_secret(const char *opt, const char *path, unsigned char *buf,
    size_t max)
{
	struct stat	sb;
	char		esc[PATH_MAX];

	if (strcmp(path, "-") != 0 && stat(path, &sb) == 0 &&
	    (sb.st_mode & (S_IRGRP | S_IROTH)) != 0)
		cli_warn("warning: %s \"%s\": readable by %s; a secret's file"
		    " should be mode 0600 (chmod 600)", opt,
		    text_escape(path, (size_t)-1, esc, sizeof(esc)),
		    (sb.st_mode & S_IROTH) != 0 ? "others" : "its group");
	return cli_read_secret(path, buf, max);
}

#define TIME_EXPECTED	"expected UNIXTIME, YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ" \
			" or +N followed by s, m, h or d"

/*
 * --expires: a time after now.  Returns EXIT_OK, EXIT_USAGE (not a time)
 * or EXIT_FAIL (in the past), reported.
 */
static int
parse_expiry(const char *s, int64_t now, int64_t *out)
{
	char	esc[HB_ID_MAX];

	if (util_parse_time(s, now, out) != 0) {
		cli_warn("--expires \"%s\": %s", text_escape(s, (size_t)-1,
		    esc, sizeof(esc)), TIME_EXPECTED);
		return EXIT_USAGE;
	}
	if (*out <= now)
		return refuse("--expires", s, "in the past (expected a time"
		    " after now)");
	return EXIT_OK;
}

/* "tenant "x" does not exist" and the like, after the command's words. */
static int
no_such(const char *what, const char *name, const char *tenant)
{
	char	esc[HB_ID_MAX * 2];

	cli_warn("%s %s: %s \"%s\"%s%s does not exist", cli_cmd->name,
	    cli_cmd->sub, what, text_escape(name, (size_t)-1, esc,
	    sizeof(esc)), tenant != NULL ? " of tenant " : "",
	    tenant != NULL ? tenant : "");
	return EXIT_FAIL;
}

/* A tenant that must exist: EXIT_OK, or reported. */
static int
need_tenant(struct config *cfg, const char *id)
{
	struct config_tenant	t;
	enum config_status	rc;

	if ((rc = config_tenant_get(cfg, id, &t)) == CONFIG_NOTFOUND)
		return no_such("tenant", id, NULL);
	return cli_config_done(rc, id, NULL);
}


/* ---- tenant ------------------------------------------------------- */

/* What tenant add and set read. */
struct tenant_edit {
	struct config_tenant	 t;
	const char		*id;		/* set: the operand */
	const char		*base;		/* set: --status-base */
	const char		*keyfile;
	int			 active;	/* -1: not given */
	unsigned char		 key[CONFIG_SECRET_MAX + 1];
	ssize_t			 keylen;
};

#define CLI_ROWS_OF	struct tenant_edit
static const struct cli_opt tenant_opts[] = {
	CLI_OPT_ONE("active", SET, active, 1),
	CLI_OPT_ONE("inactive", ADD | SET, active, 0),
	/* add copies it at once; set keeps it for the row it reads. */
	CLI_OPT_TEXT("status-base", ADD, t.status_base, 0, NULL),
	CLI_OPT_PTR("status-base", SET, base, 0),
	CLI_OPT_PTR("api-key-file", ADD | SET, keyfile, 0),
};

static void
tenant_init(void *p)
{
	struct tenant_edit	*a = p;

	a->active = -1;
}

/* Reads and checks --api-key-file's key, when given. */
static int
tenant_key(struct tenant_edit *a)
{
	const char	*why;

	if (a->keyfile != NULL && (a->keylen = get_secret("--api-key-file",
	    a->keyfile, a->key, CONFIG_SECRET_MAX)) < 0)
		return EXIT_FAIL;
	if (a->keylen > 0 && (why = config_check_api_key(a->key,
	    (size_t)a->keylen)) != NULL)
		return refuse("--api-key-file", a->keyfile, why);
	return EXIT_OK;
}

static int
tenant_add_check(void *p, char **operands)
{
	struct tenant_edit	*a = p;
	int			 rc;

	(void)operands;
	a->t.active = a->active != 0;
	if ((rc = check_name("tenant ID", a->t.id)) != EXIT_OK ||
	    (a->t.status_base[0] != '\0' &&
	    (rc = check_status_base(a->t.status_base)) != EXIT_OK))
		return rc;
	return tenant_key(a);
}

static int
tenant_add_work(struct config *cfg, void *p)
{
	struct tenant_edit	*a = p;
	const char		*why = NULL;

	return cli_config_done(config_tenant_add(cfg, &a->t, a->keylen > 0 ?
	    a->key : NULL, (size_t)a->keylen, &why), a->t.id, &why);
}

static int
tenant_set_check(void *p, char **operands)
{
	struct tenant_edit	*a = p;
	int			 rc;

	(void)operands;
	if (a->base != NULL &&
	    (rc = check_status_base(a->base)) != EXIT_OK)
		return rc;
	return tenant_key(a);
}

static int
tenant_set_work(struct config *cfg, void *p)
{
	struct tenant_edit	*a = p;
	enum config_status	 crc;
	const char		*why = NULL;
	int			 rc;

	if ((crc = config_tenant_get(cfg, a->id, &a->t)) == CONFIG_NOTFOUND)
		return no_such("tenant", a->id, NULL);
	if ((rc = cli_config_done(crc, a->id, NULL)) != EXIT_OK)
		return rc;
	if (a->active != -1)
		a->t.active = a->active;
	if (a->base != NULL && cli_set_field(a->t.status_base,
	    sizeof(a->t.status_base), a->base, "--status-base") != 0)
		return EXIT_USAGE;
	return cli_config_done(config_tenant_update(cfg, &a->t, a->keylen > 0 ?
	    a->key : NULL, (size_t)a->keylen, &why), a->id, &why);
}

static const struct cli_edit tenant_add = {
	"tenant", "add", CLI_OPTIONS(tenant_opts), .cmd = ADD,
	.operand = CLI_OPT_TEXT("tenant", 0, t.id, 0, NULL), .noperands = 1,
	.done = "added", .init = tenant_init, .check = tenant_add_check,
	.work = tenant_add_work,
};
static const struct cli_edit tenant_set = {
	"tenant", "set", CLI_OPTIONS(tenant_opts), .cmd = SET,
	.operand = CLI_OPT_PTR("tenant", 0, id, 0), .noperands = 1, .change = 1,
	.done = "updated", .init = tenant_init, .check = tenant_set_check,
	.work = tenant_set_work,
};
#undef CLI_ROWS_OF

/* ---- endpoint ----------------------------------------------------- */

/*
 * A mapping file (or "-" for standard input), read (cli_read_file()) and
 * parsed: into *text (free()) and *len, and *m (mapping_free()).
 * EXIT_OK; EXIT_USAGE for a mapping that is too long or does not parse,
 * with the file's name and what is wrong; EXIT_FAIL for a file that
 * cannot be read.
 */
static int
get_mapping(const char *path, char **text, size_t *len, struct mapping **m)
{
	char	why[256], esc[PATH_MAX];
	int	rc;

	*m = NULL;
	if ((rc = cli_read_file("--mapping", path, MAPPING_TEXT_MAX, text,
	    len)) != EXIT_OK)
		return rc;
	if ((*m = mapping_parse(*text, *len, why, sizeof(why))) == NULL) {
		(void)text_escape(path, (size_t)-1, esc, sizeof(esc));
		cli_warn("--mapping \"%s\": %s", esc, why);
		free(*text);
		*text = NULL;
		/* provider/mapping.h's words for a failed allocation. */
		return strcmp(why, "out of memory") == 0 ? EXIT_FAIL :
		    EXIT_USAGE;
	}
	return EXIT_OK;
}

/*
 * Reports config_endpoint_add_mapped()'s or
 * config_endpoint_set_mapping()'s outcome: a refused mapping with its
 * file and why, anything else as cli_config_done() does.
 */
static int
mapping_done(enum config_status rc, const char *name, const char *file,
    const char *why)
{
	if ((rc == CONFIG_INVALID || rc == CONFIG_REFUSED) && why[0] != '\0')
		return refuse("--mapping", file, why);
	return cli_config_done(rc, name, NULL);
}

/*
 * The mapping of an endpoint of auth scheme, whose signature scheme its
 * secrets are for, into *m (mapping_free()); NULL for another.  Returns
 * an exit code.
 */
static int
endpoint_scheme(struct config *cfg, const struct config_endpoint *ep,
    struct mapping **m)
{
	char	*text = NULL, why[256];
	int	 rc;

	*m = NULL;
	if (ep->auth != CONFIG_AUTH_SCHEME)
		return EXIT_OK;
	if ((rc = cli_config_done(config_endpoint_mapping(cfg, ep->name,
	    &text), ep->name, NULL)) != EXIT_OK)
		return rc;
	if ((*m = mapping_parse(text, strlen(text), why, sizeof(why))) ==
	    NULL || mapping_scheme(*m) == NULL) {
		cli_warn("endpoint %s: its mapping declares no signature: %s",
		    ep->name, why);
		mapping_free(*m);
		*m = NULL;
		rc = EXIT_FAIL;
	}
	free(text);
	return rc;
}

/*
 * Reads a new secret for an endpoint of auth mode a (for scheme, its
 * mapping m's) from file, checks it and adds it (inside the caller's
 * transaction).  Returns an exit code.
 */
static int
add_secret(struct config *cfg, const char *endpoint, enum config_auth a,
    const struct mapping *m, const char *file, int64_t expires)
{
	unsigned char	 buf[CONFIG_SECRET_MAX + 1];
	ssize_t		 n;
	const char	*why = NULL;
	int		 rc;

	if ((n = get_secret("--secret-file", file, buf,
	    CONFIG_SECRET_MAX)) < 0)
		return EXIT_FAIL;
	if ((why = config_check_secret(a, m != NULL ? mapping_scheme(m) :
	    NULL, buf, (size_t)n)) != NULL)
		rc = refuse("--secret-file", file, why);
	else
		rc = cli_config_done(config_secret_add(cfg, endpoint, buf,
		    (size_t)n, expires, &why), endpoint, &why);
	sodium_memzero(buf, sizeof(buf));
	return rc;
}

/* What endpoint add and set, and endpoint secret add and revoke, read. */
struct endpoint_edit {
	struct config_endpoint	 ep;
	const char		*name;		/* but add's: the operand */
	const char		*secret, *exp, *mapfile;
	const char		*header;	/* set: --header */
	int64_t			 tolerance;	/* 0: not given */
	int64_t			 now, expires, retire;
	int			 kind;		/* --kind given */
	int			 auth;		/* --auth given */
	char			*map;		/* the mapping's text */
	size_t			 maplen;
	struct mapping		*m;
	long long		 id;		/* revoke: the secret */
	int64_t			 last;		/* secret add: the new one */
	int			 retired;	/* and the others retired */
};

static int
endpoint_kind(const char *arg, void *p)
{
	struct endpoint_edit	*a = p;

	if (config_kind_parse(arg, &a->ep.kind) != 0) {
		cli_warn("--kind \"%s\": expected tornado-job, tornado-org or"
		    " mapped", arg);
		return -1;
	}
	a->kind = 1;
	return 0;
}

static int
endpoint_auth(const char *arg, void *p)
{
	struct endpoint_edit	*a = p;

	if (config_auth_parse(arg, &a->ep.auth) != 0) {
		cli_warn("--auth \"%s\": expected hmac, key, standard or"
		    " scheme", arg);
		return -1;
	}
	a->auth = 1;
	return 0;
}

/* --retire-others-after: a duration, the +DURATION form of a time. */
static int
endpoint_retire(const char *arg, void *p)
{
	struct endpoint_edit	*a = p;
	char			 buf[64], esc[64];

	if (arg[0] == '+' || (size_t)snprintf(buf, sizeof(buf), "+%s", arg) >=
	    sizeof(buf) || util_parse_time(buf, a->now, &a->retire) != 0) {
		cli_warn("--retire-others-after \"%s\": expected N followed by"
		    " s, m, h or d", text_escape(arg, (size_t)-1, esc,
		    sizeof(esc)));
		return -1;
	}
	/* "0": at once, which an expiry of now means. */
	return 0;
}

#define CLI_ROWS_OF	struct endpoint_edit
static const struct cli_opt endpoint_opts[] = {
	CLI_OPT_TEXT("tenant", ADD, ep.tenant, CLI_REQUIRED, NULL),
	CLI_OPT_FN("kind", ADD, endpoint_kind),
	CLI_OPT_PTR("mapping", ADD | SET, mapfile, 0),
	CLI_OPT_FN("auth", ADD, endpoint_auth),
	/* add copies it at once; set keeps it for the row it reads. */
	CLI_OPT_TEXT("header", ADD, ep.key_header, 0, "--header"),
	CLI_OPT_TEXT("key-header", ADD, ep.key_header, 0, "--header"),
	CLI_OPT_PTR("header", SET, header, 0),
	CLI_OPT_PTR("key-header", SET, header, 0),
	CLI_OPT_INT("tolerance", ADD | SET, tolerance, 1, 86400),
	CLI_OPT_PTR("secret-file", ADD | SECRET_ADD, secret, CLI_REQUIRED),
	CLI_OPT_PTR("expires", ADD | SECRET_ADD, exp, 0),
	CLI_OPT_FN("retire-others-after", SECRET_ADD, endpoint_retire),
};

static void
endpoint_init(void *p)
{
	struct endpoint_edit	*a = p;

	a->ep.kind = CONFIG_KIND_JOB;
	a->ep.auth = CONFIG_AUTH_HMAC;
	a->ep.tolerance = AUTH_TOLERANCE_DEFAULT;
	a->now = util_now();
}

/* Reads and parses --mapping's file, when given. */
static int
endpoint_mapping(struct endpoint_edit *a)
{
	if (a->mapfile == NULL)
		return EXIT_OK;
	return get_mapping(a->mapfile, &a->map, &a->maplen, &a->m);
}

static void
endpoint_clear(void *p)
{
	struct endpoint_edit	*a = p;

	mapping_free(a->m);
	free(a->map);
}

static int
endpoint_add_check(void *p, char **operands)
{
	struct endpoint_edit	*a = p;
	const char		*why;
	int			 rc;

	(void)operands;
	if (a->tolerance != 0)
		a->ep.tolerance = a->tolerance;
	/* A mapping says the kind; a kind mapped needs one. */
	if (a->mapfile != NULL && !a->kind)
		a->ep.kind = CONFIG_KIND_MAPPED;
	if (a->ep.kind == CONFIG_KIND_MAPPED && a->mapfile == NULL) {
		cli_warn("--kind mapped needs --mapping FILE");
		return EXIT_USAGE;
	}
	if (a->ep.kind != CONFIG_KIND_MAPPED && a->mapfile != NULL) {
		cli_warn("--mapping: only for --kind mapped, not %s",
		    config_kind_name(a->ep.kind));
		return EXIT_USAGE;
	}
	if (a->mapfile != NULL && strcmp(a->mapfile, "-") == 0 &&
	    strcmp(a->secret, "-") == 0) {
		cli_warn("--mapping - and --secret-file -: standard input can"
		    " be only one of them");
		return EXIT_USAGE;
	}
	if (a->ep.auth == CONFIG_AUTH_KEY && a->ep.key_header[0] == '\0') {
		cli_warn("--auth key needs --header");
		return EXIT_USAGE;
	}
	if (a->exp != NULL &&
	    (rc = parse_expiry(a->exp, util_now(), &a->expires)) != EXIT_OK)
		return rc;
	if ((why = config_check_endpoint_name(a->ep.name)) != NULL)
		return refuse("endpoint NAME", a->ep.name, why);
	if ((rc = check_name("--tenant", a->ep.tenant)) != EXIT_OK ||
	    (rc = endpoint_mapping(a)) != EXIT_OK)
		return rc;
	/* A mapping that declares its signature is the authentication. */
	if (a->m != NULL && mapping_scheme(a->m) != NULL) {
		if (a->auth && a->ep.auth != CONFIG_AUTH_SCHEME) {
			cli_warn("--auth %s: the mapping declares how the"
			    " provider signs (its signature member)",
			    config_auth_name(a->ep.auth));
			return EXIT_USAGE;
		}
		if (a->ep.key_header[0] != '\0') {
			cli_warn("--header: the mapping's signature names its"
			    " header");
			return EXIT_USAGE;
		}
		a->ep.auth = CONFIG_AUTH_SCHEME;
	}
	return EXIT_OK;
}

/* The endpoint and its first secret commit together or not at all. */
static int
endpoint_add_work(struct config *cfg, void *p)
{
	struct endpoint_edit	*a = p;
	const char		*why = NULL;
	char			 mwhy[512];
	int			 rc;

	if ((rc = need_tenant(cfg, a->ep.tenant)) != EXIT_OK)
		return rc;
	if (a->m != NULL)
		rc = mapping_done(config_endpoint_add_mapped(cfg, &a->ep,
		    a->map, a->maplen, mwhy, sizeof(mwhy)), a->ep.name,
		    a->mapfile, mwhy);
	else
		rc = cli_config_done(config_endpoint_add(cfg, &a->ep, &why),
		    a->ep.name, &why);
	if (rc == EXIT_OK)
		rc = add_secret(cfg, a->ep.name, a->ep.auth, a->m, a->secret,
		    a->expires);
	return rc;
}

/* A mapping's line (add's, set's) names where the actions go. */
static int
endpoint_said(const void *p)
{
	const struct endpoint_edit	*a = p;
	const char			*d;
	size_t				 i, k;

	if (a->m == NULL)
		return 0;
	/* add: the name is the row's; set: the operand. */
	printf("endpoint %s%s, its actions to destination",
	    a->name == NULL ? a->ep.name : a->name, a->name == NULL ?
	    " added: kind mapped" : ": mapping replaced");
	/* Each once, as the mapping names them: its own, its steps'. */
	for (i = 0; (d = mapping_destination_at(a->m, i)) != NULL; i++) {
		for (k = 0; k < i; k++)
			if (strcmp(mapping_destination_at(a->m, k), d) == 0)
				break;
		if (k == i)
			printf("%s %s", i > 0 ? "," : "", d);
	}
	printf("\n");
	return 1;
}

static int
endpoint_set_check(void *p, char **operands)
{
	(void)operands;
	return endpoint_mapping(p);
}

/*
 * A mapping set with a signature scheme: says so when some of the
 * endpoint's active secrets are not keys of it (another form: a whsec_
 * secret where the scheme takes its text, a key where it takes a public
 * key), for requests would then be refused, 401.  The change stands.
 */
static void
warn_secrets(struct config *cfg, const char *name, const struct scheme *s,
    int64_t now)
{
	struct config_secrets	 sec;
	const char		*why, *first = NULL;
	size_t			 i, bad = 0;

	if (config_endpoint_secrets(cfg, name, now, &sec) != CONFIG_OK)
		return;
	for (i = 0; i < sec.n; i++)
		if ((why = scheme_check_secret(s, sec.s[i].key,
		    sec.s[i].keylen)) != NULL) {
			bad++;
			if (first == NULL)
				first = why;
		}
	if (bad > 0)
		cli_warn("endpoint %s: %zu of its %zu active secrets are not"
		    " keys of the mapping's signature scheme (%s): add one"
		    " (endpoint secret add) or its requests are refused",
		    name, bad, sec.n, first);
	config_secrets_clear(&sec);
}

static int
endpoint_set_work(struct config *cfg, void *p)
{
	struct endpoint_edit	*a = p;
	enum config_status	 crc;
	const char		*why = NULL;
	char			 mwhy[512];
	int			 rc;

	if ((crc = config_endpoint_get(cfg, a->name, &a->ep)) ==
	    CONFIG_NOTFOUND)
		return no_such("endpoint", a->name, NULL);
	if ((rc = cli_config_done(crc, a->name, NULL)) != EXIT_OK)
		return rc;
	if (a->header != NULL && a->ep.auth == CONFIG_AUTH_STANDARD)
		return refuse("--header", a->header, "a standard endpoint"
		    " takes none (it reads webhook-id, webhook-timestamp and"
		    " webhook-signature)");
	if (a->header != NULL && a->ep.auth == CONFIG_AUTH_SCHEME)
		return refuse("--header", a->header, "the endpoint's mapping"
		    " names the signature's header (signature.header)");
	if (a->m != NULL && a->ep.kind != CONFIG_KIND_MAPPED) {
		(void)snprintf(mwhy, sizeof(mwhy), "endpoint %s is of kind %s:"
		    " only kind mapped has a mapping", a->name,
		    config_kind_name(a->ep.kind));
		return refuse("--mapping", a->mapfile, mwhy);
	}
	if (a->header != NULL && cli_set_field(a->ep.key_header,
	    sizeof(a->ep.key_header), a->header, "--header") != 0)
		return EXIT_USAGE;
	if (a->tolerance != 0)
		a->ep.tolerance = a->tolerance;
	if ((a->header != NULL || a->tolerance != 0) &&
	    (rc = cli_config_done(config_endpoint_update(cfg, &a->ep, &why),
	    a->name, &why)) != EXIT_OK)
		return rc;
	if (a->m != NULL)
		rc = mapping_done(config_endpoint_set_mapping(cfg, a->name,
		    a->map, a->maplen, mwhy, sizeof(mwhy)), a->name,
		    a->mapfile, mwhy);
	if (rc == EXIT_OK && a->m != NULL && mapping_scheme(a->m) != NULL)
		warn_secrets(cfg, a->name, mapping_scheme(a->m), a->now);
	return rc;
}

static const struct cli_edit endpoint_add = {
	"endpoint", "add", CLI_OPTIONS(endpoint_opts), .cmd = ADD,
	.operand = CLI_OPT_TEXT("endpoint", 0, ep.name, 0, NULL),
	.noperands = 1, .done = "added", .init = endpoint_init,
	.check = endpoint_add_check, .work = endpoint_add_work,
	.said = endpoint_said,
	.clear = endpoint_clear,
};
static const struct cli_edit endpoint_set = {
	"endpoint", "set", CLI_OPTIONS(endpoint_opts), .cmd = SET,
	.operand = CLI_OPT_PTR("endpoint", 0, name, 0), .noperands = 1,
	.change = 1, .done = "updated", .init = endpoint_init,
	.check = endpoint_set_check, .work = endpoint_set_work,
	.said = endpoint_said,
	.clear = endpoint_clear,
};

/*
 * What an endpoint of auth scheme is signed with, as endpoint show adds
 * it to the row: "signature": {"algorithm", "weak" (a provider's that is
 * followed, not chosen), "timed", "signs" (the headers)}, read from its
 * stored mapping.  Returns an exit code, reported.
 */
static int
show_scheme(struct config *cfg, const char *name, cJSON *row)
{
	struct mapping		*m = NULL;
	const struct scheme	*s;
	const char *const	*h;
	cJSON			*sig, *signs = NULL;
	char			*text = NULL, why[256];
	int			 rc;

	if ((rc = cli_config_done(config_endpoint_mapping(cfg, name, &text),
	    name, NULL)) != EXIT_OK || text == NULL)
		return rc;
	m = mapping_parse(text, strlen(text), why, sizeof(why));
	free(text);
	/* A mapping the reads refuse is shown as stored, unsigned. */
	if (m == NULL || (s = mapping_scheme(m)) == NULL) {
		mapping_free(m);
		return EXIT_OK;
	}
	rc = (sig = cJSON_AddObjectToObject(row, "signature")) != NULL &&
	    cJSON_AddStringToObject(sig, "algorithm",
	    scheme_algorithm(s)) != NULL &&
	    cJSON_AddBoolToObject(sig, "weak", scheme_weak(s)) != NULL &&
	    cJSON_AddBoolToObject(sig, "timed", scheme_timed(s)) != NULL &&
	    (signs = cJSON_AddArrayToObject(sig, "signs")) != NULL ?
	    EXIT_OK : EXIT_FAIL;
	for (h = scheme_signed_headers(s); *h != NULL && rc == EXIT_OK; h++)
		if (!cJSON_AddItemToArray(signs, cJSON_CreateString(*h)))
			rc = EXIT_FAIL;
	mapping_free(m);
	if (rc != EXIT_OK)
		cli_warn("out of memory");
	return rc;
}

/*
 * endpoint show [--mapping] NAME: the endpoint as one JSON object (the
 * fields of endpoint list --json, its mapping as JSON, and for auth
 * scheme what it is signed with); with --mapping, its mapping alone,
 * canonical, as endpoint add --mapping takes it.
 */
int
cmd_endpoint_show(struct settings *e, int argc, char **argv)
{
	struct other_opts	 a;
	struct config_endpoint	 ep;
	struct config		*cfg = NULL;
	cJSON			*arr = NULL, *row, *v;
	enum config_status	 crc;
	const char		*name;
	char			*text = NULL, *out = NULL;
	int			 rc;

	if ((rc = other_args(argc, argv, SHOW, 1, &a)) != EXIT_OK)
		return rc;
	name = argv[optind];
	if ((rc = cli_open_config(e, CONFIG_READ, &cfg)) != EXIT_OK)
		return rc;
	if (a.only) {
		if ((crc = config_endpoint_get(cfg, name, &ep)) ==
		    CONFIG_NOTFOUND)
			rc = no_such("endpoint", name, NULL);
		else if ((rc = cli_config_done(crc, name, NULL)) == EXIT_OK &&
		    (rc = cli_config_done(config_endpoint_mapping(cfg, name,
		    &text), name, NULL)) == EXIT_OK && text == NULL) {
			cli_warn("endpoint show: endpoint %s is of kind %s: it"
			    " has no mapping", name, config_kind_name(ep.kind));
			rc = EXIT_FAIL;
		}
		if (rc == EXIT_OK)
			puts(text);
		goto out;
	}
	if ((rc = cli_config_done(config_list(cfg, CONFIG_ENDPOINTS, NULL,
	    &arr), name, NULL)) != EXIT_OK)
		goto out;
	cJSON_ArrayForEach(row, arr) {
		v = cJSON_GetObjectItemCaseSensitive(row, "name");
		if (cJSON_IsString(v) && strcmp(v->valuestring, name) == 0)
			break;
	}
	if (row == NULL)
		rc = no_such("endpoint", name, NULL);
	else if ((rc = show_scheme(cfg, name, row)) == EXIT_OK) {
		if ((out = cJSON_Print(row)) == NULL) {
			cli_warn("out of memory");
			rc = EXIT_FAIL;
		} else
			puts(out);
	}
out:
	cJSON_free(out);
	cJSON_Delete(arr);
	free(text);
	config_close(cfg);
	return rc;
}

/* ---- endpoint secret {add|list|revoke} ---------------------------- */

/* A secret's time (unix seconds) as the tables print it; "never" for 0. */
static const char *
secret_time(int64_t t, char *buf, size_t len)
{
	if (t == 0)
		return "never";
	cli_list_time(t * 1000, buf, len);
	return buf;
}

struct secret_walk {
	int64_t	 now;
	int64_t	 find;		/* an id looked for, or 0 */
	int	 found_active;	/* find is there and active: 1, else 0 */
	int	 found;
	int	 active;	/* how many are active */
	int64_t	 last;		/* the newest id */
	cJSON		*arr;	/* --json: the rows, else NULL */
	struct table	*tab;	/* the table's rows, else NULL */
	const char	*endpoint;
	/* state.db's counters, for each secret's last use; NULL: unknown */
	const struct metrics_set *used;
};

/* When the endpoint's secret id was last used (unix ms), or 0. */
static int64_t
secret_used(const struct secret_walk *w, int64_t id)
{
	const struct metrics_row	*r;
	char				 l2[24];
	int				 i;

	(void)snprintf(l2, sizeof(l2), "%lld", (long long)id);
	for (i = 0; w->used != NULL && i < w->used->n; i++) {
		r = &w->used->rows[i];
		if (strcmp(r->name, "secret_used_ms") == 0 &&
		    strcmp(r->l1, w->endpoint) == 0 && strcmp(r->l2, l2) == 0)
			return r->value;
	}
	return 0;
}

static int
secret_active(const struct config_secret_info *si, int64_t now)
{
	return si->expires_at == 0 || si->expires_at > now;
}

static int
walk_secret(void *arg, const struct config_secret_info *si)
{
	struct secret_walk	*w = arg;
	cJSON			*o;
	char			 id[24], c[32], x[32], u[32];
	const char		*row[5];
	int			 act = secret_active(si, w->now);
	int64_t			 used = secret_used(w, si->id);

	w->active += act;
	w->last = si->id;
	if (si->id == w->find) {
		w->found = 1;
		w->found_active = act;
	}
	if (w->arr != NULL) {
		if ((o = cJSON_CreateObject()) == NULL ||
		    !cJSON_AddItemToArray(w->arr, o) ||
		    cJSON_AddNumberToObject(o, "id", (double)si->id) == NULL ||
		    cJSON_AddNumberToObject(o, "created_at",
		    (double)si->created_at * 1000) == NULL ||
		    (si->expires_at == 0 ?
		    cJSON_AddNullToObject(o, "expires_at") :
		    cJSON_AddNumberToObject(o, "expires_at",
		    (double)si->expires_at * 1000)) == NULL ||
		    cJSON_AddBoolToObject(o, "active", act) == NULL ||
		    (w->used == NULL || used == 0 ?
		    cJSON_AddNullToObject(o, "last_used_at") :
		    cJSON_AddNumberToObject(o, "last_used_at", (double)used)) ==
		    NULL)
			return -1;
	} else if (w->tab != NULL) {
		(void)snprintf(id, sizeof(id), "%lld", (long long)si->id);
		row[0] = id;
		row[1] = secret_time(si->created_at, c, sizeof(c));
		row[2] = secret_time(si->expires_at, x, sizeof(x));
		row[3] = act ? "yes" : "no";
		row[4] = w->used == NULL ? "?" : used == 0 ? "-" :
		    (cli_list_time(used, u, sizeof(u)), u);
		if (table_add(w->tab, row) != 0)
			return -1;
	}
	return 0;
}

/* Walks an endpoint's secrets into w; reports an unknown endpoint. */
static int
walk_secrets(struct config *cfg, const char *name, struct secret_walk *w)
{
	enum config_status	rc;

	rc = config_secret_each(cfg, name, walk_secret, w);
	if (rc == CONFIG_NOTFOUND)
		return no_such("endpoint", name, NULL);
	return cli_config_done(rc, name, NULL);
}

static int
secret_add_check(void *p, char **operands)
{
	struct endpoint_edit	*a = p;

	(void)operands;
	if (a->exp == NULL)
		return EXIT_OK;
	return parse_expiry(a->exp, a->now, &a->expires);
}

static int
secret_add_work(struct config *cfg, void *p)
{
	struct endpoint_edit	*a = p;
	struct secret_walk	 w;
	struct mapping		*m = NULL;
	enum config_status	 crc;
	int			 rc;

	if ((crc = config_endpoint_get(cfg, a->name, &a->ep)) ==
	    CONFIG_NOTFOUND)
		return no_such("endpoint", a->name, NULL);
	if ((rc = cli_config_done(crc, a->name, NULL)) != EXIT_OK)
		return rc;
	/* The others first: the new one must not retire itself. */
	if (a->retire != 0 && (rc = cli_config_done(config_secret_retire(cfg,
	    a->name, a->retire, &a->retired), a->name, NULL)) != EXIT_OK)
		return rc;
	if ((rc = endpoint_scheme(cfg, &a->ep, &m)) != EXIT_OK)
		return rc;
	rc = add_secret(cfg, a->name, a->ep.auth, m, a->secret, a->expires);
	mapping_free(m);
	if (rc != EXIT_OK)
		return rc;
	memset(&w, 0, sizeof(w));
	w.now = a->now;
	if ((rc = walk_secrets(cfg, a->name, &w)) == EXIT_OK)
		a->last = w.last;
	return rc;
}

static int
secret_add_said(const void *p)
{
	const struct endpoint_edit	*a = p;
	char				 buf[32];
	int				 n = a->retired;

	printf("endpoint %s: secret %lld added, expires %s\n", a->name,
	    (long long)a->last, secret_time(a->expires, buf, sizeof(buf)));
	if (a->retire != 0)
		printf("endpoint %s: %d other secret%s now expire%s at %s\n",
		    a->name, n, n == 1 ? "" : "s", n == 1 ? "s" : "",
		    secret_time(a->retire, buf, sizeof(buf)));
	return 1;
}

static int
secret_revoke_check(void *p, char **operands)
{
	struct endpoint_edit	*a = p;

	if (cli_parse_int(operands[1], 1, INT64_MAX, "secret ID", &a->id) != 0)
		return EXIT_USAGE;
	return EXIT_OK;
}

static int
secret_revoke_work(struct config *cfg, void *p)
{
	struct endpoint_edit	*a = p;
	struct secret_walk	 w;
	int			 rc;

	memset(&w, 0, sizeof(w));
	w.now = util_now();
	w.find = a->id;
	if ((rc = walk_secrets(cfg, a->name, &w)) != EXIT_OK)
		return rc;
	if (!w.found) {
		cli_warn("endpoint secret revoke: endpoint %s has no secret"
		    " %lld (see endpoint secret list %s)", a->name, a->id,
		    a->name);
		return EXIT_FAIL;
	}
	if (w.found_active && w.active == 1) {
		/* Revoking it would refuse every request: say so instead. */
		cli_warn("endpoint secret revoke: secret %lld is the only"
		    " active secret of endpoint %s; add another first, or"
		    " remove the endpoint", a->id, a->name);
		return EXIT_FAIL;
	}
	return cli_config_done(config_secret_revoke(cfg, a->name, a->id),
	    a->name, NULL);
}

static int
secret_revoke_said(const void *p)
{
	const struct endpoint_edit	*a = p;

	printf("endpoint %s: secret %lld revoked\n", a->name, a->id);
	return 1;
}

static const struct cli_edit secret_add = {
	"endpoint", "secret", CLI_OPTIONS(endpoint_opts), .cmd = SECRET_ADD,
	.operand = CLI_OPT_PTR("endpoint", 0, name, 0), .noperands = 1,
	.init = endpoint_init, .check = secret_add_check,
	.work = secret_add_work, .said = secret_add_said,
};
static const struct cli_edit secret_revoke = {
	"endpoint", "secret", CLI_OPTIONS(endpoint_opts), .cmd = SECRET_REVOKE,
	.operand = CLI_OPT_PTR("endpoint", 0, name, 0), .noperands = 2,
	.check = secret_revoke_check, .work = secret_revoke_work,
	.said = secret_revoke_said,
};
#undef CLI_ROWS_OF

static int
secret_list(struct settings *e, int argc, char **argv)
{
	static const struct table_col cols[] = {
		{ "ID", TABLE_RIGHT, 0 }, { "CREATED", TABLE_LEFT, 0 },
		{ "EXPIRES", TABLE_LEFT, 0 }, { "ACTIVE", TABLE_LEFT, 0 },
		{ "LAST USED", TABLE_LEFT, 0 },
	};
	struct other_opts	 a;
	struct secret_walk	 w;
	struct config		*cfg = NULL;
	struct store		*st = NULL;
	struct metrics_set	 used;
	int			 rc;

	if ((rc = other_args(argc, argv, SECRET_LIST, 1, &a)) != EXIT_OK)
		return rc;
	memset(&w, 0, sizeof(w));
	memset(&used, 0, sizeof(used));
	w.now = util_now();
	w.endpoint = argv[optind];
	if (a.json ? (w.arr = cJSON_CreateArray()) == NULL :
	    (w.tab = table_new(cols, 5)) == NULL) {
		cli_warn("out of memory");
		return EXIT_FAIL;
	}
	/*
	 * Each secret's last use is in state.db's counters (the
	 * responder's, as of its last COMMIT); where state.db cannot be
	 * read, the list says so and shows the rest.
	 */
	if (cli_open_store(e, 0, &st) == EXIT_OK) {
		if (store_metrics_read(st, &used) == STORE_OK)
			w.used = &used;
		else
			cli_warn("%s: the secrets' last use cannot be read",
			    settings_state_name(e));
		store_close(st);
	}
	if ((rc = cli_open_config(e, CONFIG_READ, &cfg)) == EXIT_OK) {
		rc = walk_secrets(cfg, argv[optind], &w);
		config_close(cfg);
	}
	if (rc == EXIT_OK && a.json) {
		rc = cli_print_json(w.arr);
		w.arr = NULL;
	} else if (rc == EXIT_OK)
		table_print(w.tab, stdout);
	cJSON_Delete(w.arr);
	table_free(w.tab);
	metrics_set_free(&used);
	return rc;
}

/*
 * endpoint secret add|list|revoke ...; and the older spelling
 * "endpoint secret --secret-file FILE NAME", which is add.
 */
int
cmd_endpoint_secret(struct settings *e, int argc, char **argv)
{
	struct endpoint_edit	a;

	if (argc >= 2 && strcmp(argv[1], "add") == 0)
		return cli_edit(e, argc - 1, argv + 1, &secret_add, &a,
		    sizeof(a));
	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		return secret_list(e, argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "revoke") == 0)
		return cli_edit(e, argc - 1, argv + 1, &secret_revoke, &a,
		    sizeof(a));
	return cli_edit(e, argc, argv, &secret_add, &a, sizeof(a));
}

/* ---- destination -------------------------------------------------- */

/* Reads and checks a destination's signing secret; -1 (reported). */
static ssize_t
dest_secret(const char *file, unsigned char *key)
{
	const char	*why;
	ssize_t		 n;

	if ((n = get_secret("--secret-file", file, key,
	    CONFIG_SECRET_MAX)) < 0)
		return -1;
	if ((why = config_check_dest_secret(key, (size_t)n)) != NULL) {
		refuse("--secret-file", file, why);
		return -1;
	}
	return n;
}

/*
 * A destination's URL and status URL at an internal address (link-local,
 * a cloud metadata service), unless it allows them: EXIT_OK, or reported
 * with the option, the URL, the host as libcurl reads it and why, and
 * EXIT_FAIL.
 */
static int
check_internal(const struct config_destination *d)
{
	const struct {
		const char	*opt;
		const char	*url;
	} u[] = { { "--url", d->url }, { "--status-url", d->status_url } };
	char		 host[HB_TEXT_MAX + 1], esc[HB_TEXT_MAX * 2];
	char		 why[HB_TEXT_MAX * 3];
	const char	*what;
	size_t		 i;

	if (d->allow_internal)
		return EXIT_OK;
	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		if (u[i].url[0] == '\0' || (what = config_check_address(
		    u[i].url, host, sizeof(host))) == NULL)
			continue;
		(void)snprintf(why, sizeof(why), "%s is %s: refused unless the"
		    " destination allows internal addresses (--allow-internal)",
		    text_escape(host, (size_t)-1, esc, sizeof(esc)), what);
		return refuse(u[i].opt, u[i].url, why);
	}
	return EXIT_OK;
}

/* What destination add and set read. */
struct dest_edit {
	struct config_destination	 d;
	const char			*name;	/* set: the operand */
	const char			*tenant, *url, *surl;	/* set's */
	const char			*keyfile;
	int				 idem, internal; /* -1: not given */
	int				 nosurl, timeout, attempts, noattempts;
	/* The delivery policy's: -1 (0 for the durations) not given. */
	int				 inflight, rate, failures;
	int64_t				 retry_for, cooldown;
	unsigned char			 key[CONFIG_SECRET_MAX + 1];
	ssize_t				 keylen;
};

#define CLI_ROWS_OF	struct dest_edit
static const struct cli_opt dest_opts[] = {
	/* add copies them at once; set keeps them for the row it reads. */
	CLI_OPT_TEXT("tenant", ADD, d.tenant, CLI_REQUIRED, NULL),
	CLI_OPT_PTR("tenant", SET, tenant, CLI_REQUIRED),
	CLI_OPT_TEXT("url", ADD, d.url, CLI_REQUIRED, NULL),
	CLI_OPT_PTR("url", SET, url, 0),
	CLI_OPT_ONE("idempotent", ADD | SET, idem, 1),
	CLI_OPT_ONE("not-idempotent", SET, idem, 0),
	CLI_OPT_TEXT("status-url", ADD, d.status_url, 0, NULL),
	CLI_OPT_PTR("status-url", SET, surl, 0),
	CLI_OPT_FLAG("no-status-url", SET, nosurl, 1),
	CLI_OPT_PTR("secret-file", ADD | SET, keyfile, 0),
	CLI_OPT_INT("timeout-ms", ADD | SET, timeout, 1, 600000),
	CLI_OPT_INT("max-attempts", ADD | SET, attempts, 1, 1000),
	CLI_OPT_FLAG("no-max-attempts", SET, noattempts, 1),
	CLI_OPT_DURATION("retry-for", ADD | SET, retry_for, 1,
	    DEST_RETRY_FOR_MAX_S),
	CLI_OPT_INT("max-in-flight", ADD | SET, inflight, 0, DEST_LIMIT_MAX),
	CLI_OPT_INT("rate", ADD | SET, rate, 0, DEST_LIMIT_MAX),
	CLI_OPT_INT("circuit-failures", ADD | SET, failures, 0,
	    DEST_LIMIT_MAX),
	CLI_OPT_DURATION("cool-down", ADD | SET, cooldown, 1,
	    DISPATCH_COOLDOWN_MAX_MS / 1000),
	CLI_OPT_ONE("allow-internal", ADD | SET, internal, 1),
	CLI_OPT_ONE("no-allow-internal", SET, internal, 0),
};

static void
dest_init(void *p)
{
	struct dest_edit	*a = p;

	a->idem = a->internal = -1;
	a->inflight = a->rate = a->failures = -1;
}

/* The delivery policy's options given, into d. */
static void
dest_policy(const struct dest_edit *a, struct config_destination *d)
{
	if (a->retry_for != 0)
		d->retry_for_s = a->retry_for;
	if (a->inflight != -1)
		d->max_in_flight = a->inflight;
	if (a->rate != -1)
		d->rate = a->rate;
	if (a->failures != -1)
		d->circuit_failures = a->failures;
	if (a->cooldown != 0)
		d->cooldown_s = a->cooldown;
}

/* Reads and checks --secret-file's key, when given. */
static int
dest_key(struct dest_edit *a)
{
	if (a->keyfile != NULL &&
	    (a->keylen = dest_secret(a->keyfile, a->key)) < 0)
		return EXIT_FAIL;
	return EXIT_OK;
}

static const char *
dest_tenant(const void *p)
{
	return ((const struct dest_edit *)p)->d.tenant;
}

static int
dest_add_check(void *p, char **operands)
{
	struct dest_edit		*a = p;
	struct config_destination	*d = &a->d;
	int				 rc;

	(void)operands;
	d->idempotent = a->idem == 1;
	d->allow_internal = a->internal == 1;
	d->timeout_ms = a->timeout != 0 ? a->timeout :
	    DEST_TIMEOUT_MS_DEFAULT;
	d->max_attempts = a->attempts;	/* 0: none, the horizon alone */
	d->retry_for_s = HB_RETRY_FOR_S_DEFAULT;
	d->circuit_failures = HB_CIRCUIT_FAILURES_DEFAULT;
	d->cooldown_s = HB_COOLDOWN_S_DEFAULT;
	dest_policy(a, d);
	if ((rc = check_name("destination NAME", d->name)) != EXIT_OK ||
	    (rc = check_name("--tenant", d->tenant)) != EXIT_OK ||
	    (rc = check_url("--url", d->url)) != EXIT_OK ||
	    (d->status_url[0] != '\0' &&
	    (rc = check_url("--status-url", d->status_url)) != EXIT_OK) ||
	    (rc = check_internal(d)) != EXIT_OK)
		return rc;
	return dest_key(a);
}

static int
dest_add_work(struct config *cfg, void *p)
{
	struct dest_edit	*a = p;
	const char		*why = NULL;
	int			 rc;

	if ((rc = need_tenant(cfg, a->d.tenant)) != EXIT_OK)
		return rc;
	return cli_config_done(config_destination_add(cfg, &a->d,
	    a->keylen > 0 ? a->key : NULL, (size_t)a->keylen, &why), a->d.name,
	    &why);
}

static int
dest_set_check(void *p, char **operands)
{
	struct dest_edit	*a = p;
	int			 rc;

	(void)operands;
	if (a->surl != NULL && a->nosurl) {
		cli_warn("--status-url and --no-status-url: one or the other");
		return EXIT_USAGE;
	}
	if (a->attempts != 0 && a->noattempts) {
		cli_warn("--max-attempts and --no-max-attempts: one or the"
		    " other");
		return EXIT_USAGE;
	}
	if ((a->url != NULL && (rc = check_url("--url", a->url)) != EXIT_OK) ||
	    (a->surl != NULL && (rc = check_url("--status-url", a->surl)) !=
	    EXIT_OK))
		return rc;
	return dest_key(a);
}

static int
dest_set_work(struct config *cfg, void *p)
{
	struct dest_edit		*a = p;
	struct config_destination	*d = &a->d;
	enum config_status		 crc;
	const char			*why = NULL;
	int				 rc;

	if ((crc = config_destination_get(cfg, a->tenant, a->name, d)) ==
	    CONFIG_NOTFOUND)
		return no_such("destination", a->name, a->tenant);
	if ((rc = cli_config_done(crc, a->name, NULL)) != EXIT_OK)
		return rc;
	if ((a->url != NULL && cli_set_field(d->url, sizeof(d->url), a->url,
	    "--url") != 0) || (a->surl != NULL && cli_set_field(d->status_url,
	    sizeof(d->status_url), a->surl, "--status-url") != 0))
		return EXIT_USAGE;
	if (a->nosurl)
		d->status_url[0] = '\0';
	if (a->idem != -1)
		d->idempotent = a->idem;
	if (a->timeout != 0)
		d->timeout_ms = a->timeout;
	if (a->attempts != 0)
		d->max_attempts = a->attempts;
	if (a->noattempts)
		d->max_attempts = 0;
	dest_policy(a, d);
	if (a->internal != -1)
		d->allow_internal = a->internal;
	/* The row as it will be: a URL kept is judged too. */
	if ((rc = check_internal(d)) != EXIT_OK)
		return rc;
	return cli_config_done(config_destination_update(cfg, d, a->keylen > 0 ?
	    a->key : NULL, (size_t)a->keylen, &why), a->name, &why);
}

static const struct cli_edit dest_add = {
	"destination", "add", CLI_OPTIONS(dest_opts), .cmd = ADD,
	.operand = CLI_OPT_TEXT("destination", 0, d.name, 0, NULL),
	.noperands = 1, .done = "added", .init = dest_init,
	.check = dest_add_check,
	.work = dest_add_work, .tenant = dest_tenant,
};
static const struct cli_edit dest_set = {
	"destination", "set", CLI_OPTIONS(dest_opts), .cmd = SET,
	.operand = CLI_OPT_PTR("destination", 0, name, 0), .noperands = 1,
	.change = 1, .done = "updated", .init = dest_init,
	.check = dest_set_check, .work = dest_set_work, .tenant = dest_tenant,
};
#undef CLI_ROWS_OF

/* ---- job ---------------------------------------------------------- */

/* What job add reads, and whether the job was there already, the same. */
struct job_edit {
	struct config_job	j;
	int			present;
};

#define CLI_ROWS_OF	struct job_edit
static const struct cli_opt job_opts[] = {
	CLI_OPT_TEXT("tenant", ADD, j.tenant, CLI_REQUIRED, NULL),
	CLI_OPT_TEXT("attempt", ADD, j.attempt, CLI_REQUIRED, NULL),
	CLI_OPT_TEXT("step", ADD, j.step, CLI_REQUIRED, NULL),
	CLI_OPT_TEXT("destination", ADD, j.destination, CLI_REQUIRED, NULL),
	CLI_OPT_TEXT("source-url", ADD, j.source_url, 0, NULL),
	CLI_OPT_TEXT("output", ADD, j.output, 0, NULL),
};

static const char *
job_tenant(const void *p)
{
	return ((const struct job_edit *)p)->j.tenant;
}

/* A job there already, the same: said so, instead of "added". */
static int
job_said(const void *p)
{
	const struct job_edit	*a = p;

	if (!a->present)
		return 0;
	printf("job %s of tenant %s present already, the same\n",
	    a->j.job_id, a->j.tenant);
	return 1;
}

static int
job_add_check(void *p, char **operands)
{
	struct config_job	*j = &((struct job_edit *)p)->j;
	const char		*why;
	int			 rc;

	(void)operands;
	if ((rc = check_name("--tenant", j->tenant)) != EXIT_OK ||
	    (rc = check_name("--attempt", j->attempt)) != EXIT_OK ||
	    (rc = check_name("--step", j->step)) != EXIT_OK ||
	    (rc = check_name("--destination", j->destination)) != EXIT_OK)
		return rc;
	if (j->output[0] != '\0' &&
	    (why = config_check_output(j->output)) != NULL)
		return refuse("--output", j->output, why);
	return EXIT_OK;
}

static int
job_add_work(struct config *cfg, void *p)
{
	struct job_edit			*a = p;
	struct config_job		*j = &a->j;
	struct config_destination	 d;
	const char			*why = NULL;
	char				 other[HB_ID_MAX + 1], msg[1024];
	enum config_status		 crc;
	int				 rc;

	/* A registrar learns nothing of another tenant's configuration. */
	if ((crc = config_registrar_allows(cfg, j->tenant, &why)) !=
	    CONFIG_OK)
		return cli_config_done(crc, j->tenant, &why);
	if ((rc = need_tenant(cfg, j->tenant)) != EXIT_OK)
		return rc;
	if ((crc = config_destination_get(cfg, j->tenant, j->destination,
	    &d)) == CONFIG_NOTFOUND)
		return no_such("destination", j->destination, j->tenant);
	if ((rc = cli_config_done(crc, j->destination, NULL)) != EXIT_OK)
		return rc;
	/* One job per action id: a second would only ever conflict. */
	crc = config_job_of_action(cfg, j->tenant, j->attempt, j->step,
	    other, sizeof(other));
	if (crc == CONFIG_OK && strcmp(other, j->job_id) != 0) {
		cli_warn("job add: attempt %s and step %s of tenant %s already"
		    " belong to job %s (action %s:%s:%s)", j->attempt, j->step,
		    j->tenant, other, j->tenant, j->attempt, j->step);
		return EXIT_FAIL;
	}
	if (crc != CONFIG_OK && crc != CONFIG_NOTFOUND)
		return cli_config_done(crc, j->job_id, NULL);
	/* Registered twice: the same is fine, another is named. */
	if ((crc = config_job_import(cfg, j, &a->present, &why)) ==
	    CONFIG_EXISTS) {
		cli_job_conflict(cfg, j, why, msg, sizeof(msg));
		cli_warn("job add: job %s of tenant %s %s", j->job_id,
		    j->tenant, msg);
		return EXIT_FAIL;
	}
	return cli_config_done(crc, j->job_id, &why);
}

static const struct cli_edit job_add = {
	"job", "add", CLI_OPTIONS(job_opts), .cmd = ADD,
	.operand = CLI_OPT_TEXT("job", 0, j.job_id, 0, NULL), .noperands = 1,
	.done = "added", .check = job_add_check, .work = job_add_work,
	.tenant = job_tenant, .said = job_said,
};
#undef CLI_ROWS_OF

/* ---- remove, for every table ------------------------------------ */

/* What remove reads: --tenant for a destination or a job, else none. */
struct remove_edit {
	const char	*key, *tenant;
};

#define CLI_ROWS_OF	struct remove_edit
static const struct cli_opt remove_opts[] = {
	CLI_OPT_PTR("tenant", REMOVE, tenant, 0),
};

/* The table the command's word names, and whether --tenant scopes it. */
static int
remove_scoped(enum config_table *t)
{
	if (cli_table_of(cli_cmd->name, t) != 0)
		return -1;
	return *t == CONFIG_DESTINATIONS || *t == CONFIG_JOBS;
}

static int
remove_check(void *p, char **operands)
{
	struct remove_edit	*a = p;
	enum config_table	 t;

	(void)operands;
	if (remove_scoped(&t) != (a->tenant != NULL))
		return cli_usage();
	return EXIT_OK;
}

static int
remove_work(struct config *cfg, void *p)
{
	struct remove_edit	*a = p;
	enum config_table	 t;
	enum config_status	 crc;
	const char		*kind = NULL, *key = a->key;
	char			 by[HB_ID_MAX + 1];
	const char		*why = NULL;
	int			 scoped = remove_scoped(&t);

	if (t == CONFIG_JOBS && (crc = config_registrar_allows(cfg, a->tenant,
	    &why)) != CONFIG_OK)
		return cli_config_done(crc, a->tenant, &why);
	crc = scoped ? config_remove(cfg, t, a->tenant, key) :
	    config_remove(cfg, t, key, NULL);
	if (crc == CONFIG_NOTFOUND)
		return no_such(cli_cmd->name, key, a->tenant);
	if (crc == CONFIG_REFUSED &&
	    (t == CONFIG_TENANTS || t == CONFIG_DESTINATIONS) &&
	    config_referrer(cfg, t, scoped ? a->tenant : key, scoped ? key :
	    NULL, &kind, by, sizeof(by)) == CONFIG_OK) {
		/* Name the row that holds it: it is to be removed first. */
		cli_warn("%s %s%s%s: still referenced by %s %s", cli_cmd->name,
		    key, scoped ? " of tenant " : "", scoped ? a->tenant : "",
		    kind, by);
		return EXIT_FAIL;
	}
	return cli_config_done(crc, key, NULL);
}

/* Any entity's remove: the command's first word says which. */
static const struct cli_edit remove_row = {
	NULL, "remove", CLI_OPTIONS(remove_opts), .cmd = REMOVE,
	.operand = CLI_OPT_PTR("key", 0, key, 0), .noperands = 1,
	.check = remove_check, .work = remove_work,
};
#undef CLI_ROWS_OF

/* ---- the edits' one entry --------------------------------------- */

/* What any edit reads. */
union edit_args {
	struct tenant_edit	t;
	struct endpoint_edit	ep;
	struct dest_edit	d;
	struct job_edit		j;
	struct remove_edit	r;
};

/*
 * tenant, endpoint, destination and job add, set and remove: the edit
 * its words name, run by cli_edit().
 */
int
cmd_edit(struct settings *e, int argc, char **argv)
{
	static const struct cli_edit *const edits[] = {
		&tenant_add, &tenant_set, &endpoint_add, &endpoint_set,
		&dest_add, &dest_set, &job_add, &remove_row,
	};
	union edit_args	a;
	size_t		i;

	for (i = 0; i < sizeof(edits) / sizeof(edits[0]); i++)
		if ((edits[i]->name == NULL ||
		    strcmp(edits[i]->name, cli_cmd->name) == 0) &&
		    strcmp(edits[i]->sub, cli_cmd->sub) == 0)
			return cli_edit(e, argc, argv, edits[i], &a,
			    sizeof(a));
	return cli_usage();
}


/* ---- sign --------------------------------------------------------- */

/* No header: scheme_sign() makes up those the scheme signs. */
static const char *
no_header(const void *arg, const char *name)
{
	(void)arg;
	(void)name;
	return NULL;
}

/*
 * Signs body (len bytes) at t with the scheme of endpoint ep (its first
 * active secret, or for ed25519 the private key in file key) and prints
 * the headers a provider would send.  Returns an exit code.
 */
static int
sign_scheme(struct config *cfg, const struct config_endpoint *ep,
    const struct config_secrets *sec, const char *key, const char *query,
    int64_t t, const char *body, size_t len)
{
	struct scheme_header	 out[SCHEME_OUT_MAX];
	struct scheme_req	 r;
	struct mapping		*m = NULL;
	const struct scheme	*s;
	unsigned char		 buf[CONFIG_SECRET_MAX + 1];
	const unsigned char	*secret;
	ssize_t			 n = 0;
	size_t			 nout = 0, i;
	int			 rc;

	if ((rc = endpoint_scheme(cfg, ep, &m)) != EXIT_OK)
		return rc;
	s = mapping_scheme(m);
	rc = EXIT_FAIL;
	if (strcmp(scheme_algorithm(s), "ed25519") == 0) {
		if (key == NULL) {
			cli_warn("%s: an ed25519 scheme signs with the sender's"
			    " private key: --private-key FILE", ep->name);
			rc = EXIT_USAGE;
			goto out;
		}
		if ((n = get_secret("--private-key", key, buf,
		    CONFIG_SECRET_MAX)) < 0)
			goto out;
		secret = buf;
	} else if (sec->n == 0) {
		cli_warn("%s: no active secret", ep->name);
		goto out;
	} else {
		secret = sec->s[0].key;
		n = (ssize_t)sec->s[0].keylen;
	}
	memset(&r, 0, sizeof(r));
	r.header = no_header;
	r.body = (const unsigned char *)body;
	r.bodylen = len;
	r.query = query;
	r.now_ms = t * 1000;
	if (scheme_sign(s, &r, secret, (size_t)n, out, &nout) != 0) {
		cli_warn("%s: the secret does not decode as the scheme's key",
		    ep->name);
		goto out;
	}
	for (i = 0; i < nout; i++)
		printf("%s: %s\n", out[i].name, out[i].value);
	rc = EXIT_OK;
out:
	sodium_memzero(buf, sizeof(buf));
	sodium_memzero(out, sizeof(out));
	mapping_free(m);
	return rc;
}

int
cmd_sign(struct settings *e, int argc, char **argv)
{
	struct other_opts	 a;
	struct config_endpoint	 ep;
	struct config_secrets	 sec;
	struct config		*cfg = NULL;
	const char		*name, *hname;
	char			*body = NULL, sig[AUTH_HEADER_MAX], id[40];
	unsigned char		 rnd[12];
	size_t			 len;
	int64_t			 now = util_now(), t;
	int			 rc;

	memset(&sec, 0, sizeof(sec));
	if ((rc = other_args(argc, argv, SIGN, 0, &a)) != EXIT_OK)
		return rc;
	if ((name = a.endpoint) == NULL)
		return cli_usage();
	t = a.t;
	if ((rc = cli_read_body(&body, &len)) != EXIT_OK)
		goto out;
	if ((rc = cli_open_config(e, CONFIG_READ, &cfg)) != EXIT_OK)
		goto out;
	if ((rc = cli_config_done(config_endpoint_get(cfg, name, &ep), name,
	    NULL)) != EXIT_OK ||
	    (rc = cli_config_done(config_endpoint_secrets(cfg, name, now, &sec),
	    name, NULL)) != EXIT_OK)
		goto out;
	if ((a.key != NULL || a.query != NULL) &&
	    ep.auth != CONFIG_AUTH_SCHEME) {
		cli_warn("--private-key and --query: for an endpoint of auth"
		    " scheme");
		rc = EXIT_USAGE;
		goto out;
	}
	rc = EXIT_FAIL;
	switch (ep.auth) {
	case CONFIG_AUTH_KEY:
		cli_warn("%s: key endpoints keep only a hash; send the key in"
		    " %s", name, ep.key_header);
		goto out;
	case CONFIG_AUTH_HMAC:
		hname = ep.key_header[0] != '\0' ? ep.key_header :
		    WEBHOOK_HMAC_HEADER;
		if (auth_sign_tsig(sec.s, sec.n, now, t,
		    (const unsigned char *)body, len, sig,
		    sizeof(sig)) != 0) {
			cli_warn("%s: no active secret", name);
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
		    len, sig, sizeof(sig)) != 0) {
			cli_warn("%s: no active secret that decodes", name);
			goto out;
		}
		printf("webhook-id: %s\nwebhook-timestamp: %lld\n"
		    "webhook-signature: %s\n", id, (long long)t, sig);
		break;
	case CONFIG_AUTH_SCHEME:
		rc = sign_scheme(cfg, &ep, &sec, a.key, a.query, t, body, len);
		goto out;
	}
	rc = EXIT_OK;
out:
	config_secrets_clear(&sec);
	config_close(cfg);
	free(body);
	return rc;
}
