/*
 * The commands over config.db: init, add, list and remove for every
 * table, a secret for an endpoint, and sign.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "config_admin.h"
#include "hook.h"
#include "store.h"
#include "util.h"

#include "cli.h"

/* ---- init --------------------------------------------------------- */

int
cmd_init(struct settings *e, int argc, char **argv)
{
	struct store		*st = NULL;
	enum config_status	 crc;
	int			 rc;

	(void)argv;
	if (argc != 1)
		return usage();
	if (mkdir(e->dir, 0750) != 0 && errno != EEXIST) {
		cli_warn("%s: %s", e->dir, strerror(errno));
		return EXIT_FAIL;
	}
	crc = config_create(e->config_path);
	if (crc != CONFIG_OK && crc != CONFIG_EXISTS) {
		cli_warn("%s: %s", e->config_path, config_strerror(crc));
		return config_exit(crc);
	}
	if ((rc = open_store(e, 1, &st)) != EXIT_OK)
		return rc;
	store_close(st);
	printf("initialised %s\n", e->dir);
	return EXIT_OK;
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

int
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
				cli_warn("--kind: tornado-job or tornado-org");
				return EXIT_USAGE;
			}
			break;
		case 'a':
			if (config_auth_parse(optarg, &ep.auth) != 0) {
				cli_warn("--auth: hmac, key or standard");
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
		cli_warn("--auth key needs --header");
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

int
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
	const char		*tenant = NULL;
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
	if ((rc = open_config(e, CONFIG_WRITE, &cfg)) != EXIT_OK)
		return rc;
	rc = config_done(scoped ?
	    config_remove(cfg, t, tenant, argv[optind]) :
	    config_remove(cfg, t, argv[optind], NULL), argv[optind], NULL);
	config_close(cfg);
	return rc;
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
