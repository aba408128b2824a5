/*
 * db/access.h: whether the role a data location connects as may use the
 * database there, asked of the server at once and answered in its words;
 * and the grants that let a serving role in.  For the front ends: the
 * responder's start-up probe, and the tool's reason for a failure that a
 * status alone would call "database error" (the host, the socket, the
 * role, the relation refused; never a password).
 *
 * A directory's files need neither: settings_check_dir() checks them,
 * and their modes are their grants.  For a directory every function here
 * answers without touching anything.
 *
 * Transactions: self-contained: each call opens a connection of its own,
 * runs its text (the grants in one transaction) and closes it.
 */
#ifndef HB_DB_ACCESS_H
#define HB_DB_ACCESS_H

#include <stddef.h>

#include "base/hb.h"

enum access_status {
	ACCESS_OK = 0,
	ACCESS_UNREACHABLE,	/* no connection: the server, the network,
				   the conninfo, the login */
	ACCESS_DENIED,		/* connected; the role lacks a grant */
	ACCESS_BUSY,		/* connected; a lock, a timeout, the
				   connection lost: worth a retry */
	ACCESS_UNUSABLE,	/* connected; the schemas missing or
				   unusable, anything else */
	ACCESS_REFUSED		/* not asked: not a PostgreSQL location, or
				   a role name that would need quoting */
};

/* What the role must be able to do. */
enum access_need {
	ACCESS_CONNECT,		/* connect */
	ACCESS_CONFIG,		/* ... and read the configuration */
	ACCESS_SERVE		/* ... and write the state as a request does */
};

/* A sentence for st (static storage). */
HB_API const char *access_strerror(enum access_status st);

/*
 * Connects to location (a settings' dir: a conninfo), within busy_ms,
 * every statement bounded by it too, and checks need without changing
 * anything.  On failure why (len bytes, the caller's) holds the reason:
 * libpq's for ACCESS_UNREACHABLE, the server's otherwise.  A directory:
 * ACCESS_OK, nothing asked.
 */
HB_API enum access_status access_probe(const char *location, int busy_ms,
    enum access_need need, char *why, size_t len) HB_MUST_CHECK;

/* Whose grants access_grant() gives. */
enum access_role {
	ACCESS_ROLE_SERVE = 0,	/* read the configuration, write the state */
	ACCESS_ROLE_REGISTRAR	/* the registrar service's: jobs alone */
};

/*
 * Gives role what a serving role (or the registrar service's) needs
 * (db/pg_schema.h), in one transaction on location's
 * database, as the role location connects as (the admin's); idempotent.
 * The connection takes busy_ms; a lock is not waited for.  On failure
 * why (len bytes) holds the reason, as access_probe()'s.  A directory,
 * or a role that is not a plain name ([a-z_][a-z0-9_]*, at most 63
 * bytes): ACCESS_REFUSED, nothing asked.
 */
HB_API enum access_status access_grant(const char *location, int busy_ms,
    enum access_role kind, const char *role, char *why, size_t len)
    HB_MUST_CHECK;

#endif /* HB_DB_ACCESS_H */
