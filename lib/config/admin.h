/*
 * config/admin.h: the admin tool's writes to config.db, and the names
 * it reads and prints.
 *
 * Transactions: each write is self-contained, or caller-owned between
 * config_begin() and config_commit().
 *
 * The writes take a CONFIG_WRITE handle from config_open() (config/config.h)
 * and refuse what every read refuses again (the same validators).  The
 * SQL they run lives in config/config.c.
 */
#ifndef HB_CONFIG_ADMIN_H
#define HB_CONFIG_ADMIN_H

#include "config/config.h"

struct cJSON;

HB_API const char *config_kind_name(enum config_kind);
HB_API const char *config_auth_name(enum config_auth);
HB_API int config_kind_parse(const char *, enum config_kind *);
HB_API int config_auth_parse(const char *, enum config_auth *);

/*
 * Creates config.db with its schema (mode 0640).  Existing file:
 * CONFIG_EXISTS.  On PostgreSQL: creates the schema hookbox_config, or
 * answers CONFIG_EXISTS when it is there.
 */
HB_API enum config_status config_create(const char *path) HB_MUST_CHECK;

/*
 * Admin writes (CONFIG_WRITE only).  On CONFIG_INVALID, *why names the
 * offending field (static storage).  Secrets are copied, never logged.
 * An endpoint of kind mapped is added with its mapping, by
 * config_endpoint_add_mapped() (config/map.h): config_endpoint_add()
 * refuses it.
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

/*
 * Groups admin writes into one transaction (CONFIG_WRITE only; no
 * nesting).  A write refused inside it (CONFIG_EXISTS, CONFIG_REFUSED)
 * leaves it usable.  On PostgreSQL it is serializable: a commit that
 * another admin's would have made wrong is CONFIG_BUSY, to retry.
 */
HB_API enum config_status config_begin(struct config *) HB_MUST_CHECK;
HB_API enum config_status config_commit(struct config *) HB_MUST_CHECK;
HB_API void config_rollback(struct config *);

/* config/registrar.h's registrars are listed (config/bulk.h), not removed
   by config_remove(). */
enum config_table {
	CONFIG_TENANTS = 0, CONFIG_ENDPOINTS, CONFIG_DESTINATIONS, CONFIG_JOBS,
	CONFIG_REGISTRARS
};

/*
 * Removes one row.  For destinations and jobs key2 is the name / job id
 * and key the tenant; otherwise key2 is NULL.  A row still referenced
 * (a tenant with endpoints, a destination with jobs or named by a mapped
 * endpoint's mapping, config/map.h) is CONFIG_REFUSED.
 */
HB_API enum config_status config_remove(struct config *, enum config_table,
    const char *key, const char *key2) HB_MUST_CHECK;

#endif
