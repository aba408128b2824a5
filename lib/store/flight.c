/*
 * store/flight.c: a transaction's statements sent together, and the
 * savepoints that let a piece of it fail alone (store/flight.h).
 */
#include "store/flight.h"
#include "store/store_int.h"

enum store_status
store_land(struct store *s, size_t *failed)
{
	return store_status_of(db_land(s->db, failed));
}

size_t
store_sent(const struct store *s)
{
	return db_sent(s->db);
}

int
store_moved(const struct store *s)
{
	return db_land(s->db, NULL) == DB_CONSTRAINT;
}

uint64_t
store_round_trips(const struct store *s)
{
	return db_round_trips(s->db);
}

uint64_t
store_tx_statements(const struct store *s)
{
	return s->tx_statements;
}

enum store_status
store_savepoint(struct store *s)
{
	return store_send_q(s, STORE_Q_SAVEPOINT);
}

enum store_status
store_release(struct store *s)
{
	return store_send_q(s, STORE_Q_RELEASE);
}

enum store_status
store_rollback_to(struct store *s)
{
	enum store_status	rc;

	/*
	 * After an I/O error, a full disk or running out of memory, SQLite
	 * may have rolled the whole transaction back on its own.
	 */
	if (!store_in_tx(s))
		return STORE_IO;
	if ((rc = store_run(s, STORE_Q_ROLLBACK_TO)) == STORE_OK)
		rc = store_run(s, STORE_Q_RELEASE);
	return rc;
}

int
store_in_tx(struct store *s)
{
	return s->in_tx && db_in_tx(s->db);
}

int
store_committed(const struct store *s)
{
	return s->committed;
}

size_t
store_ride(struct store *s)
{
	size_t	start = store_sent(s);

	/* A failure is the flight's: it says so when it lands. */
	(void)store_send_q(s, STORE_Q_SAVEPOINT);
	return start;
}

enum store_status
store_commit_ridden(struct store *s, size_t start, int *rode)
{
	enum store_status	rc;
	size_t			end, f;

	*rode = 0;
	(void)store_send_q(s, STORE_Q_RELEASE);
	end = store_sent(s);
	if ((rc = store_commit(s)) == STORE_OK ||
	    store_land(s, &f) == STORE_OK || f < start || f >= end) {
		/* They rode it, whatever it said (see store_committed()). */
		*rode = 1;
		return rc;
	}
	/* They alone failed, and the COMMIT did not run: without them. */
	if (!store_in_tx(s) || store_rollback_to(s) != STORE_OK)
		return rc;
	return store_commit(s);
}
