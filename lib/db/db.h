/*
 * db/db.h: one SQL connection, to a SQLite file or to a PostgreSQL server,
 * behind one small interface: a fixed table of statement texts prepared
 * on first use, positional parameters, rows stepped one at a time, and
 * one set of result codes that says what the caller may do next.
 *
 * Statement texts are written once, in the dialect both servers share,
 * with numbered parameters ?1, ?2, ... (PostgreSQL sees them as $1, $2,
 * ...).  A table may hold a second text for PostgreSQL where the two
 * differ (claims with FOR UPDATE SKIP LOCKED, json_build_object).
 *
 * Each backend is a file of its own behind a table of operations
 * (db/db_int.h): db/sqlite.c, the only one that includes <sqlite3.h>, and
 * db/pg.c, the only one that includes <libpq-fe.h>.  db_open() chooses
 * it by the location; every other call is the same for both, and a call
 * that means something to one backend only (db_same_file(), db_busy(),
 * ...) answers for the other as said below.  A caller never asks which
 * backend it holds: it asks what the backend offers (DB_CAP_*), runs its
 * dialect (struct db_text, db_begin()), and reads its failures' classes.
 *
 * A connection is used by one thread at a time.  Not installed: nothing
 * outside lib/ sees it (the front ends call the modules above it, and
 * scripts/includes.sh holds them to that).
 */
#ifndef HB_DB_H
#define HB_DB_H

#include <sys/stat.h>

#include <stddef.h>
#include <stdint.h>

struct stat;

enum db_kind {
	DB_SQLITE,
	DB_POSTGRES
};

/*
 * Every call's outcome, classified by the backend from its own codes
 * (SQLite's extended result codes, PostgreSQL's SQLSTATE), never from a
 * message, which a server may translate.  The classes are what a caller
 * acts on, the same for every backend: BUSY and GONE are worth a retry
 * later (503 with Retry-After), CONSTRAINT is an answer (db_constraint()
 * says which kind), the rest are failures to report.
 */
enum db_rc {
	DB_OK = 0,
	DB_ROW,		/* db_step(): a row is ready */
	DB_DONE,	/* db_step(): no more rows */
	DB_BUSY,	/* locked; serialization failure, deadlock, timeout */
	DB_CONSTRAINT,	/* a unique, foreign key or check constraint */
	DB_READONLY,	/* refused to every writer: a connection opened
			   read-only, a standby */
	DB_DENIED,	/* not this user's or role's to do: a file or
			   directory it may not write, a missing grant */
	DB_GONE,	/* the connection to a server is lost, or the server
			   cannot be reached: the next call connects again */
	DB_FULL,	/* the disk is full */
	DB_NOMEM,
	DB_IOERR,	/* a file's I/O failed, or it cannot be opened */
	DB_ERROR	/* anything else: misuse, corruption, bad SQL */
};

/* Which constraint a DB_CONSTRAINT broke: db_constraint(). */
enum db_constraint {
	DB_C_NONE = 0,	/* the last failure was no constraint's */
	DB_C_UNIQUE,	/* a primary key or unique index: the key is taken */
	DB_C_REFERENCE,	/* a foreign key: refers to nothing, or is referred to */
	DB_C_CHECK	/* a check, not-null or type constraint */
};

/*
 * What a backend offers, as bits (db_caps(), db_location_caps()).  A
 * caller asks for what it needs, as curl's ask Curl_ssl_supports(),
 * never which backend it holds:
 *
 * DB_CAP_FILE       a file of this host, opened by its path: its mode,
 *                   owner and links, and the WAL beside it, are the
 *                   caller's to create and check; its checkpoints are
 *                   the caller's to run (db_checkpoint()); db_same_file()
 *                   and db_readonly() answer for it.
 * DB_CAP_SERVER     a server reached through a connection: every
 *                   statement is a round trip; it may be out of reach for
 *                   a while (DB_GONE, worth a retry) and a lost connection
 *                   is opened again; its schemas are made by their
 *                   owner's role, and roles and grants decide what a
 *                   connection may do.
 * DB_CAP_ROW_LOCKS  writers work at once, serialized by row and advisory
 *                   locks (db_begin()'s key, FOR UPDATE), not one at a
 *                   time by a lock on the whole database.
 */
#define DB_CAP_FILE		0x1u
#define DB_CAP_SERVER		0x2u
#define DB_CAP_ROW_LOCKS	0x4u

/*
 * A statement text per backend; pg NULL means the same as sqlite.  For
 * db_exec_text(), "" means nothing to run on that backend.
 */
struct db_text {
	const char	*sqlite;
	const char	*pg;
};

struct db;
struct db_stmt;

/* "ok", "busy", ...: a fixed word for logs. */
const char *db_rc_name(enum db_rc);

/*
 * Non-zero when location names a PostgreSQL database (a postgresql:// or
 * postgres:// URI, or a key=value conninfo starting, after spaces, with
 * one of libpq's keywords and '=': host=, dbname=, service=, ...), zero
 * for a SQLite path: any path starting with '/' or '.', and a relative
 * one with a '=' elsewhere (run=1/data).  Which backend db_open() takes;
 * for lib/db/ and the tests alone: a caller asks db_location_caps().
 */
int db_is_postgres(const char *location);

/* The DB_CAP_* bits of the backend db_open() would take for location. */
unsigned db_location_caps(const char *location);

/* Its name for a log line: "sqlite" or "postgresql" (static storage). */
const char *db_location_name(const char *location);

/*
 * Writes a PostgreSQL conninfo (a URI or key=value pairs) into buf (len
 * bytes) for a log or a message, from libpq's own reading of it
 * (PQconninfoParse()), never from one of ours: the options it sets, in
 * libpq's order, as key=value pairs (a value quoted and escaped as libpq
 * reads it when it must be), every option libpq marks as a password (its
 * display character "*": password, sslpassword, ...) shown as ***, and
 * so is a dbname that is itself a conninfo.  Returns how many values it
 * masked (0: the string holds no password, empty ones included), or -1:
 * libpq cannot parse it (buf then holds DB_CONNINFO_MALFORMED: nothing
 * of the string is echoed, as libpq's complaint would quote the token it
 * choked on), or libpq cannot be loaded (DB_CONNINFO_UNREAD; db_open()
 * then says why), or buf is too short (buf then holds "").
 */
#define DB_CONNINFO_MALFORMED	"(a PostgreSQL conninfo libpq cannot parse)"
#define DB_CONNINFO_UNREAD	"(a PostgreSQL conninfo, libpq not loaded)"
int db_conninfo_redact(const char *conninfo, char *buf, size_t len);

/*
 * Opening flags.  The first three are SQLite's own SQLITE_OPEN_* values
 * (the SQLite backend checks that they agree), so that no caller needs
 * <sqlite3.h>.  On a server, READONLY makes every transaction read-only
 * (default_transaction_read_only), whatever the role's grants allow.
 */
#define DB_OPEN_READONLY	0x00000001
#define DB_OPEN_READWRITE	0x00000002
#define DB_OPEN_CREATE		0x00000004
/*
 * Not SQLite's: foreign keys are enforced (a file's connection enables
 * them, and without this flag disables them, as a migration that makes
 * a table again must; a server's hold always).
 */
#define DB_OPEN_FKEYS		0x20000000
/*
 * Not SQLite's: the connection will run at synchronous=FULL, and its WAL
 * frames may be gathered into one write a transaction (db/sqlite.c).
 */
#define DB_OPEN_WAL_GATHER	0x40000000

/* How db_open() opens a location; what a backend has no use for it skips. */
struct db_conf {
	int		 flags;		/* DB_OPEN_* */
	/*
	 * The busy budget: how long a lock is waited for (a file's busy
	 * handler, db_busy(); a server's lock and statement timeouts,
	 * db_open_pg()'s statement_ms).
	 */
	int		 busy_ms;
	int		 connect_ms;	/* a server's connection bound, 0: libpq's */
	const char	*schemas;	/* a server's search_path, "a,b" (no
					   spaces); NULL: its own */
	const char	*app;		/* a server's application_name; NULL:
					   "hookbox" */
	int		 cache_kib;	/* a file's page cache; 0: SQLite's */
};

/*
 * Opens location with the backend that serves it (db_location_caps()),
 * with statement texts text[0..n-1] (static storage).  *out is NULL on
 * failure, and why (len bytes) says what failed where the class does not
 * say it all (a server's words, never with a password), else "".
 */
enum db_rc db_open(const char *location, const struct db_conf *,
    const struct db_text *text, size_t n, struct db **out, char *why,
    size_t len);

/*
 * The backends' own opens, which db_open() calls (and the tests, which
 * test each backend).  SQLite: a file with DB_OPEN_* flags.
 */
enum db_rc db_open_sqlite(const char *path, int flags,
    const struct db_text *text, size_t n, struct db **out);

/*
 * SQLite's companions of a database file: the names it gives them, after
 * the database's own (DB_COMPANIONS of them), and whether one is a file
 * db_open_sqlite() lets SQLite use: sb (from fstat(), or lstat(), which
 * sees a link as no plain file) a plain file of one name, owned by the
 * database's owner or by this process's user.  Anything else may have
 * been planted, for SQLite to play into the database or write through.
 */
#define DB_COMPANIONS	3
extern const char *const db_companion_sfx[DB_COMPANIONS];
int db_companion_ok(const struct stat *sb, uid_t db_owner);

/* A budget of 0 still bounds a statement (statement_timeout), at this. */
#define DB_PG_BACKSTOP_MS	5000
/* A COMMIT cancelled past its bound is waited for this much longer. */
#define DB_PG_CANCEL_MS		2000

/*
 * Connects to PostgreSQL with a libpq conninfo or URI.  connect_ms bounds
 * the connection (0: libpq's default).  statement_ms is the busy budget:
 * the session's lock_timeout (every lock, advisory locks too) and its
 * statement_timeout.  0 fails at once on a lock (lock_timeout 1 ms), as
 * SQLite does, with a statement_timeout of DB_PG_BACKSTOP_MS.  These go
 * first into the connection's options, before the conninfo's own
 * options, which win (their search_path, statement_timeout, read-only
 * transactions), and hold on every connection opened again.
 *
 * What bounds a call: connect_ms the connection; lock and statement
 * timeouts the server's work; for a server that vanishes without a word,
 * TCP keepalives (about 5 s of silence while a call waits) and
 * tcp_user_timeout (max(statement_ms, 1000) + 1000 ms of data sent and
 * not acknowledged).  Over a Unix socket, the last two do not apply.
 *
 * A command that commits, a COMMIT (db_exec() or a statement whose text
 * is one) or any statement run outside a transaction (its own commit),
 * is bounded by the client: the server's statement_timeout does not
 * count a commit's own work, its flush and its wait for synchronous
 * standbys, which lasts as long as a standby named in
 * synchronous_standby_names is away.  Its answer is waited for as long
 * as any statement may run, statement_ms (DB_PG_BACKSTOP_MS for 0: the
 * bound a statement has then); past that it is cancelled (PQcancel(),
 * from a thread: to a server gone silent its connection attempts could
 * take minutes) and waited for DB_PG_CANCEL_MS more; with no answer even
 * then the connection is dropped, and is lost inside the transaction
 * (DB_GONE, as above: the outcome is unknown).  An answer that comes
 * once the cancel is on its way is read, and then the call waits, within
 * the same DB_PG_CANCEL_MS, until the server has taken the cancel, which
 * could otherwise fall on the next command; not taken by then, the
 * connection is dropped (the next call opens it again).
 *
 * Such a command the server answers with success and a WARNING is not
 * DB_OK but DB_BUSY.  That is how it reports a wait for a synchronous
 * standby cancelled (by this bound, or an operator's
 * pg_cancel_backend()): the transaction is committed on the primary,
 * perhaps not on the standby the durability promise needs.  The warning
 * is known by its severity, which the server does not translate
 * (PG_DIAG_SEVERITY_NONLOCALIZED; a server older than 9.6 sends none:
 * then by its SQLSTATE's class 01), never by its words; any warning
 * counts, but 25P01 (no transaction in progress: nothing was to commit).
 * DB_BUSY, not DB_GONE: the connection is good and is kept (GONE would
 * have the caller close it and connect again for nothing); like a
 * timeout, the call is worth a retry later (503 with Retry-After), and
 * the retry finds the work done (a duplicate).  A command inside a
 * transaction is bounded by the server alone (statement_timeout,
 * lock_timeout), and its warnings are not looked at.
 *
 * *out is NULL on failure, and why (len bytes) says what failed, never
 * with the conninfo's password: a conninfo libpq cannot parse is
 * DB_ERROR, "malformed PostgreSQL conninfo" (a configuration error, not
 * worth a retry), and so is a libpq that cannot be loaded (db/pg.c
 * loads it on first use, so a SQLite site need not have it); a server
 * that cannot be reached is DB_GONE.  A
 * connection that is lost later is opened again by the next call that
 * needs it (db_exec(), db_stmt()), outside a transaction.  One lost
 * inside a transaction stays lost, every call DB_GONE, until the caller's
 * ROLLBACK (db_exec() or a statement), which is DB_OK: the server has
 * rolled back.
 */
enum db_rc db_open_pg(const char *conninfo, int connect_ms, int statement_ms,
    const struct db_text *text, size_t n, struct db **out, char *why,
    size_t len);

/*
 * SQLite: non-zero while the file at the path given to db_open_sqlite()
 * is still the one opened (not removed, not renamed over); one stat(2),
 * whose result is left in *sb when sb is not NULL.  PostgreSQL: always
 * non-zero, *sb untouched.
 */
int db_same_file(const struct db *, struct stat *sb);

/*
 * SQLite: instead of the default busy handler (sleeps that grow to 100
 * ms, which lets one writer starve another), retries after short random
 * sleeps (0.25-1.25 ms) until ms have passed since the first busy call,
 * then gives up with DB_BUSY.  PostgreSQL: nothing (its bounds are the
 * lock_timeout and statement_timeout db_open_pg() set).
 */
void db_busy(struct db *, int ms);

/* Non-zero when a SQLite file was opened read-only; 0 for PostgreSQL. */
int db_readonly(struct db *);

/*
 * SQLite: with pages > 0, sets the WAL size after which a COMMIT
 * checkpoints; with 0, runs a passive checkpoint now.  PostgreSQL: DB_OK.
 */
enum db_rc db_checkpoint(struct db *, int pages);

/*
 * SQLite: gives back the connection's page cache, outside a transaction
 * (its pages are read from the file, or the kernel's cache, when next
 * needed), and returns the bytes it held.  PostgreSQL: 0.
 */
size_t db_shrink(struct db *);

/* Closes the connection and every statement.  NULL is a no-op. */
void db_close(struct db *);

/* Which backend: for lib/db/ and the tests alone (callers: db_caps()). */
enum db_kind db_kind(const struct db *);

/* The DB_CAP_* bits of db's backend. */
unsigned db_caps(const struct db *);

/*
 * PostgreSQL: runs text (SET search_path ...) now and again on every
 * connection opened after a lost one, which starts with the server's
 * defaults.  Static storage.  SQLite: runs it now.
 */
enum db_rc db_session(struct db *, const char *text);

/* The last error's message (the server's, or SQLite's), never NULL. */
const char *db_errmsg(const struct db *);

/*
 * Runs a text with no parameters and no result rows (BEGIN, COMMIT, DDL,
 * pragmas); several statements separated by ';' are allowed.  On
 * PostgreSQL a COMMIT (text or statement) that did not commit, its
 * transaction aborted by an earlier error, fails with that error's class
 * (DB_ERROR when not known); so do the statements after that error.
 */
enum db_rc db_exec(struct db *, const char *text);

/*
 * Non-zero while a transaction is open on the connection; on a lost
 * PostgreSQL connection, while the transaction it cut is not rolled
 * back by the caller.
 */
int db_in_tx(struct db *);

/* The class of the connection's last failure (DB_OK before any). */
enum db_rc db_last(const struct db *);

/*
 * The kind of constraint the last DB_CONSTRAINT broke (DB_C_NONE when
 * the last failure was another), from the backend's codes.
 */
enum db_constraint db_constraint(const struct db *);

/*
 * A transaction, in the backend's own words.  DB_BEGIN_WRITE takes the
 * write lock at once where one writer holds the whole database (SQLite's
 * BEGIN IMMEDIATE), so that a read inside cannot be outdated by another
 * writer; where writers work at once (DB_CAP_ROW_LOCKS), lock, when not
 * 0, is a key that transactions taking the same key hold one at a time
 * until they end (PostgreSQL's pg_advisory_xact_lock()).
 */
enum db_begin {
	DB_BEGIN_READ,
	DB_BEGIN_WRITE
};
enum db_rc db_begin(struct db *, enum db_begin, int64_t lock);

/*
 * Runs text's version for this backend as db_exec() does; "" runs
 * nothing and is DB_OK (a step one backend has no need of).
 */
enum db_rc db_exec_text(struct db *, const struct db_text *text);

/*
 * Steps a bound statement expected to return no row, so that its failure
 * undoes it alone: inside a transaction, the transaction goes on, as a
 * failed statement leaves SQLite's (PostgreSQL's would be aborted: there
 * it runs inside a savepoint).  DB_DONE or the statement's failure.
 */
enum db_rc db_step_alone(struct db_stmt *);

/*
 * The statement for text[i], ready to bind, reset and unbound.  It
 * belongs to the connection.  SQLite prepares it on first use here;
 * PostgreSQL on its first db_step(), so that a lock or a lost connection
 * met while preparing is reported there, with its class.  NULL when it
 * cannot be had (db_last() and db_errmsg() say why).
 */
struct db_stmt *db_stmt(struct db *, size_t i);

/* Parameters are numbered from 1.  Text and blobs are copied. */
enum db_rc db_bind_int64(struct db_stmt *, int idx, int64_t v);
enum db_rc db_bind_text(struct db_stmt *, int idx, const char *s);
enum db_rc db_bind_blob(struct db_stmt *, int idx, const void *b,
    size_t len);
enum db_rc db_bind_null(struct db_stmt *, int idx);

/*
 * Runs the statement (on the first call) and moves to its next row:
 * DB_ROW, DB_DONE, or an error.  After DB_DONE or an error the statement
 * is reset.
 */
enum db_rc db_step(struct db_stmt *);

/* Resets a statement before it is done (rows left unread). */
void db_reset(struct db_stmt *);

/*
 * Columns of the current row, numbered from 0.  Text lives until the next
 * step or reset; NULL reads as 0, "" and a zero-length blob.  On
 * PostgreSQL one blob at a time: db_col_blob() frees the blob the last
 * call returned (wiped), so read one blob column, use it, then the next.
 */
int	     db_col_null(struct db_stmt *, int col);
int64_t	     db_col_int64(struct db_stmt *, int col);
const char  *db_col_text(struct db_stmt *, int col);
const void  *db_col_blob(struct db_stmt *, int col, size_t *len);

/* Rows the last INSERT, UPDATE or DELETE of this statement changed. */
int64_t db_changes(struct db_stmt *);

/* Binds s, or NULL when s is NULL or empty. */
enum db_rc db_bind_opt(struct db_stmt *, int idx, const char *s);

/*
 * Copies column col into buf (NUL-terminated, "" for NULL); -1 if it
 * did not fit.
 */
int db_col_copy(struct db_stmt *, int col, char *buf, size_t len);

/* Steps a statement expected to return no row: DB_DONE or the error. */
enum db_rc db_step_done(struct db_stmt *);

/*
 * A flight: statements sent one after another and answered together.
 * On PostgreSQL db_send() queues a bound statement (libpq's pipeline
 * mode) and nothing waits for the server until the flight lands: one
 * round trip, whatever it holds.  On SQLite each statement runs as it is
 * sent.  What the caller sees is the same:
 *
 * - db_send() returns DB_OK, or a failure known at once (SQLite's, a
 *   send that could not be made).  Once a statement of the flight has
 *   failed, those sent after it do nothing and return that failure.
 * - db_land() waits for every answer: DB_OK, or the first failure's
 *   class, *failed (if not NULL) its index in the flight, 0 for the
 *   first sent; the statements after it did nothing.  Landed, it keeps
 *   saying so (*failed the flight's size when it succeeded) until the
 *   next db_send() starts another flight.
 * - Then db_step() on a statement sent yields its rows from the first
 *   (one sent twice keeps its last answer), and db_changes() what it
 *   changed.
 * - A call that needs the server before the flight is landed (db_exec(),
 *   db_step() of another statement) lands it first, and fails with the
 *   flight's failure without running, unless it rolls back (ROLLBACK,
 *   ROLLBACK TO).  A COMMIT rides the flight: it is sent last, in the
 *   same round trip (its index the flight's size), bounded as any COMMIT
 *   is; after a failure it does not run, and the transaction stays
 *   open for the caller's ROLLBACK (TO).
 *
 * The flight's answers wait in memory, its queries in the socket: keep
 * one to what a batch needs (some hundreds of small statements).
 */
enum db_rc db_send(struct db_stmt *);
enum db_rc db_land(struct db *, size_t *failed);

/* The statements the flight not landed holds: the next one's index. */
size_t db_sent(const struct db *);

/*
 * Round trips to the server since the connection was opened: a statement
 * run, a statement prepared, a flight landed.  SQLite: 0.
 */
uint64_t db_round_trips(const struct db *);

struct cJSON;

/*
 * Steps a bound statement whose column 0 is a JSON object per row (SQLite's
 * json_object(), PostgreSQL's json_build_object()) into a new array (*out,
 * freed with cJSON_Delete(); NULL on error); resets the statement.
 * DB_OK, DB_NOMEM, DB_ERROR for a row that is NULL or not JSON, or the
 * step's error.
 */
enum db_rc db_json_rows(struct db_stmt *, struct cJSON **out);

#endif /* HB_DB_H */
