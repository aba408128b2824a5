/*
 * store/metrics.h: state.db's metrics table (counters that survive a
 * restart, base/metrics.h) and the per-destination gauges.
 *
 * Transactions: store_metrics_send() is caller-owned (between
 * store_begin() and the COMMIT, which the caller's flight owns); the
 * read-outs are single reads; store_metrics_beat() and
 * store_metrics_forget() are self-contained (one statement each).
 */
#ifndef HB_STORE_METRICS_H
#define HB_STORE_METRICS_H

#include "base/metrics.h"
#include "store/store.h"

/*
 * What adding m's rows to the table takes (the heartbeat keeps the larger
 * value; the minutes past the chart's window go), sent in the caller's
 * flight (store/flight.h): a failure is the flight's, told when it lands
 * or by the COMMIT, which they ride.  Nothing for an empty m.
 */
HB_API void store_metrics_send(struct store *, const struct metrics_set *m);

/*
 * Whether a write can be committed now, within the store's busy budget:
 * a transaction of its own that records now_ms (probe_ms, the latest)
 * and commits.  Health asks it when the writer's last COMMIT failed busy
 * or cut off, which a lock held elsewhere, or a COMMIT waiting for a
 * synchronous standby that is away, leaves; a read cannot tell them.
 * STORE_OK, or why not (rolled back).
 */
HB_API enum store_status store_metrics_probe(struct store *, int64_t now_ms)
    HB_MUST_CHECK;

/* The dispatcher's heartbeat, now_ms, in a statement of its own. */
HB_API enum store_status store_metrics_beat(struct store *, int64_t now_ms)
    HB_MUST_CHECK;

/* Adds every persisted row to out. */
HB_API enum store_status store_metrics_read(struct store *,
    struct metrics_set *out) HB_MUST_CHECK;

/*
 * Removes the series of endpoints and of destinations no longer
 * configured: endpoints and destinations are JSON arrays of the names
 * configured now.  *n receives the rows removed.  One statement.
 */
HB_API enum store_status store_metrics_forget(struct store *,
    const char *endpoints, const char *destinations, int64_t *n)
    HB_MUST_CHECK;

/*
 * Removes every series of the endpoints and destinations named in
 * labels (a JSON array of names), but the chart's minutes: those of a
 * tenant made for a while and gone (hookbox disorder's).  *n receives
 * the rows removed.  One statement.
 */
HB_API enum store_status store_metrics_drop(struct store *,
    const char *labels, int64_t *n) HB_MUST_CHECK;

/* One destination's undelivered rows. */
#define STORE_DEST_ERROR_MAX	255
struct store_dest_gauge {
	char	destination[HB_ID_MAX + 1];
	int64_t	n[STORE_STATE__N];	/* delivered stays 0 */
	int64_t	oldest_ms;		/* pending or leased; 0: none */
	/* store_dest_errors(): the latest error of an undelivered row. */
	int64_t	error_ms;		/* its row's update; 0: none */
	char	error[STORE_DEST_ERROR_MAX + 1];	/* cut to fit */
};

/*
 * Every destination with undelivered rows (pending, leased, dead,
 * unknown), at most max into g, sorted by name; *n receives the count.
 * Reads only those rows (index outbox_dest).
 */
HB_API enum store_status store_dest_gauges(struct store *,
    struct store_dest_gauge *g, int max, int *n) HB_MUST_CHECK;

/*
 * Fills the error fields of g's n destinations (from store_dest_gauges():
 * only a destination with undelivered rows has one) with the latest
 * last_error among those rows.  Reads only those rows.
 */
HB_API enum store_status store_dest_errors(struct store *,
    struct store_dest_gauge *g, int n) HB_MUST_CHECK;

#endif
