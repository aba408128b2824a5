/*
 * store/store.h: the state database, state.db (read-write): opening it, its
 * transactions, and the read-outs the responder serves (health, metrics).
 *
 * Transactions: store_begin() opens a caller-owned write transaction
 * that store_commit() or store_rollback() ends; every other function here
 * is self-contained (a read, or the health check's own BEGIN/ROLLBACK).
 *
 * The storage interface says nothing of its backend: a path is a SQLite
 * file, state.db; a PostgreSQL conninfo or URI (db/db.h says which) is a
 * database's schema hookbox_state, shared by every host.  Its callers
 * each have a header: store/record.h (the acceptance transaction),
 * store/outbox.h (the dispatcher), store/admin.h (the operator and the
 * poller).  All its SQL lives in store/store.c.  state.db runs in WAL mode with
 * synchronous=FULL (an acknowledged action survives power loss) unless
 * the caller opts in to NORMAL.  Times are unix milliseconds.
 */
#ifndef HB_STORE_H
#define HB_STORE_H

#include "base/hb.h"

struct store;

enum store_status {
	STORE_OK = 0,
	STORE_BUSY,	/* locked past the busy timeout */
	STORE_IO,	/* I/O error, disk full, read-only file */
	STORE_NOMEM,
	STORE_ERROR,	/* corrupt, schema too new, misuse */
	/*
	 * The open file is no longer the one at its path (removed or
	 * replaced), or the path can no longer be written by us; on
	 * PostgreSQL the connection was lost: nothing is written, and the
	 * handle should be closed and opened again (a PostgreSQL handle
	 * also reconnects by itself on its next call).
	 */
	STORE_GONE
};

struct store_opts {
	int	busy_ms;	/* bound on waiting for the write lock */
	int	sync_normal;	/* synchronous=NORMAL instead of FULL */
	int	create;		/* create the file if missing (init only) */
	/*
	 * After a COMMIT that leaves more than this many pages in the WAL,
	 * the committing connection copies them into the file itself (a
	 * checkpoint, and two more flushes).  0: SQLite's default, 1000.  A
	 * writer whose latency matters sets it high and leaves the work to
	 * another connection's store_checkpoint().
	 */
	int	checkpoint_pages;
	/* SQLite's page cache, in KiB; 0: SQLite's default, 2000. */
	int	cache_kib;
	/*
	 * A file's savepoints keep the pages they change in memory
	 * (temp_store=MEMORY), not in a temporary file past 64 KiB, two
	 * writes a page: for a writer whose transactions are bounded by
	 * what its callers already hold, set after the schema's migration,
	 * whose statements are not.
	 */
	int	journal_in_memory;
};

#define STORE_BUSY_MS_DEFAULT	5000

HB_API const char *store_strerror(enum store_status);

/*
 * Opens (and with opts->create, creates with mode 0600) state.db,
 * migrating its schema to the current version.  *out is freed with
 * store_close().  opts NULL means the defaults.  A path with a symbolic
 * link in it is refused (STORE_IO), and so is anything at the path but a
 * regular file: the directory may be writable by a less trusted user
 * than the caller, and nothing is ever created or written through a link.
 * The file's device and inode are remembered: see store_check_file().
 *
 * PostgreSQL: connects within busy_ms, every statement bounded by it
 * (statement_timeout); with opts->create makes schema hookbox_state when
 * it is missing (two processes at once make it once); without, a missing
 * schema is STORE_ERROR.  After a failure store_errmsg(NULL) says why,
 * on this thread (the server's words, never a password).
 */
HB_API enum store_status store_open(const char *path,
    const struct store_opts *opts, struct store **out) HB_MUST_CHECK;
HB_API void store_close(struct store *);

/*
 * Non-zero when this store_open() made or migrated the schema: *from the
 * version it found (0: none, made now), *to the one it left.
 */
HB_API int store_schema_moved(const struct store *, int *from, int *to);

/*
 * The last error's message (SQLite's or the PostgreSQL server's), for
 * logs: never a bound value, never a conninfo's password.  NULL: why this
 * thread's last store_open() failed.
 */
HB_API const char *store_errmsg(struct store *);

/*
 * STORE_OK while the open file is still the file at its path and we may
 * still write it; else STORE_GONE.  One stat(2), and faccessat(2) when
 * the file's mode, owner or change time moved since it last said yes.
 */
HB_API enum store_status store_check_file(struct store *) HB_MUST_CHECK;

/*
 * BEGIN IMMEDIATE: takes the write lock now, waiting at most busy_ms.
 * First checks the file (store_check_file()): nothing is ever written
 * into a file that is no longer at the path.
 */
HB_API enum store_status store_begin(struct store *) HB_MUST_CHECK;
/*
 * COMMIT, then checks that the file is still at its path (one stat(2)):
 * STORE_GONE when it was removed or replaced meanwhile, so that the
 * caller does not acknowledge work that went into a file no other
 * process will read.  A file made read-only meanwhile holds the work:
 * the next store_begin() refuses it.
 */
HB_API enum store_status store_commit(struct store *) HB_MUST_CHECK;
/*
 * Copies what the WAL holds into the database file, as far as readers
 * allow, without waiting for any lock (a passive checkpoint).  Not inside
 * a transaction.
 */
HB_API enum store_status store_checkpoint(struct store *) HB_MUST_CHECK;
/*
 * Gives back the connection's page cache (db_shrink()), not inside a
 * transaction; returns the bytes it held.
 */
HB_API size_t store_shrink(struct store *);
/*
 * Non-zero when the state at path is a file whose writers run its
 * checkpoints (store_checkpoint()); a server runs its own, and wants no
 * connection for them.
 */
HB_API int store_own_checkpoints(const char *path);

/* Rolls back the open transaction, if any. */
HB_API void store_rollback(struct store *);

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

/*
 * What an operator's read-out shows (store_outbox_list(),
 * store_attempts_list(), store_conflicts_list()): every field 0 or NULL
 * shows all; a NULL filter is the same.
 */
struct store_list_filter {
	const char	*tenant;	/* one tenant's rows (not attempts) */
	const char	*destination;	/* one destination's (outbox only) */
	int64_t		 since;		/* created (an attempt: started) at or
					   after, unix ms */
	int		 limit;		/* at most this many; 0: no limit */
};

/* Seconds since the oldest pending or leased row was created; 0: none. */
HB_API int64_t store_counts_age(const struct store_counts *, int64_t now_ms);
/* Whole seconds from since_ms to now_ms; 0 when since_ms is 0 (none)
   or not before now_ms. */
HB_API int64_t store_age(int64_t since_ms, int64_t now_ms);

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
 * PostgreSQL: a transaction starts, is not read-only (a standby) and the
 * role may write the state tables (else STORE_IO, store_errmsg() says
 * which); STORE_GONE when the connection is lost.
 */
HB_API enum store_status store_check_writable(struct store *) HB_MUST_CHECK;

#endif
