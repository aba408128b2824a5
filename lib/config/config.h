/*
 * config/config.h: the trusted configuration, config.db, as its readers (the
 * responder, the dispatcher, the poller) see it.
 *
 * Transactions: reads only; each look-up is self-contained, or inside
 * one config_snapshot().  config_upgrade(), its owner's change of the
 * schema, is self-contained, on connections of its own.
 *
 * It is a SQLite file, config.db, or the schema hookbox_config of a
 * PostgreSQL database when the path is a conninfo or a postgresql:// URI
 * (db/db.h says which).
 *
 * Written only by the admin commands (config/admin.h, CONFIG_WRITE);
 * every other reader opens it with SQLITE_OPEN_READONLY (CONFIG_READ), or
 * on PostgreSQL in a session whose transactions are read-only, so a
 * compromised responder cannot rewrite tenants, secrets or job mappings
 * (its role's grants say so again).  Nothing is cached: a change is seen
 * by the next read.  The file stays in rollback journal mode so that
 * readers need nothing but read permission.  Every look-up checks its
 * row again against the rules the admin writes enforce (CONFIG_INVALID).
 *
 * A lock held too long, a statement past busy_ms, and on PostgreSQL a
 * server out of reach are CONFIG_BUSY: worth a retry later.
 *
 * All config.db SQL lives in config/config.c.
 */
#ifndef HB_CONFIG_H
#define HB_CONFIG_H

#include "base/hb.h"
#include "config/rows.h"
#include "provider/auth.h"

struct config;

enum config_status {
	CONFIG_OK = 0,
	CONFIG_NOTFOUND,	/* no such row */
	CONFIG_EXISTS,		/* a row with that key exists already */
	CONFIG_INVALID,		/* a value failed validation (see *why) */
	CONFIG_REFUSED,		/* still referenced, or refers to nothing */
	CONFIG_BUSY,		/* locked past the busy timeout */
	CONFIG_ERROR,		/* I/O, corruption, wrong schema */
	CONFIG_NOMEM,
	CONFIG_STALE,		/* changed since the snapshot
				   (config/cache.h) */
	CONFIG_OLD,		/* the schema of an older release: `hookbox
				   init` upgrades it (config/map.h) */
	CONFIG_DENIED		/* not this user's or role's to do: a
				   file or directory read-only to it
				   (SQLite), no grant (PostgreSQL) */
};

enum config_mode { CONFIG_READ, CONFIG_WRITE };

#define CONFIG_SECRETS_MAX	8	/* active secrets per endpoint */
#define CONFIG_SECRET_MAX	512	/* bytes in one secret */

/*
 * An endpoint's or destination's secrets, in memory the caller owns:
 * config_secrets_clear() wipes and frees them.  s[i].key points into buf.
 */
struct config_secrets {
	struct auth_secret	 s[CONFIG_SECRETS_MAX];
	int64_t			 id[CONFIG_SECRETS_MAX];	/* an endpoint's
						   secrets' ids; else 0 */
	size_t			 n;
	unsigned char		*buf;
	size_t			 buflen;
};

HB_API const char *config_strerror(enum config_status);

/*
 * Opens config.db.  *out is freed with config_close().  busy_ms bounds
 * the wait for a writer's lock (on PostgreSQL: the connection and every
 * statement).  The schema of an older release is CONFIG_OLD, in either
 * mode: only config_upgrade() changes it.  A schema of
 * another version, or none, is CONFIG_ERROR; a path that is a symbolic
 * link is refused (CONFIG_ERROR).  On PostgreSQL
 * the connection's options are replaced by the session's own.
 */
HB_API enum config_status config_open(const char *path, enum config_mode,
    int busy_ms, struct config **out) HB_MUST_CHECK;
HB_API void config_close(struct config *);

/* The schema this release opens (PRAGMA user_version of config.db). */
#define CONFIG_SCHEMA_VERSION	5

/*
 * Upgrades the configuration at path (config.db, or the schema
 * hookbox_config) to the schema this release opens: from version 1, the
 * previous release's, whose endpoints could not be mapped, 2, whose
 * could not be authenticated by a declared scheme, or 3, which had no
 * registrars.  Run by its
 * owner (`hookbox init`): a serving role cannot alter a table, and
 * config_open() refuses the older schema (CONFIG_OLD) in either mode.
 * Nothing else changes: every row is kept as it was.  The previous
 * release no longer opens it after.  *from is the version it was of,
 * CONFIG_SCHEMA_VERSION when there was nothing to do.  busy_ms as for
 * config_open().  A version newer than this release's, or none:
 * CONFIG_ERROR.
 */
HB_API enum config_status config_upgrade(const char *path, int busy_ms,
    int *from) HB_MUST_CHECK;

/*
 * Non-zero while the open config.db is still the file at its path.  A
 * long-lived reader (the responder) reopens when it is not, so that a
 * config.db replaced by rename is seen by the next request.
 */
HB_API int config_same_file(const struct config *);

/*
 * One snapshot for several look-ups: between config_snapshot() and
 * config_release() every read sees the same config.db, and the file is
 * locked, checked and read once instead of once per look-up (a request
 * makes four).  On PostgreSQL a writer does not wait for it.  A change is still seen by the next snapshot.  Not for a
 * CONFIG_WRITE handle inside config_begin().  config_release() without a
 * snapshot does nothing.
 */
HB_API enum config_status config_snapshot(struct config *) HB_MUST_CHECK;
HB_API void config_release(struct config *);

/* Look-ups.  The out structs are filled only on CONFIG_OK. */
HB_API enum config_status config_tenant_get(struct config *, const char *id,
    struct config_tenant *) HB_MUST_CHECK;
HB_API enum config_status config_endpoint_get(struct config *,
    const char *name, struct config_endpoint *) HB_MUST_CHECK;
HB_API enum config_status config_job_get(struct config *, const char *tenant,
    const char *job_id, struct config_job *) HB_MUST_CHECK;
HB_API enum config_status config_destination_get(struct config *,
    const char *tenant, const char *name, struct config_destination *)
    HB_MUST_CHECK;

/*
 * An endpoint's secrets that are unexpired at now, newest first, at most
 * CONFIG_SECRETS_MAX.  For key mode they are the stored hashes.
 */
HB_API enum config_status config_endpoint_secrets(struct config *,
    const char *endpoint, int64_t now, struct config_secrets *) HB_MUST_CHECK;
/* A destination's outgoing signing secret (n is 0 when it has none). */
HB_API enum config_status config_destination_secret(struct config *,
    const char *tenant, const char *name, struct config_secrets *)
    HB_MUST_CHECK;
/* A tenant's provider API key (n is 0 when none). */
HB_API enum config_status config_tenant_api_key(struct config *,
    const char *tenant, struct config_secrets *) HB_MUST_CHECK;
HB_API void config_secrets_clear(struct config_secrets *);

/*
 * Calls fn for every job of an active tenant that has a status API base
 * URL, oldest registration first, until fn returns non-zero.
 */
HB_API enum config_status config_pollable_jobs(struct config *,
    int (*fn)(void *arg, const struct config_job *, const char *base),
    void *arg) HB_MUST_CHECK;

#endif
