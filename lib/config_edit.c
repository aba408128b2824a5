/*
 * config_edit.c: the admin tool's checks of new values, its changes in
 * place, an endpoint's secrets by id, and why a write was refused.  The
 * SQL it runs lives in config.c, used by statement enum.
 */
#include <string.h>
#include <strings.h>

#include <cJSON.h>
#include <sodium.h>

#include "config_edit.h"
#include "config_int.h"
#include "json.h"
#include "text.h"
#include "util.h"

#define SW_PREFIX	"whsec_"
#define SW_PREFIX_LEN	(sizeof(SW_PREFIX) - 1)

/* ---- the checks --------------------------------------------------- */

const char *
config_check_url(const char *u)
{
	static const char	expected[] =
	    "expected http://HOST... or https://HOST...";
	size_t			skip, host;

	if (u == NULL || !text_valid_line(u, HB_TEXT_MAX) ||
	    strpbrk(u, " \"<>\\^`{|}") != NULL)
		return expected;
	if (strncasecmp(u, "http://", 7) == 0)
		skip = 7;
	else if (strncasecmp(u, "https://", 8) == 0)
		skip = 8;
	else
		return expected;
	u += skip;
	/* The authority: [userinfo@]host[:port], up to the path. */
	host = strcspn(u, "/?#");
	if (memchr(u, '@', host) != NULL) {
		skip = (size_t)((const char *)memchr(u, '@', host) - u) + 1;
		u += skip;
		host -= skip;
	}
	if (host == 0 || u[0] == ':' || u[0] == '@')
		return expected;
	return NULL;
}

const char *
config_check_endpoint_name(const char *s)
{
	if (s != NULL && s[0] == '_')
		return "reserved: names starting with '_' are the responder's"
		    " own (_health, _metrics)";
	/* The metrics' label for requests to no configured endpoint. */
	if (s != NULL && strcmp(s, "unknown") == 0)
		return "reserved: the metrics' label for requests to no"
		    " configured endpoint";
	if (!text_valid_name(s))
		return "expected 1..128 of A-Z a-z 0-9 . _ -, starting with a"
		    " letter or digit";
	return NULL;
}

/* The base64 (original alphabet) at b decodes to at least the minimum. */
static int
decodes(const char *b, size_t len)
{
	unsigned char	key[CONFIG_SECRET_MAX];
	size_t		n = 0;
	int		ok;

	ok = len > 0 && sodium_base642bin(key, sizeof(key), b, len, NULL, &n,
	    NULL, sodium_base64_VARIANT_ORIGINAL) == 0 &&
	    n >= CONFIG_HMAC_KEY_MIN;
	sodium_memzero(key, sizeof(key));
	return ok;
}

const char *
config_check_secret(enum config_auth a, const unsigned char *s, size_t len)
{
	if (s == NULL || len == 0 || len > CONFIG_SECRET_MAX)
		return "expected 1..512 bytes";
	switch (a) {
	case CONFIG_AUTH_HMAC:
		if (len < CONFIG_HMAC_KEY_MIN)
			return "expected an HMAC secret of at least 16 bytes";
		break;
	case CONFIG_AUTH_STANDARD:
		if (len <= SW_PREFIX_LEN ||
		    memcmp(s, SW_PREFIX, SW_PREFIX_LEN) != 0 ||
		    !decodes((const char *)s + SW_PREFIX_LEN,
		    len - SW_PREFIX_LEN))
			return "expected whsec_ and base64 of at least 16"
			    " bytes";
		break;
	case CONFIG_AUTH_KEY:
		break;
	}
	return NULL;
}

const char *
config_check_dest_secret(const unsigned char *s, size_t len)
{
	const char	*b = (const char *)s;

	if (s == NULL || len == 0 || len > CONFIG_SECRET_MAX)
		return "expected 1..512 bytes";
	if (len > SW_PREFIX_LEN && memcmp(s, SW_PREFIX, SW_PREFIX_LEN) == 0) {
		b += SW_PREFIX_LEN;
		len -= SW_PREFIX_LEN;
	}
	if (!decodes(b, len))
		return "expected whsec_ and base64 of at least 16 bytes";
	return NULL;
}

const char *
config_check_api_key(const unsigned char *k, size_t len)
{
	if (k == NULL || len == 0 || !config_valid_api_key(k, len))
		return "expected printable ASCII without spaces, at most 512"
		    " bytes";
	return NULL;
}

const char *
config_check_output(const char *s)
{
	cJSON		*v = NULL;
	const char	*why = NULL;

	if (s == NULL || !text_valid(s, HB_TEXT_MAX))
		return "expected a JSON object of at most 2048 bytes";
	switch (json_parse_strict(s, strlen(s), &v, NULL, 0)) {
	case JSON_OK:
		if (!cJSON_IsObject(v))
			why = "expected a JSON object, {...}";
		break;
	case JSON_NOMEM:
		why = "out of memory";
		break;
	default:
		why = "expected a JSON object, {...}";
		break;
	}
	cJSON_Delete(v);
	return why;
}

/* ---- look-ups that explain a refusal ------------------------------ */

/* Binds text keys (NULL ends them) and steps once: CONFIG_OK is a row. */
static enum config_status
first_row(struct config *c, enum config_q q, const char *const *keys,
    sqlite3_stmt **out)
{
	sqlite3_stmt	*st;
	int		 i, rc;

	*out = NULL;
	if ((st = sql_stmt(&c->sql, q)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	for (i = 0; keys[i] != NULL; i++)
		if (sql_bind_text(st, i + 1, keys[i]) != SQLITE_OK)
			return CONFIG_NOMEM;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = st;
		return CONFIG_OK;
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? CONFIG_NOTFOUND : config_status_of(rc);
}

enum config_status
config_referrer(struct config *c, enum config_table t, const char *key,
    const char *key2, const char **kind, char *name, size_t namelen)
{
	const char *const	 keys[] = { key, key2, NULL };
	sqlite3_stmt		*st;
	const char		*k;
	enum config_status	 rc;

	*kind = NULL;
	if (t != CONFIG_TENANTS && (t != CONFIG_DESTINATIONS || key2 == NULL))
		return CONFIG_ERROR;
	if ((rc = first_row(c, t == CONFIG_TENANTS ? CONFIG_Q_TENANT_REFERRER :
	    CONFIG_Q_DEST_REFERRER, keys, &st)) != CONFIG_OK)
		return rc;
	k = (const char *)sqlite3_column_text(st, 0);
	*kind = k == NULL ? NULL : strcmp(k, "endpoint") == 0 ? "endpoint" :
	    strcmp(k, "destination") == 0 ? "destination" : "job";
	if (*kind == NULL || sql_col_copy(st, 1, name, namelen) != 0)
		rc = CONFIG_ERROR;
	sqlite3_reset(st);
	return rc;
}

enum config_status
config_job_of_action(struct config *c, const char *tenant,
    const char *attempt, const char *step, char *job_id, size_t len)
{
	const char *const	 keys[] = { tenant, attempt, step, NULL };
	sqlite3_stmt		*st;
	enum config_status	 rc;

	if ((rc = first_row(c, CONFIG_Q_JOB_OF_ACTION, keys, &st)) !=
	    CONFIG_OK)
		return rc;
	if (sql_col_copy(st, 0, job_id, len) != 0)
		rc = CONFIG_ERROR;
	sqlite3_reset(st);
	return rc;
}

/* ---- changes in place --------------------------------------------- */

/* Steps a bound write: CONFIG_NOTFOUND when it changed no row. */
static enum config_status
changed_one(struct config *c, sqlite3_stmt *st)
{
	enum config_status	rc;

	rc = config_status_of(sql_step_done(st));
	sqlite3_clear_bindings(st);
	if (rc != CONFIG_OK)
		return rc;
	return sqlite3_changes(c->sql.db) > 0 ? CONFIG_OK : CONFIG_NOTFOUND;
}

enum config_status
config_tenant_update(struct config *c, const struct config_tenant *t,
    const unsigned char *api_key, size_t keylen, const char **why)
{
	sqlite3_stmt		*st;
	enum config_status	 rc;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_tenant_invalid(t));
	REFUSE_IF(api_key != NULL && (keylen == 0 ||
	    !config_valid_api_key(api_key, keylen)) ?
	    "API key (printable ASCII, no spaces, at most 512 bytes)" : NULL);
	if ((st = sql_stmt(&c->sql, CONFIG_Q_TENANT_SET)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, t->id) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, t->active ? 1 : 0) != SQLITE_OK ||
	    sql_bind_text(st, 3, t->status_base) != SQLITE_OK)
		return CONFIG_NOMEM;
	if ((rc = changed_one(c, st)) != CONFIG_OK || api_key == NULL)
		return rc;
	if ((st = sql_stmt(&c->sql, CONFIG_Q_TENANT_SET_KEY)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, t->id) != SQLITE_OK ||
	    config_bind_blob(st, 2, api_key, keylen) != SQLITE_OK) {
		sqlite3_clear_bindings(st);
		return CONFIG_NOMEM;
	}
	return changed_one(c, st);
}

enum config_status
config_endpoint_update(struct config *c, const struct config_endpoint *e,
    const char **why)
{
	sqlite3_stmt		*st;
	enum config_status	 rc;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_endpoint_invalid(e));
	if ((st = sql_stmt(&c->sql, CONFIG_Q_ENDPOINT_SET)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, e->name) != SQLITE_OK ||
	    sql_bind_text(st, 2, e->auth == CONFIG_AUTH_STANDARD ? NULL :
	    e->key_header) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, e->tolerance) != SQLITE_OK)
		return CONFIG_NOMEM;
	return changed_one(c, st);
}

enum config_status
config_destination_update(struct config *c,
    const struct config_destination *d, const unsigned char *secret,
    size_t secretlen, const char **why)
{
	sqlite3_stmt		*st;
	enum config_status	 rc;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_destination_invalid(d));
	REFUSE_IF(secret != NULL && (secretlen == 0 ||
	    secretlen > CONFIG_SECRET_MAX) ? "secret (1..512 bytes)" : NULL);
	if ((st = sql_stmt(&c->sql, CONFIG_Q_DEST_SET)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, d->tenant) != SQLITE_OK ||
	    sql_bind_text(st, 2, d->name) != SQLITE_OK ||
	    sql_bind_text(st, 3, d->url) != SQLITE_OK ||
	    sqlite3_bind_int(st, 4, d->idempotent ? 1 : 0) != SQLITE_OK ||
	    sql_bind_text(st, 5, d->status_url) != SQLITE_OK ||
	    sqlite3_bind_int(st, 6, d->timeout_ms) != SQLITE_OK ||
	    sqlite3_bind_int(st, 7, d->max_attempts) != SQLITE_OK)
		return CONFIG_NOMEM;
	if ((rc = changed_one(c, st)) != CONFIG_OK || secret == NULL)
		return rc;
	if ((st = sql_stmt(&c->sql, CONFIG_Q_DEST_SET_SECRET)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, d->tenant) != SQLITE_OK ||
	    sql_bind_text(st, 2, d->name) != SQLITE_OK ||
	    config_bind_blob(st, 3, secret, secretlen) != SQLITE_OK) {
		/* The statement may hold a transient copy of the secret. */
		sqlite3_clear_bindings(st);
		return CONFIG_NOMEM;
	}
	return changed_one(c, st);
}

/* ---- an endpoint's secrets by id ---------------------------------- */

/* CONFIG_OK when the endpoint exists. */
static enum config_status
endpoint_exists(struct config *c, const char *endpoint)
{
	struct config_endpoint	e;

	return config_endpoint_get(c, endpoint, &e);
}

enum config_status
config_secret_each(struct config *c, const char *endpoint,
    int (*fn)(void *, const struct config_secret_info *), void *arg)
{
	struct config_secret_info	 si;
	sqlite3_stmt			*st;
	enum config_status		 rc;
	int				 src;

	if ((rc = endpoint_exists(c, endpoint)) != CONFIG_OK)
		return rc;
	if ((st = sql_stmt(&c->sql, CONFIG_Q_SECRET_LIST)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, endpoint) != SQLITE_OK)
		return CONFIG_NOMEM;
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		si.id = sqlite3_column_int64(st, 0);
		si.created_at = sqlite3_column_int64(st, 1);
		si.expires_at = sqlite3_column_int64(st, 2);	/* NULL: 0 */
		if (fn(arg, &si) != 0) {
			src = SQLITE_DONE;
			break;
		}
	}
	rc = src == SQLITE_DONE ? CONFIG_OK : config_status_of(src);
	sqlite3_reset(st);
	return rc;
}

enum config_status
config_secret_revoke(struct config *c, const char *endpoint, int64_t id)
{
	sqlite3_stmt	*st;

	if (!c->writable)
		return CONFIG_ERROR;
	if ((st = sql_stmt(&c->sql, CONFIG_Q_SECRET_DEL)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, endpoint) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, id) != SQLITE_OK)
		return CONFIG_NOMEM;
	return changed_one(c, st);
}

enum config_status
config_secret_retire(struct config *c, const char *endpoint,
    int64_t expires_at, int *n)
{
	sqlite3_stmt		*st;
	enum config_status	 rc;

	*n = 0;
	if (!c->writable || expires_at <= 0)
		return CONFIG_ERROR;
	if ((rc = endpoint_exists(c, endpoint)) != CONFIG_OK)
		return rc;
	if ((st = sql_stmt(&c->sql, CONFIG_Q_SECRET_RETIRE)) == NULL)
		return config_status_of(sqlite3_errcode(c->sql.db));
	if (sql_bind_text(st, 1, endpoint) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, expires_at) != SQLITE_OK)
		return CONFIG_NOMEM;
	rc = config_status_of(sql_step_done(st));
	if (rc == CONFIG_OK)
		*n = sqlite3_changes(c->sql.db);
	return rc;
}
