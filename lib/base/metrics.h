/*
 * base/metrics.h: counters that survive a restart.
 *
 * A process counts in memory (struct metrics, thread-safe) and adds what
 * it counted to state.db's metrics table (store/metrics.h) inside
 * transactions it runs anyway: the responder's group COMMIT, the
 * dispatcher's outcome transaction, the poller's last one.  A flush
 * takes the pending counts (metrics_take(), they become "in flight"),
 * writes them, and after the COMMIT metrics_done() forgets them (it
 * succeeded) or puts them back (it failed).  Until then /metrics shows
 * them from memory: persisted values + pending + in flight, read under
 * metrics_lock_commit() so that a COMMIT is seen either before or after,
 * never both or neither.  What a process counted and did not flush yet
 * is lost if it dies.
 *
 * Families (the name kept in state.db, and how it is exposed):
 *   requests		hookbox_requests_total{endpoint,result}
 *   deliveries		hookbox_deliveries_total{destination,outcome}
 *   polls		hookbox_polls_total{outcome}
 *   delivery_le	hookbox_delivery_duration_seconds_bucket{destination,le}
 *   delivery_sum_us	hookbox_delivery_duration_seconds_sum{destination}
 *   delivery_count	hookbox_delivery_duration_seconds_count{destination}
 *   heartbeat_ms	hookbox_dispatcher_heartbeat_timestamp_seconds
 *   delivered_ms	a destination's last delivery, unix ms (the status page)
 *   secret_used_ms	hookbox_endpoint_secret_last_used_timestamp_seconds
 *			{endpoint,secret}: when a request signed with an
 *			endpoint's secret (l2 its id) was last answered
 *   minute		per-minute counts for the status page's chart: l1 the
 *			minute (unix minutes, METRICS_MINUTE_DIGITS digits,
 *			so that they sort as text), l2 "requests:RESULT" or
 *			"deliveries:OUTCOME"; kept METRICS_MINUTES minutes
 *			(store/metrics.h prunes older ones)
 *
 * The families named *_ms hold times and keep the larger value; the
 * others add up.
 * Label values are bounded by the callers: configured names, "unknown",
 * result and outcome words.  A row past METRICS_ROWS_MAX is dropped.
 *
 * Transactions: none; no database (see store/metrics.h).
 */
#ifndef HB_METRICS_H
#define HB_METRICS_H

#include <stdint.h>

#include "base/hb.h"

#define METRICS_NAME_MAX	15
#define METRICS_L2_MAX		31
#define METRICS_ROWS_MAX	4096
#define METRICS_MINUTES		60	/* the chart's window, minutes */
#define METRICS_MINUTE_DIGITS	10

/* One counter: its family, its two label values ("" when unused). */
struct metrics_row {
	char	name[METRICS_NAME_MAX + 1];
	char	l1[HB_ID_MAX + 1];
	char	l2[METRICS_L2_MAX + 1];
	int64_t	value;
};

/* A plain set of rows, for a flush or a read-out; not locked. */
struct metrics_set {
	struct metrics_row	*rows;
	int			 n, cap;
};

/* Adds delta to (name, l1, l2) in s; 0, or -1 when out of memory/room. */
HB_API int metrics_set_add(struct metrics_set *, const char *name,
    const char *l1, const char *l2, int64_t delta);
/* Keeps the larger value (the heartbeat), same returns. */
HB_API int metrics_set_max(struct metrics_set *, const char *name,
    const char *l1, const char *l2, int64_t value);
/* Non-zero when the family's rows keep their larger value (times). */
HB_API int metrics_keeps_max(const char *name);

/*
 * One request (name "requests", l1 its endpoint label, l2 its result) or
 * delivery attempt ("deliveries", destination, outcome) at now_ms: its
 * counter, and its minute's count (none for the "_" routes: health,
 * metrics and the status page are not traffic).  0, or -1 when out of
 * memory/room.
 */
HB_API int metrics_set_count(struct metrics_set *, const char *name,
    const char *l1, const char *l2, int64_t now_ms);

/* Empties s (keeps its memory); metrics_set_free() releases it. */
HB_API void metrics_set_clear(struct metrics_set *);
HB_API void metrics_set_free(struct metrics_set *);

/*
 * The delivery latency histogram's buckets, in seconds: ms observed
 * counts in every bucket it fits and in +Inf, and in _sum and _count.
 */
HB_API int metrics_set_observe_delivery(struct metrics_set *,
    const char *destination, int64_t ms);

/* A process's counts.  NULL when out of memory. */
struct metrics;
HB_API struct metrics *metrics_new(void);
HB_API void metrics_free(struct metrics *);

/* Counts delta, thread-safe. */
HB_API void metrics_add(struct metrics *, const char *name, const char *l1,
    const char *l2, int64_t delta);
/* Keeps the larger value (a time), thread-safe. */
HB_API void metrics_max(struct metrics *, const char *name, const char *l1,
    const char *l2, int64_t value);
/* metrics_set_count() on the process's counts, thread-safe. */
HB_API void metrics_count(struct metrics *, const char *name,
    const char *l1, const char *l2, int64_t now_ms);

/*
 * For a flush: appends every pending count to out and marks it in
 * flight.  One flush at a time per struct metrics.  Returns 0, or -1
 * when out of memory (nothing taken).
 */
HB_API int metrics_take(struct metrics *, struct metrics_set *out);

/* After the flush's COMMIT: ok forgets what was in flight, else puts it back. */
HB_API void metrics_done(struct metrics *, int ok);

/* Held around a flush's COMMIT + metrics_done(), and around a read-out. */
HB_API void metrics_lock_commit(struct metrics *);
HB_API void metrics_unlock_commit(struct metrics *);

/* Adds this process's pending and in-flight counts to out. */
HB_API int metrics_unflushed(struct metrics *, struct metrics_set *out);

/*
 * Writes s in Prometheus text (HELP, TYPE and the samples, families in
 * a fixed order, label values escaped) through out.
 */
HB_API void metrics_render(struct metrics_set *,
    void (*out)(void *arg, const char *s, size_t len), void *arg);

#endif
