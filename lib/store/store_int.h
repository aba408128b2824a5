/*
 * store/store_int.h: what the state.db modules share, private to lib/ (not
 * installed, not exported): the handle, the statements by name, and the
 * status mapping.  The SQL texts themselves are in store/store.c, the one place
 * that holds state.db's SQL; store/record.c, store/outbox.c and
 * store/admin.c run them by name.
 */
#ifndef HB_STORE_INT_H
#define HB_STORE_INT_H

#include <sys/stat.h>

#include "db/db.h"
#include "store/store.h"

struct store {
	struct db	*db;
	char		*path;	/* a file's path (DB_CAP_FILE); else NULL */
	int		 in_tx;
	int		 committed;	/* the last store_commit()'s COMMIT did */
	int		 busy_ms;	/* the busy budget it was opened with */
	uint64_t	 tx_statements;	/* store_tx_statements() */
	/* The file as faccessat() last found it writable, when it did. */
	struct stat	 granted;
	int		 granted_ok;
	/* Minute counts older than this were pruned (store/metrics.c). */
	int64_t		 minute_pruned;
	char		 err[256];	/* why an open failed */
	/* What this open did to the schema (store_schema_moved()). */
	int		 moved_from, moved_to;
};

enum store_q {
	/* The transaction's own statements first: store_tx_statements(). */
	STORE_Q_BEGIN,
	STORE_Q_COMMIT,
	STORE_Q_ROLLBACK,
	STORE_Q_SAVEPOINT,
	STORE_Q_RELEASE,
	STORE_Q_ROLLBACK_TO,
	STORE_Q_RECEIPT_PUT,
	STORE_Q_LOOK_RECEIPTS,
	STORE_Q_LOOK_JOBS,
	STORE_Q_LOOK_SUBJECTS,
	STORE_Q_LOOK_ACTIONS,
	STORE_Q_JOB_GET,
	STORE_Q_JOB_PUT,
	STORE_Q_SUBJECT_PUT,
	STORE_Q_CLAIM,
	STORE_Q_OUTBOX_ADD,
	STORE_Q_CONFLICT_ADD,
	STORE_Q_JOBS_LOCK,
	STORE_Q_METRICS_ADD,
	STORE_Q_METRICS_MAX,
	STORE_Q_RECEIPTS_SET,
	STORE_Q_JOBS_SET,
	STORE_Q_SUBJECTS_SET,
	STORE_Q_CLAIMS_SET,
	STORE_Q_OUTBOX_SET,
	STORE_Q_COUNT_OUTBOX,
	STORE_Q_COUNT_CONFLICTS,
	STORE_Q_OLDEST_PENDING,
	STORE_Q_RECEIPT_COUNTS,
	STORE_Q_PICK_AFTER,
	STORE_Q_PICK_TENANT,
	STORE_Q_LEASE,
	STORE_Q_ATTEMPT_START,
	STORE_Q_ATTEMPT_END,
	STORE_Q_FINISH,
	STORE_Q_FINISH_LATE,
	STORE_Q_EXPIRED,
	STORE_Q_EXPIRE_MOVE,
	STORE_Q_EXPIRE_ATTEMPTS,
	STORE_Q_EXPIRE_DEFER,
	STORE_Q_UNKNOWN_DUE,
	STORE_Q_CHECK_CLAIM,
	STORE_Q_CHECK_END,
	STORE_Q_RECHECK_DUE,
	STORE_Q_MOVE_REQUEUE,
	STORE_Q_MOVE_DELIVERED,
	STORE_Q_MOVE_RESEND,
	STORE_Q_MOVE_RECHECK,
	STORE_Q_REQUEUE_LIST,
	STORE_Q_REQUEUE_SET,
	STORE_Q_NEXT_DUE,
	STORE_Q_CIRCUIT_MAKE,
	STORE_Q_CIRCUIT_GATE,
	STORE_Q_CIRCUIT_LEASED,
	STORE_Q_CIRCUIT_RETIME,
	STORE_Q_CIRCUIT_PUT,
	STORE_Q_CIRCUIT_RELEASE,
	STORE_Q_CIRCUIT_LIST,
	STORE_Q_LIST_STATE,
	STORE_Q_LIST_ALL,
	STORE_Q_LIST_ATTEMPTS,
	STORE_Q_LIST_CONFLICTS,
	STORE_Q_RESOLVE,
	STORE_Q_ACTION_STATE,
	STORE_Q_CONFLICT_STATE,
	STORE_Q_PRUNE_RECEIPTS,
	STORE_Q_PRUNE_ATTEMPTS,
	STORE_Q_PRUNE_OUTBOX,
	STORE_Q_PRUNE_ACCEPTED,
	STORE_Q_JOBS_TERMINAL,
	STORE_Q_FORGET_JOB,
	STORE_Q_FORGET_POLL,
	STORE_Q_POLL_LAST,
	STORE_Q_TENANT_TALLY,
	STORE_Q_TENANT_LEASED,
	STORE_Q_SUBJECT_GET,
	STORE_Q_FORGET_ATTEMPTS,
	STORE_Q_FORGET_OUTBOX,
	STORE_Q_FORGET_ACCEPTED,
	STORE_Q_FORGET_RECEIPTS,
	STORE_Q_FORGET_JOBS,
	STORE_Q_FORGET_SUBJECTS,
	STORE_Q_FORGET_CONFLICTS,
	STORE_Q_FORGET_POLLS,
	STORE_Q_POLL_MARK,
	STORE_Q_METRIC_ADD,
	STORE_Q_METRIC_MAX,
	STORE_Q_METRIC_LIST,
	STORE_Q_METRIC_FORGET,
	STORE_Q_METRIC_DROP,
	STORE_Q_MINUTE_PRUNE,
	STORE_Q_DEST_ERRORS,
	STORE_Q_DEST_GAUGES,
	STORE_Q_JOB_LOCK,
	STORE_Q_JOB_TRYLOCK,
	STORE_Q_VERSION,
	STORE_Q_WRITABLE,
	STORE_Q__N
};

/* The statement texts, indexed by enum store_q. */
extern const struct db_text store_text[STORE_Q__N];

/*
 * Maps a db/db.h result to a store status: a file's I/O error is STORE_IO;
 * a connection to a server lost is STORE_GONE, so that whoever holds the
 * handle opens it again.
 */
enum store_status store_status_of(enum db_rc);

/* The status of the connection's last error, for a failed prepare. */
enum store_status store_last(struct store *);

/* Steps a statement that takes no binding and returns no row. */
enum store_status store_run(struct store *, enum store_q);

/* The statement for q, ready to bind; NULL with store_last() saying why. */
struct db_stmt *store_stmt(struct store *, enum store_q);

/* A read-out's filter: f, or one that shows all when f is NULL. */
const struct store_list_filter *store_filter(const struct store_list_filter *);
/* A filter's row limit as LIMIT takes it (-1: none). */
int64_t store_filter_limit(const struct store_list_filter *);

/*
 * Sends a bound statement, or q's, in the connection's flight (db/db.h's
 * db_send()): on PostgreSQL its failure comes when the flight lands.
 */
enum store_status store_send(struct db_stmt *);
enum store_status store_send_q(struct store *, enum store_q);

#endif
