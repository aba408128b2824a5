/*
 * config/pool.h: a few config.db connections shared by many threads.
 *
 * A threaded responder serves more requests at once than it has cores;
 * most of them are waiting for their COMMIT, not reading config.db.  A
 * thread takes a connection for its reads and gives it back before it
 * waits, so that a handful of connections (and their caches) serve every
 * thread.  A connection whose file is no longer the one at the path (a
 * restore renamed over it) is closed and opened again when taken.
 *
 * Transactions: none of its own: a taken connection is the taker's, to
 * use as config/config.h says, and is given back with no snapshot open.
 */
#ifndef HB_CONFIG_POOL_H
#define HB_CONFIG_POOL_H

#include "config/config.h"

struct config_pool;

#define CONFIG_POOL_MAX	64

/*
 * A pool of at most size (1..CONFIG_POOL_MAX) read-only connections to
 * path, opened as they are first needed.  Returns 0, or -1 when out of
 * memory or size is out of range.
 */
HB_API int config_pool_new(const char *path, int busy_ms, int size,
    struct config_pool **out) HB_MUST_CHECK;

/* Closes every connection; none may be taken.  NULL is a no-op. */
HB_API void config_pool_free(struct config_pool *);

/*
 * Takes a connection, waiting while all are taken.  NULL when config.db
 * cannot be opened (*why says why, static storage).
 */
HB_API struct config *config_pool_take(struct config_pool *,
    enum config_status *why) HB_MUST_CHECK;

/* Gives back a connection taken from this pool. */
HB_API void config_pool_give(struct config_pool *, struct config *);

#endif
