/*
 * store/flight.h: a transaction's statements sent together (db/db.h's
 * flights).  On PostgreSQL the store's writes, savepoints and BEGIN are
 * sent without waiting for their answers; a flight lands, in one round
 * trip, when a read needs its rows (store_look_batch()), when the caller
 * lands it, or with the COMMIT, which rides it.  On SQLite every
 * statement runs as it is sent, and a flight only keeps its first
 * failure.  Either way, once a statement has failed the ones sent after
 * it do nothing, and the transaction stands for store_rollback_to() or
 * store_rollback().  The savepoints that let one piece of a transaction
 * fail alone are here too.
 */
#ifndef HB_STORE_FLIGHT_H
#define HB_STORE_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/*
 * Waits for the flight's answers: STORE_OK, or the first failure's class
 * with *failed (if not NULL) its index in the flight (store_sent() when
 * it was sent).  Landed already (by a read, a COMMIT), says how it went
 * until the next statement is sent.
 */
HB_API enum store_status store_land(struct store *, size_t *failed);

/*
 * Non-zero when the flight landed failing on a key another transaction
 * wrote (a unique constraint): the state moved since it was looked up.
 */
HB_API int store_moved(const struct store *);

/* The statements the flight not landed holds: the next one's index. */
HB_API size_t store_sent(const struct store *);

/* Round trips to the server since the store was opened; 0 on SQLite. */
HB_API uint64_t store_round_trips(const struct store *);

/*
 * The statements that begin, end and mark the store's transactions
 * (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE, ROLLBACK TO) sent since
 * it was opened: a server's own count of them may leave some out (for
 * one, pg_stat_statements of PostgreSQL 15 counts a prepared one only
 * the first time).
 */
HB_API uint64_t store_tx_statements(const struct store *);

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

/*
 * The COMMIT is the flight's, and what the transaction does not need
 * rides it (a batch's counts: store_metrics_send()).  store_ride() opens
 * a savepoint for the riders and returns where they start in the flight;
 * the caller sends them; store_commit_ridden() closes the savepoint and
 * commits, the riders in the COMMIT's round trip on a server.  When they
 * alone failed, the COMMIT did not run: they are undone, and the
 * transaction is committed without them.  *rode says whether they were
 * part of the COMMIT, which store_committed() says committed.  They do
 * not nest with the savepoints above.
 */
HB_API size_t store_ride(struct store *);
HB_API enum store_status store_commit_ridden(struct store *, size_t start,
    int *rode) HB_MUST_CHECK;

#endif /* HB_STORE_FLIGHT_H */
