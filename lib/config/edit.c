/*
 * config/edit.c: the admin tool's changes in place, an endpoint's secrets by
 * id, and why a write was refused.  The SQL it runs lives in config/config.c,
 * used by statement enum; the checks of new values are config/check.c's.
 */
#include <string.h>

#include "config/config_int.h"
#include "config/edit.h"

/* ---- look-ups that explain a refusal ------------------------------ */

/* Binds text keys (NULL ends them) and steps once: CONFIG_OK is a row. */
static enum config_status
first_row(struct config *c, enum config_q q, const char *const *keys,
    struct db_stmt **out)
{
	struct db_stmt		*st;
	enum config_status	 status;
	enum db_rc		 rc;
	int			 i;

	*out = NULL;
	if ((st = config_stmt(c, q, &status)) == NULL)
		return status;
	for (i = 0; keys[i] != NULL; i++)
		if (db_bind_opt(st, i + 1, keys[i]) != DB_OK)
			return CONFIG_NOMEM;
	if ((rc = db_step(st)) == DB_ROW) {
		*out = st;
		return CONFIG_OK;
	}
	return rc == DB_DONE ? CONFIG_NOTFOUND : config_status_of(c, rc);
}

enum config_status
config_referrer(struct config *c, enum config_table t, const char *key,
    const char *key2, const char **kind, char *name, size_t namelen)
{
	const char *const	 keys[] = { key, key2, NULL };
	struct db_stmt		*st;
	const char		*k;
	enum config_status	 rc;

	*kind = NULL;
	if (t != CONFIG_TENANTS && (t != CONFIG_DESTINATIONS || key2 == NULL))
		return CONFIG_ERROR;
	rc = first_row(c, t == CONFIG_TENANTS ? CONFIG_Q_TENANT_REFERRER :
	    CONFIG_Q_DEST_REFERRER, keys, &st);
	/* A destination no job refers to may be a mapping's. */
	if (rc == CONFIG_NOTFOUND && t == CONFIG_DESTINATIONS &&
	    (rc = config_dest_mapped_by(c, key, key2, name, namelen)) ==
	    CONFIG_OK)
		*kind = "endpoint";
	if (rc != CONFIG_OK || *kind != NULL)
		return rc;
	k = db_col_text(st, 0);
	*kind = k[0] == '\0' ? NULL : strcmp(k, "endpoint") == 0 ? "endpoint" :
	    strcmp(k, "destination") == 0 ? "destination" : "job";
	if (*kind == NULL || db_col_copy(st, 1, name, namelen) != 0)
		rc = CONFIG_ERROR;
	db_reset(st);
	return rc;
}

enum config_status
config_job_of_action(struct config *c, const char *tenant,
    const char *attempt, const char *step, char *job_id, size_t len)
{
	const char *const	 keys[] = { tenant, attempt, step, NULL };
	struct db_stmt		*st;
	enum config_status	 rc;

	if ((rc = first_row(c, CONFIG_Q_JOB_OF_ACTION, keys, &st)) !=
	    CONFIG_OK)
		return rc;
	if (db_col_copy(st, 0, job_id, len) != 0)
		rc = CONFIG_ERROR;
	db_reset(st);
	return rc;
}

/* ---- changes in place --------------------------------------------- */

/* Steps a bound write: CONFIG_NOTFOUND when it changed no row. */
static enum config_status
changed_one(struct config *c, struct db_stmt *st, int secret)
{
	enum config_status	rc;

	rc = config_write(c, st);
	/* The statement holds a copy of a secret until it is bound again. */
	if (secret > 0)
		(void)db_bind_null(st, secret);
	if (rc != CONFIG_OK)
		return rc;
	return db_changes(st) > 0 ? CONFIG_OK : CONFIG_NOTFOUND;
}

enum config_status
config_tenant_update(struct config *c, const struct config_tenant *t,
    const unsigned char *api_key, size_t keylen, const char **why)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_tenant_invalid(t));
	REFUSE_IF(api_key != NULL && (keylen == 0 ||
	    !config_valid_api_key(api_key, keylen)) ?
	    "API key (printable ASCII, no spaces, at most 512 bytes)" : NULL);
	if ((st = config_stmt(c, CONFIG_Q_TENANT_SET, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, t->id) != DB_OK ||
	    db_bind_int64(st, 2, t->active ? 1 : 0) != DB_OK ||
	    db_bind_opt(st, 3, t->status_base) != DB_OK)
		return CONFIG_NOMEM;
	if ((rc = changed_one(c, st, 0)) != CONFIG_OK || api_key == NULL)
		return rc;
	if ((st = config_stmt(c, CONFIG_Q_TENANT_SET_KEY, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, t->id) != DB_OK ||
	    config_bind_blob(st, 2, api_key, keylen) != DB_OK) {
		(void)db_bind_null(st, 2);
		return CONFIG_NOMEM;
	}
	return changed_one(c, st, 2);
}

enum config_status
config_endpoint_update(struct config *c, const struct config_endpoint *e,
    const char **why)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_endpoint_invalid(e));
	if ((st = config_stmt(c, CONFIG_Q_ENDPOINT_SET, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, e->name) != DB_OK ||
	    db_bind_opt(st, 2, e->auth == CONFIG_AUTH_STANDARD ? NULL :
	    e->key_header) != DB_OK ||
	    db_bind_int64(st, 3, e->tolerance) != DB_OK)
		return CONFIG_NOMEM;
	return changed_one(c, st, 0);
}

enum config_status
config_destination_update(struct config *c,
    const struct config_destination *d, const unsigned char *secret,
    size_t secretlen, const char **why)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_destination_invalid(d));
	REFUSE_IF(config_destination_refused(d));
	REFUSE_IF(secret != NULL && (secretlen == 0 ||
	    secretlen > CONFIG_SECRET_MAX) ? "secret (1..512 bytes)" : NULL);
	if ((st = config_stmt(c, CONFIG_Q_DEST_SET, &rc)) == NULL)
		return rc;
	if (config_bind_destination(st, d) != DB_OK ||
	    db_bind_int64(st, 7, d->timeout_ms) != DB_OK ||
	    config_bind_count(st, 8, d->max_attempts) != DB_OK ||
	    config_bind_policy(st, 9, d) != DB_OK)
		return CONFIG_NOMEM;
	if ((rc = changed_one(c, st, 0)) != CONFIG_OK || secret == NULL)
		return rc;
	if ((st = config_stmt(c, CONFIG_Q_DEST_SET_SECRET, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, d->tenant) != DB_OK ||
	    db_bind_opt(st, 2, d->name) != DB_OK ||
	    config_bind_blob(st, 3, secret, secretlen) != DB_OK) {
		/* The statement may hold a copy of the secret. */
		(void)db_bind_null(st, 3);
		return CONFIG_NOMEM;
	}
	return changed_one(c, st, 3);
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
	struct db_stmt			*st;
	enum config_status		 rc;
	enum db_rc			 src;

	if ((rc = endpoint_exists(c, endpoint)) != CONFIG_OK)
		return rc;
	if ((st = config_stmt(c, CONFIG_Q_SECRET_LIST, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, endpoint) != DB_OK)
		return CONFIG_NOMEM;
	while ((src = db_step(st)) == DB_ROW) {
		si.id = db_col_int64(st, 0);
		si.created_at = db_col_int64(st, 1);
		si.expires_at = db_col_int64(st, 2);	/* NULL: 0 */
		if (fn(arg, &si) != 0) {
			src = DB_DONE;
			break;
		}
	}
	rc = src == DB_DONE ? CONFIG_OK : config_status_of(c, src);
	db_reset(st);
	return rc;
}

enum config_status
config_secret_revoke(struct config *c, const char *endpoint, int64_t id)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	if (!c->writable)
		return CONFIG_ERROR;
	if ((st = config_stmt(c, CONFIG_Q_SECRET_DEL, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, endpoint) != DB_OK ||
	    db_bind_int64(st, 2, id) != DB_OK)
		return CONFIG_NOMEM;
	return changed_one(c, st, 0);
}

enum config_status
config_secret_retire(struct config *c, const char *endpoint,
    int64_t expires_at, int *n)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	*n = 0;
	if (!c->writable || expires_at <= 0)
		return CONFIG_ERROR;
	if ((rc = endpoint_exists(c, endpoint)) != CONFIG_OK)
		return rc;
	if ((st = config_stmt(c, CONFIG_Q_SECRET_RETIRE, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, endpoint) != DB_OK ||
	    db_bind_int64(st, 2, expires_at) != DB_OK)
		return CONFIG_NOMEM;
	rc = config_write(c, st);
	if (rc == CONFIG_OK)
		*n = (int)db_changes(st);
	return rc;
}
