/*
 * config_admin.h: the admin tool's writes to config.db, and the names
 * it reads and prints.
 *
 * Transactions: each write is self-contained, or caller-owned between
 * config_begin() and config_commit().
 *
 * The writes take a CONFIG_WRITE handle from config_open() (config.h)
 * and refuse what every read refuses again (the same validators).  The
 * SQL they run lives in config.c.
 */
#ifndef HB_CONFIG_ADMIN_H
#define HB_CONFIG_ADMIN_H

#include "config.h"

struct cJSON;

HB_API const char *config_kind_name(enum config_kind);
HB_API const char *config_auth_name(enum config_auth);
HB_API int config_kind_parse(const char *, enum config_kind *);
HB_API int config_auth_parse(const char *, enum config_auth *);

/* Creates config.db with its schema (mode 0640).  Existing file: CONFIG_EXISTS. */
HB_API enum config_status config_create(const char *path) HB_MUST_CHECK;

/*
 * Admin writes (CONFIG_WRITE only).  On CONFIG_INVALID, *why names the
 * offending field (static storage).  Secrets are copied, never logged.
 */
HB_API enum config_status config_tenant_add(struct config *,
    const struct config_tenant *, const unsigned char *api_key, size_t keylen,
    const char **why) HB_MUST_CHECK;
HB_API enum config_status config_endpoint_add(struct config *,
    const struct config_endpoint *, const char **why) HB_MUST_CHECK;
/*
 * Adds a secret to an endpoint (rotation: older ones stay until removed
 * or expired).  For key-mode endpoints the secret is hashed first and
 * only the hash is stored.  expires_at 0 = never.
 */
HB_API enum config_status config_secret_add(struct config *,
    const char *endpoint, const unsigned char *secret, size_t len,
    int64_t expires_at, const char **why) HB_MUST_CHECK;
HB_API enum config_status config_destination_add(struct config *,
    const struct config_destination *, const unsigned char *secret,
    size_t secretlen, const char **why) HB_MUST_CHECK;
HB_API enum config_status config_job_add(struct config *,
    const struct config_job *, const char **why) HB_MUST_CHECK;

/* Groups admin writes into one transaction (CONFIG_WRITE only). */
HB_API enum config_status config_begin(struct config *) HB_MUST_CHECK;
HB_API enum config_status config_commit(struct config *) HB_MUST_CHECK;
HB_API void config_rollback(struct config *);

enum config_table {
	CONFIG_TENANTS = 0, CONFIG_ENDPOINTS, CONFIG_DESTINATIONS, CONFIG_JOBS
};

/*
 * Removes one row.  For destinations and jobs key2 is the name / job id
 * and key the tenant; otherwise key2 is NULL.  A row still referenced
 * (a tenant with endpoints, a destination with jobs) is CONFIG_REFUSED.
 */
HB_API enum config_status config_remove(struct config *, enum config_table,
    const char *key, const char *key2) HB_MUST_CHECK;

/*
 * Lists a table as a JSON array of objects (never with secrets; an
 * endpoint shows its count of active secrets; times in unix ms).  *out
 * is freed with cJSON_Delete().  The same as config_list_where() with no
 * filter.
 */
HB_API enum config_status config_list(struct config *, enum config_table,
    struct cJSON **out) HB_MUST_CHECK;

/* ---- listing with filters, importing jobs ---- */

/* What config_list_where() shows: every field 0 or NULL shows all. */
struct config_list_filter {
	const char	*tenant;	/* one tenant's rows (a tenant: itself) */
	int64_t		 since_ms;	/* rows created at or after (unix ms) */
	int		 limit;		/* at most this many rows; 0: no limit */
};

/*
 * config_list() with a filter (NULL: none), oldest-first order as
 * config_list().  Every time in the rows is in unix milliseconds; a
 * destination's url and status_url have their credentials masked
 * (util_url_redact()).  *out is freed with cJSON_Delete().
 */
HB_API enum config_status config_list_where(struct config *,
    enum config_table, const struct config_list_filter *,
    struct cJSON **out) HB_MUST_CHECK;

/*
 * One line of a job import (JSON Lines) into *j: a JSON object with the
 * fields of `hookbox job add`: "tenant", "job_id", "attempt", "step" and
 * "destination" (strings, required; "tenant" may be left to the caller's
 * tenant, which it must then equal), "source_url" (a string) and "output"
 * (an object, kept as compact JSON); null is the same as absent, and any
 * other field is refused.  On CONFIG_INVALID, why (whylen bytes) says
 * what is wrong, e.g. `missing "step"`.  Checks the shape only: the
 * values are checked when the job is added.
 */
HB_API enum config_status config_job_parse(const char *line, size_t len,
    const char *tenant, struct config_job *j, char *why, size_t whylen)
    HB_MUST_CHECK;

/*
 * config_job_add() for an import (one statement, prepared once and reused
 * for every line; the caller groups lines into transactions with
 * config_begin()).  A job already stored with the same fields is
 * CONFIG_OK with *present set: importing a file twice adds nothing.  One
 * stored under the same tenant and id with other fields is CONFIG_EXISTS.
 */
HB_API enum config_status config_job_import(struct config *,
    const struct config_job *, int *present, const char **why) HB_MUST_CHECK;

#endif
