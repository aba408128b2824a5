/*
 * testutil.c: helpers shared by the Check suites.
 */
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>
#include <sqlite3.h>

#include "config/admin.h"
#include "db/db.h"
#include "intake/accept.h"
#include "testutil.h"
#include "provider/tornado.h"

/* Before any test case is made: tcase_create() reads it. */
static void
test_timeout(void)
{
	(void)setenv("CK_DEFAULT_TIMEOUT", TEST_TIMEOUT_S, 0);
}

static int
run(Suite *(*make)(void), int pure)
{
	SRunner	*sr;
	int	 failed;

	test_timeout();
	sr = srunner_create(make());
	if (pure && getenv("CK_FORK") == NULL)
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int
test_run(Suite *(*make)(void))
{
	return run(make, 0);
}

int
test_run_pure(Suite *(*make)(void))
{
	return run(make, 1);
}

enum test_backend	test_backend = TEST_SQLITE;

/*
 * A connection to the test server (to database dbname, or to the
 * conninfo's own with NULL), or NULL with why; asserts nothing, as the
 * runner uses it outside any test.
 */
static struct db *
pg_server_text(const char *dbname, int busy_ms, const struct db_text *text,
    size_t n, char *why, size_t len)
{
	struct db	*db = NULL;
	const char	*base = getenv("HOOKBOX_TEST_PG");
	char		 conn[PATH_MAX];

	if (base == NULL || base[0] == '\0') {
		(void)snprintf(why, len, "HOOKBOX_TEST_PG is not set: no "
		    "PostgreSQL to test against");
		return NULL;
	}
	if (snprintf(conn, sizeof(conn), "%s%s%s", base, dbname != NULL ?
	    " dbname=" : "", dbname != NULL ? dbname : "") >=
	    (int)sizeof(conn)) {
		(void)snprintf(why, len, "HOOKBOX_TEST_PG too long");
		return NULL;
	}
	(void)db_open_pg(conn, 10000, busy_ms, text, n, &db, why, len);
	return db;
}

/*
 * The tests' own administration (databases made and dropped, a test's
 * database emptied) waits up to this long for a lock or a statement:
 * on a loaded machine the server processes of the previous test may
 * still be ending, and none of it is what a test measures.
 */
#define TEST_ADMIN_MS	30000

static struct db *
pg_server(const char *dbname, char *why, size_t len)
{
	return pg_server_text(dbname, TEST_ADMIN_MS, NULL, 0, why, len);
}

/* The same inside a test: a failure fails the test. */
static struct db *
pg_admin(const char *dbname)
{
	struct db	*db;
	char		 why[256];

	db = pg_server(dbname, why, sizeof(why));
	ck_assert_msg(db != NULL, "PostgreSQL: %s", why);
	return db;
}

/*
 * The PostgreSQL run's database, made by the runner before the run and
 * dropped after it: each test empties it first (test_location()), which
 * costs far less than a database per test.  Without a server, nothing:
 * every test then fails in test_location().
 */
static int
pg_run_db(int make)
{
	static char	 name[48];
	struct db	*db;
	char		 sql[96], why[256];
	const char	*base = getenv("HOOKBOX_TEST_PG");

	if (base == NULL || base[0] == '\0')
		return 0;
	if (make) {
		(void)snprintf(name, sizeof(name), "hbt_%ld_%ld",
		    (long)getpid(), (long)time(NULL));
		(void)snprintf(sql, sizeof(sql), "CREATE DATABASE %s", name);
	} else
		(void)snprintf(sql, sizeof(sql),
		    "DROP DATABASE IF EXISTS %s WITH (FORCE)", name);
	/* The runner is no test: a failure here is reported, not asserted. */
	if ((db = pg_server(NULL, why, sizeof(why))) == NULL ||
	    db_exec(db, sql) != DB_OK) {
		fprintf(stderr, "%s: %s\n", sql, db != NULL ?
		    db_errmsg(db) : why);
		db_close(db);
		return -1;
	}
	db_close(db);
	if (make)
		return setenv("HOOKBOX_TEST_PG_DB", name, 1);
	return unsetenv("HOOKBOX_TEST_PG_DB");
}

int
test_run_backends(Suite *(*make)(void), const char *name)
{
	static const char *const names[] = { "sqlite", "postgresql" };
	SRunner	*sr;
	int	 b, n, failed, status = EXIT_SUCCESS;

	test_timeout();
	for (b = TEST_SQLITE; b <= TEST_POSTGRES; b++) {
		test_backend = (enum test_backend)b;
		if (b == TEST_POSTGRES && pg_run_db(1) != 0)
			status = EXIT_FAILURE;
		sr = srunner_create(make());
		srunner_run_all(sr, CK_NORMAL);
		n = srunner_ntests_run(sr);
		failed = srunner_ntests_failed(sr);
		printf("%s (%s): %d passed, %d failed\n", name, names[b],
		    n - failed, failed);
		fflush(stdout);
		if (failed != 0)
			status = EXIT_FAILURE;
		srunner_free(sr);
		if (b == TEST_POSTGRES)
			(void)pg_run_db(0);
	}
	return status;
}

/*
 * A COMMIT of a transaction that wrote to the WAL (a transactional
 * message: one that wrote nothing waits for no standby), on a connection
 * of its own with a short budget: DB_OK, or DB_BUSY while it would wait
 * for a synchronous standby that is not there.
 */
static enum db_rc
pg_probe_commit(char *why, size_t len)
{
	static const struct db_text	 text[] = {
		{ "SELECT 0", "SELECT pg_logical_emit_message(true,"
		    " 'hookbox-test', 'probe')" },
	};
	struct db			*db;
	struct db_stmt			*st;
	enum db_rc			 rc;

	if ((db = pg_server_text(NULL, 200, text, 1, why, len)) == NULL)
		return DB_GONE;
	if ((rc = db_exec(db, "BEGIN")) == DB_OK &&
	    (st = db_stmt(db, 0)) != NULL &&
	    (rc = db_step_done(st)) == DB_DONE)
		rc = db_exec(db, "COMMIT");
	if (rc != DB_OK)
		(void)snprintf(why, len, "%s", db_errmsg(db));
	db_close(db);
	return rc;
}

int
test_pg_standby_set(const char *names, char *why, size_t len)
{
	struct db	*db;
	char		 sql[160];
	enum db_rc	 rc = DB_ERROR;
	int		 i;

	if (names != NULL)
		(void)snprintf(sql, sizeof(sql), "ALTER SYSTEM SET"
		    " synchronous_standby_names = '%s'", names);
	else
		(void)snprintf(sql, sizeof(sql), "ALTER SYSTEM RESET"
		    " synchronous_standby_names");
	if ((db = pg_server(NULL, why, len)) == NULL)
		return -1;
	/* ALTER SYSTEM runs alone, outside a transaction block. */
	if (db_exec(db, sql) != DB_OK ||
	    db_exec(db, "SELECT pg_reload_conf()") != DB_OK) {
		(void)snprintf(why, len, "%s: %s", sql, db_errmsg(db));
		db_close(db);
		return -1;
	}
	db_close(db);
	/*
	 * The reload reaches the server's processes in their own time:
	 * wait (at most about 30 s) until a COMMIT says it is in force.
	 */
	for (i = 0; i < 100; i++) {
		rc = pg_probe_commit(why, len);
		if (names != NULL ? rc == DB_BUSY : rc == DB_OK)
			return 0;
		usleep(100 * 1000);
	}
	(void)snprintf(why, len, "%s: not in force after 30 s (the probe's"
	    " COMMIT: %s)", sql, db_rc_name(rc));
	return -1;
}

void
test_pg_standby(const char *names)
{
	char	why[512];

	ck_assert_msg(test_pg_standby_set(names, why, sizeof(why)) == 0,
	    "%s", why);
}

void
test_case_teardown_standby(void)
{
	char	why[512];

	test_case_teardown();
	if (getenv("HOOKBOX_TEST_PG") != NULL &&
	    test_pg_standby_set(NULL, why, sizeof(why)) != 0)
		fprintf(stderr, "synchronous_standby_names not reset: %s\n",
		    why);
}

const char *
test_location(const char *dir, const char *file)
{
	static char	 loc[PATH_MAX];
	const char	*name;
	struct db	*db;
	char		 sql[96], made[48];

	if (test_backend == TEST_SQLITE) {
		test_path(loc, sizeof(loc), dir, file);
		return loc;
	}
	/*
	 * The database is named in the environment, so that the processes
	 * a test starts find the same one.  The runner made it; a test run
	 * some other way makes its own.
	 */
	if ((name = getenv("HOOKBOX_TEST_PG_DB")) == NULL) {
		(void)snprintf(made, sizeof(made), "hbt_%ld_%ld",
		    (long)getpid(), (long)time(NULL));
		(void)snprintf(sql, sizeof(sql), "CREATE DATABASE %s", made);
		db = pg_admin(NULL);
		ck_assert_msg(db_exec(db, sql) == DB_OK, "%s: %s", sql,
		    db_errmsg(db));
		db_close(db);
		ck_assert_int_eq(setenv("HOOKBOX_TEST_PG_DB", made, 1), 0);
		ck_assert_int_eq(setenv("HOOKBOX_TEST_PG_EMPTY", "1", 1), 0);
		name = made;
	}
	/*
	 * The test's first call empties what an earlier test left; the
	 * processes it starts inherit the mark and leave its rows alone.
	 */
	if (getenv("HOOKBOX_TEST_PG_EMPTY") == NULL) {
		db = pg_admin(name);
		ck_assert_msg(db_exec(db,
		    "DROP SCHEMA IF EXISTS hookbox_state, hookbox_config CASCADE;"
		    "DROP SCHEMA public CASCADE; CREATE SCHEMA public;"
		    "GRANT ALL ON SCHEMA public TO PUBLIC") == DB_OK,
		    "emptying %s: %s", name, db_errmsg(db));
		db_close(db);
		ck_assert_int_eq(setenv("HOOKBOX_TEST_PG_EMPTY", "1", 1), 0);
	}
	ck_assert_msg(snprintf(loc, sizeof(loc), "%s dbname=%s",
	    getenv("HOOKBOX_TEST_PG"), name) < (int)sizeof(loc),
	    "HOOKBOX_TEST_PG too long");
	return loc;
}

static char	translated[48];	/* test_pg_translated()'s database */

const char *
test_pg_translated(void)
{
	static char	 loc[PATH_MAX];
	const char	*locale = getenv("HOOKBOX_TEST_PG_LOCALE");
	struct db	*db;
	char		 sql[256];

	if (locale == NULL || locale[0] == '\0')
		locale = "de_DE.UTF-8";
	(void)snprintf(translated, sizeof(translated), "hbt_lang_%ld",
	    (long)getpid());
	db = pg_admin(NULL);
	(void)snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s"
	    " WITH (FORCE)", translated);
	ck_assert_msg(db_exec(db, sql) == DB_OK, "%s: %s", sql, db_errmsg(db));
	(void)snprintf(sql, sizeof(sql), "CREATE DATABASE %s", translated);
	ck_assert_msg(db_exec(db, sql) == DB_OK, "%s: %s", sql, db_errmsg(db));
	(void)snprintf(sql, sizeof(sql), "ALTER DATABASE %s SET lc_messages"
	    " = '%s'", translated, locale);
	ck_assert_msg(db_exec(db, sql) == DB_OK, "%s: %s (a locale this"
	    " machine has, made before the server started: tests/check.sh"
	    " makes one)", sql, db_errmsg(db));
	db_close(db);
	ck_assert_msg(snprintf(loc, sizeof(loc), "%s dbname=%s",
	    getenv("HOOKBOX_TEST_PG"), translated) < (int)sizeof(loc),
	    "HOOKBOX_TEST_PG too long");
	return loc;
}

void
test_pg_translated_drop(void)
{
	struct db	*db;
	char		 sql[128];

	if (translated[0] == '\0')
		return;
	db = pg_admin(NULL);
	(void)snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s"
	    " WITH (FORCE)", translated);
	ck_assert_msg(db_exec(db, sql) == DB_OK, "%s: %s", sql, db_errmsg(db));
	db_close(db);
	translated[0] = '\0';
}

const char *
test_tmpdir(void)
{
	static char	 path[PATH_MAX];
	const char	*base;

	if ((base = getenv("TMPDIR")) == NULL)
		base = "/tmp";
	if (snprintf(path, sizeof(path), "%s/hbtest.XXXXXX", base) >=
	    (int)sizeof(path))
		ck_abort_msg("TMPDIR too long");
	if (mkdtemp(path) == NULL)
		ck_abort_msg("mkdtemp failed");
	return path;
}

static char	case_dir[PATH_MAX];	/* the running test case's */
static char	case_oldtmp[PATH_MAX];	/* $TMPDIR before it, or "" */

void
test_case_setup(void)
{
	const char	*t;

	t = getenv("TMPDIR");
	if (snprintf(case_oldtmp, sizeof(case_oldtmp), "%s",
	    t != NULL ? t : "") >= (int)sizeof(case_oldtmp) ||
	    snprintf(case_dir, sizeof(case_dir), "%s", test_tmpdir()) >=
	    (int)sizeof(case_dir))
		ck_abort_msg("TMPDIR too long");
	if (setenv("TMPDIR", case_dir, 1) != 0)
		ck_abort_msg("setenv");
}

void
test_case_teardown(void)
{
	test_rmdir(case_dir);
	if (case_oldtmp[0] != '\0')
		(void)setenv("TMPDIR", case_oldtmp, 1);
	else
		(void)unsetenv("TMPDIR");
}

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(path);
}

void
test_rmdir(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void
test_path(char *buf, size_t len, const char *dir, const char *name)
{
	int	n;

	n = snprintf(buf, len, "%s/%s", dir, name);
	ck_assert_msg(n >= 0 && (size_t)n < len, "path too long: %s/%s", dir,
	    name);
}

/* Copies src into a fixed field, failing the test when it does not fit. */
static void
set(char *dst, size_t len, const char *src)
{
	size_t	n = strlen(src);

	ck_assert_msg(n < len, "fixture value too long: %s", src);
	memcpy(dst, src, n + 1);
}

#define SET(dst, src)	set((dst), sizeof(dst), (src))

/*
 * config.db
 */

struct config *
test_config_create(const char *dir)
{
	struct config	*w = NULL;
	char		 path[PATH_MAX];

	(void)snprintf(path, sizeof(path), "%s", test_location(dir, "config.db"));
	ck_assert_int_eq(config_create(path), CONFIG_OK);
	ck_assert_int_eq(config_open(path, CONFIG_WRITE, TEST_BUSY_MS, &w),
	    CONFIG_OK);
	ck_assert_ptr_nonnull(w);
	return w;
}

struct config *
test_config_open(const char *dir, enum config_mode mode, int busy_ms)
{
	struct config	*c = NULL;
	char		 path[PATH_MAX];

	(void)snprintf(path, sizeof(path), "%s", test_location(dir, "config.db"));
	ck_assert_int_eq(config_open(path, mode, busy_ms, &c), CONFIG_OK);
	ck_assert_ptr_nonnull(c);
	return c;
}

struct config_tenant
test_tenant(const char *id)
{
	struct config_tenant	t;

	memset(&t, 0, sizeof(t));
	SET(t.id, id);
	t.active = 1;
	return t;
}

struct config_endpoint
test_endpoint(const char *name, const char *tenant, enum config_auth auth)
{
	struct config_endpoint	e;

	memset(&e, 0, sizeof(e));
	SET(e.name, name);
	SET(e.tenant, tenant);
	e.kind = CONFIG_KIND_JOB;
	e.auth = auth;
	if (auth == CONFIG_AUTH_KEY)
		SET(e.key_header, TEST_KEY_HEADER);
	e.tolerance = TEST_TOLERANCE;
	return e;
}

struct config_destination
test_destination(const char *tenant, const char *name)
{
	struct config_destination	d;

	memset(&d, 0, sizeof(d));
	SET(d.tenant, tenant);
	SET(d.name, name);
	SET(d.url, TEST_DEST_URL);
	d.timeout_ms = TEST_DEST_TIMEOUT_MS;
	d.max_attempts = TEST_DEST_MAX_ATTEMPTS;
	d.retry_for_s = HB_RETRY_FOR_S_DEFAULT;
	d.circuit_failures = HB_CIRCUIT_FAILURES_DEFAULT;
	d.cooldown_s = HB_COOLDOWN_S_DEFAULT;
	return d;
}

struct config_job
test_job(const char *tenant, const char *job_id, const char *attempt,
    const char *destination)
{
	struct config_job	j;

	memset(&j, 0, sizeof(j));
	SET(j.tenant, tenant);
	SET(j.job_id, job_id);
	SET(j.attempt, attempt);
	SET(j.step, TEST_STEP);
	SET(j.destination, destination);
	return j;
}

void
test_add_tenant(struct config *w, const char *id, int active)
{
	struct config_tenant	 t = test_tenant(id);
	const char		*why = NULL;

	t.active = active;
	ck_assert_msg(config_tenant_add(w, &t, NULL, 0, &why) == CONFIG_OK,
	    "tenant %s: %s", id, why != NULL ? why : "?");
}

void
test_put_endpoint(struct config *w, const struct config_endpoint *e,
    const char *secret)
{
	const char	*why = NULL;

	ck_assert_msg(config_endpoint_add(w, e, &why) == CONFIG_OK,
	    "endpoint %s: %s", e->name, why != NULL ? why : "?");
	if (secret != NULL)
		ck_assert_msg(config_secret_add(w, e->name,
		    (const unsigned char *)secret, strlen(secret), 0, &why) ==
		    CONFIG_OK, "secret of %s: %s", e->name,
		    why != NULL ? why : "?");
}

void
test_add_endpoint(struct config *w, const char *name, const char *tenant,
    enum config_auth auth, const char *secret)
{
	struct config_endpoint	e = test_endpoint(name, tenant, auth);

	test_put_endpoint(w, &e, secret);
}

void
test_put_destination(struct config *w, const struct config_destination *d,
    const char *secret)
{
	const char	*why = NULL;

	ck_assert_msg(config_destination_add(w, d,
	    (const unsigned char *)secret, secret != NULL ? strlen(secret) : 0,
	    &why) == CONFIG_OK, "destination %s: %s", d->name,
	    why != NULL ? why : "?");
}

void
test_add_destination(struct config *w, const char *tenant, const char *name)
{
	struct config_destination	d = test_destination(tenant, name);

	test_put_destination(w, &d, NULL);
}

void
test_put_job(struct config *w, const struct config_job *j)
{
	const char	*why = NULL;

	ck_assert_msg(config_job_add(w, j, &why) == CONFIG_OK, "job %s: %s",
	    j->job_id, why != NULL ? why : "?");
}

const char test_unversion_sqlite[] =
    "DROP TRIGGER tenants_version_insert;"
    " DROP TRIGGER tenants_version_update;"
    " DROP TRIGGER tenants_version_delete;"
    " DROP TRIGGER endpoints_version_insert;"
    " DROP TRIGGER endpoints_version_update;"
    " DROP TRIGGER endpoints_version_delete;"
    " DROP TRIGGER secrets_version_insert;"
    " DROP TRIGGER secrets_version_update;"
    " DROP TRIGGER secrets_version_delete;"
    " DROP TABLE config_version";
const char test_unversion_pg[] =
    "DROP FUNCTION hookbox_config.config_version_bump() CASCADE;"
    " DROP TABLE hookbox_config.config_version";

void
test_add_job(struct config *w, const char *tenant, const char *job_id,
    const char *attempt, const char *destination)
{
	struct config_job	j = test_job(tenant, job_id, attempt,
				    destination);

	test_put_job(w, &j);
}

/*
 * state.db
 */

struct store *
test_store_open(const char *dir, int busy_ms, int create)
{
	struct store		*s = NULL;
	struct store_opts	 opts;
	char			 path[PATH_MAX];

	(void)snprintf(path, sizeof(path), "%s", test_location(dir, "state.db"));
	memset(&opts, 0, sizeof(opts));
	opts.busy_ms = busy_ms;
	opts.create = create;
	ck_assert_int_eq(store_open(path, &opts, &s), STORE_OK);
	ck_assert_ptr_nonnull(s);
	return s;
}

struct group *
test_group_new(const char *state_path, int threaded,
    struct config_cache *configs)
{
	struct group		*g = NULL;
	struct group_opts	 o;

	memset(&o, 0, sizeof(o));
	o.state_path = state_path;
	o.busy_ms = 1000;
	o.threaded = threaded;
	o.configs = configs;
	ck_assert_int_eq(group_new(&o, &g), 0);
	ck_assert_ptr_nonnull(g);
	return g;
}

enum hb_result
test_accept(struct store *s, struct config *c, const char *tenant,
    const char *job_id, int64_t now)
{
	struct accept_req	 req;
	struct accept_res	 res;
	struct obs		 o;
	char			 doc[HB_ID_MAX + 64], why[128];
	int			 n;

	n = snprintf(doc, sizeof(doc), "{\"id\":\"%s\","
	    "\"status\":\"Completed\"}", job_id);
	ck_assert(n > 0 && (size_t)n < sizeof(doc));
	ck_assert_msg(tornado_parse_poll(doc, (size_t)n, &o, why,
	    sizeof(why)) == TORNADO_OK, "parse: %s", why);
	memset(&req, 0, sizeof(req));
	req.tenant = tenant;
	req.obs = &o;
	req.now_ms = now;
	return accept_observation(s, c, &req, &res);
}

enum store_status
test_pick1(struct store *s, int64_t now, const char *cursor,
    struct store_row *r, int *found)
{
	enum store_status	rc;

	memset(r, 0, sizeof(*r));
	rc = store_outbox_pick(s, now, cursor, r, 1, found);
	return rc;
}

enum store_status
test_claim1(struct store *s, const struct store_row *r, const char *owner,
    int64_t now, int64_t lease_until, struct store_lease *l, int *claimed)
{
	struct store_claim_row	c;
	enum store_status	rc;

	memset(&c, 0, sizeof(c));
	c.row = *r;
	c.lease_until = lease_until;
	rc = store_outbox_claim(s, &c, 1, owner, now);
	*l = c.lease;
	*claimed = c.claimed;
	return rc;
}

enum store_status
test_finish1(struct store *s, const struct store_lease *l, const char *owner,
    enum store_outcome out, int64_t now, int64_t next_at, long http_status,
    const char *error, int *lost)
{
	struct store_finish	f;
	enum store_status	rc;

	memset(&f, 0, sizeof(f));
	f.lease = l;
	f.out = out;
	f.ended = now;
	f.next_at = next_at;
	f.http_status = http_status;
	f.error = error;
	rc = store_outbox_finish(s, &f, 1, owner, NULL, NULL, 0);
	*lost = f.lost;
	return rc;
}

/*
 * Either file, through a connection of the test's own
 */

/* A connection of the test's own to PostgreSQL, with the state's names. */
static struct db *
pg_connect(const char *loc, const struct db_text *t, size_t n)
{
	struct db	*db = NULL;
	char		 why[256];

	ck_assert_msg(db_open_pg(loc, 10000, 0, t, n, &db, why, sizeof(why)) ==
	    DB_OK, "PostgreSQL: %s", why);
	ck_assert_msg(db_session(db, "SET search_path = hookbox_state,"
	    " hookbox_config") == DB_OK, "%s", db_errmsg(db));
	return db;
}

/*
 * The test process's own PostgreSQL connection, kept from one query to
 * the next (a connection costs more than most tests' queries), with
 * every text it was asked for, by content.
 */
#define OWN_MAX	256
static struct db	*own;
static char		 own_loc[PATH_MAX];
static struct db_text	 own_text[OWN_MAX];
static size_t		 own_n;

static int
same_text(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

struct db_stmt *
test_own_stmt(const char *loc, const char *sqlite, const char *pg,
    struct db **db)
{
	struct db_stmt	*st;
	size_t		 i;

	if (own != NULL && strcmp(own_loc, loc) != 0) {
		db_close(own);
		own = NULL;
	}
	for (i = 0; i < own_n; i++)
		if (same_text(own_text[i].sqlite, sqlite) &&
		    same_text(own_text[i].pg, pg))
			break;
	if (i == own_n) {
		ck_assert_int_lt(own_n, OWN_MAX);
		ck_assert_ptr_nonnull(own_text[i].sqlite = strdup(sqlite));
		if (pg != NULL)
			ck_assert_ptr_nonnull(own_text[i].pg = strdup(pg));
		own_n++;
	}
	if (own == NULL) {
		own = pg_connect(loc, own_text, OWN_MAX);
		(void)snprintf(own_loc, sizeof(own_loc), "%s", loc);
	}
	ck_assert_msg((st = db_stmt(own, i)) != NULL, "%s: %s", sqlite,
	    db_errmsg(own));
	*db = own;
	return st;
}

long long
test_db_int(const char *path, const char *sql)
{
	sqlite3		*db = NULL;
	sqlite3_stmt	*s = NULL;
	struct db	*pg;
	struct db_stmt	*st;
	enum db_rc	 rc;
	long long	 v = -1;
	int		 tries;

	if (db_is_postgres(path)) {
		/* Once more after the server ended the connection. */
		for (tries = 0; tries < 2; tries++) {
			st = test_own_stmt(path, sql, NULL, &pg);
			if ((rc = db_step(st)) == DB_ROW) {
				v = db_col_int64(st, 0);
				db_reset(st);
				return v;
			}
			if (rc != DB_GONE)
				break;
		}
		ck_assert_msg(rc == DB_DONE, "%s: %s", sql, db_errmsg(pg));
		return v;
	}
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY,
	    NULL), SQLITE_OK);
	ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK,
	    "%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

void
test_pg_plan(const char *loc, const char *pg, const char *arg, char *buf,
    size_t len)
{
	char		 sql[4096];
	struct db	*db;
	struct db_stmt	*st;
	size_t		 o = 0;
	enum db_rc	 rc;
	int		 n;

	n = snprintf(sql, sizeof(sql), "EXPLAIN %s", pg);
	ck_assert(n >= 0 && (size_t)n < sizeof(sql));
	st = test_own_stmt(loc, sql, NULL, &db);
	ck_assert_int_eq(db_bind_text(st, 1, arg), DB_OK);
	buf[0] = '\0';
	while ((rc = db_step(st)) == DB_ROW) {
		n = snprintf(buf + o, len - o, "%s\n", db_col_text(st, 0));
		ck_assert(n >= 0 && (size_t)n < len - o);
		o += (size_t)n;
	}
	ck_assert_msg(rc == DB_DONE, "%s: %s", sql, db_errmsg(db));
	db_reset(st);
}

void
test_db_exec(const char *path, const char *sql)
{
	sqlite3		*db = NULL;
	struct db	*pg;
	char		*err = NULL;
	int		 rc;

	if (db_is_postgres(path)) {
		pg = pg_connect(path, NULL, 0);
		ck_assert_msg(db_exec(pg, sql) == DB_OK, "%s: %s", sql,
		    db_errmsg(pg));
		db_close(pg);
		return;
	}
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE,
	    NULL), SQLITE_OK);
	/* As an operator's sqlite3 would: a lock held a moment is waited. */
	(void)sqlite3_busy_timeout(db, 5 * TEST_BUSY_MS);
	rc = sqlite3_exec(db, sql, NULL, NULL, &err);
	ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql,
	    err != NULL ? err : "?");
	sqlite3_close(db);
}

int
test_each_fd(int (*fn)(const char *, const char *, void *), void *arg)
{
	struct dirent	*de;
	DIR		*d;
	char		 link[PATH_MAX], target[PATH_MAX];
	ssize_t		 n;
	int		 rc = 0;

	ck_assert_ptr_nonnull(d = opendir("/proc/self/fd"));
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		ck_assert_int_lt(snprintf(link, sizeof(link),
		    "/proc/self/fd/%s", de->d_name), (int)sizeof(link));
		if ((n = readlink(link, target, sizeof(target) - 1)) < 0)
			continue;
		target[n] = '\0';
		rc = fn(de->d_name, target, arg);
	}
	closedir(d);
	return rc;
}

void
test_state_snapshot(const char *state_path, char *buf, size_t len)
{
	snprintf(buf, len, "r%lld j%lld a%lld o%lld c%lld",
	    test_db_int(state_path, "SELECT count(*) FROM receipts"),
	    test_db_int(state_path, "SELECT count(*) FROM job_state"),
	    test_db_int(state_path, "SELECT count(*) FROM accepted"),
	    test_db_int(state_path, "SELECT count(*) FROM outbox"),
	    test_db_int(state_path, "SELECT count(*) FROM conflicts"));
}

/*
 * The two backends' schemas
 */

enum { SCHEMA_TABLES, SCHEMA_COLUMNS, SCHEMA_INDEXES, SCHEMA__N };

/*
 * What each backend says of its tables (on PostgreSQL, those of schema
 * ?1): their names; table ?2's columns, in order, with their declared
 * type, whether NOT NULL (or in the primary key) and their place in the
 * primary key (0: none); its indexes but the primary key's, with a name
 * ("" for a UNIQUE constraint's), unique, partial and the columns in
 * order.
 */
static const struct db_text schema_text[SCHEMA__N] = {
	[SCHEMA_TABLES] = { "SELECT name FROM sqlite_schema"
	    " WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
	    " ORDER BY name",
	    "SELECT table_name FROM information_schema.tables"
	    " WHERE table_schema = ?1 AND table_type = 'BASE TABLE'"
	    " ORDER BY table_name COLLATE \"C\"" },
	[SCHEMA_COLUMNS] = { "SELECT name, type, \"notnull\" OR pk > 0, pk"
	    " FROM pragma_table_info(?2) ORDER BY cid",
	    "SELECT c.column_name, c.data_type,"
	    " (c.is_nullable = 'NO')::int,"
	    " coalesce((SELECT k.n FROM pg_index i,"
	    " unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, n)"
	    " WHERE i.indrelid = format('%I.%I', ?1::text, ?2::text)::regclass"
	    " AND i.indisprimary AND k.attnum = c.ordinal_position), 0)"
	    " FROM information_schema.columns c"
	    " WHERE c.table_schema = ?1 AND c.table_name = ?2"
	    " ORDER BY c.ordinal_position" },
	[SCHEMA_INDEXES] = { "SELECT iif(il.origin = 'u', '', il.name),"
	    " il.\"unique\", il.partial,"
	    " (SELECT group_concat(name, ',') FROM"
	    " (SELECT name FROM pragma_index_info(il.name) ORDER BY seqno))"
	    " FROM pragma_index_list(?2) il WHERE il.origin <> 'pk'"
	    " ORDER BY 1, 4",
	    "SELECT * FROM (SELECT CASE WHEN EXISTS"
	    " (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid"
	    " AND k.contype = 'u') THEN '' ELSE ic.relname::text END AS name,"
	    " i.indisunique::int, (i.indpred IS NOT NULL)::int,"
	    " (SELECT string_agg(a.attname, ',' ORDER BY k.n)"
	    " FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, n)"
	    " JOIN pg_attribute a ON a.attrelid = i.indrelid"
	    " AND a.attnum = k.attnum) AS cols"
	    " FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid"
	    " WHERE i.indrelid = format('%I.%I', ?1::text, ?2::text)::regclass"
	    " AND NOT i.indisprimary) x"
	    " ORDER BY name COLLATE \"C\", cols COLLATE \"C\"" },
};

/* A declared type in the one vocabulary. */
static void
schema_type(const char *type, char *buf, size_t len)
{
	static const struct {
		const char	*type, *word;
	} types[] = {
		{ "integer", "integer" }, { "bigint", "integer" },
		{ "smallint", "integer" }, { "int", "integer" },
		{ "text", "text" }, { "character varying", "text" },
		{ "blob", "blob" }, { "bytea", "blob" },
		{ "boolean", "boolean" },
	};
	size_t	i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcasecmp(type, types[i].type) == 0) {
			(void)snprintf(buf, len, "%s", types[i].word);
			return;
		}
	(void)snprintf(buf, len, "?%s", type);
}

/* Appends to buf (len bytes) at *o; the test fails when it does not fit. */
static void
schema_put(char *buf, size_t len, size_t *o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
schema_put(char *buf, size_t len, size_t *o, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *o, len - *o, fmt, ap);
	va_end(ap);
	ck_assert_msg(n >= 0 && (size_t)n < len - *o, "schema text too long");
	*o += (size_t)n;
}

/* The text of table on db (see test_schema()). */
static void
schema_table(struct db *db, const char *schema, const char *table, char *buf,
    size_t len)
{
	struct db_stmt	*st;
	char		 pk[16][64], type[64];
	size_t		 o = 0;
	int64_t		 at;
	int		 i, npk = 0;
	enum db_rc	 rc;

	memset(pk, 0, sizeof(pk));
	ck_assert_ptr_nonnull(st = db_stmt(db, SCHEMA_COLUMNS));
	ck_assert_int_eq(db_bind_text(st, 1, schema), DB_OK);
	ck_assert_int_eq(db_bind_text(st, 2, table), DB_OK);
	schema_put(buf, len, &o, "columns:");
	for (i = 0; (rc = db_step(st)) == DB_ROW; i++) {
		schema_type(db_col_text(st, 1), type, sizeof(type));
		schema_put(buf, len, &o, "%s %s %s%s", i > 0 ? "," : "",
		    db_col_text(st, 0), type, db_col_int64(st, 2) ?
		    " not null" : "");
		if ((at = db_col_int64(st, 3)) > 0) {
			ck_assert_int_le(at, 16);
			ck_assert_int_eq(db_col_copy(st, 0, pk[at - 1],
			    sizeof(pk[0])), 0);
			npk = at > npk ? (int)at : npk;
		}
	}
	ck_assert_msg(rc == DB_DONE, "%s: %s", table, db_errmsg(db));
	schema_put(buf, len, &o, "\nprimary key:");
	for (i = 0; i < npk; i++)
		schema_put(buf, len, &o, " %s", pk[i]);
	ck_assert_ptr_nonnull(st = db_stmt(db, SCHEMA_INDEXES));
	ck_assert_int_eq(db_bind_text(st, 1, schema), DB_OK);
	ck_assert_int_eq(db_bind_text(st, 2, table), DB_OK);
	while ((rc = db_step(st)) == DB_ROW)
		schema_put(buf, len, &o, "\n%sindex %s(%s)%s",
		    db_col_int64(st, 1) ? "unique " : "", db_col_text(st, 0),
		    db_col_text(st, 3), db_col_int64(st, 2) ? " partial" : "");
	ck_assert_msg(rc == DB_DONE, "%s: %s", table, db_errmsg(db));
}

/* The texts of loc's tables, table name -> text (see test_schema_agree()). */
static cJSON *
schema_of(const char *loc, const char *schema)
{
	struct db	*db = NULL;
	struct db_stmt	*st;
	cJSON		*out;
	char		 why[256], tables[64][64], text[4096];
	int		 i, n = 0;
	enum db_rc	 rc;

	if (db_is_postgres(loc))
		ck_assert_msg(db_open_pg(loc, 10000, 0, schema_text,
		    SCHEMA__N, &db, why, sizeof(why)) == DB_OK,
		    "PostgreSQL: %s", why);
	else
		ck_assert_int_eq(db_open_sqlite(loc, DB_OPEN_READONLY,
		    schema_text, SCHEMA__N, &db), DB_OK);
	/* The names first: a statement is stepped to its end at a time. */
	ck_assert_ptr_nonnull(st = db_stmt(db, SCHEMA_TABLES));
	if (db_is_postgres(loc))
		ck_assert_int_eq(db_bind_text(st, 1, schema), DB_OK);
	while ((rc = db_step(st)) == DB_ROW) {
		ck_assert_int_lt(n, 64);
		ck_assert_int_eq(db_col_copy(st, 0, tables[n++],
		    sizeof(tables[0])), 0);
	}
	ck_assert_msg(rc == DB_DONE, "%s", db_errmsg(db));
	ck_assert_int_gt(n, 0);
	ck_assert_ptr_nonnull(out = cJSON_CreateObject());
	for (i = 0; i < n; i++) {
		schema_table(db, schema, tables[i], text, sizeof(text));
		ck_assert_ptr_nonnull(cJSON_AddStringToObject(out, tables[i],
		    text));
	}
	db_close(db);
	return out;
}

void
test_schema_agree(const char *lite_path, const char *pg_loc,
    const char *schema, int ntables)
{
	cJSON	*lite, *pg;
	cJSON	*t, *u;

	lite = schema_of(lite_path, NULL);
	pg = schema_of(pg_loc, schema);
	ck_assert_int_eq(cJSON_GetArraySize(lite), ntables);
	cJSON_ArrayForEach(t, lite) {
		u = cJSON_GetObjectItemCaseSensitive(pg, t->string);
		ck_assert_msg(u != NULL, "table %s: on SQLite, not on"
		    " PostgreSQL", t->string);
		ck_assert_msg(strcmp(t->valuestring, u->valuestring) == 0,
		    "table %s differs:\nSQLite:\n%s\nPostgreSQL:\n%s",
		    t->string, t->valuestring, u->valuestring);
	}
	cJSON_ArrayForEach(u, pg)
		ck_assert_msg(strcmp(u->string, "schema_version") == 0 ||
		    cJSON_GetObjectItemCaseSensitive(lite, u->string) != NULL,
		    "table %s: on PostgreSQL, not on SQLite", u->string);
	cJSON_Delete(lite);
	cJSON_Delete(pg);
}
