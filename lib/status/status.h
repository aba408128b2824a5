/*
 * status/status.h: what an operator watches, as the responder serves it: the
 * Prometheus text of the pending work and the counters (its metrics
 * route), whether a callback can be accepted now (its health route), and
 * the view its status page (status/page.h) and `hookbox status` share.
 * The responder maps the outcomes to statuses; the policy is here.
 *
 * Transactions: state.db reads, each its own statement.
 */
#ifndef HB_STATUS_H
#define HB_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "base/metrics.h"
#include "store/metrics.h"
#include "store/store.h"

struct cJSON;
struct group;

/* Where the text goes: put(arg, s, len), a piece at a time. */
typedef void (*status_put_fn)(void *arg, const char *s, size_t len);
struct status_out {
	status_put_fn	 put;
	void		*arg;
};
/* printf through o, one piece of at most 511 bytes (a longer one is
   not written: never a line cut short). */
HB_API void status_outf(const struct status_out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

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
 * disk or memory (until one succeeds again), when it failed busy or cut
 * off and a commit of st's own (store_metrics_probe()) fails too, when
 * its batch in hand or a waiting callback is older than STATUS_STALL_MS,
 * or when st cannot take the write lock within its busy budget (at most
 * STATUS_BUSY_MS, as the caller opens it).  Never waits much longer than
 * that (a server's COMMIT bound and its cancel, db/db.h).
 */
HB_API const char *status_health(struct store *st, struct group *g,
    int64_t now_ms);

/* ---- what the status page and `hookbox status` show ---- */

#define STATUS_DESTS_MAX	1000	/* destinations shown */
#define STATUS_DEAD_MAX		20	/* dead (and unknown) actions listed */

/*
 * A heartbeat older than this many seconds: no dispatcher is recording
 * (it beats every few seconds while it runs, busy or idle).
 */
#define STATUS_HEARTBEAT_STALE_S	60

/* One destination: its undelivered rows, last error and last delivery. */
struct status_dest {
	struct store_dest_gauge	g;
	int64_t			delivered_ms;	/* 0: none recorded */
};

/*
 * One read of state.db for an operator: the outbox by state, the oldest
 * pending, open conflicts, each destination (those with undelivered rows
 * or a recorded delivery, by name), the oldest dead actions with their
 * last error, and the oldest whose outcome is unknown (dead, unknown:
 * JSON arrays, as store_outbox_list() makes them), the destinations
 * held back or failing (store_circuit_list()),
 * and the counters (persisted, plus m's not yet committed when m is
 * given), the per-minute counts and the heartbeat among them.
 */
struct status_view {
	int64_t			 now_ms;
	struct store_counts	 counts;
	int64_t			 heartbeat_ms;	/* 0: no dispatcher yet */
	struct status_dest	*dests;
	int			 ndests;
	struct cJSON		*dead;
	struct cJSON		*unknown;
	struct cJSON		*circuits;	/* store/circuit.h's list */
	struct metrics_set	 counters;
};

/*
 * Reads v at now_ms.  STORE_OK; or the first read's failure, with v
 * emptied.  status_view_free() either way.
 */
HB_API enum store_status status_read(struct store *, struct metrics *m,
    int64_t now_ms, struct status_view *v) HB_MUST_CHECK;
HB_API void status_view_free(struct status_view *);

/*
 * The last hour's counts, minute by minute: counts[i][w] for minute
 * first + i (unix minutes, i < METRICS_MINUTES) and word w of kind
 * ("requests" or "deliveries"), words[] the words seen (at most
 * STATUS_WORDS_MAX, in order of first sight, kept in v).  Returns the
 * number of words.
 */
#define STATUS_WORDS_MAX	16
struct status_hour {
	int64_t		 first;
	const char	*words[STATUS_WORDS_MAX];
	int64_t		 counts[METRICS_MINUTES][STATUS_WORDS_MAX];
	int64_t		 total[STATUS_WORDS_MAX];
	int		 nwords;
};
HB_API void status_hour(const struct status_view *, const char *kind,
    struct status_hour *out);

/* v as `hookbox status --json` prints it.  NULL when out of memory. */
HB_API struct cJSON *status_json(const struct status_view *v);

#endif
