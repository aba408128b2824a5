/*
 * store_accept.h: state.db for the acceptance transaction (lib/accept.c).
 *
 * Transactions: caller-owned: every function here runs between
 * store_begin() and store_commit(); a failing call leaves it to the
 * caller to store_rollback().  (store_job_get() alone may also be asked
 * outside one, as a single read: the poller skips finished jobs.)
 */
#ifndef HB_STORE_ACCEPT_H
#define HB_STORE_ACCEPT_H

#include "obs.h"
#include "store.h"

/*
 * Savepoints inside the open transaction, so that one piece of a batch
 * fails alone: store_savepoint() marks, store_release() keeps what was
 * done since, store_rollback_to() undoes it and drops the mark.  They do
 * not nest.  store_rollback_to() returns STORE_OK while the transaction
 * still stands; after some failures (I/O, disk full, memory) SQLite has
 * already rolled back the whole transaction, and the caller must treat
 * everything since store_begin() as lost.
 */
HB_API enum store_status store_savepoint(struct store *) HB_MUST_CHECK;
HB_API enum store_status store_release(struct store *) HB_MUST_CHECK;
HB_API enum store_status store_rollback_to(struct store *) HB_MUST_CHECK;
/* Non-zero while a transaction begun with store_begin() stands. */
HB_API int store_in_tx(struct store *);
/*
 * Non-zero when the last store_commit() committed, whatever the file
 * check after it said: its rows, and anything that rode with them, are in
 * the file that was open.
 */
HB_API int store_committed(const struct store *);

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

/*
 * Inside a transaction on PostgreSQL, store_job_get() first takes the
 * job's lock (held to the transaction's end): two hosts accepting for one
 * job take turns, each reading the state the other committed.  On SQLite
 * the write lock of BEGIN IMMEDIATE is that turn already.
 */
HB_API enum store_status store_job_get(struct store *, const char *tenant,
    const char *job_id, struct store_job *) HB_MUST_CHECK;

/*
 * The same lock alone (a no-op on SQLite, or outside a transaction).  A
 * batch that takes the locks of all its jobs first, in one order, waits
 * for another batch but never deadlocks with it.  With wait, waits for a
 * held lock within the busy budget; without, a held lock is STORE_BUSY
 * at once.
 */
HB_API enum store_status store_job_lock(struct store *, const char *tenant,
    const char *job_id, int wait) HB_MUST_CHECK;

/*
 * Non-zero when other hosts may write the store at the same time
 * (PostgreSQL), so that a batch must take its jobs' locks first; zero on
 * SQLite, where BEGIN IMMEDIATE is the one lock.
 */
HB_API int store_job_locks(struct store *);

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

#endif
