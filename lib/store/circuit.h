/*
 * store/circuit.h: each destination's circuit, pause and hold in state.db,
 * shared by every dispatcher on every host (hookbox(1), OUTAGES AND
 * LIMITS):
 *
 *  - closed: its rows are sent.  After `threshold` failures in a row
 *    (no answer, 408 or 5xx) with no delivery between, it opens;
 *  - open: none of its rows is claimed until retry_at, the cool-down's
 *    end; then one row is claimed as a probe and the circuit is half
 *    open until that probe's lease would run out;
 *  - half: a delivery (the probe's, or a late one's) closes it; a failure
 *    opens it again for twice the cool-down, up to the cap the caller
 *    gives;
 *  - paused (an operator's, apart from the state): nothing is claimed;
 *  - held until hold_until (a 429 or 503 with Retry-After): nothing is
 *    claimed before then;
 *  - limited to a number of requests in flight (its rows leased), and to
 *    a rate: each request claimed gets a start 1/rate s after the one
 *    before, and only starts within the next second are claimed, so that
 *    no second sees more than rate requests start.
 *
 * The retry horizon leaves out the time a destination is open or paused:
 * held_since is when that began; when it ends (closed and not paused) each
 * undelivered row of it gets the part of that time since its own horizon
 * began added to its held_ms (store_circuit_release()), and its pending
 * rows are due at once.
 *
 * Transactions: caller-owned (inside store_outbox_claim()'s and
 * store_outbox_finish()'s, store/outbox.h), but for store_circuit_list()
 * and store_circuit_pause(), each a transaction of its own.
 */
#ifndef HB_STORE_CIRCUIT_H
#define HB_STORE_CIRCUIT_H

#include "store/store.h"

struct cJSON;

enum store_circuit_state {
	STORE_CIRCUIT_CLOSED = 0,
	STORE_CIRCUIT_OPEN,
	STORE_CIRCUIT_HALF
};

/* A destination's row; times in unix ms, 0 for none. */
struct store_circuit {
	char				tenant[HB_ID_MAX + 1];
	char				destination[HB_ID_MAX + 1];
	enum store_circuit_state	state;
	int64_t				failures;	/* in a row */
	int64_t				opened_at;	/* this outage's start */
	int64_t				retry_at;	/* open, half: next probe */
	int64_t				cooldown_ms;	/* the last one */
	int64_t				paused_at;
	int64_t				hold_until;
	int64_t				held_since;
	int64_t				rate_next_us;	/* its rate's next
							   start, unix us */
	int64_t				leased;		/* its rows leased now */
};

/* What one batch's attempts at a destination said. */
struct store_circuit_report {
	int		ok;		/* delivered */
	int		failed;		/* no answer, 408 or 5xx */
	int64_t		hold_until;	/* Retry-After's end; 0 for none */
	int		threshold;	/* failures that open it; 0: never */
	int64_t		cooldown_ms;	/* the first cool-down */
	int64_t		cooldown_max_ms;
	int64_t		now;
};

/* "closed", "open", "half-open": static storage. */
HB_API const char *store_circuit_name(enum store_circuit_state);

/*
 * Moves c as report r says (a pure function).  Returns the held_since to
 * release (store_circuit_release()) when the hold ended with this step,
 * else 0; c's held_since is then 0.
 */
HB_API int64_t store_circuit_step(struct store_circuit *c,
    const struct store_circuit_report *r);

/*
 * When c stops holding its rows back, if it does now (a pure function):
 * the end of a Retry-After's hold or of an open (or half open) circuit's
 * wait for its probe, whichever is later; while paused, now +
 * STORE_PAUSE_RETIME_MS (a resume makes them due at once).  0 when it
 * holds nothing back.
 */
#define STORE_PAUSE_RETIME_MS	(3600 * 1000)
HB_API int64_t store_circuit_held_until(const struct store_circuit *c,
    int64_t now);

/*
 * How many of its rows may be claimed now (a pure function): 0 while it is
 * paused, held or open before its retry_at, 1 (a probe) when open or half
 * open after it, else in_flight_max less its leased rows (in_flight_max 0:
 * no limit, -1).
 */
HB_API int store_circuit_allows(const struct store_circuit *, int64_t now,
    int in_flight_max);

/* Whether a and b hold the same row (a pure function). */
HB_API int store_circuit_same(const struct store_circuit *a,
    const struct store_circuit *b);

/* The circuit of tenant's destination among c[0 .. n); NULL if none. */
HB_API struct store_circuit *store_circuit_find(struct store_circuit *c,
    int n, const char *tenant, const char *destination);

/*
 * Caller-owned.  The circuits of the n destinations in keys ([[tenant,
 * destination], ...], JSON text), made closed if new, locked until the
 * transaction ends (PostgreSQL; SQLite's writer is alone), with their
 * leased rows counted after the lock: into c[0 .. *got), in key order.
 * Sent and landed with whatever the flight holds.
 */
HB_API enum store_status store_circuit_gate(struct store *, const char *keys,
    int64_t now, struct store_circuit *c, int max, int *got) HB_MUST_CHECK;

/* Caller-owned: sends c's row as it now stands (no wait on PostgreSQL). */
HB_API enum store_status store_circuit_put(struct store *,
    const struct store_circuit *c, int64_t now) HB_MUST_CHECK;

/*
 * Caller-owned: sends the end of c's hold that began at held_since: its
 * undelivered rows' held_ms grow by the part of [held_since, now) after
 * their horizon began, and its pending rows are due now.
 */
HB_API enum store_status store_circuit_release(struct store *,
    const struct store_circuit *c, int64_t held_since, int64_t now)
    HB_MUST_CHECK;

/*
 * The destinations' circuits (with all 0, only those not plainly closed
 * and idle: open, half open, paused, held, with failures or rows leased),
 * as a JSON array of {tenant, destination, circuit, failures, paused,
 * in_flight, opened_at, probe_at, held_until, paused_at} (times in unix
 * ms or null) into *out (freed with cJSON_Delete()).  A read.
 */
HB_API enum store_status store_circuit_list(struct store *, int64_t now,
    int all, struct cJSON **out) HB_MUST_CHECK;

/*
 * An operator's pause (pause 1) or resume (0) of a destination, in a
 * transaction of its own; *changed 0 when it already was.
 */
HB_API enum store_status store_circuit_pause(struct store *,
    const char *tenant, const char *destination, int pause, int64_t now,
    int *changed) HB_MUST_CHECK;

#endif
