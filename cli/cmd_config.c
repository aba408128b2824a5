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

#include "access.h"
#include "config_admin.h"
#include "config_bulk.h"
#include "config_check.h"
#include "config_edit.h"
#include "config_map.h"
#include "hook.h"
#include "mapping.h"
#include "pg_schema.h"
#include "store.h"
#include "text.h"
#include "util.h"

#include "cli.h"
#include "table.h"

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
grants_of(const char *role, char *buf, size_t len)
{
	char	esc[HB_ID_MAX * 2];

	if (pg_schema_grants(role, buf, len) == 0)
		return 0;
	cli_warn("role \"%s\": expected 1..63 of a-z 0-9 _, not starting with"
	    " a digit", text_escape(role, (size_t)-1, esc, sizeof(esc)));
	return -1;
}

/*
 * Runs role's GRANT lines (one transaction) on e's database as the
 * connecting (admin) role; role is one grants_of() took.  Returns an
 * exit code, reported.
 */
static int
grant(const struct settings *e, const char *role)
{
	char			why[512];
	enum access_status	rc;

	switch ((rc = access_grant(e->dir, e->busy_ms, role, why,
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
	printf("granted %s: read hookbox_config, write hookbox_state\n", role);
	return EXIT_OK;
}

/*
 * Upgrades an existing configuration to this release's schema, saying so
 * when it did.  Returns an exit code, reported.
 */
static int
upgrade(const struct settings *e)
{
	enum config_status	rc;
	int			from = 0;

	if ((rc = config_upgrade(e->config_path, e->busy_ms, &from)) !=
	    CONFIG_OK) {
		if (!e->pg || rc == CONFIG_NOMEM || !cli_pg_unreachable(e))
			cli_warn("%s: upgrading the configuration's schema:"
			    " %s%s", settings_config_name(e),
			    config_strerror(rc), e->pg ? " (as the schema's"
			    " owner, the admin role?)" : "");
		return config_exit(rc);
	}
	if (from != CONFIG_SCHEMA_VERSION)
		printf("upgraded %s: configuration schema version %d to %d\n",
		    settings_config_name(e), from, CONFIG_SCHEMA_VERSION);
	return EXIT_OK;
}

/*
 * init [--grant ROLE]...: a directory gets config.db and state.db; a
 * PostgreSQL database its two schemas, and each ROLE the grants a serving
 * role needs.  Run twice, it changes nothing (grants are idempotent).
 */
int
cmd_init(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "grant", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 }
	};
	struct store		*st = NULL;
	enum config_status	 crc;
	const char		*roles[GRANTS_MAX];
	char			 text[GRANTS_LEN];
	int			 ch, rc, i, nroles = 0;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'g':
			if (nroles == GRANTS_MAX) {
				cli_warn("--grant: at most %d roles",
				    GRANTS_MAX);
				return usage();
			}
			if (grants_of(optarg, text, sizeof(text)) != 0)
				return usage();
			roles[nroles++] = optarg;
			break;
		default:
			return usage();
		}
	if (optind != argc)
		return usage();
	if (nroles > 0 && !e->pg) {
		cli_warn("--grant: only for a PostgreSQL database; a"
		    " directory's files are guarded by their modes");
		return EXIT_FAIL;
	}
	if (!e->pg && mkdir(e->dir, 0750) != 0 && errno != EEXIST) {
		cli_warn("%s: %s", e->dir, strerror(errno));
		return EXIT_FAIL;
	}
	crc = config_create(e->config_path);
	if (crc != CONFIG_OK && crc != CONFIG_EXISTS) {
		if (!e->pg || crc == CONFIG_NOMEM || !cli_pg_unreachable(e))
			cli_warn("%s: %s", settings_config_name(e),
			    config_strerror(crc));
		return config_exit(crc);
	}
	/* There already: brought up to this release's schema. */
	if (crc == CONFIG_EXISTS && (rc = upgrade(e)) != EXIT_OK)
		return rc;
	if ((rc = open_store(e, 1, &st)) != EXIT_OK)
		return rc;
	store_close(st);
	printf("initialised %s\n", e->shown);
	for (i = 0; i < nroles; i++)
		if ((rc = grant(e, roles[i])) != EXIT_OK)
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
	char	text[GRANTS_LEN], *p, *semi;

	(void)e;
	if (argc != 2 || argv[1][0] == '-')
		return usage();
	if (grants_of(argv[1], text, sizeof(text)) != 0)
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
	return read_secret(path, buf, max);
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
	return config_done(rc, id, NULL);
}

/* Commits cfg's transaction when rc is EXIT_OK, else rolls it back. */
static int
finish(struct config *cfg, int rc, const char *what)
{
	if (rc == EXIT_OK)
		rc = config_done(config_commit(cfg), what, NULL);
	if (rc != EXIT_OK)
		config_rollback(cfg);
	config_close(cfg);
	return rc;
}

/* Opens config.db for writing and starts its transaction. */
static int
begin(struct settings *e, struct config **cfg, const char *what)
{
	int	rc;

	if ((rc = open_config(e, CONFIG_WRITE, cfg)) != EXIT_OK)
		return rc;
	if ((rc = config_done(config_begin(*cfg), what, NULL)) != EXIT_OK) {
		config_close(*cfg);
		*cfg = NULL;
	}
	return rc;
}

/* ---- tenant ------------------------------------------------------- */

int
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
	if ((rc = check_name("tenant ID", t.id)) != EXIT_OK ||
	    (t.status_base[0] != '\0' &&
	    (rc = check_url("--status-base", t.status_base)) != EXIT_OK))
		return rc;
	if (keyfile != NULL &&
	    (keylen = get_secret("--api-key-file", keyfile, key,
	    CONFIG_SECRET_MAX)) < 0)
		return EXIT_FAIL;
	if (keylen > 0 && (why = config_check_api_key(key,
	    (size_t)keylen)) != NULL) {
		rc = refuse("--api-key-file", keyfile, why);
		goto out;
	}
	if ((rc = open_config(e, CONFIG_WRITE, &cfg)) == EXIT_OK) {
		rc = config_done(config_tenant_add(cfg, &t, keylen > 0 ? key :
		    NULL, (size_t)keylen, &why), t.id, &why);
		config_close(cfg);
	}
out:
	sodium_memzero(key, sizeof(key));
	return rc;
}

int
cmd_tenant_set(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "active", no_argument, NULL, 'a' },
		{ "inactive", no_argument, NULL, 'i' },
		{ "status-base", required_argument, NULL, 'b' },
		{ "api-key-file", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 }
	};
	struct config_tenant	 t;
	struct config		*cfg = NULL;
	unsigned char		 key[CONFIG_SECRET_MAX + 1];
	ssize_t			 keylen = 0;
	const char		*keyfile = NULL, *base = NULL, *why = NULL;
	const char		*id;
	enum config_status	 crc;
	int			 ch, rc, active = -1;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'a':
		case 'i':
			if (active != -1 && active != (ch == 'a')) {
				cli_warn("--active and --inactive: one or"
				    " the other");
				return EXIT_USAGE;
			}
			active = ch == 'a';
			break;
		case 'b':
			base = optarg;
			break;
		case 'k':
			keyfile = optarg;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 || (active == -1 && base == NULL &&
	    keyfile == NULL))
		return usage();
	id = argv[optind];
	if (base != NULL && (rc = check_url("--status-base", base)) != EXIT_OK)
		return rc;
	if (keyfile != NULL &&
	    (keylen = get_secret("--api-key-file", keyfile, key,
	    CONFIG_SECRET_MAX)) < 0)
		return EXIT_FAIL;
	if (keylen > 0 && (why = config_check_api_key(key,
	    (size_t)keylen)) != NULL) {
		rc = refuse("--api-key-file", keyfile, why);
		goto out;
	}
	if ((rc = begin(e, &cfg, id)) != EXIT_OK)
		goto out;
	if ((crc = config_tenant_get(cfg, id, &t)) == CONFIG_NOTFOUND)
		rc = no_such("tenant", id, NULL);
	else if ((rc = config_done(crc, id, NULL)) == EXIT_OK) {
		if (active != -1)
			t.active = active;
		if (base != NULL && set_field(t.status_base,
		    sizeof(t.status_base), base, "--status-base") != 0)
			rc = EXIT_USAGE;
		else
			rc = config_done(config_tenant_update(cfg, &t,
			    keylen > 0 ? key : NULL, (size_t)keylen, &why),
			    id, &why);
	}
	rc = finish(cfg, rc, id);
out:
	sodium_memzero(key, sizeof(key));
	return rc;
}

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
		/* mapping.h's words for a failed allocation. */
		return strcmp(why, "out of memory") == 0 ? EXIT_FAIL :
		    EXIT_USAGE;
	}
	return EXIT_OK;
}

/*
 * Reports config_endpoint_add_mapped()'s or
 * config_endpoint_set_mapping()'s outcome: a refused mapping with its
 * file and why, anything else as config_done() does.
 */
static int
mapping_done(enum config_status rc, const char *name, const char *file,
    const char *why)
{
	if ((rc == CONFIG_INVALID || rc == CONFIG_REFUSED) && why[0] != '\0')
		return refuse("--mapping", file, why);
	return config_done(rc, name, NULL);
}

/*
 * Reads a new secret for an endpoint of auth mode a from file, checks it
 * and adds it (inside the caller's transaction).  Returns an exit code.
 */
static int
add_secret(struct config *cfg, const char *endpoint, enum config_auth a,
    const char *file, int64_t expires)
{
	unsigned char	 buf[CONFIG_SECRET_MAX + 1];
	ssize_t		 n;
	const char	*why = NULL;
	int		 rc;

	if ((n = get_secret("--secret-file", file, buf,
	    CONFIG_SECRET_MAX)) < 0)
		return EXIT_FAIL;
	if ((why = config_check_secret(a, buf, (size_t)n)) != NULL)
		rc = refuse("--secret-file", file, why);
	else
		rc = config_done(config_secret_add(cfg, endpoint, buf,
		    (size_t)n, expires, &why), endpoint, &why);
	sodium_memzero(buf, sizeof(buf));
	return rc;
}

int
cmd_endpoint_add(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tenant", required_argument, NULL, 't' },
		{ "kind", required_argument, NULL, 'k' },
		{ "mapping", required_argument, NULL, 'M' },
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
	struct mapping		*m = NULL;
	const char		*secret = NULL, *why = NULL, *exp = NULL;
	const char		*mapfile = NULL;
	char			*map = NULL, mwhy[512];
	size_t			 maplen = 0;
	long long		 v;
	int64_t			 expires = 0;
	int			 ch, rc, kind = 0;

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
				cli_warn("--kind \"%s\": expected tornado-job,"
				    " tornado-org or mapped", optarg);
				return EXIT_USAGE;
			}
			kind = 1;
			break;
		case 'M':
			mapfile = optarg;
			break;
		case 'a':
			if (config_auth_parse(optarg, &ep.auth) != 0) {
				cli_warn("--auth \"%s\": expected hmac, key or"
				    " standard", optarg);
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
			exp = optarg;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 || ep.tenant[0] == '\0' || secret == NULL ||
	    set_field(ep.name, sizeof(ep.name), argv[optind], "endpoint") != 0)
		return usage();
	/* A mapping says the kind; a kind mapped needs one. */
	if (mapfile != NULL && !kind)
		ep.kind = CONFIG_KIND_MAPPED;
	if (ep.kind == CONFIG_KIND_MAPPED && mapfile == NULL) {
		cli_warn("--kind mapped needs --mapping FILE");
		return EXIT_USAGE;
	}
	if (ep.kind != CONFIG_KIND_MAPPED && mapfile != NULL) {
		cli_warn("--mapping: only for --kind mapped, not %s",
		    config_kind_name(ep.kind));
		return EXIT_USAGE;
	}
	if (mapfile != NULL && strcmp(mapfile, "-") == 0 &&
	    strcmp(secret, "-") == 0) {
		cli_warn("--mapping - and --secret-file -: standard input can"
		    " be only one of them");
		return EXIT_USAGE;
	}
	if (ep.auth == CONFIG_AUTH_KEY && ep.key_header[0] == '\0') {
		cli_warn("--auth key needs --header");
		return EXIT_USAGE;
	}
	if (exp != NULL &&
	    (rc = parse_expiry(exp, util_now(), &expires)) != EXIT_OK)
		return rc;
	if ((why = config_check_endpoint_name(ep.name)) != NULL)
		return refuse("endpoint NAME", ep.name, why);
	if ((rc = check_name("--tenant", ep.tenant)) != EXIT_OK)
		return rc;
	if (mapfile != NULL &&
	    (rc = get_mapping(mapfile, &map, &maplen, &m)) != EXIT_OK)
		return rc;
	/* The endpoint and its first secret commit together or not at all. */
	if ((rc = begin(e, &cfg, ep.name)) != EXIT_OK)
		goto out;
	if ((rc = need_tenant(cfg, ep.tenant)) == EXIT_OK) {
		if (m != NULL)
			rc = mapping_done(config_endpoint_add_mapped(cfg, &ep,
			    map, maplen, mwhy, sizeof(mwhy)), ep.name, mapfile,
			    mwhy);
		else
			rc = config_done(config_endpoint_add(cfg, &ep, &why),
			    ep.name, &why);
	}
	if (rc == EXIT_OK)
		rc = add_secret(cfg, ep.name, ep.auth, secret, expires);
	if ((rc = finish(cfg, rc, ep.name)) == EXIT_OK && m != NULL)
		printf("endpoint %s added: kind mapped, its actions to"
		    " destination %s\n", ep.name, mapping_destination(m));
out:
	mapping_free(m);
	free(map);
	return rc;
}

int
cmd_endpoint_set(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "header", required_argument, NULL, 'h' },
		{ "key-header", required_argument, NULL, 'h' },
		{ "tolerance", required_argument, NULL, 'T' },
		{ "mapping", required_argument, NULL, 'M' },
		{ NULL, 0, NULL, 0 }
	};
	struct config_endpoint	 ep;
	struct config		*cfg = NULL;
	struct mapping		*m = NULL;
	const char		*header = NULL, *name, *why = NULL;
	const char		*mapfile = NULL;
	char			*map = NULL, mwhy[512];
	size_t			 maplen = 0;
	enum config_status	 crc;
	long long		 v;
	int64_t			 tolerance = 0;
	int			 ch, rc;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'h':
			header = optarg;
			break;
		case 'T':
			if (parse_int(optarg, 1, 86400, "--tolerance", &v) != 0)
				return EXIT_USAGE;
			tolerance = v;
			break;
		case 'M':
			mapfile = optarg;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 || (header == NULL && tolerance == 0 &&
	    mapfile == NULL))
		return usage();
	name = argv[optind];
	if (mapfile != NULL &&
	    (rc = get_mapping(mapfile, &map, &maplen, &m)) != EXIT_OK)
		return rc;
	if ((rc = begin(e, &cfg, name)) != EXIT_OK)
		goto out;
	if ((crc = config_endpoint_get(cfg, name, &ep)) == CONFIG_NOTFOUND)
		rc = no_such("endpoint", name, NULL);
	else if ((rc = config_done(crc, name, NULL)) != EXIT_OK)
		;
	else if (header != NULL && ep.auth == CONFIG_AUTH_STANDARD)
		rc = refuse("--header", header, "a standard endpoint takes"
		    " none (it reads webhook-id, webhook-timestamp and"
		    " webhook-signature)");
	else if (m != NULL && ep.kind != CONFIG_KIND_MAPPED) {
		(void)snprintf(mwhy, sizeof(mwhy), "endpoint %s is of kind %s:"
		    " only kind mapped has a mapping", name,
		    config_kind_name(ep.kind));
		rc = refuse("--mapping", mapfile, mwhy);
	} else if (header != NULL && set_field(ep.key_header,
	    sizeof(ep.key_header), header, "--header") != 0)
		rc = EXIT_USAGE;
	else {
		if (tolerance != 0)
			ep.tolerance = tolerance;
		if (header != NULL || tolerance != 0)
			rc = config_done(config_endpoint_update(cfg, &ep,
			    &why), name, &why);
		if (rc == EXIT_OK && m != NULL)
			rc = mapping_done(config_endpoint_set_mapping(cfg,
			    name, map, maplen, mwhy, sizeof(mwhy)), name,
			    mapfile, mwhy);
	}
	if ((rc = finish(cfg, rc, name)) == EXIT_OK && m != NULL)
		printf("endpoint %s: mapping replaced, its actions to"
		    " destination %s\n", name, mapping_destination(m));
out:
	mapping_free(m);
	free(map);
	return rc;
}

/*
 * endpoint show [--mapping] NAME: the endpoint as one JSON object (the
 * fields of endpoint list --json, its mapping as JSON); with --mapping,
 * its mapping alone, canonical, as endpoint add --mapping takes it.
 */
int
cmd_endpoint_show(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mapping", no_argument, NULL, 'M' },
		{ NULL, 0, NULL, 0 }
	};
	struct config_endpoint	 ep;
	struct config		*cfg = NULL;
	cJSON			*arr = NULL, *row, *v;
	enum config_status	 crc;
	const char		*name;
	char			*text = NULL, *out = NULL;
	int			 ch, rc, only = 0;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'M':
			only = 1;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1)
		return usage();
	name = argv[optind];
	if ((rc = open_config(e, CONFIG_READ, &cfg)) != EXIT_OK)
		return rc;
	if (only) {
		if ((crc = config_endpoint_get(cfg, name, &ep)) ==
		    CONFIG_NOTFOUND)
			rc = no_such("endpoint", name, NULL);
		else if ((rc = config_done(crc, name, NULL)) == EXIT_OK &&
		    (rc = config_done(config_endpoint_mapping(cfg, name,
		    &text), name, NULL)) == EXIT_OK && text == NULL) {
			cli_warn("endpoint show: endpoint %s is of kind %s: it"
			    " has no mapping", name, config_kind_name(ep.kind));
			rc = EXIT_FAIL;
		}
		if (rc == EXIT_OK)
			puts(text);
		goto out;
	}
	if ((rc = config_done(config_list(cfg, CONFIG_ENDPOINTS, NULL, &arr),
	    name, NULL)) != EXIT_OK)
		goto out;
	cJSON_ArrayForEach(row, arr) {
		v = cJSON_GetObjectItemCaseSensitive(row, "name");
		if (cJSON_IsString(v) && strcmp(v->valuestring, name) == 0)
			break;
	}
	if (row == NULL)
		rc = no_such("endpoint", name, NULL);
	else if ((out = cJSON_Print(row)) == NULL) {
		cli_warn("out of memory");
		rc = EXIT_FAIL;
	} else
		puts(out);
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
	list_time(t * 1000, buf, len);
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
};

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
	char			 id[24], c[32], x[32];
	const char		*row[4];
	int			 act = secret_active(si, w->now);

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
		    cJSON_AddBoolToObject(o, "active", act) == NULL)
			return -1;
	} else if (w->tab != NULL) {
		(void)snprintf(id, sizeof(id), "%lld", (long long)si->id);
		row[0] = id;
		row[1] = secret_time(si->created_at, c, sizeof(c));
		row[2] = secret_time(si->expires_at, x, sizeof(x));
		row[3] = act ? "yes" : "no";
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
	return config_done(rc, name, NULL);
}

static int
secret_add(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "secret-file", required_argument, NULL, 's' },
		{ "expires", required_argument, NULL, 'x' },
		{ "retire-others-after", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 }
	};
	struct config_endpoint	 ep;
	struct secret_walk	 w;
	struct config		*cfg = NULL;
	const char		*secret = NULL, *exp = NULL, *name;
	char			 buf[64], when[32], esc[64];
	enum config_status	 crc;
	int64_t			 now = util_now(), expires = 0, retire = 0;
	int			 ch, rc, n = 0;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 's':
			secret = optarg;
			break;
		case 'x':
			exp = optarg;
			break;
		case 'r':
			/* A duration: the +DURATION form of a time. */
			if (optarg[0] == '+' || (size_t)snprintf(buf,
			    sizeof(buf), "+%s", optarg) >= sizeof(buf) ||
			    util_parse_time(buf, now, &retire) != 0) {
				cli_warn("--retire-others-after \"%s\":"
				    " expected N followed by s, m, h or d",
				    text_escape(optarg, (size_t)-1, esc,
				    sizeof(esc)));
				return EXIT_USAGE;
			}
			/* "0": at once, which an expiry of now means. */
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 || secret == NULL)
		return usage();
	name = argv[optind];
	if (exp != NULL && (rc = parse_expiry(exp, now, &expires)) != EXIT_OK)
		return rc;
	if ((rc = begin(e, &cfg, name)) != EXIT_OK)
		return rc;
	if ((crc = config_endpoint_get(cfg, name, &ep)) == CONFIG_NOTFOUND) {
		rc = no_such("endpoint", name, NULL);
		goto out;
	}
	if ((rc = config_done(crc, name, NULL)) != EXIT_OK)
		goto out;
	/* The others first: the new one must not retire itself. */
	if (retire != 0 && (rc = config_done(config_secret_retire(cfg, name,
	    retire, &n), name, NULL)) != EXIT_OK)
		goto out;
	if ((rc = add_secret(cfg, name, ep.auth, secret, expires)) != EXIT_OK)
		goto out;
	memset(&w, 0, sizeof(w));
	w.now = now;
	if ((rc = walk_secrets(cfg, name, &w)) != EXIT_OK)
		goto out;
	printf("endpoint %s: secret %lld added, expires %s\n", name,
	    (long long)w.last, secret_time(expires, buf, sizeof(buf)));
	if (retire != 0)
		printf("endpoint %s: %d other secret%s now expire%s at %s\n",
		    name, n, n == 1 ? "" : "s", n == 1 ? "s" : "",
		    secret_time(retire, when, sizeof(when)));
out:
	return finish(cfg, rc, name);
}

static int
secret_list(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	static const struct table_col cols[] = {
		{ "ID", TABLE_RIGHT, 0 }, { "CREATED", TABLE_LEFT, 0 },
		{ "EXPIRES", TABLE_LEFT, 0 }, { "ACTIVE", TABLE_LEFT, 0 },
	};
	struct secret_walk	 w;
	struct config		*cfg = NULL;
	int			 ch, rc, json = 0;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'j':
			json = 1;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1)
		return usage();
	memset(&w, 0, sizeof(w));
	w.now = util_now();
	if (json ? (w.arr = cJSON_CreateArray()) == NULL :
	    (w.tab = table_new(cols, 4)) == NULL) {
		cli_warn("out of memory");
		return EXIT_FAIL;
	}
	if ((rc = open_config(e, CONFIG_READ, &cfg)) == EXIT_OK) {
		rc = walk_secrets(cfg, argv[optind], &w);
		config_close(cfg);
	}
	if (rc == EXIT_OK && json) {
		rc = print_json(w.arr);
		w.arr = NULL;
	} else if (rc == EXIT_OK)
		table_print(w.tab, stdout);
	cJSON_Delete(w.arr);
	table_free(w.tab);
	return rc;
}

static int
secret_revoke(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ NULL, 0, NULL, 0 }
	};
	struct secret_walk	 w;
	struct config		*cfg = NULL;
	const char		*name;
	long long		 id;
	int			 rc;

	/* No options: any is a usage error. */
	if (next_opt(argc, argv, opts) != -1 || argc - optind != 2)
		return usage();
	name = argv[optind];
	if (parse_int(argv[optind + 1], 1, INT64_MAX, "secret ID", &id) != 0)
		return EXIT_USAGE;
	if ((rc = begin(e, &cfg, name)) != EXIT_OK)
		return rc;
	memset(&w, 0, sizeof(w));
	w.now = util_now();
	w.find = id;
	if ((rc = walk_secrets(cfg, name, &w)) != EXIT_OK)
		goto out;
	if (!w.found) {
		cli_warn("endpoint secret revoke: endpoint %s has no secret"
		    " %lld (see endpoint secret list %s)", name, id, name);
		rc = EXIT_FAIL;
	} else if (w.found_active && w.active == 1) {
		/* Revoking it would refuse every request: say so instead. */
		cli_warn("endpoint secret revoke: secret %lld is the only"
		    " active secret of endpoint %s; add another first, or"
		    " remove the endpoint", id, name);
		rc = EXIT_FAIL;
	} else
		rc = config_done(config_secret_revoke(cfg, name, id), name,
		    NULL);
	if (rc == EXIT_OK)
		printf("endpoint %s: secret %lld revoked\n", name, id);
out:
	return finish(cfg, rc, name);
}

/*
 * endpoint secret add|list|revoke ...; and the older spelling
 * "endpoint secret --secret-file FILE NAME", which is add.
 */
int
cmd_endpoint_secret(struct settings *e, int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "add") == 0)
		return secret_add(e, argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		return secret_list(e, argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "revoke") == 0)
		return secret_revoke(e, argc - 1, argv + 1);
	return secret_add(e, argc, argv);
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

int
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
		{ "allow-internal", no_argument, NULL, 'A' },
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
		case 'A':
			d.allow_internal = 1;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 || d.tenant[0] == '\0' || d.url[0] == '\0' ||
	    set_field(d.name, sizeof(d.name), argv[optind], "destination") != 0)
		return usage();
	if ((rc = check_name("destination NAME", d.name)) != EXIT_OK ||
	    (rc = check_name("--tenant", d.tenant)) != EXIT_OK ||
	    (rc = check_url("--url", d.url)) != EXIT_OK ||
	    (d.status_url[0] != '\0' &&
	    (rc = check_url("--status-url", d.status_url)) != EXIT_OK) ||
	    (rc = check_internal(&d)) != EXIT_OK)
		return rc;
	if (keyfile != NULL && (keylen = dest_secret(keyfile, key)) < 0) {
		rc = EXIT_FAIL;
		goto out;
	}
	if ((rc = begin(e, &cfg, d.name)) != EXIT_OK)
		goto out;
	if ((rc = need_tenant(cfg, d.tenant)) == EXIT_OK)
		rc = config_done(config_destination_add(cfg, &d,
		    keylen > 0 ? key : NULL, (size_t)keylen, &why), d.name,
		    &why);
	rc = finish(cfg, rc, d.name);
out:
	sodium_memzero(key, sizeof(key));
	return rc;
}

int
cmd_destination_set(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tenant", required_argument, NULL, 't' },
		{ "url", required_argument, NULL, 'u' },
		{ "idempotent", no_argument, NULL, 'i' },
		{ "not-idempotent", no_argument, NULL, 'I' },
		{ "status-url", required_argument, NULL, 'S' },
		{ "no-status-url", no_argument, NULL, 'N' },
		{ "secret-file", required_argument, NULL, 's' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "max-attempts", required_argument, NULL, 'm' },
		{ "allow-internal", no_argument, NULL, 'A' },
		{ "no-allow-internal", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 }
	};
	struct config_destination	 d;
	struct config			*cfg = NULL;
	unsigned char			 key[CONFIG_SECRET_MAX + 1];
	ssize_t				 keylen = 0;
	const char			*keyfile = NULL, *why = NULL;
	const char			*tenant = NULL, *url = NULL, *surl = NULL;
	const char			*name;
	enum config_status		 crc;
	long long			 v;
	int				 ch, rc, idem = -1, timeout = 0;
	int				 attempts = 0, nosurl = 0;
	int				 internal = -1;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 't':
			tenant = optarg;
			break;
		case 'u':
			url = optarg;
			break;
		case 'i':
		case 'I':
			if (idem != -1 && idem != (ch == 'i')) {
				cli_warn("--idempotent and --not-idempotent:"
				    " one or the other");
				return EXIT_USAGE;
			}
			idem = ch == 'i';
			break;
		case 'S':
			surl = optarg;
			break;
		case 'N':
			nosurl = 1;
			break;
		case 's':
			keyfile = optarg;
			break;
		case 'T':
			if (parse_int(optarg, 1, 600000, "--timeout-ms",
			    &v) != 0)
				return EXIT_USAGE;
			timeout = (int)v;
			break;
		case 'm':
			if (parse_int(optarg, 1, 1000, "--max-attempts",
			    &v) != 0)
				return EXIT_USAGE;
			attempts = (int)v;
			break;
		case 'A':
		case 'n':
			if (internal != -1 && internal != (ch == 'A')) {
				cli_warn("--allow-internal and"
				    " --no-allow-internal: one or the other");
				return EXIT_USAGE;
			}
			internal = ch == 'A';
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 || tenant == NULL || (url == NULL &&
	    idem == -1 && surl == NULL && !nosurl && keyfile == NULL &&
	    timeout == 0 && attempts == 0 && internal == -1))
		return usage();
	if (surl != NULL && nosurl) {
		cli_warn("--status-url and --no-status-url: one or the other");
		return EXIT_USAGE;
	}
	name = argv[optind];
	if ((url != NULL && (rc = check_url("--url", url)) != EXIT_OK) ||
	    (surl != NULL && (rc = check_url("--status-url", surl)) !=
	    EXIT_OK))
		return rc;
	if (keyfile != NULL && (keylen = dest_secret(keyfile, key)) < 0) {
		rc = EXIT_FAIL;
		goto out;
	}
	if ((rc = begin(e, &cfg, name)) != EXIT_OK)
		goto out;
	if ((crc = config_destination_get(cfg, tenant, name, &d)) ==
	    CONFIG_NOTFOUND)
		rc = no_such("destination", name, tenant);
	else if ((rc = config_done(crc, name, NULL)) == EXIT_OK) {
		if ((url != NULL && set_field(d.url, sizeof(d.url), url,
		    "--url") != 0) || (surl != NULL && set_field(d.status_url,
		    sizeof(d.status_url), surl, "--status-url") != 0))
			rc = EXIT_USAGE;
		else {
			if (nosurl)
				d.status_url[0] = '\0';
			if (idem != -1)
				d.idempotent = idem;
			if (timeout != 0)
				d.timeout_ms = timeout;
			if (attempts != 0)
				d.max_attempts = attempts;
			if (internal != -1)
				d.allow_internal = internal;
			/* The row as it will be: a URL kept is judged too. */
			if ((rc = check_internal(&d)) == EXIT_OK)
				rc = config_done(config_destination_update(cfg,
				    &d, keylen > 0 ? key : NULL,
				    (size_t)keylen, &why), name, &why);
		}
	}
	rc = finish(cfg, rc, name);
out:
	sodium_memzero(key, sizeof(key));
	return rc;
}

/* ---- job ---------------------------------------------------------- */

int
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
	struct config_job		 j;
	struct config_destination	 d;
	struct config			*cfg = NULL;
	const char			*why = NULL;
	char				 other[HB_ID_MAX + 1];
	enum config_status		 crc;
	int				 ch, rc;

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
	if ((rc = check_name("--tenant", j.tenant)) != EXIT_OK ||
	    (rc = check_name("--attempt", j.attempt)) != EXIT_OK ||
	    (rc = check_name("--step", j.step)) != EXIT_OK ||
	    (rc = check_name("--destination", j.destination)) != EXIT_OK)
		return rc;
	if (j.output[0] != '\0' && (why = config_check_output(j.output)) != NULL)
		return refuse("--output", j.output, why);
	if ((rc = begin(e, &cfg, j.job_id)) != EXIT_OK)
		return rc;
	if ((rc = need_tenant(cfg, j.tenant)) != EXIT_OK)
		goto out;
	if ((crc = config_destination_get(cfg, j.tenant, j.destination, &d)) ==
	    CONFIG_NOTFOUND) {
		rc = no_such("destination", j.destination, j.tenant);
		goto out;
	}
	if ((rc = config_done(crc, j.destination, NULL)) != EXIT_OK)
		goto out;
	/* One job per action id: a second would only ever conflict. */
	crc = config_job_of_action(cfg, j.tenant, j.attempt, j.step, other,
	    sizeof(other));
	if (crc == CONFIG_OK && strcmp(other, j.job_id) != 0) {
		cli_warn("job add: attempt %s and step %s of tenant %s already"
		    " belong to job %s (action %s:%s:%s)", j.attempt, j.step,
		    j.tenant, other, j.tenant, j.attempt, j.step);
		rc = EXIT_FAIL;
		goto out;
	}
	if (crc != CONFIG_OK && crc != CONFIG_NOTFOUND) {
		rc = config_done(crc, j.job_id, NULL);
		goto out;
	}
	rc = config_done(config_job_add(cfg, &j, &why), j.job_id, &why);
out:
	return finish(cfg, rc, j.job_id);
}

/* ---- remove, for every table ------------------------------------ */

int
cmd_remove(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tenant", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	struct config		*cfg = NULL;
	enum config_table	 t;
	enum config_status	 crc;
	const char		*tenant = NULL, *kind = NULL, *key;
	char			 by[HB_ID_MAX + 1];
	int			 ch, rc, scoped;

	if (table_of(cli_cmd->name, &t) != 0)
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
	key = argv[optind];
	if ((rc = begin(e, &cfg, key)) != EXIT_OK)
		return rc;
	crc = scoped ? config_remove(cfg, t, tenant, key) :
	    config_remove(cfg, t, key, NULL);
	if (crc == CONFIG_NOTFOUND)
		rc = no_such(cli_cmd->name, key, tenant);
	else if (crc == CONFIG_REFUSED &&
	    (t == CONFIG_TENANTS || t == CONFIG_DESTINATIONS) &&
	    config_referrer(cfg, t, scoped ? tenant : key, scoped ? key : NULL,
	    &kind, by, sizeof(by)) == CONFIG_OK) {
		/* Name the row that holds it: the operator removes that first. */
		cli_warn("%s %s%s%s: still referenced by %s %s", cli_cmd->name,
		    key, scoped ? " of tenant " : "", scoped ? tenant : "",
		    kind, by);
		rc = EXIT_FAIL;
	} else
		rc = config_done(crc, key, NULL);
	return finish(cfg, rc, key);
}


/* ---- sign --------------------------------------------------------- */

int
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
		cli_warn("out of memory");
		return EXIT_FAIL;
	}
	if ((len = read_bounded(STDIN_FILENO, body, HB_BODY_MAX_DEFAULT)) < 0) {
		cli_warn("standard input: unreadable or over %d bytes",
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
		cli_warn("%s: key endpoints keep only a hash; send the key in"
		    " %s", name, ep.key_header);
		goto out;
	case CONFIG_AUTH_HMAC:
		hname = ep.key_header[0] != '\0' ? ep.key_header :
		    HOOK_HMAC_HEADER;
		if (auth_sign_tsig(sec.s, sec.n, now, t,
		    (const unsigned char *)body, (size_t)len, sig,
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
		    (size_t)len, sig, sizeof(sig)) != 0) {
			cli_warn("%s: no active secret that decodes", name);
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
