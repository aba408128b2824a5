/*
 * status.h: what an operator watches, as the responder serves it: the
 * Prometheus text of the pending work and the counters (its metrics
 * route), and whether a callback can be accepted now (its health route).
 * The responder maps the outcomes to statuses; the policy is here.
 *
 * Transactions: state.db reads, each its own statement.
 */
#ifndef HB_STATUS_H
#define HB_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct group;
struct metrics;

/* Where the text goes: put(arg, s, len), a piece at a time. */
typedef void (*status_put_fn)(void *arg, const char *s, size_t len);

/*
 * The exposition (text format 0.0.4): the build, the outbox by state, open
 * conflicts, the oldest pending age, this process's writer (commits,
 * failures, observations, round trips) from g, the counters (state.db's
 * plus m's not yet committed, read while no COMMIT of m's is under way),
 * each destination's undelivered rows, and the receipts by result.
 * Returns STORE_OK; or, when the outbox cannot be read, that status with
 * nothing written: the caller answers 503.  A later part that cannot be
 * read is a comment line in its place.
 */
HB_API enum store_status status_metrics(struct store *, struct group *g,
    struct metrics *m, status_put_fn put, void *arg) HB_MUST_CHECK;

/* How long a commit may keep a callback waiting before health says no. */
#define STATUS_STALL_MS	1000
/* The busy budget of the store status_health() is given: its longest
   wait for the write lock. */
#define STATUS_BUSY_MS	100

/*
 * Whether a callback can be accepted now: NULL when it can; else why not
 * (static storage), when the writer's last COMMIT failed for want of
 * disk or memory (until one succeeds again), when its batch in hand or a
 * waiting callback is older than STATUS_STALL_MS, or when st cannot take
 * the write lock within its busy budget (at most STATUS_BUSY_MS, as the
 * caller opens it).  Never waits longer than that.
 */
HB_API const char *status_health(struct store *st, struct group *g,
    int64_t now_ms);

#endif
