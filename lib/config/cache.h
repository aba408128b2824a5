/*
 * config/cache.h: the configuration as a responder's threads share it:
 * one snapshot of every endpoint, secret and tenant in memory, which a
 * request is never answered from unless config.db's version, read after
 * the request arrived, is the snapshot's.
 *
 * config.db keeps a version (lib/config/config.c): one row that every change to
 * the tenants, endpoints or secrets bumps in its own transaction, by
 * triggers, whoever writes.  A snapshot is read whole, with the version,
 * in one read transaction, and shared: reference-counted, replaced under
 * a lock, its secrets wiped when the last holder drops it.  A request
 * confirms it with the one statement it makes anyway, the look-up of its
 * job, which returns the version beside the job (config_cache_job()); a
 * request that reads no job (an unknown endpoint, a bad signature, an
 * event without a job) confirms it with config_cache_check(), one read of
 * the version that every request waiting for one shares.  Seeing another
 * version, either reads the new snapshot (one reader at a time) and says
 * CONFIG_STALE: the request starts again from the new one.  So a change
 * is in force for the next request, as with no cache, and an accepted
 * request makes one statement: on PostgreSQL one round trip.
 *
 * A config.db without the version (made by the previous release, before
 * any write by this one), or whose triggers are gone, is read as it
 * always was: per request, in one read transaction, only what the
 * request needs.  Each such request looks for the version again, and the
 * snapshot is shared from the first that finds it.
 *
 * Transactions: self-contained: each call that reads config.db takes a
 * pooled connection (config/pool.h), reads, and gives it back before it
 * returns.  No call holds a connection while it waits for another
 * thread.
 */
#ifndef HB_CONFIG_CACHE_H
#define HB_CONFIG_CACHE_H

#include "config/config.h"

struct config_cache;
struct config_snap;

/*
 * A cache over config.db at path, with a pool of conns (1..
 * CONFIG_POOL_MAX) read-only connections opened as they are needed,
 * busy_ms their busy timeout.  Reads nothing yet.  Returns 0, or -1 when
 * out of memory or conns is out of range.
 */
HB_API int config_cache_new(const char *path, int busy_ms, int conns,
    struct config_cache **out) HB_MUST_CHECK;

/* Frees the cache and its pool; no snapshot may be held.  NULL: no-op. */
HB_API void config_cache_free(struct config_cache *);

/*
 * The snapshot a request for endpoint starts from, held until
 * config_cache_drop(): the shared one (read now when there is none), or
 * one read for this request alone when config.db has no version.  NULL
 * when config.db cannot be read: *why says why (CONFIG_BUSY, ...).
 */
HB_API struct config_snap *config_cache_hold(struct config_cache *,
    const char *endpoint, enum config_status *why) HB_MUST_CHECK;
HB_API void config_cache_drop(struct config_cache *, struct config_snap *);

/*
 * Look-ups in a held snapshot, checked as config/config.h's are: CONFIG_OK,
 * CONFIG_NOTFOUND, CONFIG_INVALID or CONFIG_ERROR for a row that breaks
 * the rules.  Nothing says yet that the snapshot is current: see
 * config_cache_job() and config_cache_check().  A mapped endpoint comes
 * with its mapping, parsed when the snapshot was read (one that does not
 * parse: CONFIG_INVALID): e->mapping is the snapshot's, valid while it
 * is held.
 */
HB_API enum config_status config_snap_endpoint(const struct config_snap *,
    const char *name, struct config_endpoint *) HB_MUST_CHECK;
HB_API enum config_status config_snap_tenant(const struct config_snap *,
    const char *id, struct config_tenant *) HB_MUST_CHECK;
/*
 * An endpoint's secrets unexpired at now, newest first, as
 * config_endpoint_secrets() gives them; more than CONFIG_SECRETS_MAX is
 * CONFIG_INVALID.  The keys point into the snapshot (out->buf is NULL):
 * valid while it is held; config_secrets_clear() forgets them.
 */
HB_API enum config_status config_snap_secrets(const struct config_snap *,
    const char *endpoint, int64_t now, struct config_secrets *out)
    HB_MUST_CHECK;

/*
 * The job, and config.db's version, in one statement: CONFIG_OK (job
 * filled) or CONFIG_NOTFOUND, and either way the snapshot is current;
 * CONFIG_STALE when the version is not the snapshot's (a new one has been
 * read: drop this one and start again from config_cache_hold()); or the
 * failure (CONFIG_BUSY, ...), after which nothing may be answered from
 * the snapshot.
 */
HB_API enum config_status config_cache_job(struct config_cache *,
    const struct config_snap *, const char *tenant, const char *job_id,
    struct config_job *) HB_MUST_CHECK;

/*
 * Whether a request from snapshot s may leave its job to a batch's
 * config_cache_jobs(): s's version (>= 0), or -1 when it reads the job
 * itself with config_cache_job(): a snapshot read for one request.
 */
HB_API int64_t config_cache_defers(const struct config_cache *,
    const struct config_snap *s);

/* One job a batch asks for: config_cache_jobs(). */
struct config_ask {
	const char		*tenant;
	const char		*job_id;
	int64_t			 version;	/* config_cache_defers()'s */
	struct config_job	*job;		/* filled on CONFIG_OK */
	enum config_status	 status;
};

/*
 * The jobs of many requests, each with config.db's version, in one
 * statement: a batch costs config.db one read (and a server one round
 * trip and one statement), not one a member.
 * Each ask ends CONFIG_OK, CONFIG_NOTFOUND (either way its snapshot is
 * current), CONFIG_STALE (config.db holds another version, which has been
 * read: its request starts again from config_cache_hold()), or the
 * failure (CONFIG_BUSY, ...).
 */
HB_API void config_cache_jobs(struct config_cache *, struct config_ask *,
    size_t n);

/*
 * Is the snapshot current?  config.db's version is read once by a read
 * that starts after this call did, shared by every caller waiting at the
 * time: CONFIG_OK, CONFIG_STALE (as above) or the read's failure.  A
 * snapshot read for one request is current: CONFIG_OK at once.
 */
HB_API enum config_status config_cache_check(struct config_cache *,
    const struct config_snap *) HB_MUST_CHECK;

/* What the cache has done since it was made. */
struct config_cache_stats {
	int64_t	loads;		/* snapshots read whole */
	int64_t	checks;		/* reads of the version alone */
	int64_t	singles;	/* snapshots read for one request */
	int64_t	waiting;	/* callers waiting now for a read begun
				   before they came */
	int64_t	version;	/* the shared snapshot's version, or -1 */
	int64_t	batches;	/* config_cache_jobs() calls */
	int64_t	asked;		/* the jobs they looked up */
};
HB_API void config_cache_stats(struct config_cache *,
    struct config_cache_stats *);

#endif
