/*
 * db/access.c: what a role may do on a PostgreSQL location, asked of the
 * server (db/access.h).  The texts it runs are db/pg_schema.c's.
 */
#include <stdio.h>

#include "db/access.h"
#include "db/db.h"
#include "db/pg_schema.h"

/* pg_schema_grants()'s text for one role fits, with room. */
#define GRANTS_LEN	1024

const char *
access_strerror(enum access_status st)
{
	switch (st) {
	case ACCESS_OK:
		return "ok";
	case ACCESS_UNREACHABLE:
		return "cannot connect to the database";
	case ACCESS_DENIED:
		return "the role lacks a grant";
	case ACCESS_BUSY:
		return "database busy or connection lost";
	case ACCESS_UNUSABLE:
		return "the schemas are missing or unusable";
	case ACCESS_REFUSED:
		return "not a PostgreSQL database, or not a plain role name";
	}
	return "unknown error";
}

/*
 * Connects to location, then runs text (NULL: nothing), statements
 * bounded by statement_ms (db_open_pg()).  Its outcome, why the
 * reason.
 */
static enum access_status
run(const char *location, int busy_ms, int statement_ms, const char *text,
    char *why, size_t len)
{
	struct db		*db = NULL;
	enum access_status	 rc = ACCESS_OK;
	enum db_rc		 drc;

	if (db_open_pg(location, busy_ms, statement_ms, NULL, 0, &db, why,
	    len) != DB_OK)
		return ACCESS_UNREACHABLE;
	if (text != NULL && (drc = db_exec(db, text)) != DB_OK) {
		(void)snprintf(why, len, "%s", db_errmsg(db));
		rc = drc == DB_DENIED ? ACCESS_DENIED : drc == DB_BUSY ||
		    drc == DB_GONE ? ACCESS_BUSY : ACCESS_UNUSABLE;
		/* The grants' transaction, aborted: ended before closing. */
		if (db_in_tx(db))
			(void)db_exec(db, "ROLLBACK");
	}
	db_close(db);
	return rc;
}

enum access_status
access_probe(const char *location, int busy_ms, enum access_need need,
    char *why, size_t len)
{
	const char	*text = NULL;

	if (len > 0)
		why[0] = '\0';
	if (!(db_location_caps(location) & DB_CAP_SERVER))
		return ACCESS_OK;
	if (need == ACCESS_CONFIG)
		text = pg_schema_probe_config;
	else if (need == ACCESS_SERVE)
		text = pg_schema_probe_serve;
	return run(location, busy_ms, busy_ms, text, why, len);
}

enum access_status
access_grant(const char *location, int busy_ms, enum access_role kind,
    const char *role, char *why, size_t len)
{
	char	text[GRANTS_LEN];
	int	rc;

	if (len > 0)
		why[0] = '\0';
	if (!(db_location_caps(location) & DB_CAP_SERVER)) {
		(void)snprintf(why, len, "not a PostgreSQL database");
		return ACCESS_REFUSED;
	}
	rc = kind == ACCESS_ROLE_REGISTRAR ?
	    pg_schema_registrar_grants(role, text, sizeof(text)) :
	    pg_schema_grants(role, text, sizeof(text));
	if (rc != 0) {
		(void)snprintf(why, len, "not a plain role name");
		return ACCESS_REFUSED;
	}
	/* A budget of 0: a lock held elsewhere fails at once. */
	return run(location, busy_ms, 0, text, why, len);
}
