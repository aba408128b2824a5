/*
 * config/registrar.c: the registrars (config/registrar.h).  The SQL it runs
 * lives in config/config.c; config_stmt() there refuses a narrowed
 * handle every statement but those config/registrar.h allows.
 */
#include <string.h>

#include "base/util.h"
#include "config/config_int.h"
#include "config/registrar.h"

int
config_registrar_name_valid(const char *s)
{
	size_t	n;

	if (s == NULL || (n = strlen(s)) == 0 || n > CONFIG_REGISTRAR_MAX)
		return 0;
	if ((s[0] >= '0' && s[0] <= '9') || s[0] == '-')
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

enum config_status
config_registrar_add(struct config *c, const char *name, const char *tenant,
    const char **why)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	if ((rc = config_writable(c, why)) != CONFIG_OK)
		return rc;
	REFUSE_IF(config_registrar_name_valid(name) ? NULL : "registrar name"
	    " (1-" HB_STR(CONFIG_REGISTRAR_MAX) " of a-z, 0-9, _ and -, not"
	    " first a digit or -)");
	if ((st = config_stmt(c, CONFIG_Q_REGISTRAR_ADD, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, name) != DB_OK ||
	    db_bind_opt(st, 2, tenant) != DB_OK ||
	    db_bind_int64(st, 3, util_now()) != DB_OK)
		return CONFIG_NOMEM;
	return config_write(c, st);
}

enum config_status
config_registrar_remove(struct config *c, const char *name,
    const char *tenant)
{
	struct db_stmt		*st;
	enum config_status	 rc;
	const char		*why;

	if ((rc = config_writable(c, &why)) != CONFIG_OK)
		return rc;
	if ((st = config_stmt(c, CONFIG_Q_REGISTRAR_DEL, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, name) != DB_OK ||
	    (tenant != NULL ? db_bind_opt(st, 2, tenant) :
	    db_bind_null(st, 2)) != DB_OK)
		return CONFIG_NOMEM;
	if ((rc = config_write(c, st)) != CONFIG_OK)
		return rc;
	return db_changes(st) > 0 ? CONFIG_OK : CONFIG_NOTFOUND;
}

/* Whether name may register tenant's jobs (tenant NULL: any's). */
static enum config_status
registrar_has(struct config *c, const char *name, const char *tenant)
{
	struct db_stmt		*st;
	enum config_status	 rc;
	enum db_rc		 step;
	int64_t			 n = 0;

	if ((st = config_stmt(c, CONFIG_Q_REGISTRAR_HAS, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, name) != DB_OK ||
	    (tenant != NULL ? db_bind_opt(st, 2, tenant) :
	    db_bind_null(st, 2)) != DB_OK)
		return CONFIG_NOMEM;
	if ((step = db_step(st)) == DB_ROW)
		n = db_col_int64(st, 0);
	db_reset(st);
	if (step != DB_ROW)
		return config_status_of(c, step);
	return n > 0 ? CONFIG_OK : CONFIG_NOTFOUND;
}

enum config_status
config_registrar_scope(struct config *c, const char *name)
{
	size_t	n = name != NULL ? strlen(name) : 0;

	/* Narrowed first: whatever follows, the handle stays narrow. */
	c->scoped = 1;
	if (!config_registrar_name_valid(name) ||
	    n >= sizeof(c->registrar))
		return CONFIG_NOTFOUND;
	memcpy(c->registrar, name, n + 1);
	return registrar_has(c, name, NULL);
}

enum config_status
config_registrar_allows(struct config *c, const char *tenant,
    const char **why)
{
	enum config_status	rc;

	*why = NULL;
	if (!c->scoped)
		return CONFIG_OK;
	if (tenant != NULL && c->registrar[0] != '\0' &&
	    (rc = registrar_has(c, c->registrar, tenant)) != CONFIG_NOTFOUND)
		return rc;
	*why = "not a tenant whose jobs this registrar may register";
	return CONFIG_DENIED;
}
