/*
 * config/bulk.h: config.db in bulk, for the admin tool: a table listed,
 * whole or filtered, and jobs imported many at a time.
 *
 * Transactions: the lists are reads, each self-contained; the import's
 * writes are caller-owned, between config_begin() and config_commit()
 * (config/admin.h), one transaction per batch of lines.
 */
#ifndef HB_CONFIG_BULK_H
#define HB_CONFIG_BULK_H

#include "config/admin.h"

struct cJSON;

/* What config_list() shows: every field 0 or NULL shows all. */
struct config_list_filter {
	const char	*tenant;	/* one tenant's rows (a tenant: itself) */
	int64_t		 since_ms;	/* rows created at or after (unix ms) */
	int		 limit;		/* at most this many rows; 0: no limit */
};

/*
 * Lists a table's rows as the filter shows them (NULL: all), oldest
 * first, as a JSON array of objects, never with secrets: an endpoint
 * shows its count of active secrets and its mapping as JSON (null for
 * the kinds that have none); a destination's url and status_url have
 * their credentials masked (text_url_redact()).  Every time in the rows
 * is in unix milliseconds.  *out is freed with cJSON_Delete().
 */
HB_API enum config_status config_list(struct config *,
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
 * stored under the same tenant and id with other fields is CONFIG_EXISTS,
 * *why the first field that differs ("attempt", "step", "destination",
 * "source_url", "output"; static storage).
 */
HB_API enum config_status config_job_import(struct config *,
    const struct config_job *, int *present, const char **why) HB_MUST_CHECK;

#endif
