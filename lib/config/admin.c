/*
 * config/admin.c: the admin tool's writes to config.db, and the kind and auth
 * names.  The SQL it runs lives in config/config.c, used by statement enum.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "base/util.h"
#include "config/admin.h"
#include "config/config_int.h"
#include "db/pg_schema.h"

const char *
config_kind_name(enum config_kind k)
{
	return (unsigned)k < CONFIG_KIND_N ? config_kind_names[k] : "?";
}

const char *
config_auth_name(enum config_auth a)
{
	return (unsigned)a < CONFIG_AUTH_N ? config_auth_names[a] : "?";
}

int
config_kind_parse(const char *s, enum config_kind *out)
{
	int	i;

	if ((i = config_name_parse(s, config_kind_names, CONFIG_KIND_N)) < 0)
		return -1;
	*out = (enum config_kind)i;
	return 0;
}

int
config_auth_parse(const char *s, enum config_auth *out)
{
	int	i;

	if ((i = config_name_parse(s, config_auth_names, CONFIG_AUTH_N)) < 0)
		return -1;
	*out = (enum config_auth)i;
	return 0;
}

/* How long config_create() waits for a server, in ms. */
#define CONFIG_CREATE_MS	10000

/* The schema in each dialect. */
static const struct db_text	schema_text = {
	config_schema, pg_schema_config
};

/* Non-zero when the configuration's tables are there (-1: no answer). */
static int
schema_exists(struct config *c)
{
	int64_t	n;

	if (config_scalar(c, CONFIG_Q_SCHEMA, &n) != CONFIG_OK)
		return -1;
	return n > 0;
}

/*
 * Makes the schema in one transaction; CONFIG_EXISTS when it is there
 * already (made before, or by another init just now).  A file is created
 * here first, so that its mode is never wider (O_EXCL follows no link),
 * and removed again should the schema fail; what is there already counts
 * as the database only when it is a plain file, not a link someone
 * planted.
 */
enum config_status
config_create(const char *path)
{
	struct stat		 sb;
	struct config		 c;
	struct db_conf		 conf;
	enum config_status	 rc;
	enum db_rc		 drc;
	char			 why[256];
	int			 fd, made = 0, n;

	memset(&c, 0, sizeof(c));
	c.writable = 1;
	if (db_location_caps(path) & DB_CAP_FILE) {
		if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    0640)) < 0)
			return errno == EEXIST && lstat(path, &sb) == 0 &&
			    S_ISREG(sb.st_mode) ? CONFIG_EXISTS : CONFIG_ERROR;
		close(fd);
		made = 1;
	}
	config_conf(&conf, 1, CONFIG_CREATE_MS);
	if ((drc = db_open(path, &conf, config_text, CONFIG_Q__N, &c.db, why,
	    sizeof(why))) != DB_OK) {
		rc = config_status_of(NULL, drc);
		goto out;
	}
	if ((n = schema_exists(&c)) > 0)
		rc = CONFIG_EXISTS;
	else if (n < 0)
		rc = (rc = config_last(&c)) != CONFIG_OK ? rc : CONFIG_ERROR;
	else if ((rc = config_status_of(&c, db_exec_text(c.db,
	    &schema_text))) != CONFIG_OK) {
		if (db_in_tx(c.db))
			(void)db_exec(c.db, "ROLLBACK");
		if (schema_exists(&c) > 0)
			rc = CONFIG_EXISTS;
	}
out:
	db_close(c.db);
	if (made && rc != CONFIG_OK)
		unlink(path);
	return rc;
}

enum db_rc
config_bind_destination(struct db_stmt *st, const struct config_destination *d)
{
	enum db_rc	rc;

	if ((rc = db_bind_opt(st, 1, d->tenant)) != DB_OK ||
	    (rc = db_bind_opt(st, 2, d->name)) != DB_OK ||
	    (rc = db_bind_opt(st, 3, d->url)) != DB_OK ||
	    (rc = db_bind_int64(st, 4, d->idempotent ? 1 : 0)) != DB_OK ||
	    (rc = db_bind_opt(st, 5, d->status_url)) != DB_OK)
		return rc;
	return db_bind_int64(st, 6, d->allow_internal ? 1 : 0);
}

enum db_rc
config_bind_count(struct db_stmt *st, int idx, int64_t v)
{
	return v > 0 ? db_bind_int64(st, idx, v) : db_bind_null(st, idx);
}

enum db_rc
config_bind_policy(struct db_stmt *st, int idx,
    const struct config_destination *d)
{
	enum db_rc	rc;

	if ((rc = db_bind_int64(st, idx, d->retry_for_s)) != DB_OK ||
	    (rc = config_bind_count(st, idx + 1, d->max_in_flight)) !=
	    DB_OK ||
	    (rc = config_bind_count(st, idx + 2, d->rate)) != DB_OK ||
	    (rc = db_bind_int64(st, idx + 3, d->circuit_failures)) != DB_OK)
		return rc;
	return db_bind_int64(st, idx + 4, d->cooldown_s);
}

enum db_rc
config_bind_blob(struct db_stmt *st, int idx, const unsigned char *b,
    size_t len)
{
	if (b == NULL || len == 0)
		return db_bind_null(st, idx);
	return db_bind_blob(st, idx, b, len);
}

enum config_status
config_writable(struct config *c, const char **why)
{
	*why = NULL;
	if (c->writable && c->scoped) {
		*why = "is not a job's, and a registrar changes jobs alone";
		return CONFIG_DENIED;
	}
	return c->writable ? CONFIG_OK : CONFIG_ERROR;
}

enum config_status
config_tenant_add(struct config *c, const struct config_tenant *t,
    const unsigned char *api_key, size_t keylen, const char **why)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_tenant_invalid(t));
	REFUSE_IF(config_valid_api_key(api_key, keylen) ? NULL :
	    "API key (printable ASCII, no spaces, at most 512 bytes)");
	if ((st = config_stmt(c, CONFIG_Q_TENANT_ADD, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, t->id) != DB_OK ||
	    db_bind_int64(st, 2, t->active ? 1 : 0) != DB_OK ||
	    db_bind_opt(st, 3, t->status_base) != DB_OK ||
	    config_bind_blob(st, 4, api_key, keylen) != DB_OK ||
	    db_bind_int64(st, 5, util_now()) != DB_OK)
		return CONFIG_NOMEM;
	return config_write(c, st);
}

enum config_status
config_endpoint_insert(struct config *c, const struct config_endpoint *e,
    const char *mapping)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	if ((st = config_stmt(c, CONFIG_Q_ENDPOINT_ADD, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, e->name) != DB_OK ||
	    db_bind_opt(st, 2, e->tenant) != DB_OK ||
	    db_bind_opt(st, 3, config_kind_name(e->kind)) != DB_OK ||
	    db_bind_opt(st, 4, config_auth_name(e->auth)) != DB_OK ||
	    db_bind_opt(st, 5, e->auth == CONFIG_AUTH_STANDARD ? NULL :
	    e->key_header) != DB_OK ||
	    db_bind_int64(st, 6, e->tolerance) != DB_OK ||
	    db_bind_int64(st, 7, util_now()) != DB_OK ||
	    db_bind_opt(st, 8, mapping) != DB_OK)
		return CONFIG_NOMEM;
	return config_write(c, st);
}

enum config_status
config_endpoint_add(struct config *c, const struct config_endpoint *e,
    const char **why)
{
	enum config_status	rc;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_endpoint_invalid(e));
	REFUSE_IF(e->kind == CONFIG_KIND_MAPPED ? "mapping (kind mapped needs"
	    " one: config_endpoint_add_mapped())" : NULL);
	return config_endpoint_insert(c, e, NULL);
}

enum config_status
config_secret_add(struct config *c, const char *endpoint,
    const unsigned char *secret, size_t len, int64_t expires_at,
    const char **why)
{
	struct config_endpoint	 e;
	struct db_stmt		*st;
	enum config_status	 rc;
	enum db_rc		 drc;
	unsigned char		 hash[AUTH_HASH_LEN];
	const unsigned char	*v = secret;
	size_t			 vlen = len;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	if (len == 0 || len > CONFIG_SECRET_MAX) {
		*why = "secret (1..512 bytes)";
		return CONFIG_INVALID;
	}
	if (expires_at < 0) {
		*why = "expiry (0 for never, else a unix time)";
		return CONFIG_INVALID;
	}
	if ((rc = config_endpoint_get(c, endpoint, &e)) != CONFIG_OK)
		return rc;
	/* A secret over the limit would push an older one out unseen. */
	if ((st = config_stmt(c, CONFIG_Q_SECRET_COUNT, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, endpoint) != DB_OK ||
	    db_bind_int64(st, 2, util_now()) != DB_OK)
		return CONFIG_NOMEM;
	if ((drc = db_step(st)) != DB_ROW)
		rc = drc == DB_DONE ? CONFIG_NOTFOUND :
		    config_status_of(c, drc);
	else if (db_col_int64(st, 0) >= CONFIG_SECRETS_MAX) {
		*why = "secret (the endpoint has 8 unexpired secrets already:"
		    " remove one first, with endpoint secret revoke)";
		rc = CONFIG_INVALID;
	}
	db_reset(st);
	st = NULL;
	if (rc != CONFIG_OK)
		return rc;
	if (e.auth == CONFIG_AUTH_KEY) {
		if (auth_key_hash((const char *)secret, len, hash) != 0)
			return CONFIG_ERROR;
		v = hash;
		vlen = sizeof(hash);
	}
	if ((st = config_stmt(c, CONFIG_Q_SECRET_ADD, &rc)) == NULL)
		goto out;
	if (db_bind_opt(st, 1, endpoint) != DB_OK ||
	    config_bind_blob(st, 2, v, vlen) != DB_OK ||
	    (expires_at > 0 ? db_bind_int64(st, 3, expires_at) :
	    db_bind_null(st, 3)) != DB_OK ||
	    db_bind_int64(st, 4, util_now()) != DB_OK) {
		rc = CONFIG_NOMEM;
		goto out;
	}
	rc = config_write(c, st);
out:
	/* The statement holds a copy until it is bound again. */
	if (st != NULL)
		(void)db_bind_null(st, 2);
	sodium_memzero(hash, sizeof(hash));
	return rc;
}

enum config_status
config_destination_add(struct config *c, const struct config_destination *d,
    const unsigned char *secret, size_t secretlen, const char **why)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_destination_invalid(d));
	REFUSE_IF(config_destination_refused(d));
	REFUSE_IF(secretlen > CONFIG_SECRET_MAX ? "secret (too long)" : NULL);
	if ((st = config_stmt(c, CONFIG_Q_DEST_ADD, &rc)) == NULL)
		return rc;
	if (config_bind_destination(st, d) != DB_OK ||
	    config_bind_blob(st, 7, secret, secretlen) != DB_OK ||
	    db_bind_int64(st, 8, d->timeout_ms) != DB_OK ||
	    config_bind_count(st, 9, d->max_attempts) != DB_OK ||
	    db_bind_int64(st, 10, util_now()) != DB_OK ||
	    config_bind_policy(st, 11, d) != DB_OK)
		return CONFIG_NOMEM;
	rc = config_write(c, st);
	(void)db_bind_null(st, 7);
	return rc;
}

enum config_status
config_job_add(struct config *c, const struct config_job *j, const char **why)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	*why = NULL;
	if (!c->writable)
		return CONFIG_ERROR;
	if ((rc = config_registrar_allows(c, j->tenant, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_job_invalid(j));
	if ((st = config_stmt(c, CONFIG_Q_JOB_ADD, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, j->tenant) != DB_OK ||
	    db_bind_opt(st, 2, j->job_id) != DB_OK ||
	    db_bind_opt(st, 3, j->attempt) != DB_OK ||
	    db_bind_opt(st, 4, j->step) != DB_OK ||
	    db_bind_opt(st, 5, j->destination) != DB_OK ||
	    db_bind_opt(st, 6, j->source_url) != DB_OK ||
	    db_bind_opt(st, 7, j->output) != DB_OK ||
	    db_bind_int64(st, 8, util_now()) != DB_OK)
		return CONFIG_NOMEM;
	return config_write(c, st);
}

enum config_status
config_begin(struct config *c)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	/* No nesting (PostgreSQL would only warn). */
	if (!c->writable || db_in_tx(c->db))
		return CONFIG_ERROR;
	if ((st = config_stmt(c, CONFIG_Q_BEGIN, &rc)) == NULL)
		return rc;
	return config_status_of(c, db_step_done(st));
}

enum config_status
config_commit(struct config *c)
{
	return config_status_of(c, db_exec(c->db, "COMMIT"));
}

void
config_rollback(struct config *c)
{
	if (db_in_tx(c->db))
		(void)db_exec(c->db, "ROLLBACK");
}

enum config_status
config_remove(struct config *c, enum config_table t, const char *key,
    const char *key2)
{
	static const enum config_q	 del[] = { CONFIG_Q_TENANT_DEL,
	    CONFIG_Q_ENDPOINT_DEL, CONFIG_Q_DEST_DEL, CONFIG_Q_JOB_DEL };
	struct db_stmt		*st;
	enum config_status	 rc;
	const char		*why;
	char			 by[HB_ID_MAX + 1];

	if (!c->writable || (unsigned)t > CONFIG_JOBS)
		return CONFIG_ERROR;
	if ((rc = t == CONFIG_JOBS ? config_registrar_allows(c, key, &why) :
	    config_writable(c, &why)) != CONFIG_OK)
		return rc;
	/* A mapping names its destination in its text: no foreign key. */
	if (t == CONFIG_DESTINATIONS && key2 != NULL &&
	    (rc = config_dest_mapped_by(c, key, key2, by, sizeof(by))) !=
	    CONFIG_NOTFOUND)
		return rc == CONFIG_OK ? CONFIG_REFUSED : rc;
	if ((st = config_stmt(c, del[t], &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, key) != DB_OK ||
	    (key2 != NULL && db_bind_opt(st, 2, key2) != DB_OK))
		return CONFIG_NOMEM;
	if ((rc = config_write(c, st)) != CONFIG_OK)
		return rc;
	return db_changes(st) > 0 ? CONFIG_OK : CONFIG_NOTFOUND;
}
