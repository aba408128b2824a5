/*
 * sql.h: the private SQLite plumbing shared by the two storage modules
 * (store.c for state.db; config.c and config_admin.c for config.db).  Not
 * installed, not exported: nothing outside lib/ sees a sqlite3 handle.
 *
 * Each connection owns a fixed table of SQL texts; sql_stmt() prepares a
 * statement once (SQLITE_PREPARE_PERSISTENT) on first use and hands it
 * back reset and unbound on every later use.
 *
 * Transactions: none of its own; each caller keeps its own header's
 * promise.
 */
#ifndef HB_SQL_H
#define HB_SQL_H

#include <sqlite3.h>

#include <sys/types.h>

struct sql {
	sqlite3			 *db;
	char			 *path;
	dev_t			  dev;	/* of the file opened at path */
	ino_t			  ino;
	const char *const	 *text;	/* n SQL texts, static storage */
	sqlite3_stmt		**st;	/* n slots, prepared lazily */
	size_t			  n;
	int			  busy_ms;	/* see sql_busy() */
	long long		  busy_since;	/* ms, first busy call */
};

/*
 * Opens path with the given SQLITE_OPEN_* flags and allocates the
 * statement slots.  On failure returns the SQLite code and leaves *s
 * closed.  Extended result codes are on.  A path whose last component is
 * a symbolic link is refused (SQLITE_CANTOPEN): a database is opened
 * where the operator put it, never where a link points.  The file's
 * device and inode are remembered for sql_same_file().  The connection
 * has no mutex of its own (SQLITE_OPEN_NOMUTEX): one thread at a time may
 * use it.
 */
int sql_open(struct sql *s, const char *path, int flags,
    const char *const *text, size_t n);

/*
 * Non-zero while the file at the path given to sql_open() is still the
 * one opened (not removed, not renamed over).  One stat(2).
 */
int sql_same_file(const struct sql *s);

/*
 * Installs the busy handler: instead of SQLite's default (sleeps that
 * grow to 100 ms, which lets one writer starve another), it retries after
 * short random sleeps (0.25-1.25 ms) until ms have passed since the first
 * busy call, then gives up with SQLITE_BUSY.  Waiters thus get the lock
 * in roughly random order, and nobody waits past the bound.
 */
void sql_busy(struct sql *s, int ms);

/* Finalizes every statement and closes the connection.  Safe twice. */
void sql_close(struct sql *s);

/* The statement for text[i], reset and with bindings cleared, or NULL. */
sqlite3_stmt *sql_stmt(struct sql *s, size_t i);

/* Runs a statement text with no result rows (pragmas, BEGIN, DDL). */
int sql_exec(struct sql *s, const char *text);

/* Binds s, or NULL when s is NULL or empty. */
int sql_bind_text(sqlite3_stmt *, int idx, const char *s);

/* Copies column col into buf (NUL-terminated, "" for NULL); -1 if it did not fit. */
int sql_col_copy(sqlite3_stmt *, int col, char *buf, size_t len);

/* Steps a statement expected to return no row; returns SQLITE_DONE or the error. */
int sql_step_done(sqlite3_stmt *);

struct cJSON;

/*
 * Steps a bound statement whose column 0 is a JSON object per row into a
 * new array (*out, freed with cJSON_Delete(); NULL on error); resets the
 * statement.  Returns SQLITE_OK, SQLITE_NOMEM when memory ran out,
 * SQLITE_CORRUPT for a row that is NULL or not JSON, or the step's error.
 */
int sql_json_rows(sqlite3_stmt *, struct cJSON **out);

#endif
