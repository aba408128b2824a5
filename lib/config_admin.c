/*
 * config_admin.c: the admin tool's writes to config.db, and the kind and
 * auth names.  The SQL it runs lives in config.c, used by statement enum.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>
#include <sodium.h>

#include "config_admin.h"
#include "config_int.h"
#include "json.h"
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

#define REFUSE_IF(v) do {						\
	if ((*why = (v)) != NULL)					\
		return CONFIG_INVALID;					\
} while (0)

static int
bind_blob(sqlite3_stmt *st, int idx, const unsigned char *b, size_t len)
{
	if (b == NULL || len == 0)
		return sqlite3_bind_null(st, idx);
	return sqlite3_bind_blob(st, idx, b, (int)len, SQLITE_TRANSIENT);
}

static enum config_status
writable(struct config *c, const char **why)
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

	if ((rc = writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_tenant_invalid(t));
	REFUSE_IF(config_valid_api_key(api_key, keylen) ? NULL :
	    "API key (printable ASCII, no spaces, at most 512 bytes)");
	if ((st = sql_stmt(&c->sql, CONFIG_Q_TENANT_ADD)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, t->id) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, t->active ? 1 : 0) != SQLITE_OK ||
	    sql_bind_text(st, 3, t->status_base) != SQLITE_OK ||
	    bind_blob(st, 4, api_key, keylen) != SQLITE_OK ||
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

	if ((rc = writable(c, why)) != CONFIG_OK)
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

	if ((rc = writable(c, why)) != CONFIG_OK)
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
		    " remove one first)";
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
	    bind_blob(st, 2, v, vlen) != SQLITE_OK ||
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

	if ((rc = writable(c, why)) != CONFIG_OK)
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
	    bind_blob(st, 6, secret, secretlen) != SQLITE_OK ||
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

	if ((rc = writable(c, why)) != CONFIG_OK)
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

/* ---- listing with filters, importing jobs ---- */

/* Masks the credentials in a row's URL field name, if it has one. */
static enum config_status
redact_field(cJSON *row, const char *name)
{
	cJSON	*v = cJSON_GetObjectItemCaseSensitive(row, name), *n;
	char	*buf;
	size_t	 len;

	if (!cJSON_IsString(v))
		return CONFIG_OK;
	len = strlen(v->valuestring) * 5 + 8;	/* util_url_redact()'s bound */
	if ((buf = malloc(len)) == NULL)
		return CONFIG_NOMEM;
	if (util_url_redact(v->valuestring, buf, len) != 0 ||
	    (n = cJSON_CreateString(buf)) == NULL) {
		free(buf);
		return CONFIG_NOMEM;
	}
	free(buf);
	return cJSON_ReplaceItemInObjectCaseSensitive(row, name, n) ?
	    CONFIG_OK : CONFIG_NOMEM;
}

enum config_status
config_list_where(struct config *c, enum config_table t,
    const struct config_list_filter *f, cJSON **out)
{
	static const enum config_q	 list[] = { CONFIG_Q_TENANT_LIST,
	    CONFIG_Q_ENDPOINT_LIST, CONFIG_Q_DEST_LIST, CONFIG_Q_JOB_LIST };
	static const struct config_list_filter	 all;
	sqlite3_stmt		*st;
	cJSON			*row;
	enum config_status	 rc;

	*out = NULL;
	if ((unsigned)t > CONFIG_JOBS)
		return CONFIG_ERROR;
	if (f == NULL)
		f = &all;
	if ((st = sql_stmt(&c->sql, list[t])) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, f->tenant) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, f->since_ms) != SQLITE_OK ||
	    sqlite3_bind_int(st, 3, f->limit > 0 ? f->limit : -1) != SQLITE_OK)
		return CONFIG_NOMEM;
	if ((rc = config_status_of(sql_json_rows(st, out))) != CONFIG_OK ||
	    t != CONFIG_DESTINATIONS)
		return rc;
	cJSON_ArrayForEach(row, *out)
		if ((rc = redact_field(row, "url")) != CONFIG_OK ||
		    (rc = redact_field(row, "status_url")) != CONFIG_OK) {
			cJSON_Delete(*out);
			*out = NULL;
			return rc;
		}
	return CONFIG_OK;
}

/* Copies a string field of an import line into dst; "" when absent. */
static enum config_status
job_field(const cJSON *o, const char *name, int required, char *dst,
    size_t len, char *why, size_t whylen)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(o, name);

	if (v == NULL || cJSON_IsNull(v)) {
		if (!required)
			return CONFIG_OK;
		snprintf(why, whylen, "missing \"%s\"", name);
		return CONFIG_INVALID;
	}
	if (!cJSON_IsString(v)) {
		snprintf(why, whylen, "\"%s\" is not a string", name);
		return CONFIG_INVALID;
	}
	if (strlen(v->valuestring) >= len) {
		snprintf(why, whylen, "\"%s\" is longer than %zu bytes", name,
		    len - 1);
		return CONFIG_INVALID;
	}
	memcpy(dst, v->valuestring, strlen(v->valuestring) + 1);
	return CONFIG_OK;
}

/* Non-zero for a short name of [A-Za-z0-9_.-] only. */
static int
plain(const char *s)
{
	size_t	n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789_.-");

	return n > 0 && n <= 40 && s[n] == '\0';
}

enum config_status
config_job_parse(const char *line, size_t len, const char *tenant,
    struct config_job *j, char *why, size_t whylen)
{
	static const char *const known[] = { "tenant", "job_id", "attempt",
	    "step", "destination", "source_url", "output" };
	cJSON			*o = NULL, *v;
	char			*out = NULL;
	enum json_status	 jrc;
	enum config_status	 rc = CONFIG_INVALID;
	size_t			 i;

	memset(j, 0, sizeof(*j));
	if (whylen > 0)
		why[0] = '\0';
	if ((jrc = json_parse_strict(line, len, &o, NULL, 0)) != JSON_OK) {
		if (jrc == JSON_NOMEM)
			return CONFIG_NOMEM;
		snprintf(why, whylen, "%s", json_strerror(jrc));
		return CONFIG_INVALID;
	}
	if (!cJSON_IsObject(o)) {
		snprintf(why, whylen, "not a JSON object");
		goto out;
	}
	cJSON_ArrayForEach(v, o) {
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strcmp(v->string, known[i]) == 0)
				break;
		if (i == sizeof(known) / sizeof(known[0])) {
			/* Named only when it is plain: no bytes echoed blind. */
			snprintf(why, whylen, "unknown field%s%.40s%s (the"
			    " fields are tenant, job_id, attempt, step,"
			    " destination, source_url, output)",
			    plain(v->string) ? " \"" : "",
			    plain(v->string) ? v->string : "",
			    plain(v->string) ? "\"" : "");
			goto out;
		}
	}
	if (job_field(o, "tenant", tenant == NULL, j->tenant,
	    sizeof(j->tenant), why, whylen) != CONFIG_OK ||
	    job_field(o, "job_id", 1, j->job_id, sizeof(j->job_id), why,
	    whylen) != CONFIG_OK ||
	    job_field(o, "attempt", 1, j->attempt, sizeof(j->attempt), why,
	    whylen) != CONFIG_OK ||
	    job_field(o, "step", 1, j->step, sizeof(j->step), why,
	    whylen) != CONFIG_OK ||
	    job_field(o, "destination", 1, j->destination,
	    sizeof(j->destination), why, whylen) != CONFIG_OK ||
	    job_field(o, "source_url", 0, j->source_url,
	    sizeof(j->source_url), why, whylen) != CONFIG_OK)
		goto out;
	if (tenant != NULL) {
		if (j->tenant[0] != '\0' && strcmp(j->tenant, tenant) != 0) {
			snprintf(why, whylen, "\"tenant\" is not %s", tenant);
			goto out;
		}
		if (strlen(tenant) >= sizeof(j->tenant)) {
			snprintf(why, whylen, "tenant too long");
			goto out;
		}
		memcpy(j->tenant, tenant, strlen(tenant) + 1);
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "output");
	if (v != NULL && !cJSON_IsNull(v)) {
		if (!cJSON_IsObject(v)) {
			snprintf(why, whylen, "\"output\" is not a JSON object");
			goto out;
		}
		if ((out = cJSON_PrintUnformatted(v)) == NULL) {
			rc = CONFIG_NOMEM;
			goto out;
		}
		if (strlen(out) >= sizeof(j->output)) {
			snprintf(why, whylen, "\"output\" is longer than %zu"
			    " bytes", sizeof(j->output) - 1);
			goto out;
		}
		memcpy(j->output, out, strlen(out) + 1);
	}
	rc = CONFIG_OK;
out:
	cJSON_free(out);
	cJSON_Delete(o);
	return rc;
}

enum config_status
config_job_import(struct config *c, const struct config_job *j,
    int *present, const char **why)
{
	struct config_job	have;
	enum config_status	rc;

	*present = 0;
	if ((rc = config_job_add(c, j, why)) != CONFIG_EXISTS)
		return rc;
	if (config_job_get(c, j->tenant, j->job_id, &have) == CONFIG_OK &&
	    strcmp(have.attempt, j->attempt) == 0 &&
	    strcmp(have.step, j->step) == 0 &&
	    strcmp(have.destination, j->destination) == 0 &&
	    strcmp(have.source_url, j->source_url) == 0 &&
	    strcmp(have.output, j->output) == 0) {
		*present = 1;
		return CONFIG_OK;
	}
	return CONFIG_EXISTS;
}
