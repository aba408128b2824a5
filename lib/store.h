/*
 * store.h: the state database, state.db (read-write).
 *
 * The storage interface the rest of hookbox uses: a handful of
 * transaction primitives for acceptance, and read-outs for operators.  It
 * says nothing of SQLite so that another backend (PostgreSQL is planned)
 * can stand behind it; all state.db SQL lives in store.c.
 *
 * state.db runs in WAL mode with synchronous=FULL (an acknowledged action
 * survives power loss) unless the caller opts in to NORMAL.  Every write
 * happens between store_begin() and store_commit(); a failing call inside
 * a transaction leaves it to the caller to store_rollback().  Times are
 * unix milliseconds.
 */
#ifndef HB_STORE_H
#define HB_STORE_H

#include "hb.h"
#include "obs.h"

struct store;

enum store_status {
	STORE_OK = 0,
	STORE_BUSY,	/* locked past the busy timeout */
	STORE_IO,	/* I/O error, disk full, read-only file */
	STORE_NOMEM,
	STORE_ERROR,	/* corrupt, schema too new, misuse */
	/*
	 * The open file is no longer the one at its path (removed or
	 * replaced), or the path can no longer be written by us: nothing is
	 * written, and the handle should be closed and opened again.
	 */
	STORE_GONE
};

struct store_opts {
	int	busy_ms;	/* bound on waiting for the write lock */
	int	sync_normal;	/* synchronous=NORMAL instead of FULL */
	int	create;		/* create the file if missing (init only) */
};

#define STORE_BUSY_MS_DEFAULT	5000

HB_API const char *store_strerror(enum store_status);

/*
 * Opens (and with opts->create, creates with mode 0600) state.db,
 * migrating its schema to the current version.  *out is freed with
 * store_close().  opts NULL means the defaults.  A path whose last
 * component is a symbolic link is refused (STORE_IO).  The file's device
 * and inode are remembered: see store_check_file().
 */
HB_API enum store_status store_open(const char *path,
    const struct store_opts *opts, struct store **out) HB_MUST_CHECK;
HB_API void store_close(struct store *);

/* The last SQLite message, for logs (never contains bound values). */
HB_API const char *store_errmsg(struct store *);

/*
 * STORE_OK while the open file is still the file at its path and we may
 * still write it; else STORE_GONE.  Two system calls (stat, access).
 */
HB_API enum store_status store_check_file(struct store *) HB_MUST_CHECK;

/*
 * BEGIN IMMEDIATE: takes the write lock now, waiting at most busy_ms.
 * First checks the file (store_check_file()): nothing is ever written
 * into a file that is no longer at the path.
 */
HB_API enum store_status store_begin(struct store *) HB_MUST_CHECK;
/*
 * COMMIT, then checks the file again: STORE_GONE when it was removed or
 * replaced meanwhile, so that the caller does not acknowledge work that
 * went into a file no other process will read.
 */
HB_API enum store_status store_commit(struct store *) HB_MUST_CHECK;
/* Rolls back the open transaction, if any. */
HB_API void store_rollback(struct store *);

/* One received observation, for diagnostics. */
struct store_receipt {
	int64_t		 at;
	const char	*tenant;
	const char	*endpoint;	/* NULL for polls */
	const char	*source;	/* "job", "org", "poll" */
	const char	*delivery_id;	/* NULL unless an org event */
	const char	*job_id;
	const char	*type;
	const char	*status;
	const char	*stage;
	const char	*body;		/* raw bytes, may be NULL */
	size_t		 bodylen;
};

/* What an earlier receipt of the same delivery id was answered. */
struct store_prior {
	char	result[32];
	char	action[HB_ACTION_MAX + 1];
};

/*
 * Inserts a receipt with result "pending" and returns its id.  When the
 * endpoint already received this delivery id, nothing is inserted,
 * *seen is set and *prior holds the earlier answer.
 */
HB_API enum store_status store_receipt_add(struct store *,
    const struct store_receipt *, int64_t *id, int *seen,
    struct store_prior *prior) HB_MUST_CHECK;

/* Sets the result (and action id, may be NULL) of a receipt. */
HB_API enum store_status store_receipt_finish(struct store *, int64_t id,
    const char *result, const char *action) HB_MUST_CHECK;

/* The recorded state of one job; a job never seen is stage QUEUED, no terminal. */
struct store_job {
	enum obs_stage	stage;
	enum obs_status	terminal;
};

HB_API enum store_status store_job_get(struct store *, const char *tenant,
    const char *job_id, struct store_job *) HB_MUST_CHECK;

/* Writes the job's new state; o supplies the file and error details. */
HB_API enum store_status store_job_put(struct store *, const char *tenant,
    const char *job_id, const struct store_job *, const struct obs *o,
    int64_t now) HB_MUST_CHECK;

struct store_action {
	const char	*id;		/* tenant:attempt:step */
	const char	*tenant;
	const char	*attempt;
	const char	*step;
	const char	*job_id;
	const char	*destination;
	const char	*payload;	/* JSON sent downstream */
	int64_t		 now;
};

enum store_claim {
	STORE_CLAIMED = 0,	/* the action id is ours: a new action */
	STORE_CLAIMED_BEFORE,	/* already accepted, for this same job */
	STORE_CLAIMED_OTHER	/* already accepted for another job */
};

/*
 * INSERT .. ON CONFLICT(action_id) DO NOTHING into accepted.  Only when
 * nothing was inserted is the existing row read, to tell a duplicate from
 * an action id that maps to another job.
 */
HB_API enum store_status store_action_claim(struct store *,
    const struct store_action *, enum store_claim *) HB_MUST_CHECK;

/* Adds the outbox row, pending and due now, for a claimed action. */
HB_API enum store_status store_outbox_add(struct store *,
    const struct store_action *) HB_MUST_CHECK;

/*
 * Records (or counts again) an open conflict.  kind is "terminal" or
 * "action"; recorded and observed describe the two sides.
 */
HB_API enum store_status store_conflict_add(struct store *, const char *tenant,
    const char *job_id, const char *action_id, const char *kind,
    const char *recorded, const char *observed, int64_t now) HB_MUST_CHECK;

/* An outbox row's state: the one vocabulary (names as stored and shown). */
enum store_state {
	STORE_PENDING = 0,	/* due at next_at */
	STORE_LEASED,		/* a worker owns it until lease_until */
	STORE_DELIVERED,
	STORE_DEAD,		/* gave up: an operator may requeue it */
	STORE_UNKNOWN,		/* may or may not have been delivered */
	STORE_STATE__N
};

/* "pending", ...; static storage.  NULL for a value out of range. */
HB_API const char *store_state_name(enum store_state);
/* The state named s; 0, or -1 when s names none. */
HB_API int store_state_parse(const char *s, enum store_state *out);

struct store_counts {
	int64_t	outbox[STORE_STATE__N];	/* rows by state */
	int64_t	conflicts_open;
	int64_t	oldest_pending_ms;	/* created_at of the oldest pending
					   or leased row, 0 when none */
};

/* Seconds since the oldest pending or leased row was created; 0: none. */
HB_API int64_t store_counts_age(const struct store_counts *, int64_t now_ms);

HB_API enum store_status store_counts(struct store *, struct store_counts *)
    HB_MUST_CHECK;

/*
 * Receipts retained, by result (the index is enum hb_result; a result
 * word that names none is not counted).
 */
struct store_receipts {
	int64_t	n[HB_RESULT__N];
};
HB_API enum store_status store_receipt_counts(struct store *,
    struct store_receipts *) HB_MUST_CHECK;

/*
 * Health: can a write transaction start now?  Takes the write lock and
 * releases it at once (within busy_ms).  STORE_OK, STORE_BUSY or STORE_IO.
 */
HB_API enum store_status store_check_writable(struct store *) HB_MUST_CHECK;

/* ---- the outbox, for the dispatcher and the operator ---- */

/* One leased row: the dispatcher owns it until lease_until. */
struct store_lease {
	char	 action[HB_ACTION_MAX + 1];
	char	 tenant[HB_ID_MAX + 1];
	char	 destination[HB_ID_MAX + 1];
	char	*payload;		/* owned: store_lease_clear() */
	int	 attempt;		/* this attempt's number, from 1 */
	int64_t	 attempt_id;		/* its row in attempts */
	int64_t	 lease_until;
};

HB_API void store_lease_clear(struct store_lease *);

/*
 * Claims one due pending row and leases it to owner for lease_ms(arg,
 * tenant, destination) milliseconds, recording the attempt's start, all
 * in one transaction.  Rows are taken round-robin across tenants: the
 * first due row of the first tenant after cursor (wrapping), whose id is
 * then written back to cursor (HB_ID_MAX + 1 bytes).  *found is 0 when
 * nothing is due.
 */
HB_API enum store_status store_outbox_claim(struct store *, const char *owner,
    int64_t now, int64_t (*lease_ms)(void *arg, const char *tenant,
    const char *destination), void *arg, char *cursor, struct store_lease *,
    int *found) HB_MUST_CHECK;

/* Where a finished attempt leaves its row. */
enum store_outcome {
	STORE_OUT_DELIVERED = 0,
	STORE_OUT_RETRY,	/* back to pending at next_at */
	STORE_OUT_DEAD,
	STORE_OUT_UNKNOWN	/* may or may not have been delivered */
};

/*
 * Records the end of an attempt (its real result, even over a "lease
 * expired" note) and moves its row, only if owner still holds the lease.
 * *lost is set when it did not (the lease had expired and was
 * recovered): then nothing but the attempt's end is written.
 */
HB_API enum store_status store_outbox_finish(struct store *,
    const struct store_lease *, const char *owner, enum store_outcome,
    int64_t now, int64_t next_at, long http_status, const char *error,
    int *lost) HB_MUST_CHECK;

/*
 * Recovery and reconciliation are orchestrated by the caller: it
 * collects rows (a read, no lock held), reads what it needs to decide
 * (configuration, a status URL) with no transaction open, then applies
 * a guarded move, which changes the row only if it is still as
 * collected.  Each move is self-contained (one statement or its own
 * transaction).
 */

/* An outbox row as collected, with what a guarded move checks. */
struct store_row {
	char	action[HB_ACTION_MAX + 1];
	char	tenant[HB_ID_MAX + 1];
	char	destination[HB_ID_MAX + 1];
	int	attempts;		/* attempts made (claims) so far */
	char	owner[HB_ID_MAX + 1];	/* lease owner seen, "" for none */
	int64_t	lease_until;		/* lease expiry seen, 0 for none */
};

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

/* Milliseconds from now until a pending row is due or a lease expires;
 * -1 when there is neither. */
HB_API enum store_status store_outbox_next(struct store *, int64_t now,
    int64_t *in_ms) HB_MUST_CHECK;

/* ---- the poller's memory ---- */

/* When the poller last asked about a job (0: never). */
HB_API enum store_status store_poll_last(struct store *, const char *tenant,
    const char *job_id, int64_t *at) HB_MUST_CHECK;
/* Notes that the poller asked about a job now (its own transaction). */
HB_API enum store_status store_poll_mark(struct store *, const char *tenant,
    const char *job_id, int64_t now) HB_MUST_CHECK;

/* ---- operator read-outs: JSON arrays, freed with cJSON_Delete() ---- */

struct cJSON;

/* Outbox rows in one state, oldest first, at most limit. */
HB_API enum store_status store_outbox_list(struct store *,
    enum store_state, int limit, struct cJSON **out) HB_MUST_CHECK;
/* The attempts of one action, oldest first. */
HB_API enum store_status store_attempts_list(struct store *,
    const char *action, struct cJSON **out) HB_MUST_CHECK;
/* Open conflicts (all of them with all set). */
HB_API enum store_status store_conflicts_list(struct store *, int all,
    struct cJSON **out) HB_MUST_CHECK;
/* Marks an open conflict resolved with a note; *changed 0 if none. */
HB_API enum store_status store_conflict_resolve(struct store *, int64_t id,
    const char *note, int64_t now, int *changed) HB_MUST_CHECK;

/*
 * Deletes receipts received before receipts_before, and delivered
 * actions (outbox row, attempts, accepted tombstone) accepted before
 * actions_before.  Undelivered actions are never touched.
 */
struct store_pruned {
	int64_t	receipts, actions;
};
HB_API enum store_status store_prune(struct store *, int64_t receipts_before,
    int64_t actions_before, struct store_pruned *) HB_MUST_CHECK;

#endif
