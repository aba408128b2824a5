/*
 * delivery/dispatch.h: the dispatcher.  Delivers accepted actions downstream
 * with a recovery contract (hookbox(1), DELIVERING ACTIONS):
 *
 *  - rows go in batches of up to DISPATCH_BATCH: claimed in one state.db
 *    transaction, sent all at once, their outcomes recorded in one
 *    transaction; a batch takes tenants round-robin and gives each an
 *    equal share, interleaved, so one tenant cannot starve the others;
 *  - a row is leased (owner, expiry) before it is sent, so two workers
 *    never send it at once;
 *  - a destination that does not honour Idempotency-Key gets a fresh
 *    connection per request, closed after it, so that libcurl never
 *    resends a request on its own; one that does shares kept-alive
 *    connections;
 *  - every attempt is recorded (start, end, HTTP status, error);
 *  - 2xx: delivered.  408, 429, 5xx and failures to connect: retried with
 *    exponential backoff and full jitter, honouring Retry-After, up to the
 *    destination's max attempts, then dead.  Other 4xx: dead at once;
 *  - a destination that does not allow internal addresses (config/config.h) is
 *    never connected to at one (link-local, a cloud metadata service:
 *    net/addr.h), whatever its name resolves to: such an attempt is refused,
 *    not sent, and its row dead at once (the address will not change by
 *    waiting; an operator fixes the name or allows it, then requeues);
 *    its status URL is not asked either;
 *  - a timeout or a broken connection after the request may have reached
 *    the destination is an unknown outcome: resent with the same
 *    Idempotency-Key when the destination honours it, else the row waits
 *    in "unknown" for reconciliation;
 *  - a lease that expired (its worker died) is an unknown outcome too,
 *    and its attempt counts: resent to an idempotent destination while
 *    attempts remain, then dead;
 *  - unknown rows of destinations with a status URL are reconciled by
 *    asking it: 200 means delivered, 404 means resend (dead when no
 *    attempts remain).  One worker at a time checks a row (it claims the
 *    check), and an answer is applied only while its claim stands;
 *  - a configuration that cannot be read (config.db busy) decides
 *    nothing: expired leases and unknown rows are looked at again soon.
 *
 * Every attempt is logged (base/log.h: event=delivery) once its outcome is
 * recorded, and a row that goes dead once more (event=dead).
 *
 * Transactions: self-contained: a step runs short state.db transactions of
 * its own and holds none across a network request or a config.db read.
 */
#ifndef HB_DISPATCH_H
#define HB_DISPATCH_H

#include "config/config.h"
#include "store/outbox.h"

struct dispatch;

struct dispatch_opts {
	const char	*owner;		/* lease owner id; unique per worker */
	int64_t		 backoff_base_ms;	/* first retry within this */
	int64_t		 backoff_max_ms;	/* cap on one backoff */
	int64_t		 lease_margin_ms;	/* lease = timeout + margin */
	int64_t		 recheck_ms;	/* between status-URL checks */
};

/*
 * Rows claimed, sent and recorded together: two commits (two fsyncs at
 * synchronous=FULL) for up to this many deliveries, and as many
 * requests in flight at once.
 */
#define DISPATCH_BATCH		64
#define DISPATCH_BACKOFF_BASE_MS	1000
#define DISPATCH_BACKOFF_MAX_MS	(3600 * 1000)
#define DISPATCH_LEASE_MARGIN_MS	30000
#define DISPATCH_RECHECK_MS	60000
/* Unknown rows without a status URL wait for an operator; looked at hourly. */
#define DISPATCH_OPERATOR_RECHECK_MS	(3600 * 1000)
/*
 * The dispatcher's heartbeat (base/metrics.h) while idle: one small write at
 * most this often.  While working it rides on the outcomes' transaction.
 */
#define DISPATCH_HEARTBEAT_MS		10000
/* The longest a destination's circuit stays open between two probes. */
#define DISPATCH_COOLDOWN_MAX_MS	(600 * 1000)
/* Between two tries at rows a destination's limits hold back. */
#define DISPATCH_HELD_MS		50
/* An expired lease or a check put off because config.db could not be read. */
#define DISPATCH_TRANSIENT_MS		1000

enum dispatch_status {
	DISPATCH_WORKED = 0,	/* delivered, retried or settled a batch */
	DISPATCH_IDLE,		/* nothing due */
	DISPATCH_HELD,		/* due rows wait for their destinations'
				   limits: try again in DISPATCH_HELD_MS */
	DISPATCH_BUSY,		/* state.db busy; try again */
	DISPATCH_ERROR		/* state.db failing, or out of memory */
};

/*
 * A dispatcher over open store and config handles (not owned).  opts
 * fields left 0 take the defaults above; owner is copied.  NULL when out
 * of memory.  http_global_init() must have run.
 */
HB_API struct dispatch *dispatch_new(struct store *, struct config *,
    const struct dispatch_opts *);
HB_API void dispatch_free(struct dispatch *);

/*
 * One step: settles expired leases, reconciles due unknown rows, then
 * claims and delivers one batch of due rows.  It returns once every
 * request of the batch has ended and its outcome is recorded.
 */
HB_API enum dispatch_status dispatch_step(struct dispatch *) HB_MUST_CHECK;

/*
 * What this dispatcher recorded since dispatch_new(): attempts by outcome
 * (an attempt whose lease was lost meanwhile is not counted).
 */
struct dispatch_stats {
	int64_t	delivered;
	int64_t	retried;
	int64_t	dead;
	int64_t	unknown;
};
HB_API void dispatch_stats(const struct dispatch *, struct dispatch_stats *);


/* Milliseconds until something may be due (at most max_ms). */
HB_API int64_t dispatch_idle_ms(struct dispatch *, int64_t max_ms);

/*
 * The delay before retry number `attempt` (1 = the first retry): full
 * jitter, uniform in [0, min(max, base * 2^(attempt-1))], and never less
 * than retry_after_ms when that is >= 0.
 */
HB_API int64_t dispatch_backoff(const struct dispatch_opts *, int attempt,
    int64_t retry_after_ms);

/*
 * The decision table: where an attempt's answer leaves its row.  2xx:
 * delivered.  408, 429, 5xx, and no answer when the request never left or
 * the destination honours Idempotency-Key: retried while attempt (this
 * attempt's number, from 1) is below max_attempts, else dead.  Other 4xx,
 * 1xx and 3xx: dead.  Refused, not sent, because every address was an
 * internal one the destination does not allow: dead.  No answer after the
 * request may have been received, at a destination that does not
 * deduplicate: unknown.  A pure function.
 */
struct http_result;
HB_API enum store_outcome dispatch_decide(const struct http_result *,
    int idempotent, int last);

#endif
