/*
 * config/registrar.h: registrars, the users (on PostgreSQL, the roles)
 * that may register, list and remove the jobs of the tenants the
 * configuration's owner names for them, and change nothing else.
 *
 * The owner names them with admin writes (config/admin.h's rules: a
 * CONFIG_WRITE handle).  Whoever acts for a registrar (the registrar
 * service, hookbox(1)) opens the configuration, then narrows the handle
 * to that registrar with config_registrar_scope(): from then on the
 * handle prepares no statement but a job's look-up, add, list and
 * removal and the reads those make (the tenant, the destination), never
 * a secret; a job of a tenant not the registrar's is CONFIG_DENIED; and
 * a job list holds the registrar's tenants alone.  The narrowing cannot
 * be undone on that handle.
 */
#ifndef HB_CONFIG_REGISTRAR_H
#define HB_CONFIG_REGISTRAR_H

#include "config/config.h"

/* Longest registrar name: a Debian user name's 32 bytes. */
#define CONFIG_REGISTRAR_MAX	32

/*
 * Non-zero for a registrar name: 1..CONFIG_REGISTRAR_MAX of a-z, 0-9,
 * '_' and '-', not starting with a digit or '-' (a Debian user name
 * without capitals; the same, without '-', is a PostgreSQL role name that
 * needs no quoting).
 */
HB_API int config_registrar_name_valid(const char *);

/*
 * name may register tenant's jobs.  A name that is not valid is
 * CONFIG_INVALID (*why names it); a tenant that does not exist
 * CONFIG_REFUSED; the pair there already CONFIG_EXISTS.
 */
HB_API enum config_status config_registrar_add(struct config *,
    const char *name, const char *tenant, const char **why) HB_MUST_CHECK;

/*
 * name may no longer register tenant's jobs, or, tenant NULL, any
 * tenant's.  Jobs it registered stay.  CONFIG_NOTFOUND when there was
 * nothing to remove.
 */
HB_API enum config_status config_registrar_remove(struct config *,
    const char *name, const char *tenant) HB_MUST_CHECK;

/*
 * Narrows the handle to registrar name (above).  CONFIG_NOTFOUND when
 * name may register no tenant's jobs; the handle is then narrowed all
 * the same, to nothing.
 */
HB_API enum config_status config_registrar_scope(struct config *,
    const char *name) HB_MUST_CHECK;

/*
 * CONFIG_OK when the handle may change tenant's jobs: any tenant's when
 * it is not narrowed, else the registrar's alone (CONFIG_DENIED, *why
 * says whose they are not; static storage).
 */
HB_API enum config_status config_registrar_allows(struct config *,
    const char *tenant, const char **why) HB_MUST_CHECK;

#endif
