/*
 * config/edit.h: what the admin tool asks of config.db beyond adding and
 * removing rows: changing rows in place, an endpoint's secrets by id
 * (list, revoke, retire), and why a write was refused.  The values it
 * writes pass config/check.h's checks first.
 *
 * Transactions: each call is self-contained, or caller-owned between
 * config_begin() and config_commit() (config/admin.h); a look-up followed
 * by a write belongs in one such transaction.
 *
 * The SQL lives in config/config.c.
 */
#ifndef HB_CONFIG_EDIT_H
#define HB_CONFIG_EDIT_H

#include "config/admin.h"
#include "config/config.h"

/*
 * Why a removal was refused: the first row that still refers to the
 * tenant (t CONFIG_TENANTS, key) or to the destination (CONFIG_DESTINATIONS,
 * key the tenant, key2 the name: a job, else a mapped endpoint whose
 * mapping names it).  On CONFIG_OK *kind is "endpoint", "destination" or
 * "job" (static storage) and name holds its name; CONFIG_NOTFOUND when
 * nothing refers to it.
 */
HB_API enum config_status config_referrer(struct config *,
    enum config_table t, const char *key, const char *key2,
    const char **kind, char *name, size_t namelen) HB_MUST_CHECK;
/*
 * The job of the tenant already registered for attempt and step (whose
 * action id tenant:attempt:step a second job would share), into job_id;
 * CONFIG_NOTFOUND when there is none.
 */
HB_API enum config_status config_job_of_action(struct config *,
    const char *tenant, const char *attempt, const char *step, char *job_id,
    size_t len) HB_MUST_CHECK;

/*
 * Changes a row in place (CONFIG_WRITE only): every field of the struct
 * is written, so read the row first, change what was asked, then write.
 * A tenant's api_key and a destination's secret change only when given
 * (not NULL).  An endpoint's kind, auth and tenant never change: only
 * its header and tolerance.  No such row: CONFIG_NOTFOUND.  On
 * CONFIG_INVALID, *why names the field, as the adds do.
 */
HB_API enum config_status config_tenant_update(struct config *,
    const struct config_tenant *, const unsigned char *api_key,
    size_t keylen, const char **why) HB_MUST_CHECK;
HB_API enum config_status config_endpoint_update(struct config *,
    const struct config_endpoint *, const char **why) HB_MUST_CHECK;
HB_API enum config_status config_destination_update(struct config *,
    const struct config_destination *, const unsigned char *secret,
    size_t secretlen, const char **why) HB_MUST_CHECK;

/* One of an endpoint's secrets, as it may be shown: never its bytes. */
struct config_secret_info {
	int64_t	id;
	int64_t	created_at;
	int64_t	expires_at;	/* 0: never */
};

/*
 * Calls fn for each secret of the endpoint, expired ones included, oldest
 * first, until fn returns non-zero.  No such endpoint: CONFIG_NOTFOUND.
 */
HB_API enum config_status config_secret_each(struct config *,
    const char *endpoint,
    int (*fn)(void *arg, const struct config_secret_info *), void *arg)
    HB_MUST_CHECK;
/* Deletes one secret of the endpoint; CONFIG_NOTFOUND when it has none
   with that id. */
HB_API enum config_status config_secret_revoke(struct config *,
    const char *endpoint, int64_t id) HB_MUST_CHECK;
/*
 * Makes every secret of the endpoint that would outlive expires_at (or
 * never expire) expire then; *n is how many changed.
 */
HB_API enum config_status config_secret_retire(struct config *,
    const char *endpoint, int64_t expires_at, int *n) HB_MUST_CHECK;

#endif
