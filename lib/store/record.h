/*
 * store/record.h: what the acceptance transaction (intake/accept.c) reads
 * and records in state.db: receipts, a job's and a subject's state, the
 * actions claimed, conflicts.  Its rows' types are store/rows.h's.
 *
 * Transactions: caller-owned: every function here runs between
 * store_begin() and store_commit(); a failing call leaves it to the
 * caller to store_rollback().  (store_job_get() alone may also be asked
 * outside one, as a single read: the poller skips finished jobs.)  The
 * outbox row the transaction adds is store_outbox_add()'s, in
 * store/outbox.h, under the same promise.
 */
#ifndef HB_STORE_RECORD_H
#define HB_STORE_RECORD_H

#include "store/rows.h"
#include "store/store.h"

/*
 * Inserts a receipt with its result and action id (may be NULL).  A
 * delivery id the endpoint received already is STORE_CONSTRAINT (the
 * state moved since it was looked up).  The writes below are sent in the
 * connection's flight (store/flight.h): on PostgreSQL their failures come
 * when it lands.
 */
HB_API enum store_status store_receipt_put(struct store *,
    const struct store_receipt *, const char *result,
    const char *action) HB_MUST_CHECK;

/*
 * One observation's keys, and what was found for them.  A NULL or empty
 * key is not looked up: endpoint and delivery_id both set for a receipt,
 * tenant and job_id for a job's state, tenant and subject for a
 * subject's, action for an accepted action.
 */
struct store_look {
	const char		*endpoint, *delivery_id;
	const char		*tenant, *job_id;
	const char		*subject;
	const char		*action;
	struct store_found	 found;
};

/*
 * Looks up what deciding n observations needs (intake/decide.h), for all of
 * them at once: one statement for the receipts, one for the jobs' states,
 * one for the subjects', one for the actions, each skipped when no
 * observation has its key.
 * Fills every look[i].found.  The three ride the connection's flight,
 * with what was sent before them, and land it (store/flight.h).  It takes
 * no lock: on PostgreSQL the caller holds the jobs' locks first
 * (store_job_lock()).
 */
HB_API enum store_status store_look_batch(struct store *,
    struct store_look *look, size_t n) HB_MUST_CHECK;

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
 * The locks of n jobs, tenant[i] and job_id[i], in one statement sent in
 * the flight, taken in the order given, each waited for within the busy
 * budget (a no-op on SQLite, or outside a transaction).  Its failure
 * (STORE_BUSY: one of them held elsewhere too long) does not say which:
 * store_job_lock() tries each.
 */
HB_API enum store_status store_jobs_lock(struct store *,
    const char *const *tenant, const char *const *job_id, size_t n)
    HB_MUST_CHECK;

/* The busy budget the store was opened with (store_opts), ms. */
HB_API int store_busy_ms(const struct store *);

/*
 * Non-zero when other writers, of this host or another, may write the
 * store at the same time (db/db.h's DB_CAP_ROW_LOCKS), so that a batch must
 * take its jobs' locks first; zero where a writer's BEGIN takes the
 * database's one write lock.
 */
HB_API int store_job_locks(struct store *);

/* Writes the job's new state; o supplies the file and error details. */
HB_API enum store_status store_job_put(struct store *, const char *tenant,
    const char *job_id, const struct store_job *, const struct obs *o,
    int64_t now) HB_MUST_CHECK;

/* Writes the subject's new state; o supplies its event's type. */
HB_API enum store_status store_subject_put(struct store *,
    const char *tenant, const char *subject, const struct store_subject *,
    const struct obs *o, int64_t now) HB_MUST_CHECK;

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

/*
 * Inserts the action into accepted: one action per id comes from its
 * primary key, never from a read.  An id another row holds already is
 * STORE_CONSTRAINT.
 */
HB_API enum store_status store_action_claim(struct store *,
    const struct store_action *) HB_MUST_CHECK;

/*
 * One observation's writes, as the acceptance rules decided them
 * (intake/decide.h): each part NULL when it has none.
 */
struct store_put {
	const struct store_receipt	*rcpt;		/* its receipt */
	const char			*result;	/* ... answered so */
	const char			*action;	/* ... for this, or NULL */
	const char			*tenant;	/* the job's or subject's */
	const char			*key;		/* job id, or subject */
	const struct store_job		*job;		/* the job's new state */
	const struct store_subject	*subject;	/* the subject's */
	const struct obs		*obs;		/* with job or subject */
	const struct store_action	*claim;		/* a new action */
	const char			*kind;		/* a conflict: */
	const char			*recorded;	/* store_conflict_add()'s */
	const char			*observed;
	const char			*conflict_action;
	int64_t				 now;
};

/*
 * Sends one observation's writes, a statement a row, as the functions
 * above and below do (store_outbox_add() the claim's outbox row).
 */
HB_API enum store_status store_put_one(struct store *,
    const struct store_put *) HB_MUST_CHECK;

/*
 * Non-zero where store_put_set() writes a batch in one statement a table:
 * a server, where each statement costs the server a parse, a plan and an
 * execution of its own.  On SQLite a row's statement costs no more than
 * its share of a set's would.
 */
HB_API int store_sets(const struct store *);

/*
 * On a server (store_sets()), sends n observations' writes, in the order
 * given, one statement per table for all of them: the receipts, the
 * jobs' states, the subjects', the actions, their outbox rows (the
 * conflicts, which are rare, a statement each); a table whose rows' text
 * passes about a megabyte (large bodies) takes as many statements as
 * that needs.  Two writes of one job's (or subject's) state are
 * one row, the later over the earlier as the rules decided them.  A
 * failure known before anything is sent (memory, a fault a test set on
 * the outbox) is returned with *failed the member's index; the server's
 * come when the flight lands, and do not say which member failed: the
 * caller then writes the members again a statement a row
 * (store_put_one()), where the failing statement's index in the flight
 * names it.
 */
HB_API enum store_status store_put_set(struct store *,
    const struct store_put *, size_t n, size_t *failed) HB_MUST_CHECK;

/*
 * Records (or counts again) an open conflict.  kind is "terminal",
 * "action" or "version"; recorded and observed describe the two sides.
 */
HB_API enum store_status store_conflict_add(struct store *, const char *tenant,
    const char *job_id, const char *action_id, const char *kind,
    const char *recorded, const char *observed, int64_t now) HB_MUST_CHECK;

#endif
