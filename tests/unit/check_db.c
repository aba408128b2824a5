/*
 * check_db.c: tests of lib/db/db.c against both backends: a SQLite file on
 * disk, and the PostgreSQL server named by $HOOKBOX_TEST_PG (a conninfo;
 * tests/check.sh starts a private one).  Without it the PostgreSQL cases
 * fail: they are never skipped in silence.
 *
 * Each PostgreSQL test works in a schema of its own.
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include "db/db.h"
#include "db/pg_schema.h"
#include "testutil.h"

enum { LITE, PG };

enum {
	Q_INSERT,
	Q_INSERT_IGNORE,
	Q_GET,
	Q_COUNT,
	Q_QUOTED,
	Q_NAMES,
	Q_BAD,
	Q_COMMIT,
	Q_ROLLBACK,
	Q_PID,
	Q_SETTING,
	Q_CANCEL_SYNC,
	Q_N
};

static const struct db_text texts[Q_N] = {
	[Q_INSERT] = { "INSERT INTO t (name, n, b) VALUES (?1, ?2, ?3)"
	    " RETURNING id", NULL },
	[Q_INSERT_IGNORE] = { "INSERT INTO t (name, n) VALUES (?1, ?2)"
	    " ON CONFLICT (name) DO NOTHING", NULL },
	[Q_GET] = { "SELECT id, name, n, b FROM t WHERE name = ?1", NULL },
	[Q_COUNT] = { "SELECT count(*) FROM t", NULL },
	/* A ? inside quotes is text, not a parameter. */
	[Q_QUOTED] = { "SELECT 'a?1b', ?1", "SELECT 'a?1b', ?1::text" },
	[Q_NAMES] = { "SELECT name FROM t WHERE n >= ?1 ORDER BY name", NULL },
	[Q_BAD] = { "SELECT nosuchcolumn FROM t", NULL },
	[Q_COMMIT] = { "COMMIT", NULL },
	[Q_ROLLBACK] = { " rollback work", NULL },
	[Q_PID] = { "SELECT 0", "SELECT pg_backend_pid()" },
	[Q_SETTING] = { "SELECT 0", "SELECT current_setting(?1)" },
	/* An operator's cancel of a backend waiting for its standby. */
	[Q_CANCEL_SYNC] = { "SELECT 0", "SELECT CASE WHEN wait_event ="
	    " 'SyncRep' THEN pg_cancel_backend(pid)::int ELSE 0 END"
	    " FROM pg_stat_activity WHERE pid = ?1::int" },
};

static const char *const ddl[] = {
	[LITE] = "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE,"
	    " n INTEGER, b BLOB)",
	[PG] = "CREATE TABLE t (id bigint GENERATED ALWAYS AS IDENTITY"
	    " PRIMARY KEY, name text UNIQUE, n bigint, b bytea)",
};

static char	schema[24];
static char	lite_path[512];	/* of the SQLite test's file */

static const char *
pg_conninfo(void)
{
	const char	*c = getenv("HOOKBOX_TEST_PG");

	ck_assert_msg(c != NULL && c[0] != '\0',
	    "HOOKBOX_TEST_PG is not set: no PostgreSQL to test against");
	return c;
}

/* A connection to backend b, with table t made in a fresh place. */
static struct db *
open_db(int b)
{
	struct db	*db = NULL;
	char		 why[256], sql[256];
	enum db_rc	 rc;

	if (b == LITE) {
		test_path(lite_path, sizeof(lite_path), test_tmpdir(),
		    "t.db");
		rc = db_open_sqlite(lite_path, SQLITE_OPEN_READWRITE |
		    SQLITE_OPEN_CREATE, texts, Q_N, &db);
		ck_assert_int_eq(rc, DB_OK);
	} else {
		rc = db_open_pg(pg_conninfo(), 5000, 0, texts, Q_N, &db, why,
		    sizeof(why));
		ck_assert_msg(rc == DB_OK, "connect: %s", why);
		(void)snprintf(schema, sizeof(schema), "t%ld", (long)getpid());
		(void)snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s"
		    " CASCADE; CREATE SCHEMA %s; SET search_path TO %s",
		    schema, schema, schema);
		ck_assert_int_eq(db_exec(db, sql), DB_OK);
	}
	ck_assert_int_eq(db_kind(db), b == LITE ? DB_SQLITE : DB_POSTGRES);
	ck_assert_int_eq(db_exec(db, ddl[b]), DB_OK);
	return db;
}

static int64_t
insert(struct db *db, const char *name, int64_t n, const void *b, size_t len)
{
	struct db_stmt	*st;
	int64_t		 id;

	ck_assert_ptr_nonnull(st = db_stmt(db, Q_INSERT));
	ck_assert_int_eq(db_bind_text(st, 1, name), DB_OK);
	ck_assert_int_eq(db_bind_int64(st, 2, n), DB_OK);
	if (b != NULL)
		ck_assert_int_eq(db_bind_blob(st, 3, b, len), DB_OK);
	else
		ck_assert_int_eq(db_bind_null(st, 3), DB_OK);
	ck_assert_int_eq(db_step(st), DB_ROW);
	id = db_col_int64(st, 0);
	ck_assert_int_eq(db_step(st), DB_DONE);
	return id;
}

static int64_t
count(struct db *db)
{
	struct db_stmt	*st;
	int64_t		 n;

	ck_assert_ptr_nonnull(st = db_stmt(db, Q_COUNT));
	ck_assert_int_eq(db_step(st), DB_ROW);
	n = db_col_int64(st, 0);
	ck_assert_int_eq(db_step(st), DB_DONE);
	return n;
}

START_TEST(test_roundtrip)
{
	static const unsigned char blob[] = { 0, 1, 0xff, '\\', 'x', 0 };
	const char	*name = "it's \"quoted\" \xc3\xa9";
	struct db	*db = open_db(_i);
	struct db_stmt	*st;
	const void	*b;
	size_t		 len;
	int64_t		 id;

	id = insert(db, name, INT64_C(1) << 40, blob, sizeof(blob));
	ck_assert_int_gt(id, 0);
	ck_assert_int_eq(insert(db, "second", -7, NULL, 0), id + 1);

	ck_assert_ptr_nonnull(st = db_stmt(db, Q_GET));
	ck_assert_int_eq(db_bind_text(st, 1, name), DB_OK);
	ck_assert_int_eq(db_step(st), DB_ROW);
	ck_assert_int_eq(db_col_int64(st, 0), id);
	ck_assert_str_eq(db_col_text(st, 1), name);
	ck_assert_int_eq(db_col_int64(st, 2), INT64_C(1) << 40);
	ck_assert(!db_col_null(st, 3));
	b = db_col_blob(st, 3, &len);
	ck_assert_uint_eq(len, sizeof(blob));
	ck_assert_mem_eq(b, blob, sizeof(blob));
	ck_assert_int_eq(db_step(st), DB_DONE);

	ck_assert_ptr_nonnull(st = db_stmt(db, Q_GET));
	ck_assert_int_eq(db_bind_text(st, 1, "second"), DB_OK);
	ck_assert_int_eq(db_step(st), DB_ROW);
	ck_assert_int_eq(db_col_int64(st, 2), -7);
	ck_assert(db_col_null(st, 3));
	(void)db_col_blob(st, 3, &len);
	ck_assert_uint_eq(len, 0);
	db_reset(st);

	/* Not there: no row. */
	ck_assert_ptr_nonnull(st = db_stmt(db, Q_GET));
	ck_assert_int_eq(db_bind_text(st, 1, "third"), DB_OK);
	ck_assert_int_eq(db_step(st), DB_DONE);
	db_close(db);
}
END_TEST

START_TEST(test_rows_in_order)
{
	struct db	*db = open_db(_i);
	struct db_stmt	*st;
	const char	*want[] = { "b", "c", "d" };
	int		 i;

	insert(db, "c", 3, NULL, 0);
	insert(db, "a", 1, NULL, 0);
	insert(db, "d", 4, NULL, 0);
	insert(db, "b", 2, NULL, 0);
	ck_assert_ptr_nonnull(st = db_stmt(db, Q_NAMES));
	ck_assert_int_eq(db_bind_int64(st, 1, 2), DB_OK);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(db_step(st), DB_ROW);
		ck_assert_str_eq(db_col_text(st, 0), want[i]);
	}
	ck_assert_int_eq(db_step(st), DB_DONE);
	/* The statement is reusable with new parameters. */
	ck_assert_ptr_nonnull(st = db_stmt(db, Q_NAMES));
	ck_assert_int_eq(db_bind_int64(st, 1, 4), DB_OK);
	ck_assert_int_eq(db_step(st), DB_ROW);
	ck_assert_str_eq(db_col_text(st, 0), "d");
	ck_assert_int_eq(db_step(st), DB_DONE);
	db_close(db);
}
END_TEST

START_TEST(test_constraint)
{
	struct db	*db = open_db(_i);
	struct db_stmt	*st;

	insert(db, "x", 1, NULL, 0);
	ck_assert_ptr_nonnull(st = db_stmt(db, Q_INSERT));
	ck_assert_int_eq(db_bind_text(st, 1, "x"), DB_OK);
	ck_assert_int_eq(db_bind_int64(st, 2, 2), DB_OK);
	ck_assert_int_eq(db_step(st), DB_CONSTRAINT);
	ck_assert_int_eq(db_constraint(db), DB_C_UNIQUE);
	ck_assert_ptr_nonnull(strcasestr(db_errmsg(db), "unique"));

	/* ON CONFLICT DO NOTHING: no error, no change. */
	ck_assert_ptr_nonnull(st = db_stmt(db, Q_INSERT_IGNORE));
	ck_assert_int_eq(db_bind_text(st, 1, "x"), DB_OK);
	ck_assert_int_eq(db_bind_int64(st, 2, 3), DB_OK);
	ck_assert_int_eq(db_step(st), DB_DONE);
	ck_assert_int_eq(db_changes(st), 0);
	ck_assert_ptr_nonnull(st = db_stmt(db, Q_INSERT_IGNORE));
	ck_assert_int_eq(db_bind_text(st, 1, "y"), DB_OK);
	ck_assert_int_eq(db_bind_int64(st, 2, 3), DB_OK);
	ck_assert_int_eq(db_step(st), DB_DONE);
	ck_assert_int_eq(db_changes(st), 1);
	ck_assert_int_eq(count(db), 2);
	db_close(db);
}
END_TEST

START_TEST(test_transactions)
{
	struct db	*db = open_db(_i);

	ck_assert(!db_in_tx(db));
	ck_assert_int_eq(db_exec(db, "BEGIN"), DB_OK);
	ck_assert(db_in_tx(db));
	insert(db, "gone", 1, NULL, 0);
	ck_assert_int_eq(db_exec(db, "ROLLBACK"), DB_OK);
	ck_assert(!db_in_tx(db));
	ck_assert_int_eq(count(db), 0);

	/* A savepoint rolls back alone; the transaction goes on. */
	ck_assert_int_eq(db_exec(db, "BEGIN"), DB_OK);
	insert(db, "kept", 1, NULL, 0);
	ck_assert_int_eq(db_exec(db, "SAVEPOINT one"), DB_OK);
	insert(db, "undone", 2, NULL, 0);
	ck_assert_int_eq(db_exec(db, "ROLLBACK TO one"), DB_OK);
	ck_assert_int_eq(db_exec(db, "RELEASE one"), DB_OK);
	ck_assert_int_eq(db_exec(db, "COMMIT"), DB_OK);
	ck_assert_int_eq(count(db), 1);
	db_close(db);
}
END_TEST

/*
 * db_shrink(): a file's page cache given back, never inside a
 * transaction (its pages are the transaction's); a server's, none.
 */
START_TEST(test_shrink)
{
	struct db	*db = open_db(_i);
	char		 name[16];
	int		 i;

	for (i = 0; i < 200; i++) {
		(void)snprintf(name, sizeof(name), "row-%d", i);
		insert(db, name, i, NULL, 0);
	}
	ck_assert_int_eq(count(db), 200);
	ck_assert_int_eq(db_exec(db, "BEGIN"), DB_OK);
	ck_assert_int_eq(count(db), 200);
	ck_assert_uint_eq(db_shrink(db), 0);
	ck_assert_int_eq(db_exec(db, "COMMIT"), DB_OK);
	if (_i == LITE)
		ck_assert_uint_ge(db_shrink(db), 4096);
	ck_assert_uint_eq(db_shrink(db), 0);
	/* And read again from the file. */
	ck_assert_int_eq(count(db), 200);
	db_close(db);
}
END_TEST

START_TEST(test_quoted_and_bad)
{
	struct db	*db = open_db(_i);
	struct db_stmt	*st;

	ck_assert_ptr_nonnull(st = db_stmt(db, Q_QUOTED));
	ck_assert_int_eq(db_bind_text(st, 1, "p"), DB_OK);
	ck_assert_int_eq(db_step(st), DB_ROW);
	ck_assert_str_eq(db_col_text(st, 0), "a?1b");
	ck_assert_str_eq(db_col_text(st, 1), "p");
	db_reset(st);
	/* A parameter past the statement's is refused, not written. */
	ck_assert_ptr_nonnull(st = db_stmt(db, Q_QUOTED));
	ck_assert_int_ne(db_bind_text(st, 2, "p"), DB_OK);

	/* Bad SQL: SQLite says so when preparing, PostgreSQL when run. */
	st = db_stmt(db, Q_BAD);
	if (_i == LITE)
		ck_assert(st == NULL);
	else
		ck_assert_int_eq(db_step(st), DB_ERROR);
	ck_assert_int_eq(db_last(db), DB_ERROR);
	ck_assert_ptr_nonnull(strstr(db_errmsg(db), "nosuchcolumn"));
	ck_assert(db_stmt(db, Q_N) == NULL);
	ck_assert_int_eq(db_exec(db, "SELEC 1"), DB_ERROR);
	db_close(db);
}
END_TEST

/* A write that meets another connection's lock is BUSY, in bounded time. */
START_TEST(test_busy)
{
	struct db	*a = open_db(_i), *b = NULL;
	char		 why[256], sql[96];
	struct db_stmt	*st;

	if (_i == LITE) {
		ck_assert_int_eq(db_open_sqlite(lite_path, SQLITE_OPEN_READWRITE,
		    texts, Q_N, &b), DB_OK);
		ck_assert_int_eq(db_exec(a, "BEGIN IMMEDIATE"), DB_OK);
	} else {
		ck_assert_int_eq(db_open_pg(pg_conninfo(), 5000, 200, texts,
		    Q_N, &b, why, sizeof(why)), DB_OK);
		(void)snprintf(sql, sizeof(sql), "SET search_path TO %s",
		    schema);
		ck_assert_int_eq(db_exec(b, sql), DB_OK);
		ck_assert_int_eq(db_exec(a, "BEGIN; LOCK TABLE t IN ACCESS"
		    " EXCLUSIVE MODE"), DB_OK);
	}
	ck_assert_ptr_nonnull(st = db_stmt(b, Q_INSERT_IGNORE));
	ck_assert_int_eq(db_bind_text(st, 1, "z"), DB_OK);
	ck_assert_int_eq(db_bind_int64(st, 2, 1), DB_OK);
	ck_assert_int_eq(db_step(st), DB_BUSY);
	ck_assert_int_eq(db_exec(a, "ROLLBACK"), DB_OK);
	ck_assert_ptr_nonnull(st = db_stmt(b, Q_INSERT_IGNORE));
	ck_assert_int_eq(db_bind_text(st, 1, "z"), DB_OK);
	ck_assert_int_eq(db_bind_int64(st, 2, 1), DB_OK);
	ck_assert_int_eq(db_step(st), DB_DONE);
	db_close(b);
	db_close(a);
}
END_TEST

static char	kinds_path[1024];	/* open_kinds()'s location */

static struct db *
open_kinds(int b)
{
	struct db	*db = NULL;
	struct db_conf	 conf = { .flags = DB_OPEN_READWRITE | DB_OPEN_CREATE |
	    DB_OPEN_FKEYS, .busy_ms = 5000, .connect_ms = 5000 };
	char		 why[256];

	if (b == LITE)
		test_path(kinds_path, sizeof(kinds_path), test_tmpdir(),
		    "k.db");
	else
		(void)snprintf(kinds_path, sizeof(kinds_path), "%s",
		    test_pg_translated());
	ck_assert_msg(db_open(kinds_path, &conf, texts, Q_N, &db, why,
	    sizeof(why)) == DB_OK, "%s", why);
	ck_assert_msg(db_exec(db, "CREATE TABLE p (id integer PRIMARY KEY);"
	    " CREATE TABLE c (id integer PRIMARY KEY,"
	    " p integer REFERENCES p(id), v integer NOT NULL CHECK (v > 0));"
	    " INSERT INTO p VALUES (1)") == DB_OK, "%s", db_errmsg(db));
	return db;
}

/*
 * Which constraint failed, told by the backend's codes (SQLite's extended
 * result codes, PostgreSQL's SQLSTATE), never by its words: the server
 * here speaks another language, and the kinds are the same.
 */
START_TEST(test_constraint_kinds)
{
	static const struct {
		const char		*sql;
		enum db_constraint	 kind;
	} cases[] = {
		{ "INSERT INTO p VALUES (1)", DB_C_UNIQUE },
		{ "INSERT INTO c VALUES (1, 99, 1)", DB_C_REFERENCE },
		{ "INSERT INTO c VALUES (1, 1, 0)", DB_C_CHECK },
		{ "INSERT INTO c VALUES (1, 1, NULL)", DB_C_CHECK },
		{ "INSERT INTO c VALUES (1, 1, 1); DELETE FROM p",
		    DB_C_REFERENCE },
	};
	struct db	*db = open_kinds(_i);
	size_t		 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(db_exec(db, cases[i].sql), DB_CONSTRAINT);
		ck_assert_msg(db_constraint(db) == cases[i].kind, "%s: %d",
		    cases[i].sql, (int)db_constraint(db));
		/* The words are the server's own, in its language. */
		if (_i == PG)
			ck_assert_msg(strstr(db_errmsg(db), "violates") ==
			    NULL && strstr(db_errmsg(db), "duplicate") ==
			    NULL, "in English: %s", db_errmsg(db));
	}
	/* Another failure is no constraint's. */
	ck_assert_int_eq(db_exec(db, "SELECT nosuchcolumn FROM p"), DB_ERROR);
	ck_assert_int_eq(db_constraint(db), DB_C_NONE);
	db_close(db);
	if (_i == PG)
		test_pg_translated_drop();
}
END_TEST

/*
 * db_step_alone(): a statement that fails inside a transaction is undone
 * alone, and the transaction goes on to commit what came before and
 * after it, on both backends.
 */
START_TEST(test_step_alone)
{
	static const struct db_text	text[] = {
		{ "INSERT INTO c VALUES (?1, 1, ?2)", NULL },
		{ "SELECT count(*) FROM c", NULL },
	};
	struct db	*db = open_kinds(_i), *db2 = NULL;
	struct db_stmt	*st;
	struct db_conf	 conf = { .flags = DB_OPEN_READWRITE |
	    DB_OPEN_FKEYS, .busy_ms = 5000, .connect_ms = 5000 };
	char		 why[256];

	ck_assert_msg(db_open(kinds_path, &conf, text, 2, &db2, why,
	    sizeof(why)) == DB_OK, "%s", why);
	db_close(db);
	ck_assert_int_eq(db_begin(db2, DB_BEGIN_WRITE, 0), DB_OK);
	ck_assert_ptr_nonnull(st = db_stmt(db2, 0));
	ck_assert_int_eq(db_bind_int64(st, 1, 1), DB_OK);
	ck_assert_int_eq(db_bind_int64(st, 2, 1), DB_OK);
	ck_assert_int_eq(db_step_alone(st), DB_DONE);
	ck_assert_ptr_nonnull(st = db_stmt(db2, 0));
	ck_assert_int_eq(db_bind_int64(st, 1, 2), DB_OK);
	ck_assert_int_eq(db_bind_int64(st, 2, -1), DB_OK);
	ck_assert_int_eq(db_step_alone(st), DB_CONSTRAINT);
	ck_assert_int_eq(db_constraint(db2), DB_C_CHECK);
	ck_assert(db_in_tx(db2));
	ck_assert_ptr_nonnull(st = db_stmt(db2, 0));
	ck_assert_int_eq(db_bind_int64(st, 1, 3), DB_OK);
	ck_assert_int_eq(db_bind_int64(st, 2, 3), DB_OK);
	ck_assert_int_eq(db_step_alone(st), DB_DONE);
	ck_assert_int_eq(db_exec(db2, "COMMIT"), DB_OK);
	ck_assert_ptr_nonnull(st = db_stmt(db2, 1));
	ck_assert_int_eq(db_step(st), DB_ROW);
	ck_assert_int_eq(db_col_int64(st, 0), 2);
	db_reset(st);
	db_close(db2);
	if (_i == PG)
		test_pg_translated_drop();
}
END_TEST

/*
 * db_begin(): a writer's transaction in the backend's words.  A file's
 * writer holds its one write lock, so a second writer waits; a server's
 * writers work at once, and a key serialises those that take it.
 */
START_TEST(test_begin)
{
	struct db	*a = open_db(_i), *b = NULL;
	char		 why[256], sql[96];

	if (_i == LITE) {
		ck_assert_int_eq(db_open_sqlite(lite_path,
		    SQLITE_OPEN_READWRITE, texts, Q_N, &b), DB_OK);
		ck_assert_uint_eq(db_caps(a), DB_CAP_FILE);
		ck_assert_uint_eq(db_location_caps(lite_path), DB_CAP_FILE);
		ck_assert_str_eq(db_location_name(lite_path), "sqlite");
	} else {
		ck_assert_int_eq(db_open_pg(pg_conninfo(), 5000, 0, texts,
		    Q_N, &b, why, sizeof(why)), DB_OK);
		(void)snprintf(sql, sizeof(sql), "SET search_path TO %s",
		    schema);
		ck_assert_int_eq(db_exec(b, sql), DB_OK);
		ck_assert_uint_eq(db_caps(a), DB_CAP_SERVER |
		    DB_CAP_ROW_LOCKS);
		ck_assert_uint_eq(db_location_caps(pg_conninfo()),
		    DB_CAP_SERVER | DB_CAP_ROW_LOCKS);
		ck_assert_str_eq(db_location_name(pg_conninfo()),
		    "postgresql");
	}
	ck_assert_int_eq(db_begin(a, DB_BEGIN_WRITE, 42), DB_OK);
	/* A writer: the same key waits (budget 0: busy at once). */
	ck_assert_int_eq(db_begin(b, DB_BEGIN_WRITE, 42), DB_BUSY);
	if (db_in_tx(b))
		ck_assert_int_eq(db_exec(b, "ROLLBACK"), DB_OK);
	if (_i == PG) {
		/* ... and another key does not. */
		ck_assert_int_eq(db_begin(b, DB_BEGIN_WRITE, 43), DB_OK);
		ck_assert_int_eq(db_exec(b, "ROLLBACK"), DB_OK);
	}
	ck_assert_int_eq(db_exec(a, "COMMIT"), DB_OK);
	ck_assert_int_eq(db_begin(b, DB_BEGIN_WRITE, 42), DB_OK);
	/* What one backend needs not, it skips: "" runs nothing. */
	ck_assert_int_eq(db_exec_text(b, &(const struct db_text){ "",
	    "SELECT 1" }), DB_OK);
	ck_assert_int_eq(db_exec_text(b, &(const struct db_text){
	    "SELECT nosuchcolumn FROM t", "" }), _i == LITE ? DB_ERROR :
	    DB_OK);
	ck_assert_int_eq(db_exec(b, "ROLLBACK"), DB_OK);
	db_close(b);
	db_close(a);
}
END_TEST

/* A connection the server drops is GONE once, then opened again. */
START_TEST(test_pg_reconnect)
{
	struct db	*a = open_db(PG), *b = open_db(PG);
	struct db_stmt	*st;
	char		 sql[160];

	insert(a, "before", 1, NULL, 0);
	(void)snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(pid)"
	    " FROM pg_stat_activity WHERE application_name = 'hookbox'"
	    " AND pid <> pg_backend_pid()");
	ck_assert_int_eq(db_exec(b, sql), DB_OK);
	ck_assert_ptr_nonnull(st = db_stmt(a, Q_COUNT));
	ck_assert_int_eq(db_step(st), DB_GONE);
	/* The next use connects again, and prepares its statements anew. */
	(void)snprintf(sql, sizeof(sql), "SET search_path TO %s", schema);
	ck_assert_int_eq(db_exec(a, sql), DB_OK);
	ck_assert_int_eq(count(a), 1);
	insert(a, "after", 2, NULL, 0);
	ck_assert_int_eq(count(a), 2);
	db_close(b);
	db_close(a);
}
END_TEST

static enum db_rc
run(struct db *db, size_t i)
{
	struct db_stmt	*st;

	ck_assert_ptr_nonnull(st = db_stmt(db, i));
	return db_step_done(st);
}

/* Sets the search path of a connection opened again. */
static void
use_schema(struct db *db)
{
	char	sql[64];

	(void)snprintf(sql, sizeof(sql), "SET search_path TO %s", schema);
	ck_assert_int_eq(db_exec(db, sql), DB_OK);
}

/*
 * A COMMIT of a transaction an earlier error aborted fails (the server
 * answers it with success, tagged ROLLBACK), with the earlier error's
 * class when it is known; so does a RELEASE.  Nothing was written.
 */
START_TEST(test_pg_commit_aborted)
{
	struct db	*db = open_db(PG);

	/* Prepared COMMIT; the earlier error is plain bad SQL. */
	ck_assert_int_eq(db_exec(db, "BEGIN"), DB_OK);
	insert(db, "a", 1, NULL, 0);
	ck_assert_int_eq(run(db, Q_BAD), DB_ERROR);
	ck_assert_int_eq(run(db, Q_COMMIT), DB_ERROR);
	ck_assert_int_eq(db_in_tx(db), 0);
	ck_assert_int_eq(count(db), 0);

	/* COMMIT as text; the earlier error is a timeout: BUSY. */
	ck_assert_int_eq(db_exec(db, "BEGIN"), DB_OK);
	insert(db, "b", 1, NULL, 0);
	ck_assert_int_eq(db_exec(db, "SET LOCAL statement_timeout = 10;"
	    " SELECT pg_sleep(1)"), DB_BUSY);
	ck_assert_int_eq(db_exec(db, " commit ;"), DB_BUSY);
	ck_assert_int_eq(db_in_tx(db), 0);
	ck_assert_int_eq(count(db), 0);

	/* A RELEASE in the aborted transaction, then its COMMIT. */
	ck_assert_int_eq(db_exec(db, "BEGIN; SAVEPOINT s"), DB_OK);
	insert(db, "c", 1, NULL, 0);
	ck_assert_int_eq(db_exec(db, "SET LOCAL statement_timeout = 10;"
	    " SELECT pg_sleep(1)"), DB_BUSY);
	ck_assert_int_eq(db_exec(db, "RELEASE SAVEPOINT s"), DB_BUSY);
	ck_assert_int_eq(db_exec(db, "END"), DB_BUSY);
	ck_assert_int_eq(count(db), 0);

	/* ROLLBACK TO a savepoint is not a failure; the COMMIT commits. */
	ck_assert_int_eq(db_exec(db, "BEGIN; SAVEPOINT s"), DB_OK);
	insert(db, "d", 1, NULL, 0);
	ck_assert_int_eq(run(db, Q_BAD), DB_ERROR);
	ck_assert_int_eq(db_exec(db, "ROLLBACK TO SAVEPOINT s"), DB_OK);
	insert(db, "e", 1, NULL, 0);
	ck_assert_int_eq(run(db, Q_COMMIT), DB_DONE);
	ck_assert_int_eq(count(db), 1);
	db_close(db);
}
END_TEST

/* Terminates db's server process, from another connection. */
static void
cut(struct db *db, struct db *other)
{
	struct db_stmt	*st;
	char		 sql[96];

	ck_assert_ptr_nonnull(st = db_stmt(db, Q_PID));
	ck_assert_int_eq(db_step(st), DB_ROW);
	(void)snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(%lld)",
	    (long long)db_col_int64(st, 0));
	ck_assert_int_eq(db_step(st), DB_DONE);
	ck_assert_int_eq(db_exec(other, sql), DB_OK);
	usleep(100 * 1000);
}

/*
 * A connection lost inside a transaction: every call is GONE, none runs
 * in autocommit on a connection opened again, until the ROLLBACK (text
 * or prepared), which succeeds without a server; then the next call
 * connects again.
 */
START_TEST(test_pg_lost_in_tx)
{
	struct db	*a = open_db(PG), *b = open_db(PG);
	struct db_stmt	*st;
	int		 k;

	for (k = 0; k < 2; k++) {
		ck_assert_int_eq(db_exec(a, "BEGIN"), DB_OK);
		insert(a, "x", 1, NULL, 0);
		cut(a, b);
		ck_assert_ptr_nonnull(st = db_stmt(a, Q_INSERT_IGNORE));
		ck_assert_int_eq(db_bind_text(st, 1, "y"), DB_OK);
		ck_assert_int_eq(db_bind_int64(st, 2, 1), DB_OK);
		ck_assert_int_eq(db_step(st), DB_GONE);
		ck_assert_int_eq(db_in_tx(a), 1);
		ck_assert_ptr_nonnull(st = db_stmt(a, Q_INSERT_IGNORE));
		ck_assert_int_eq(db_bind_text(st, 1, "z"), DB_OK);
		ck_assert_int_eq(db_bind_int64(st, 2, 1), DB_OK);
		ck_assert_int_eq(db_step(st), DB_GONE);
		ck_assert_int_eq(db_exec(a, "SET search_path TO public"),
		    DB_GONE);
		ck_assert_int_eq(db_exec(a, "ROLLBACK TO SAVEPOINT s"),
		    DB_GONE);
		ck_assert_int_eq(run(a, Q_COMMIT), DB_GONE);
		ck_assert_int_eq(db_exec(a, "COMMIT"), DB_GONE);
		ck_assert_int_eq(db_in_tx(a), 1);
		if (k == 0)
			ck_assert_int_eq(db_exec(a, "rollback;"), DB_OK);
		else
			ck_assert_int_eq(run(a, Q_ROLLBACK), DB_DONE);
		ck_assert_int_eq(db_in_tx(a), 0);
		use_schema(a);
		ck_assert_int_eq(count(a), 0);
		ck_assert_int_eq(count(b), 0);
	}
	db_close(b);
	db_close(a);
}
END_TEST

/* The session's setting name, as the server shows it. */
static void
setting_is(struct db *db, const char *name, const char *want)
{
	struct db_stmt	*st;

	ck_assert_ptr_nonnull(st = db_stmt(db, Q_SETTING));
	ck_assert_int_eq(db_bind_text(st, 1, name), DB_OK);
	ck_assert_int_eq(db_step(st), DB_ROW);
	ck_assert_str_eq(db_col_text(st, 0), want);
	ck_assert_int_eq(db_step(st), DB_DONE);
}

/*
 * The busy budget bounds lock waits (advisory locks too) and statements;
 * a budget of 0 fails at once on a lock, with a statement backstop; JIT
 * is off; the conninfo's own options are kept, and win; all of it holds
 * on a connection opened again.
 */
START_TEST(test_pg_budget)
{
	struct db	*a = open_db(PG), *b = NULL;
	struct db_stmt	*st;
	char		 why[256], info[512];
	struct timespec	 t0, t1;
	long		 ms;

	ck_assert_int_eq(db_open_pg(pg_conninfo(), 5000, 0, texts, Q_N, &b,
	    why, sizeof(why)), DB_OK);
	setting_is(b, "lock_timeout", "1ms");
	setting_is(b, "statement_timeout", "5s");
	setting_is(b, "jit", "off");
	ck_assert_int_eq(db_exec(a, "SELECT pg_advisory_lock(4242)"), DB_OK);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(db_exec(b, "SELECT pg_advisory_lock(4242)"),
	    DB_BUSY);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 +
	    (t1.tv_nsec - t0.tv_nsec) / 1000000;
	/* The lock's 1 ms, not the statement's 5 s (with room for a load). */
	ck_assert_int_lt(ms, 4000);
	db_close(b);

	ck_assert_int_eq(db_open_pg(pg_conninfo(), 5000, 300, texts, Q_N, &b,
	    why, sizeof(why)), DB_OK);
	setting_is(b, "lock_timeout", "300ms");
	setting_is(b, "statement_timeout", "300ms");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(db_exec(b, "SELECT pg_advisory_lock(4242)"),
	    DB_BUSY);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 +
	    (t1.tv_nsec - t0.tv_nsec) / 1000000;
	ck_assert_int_ge(ms, 250);
	ck_assert_int_lt(ms, 30000);
	db_close(b);
	ck_assert_int_eq(db_exec(a, "SELECT pg_advisory_unlock(4242)"),
	    DB_OK);

	(void)snprintf(info, sizeof(info), "%s options='-c search_path=%s"
	    " -c statement_timeout=7000 -c jit=on'", pg_conninfo(), schema);
	ck_assert_int_eq(db_open_pg(info, 5000, 0, texts, Q_N, &b, why,
	    sizeof(why)), DB_OK);
	setting_is(b, "statement_timeout", "7s");
	setting_is(b, "jit", "on");
	setting_is(b, "search_path", schema);
	ck_assert_int_eq(count(b), 0);
	cut(b, a);
	ck_assert_ptr_nonnull(st = db_stmt(b, Q_COUNT));
	ck_assert_int_eq(db_step(st), DB_GONE);
	setting_is(b, "lock_timeout", "1ms");
	setting_is(b, "statement_timeout", "7s");
	setting_is(b, "search_path", schema);
	db_close(b);
	db_close(a);
}
END_TEST

/* Milliseconds since t0 (CLOCK_MONOTONIC). */
static long
since(const struct timespec *t0)
{
	struct timespec	t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 +
	    (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

/* A connection to the test's schema with a busy budget of budget_ms. */
static struct db *
open_budget(int budget_ms)
{
	struct db	*db = NULL;
	char		 why[256];

	ck_assert_msg(db_open_pg(pg_conninfo(), 5000, budget_ms, texts, Q_N,
	    &db, why, sizeof(why)) == DB_OK, "connect: %s", why);
	use_schema(db);
	return db;
}

/* The server process of db's connection. */
static pid_t
backend_of(struct db *db)
{
	struct db_stmt	*st;
	pid_t		 pid;

	ck_assert_ptr_nonnull(st = db_stmt(db, Q_PID));
	ck_assert_int_eq(db_step(st), DB_ROW);
	pid = (pid_t)db_col_int64(st, 0);
	ck_assert_int_eq(db_step(st), DB_DONE);
	ck_assert_int_gt(pid, 0);
	return pid;
}

/*
 * A COMMIT waits for a synchronous standby that is not there: the
 * server's statement_timeout does not count that wait, so the client
 * does.  Past the busy budget (1 s here) it cancels the COMMIT; the
 * server answers success with a WARNING (committed here, not on the
 * standby), which is no acknowledgement: BUSY, with the transaction
 * over and the connection kept.  The row did commit on the primary: a
 * retry finds it.  Text and prepared COMMITs alike.
 */
START_TEST(test_pg_commit_syncrep)
{
	struct db	*a = open_db(PG), *b = open_budget(1000);
	struct timespec	 t0;
	long		 ms;

	test_pg_standby("hookbox_missing");
	ck_assert_int_eq(db_exec(b, "BEGIN"), DB_OK);
	insert(b, "s1", 1, NULL, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(db_exec(b, "COMMIT"), DB_BUSY);
	ms = since(&t0);
	/* It waited its budget, and not much more: never for ever. */
	ck_assert_int_ge(ms, 950);
	ck_assert_int_lt(ms, 30000);
	ck_assert_int_eq(db_last(b), DB_BUSY);
	ck_assert_ptr_nonnull(strstr(db_errmsg(b), "standby"));
	ck_assert_int_eq(db_in_tx(b), 0);

	ck_assert_int_eq(db_exec(b, "BEGIN"), DB_OK);
	insert(b, "s2", 2, NULL, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(run(b, Q_COMMIT), DB_BUSY);
	ck_assert_int_lt(since(&t0), 30000);
	ck_assert_int_eq(db_in_tx(b), 0);

	/* The same connection goes on; a read commits nothing to wait for. */
	ck_assert_int_eq(count(b), 2);
	test_pg_standby(NULL);
	ck_assert_int_eq(count(a), 2);
	ck_assert_int_eq(db_exec(b, "BEGIN"), DB_OK);
	insert(b, "s3", 3, NULL, 0);
	ck_assert_int_eq(db_exec(b, "COMMIT"), DB_OK);
	ck_assert_int_eq(count(a), 3);
	db_close(b);
	db_close(a);
}
END_TEST

/*
 * A write outside a transaction commits by itself, and its commit waits
 * for the standbys just the same: bounded by the client, BUSY on the
 * server's warning, prepared or text; so is a text of several statements
 * that commits.  Each did commit on the primary.
 */
START_TEST(test_pg_autocommit_syncrep)
{
	struct db	*a = open_db(PG), *b = open_budget(1000);
	struct db_stmt	*st;
	struct timespec	 t0;

	test_pg_standby("hookbox_missing");
	ck_assert_ptr_nonnull(st = db_stmt(b, Q_INSERT_IGNORE));
	ck_assert_int_eq(db_bind_text(st, 1, "u1"), DB_OK);
	ck_assert_int_eq(db_bind_int64(st, 2, 1), DB_OK);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(db_step(st), DB_BUSY);
	ck_assert_int_lt(since(&t0), 30000);
	ck_assert_ptr_nonnull(strstr(db_errmsg(b), "standby"));
	ck_assert_int_eq(db_in_tx(b), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(db_exec(b, "INSERT INTO t (name, n) VALUES ('u2', 2)"),
	    DB_BUSY);
	ck_assert_int_lt(since(&t0), 30000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(db_exec(b, "BEGIN; INSERT INTO t (name, n) VALUES"
	    " ('u3', 3); COMMIT"), DB_BUSY);
	ck_assert_int_lt(since(&t0), 30000);
	ck_assert_int_eq(db_in_tx(b), 0);
	test_pg_standby(NULL);
	ck_assert_int_eq(count(a), 3);
	ck_assert_int_eq(db_exec(b, "INSERT INTO t (name, n) VALUES ('u4', 4)"),
	    DB_OK);
	ck_assert_int_eq(count(a), 4);
	db_close(b);
	db_close(a);
}
END_TEST

/*
 * The same wait cancelled by someone else (an operator's
 * pg_cancel_backend()), long before the client's own bound (60 s): the
 * server's WARNING alone fails the COMMIT.
 */
START_TEST(test_pg_commit_cancelled)
{
	struct db	*a = open_db(PG), *b = open_budget(60000), *c = NULL;
	struct db_stmt	*st;
	struct timespec	 t0;
	pid_t		 pid, child;
	int		 status, i, done = 0;
	char		 why[256];

	pid = backend_of(b);
	test_pg_standby("hookbox_missing");
	ck_assert_int_eq(db_exec(b, "BEGIN"), DB_OK);
	insert(b, "c1", 1, NULL, 0);
	ck_assert_int_ne(child = fork(), -1);
	if (child == 0) {
		/* A connection of its own; the parent's are not touched. */
		if (db_open_pg(pg_conninfo(), 5000, 0, texts, Q_N, &c, why,
		    sizeof(why)) != DB_OK)
			_exit(2);
		for (i = 0; i < 400 && !done; i++) {
			if ((st = db_stmt(c, Q_CANCEL_SYNC)) == NULL ||
			    db_bind_int64(st, 1, pid) != DB_OK)
				_exit(3);
			if (db_step(st) == DB_ROW)
				done = db_col_int64(st, 0) == 1;
			db_reset(st);
			if (!done)
				usleep(50 * 1000);
		}
		_exit(done ? 0 : 1);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(db_exec(b, "COMMIT"), DB_BUSY);
	ck_assert_int_lt(since(&t0), 30000);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(db_in_tx(b), 0);
	test_pg_standby(NULL);
	ck_assert_int_eq(count(a), 1);
	db_close(b);
	db_close(a);
}
END_TEST

/*
 * A COMMIT that even its cancel does not end (its server process is
 * stopped): after the grace the connection is dropped, and lost inside
 * the transaction, as db/db.h says of one cut: GONE until the caller's
 * ROLLBACK; then the next call connects again.  A process of its own,
 * in a session of its own, sends SIGCONT after 20 s should this test
 * die before it does: a stopped server process would stop the server.
 */
START_TEST(test_pg_commit_unanswered)
{
	struct db	*a = open_db(PG), *b = open_budget(1000);
	struct timespec	 t0;
	pid_t		 pid, guard;
	enum db_rc	 rc;
	long		 ms;

	pid = backend_of(b);
	ck_assert_int_eq(db_exec(b, "BEGIN"), DB_OK);
	insert(b, "u1", 1, NULL, 0);
	ck_assert_int_ne(guard = fork(), -1);
	if (guard == 0) {
		(void)setsid();
		sleep(20);
		(void)kill(pid, SIGCONT);
		_exit(0);
	}
	ck_assert_int_eq(kill(pid, SIGSTOP), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = db_exec(b, "COMMIT");
	ms = since(&t0);
	(void)kill(pid, SIGCONT);
	(void)kill(guard, SIGKILL);
	(void)waitpid(guard, NULL, 0);
	ck_assert_int_eq(rc, DB_GONE);
	ck_assert_int_ge(ms, 950 + DB_PG_CANCEL_MS);
	ck_assert_int_lt(ms, 30000);
	ck_assert_int_eq(db_in_tx(b), 1);
	ck_assert_int_eq(run(b, Q_COUNT), DB_GONE);
	ck_assert_int_eq(db_exec(b, "ROLLBACK"), DB_OK);
	ck_assert_int_eq(db_in_tx(b), 0);
	use_schema(b);
	ck_assert_int_ge(count(b), 0);
	db_close(b);
	db_close(a);
}
END_TEST

/*
 * A conninfo libpq cannot parse is a configuration error, reported
 * without libpq's words, which quote the token (here, the password).
 */
START_TEST(test_pg_malformed)
{
	struct db	*db = (struct db *)1;
	char		 why[256];

	ck_assert_int_eq(db_open_pg("postgresql://u:S3cr%ZZet@/db?host=/tmp",
	    2000, 0, texts, Q_N, &db, why, sizeof(why)), DB_ERROR);
	ck_assert_ptr_null(db);
	ck_assert_str_eq(why, "malformed PostgreSQL conninfo");
	ck_assert_int_eq(db_open_pg("host=/tmp password='S3cret", 2000, 0,
	    texts, Q_N, &db, why, sizeof(why)), DB_ERROR);
	ck_assert_ptr_null(strstr(why, "S3cr"));
	ck_assert_int_eq(db_open_pg("host=/tmp nosuchkey=S3cret", 2000, 0,
	    texts, Q_N, &db, why, sizeof(why)), DB_ERROR);
	ck_assert_ptr_null(strstr(why, "S3cr"));
}
END_TEST

/*
 * libpq's PQclear() and PQfreemem(), seen on their way: a secret (a
 * value, or the blob at watch) still in memory being freed is counted.
 * db/pg.c finds libpq's functions with dlsym(), which the link wraps
 * (see the Makefile): it is handed these two instead.
 */
static const char	*secret;
static const void	*watch;
static size_t		 watch_len;
static int		 left_behind, blob_freed;
static __typeof__(PQclear)	*real_clear;
static __typeof__(PQfreemem)	*real_freemem;

void	*__real_dlsym(void *, const char *);
void	*__wrap_dlsym(void *, const char *);

static void
watch_clear(PGresult *res)
{
	int	 r, c;

	if (res != NULL && secret != NULL)
		for (r = 0; r < PQntuples(res); r++)
			for (c = 0; c < PQnfields(res); c++)
				if (memmem(PQgetvalue(res, r, c),
				    (size_t)PQgetlength(res, r, c), secret,
				    strlen(secret)) != NULL)
					left_behind++;
	real_clear(res);
}

static void
watch_freemem(void *p)
{
	const char	*b = p;
	size_t		 i;

	if (p != NULL && p == watch) {
		blob_freed++;
		for (i = 0; i < watch_len; i++)
			if (b[i] != 0) {
				left_behind++;
				break;
			}
		watch = NULL;
	}
	real_freemem(p);
}

void *
__wrap_dlsym(void *lib, const char *name)
{
	void	*p = __real_dlsym(lib, name);

	if (p != NULL && strcmp(name, "PQclear") == 0) {
		memcpy(&real_clear, &p, sizeof(p));
		return (void *)watch_clear;
	}
	if (p != NULL && strcmp(name, "PQfreemem") == 0) {
		memcpy(&real_freemem, &p, sizeof(p));
		return (void *)watch_freemem;
	}
	return p;
}

/* A secret read from PostgreSQL is wiped before its memory is freed. */
START_TEST(test_pg_wiped)
{
	struct db	*db = open_db(PG);
	struct db_stmt	*st;
	const void	*b;
	size_t		 len;

	insert(db, "S3cretName", 1, "S3cretBlob", 10);
	secret = "S3cretName";
	left_behind = blob_freed = 0;
	ck_assert_ptr_nonnull(st = db_stmt(db, Q_GET));
	ck_assert_int_eq(db_bind_text(st, 1, "S3cretName"), DB_OK);
	ck_assert_int_eq(db_step(st), DB_ROW);
	ck_assert_str_eq(db_col_text(st, 1), "S3cretName");
	ck_assert_ptr_nonnull(b = db_col_blob(st, 3, &len));
	ck_assert_int_eq(len, 10);
	ck_assert_mem_eq(b, "S3cretBlob", 10);
	watch = b;
	watch_len = len;
	ck_assert_int_eq(db_step(st), DB_DONE);
	ck_assert_int_eq(blob_freed, 1);
	ck_assert_int_eq(left_behind, 0);
	/* A statement reset with its row unread. */
	ck_assert_ptr_nonnull(st = db_stmt(db, Q_GET));
	ck_assert_int_eq(db_bind_text(st, 1, "S3cretName"), DB_OK);
	ck_assert_int_eq(db_step(st), DB_ROW);
	ck_assert_ptr_nonnull(b = db_col_blob(st, 3, &len));
	watch = b;
	watch_len = len;
	db_reset(st);
	ck_assert_int_eq(blob_freed, 2);
	ck_assert_int_eq(left_behind, 0);
	secret = NULL;
	db_close(db);
}
END_TEST

/* A read-only transaction and a role without the grant: their classes. */
START_TEST(test_pg_readonly_denied)
{
	struct db	*db = open_db(PG), *ro = NULL;
	struct db_stmt	*st;
	char		 sql[512], info[768], why[256], role[24];

	ck_assert_int_eq(db_exec(db, "BEGIN READ ONLY"), DB_OK);
	ck_assert_ptr_nonnull(st = db_stmt(db, Q_INSERT_IGNORE));
	ck_assert_int_eq(db_bind_text(st, 1, "w"), DB_OK);
	ck_assert_int_eq(db_bind_int64(st, 2, 1), DB_OK);
	ck_assert_int_eq(db_step(st), DB_READONLY);
	ck_assert_int_eq(db_exec(db, "ROLLBACK"), DB_OK);

	(void)snprintf(role, sizeof(role), "r%ld", (long)getpid());
	(void)snprintf(sql, sizeof(sql), "DROP ROLE IF EXISTS %s;"
	    " CREATE ROLE %s LOGIN; GRANT USAGE ON SCHEMA %s TO %s;"
	    " GRANT SELECT ON t TO %s", role, role, schema, role, role);
	ck_assert_int_eq(db_exec(db, sql), DB_OK);
	(void)snprintf(info, sizeof(info), "%s user=%s options='-c"
	    " search_path=%s'", pg_conninfo(), role, schema);
	ck_assert_int_eq(db_open_pg(info, 5000, 0, texts, Q_N, &ro, why,
	    sizeof(why)), DB_OK);
	ck_assert_int_eq(count(ro), 0);
	ck_assert_ptr_nonnull(st = db_stmt(ro, Q_INSERT_IGNORE));
	ck_assert_int_eq(db_bind_text(st, 1, "w"), DB_OK);
	ck_assert_int_eq(db_bind_int64(st, 2, 1), DB_OK);
	ck_assert_int_eq(db_step(st), DB_DENIED);
	ck_assert_ptr_nonnull(strstr(db_errmsg(ro), "permission denied"));
	db_close(ro);
	(void)snprintf(sql, sizeof(sql), "DROP OWNED BY %s; DROP ROLE %s",
	    role, role);
	ck_assert_int_eq(db_exec(db, sql), DB_OK);
	db_close(db);
}
END_TEST

/*
 * The two schemas, and a serving role's grants: it reads the
 * configuration and cannot change it; it writes the state's rows and
 * cannot change its shape.
 */
START_TEST(test_pg_schema_roles)
{
	struct db	*db = NULL, *sv = NULL;
	char		 why[256], info[512], grants[1024];

	ck_assert_int_eq(db_open_pg(pg_conninfo(), 5000, 0, texts, Q_N, &db,
	    why, sizeof(why)), DB_OK);
	ck_assert_int_eq(db_exec(db, "DROP SCHEMA IF EXISTS hookbox_config,"
	    " hookbox_state CASCADE; DROP ROLE IF EXISTS hb_serve"), DB_OK);
	ck_assert_int_eq(db_exec(db, pg_schema_config), DB_OK);
	ck_assert_int_eq(db_exec(db, pg_schema_state), DB_OK);
	/* A second create is refused whole: nothing is half made. */
	ck_assert_int_ne(db_exec(db, pg_schema_state), DB_OK);
	ck_assert_int_eq(db_exec(db, "ROLLBACK"), DB_OK);
	ck_assert_int_eq(db_exec(db, "CREATE ROLE hb_serve LOGIN"), DB_OK);
	ck_assert_int_eq(pg_schema_grants("hb_serve", grants, sizeof(grants)),
	    0);
	ck_assert_int_eq(db_exec(db, grants), DB_OK);
	ck_assert_int_eq(db_exec(db, "INSERT INTO hookbox_config.tenants"
	    " (id, created_at) VALUES ('acme', 1)"), DB_OK);

	(void)snprintf(info, sizeof(info), "%s user=hb_serve", pg_conninfo());
	ck_assert_int_eq(db_open_pg(info, 5000, 0, texts, Q_N, &sv, why,
	    sizeof(why)), DB_OK);
	/*
	 * The grants set nothing on the role (that needs CREATEROLE): the
	 * connection sets its search_path, as every one of hookbox's does.
	 */
	ck_assert_int_eq(db_exec(sv, "SELECT 1 FROM tenants"), DB_ERROR);
	ck_assert_int_eq(db_session(sv, "SET search_path = hookbox_state,"
	    " hookbox_config"), DB_OK);
	ck_assert_int_eq(db_exec(sv, "SELECT id FROM tenants"), DB_OK);
	ck_assert_int_eq(db_exec(sv, "INSERT INTO tenants (id, created_at)"
	    " VALUES ('evil', 1)"), DB_DENIED);
	ck_assert_int_eq(db_exec(sv, "UPDATE tenants SET active = 0"),
	    DB_DENIED);
	ck_assert_int_eq(db_exec(sv, "DELETE FROM endpoints"), DB_DENIED);
	ck_assert_int_eq(db_exec(sv, "INSERT INTO receipts (received_at,"
	    " tenant, source, result) VALUES (1, 'acme', 'callback',"
	    " 'accepted')"), DB_OK);
	ck_assert_int_eq(db_exec(sv, "INSERT INTO accepted VALUES ('a:b:c',"
	    " 'acme', 'b', 'c', 'j', 1); INSERT INTO outbox (action_id, tenant,"
	    " destination, payload, next_at, created_at, updated_at) VALUES"
	    " ('a:b:c', 'acme', 'd', '{}', 1, 1, 1); UPDATE outbox SET state ="
	    " 'leased'"), DB_OK);
	/* Exactly one action: the second insert meets the constraint. */
	ck_assert_int_eq(db_exec(sv, "INSERT INTO accepted VALUES ('a:b:c',"
	    " 'acme', 'b', 'c', 'j2', 2)"), DB_CONSTRAINT);
	ck_assert_int_eq(db_exec(sv, "CREATE TABLE hookbox_state.x (a int)"),
	    DB_DENIED);
	ck_assert_int_eq(db_exec(sv, "DROP TABLE outbox"), DB_DENIED);
	db_close(sv);

	ck_assert_int_eq(pg_schema_grants("Bad-Role", grants, sizeof(grants)),
	    -1);
	ck_assert_int_eq(pg_schema_grants("x; DROP", grants, sizeof(grants)),
	    -1);
	ck_assert_int_eq(pg_schema_grants("ok", grants, 10), -1);
	ck_assert_int_eq(db_exec(db, "DROP SCHEMA hookbox_config,"
	    " hookbox_state CASCADE; DROP OWNED BY hb_serve;"
	    " DROP ROLE hb_serve"), DB_OK);
	db_close(db);
}
END_TEST

START_TEST(test_db_location)
{
	ck_assert(db_is_postgres("postgresql://u@h/db"));
	ck_assert(db_is_postgres("postgres://h/db"));
	ck_assert(db_is_postgres("host=/run/pg dbname=hookbox"));
	ck_assert(!db_is_postgres("/var/lib/hookbox"));
	ck_assert(!db_is_postgres("./data"));
	ck_assert(!db_is_postgres("data"));
	ck_assert(db_is_postgres("  dbname = hookbox"));
	ck_assert(db_is_postgres("service=hookbox"));
	ck_assert(db_is_postgres("sslmode=require host=db"));
	ck_assert(!db_is_postgres("run=1"));
	ck_assert(!db_is_postgres("data/run=1"));
	ck_assert(!db_is_postgres("hosts=1"));
	ck_assert(!db_is_postgres("./host=db"));
	ck_assert(!db_is_postgres("/srv/host=db"));
	ck_assert_str_eq(db_rc_name(DB_BUSY), "busy");
	ck_assert_str_eq(db_rc_name((enum db_rc)99), "error");
}
END_TEST

/*
 * A conninfo for a log, rebuilt from libpq's own reading of it: every
 * form a URI can take, key=value with quotes, and none of a password's
 * text (nor its percent-encoded form) survives; what libpq cannot read is
 * a fixed phrase.
 */
static const struct {
	const char	*in;
	const char	*out;
	int		 n;		/* values masked; -1 malformed */
	const char	*secret[2];	/* never in the output */
} conncases[] = {
	/* libpq ends a URI's user:password only at '@' (or '/'). */
	{ "postgresql://hb:s3c?ret@db.example:5432/hookbox",
	    "user=hb password=*** dbname=hookbox host=db.example port=5432", 1,
	    { "s3c", "ret" } },
	{ "postgresql://hookbox_serve:s3c?ret@/hookbox?host=/run/pg",
	    "user=hookbox_serve password=*** dbname=hookbox host=/run/pg", 1,
	    { "s3c", "ret" } },
	{ "postgresql://hb:s3c#ret@h/db", "user=hb password=*** dbname=db"
	    " host=h", 1, { "s3c", "ret" } },
	{ "postgresql://hb:s3c%40ret@h/db", "user=hb password=*** dbname=db"
	    " host=h", 1, { "s3c", "%40" } },
	{ "postgresql://hb:s3c%3Fret%23@h/db", "user=hb password=***"
	    " dbname=db host=h", 1, { "s3c", "%3F" } },
	/* A bare '@' ends it there: what follows is libpq's host. */
	{ "postgresql://hb:pw1@pw2@h/db", "user=hb password=*** dbname=db"
	    " host=pw2@h", 1, { "pw1", NULL } },
	/* '#' is no fragment to libpq: it is the database's name. */
	{ "postgresql://u:s3cret@h/db#frag", "user=u password=*** dbname=db#frag"
	    " host=h", 1, { "s3cret", NULL } },
	/* Keys are percent-decoded before they are compared. */
	{ "postgresql://h/db?%70assword=hunter2", "password=*** dbname=db"
	    " host=h", 1, { "hunter2", NULL } },
	{ "postgresql://h/db?sslpassword=k3y&password=p4ss", "password=***"
	    " dbname=db host=h sslpassword=***", 2, { "k3y", "p4ss" } },
	{ "postgresql://u:s3cret@h/db?password=s3cret2&%73slpassword=k3y",
	    "user=u password=*** dbname=db host=h sslpassword=***", 2,
	    { "s3cret", "k3y" } },
	/* Several hosts; the query's password wins over the userinfo's. */
	{ "postgresql://u:p1ss@h1:5432,h2:5433/db?password=p2ss",
	    "user=u password=*** dbname=db host=h1,h2 port=5432,5433", 1,
	    { "p1ss", "p2ss" } },
	{ "postgresql://[::1]:5432/db", "dbname=db host=::1 port=5432", 0,
	    { NULL, NULL } },
	/* An empty password: none to libpq in the userinfo, one given. */
	{ "postgresql://u:@h/db", "user=u dbname=db host=h", 0,
	    { NULL, NULL } },
	{ "postgres://h?password=", "password=*** host=h", 1, { NULL, NULL } },
	{ "postgresql://u@h/db", "user=u dbname=db host=h", 0, { NULL, NULL } },
	/* key=value: quotes, escaped quotes, escaped spaces. */
	{ "host=/tmp dbname=hookbox", "dbname=hookbox host=/tmp", 0,
	    { NULL, NULL } },
	{ "host=h password='it\\'s a s3cret' dbname=x", "password=*** dbname=x"
	    " host=h", 1, { "s3cret", NULL } },
	{ "password = 's3c ret' user=u application_name='a b\\'c\\\\'",
	    "user=u password=*** application_name='a b\\'c\\\\'", 1,
	    { "s3c", NULL } },
	{ "password=a\\ s3cret user=c", "user=c password=***", 1,
	    { "s3cret", NULL } },
	{ "host=h application_name=''", "host=h application_name=''", 0,
	    { NULL, NULL } },
	/* A database named like a conninfo would be read as one. */
	{ "dbname=postgresql://u:s3cret@h/x", "dbname=***", 1,
	    { "s3cret", NULL } },
	{ "dbname='host=h password=s3cret'", "dbname=***", 1,
	    { "s3cret", NULL } },
	/* What libpq cannot read: a phrase, nothing of the string. */
	{ "host=h password=s3cret nosuch=1", DB_CONNINFO_MALFORMED, -1,
	    { "s3cret", NULL } },
	{ "host=h password='s3cret", DB_CONNINFO_MALFORMED, -1,
	    { "s3cret", NULL } },
	{ "postgresql://u:S3cr%ZZet@/db", DB_CONNINFO_MALFORMED, -1,
	    { "S3cr", NULL } },
	{ "PASSWORD=s3cret", DB_CONNINFO_MALFORMED, -1, { "s3cret", NULL } },
	{ "host=h oops s3cret", DB_CONNINFO_MALFORMED, -1, { "s3cret", NULL } },
	{ "", "", 0, { NULL, NULL } },
};

START_TEST(test_conninfo_redact)
{
	PQconninfoOption	*in, *out, *i, *o;
	char			 buf[512];
	int			 k;

	ck_assert_int_eq(db_conninfo_redact(conncases[_i].in, buf,
	    sizeof(buf)), conncases[_i].n);
	ck_assert_str_eq(buf, conncases[_i].out);
	for (k = 0; k < 2; k++)
		if (conncases[_i].secret[k] != NULL)
			ck_assert_ptr_null(strstr(buf,
			    conncases[_i].secret[k]));
	if (conncases[_i].n < 0)
		return;
	/* libpq reads what is shown as it read the original, but ***. */
	ck_assert_ptr_nonnull(in = PQconninfoParse(conncases[_i].in, NULL));
	ck_assert_ptr_nonnull(out = PQconninfoParse(buf, NULL));
	for (i = in, o = out; i->keyword != NULL; i++, o++) {
		ck_assert_str_eq(i->keyword, o->keyword);
		if (i->val == NULL)
			ck_assert_ptr_null(o->val);
		else if (strcmp(o->val, "***") != 0)
			ck_assert_str_eq(i->val, o->val);
	}
	PQconninfoFree(in);
	PQconninfoFree(out);
}
END_TEST

START_TEST(test_conninfo_redact_short)
{
	const char	*c = "host=h password=pw";
	const char	*out = "password=*** host=h";
	char		 buf[128];
	size_t		 need = strlen(out) + 1;

	ck_assert_int_eq(db_conninfo_redact(c, buf, need), 1);
	ck_assert_str_eq(buf, out);
	/* One byte short: refused, and nothing of it is left. */
	ck_assert_int_eq(db_conninfo_redact(c, buf, need - 1), -1);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(db_conninfo_redact(c, buf, 0), -1);
	/* The value a quote needs is counted too. */
	c = "application_name='a b'";
	need = strlen(c) + 1;
	ck_assert_int_eq(db_conninfo_redact(c, buf, need), 0);
	ck_assert_str_eq(buf, c);
	ck_assert_int_eq(db_conninfo_redact(c, buf, need - 1), -1);
	ck_assert_str_eq(buf, "");
}
END_TEST

START_TEST(test_pg_unreachable)
{
	struct db	*db = (struct db *)1;
	char		 why[256];

	/* A socket directory where no server listens. */
	ck_assert_int_eq(db_open_pg("host=/nonexistent dbname=x"
	    " password=hunter2", 2000, 0, texts, Q_N, &db, why, sizeof(why)),
	    DB_GONE);
	ck_assert_ptr_null(db);
	ck_assert_ptr_nonnull(strstr(why, "/nonexistent"));
	ck_assert_ptr_null(strstr(why, "hunter2"));
}
END_TEST

/*
 * DB_OPEN_WAL_GATHER (db/sqlite.c): a transaction's WAL frames written
 * together.  Another connection, on SQLite's own VFS, reads what each
 * COMMIT holds as soon as it returns: every frame was in the file by
 * then.  The transactions are larger than one write gathers (more than
 * 128 KiB), dirty more pages than the cache holds (SQLite writes frames
 * before the COMMIT, then reads and rewrites some in place), and every
 * fifth one starts on a WAL emptied by a checkpoint.
 */
static sqlite3_int64
lite_scalar(sqlite3 *r, const char *sql)
{
	sqlite3_stmt	*st;
	sqlite3_int64	 v;

	ck_assert_int_eq(sqlite3_prepare_v2(r, sql, -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* A gathering connection to path, WAL, synchronous=FULL, a small cache. */
static struct db *
gather_open(const char *path)
{
	struct db	*db = NULL;

	ck_assert_int_eq(db_open_sqlite(path, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | DB_OPEN_WAL_GATHER, texts, Q_N, &db), DB_OK);
	ck_assert_int_eq(db_exec(db, "PRAGMA journal_mode=WAL"), DB_OK);
	ck_assert_int_eq(db_exec(db, "PRAGMA synchronous=FULL"), DB_OK);
	ck_assert_int_eq(db_exec(db, "PRAGMA cache_size=-64"), DB_OK);
	ck_assert_int_eq(db_exec(db, "PRAGMA wal_autocheckpoint=0"), DB_OK);
	return db;
}

/* Runs sql on a file of its own with SQLite itself; asserts it ran. */
static void
lite_run(const char *path, const char *sql)
{
	sqlite3	*l = NULL;
	char	*err = NULL;

	ck_assert_int_eq(sqlite3_open(path, &l), SQLITE_OK);
	ck_assert_msg(sqlite3_exec(l, sql, NULL, NULL, &err) == SQLITE_OK,
	    "%s: %s", sql, err != NULL ? err : "");
	sqlite3_close(l);
}

/* The rows of t at path, read through db.h; -1 when the read fails. */
static int64_t
rows_of(const char *path)
{
	static const struct db_text	text[] = {
		{ "SELECT count(*) FROM t", NULL },
	};
	struct db			*db = NULL;
	struct db_stmt			*st;
	int64_t				 n = -1;

	if (db_open_sqlite(path, DB_OPEN_READWRITE, text, 1, &db) != DB_OK)
		return -1;
	if ((st = db_stmt(db, 0)) != NULL && db_step(st) == DB_ROW) {
		n = db_col_int64(st, 0);
		db_reset(st);
	}
	db_close(db);
	return n;
}

/* Copies file from to file to (mode 0644); asserts it did. */
static void
copy_file(const char *from, const char *to)
{
	FILE	*in, *out;
	char	 buf[8192];
	size_t	 n;

	ck_assert_msg((in = fopen(from, "rb")) != NULL, "%s: %s", from,
	    strerror(errno));
	ck_assert_ptr_nonnull(out = fopen(to, "wb"));
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
}

/*
 * A hot journal another user planted beside a database is never played
 * back into it: the database keeps its rows, and the read that would
 * have replayed it fails.  The journal is a real one, made by SQLite in
 * a transaction on a copy of the database that held a row, left hot (its
 * records run to the end: synchronous=OFF), and put beside the database,
 * which no longer holds the row, owned by another user (nobody's uid).
 * A companion with a second name (a hard link) or reached through a
 * symbolic link is refused too, whoever owns it; one owned by the
 * database's owner, even when that is another user (root's tool reading
 * the service user's state.db), is taken.
 */
START_TEST(test_planted_beside)
{
	char		dir[512], a[600], b[600], aj[620], bj[620], other[600];
	struct stat	sb;

	test_path(dir, sizeof(dir), test_tmpdir(), "");
	(void)snprintf(a, sizeof(a), "%sa.db", dir);
	(void)snprintf(b, sizeof(b), "%sb.db", dir);
	(void)snprintf(aj, sizeof(aj), "%s-journal", a);
	(void)snprintf(bj, sizeof(bj), "%s-journal", b);
	(void)snprintf(other, sizeof(other), "%sother", dir);

	/* a holds the planted row; b is a copy of it, without the row. */
	lite_run(a, "PRAGMA journal_mode=DELETE; CREATE TABLE t (x TEXT);"
	    " INSERT INTO t VALUES ('planted')");
	copy_file(a, b);
	lite_run(b, "DELETE FROM t");
	ck_assert_int_eq(rows_of(b), 0);
	{
		/* a's journal, while the transaction deleting the row runs. */
		sqlite3	*l = NULL;

		ck_assert_int_eq(sqlite3_open(a, &l), SQLITE_OK);
		ck_assert_int_eq(sqlite3_exec(l, "PRAGMA synchronous=OFF;"
		    " BEGIN; DELETE FROM t", NULL, NULL, NULL), SQLITE_OK);
		copy_file(aj, other);
		ck_assert_int_eq(sqlite3_exec(l, "ROLLBACK", NULL, NULL, NULL),
		    SQLITE_OK);
		sqlite3_close(l);
	}
	/* Ours (this process's user made it): SQLite plays it back. */
	copy_file(other, bj);
	ck_assert_int_eq(rows_of(b), 1);
	lite_run(b, "DELETE FROM t");

	/* Another user's: refused, and b keeps what it holds. */
	copy_file(other, bj);
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(bj, 65534, 65534), 0);
		ck_assert_int_eq(rows_of(b), -1);
		ck_assert_int_eq(unlink(bj), 0);
		ck_assert_int_eq(rows_of(b), 0);
	}
	/* Two names, or a link: refused whoever owns it. */
	ck_assert_int_eq(link(other, bj), 0);
	ck_assert_int_eq(rows_of(b), -1);
	ck_assert_int_eq(unlink(bj), 0);
	ck_assert_int_eq(symlink(other, bj), 0);
	ck_assert_int_eq(rows_of(b), -1);
	ck_assert_int_eq(unlink(bj), 0);
	ck_assert_int_eq(rows_of(b), 0);
	ck_assert_int_eq(stat(other, &sb), 0);

	/*
	 * The database's owner's own files, in WAL mode, read by another
	 * (root): taken.
	 */
	if (geteuid() == 0) {
		char	w[620], s[620];

		lite_run(a, "PRAGMA journal_mode=WAL;"
		    " INSERT INTO t VALUES ('more')");
		(void)snprintf(w, sizeof(w), "%s-wal", a);
		(void)snprintf(s, sizeof(s), "%s-shm", a);
		{
			/* Kept open, so that the WAL and its index stay. */
			sqlite3	*l = NULL;

			ck_assert_int_eq(sqlite3_open(a, &l), SQLITE_OK);
			ck_assert_int_eq(sqlite3_exec(l, "PRAGMA"
			    " wal_autocheckpoint=0; INSERT INTO t VALUES"
			    " ('in the wal')", NULL, NULL, NULL), SQLITE_OK);
			ck_assert_int_eq(chown(a, 65534, 65534), 0);
			ck_assert_int_eq(chown(w, 65534, 65534), 0);
			ck_assert_int_eq(chown(s, 65534, 65534), 0);
			ck_assert_int_eq(rows_of(a), 3);
			sqlite3_close(l);
		}
	}
}
END_TEST

/*
 * Every file is opened defensive, its schema untrusted: a state.db the
 * service user wrote, opened by root's tool, cannot be rewritten below
 * SQL (writable_schema), nor run a function of its schema's choosing.
 */
START_TEST(test_defensive)
{
	static const struct db_text	text[] = {
		{ "PRAGMA trusted_schema", NULL },
	};
	struct db			*db = NULL;
	struct db_stmt			*st;
	char				 path[512];

	test_path(path, sizeof(path), test_tmpdir(), "d.db");
	ck_assert_int_eq(db_open_sqlite(path, DB_OPEN_READWRITE |
	    DB_OPEN_CREATE, text, 1, &db), DB_OK);
	ck_assert_ptr_nonnull(st = db_stmt(db, 0));
	ck_assert_int_eq(db_step(st), DB_ROW);
	ck_assert_int_eq(db_col_int64(st, 0), 0);
	db_reset(st);
	ck_assert_int_eq(db_exec(db, "CREATE TABLE t (x)"), DB_OK);
	ck_assert_int_eq(db_exec(db, "PRAGMA writable_schema=ON;"
	    " UPDATE sqlite_master SET sql = 'CREATE TABLE t (y)'"
	    " WHERE name = 't'"), DB_ERROR);
	db_close(db);
}
END_TEST

START_TEST(test_wal_gather)
{
	char		 path[512], sql[256];
	struct db	*db;
	sqlite3		*r;
	sqlite3_int64	 rows = 0;
	struct rlimit	 rl;
	struct stat	 sb;
	pid_t		 pid;
	int		 i, status;

	test_path(path, sizeof(path), test_tmpdir(), "gather.db");
	db = gather_open(path);
	ck_assert_int_eq(db_exec(db, "CREATE TABLE g(a INTEGER PRIMARY KEY,"
	    " b BLOB)"), DB_OK);
	ck_assert_int_eq(sqlite3_open_v2(path, &r, SQLITE_OPEN_READWRITE,
	    NULL), SQLITE_OK);
	for (i = 0; i < 12; i++) {
		if (i % 5 == 0)
			ck_assert_int_eq(sqlite3_exec(r, "PRAGMA"
			    " wal_checkpoint(TRUNCATE)", NULL, NULL, NULL),
			    SQLITE_OK);
		ck_assert_int_eq(db_exec(db, "BEGIN"), DB_OK);
		(void)snprintf(sql, sizeof(sql), "WITH RECURSIVE n(k) AS"
		    " (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 300)"
		    " INSERT INTO g(b) SELECT randomblob(1000) FROM n");
		ck_assert_int_eq(db_exec(db, sql), DB_OK);
		/* Pages written before the COMMIT, dirtied again. */
		ck_assert_int_eq(db_exec(db, "UPDATE g SET b = randomblob(900)"
		    " WHERE a % 7 = 0"), DB_OK);
		ck_assert_int_eq(db_exec(db, "COMMIT"), DB_OK);
		rows += 300;
		ck_assert_int_eq(lite_scalar(r, "SELECT count(*) FROM g"),
		    rows);
		ck_assert_int_eq(lite_scalar(r, "SELECT count(*) FROM g WHERE"
		    " a % 7 = 0 AND length(b) != 900"), 0);
	}
	ck_assert_int_eq(lite_scalar(r, "SELECT count(*) FROM"
	    " pragma_integrity_check WHERE integrity_check != 'ok'"), 0);
	db_close(db);

	/*
	 * A write refused (the file size limit: EFBIG) fails its
	 * transaction, whichever call writes the gathered frames; the
	 * file keeps what was committed before.
	 */
	ck_assert_int_eq(sqlite3_exec(r, "PRAGMA wal_checkpoint(TRUNCATE)",
	    NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_int_gt(sb.st_size, 64 * 1024);
	ck_assert_int_ge(pid = fork(), 0);
	if (pid == 0) {
		signal(SIGXFSZ, SIG_IGN);
		db = gather_open(path);
		/* The WAL is empty; the database file is not written. */
		rl.rlim_cur = rl.rlim_max = 64 * 1024;
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(2);
		if (db_exec(db, "BEGIN") != DB_OK || db_exec(db, "INSERT INTO"
		    " g(b) SELECT randomblob(1000) FROM g LIMIT 400") != DB_OK)
			_exit(0);	/* refused on the way */
		_exit(db_exec(db, "COMMIT") == DB_OK ? 1 : 0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(lite_scalar(r, "SELECT count(*) FROM g"), rows);
	ck_assert_int_eq(lite_scalar(r, "SELECT count(*) FROM"
	    " pragma_integrity_check WHERE integrity_check != 'ok'"), 0);
	sqlite3_close(r);
}
END_TEST

static Suite *
db_suite(void)
{
	Suite	*s = suite_create("db");
	TCase	*tc;
	int	 b;

	for (b = LITE; b <= PG; b++) {
		tc = tcase_create(b == LITE ? "sqlite" : "postgresql");
		tcase_add_unchecked_fixture(tc, test_case_setup,
		    test_case_teardown);
		tcase_add_loop_test(tc, test_roundtrip, b, b + 1);
		tcase_add_loop_test(tc, test_rows_in_order, b, b + 1);
		tcase_add_loop_test(tc, test_constraint, b, b + 1);
		tcase_add_loop_test(tc, test_transactions, b, b + 1);
		tcase_add_loop_test(tc, test_shrink, b, b + 1);
		tcase_add_loop_test(tc, test_quoted_and_bad, b, b + 1);
		tcase_add_loop_test(tc, test_busy, b, b + 1);
		tcase_add_loop_test(tc, test_constraint_kinds, b, b + 1);
		tcase_add_loop_test(tc, test_step_alone, b, b + 1);
		tcase_add_loop_test(tc, test_begin, b, b + 1);
		if (b == PG) {
			tcase_add_test(tc, test_pg_reconnect);
			tcase_add_test(tc, test_pg_commit_aborted);
			tcase_add_test(tc, test_pg_lost_in_tx);
			tcase_add_test(tc, test_pg_budget);
			tcase_add_test(tc, test_pg_malformed);
			tcase_add_test(tc, test_pg_wiped);
			tcase_add_test(tc, test_pg_readonly_denied);
			tcase_add_test(tc, test_pg_unreachable);
			tcase_add_test(tc, test_pg_schema_roles);
		} else {
			tcase_add_test(tc, test_db_location);
			tcase_add_loop_test(tc, test_conninfo_redact, 0,
			    (int)(sizeof(conncases) / sizeof(conncases[0])));
			tcase_add_test(tc, test_conninfo_redact_short);
			tcase_add_test(tc, test_wal_gather);
			tcase_add_test(tc, test_planted_beside);
			tcase_add_test(tc, test_defensive);
		}
		suite_add_tcase(s, tc);
	}
	/*
	 * COMMITs that wait: the server's synchronous_standby_names is
	 * set, and reset by the test and again after the case, even when
	 * a test failed.
	 */
	tc = tcase_create("postgresql-commit");
	tcase_add_unchecked_fixture(tc, test_case_setup,
	    test_case_teardown_standby);
	tcase_add_test(tc, test_pg_commit_syncrep);
	tcase_add_test(tc, test_pg_autocommit_syncrep);
	tcase_add_test(tc, test_pg_commit_cancelled);
	tcase_add_test(tc, test_pg_commit_unanswered);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return test_run(db_suite);
}
