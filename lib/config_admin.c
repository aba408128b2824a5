/*
 * config_admin.c: the admin tool's writes to config.db, and the kind and
 * auth names.  The SQL it runs lives in config.c, used by statement enum.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cJSON.h>
#include <sodium.h>

#include "config_admin.h"
#include "config_bulk.h"
#include "config_int.h"
#include "util.h"

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

enum config_status
config_create(const char *path)
{
	struct sql		s;
	enum config_status	rc;
	int			fd;

	/* Create the file ourselves so that its mode is never wider. */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640)) < 0)
		return errno == EEXIST ? CONFIG_EXISTS : CONFIG_ERROR;
	close(fd);
	if ((rc = config_status_of(sql_open(&s, path, SQLITE_OPEN_READWRITE,
	    NULL, 0))) != CONFIG_OK) {
		unlink(path);
		return rc;
	}
	rc = config_status_of(sql_exec(&s, config_schema));
	sql_close(&s);
	if (rc != CONFIG_OK)
		unlink(path);
	return rc;
}

/* Runs a prepared, bound write statement. */
static enum config_status
write_done(sqlite3_stmt *st)
{
	return config_status_of(sql_step_done(st));
}

int
config_bind_blob(sqlite3_stmt *st, int idx, const unsigned char *b, size_t len)
{
	if (b == NULL || len == 0)
		return sqlite3_bind_null(st, idx);
	return sqlite3_bind_blob(st, idx, b, (int)len, SQLITE_TRANSIENT);
}

enum config_status
config_writable(struct config *c, const char **why)
{
	*why = NULL;
	return c->writable ? CONFIG_OK : CONFIG_ERROR;
}

enum config_status
config_tenant_add(struct config *c, const struct config_tenant *t,
    const unsigned char *api_key, size_t keylen, const char **why)
{
	sqlite3_stmt		*st;
	enum config_status	 rc;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_tenant_invalid(t));
	REFUSE_IF(config_valid_api_key(api_key, keylen) ? NULL :
	    "API key (printable ASCII, no spaces, at most 512 bytes)");
	if ((st = sql_stmt(&c->sql, CONFIG_Q_TENANT_ADD)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, t->id) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, t->active ? 1 : 0) != SQLITE_OK ||
	    sql_bind_text(st, 3, t->status_base) != SQLITE_OK ||
	    config_bind_blob(st, 4, api_key, keylen) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 5, util_now()) != SQLITE_OK)
		return CONFIG_NOMEM;
	return write_done(st);
}

enum config_status
config_endpoint_add(struct config *c, const struct config_endpoint *e,
    const char **why)
{
	sqlite3_stmt		*st;
	enum config_status	 rc;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_endpoint_invalid(e));
	if ((st = sql_stmt(&c->sql, CONFIG_Q_ENDPOINT_ADD)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, e->name) != SQLITE_OK ||
	    sql_bind_text(st, 2, e->tenant) != SQLITE_OK ||
	    sql_bind_text(st, 3, config_kind_name(e->kind)) != SQLITE_OK ||
	    sql_bind_text(st, 4, config_auth_name(e->auth)) != SQLITE_OK ||
	    sql_bind_text(st, 5, e->auth == CONFIG_AUTH_STANDARD ? NULL :
	    e->key_header) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 6, e->tolerance) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 7, util_now()) != SQLITE_OK)
		return CONFIG_NOMEM;
	return write_done(st);
}

enum config_status
config_secret_add(struct config *c, const char *endpoint,
    const unsigned char *secret, size_t len, int64_t expires_at,
    const char **why)
{
	struct config_endpoint	 e;
	sqlite3_stmt		*st;
	enum config_status	 rc;
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
	if ((st = sql_stmt(&c->sql, CONFIG_Q_SECRET_COUNT)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, endpoint) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, util_now()) != SQLITE_OK)
		return CONFIG_NOMEM;
	if ((rc = config_status_of(sqlite3_step(st))) == CONFIG_OK &&
	    sqlite3_column_int64(st, 0) >= CONFIG_SECRETS_MAX) {
		*why = "secret (the endpoint has 8 unexpired secrets already:"
		    " remove one first, with endpoint secret revoke)";
		rc = CONFIG_INVALID;
	}
	sqlite3_reset(st);
	st = NULL;
	if (rc != CONFIG_OK)
		return rc;
	if (e.auth == CONFIG_AUTH_KEY) {
		if (auth_key_hash((const char *)secret, len, hash) != 0)
			return CONFIG_ERROR;
		v = hash;
		vlen = sizeof(hash);
	}
	if ((st = sql_stmt(&c->sql, CONFIG_Q_SECRET_ADD)) == NULL) {
		rc = config_status_of(sqlite3_errcode(c->sql.db));
		goto out;
	}
	if (sql_bind_text(st, 1, endpoint) != SQLITE_OK ||
	    config_bind_blob(st, 2, v, vlen) != SQLITE_OK ||
	    (expires_at > 0 ? sqlite3_bind_int64(st, 3, expires_at) :
	    sqlite3_bind_null(st, 3)) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, util_now()) != SQLITE_OK) {
		rc = CONFIG_NOMEM;
		goto out;
	}
	rc = write_done(st);
out:
	/* The statement holds a transient copy until reset. */
	if (st != NULL)
		sqlite3_clear_bindings(st);
	sodium_memzero(hash, sizeof(hash));
	return rc;
}

enum config_status
config_destination_add(struct config *c, const struct config_destination *d,
    const unsigned char *secret, size_t secretlen, const char **why)
{
	sqlite3_stmt		*st;
	enum config_status	 rc;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_destination_invalid(d));
	REFUSE_IF(secretlen > CONFIG_SECRET_MAX ? "secret (too long)" : NULL);
	if ((st = sql_stmt(&c->sql, CONFIG_Q_DEST_ADD)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, d->tenant) != SQLITE_OK ||
	    sql_bind_text(st, 2, d->name) != SQLITE_OK ||
	    sql_bind_text(st, 3, d->url) != SQLITE_OK ||
	    sqlite3_bind_int(st, 4, d->idempotent ? 1 : 0) != SQLITE_OK ||
	    sql_bind_text(st, 5, d->status_url) != SQLITE_OK ||
	    config_bind_blob(st, 6, secret, secretlen) != SQLITE_OK ||
	    sqlite3_bind_int(st, 7, d->timeout_ms) != SQLITE_OK ||
	    sqlite3_bind_int(st, 8, d->max_attempts) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 9, util_now()) != SQLITE_OK)
		return CONFIG_NOMEM;
	rc = write_done(st);
	sqlite3_clear_bindings(st);
	return rc;
}

enum config_status
config_job_add(struct config *c, const struct config_job *j, const char **why)
{
	sqlite3_stmt		*st;
	enum config_status	 rc;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_job_invalid(j));
	if ((st = sql_stmt(&c->sql, CONFIG_Q_JOB_ADD)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, j->tenant) != SQLITE_OK ||
	    sql_bind_text(st, 2, j->job_id) != SQLITE_OK ||
	    sql_bind_text(st, 3, j->attempt) != SQLITE_OK ||
	    sql_bind_text(st, 4, j->step) != SQLITE_OK ||
	    sql_bind_text(st, 5, j->destination) != SQLITE_OK ||
	    sql_bind_text(st, 6, j->source_url) != SQLITE_OK ||
	    sql_bind_text(st, 7, j->output) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 8, util_now()) != SQLITE_OK)
		return CONFIG_NOMEM;
	return write_done(st);
}

enum config_status
config_begin(struct config *c)
{
	if (!c->writable)
		return CONFIG_ERROR;
	return config_status_of(sql_exec(&c->sql, "BEGIN IMMEDIATE"));
}

enum config_status
config_commit(struct config *c)
{
	return config_status_of(sql_exec(&c->sql, "COMMIT"));
}

void
config_rollback(struct config *c)
{
	if (!sqlite3_get_autocommit(c->sql.db))
		(void)sql_exec(&c->sql, "ROLLBACK");
}

enum config_status
config_remove(struct config *c, enum config_table t, const char *key,
    const char *key2)
{
	static const enum config_q	 del[] = { CONFIG_Q_TENANT_DEL,
	    CONFIG_Q_ENDPOINT_DEL, CONFIG_Q_DEST_DEL, CONFIG_Q_JOB_DEL };
	sqlite3_stmt		*st;
	enum config_status	 rc;

	if (!c->writable || (unsigned)t > CONFIG_JOBS)
		return CONFIG_ERROR;
	if ((st = sql_stmt(&c->sql, del[t])) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, key) != SQLITE_OK ||
	    (key2 != NULL && sql_bind_text(st, 2, key2) != SQLITE_OK))
		return CONFIG_NOMEM;
	if ((rc = write_done(st)) != CONFIG_OK)
		return rc;
	return sqlite3_changes(c->sql.db) > 0 ? CONFIG_OK : CONFIG_NOTFOUND;
}

enum config_status
config_list(struct config *c, enum config_table t, cJSON **out)
{
	return config_list_where(c, t, NULL, out);
}
