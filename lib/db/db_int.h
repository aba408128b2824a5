/*
 * db/db_int.h: what db/db.c and its backends share, private to them (db/db.c,
 * db/sqlite.c, db/pg.c): the table of operations a backend fills, and
 * the parts of a connection and a statement that every backend has.
 *
 * As SQLite's VFS does, a backend's connection and statement begin with
 * the shared part and go on with its own: db_new() allocates the sizes
 * its table names, and the backend reaches its own part by a cast.  db/db.c
 * calls through the table and never asks which backend it holds; only
 * db/sqlite.c includes <sqlite3.h>, only db/pg.c <libpq-fe.h>.
 */
#ifndef HB_DB_INT_H
#define HB_DB_INT_H

#include "db/db.h"

struct db_ops;

/* The first member of each backend's statement. */
struct db_stmt {
	struct db	*db;
	size_t		 i;		/* its index in db->text */
	int64_t		 changes;	/* see db_changes() */
	enum db_rc	 held;		/* sent: its first step's answer */
};

/* The first member of each backend's connection. */
struct db {
	const struct db_ops	*ops;
	const struct db_text	*text;
	size_t			 n;
	unsigned char		*st;	/* n statements, ops->stmt_size each */
	enum db_rc		 last;	/* the last failure's class */
	enum db_constraint	 cons;	/* ... and its constraint's kind */
	/* The flight (db_send()): */
	size_t			 sent;	/* statements sent, not landed */
	enum db_rc		 frc;	/* its first failure's class */
	size_t			 failed; /* ... and index, else its size */
	uint64_t		 trips;	/* see db_round_trips() */
};

/*
 * A backend.  Each operation is the db/db.h function of the same name, for
 * this backend's connections; db/db.c has checked what db/db.h lets it check
 * (an index in range, a NULL text bound as NULL) and sets what it says
 * is shared (db_stmt()'s changes).  An operation a backend has no use
 * for is NULL, and db/db.c answers as db/db.h says of it: same_file 1, busy
 * nothing, readonly 0, checkpoint DB_OK, shrink 0, session db_exec().
 */
struct db_ops {
	enum db_kind	  kind;
	const char	 *name;		/* db_location_name()'s */
	unsigned	  caps;		/* DB_CAP_* */
	/*
	 * A failed statement aborts the transaction around it (PostgreSQL):
	 * db_step_alone() wraps it in a savepoint.
	 */
	int		  aborts_tx;
	size_t		  db_size;	/* its struct db, the shared part first */
	size_t		  stmt_size;	/* ... and its struct db_stmt */

	/* db_open() for this backend's locations. */
	enum db_rc	(*open)(const char *location, const struct db_conf *,
			    const struct db_text *text, size_t n,
			    struct db **out, char *why, size_t len);
	/* db_begin()'s text: BEGIN and, for a lock key, its lock. */
	enum db_rc	(*begin)(struct db *, enum db_begin, int64_t lock);

	/* Frees what the backend holds; db/db.c frees the memory itself. */
	void		(*stmt_free)(struct db_stmt *);
	void		(*close)(struct db *);

	int		(*same_file)(const struct db *, struct stat *);
	void		(*busy)(struct db *, int ms);
	int		(*readonly)(struct db *);
	enum db_rc	(*checkpoint)(struct db *, int pages);
	size_t		(*shrink)(struct db *);
	enum db_rc	(*session)(struct db *, const char *text);

	const char     *(*errmsg)(const struct db *);
	enum db_rc	(*exec)(struct db *, const char *text);
	int		(*in_tx)(struct db *);

	/* db_stmt(): the statement ready to bind, or its failure's class. */
	enum db_rc	(*ready)(struct db_stmt *);
	enum db_rc	(*bind_int64)(struct db_stmt *, int idx, int64_t v);
	enum db_rc	(*bind_text)(struct db_stmt *, int idx, const char *s);
	enum db_rc	(*bind_blob)(struct db_stmt *, int idx, const void *b,
			    size_t len);
	enum db_rc	(*bind_null)(struct db_stmt *, int idx);
	enum db_rc	(*step)(struct db_stmt *);
	void		(*reset)(struct db_stmt *);
	int		(*col_null)(struct db_stmt *, int col);
	int64_t		(*col_int64)(struct db_stmt *, int col);
	const char     *(*col_text)(struct db_stmt *, int col);
	const void     *(*col_blob)(struct db_stmt *, int col, size_t *len);

	/*
	 * A flight (db/db.h), for a backend that sends statements ahead of
	 * their answers; NULL for one that runs them as they are sent (db/db.c
	 * steps them then).  send() queues a bound statement; land() waits
	 * for every answer queued, with commit (a COMMIT, or NULL) sent
	 * last in the same round trip and bounded as any COMMIT is.  A
	 * statement answered keeps its result for step().  Returns DB_OK, or
	 * the first failure's class and *failed its index among the
	 * statements queued (commit last).
	 */
	enum db_rc	(*send)(struct db_stmt *);
	enum db_rc	(*land)(struct db *, struct db_stmt *commit,
			    size_t *failed);
};

extern const struct db_ops	db_sqlite_ops;
extern const struct db_ops	db_pg_ops;

/*
 * A connection of ops's backend with its n statements (text, static
 * storage), zeroed but for the shared parts; NULL when out of memory.
 * Freed by db_close(), the backend's close() first.
 */
struct db *db_new(const struct db_ops *ops, const struct db_text *text,
    size_t n);

/* Statement i of db (i < db->n). */
struct db_stmt *db_stmt_at(struct db *db, size_t i);

/* Milliseconds on the monotonic clock. */
long long db_mono_ms(void);

/* Records a failure, rc's class and cons's kind; returns rc. */
enum db_rc db_fail(struct db *db, enum db_rc rc, enum db_constraint cons);

/* The text of t that db's backend runs (static storage). */
const char *db_text_for(const struct db *db, const struct db_text *t);

#endif /* HB_DB_INT_H */
