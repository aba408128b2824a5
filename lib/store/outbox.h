/*
 * store/outbox.h: state.db's outbox: the row an accepted action adds
 * (lib/intake/accept.c), the dispatcher's leases, attempts, recovery and
 * reconciliation (lib/delivery/dispatch.c), and what an operator lists and
 * moves.
 *
 * Transactions: self-contained, but for store_outbox_add(), which is
 * caller-owned (it runs inside the acceptance transaction, between
 * store_begin() and store_commit(), store/record.h): each other function
 * is one statement or its own transaction (a batch's claim, a batch's
 * outcomes: one each; a pick, a list: reads only, holding nothing between
 * them), and every move is guarded (it changes a row only if the row is
 * still as the caller saw it).  Nothing here calls back into the caller:
 * it reads what it needs first, then asks for a move.
 */
#ifndef HB_STORE_OUTBOX_H
#define HB_STORE_OUTBOX_H

#include "store/circuit.h"
#include "store/store.h"

struct cJSON;
struct store_action;

/*
 * Adds the outbox row, pending and due now, for a claimed action
 * (store_action_claim(), store/record.h).  Caller-owned: inside the
 * acceptance transaction.
 */
HB_API enum store_status store_outbox_add(struct store *,
    const struct store_action *) HB_MUST_CHECK;

/*
 * Outbox rows in one state (STORE_STATE__N: every state), oldest first,
 * as the filter shows them (store/store.h; NULL: all), times in unix ms: a
 * JSON array into *out, freed with cJSON_Delete().  A read.
 */
HB_API enum store_status store_outbox_list(struct store *, enum store_state,
    const struct store_list_filter *, struct cJSON **out) HB_MUST_CHECK;

/* One leased row: the dispatcher owns it until lease_until. */
struct store_lease {
	char	 action[HB_ACTION_MAX + 1];
	char	 tenant[HB_ID_MAX + 1];
	char	 destination[HB_ID_MAX + 1];
	char	*payload;		/* owned: store_lease_clear() */
	int	 attempt;		/* the row's count of attempts with this
					   one, from 1 (again after a
					   requeue): the backoff's */
	int64_t	 attempt_id;		/* its row in attempts */
	int	 n;			/* that row's number: from 1, on
					   across a requeue */
	int64_t	 lease_until;
	int64_t	 horizon_from;		/* its retry horizon's start */
	int64_t	 held_ms;		/* time its destination held it
					   since, not counted */
};

/* An outbox row as collected, with what a guarded move checks. */
struct store_row {
	char	action[HB_ACTION_MAX + 1];
	char	tenant[HB_ID_MAX + 1];
	char	destination[HB_ID_MAX + 1];
	int	attempts;		/* attempts made (claims) so far */
	char	owner[HB_ID_MAX + 1];	/* lease owner seen, "" for none */
	int64_t	lease_until;		/* lease expiry seen, 0 for none */
	/* Collected rows (store_outbox_expired(), _unknown()) only: */
	int64_t	horizon_from;		/* its retry horizon's start */
	int64_t	held_ms;		/* time held since, not counted */
	int64_t	held_since;		/* its destination's hold's start,
					   0 when not held */
};

HB_API void store_lease_clear(struct store_lease *);

/*
 * The next batch of due pending rows to deliver, at most max, fairly
 * across tenants: the tenants with due rows are taken in order from the
 * first after cursor (wrapping; "" to start), at most max of them; each
 * gives an equal share of max, oldest rows first (a share a tenant
 * cannot fill goes to the others), and the rows come interleaved, one of
 * each tenant in turn (a1 b1 c1 a2 b2 a3 ...).  So a batch is never all
 * one tenant's while another has a row due, and the caller moves the
 * cursor to the last row's tenant.  A read: the caller reads the rows'
 * destinations, then claims them.  *n is 0 when nothing is due.
 */
HB_API enum store_status store_outbox_pick(struct store *, int64_t now,
    const char *cursor, struct store_row *rows, int max, int *n)
    HB_MUST_CHECK;

/* One row of a batch's claim. */
struct store_claim_row {
	struct store_row	row;		/* in: as picked */
	int64_t			lease_until;	/* in: the lease to take */
	int			in_flight_max;	/* in: its destination's,
						   0: none */
	int			rate;		/* in: its destination's
						   requests a second, 0:
						   none */
	int64_t			start_at;	/* out: when to send it;
						   later than now under a
						   rate (its lease_until
						   moved as far) */
	int			claimed;	/* out */
	int			held;		/* out: its destination took
						   no more now (its in-flight
						   cap or rate) */
	int			retimed;	/* out: its destination holds
						   it back (paused, open,
						   Retry-After): not due
						   before start_at */
	int			probe;		/* out: its destination's
						   probe (store/circuit.h) */
	int64_t			held_since;	/* out: its destination's
						   hold's start, 0: none */
	struct store_lease	lease;		/* out, when claimed; the
						   caller clears it */
};

/*
 * Leases the picked rows c[0 .. n) to owner, each until its own
 * lease_until, and records each attempt's start, all in one transaction.
 * Each destination's circuit (store/circuit.h) is read first, locked:
 * rows beyond what it allows now (store_circuit_allows(), with the
 * first of its rows' in_flight_max) are held, in the order given; an
 * open circuit past its cool-down lets one row through as its probe and
 * is half open until that row's lease_until.  Under a rate, each row
 * let through gets its start, and rows that would start a second or more
 * from now are held.  A row whose destination is paused, held by a
 * Retry-After or open is retimed instead: not due before the hold's end
 * (store_circuit_held_until()), so that picks do not read it again
 * meanwhile; a release makes it due again (store_circuit_release()).
 * A row is leased only if it is still pending, due at now and at the
 * attempts seen when picked; others (another worker claimed them, an
 * operator moved them, the row came twice) get claimed 0 and nothing is
 * written for them.  (A row requeued back to the count seen may be
 * claimed: it is the same row, sent with its own attempt number.)  On a
 * claim, lease holds the row, its payload and its attempt.  On a failure
 * nothing is claimed and every lease is clear.
 */
HB_API enum store_status store_outbox_claim(struct store *,
    struct store_claim_row *c, int n, const char *owner, int64_t now)
    HB_MUST_CHECK;

/* Where a finished attempt leaves its row. */
enum store_outcome {
	STORE_OUT_DELIVERED = 0,
	STORE_OUT_RETRY,	/* back to pending at next_at */
	STORE_OUT_DEAD,
	STORE_OUT_UNKNOWN	/* may or may not have been delivered */
};

/* How one attempt of a batch ended. */
struct store_finish {
	const struct store_lease *lease;	/* in: as claimed */
	enum store_outcome	 out;
	int64_t			 ended;		/* when its answer came */
	int64_t			 next_at;	/* RETRY, UNKNOWN: due then */
	long			 http_status;	/* 0 for none */
	const char		*error;		/* NULL for none */
	int			 lost;		/* out */
};

/* What a batch's attempts at one destination did to its circuit. */
struct store_finish_dest {
	char				tenant[HB_ID_MAX + 1];	/* in */
	char				destination[HB_ID_MAX + 1];
	struct store_circuit_report	report;		/* in */
	enum store_circuit_state	was;		/* out */
	struct store_circuit		now;		/* out */
	int				released;	/* out: its hold
							   ended */
};

/*
 * Records the end of each attempt of f[0 .. n) at its `ended` (its real
 * result, even over a "lease expired" note) and moves its row, all in one
 * transaction, each only if owner still holds this attempt's lease (the
 * same owner and attempt number).  Where it did not (the lease had
 * expired and was recovered), lost is set and nothing but the attempt's
 * end is written, except that an attempt that delivered settles a row
 * that recovery left unknown or dead as delivered all the same.  m's
 * counts (base/metrics.h; NULL for none) are added in the same transaction:
 * they are in state.db exactly when the outcomes are.  So are the
 * circuits of d[0 .. nd), each moved by its report (store_circuit_step(),
 * its hold released if it ended).  On a failure nothing is written and
 * every lost is 0.
 */
struct metrics_set;
HB_API enum store_status store_outbox_finish(struct store *,
    struct store_finish *f, int n, const char *owner,
    const struct metrics_set *m, struct store_finish_dest *d, int nd)
    HB_MUST_CHECK;

/*
 * Recovery and reconciliation are orchestrated by the caller: it
 * collects rows (a read, no lock held), reads what it needs to decide
 * (configuration, a status URL) with no transaction open, then applies
 * a guarded move, which changes the row only if it is still as
 * collected.  Each move is self-contained (one statement or its own
 * transaction).
 */


/*
 * Leased rows whose lease expired before now (their worker died, or lost
 * its way), oldest first: at most max into rows; *n receives the count.
 */
HB_API enum store_status store_outbox_expired(struct store *, int64_t now,
    struct store_row *rows, int max, int *n) HB_MUST_CHECK;

/*
 * Settles an expired lease as collected (the same owner and expiry,
 * still expired at now), closing its open attempt as "lease expired:
 * outcome unknown"; note goes to the row's last error.  RETRY: pending,
 * due at `at`; UNKNOWN: unknown, first checked at `at`; DEAD: dead.
 * *changed is 0 when the row had moved on.
 */
HB_API enum store_status store_outbox_expire(struct store *,
    const struct store_row *, enum store_outcome, int64_t now, int64_t at,
    const char *note, int *changed) HB_MUST_CHECK;

/*
 * Puts off deciding an expired lease until `at` (its expiry, as
 * collected, is moved to at), for when what decides it cannot be read
 * now.  The worker that held it, if alive, may still record its outcome.
 */
HB_API enum store_status store_outbox_defer(struct store *,
    const struct store_row *, int64_t now, int64_t at, int *changed)
    HB_MUST_CHECK;

/*
 * Unknown rows due for a reconciliation check (next_at <= now), oldest
 * first: at most max into rows; *n receives the count.
 */
HB_API enum store_status store_outbox_unknown(struct store *, int64_t now,
    struct store_row *rows, int max, int *n) HB_MUST_CHECK;

/*
 * Claims a due unknown row for one status check: leases it to owner
 * until `until` and makes it due again then (a checker that dies is
 * replaced after that), so no other worker checks it meanwhile.
 * *claimed is 0 when the row was not unknown and due at now.
 */
HB_API enum store_status store_outbox_check(struct store *,
    const char *action, const char *owner, int64_t now, int64_t until,
    int *claimed) HB_MUST_CHECK;

/* How a status check ends. */
enum store_checked {
	STORE_CHECKED_DELIVERED = 0,	/* the destination has it */
	STORE_CHECKED_RESEND,		/* it does not: pending, due now */
	STORE_CHECKED_DEAD,		/* it does not, no attempts left */
	STORE_CHECKED_AGAIN		/* inconclusive: check again at `at` */
};

/*
 * Ends a status check claimed by owner until `until`, only if that claim
 * still stands (no operator move, no other check since it lapsed), so
 * that a stale answer never moves the row; note goes to the row's last
 * error.  *changed is 0 when the claim was gone.
 */
HB_API enum store_status store_outbox_checked(struct store *,
    const char *action, const char *owner, int64_t until,
    enum store_checked, int64_t now, int64_t at, const char *note,
    int *changed) HB_MUST_CHECK;

/*
 * Sets the next check of a due, unclaimed unknown row to `at` without a
 * status check (nothing to ask, or nothing readable now); *changed is 0
 * when it was not unknown and due at now.
 */
HB_API enum store_status store_outbox_recheck(struct store *,
    const char *action, int64_t now, int64_t at, const char *note,
    int *changed) HB_MUST_CHECK;

/*
 * Operator moves (and the late record of a delivery whose lease was
 * lost); each applies only from the states named, ends any status check
 * under way (its answer will not be applied), and reports *changed:
 *   STORE_MOVE_REQUEUE		dead|unknown -> pending now, attempts reset
 *   STORE_MOVE_DELIVERED	unknown|dead -> delivered
 *   STORE_MOVE_RESEND		unknown -> pending now
 *   STORE_MOVE_RECHECK		unknown -> unknown, next check at `at`
 */
enum store_move {
	STORE_MOVE_REQUEUE = 0,
	STORE_MOVE_DELIVERED,
	STORE_MOVE_RESEND,
	STORE_MOVE_RECHECK
};

HB_API enum store_status store_outbox_move(struct store *, const char *action,
    enum store_move, int64_t now, int64_t at, const char *note, int *changed)
    HB_MUST_CHECK;

/* Which rows a requeue by filter moves. */
struct store_requeue_filter {
	enum store_state	 state;		/* STORE_DEAD or STORE_UNKNOWN */
	const char		*tenant;	/* NULL: any */
	const char		*destination;	/* NULL: any */
	int64_t			 since, until;	/* moved to that state in
						   [since, until), unix ms;
						   until 0: no end */
};

/*
 * The rows f names, as a JSON array of their action ids into *out
 * (cJSON_Delete()): with dry_run only listed (in the order they moved to
 * their state); else each moved as STORE_MOVE_REQUEUE moves one (note as
 * its last error), all in one statement, and the array holds exactly the
 * rows moved, in no order.
 */
HB_API enum store_status store_outbox_requeue(struct store *,
    const struct store_requeue_filter *f, int dry_run, int64_t now,
    const char *note, struct cJSON **out) HB_MUST_CHECK;

/* Milliseconds from now until a pending row is due or a lease expires;
 * -1 when there is neither. */
HB_API enum store_status store_outbox_next(struct store *, int64_t now,
    int64_t *in_ms) HB_MUST_CHECK;

#endif
