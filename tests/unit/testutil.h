/*
 * testutil.h: helpers shared by the Check suites: running a suite, a
 * directory per test, and the data directory the programs use (config.db
 * with its rows, state.db) built through the library's own API.
 *
 * Every builder asserts its own success (ck_assert): a fixture that
 * could not be built fails the test that asked for it.
 */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include <check.h>

#include "config/config.h"
#include "intake/group.h"
#include "store/outbox.h"
#include "store/store.h"

/*
 * Every test case's time limit, in seconds, unless CK_DEFAULT_TIMEOUT
 * says otherwise.  It catches a test that hangs; it is no measure of
 * speed: a sanitizer build on a loaded machine may be ten times slower
 * than an idle one, and no test may fail for that.
 */
#define TEST_TIMEOUT_S	"300"

/*
 * Runs the suite make() builds (forking per test), with TEST_TIMEOUT_S,
 * prints Check's summary, returns the exit status.
 */
int test_run(Suite *(*make)(void));

/*
 * test_run() for a suite of pure functions (no database, no process, no
 * thread): its tests run in this process, one after another, not each
 * in a child of its own, unless CK_FORK says otherwise.  Under the
 * sanitizers a child costs about 60 ms (LeakSanitizer's check as it
 * exits), the whole of such a suite's time.  A crash or a sanitizer's
 * report ends the run, which tests/check.sh counts as a failure; a
 * hang is stopped by its time limit.
 */
int test_run_pure(Suite *(*make)(void));

/*
 * The backend the running tests' databases are on.  test_run_backends()
 * sets it before each run; the builders below (test_location() and the
 * test_*_open() functions) follow it.
 */
enum test_backend {
	TEST_SQLITE,
	TEST_POSTGRES
};
extern enum test_backend test_backend;

/*
 * Runs the suite make() builds once on SQLite and once on PostgreSQL (the server named
 * by $HOOKBOX_TEST_PG, a key=value conninfo; without it every test of the
 * second run fails, none is skipped), printing after each run one line
 * "name (sqlite): N passed, M failed", then "name (postgresql): ...".
 * Returns the exit status: success only when both passed.
 */
int test_run_backends(Suite *(*make)(void), const char *name);

/*
 * Where the running test keeps file (config.db or state.db): on SQLite
 * dir/file; on PostgreSQL the conninfo of a database of this test's own,
 * created empty on the first call in the test's process (each test runs
 * in a process of its own), the same for both files, as hookbox keeps
 * configuration and state in one database.  Static storage.
 */
const char *test_location(const char *dir, const char *file);

/*
 * PostgreSQL: the conninfo of a new database of the test server whose
 * messages are in another language, set on the server's side (ALTER
 * DATABASE ... SET lc_messages), as on a server whose lc_messages is
 * not English: $HOOKBOX_TEST_PG_LOCALE, a locale this machine has
 * (tests/check.sh makes it before the server starts), else de_DE.UTF-8.
 * test_pg_translated_drop() drops it.  Static storage.
 */
const char *test_pg_translated(void);
void test_pg_translated_drop(void);

/*
 * Makes a fresh empty directory under $TMPDIR (or /tmp) for one test and
 * returns its path in static storage, valid until the next call.
 */
const char *test_tmpdir(void);

/* Removes a directory made by test_tmpdir() and everything in it. */
void test_rmdir(const char *);

/*
 * An unchecked fixture, run in the parent once per test case: a directory
 * of the case's own becomes $TMPDIR, so that every test_tmpdir() of its
 * tests lands in it and the parent removes it all, even when a test's
 * process failed before its own teardown; $TMPDIR is put back after.
 */
void test_case_setup(void);
void test_case_teardown(void);

/*
 * PostgreSQL: sets the test server's synchronous_standby_names (ALTER
 * SYSTEM, then a reload) to names, a standby that does not exist, or
 * back to the default (none) with NULL, and returns once a COMMIT shows
 * it in force (every COMMIT of a transaction that wrote then waits for
 * that standby, for ever, as the server sees it).  0, or -1 with why.
 * The server is shared by every test of a run: a test that sets it
 * resets it, and its test case's teardown is
 * test_case_teardown_standby(), which resets it too (in the parent: even
 * after a failed test).
 */
int test_pg_standby_set(const char *names, char *why, size_t len);
/* The same, failing the test when it cannot be done. */
void test_pg_standby(const char *names);
/* test_case_teardown(), then the setting reset (when on PostgreSQL). */
void test_case_teardown_standby(void);

/* buf = dir/name; fails the test when it does not fit. */
void test_path(char *buf, size_t len, const char *dir, const char *name);

/* ---- config.db ---- */

/* The busy timeout of the handles the builders open. */
#define TEST_BUSY_MS		2000

/*
 * The defaults of the rows below.  Nothing listens at the destination's
 * URL: a delivery attempted by mistake fails, it reaches nobody.
 */
#define TEST_DEST_URL		"http://127.0.0.1:9/sink"
#define TEST_DEST_TIMEOUT_MS	1000
#define TEST_DEST_MAX_ATTEMPTS	3
#define TEST_KEY_HEADER		"X-Hook-Key"	/* of key-mode endpoints */
#define TEST_TOLERANCE		300
#define TEST_STEP		"analyze-v1"

/*
 * Creates dir/config.db and returns a CONFIG_WRITE handle on it, freed
 * with config_close().
 */
struct config *test_config_create(const char *dir);

/* Opens dir/config.db (mode as for config_open()); config_close() frees it. */
struct config *test_config_open(const char *dir, enum config_mode,
    int busy_ms);

/*
 * Rows with the defaults above, to adjust before adding: a tenant
 * (active), a per-job endpoint (TEST_KEY_HEADER when auth is key), a
 * destination (TEST_DEST_*), a job (step TEST_STEP).
 */
struct config_tenant test_tenant(const char *id);
struct config_endpoint test_endpoint(const char *name, const char *tenant,
    enum config_auth);
struct config_destination test_destination(const char *tenant,
    const char *name);
struct config_job test_job(const char *tenant, const char *job_id,
    const char *attempt, const char *destination);

/* Adds a row with the defaults through the writer w. */
void test_add_tenant(struct config *w, const char *id, int active);
/* secret NULL: none. */
void test_add_endpoint(struct config *w, const char *name, const char *tenant,
    enum config_auth, const char *secret);
void test_add_destination(struct config *w, const char *tenant,
    const char *name);
void test_add_job(struct config *w, const char *tenant, const char *job_id,
    const char *attempt, const char *destination);

/* Adds a row as adjusted; secret NULL: none. */
void test_put_endpoint(struct config *w, const struct config_endpoint *,
    const char *secret);
void test_put_destination(struct config *w, const struct config_destination *,
    const char *secret);
void test_put_job(struct config *w, const struct config_job *);

/*
 * SQL that makes a config.db as the previous release did: without the
 * version, its triggers and (PostgreSQL) their function.
 */
extern const char test_unversion_sqlite[];
extern const char test_unversion_pg[];

/* ---- state.db ---- */

/*
 * Opens dir/state.db with busy_ms (creating it with create); freed with
 * store_close().
 */
struct store *test_store_open(const char *dir, int busy_ms, int create);
/* A group over state_path (busy 1000 ms); threaded or inline. */
struct group *test_group_new(const char *state_path, int threaded,
    struct config_cache *configs);

/*
 * Accepts a status-API "Completed" document for job_id of tenant at now
 * (unix ms) through accept_observation(), and returns its result.
 */
enum hb_result test_accept(struct store *, struct config *,
    const char *tenant, const char *job_id, int64_t now);

/*
 * The dispatcher's batch functions for one row at a time (a batch of
 * one): store_outbox_pick() with *found 0 when nothing is due;
 * store_outbox_claim() with its lease taken until lease_until, and
 * *claimed; store_outbox_finish() of one attempt ended at now, and *lost.
 * Each returns the batch function's status.
 */
enum store_status test_pick1(struct store *, int64_t now, const char *cursor,
    struct store_row *, int *found);
enum store_status test_claim1(struct store *, const struct store_row *,
    const char *owner, int64_t now, int64_t lease_until,
    struct store_lease *, int *claimed);
enum store_status test_finish1(struct store *, const struct store_lease *,
    const char *owner, enum store_outcome, int64_t now, int64_t next_at,
    long http_status, const char *error, int *lost);

/* ---- either file, through a connection of the test's own ---- */

/* The first column of the first row of sql as an integer; -1 for no row. */
long long test_db_int(const char *path, const char *sql);

/*
 * PostgreSQL: a statement of sql (pg: its PostgreSQL text, or NULL) on
 * the test process's own connection to loc, kept open from one call to
 * the next; *db is the connection, for its messages.  Not to be used
 * across a fork().
 */
struct db;
struct db_stmt *test_own_stmt(const char *loc, const char *sql,
    const char *pg, struct db **db);

/* Runs sql (read-write); a failure fails the test with SQLite's message. */
void test_db_exec(const char *path, const char *sql);

/*
 * Calls fn with each descriptor this process holds open (its number, as
 * /proc/self/fd names it) and what it is open on, until fn returns
 * non-zero; returns that, or 0 once all were seen.  Linux.
 */
int test_each_fd(int (*fn)(const char *fd, const char *target, void *),
    void *arg);

/*
 * PostgreSQL: the plan the server makes for pg, a statement's
 * PostgreSQL text taking one parameter ?1, bound to arg: EXPLAIN's
 * lines, each ending in a newline, in buf.
 */
void test_pg_plan(const char *loc, const char *pg, const char *arg,
    char *buf, size_t len);

/* state.db's row counts, as one comparable string "r0 j0 a0 o0 c0". */
void test_state_snapshot(const char *state_path, char *buf, size_t len);

/* ---- the two backends' schemas ---- */

/*
 * Fails the test unless the SQLite file lite and schema of the
 * PostgreSQL database pg hold the same tables, ntables of them, and
 * describe each the same way, in one vocabulary for both backends: each
 * column in order with its type (integer, text, blob, boolean; another
 * as "?" and its name) and "not null" (a primary key's columns count as
 * not null, as on PostgreSQL; XXX SQLite would store a NULL in the TEXT
 * PRIMARY KEY of a table with a rowid, tenants.id, endpoints.name and
 * outbox.action_id: hookbox never binds one); the primary key's columns
 * in order; every other index with its columns in order, whether unique
 * and whether partial, by its name (a UNIQUE constraint's index has
 * none: its name is the server's).  SQLite is read with PRAGMA
 * table_info, index_list and index_info; PostgreSQL with
 * information_schema.columns and pg_index.  PostgreSQL's table
 * schema_version, SQLite's PRAGMA user_version, is not compared.
 */
void test_schema_agree(const char *lite, const char *pg, const char *schema,
    int ntables);

#endif
