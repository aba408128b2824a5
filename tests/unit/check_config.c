/*
 * check_config.c: tests of lib/config/config.c, lib/config/admin.c and
 * lib/config/edit.c, the configuration through their API, with a few
 * looks at the database past it (what is stored for a key, the schema
 * version).  The suite runs on SQLite, then on PostgreSQL; what only a
 * file can show (its descriptors and mode, its bytes) is SQLite's alone,
 * and PostgreSQL has its own tests of the same promises (a reader that
 * cannot write, a role that may only read).
 *
 * Each test gets a fresh config.db in its own directory (or a database
 * of its own) and an open writer, w.  The directories live under one per
 * test case, removed by the parent process even when a test fails.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <check.h>
#include <cJSON.h>
#include <sodium.h>
#include <sqlite3.h>

#include "base/fault.h"
#include "base/util.h"
#include "config/admin.h"
#include "config/bulk.h"
#include "config/cache.h"
#include "config/check.h"
#include "config/config_int.h"
#include "config/edit.h"
#include "config/map.h"
#include "config/registrar.h"
#include "db/access.h"
#include "db/db.h"
#include "db/pg_schema.h"
#include "provider/auth.h"
#include "provider/mapping.h"
#include "provider/scheme.h"
#include "testutil.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

#define BUSY_MS		2000

/* Secrets that must never show where they do not belong. */
#define HMAC_SECRET	"hmac-secret-7f3a9c1e5b2d"
#define KEY_SECRET	"hb_live_key_4e8b1d6f0a2c"
#define API_KEY		"tornado-api-key-9d2e7b4a"
#define DEST_SECRET	"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

static char		 dir[PATH_MAX];		/* per test */
static char		 dbpath[PATH_MAX];
static struct config	*w;

static Suite	*config_suite(void);

/*
 * Fixtures
 */

static void
copy(char *dst, size_t len, const char *src)
{
	ck_assert_int_lt(snprintf(dst, len, "%s", src), (int)len);
}

#define SET(dst, src)	copy((dst), sizeof(dst), (src))

/* In each test's process: a fresh config.db and a writer on it. */
static void
setup(void)
{
	copy(dir, sizeof(dir), test_tmpdir());
	/* dir/config.db, or the test's PostgreSQL database. */
	copy(dbpath, sizeof(dbpath), test_location(dir, "config.db"));
	w = test_config_create(dir);
}

static void
teardown(void)
{
	config_close(w);
	w = NULL;
	test_rmdir(dir);
}

/*
 * Rows: the shared builders (testutil.h) on the writer w.
 */

static void
add_secret(const char *ep, const char *secret, int64_t expires_at)
{
	const char	*why = NULL;

	ck_assert_int_eq(config_secret_add(w, ep,
	    (const unsigned char *)secret, strlen(secret), expires_at, &why),
	    CONFIG_OK);
}

/*
 * CONFIG_INVALID with a reason that mentions what: why must be a
 * variable in scope, passed to the call as &why.
 */
#define CK_INVALID(call, what) do {					\
	why = NULL;							\
	ck_assert_int_eq((call), CONFIG_INVALID);			\
	ck_assert_msg(why != NULL, "CONFIG_INVALID without a reason");	\
	ck_assert_msg(strcasestr(why, (what)) != NULL,			\
	    "reason \"%s\" does not mention \"%s\"", why, (what));	\
} while (0)

/* The number of rows config_list() returns for a table. */
static int
count(struct config *c, enum config_table t)
{
	cJSON	*arr;
	int	 n;

	ck_assert_int_eq(config_list(c, t, NULL, &arr), CONFIG_OK);
	ck_assert_ptr_nonnull(arr);
	ck_assert(cJSON_IsArray(arr));
	n = cJSON_GetArraySize(arr);
	cJSON_Delete(arr);
	return n;
}

/*
 * The database directly, past the library
 */

/*
 * A connection of the test's own to the configuration: SQLite's file
 * read-write, or the PostgreSQL database as its admin (the names of
 * hookbox_config without their schema).  text[0..n-1] are its
 * statements.
 */
static struct db *
raw_open(const struct db_text *text, size_t n)
{
	struct db	*db = NULL;
	char		 why[256];

	if (test_backend == TEST_SQLITE)
		ck_assert_int_eq(db_open_sqlite(dbpath, SQLITE_OPEN_READWRITE,
		    text, n, &db), DB_OK);
	else {
		/*
		 * The test's own DDL: a budget no load reaches.  A CREATE
		 * SCHEMA here once waited more than 5 s for a lock on a
		 * loaded 2-core machine; what held it was not found.
		 */
		ck_assert_msg(db_open_pg(dbpath, 30000, 0, text, n, &db, why,
		    sizeof(why)) == DB_OK, "PostgreSQL: %s", why);
		ck_assert_int_eq(db_exec(db,
		    "SET search_path = hookbox_config"), DB_OK);
	}
	return db;
}

/* Runs lite on SQLite or pg on PostgreSQL (NULL: lite) on db. */
static void
raw_run(struct db *db, const char *lite, const char *pg)
{
	const char	*sql;

	sql = test_backend == TEST_SQLITE || pg == NULL ? lite : pg;
	ck_assert_msg(db_exec(db, sql) == DB_OK, "%s: %s", sql,
	    db_errmsg(db));
}

/* raw_run() on a connection of its own. */
static void
raw_exec(const char *lite, const char *pg)
{
	struct db	*db;

	db = raw_open(NULL, 0);
	raw_run(db, lite, pg);
	db_close(db);
}

/* Column 0 of the first row of sql as an integer; -1 without a row. */
static long long
raw_int(const char *sql)
{
	const struct db_text	 text[] = { { sql, NULL } };
	struct db		*db;
	struct db_stmt		*st;
	long long		 v = -1;

	db = raw_open(text, 1);
	ck_assert_ptr_nonnull(st = db_stmt(db, 0));
	if (db_step(st) == DB_ROW)
		v = db_col_int64(st, 0);
	db_reset(st);
	db_close(db);
	return v;
}

/* The columns of "SELECT * FROM secrets". */
#define SECRET_COLS	5

/*
 * Runs a query and looks for needle in each of its cols columns of every
 * row, as bytes.  Returns the number of rows; *found counts the hits.
 */
static int
raw_scan(const char *sql, int cols, const void *needle, size_t nlen,
    int *found)
{
	const struct db_text	 text[] = { { sql, NULL } };
	struct db		*db;
	struct db_stmt		*st;
	const void		*v;
	size_t			 n;
	int			 rows = 0, i;
	enum db_rc		 rc;

	*found = 0;
	db = raw_open(text, 1);
	ck_assert_ptr_nonnull(st = db_stmt(db, 0));
	while ((rc = db_step(st)) == DB_ROW) {
		rows++;
		for (i = 0; i < cols; i++) {
			/* PostgreSQL's bytea arrives as hex: decoded here. */
			v = db_col_blob(st, i, &n);
			if (v != NULL && memmem(v, n, needle, nlen) != NULL)
				(*found)++;
		}
	}
	ck_assert_int_eq(rc, DB_DONE);
	db_close(db);
	return rows;
}

/* Non-zero when the file at path holds needle anywhere. */
static int
file_has(const char *path, const void *needle, size_t nlen)
{
	FILE	*f;
	char	*buf;
	long	 len;
	int	 has;

	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	ck_assert_int_gt(len, 0);
	rewind(f);
	buf = malloc((size_t)len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	has = memmem(buf, (size_t)len, needle, nlen) != NULL;
	free(buf);
	return has;
}

/* fd_accmode()'s walk: the file sought, and the mode found so far. */
struct accmode {
	const char	*path;
	int		 mode;
};

static int
accmode_of(const char *fd, const char *target, void *arg)
{
	struct accmode	*a = arg;
	FILE		*f;
	char		 link[PATH_MAX], line[256];
	int		 m = -1;

	if (strcmp(target, a->path) != 0)
		return 0;
	ck_assert_int_lt(snprintf(link, sizeof(link), "/proc/self/fdinfo/%s",
	    fd), (int)sizeof(link));
	f = fopen(link, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "flags:", 6) == 0)
			m = (int)(strtoul(line + 6, NULL, 8) & O_ACCMODE);
	fclose(f);
	ck_assert_int_ne(m, -1);
	a->mode = a->mode == -1 || a->mode == m ? m : -2;
	return 0;
}

/*
 * The access mode (O_RDONLY, O_RDWR) of this process's descriptors open
 * on path: -1 when none is, -2 when they disagree.  Linux: reads
 * /proc/self/fd and /proc/self/fdinfo.
 */
static int
fd_accmode(const char *path)
{
	struct accmode	a = { path, -1 };

	(void)test_each_fd(accmode_of, &a);
	return a.mode;
}

/*
 * Creating and opening
 */

START_TEST(test_create)
{
	struct config	*c;
	struct stat	 sb;
	char		 path[PATH_MAX];
	FILE		*f;

	/* The fixture made config.db: a second create refuses. */
	ck_assert_int_eq(config_create(dbpath), CONFIG_EXISTS);
	ck_assert_int_eq(count(w, CONFIG_TENANTS), 0);

	/* Mode 0640, never wider. */
	umask(022);
	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/new.db", dir),
	    (int)sizeof(path));
	ck_assert_int_eq(config_create(path), CONFIG_OK);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 07777, 0640);
	ck_assert_int_eq(config_create(path), CONFIG_EXISTS);
	ck_assert_int_eq(config_open(path, CONFIG_READ, 0, &c), CONFIG_OK);
	ck_assert_int_eq(count(c, CONFIG_JOBS), 0);
	config_close(c);

	/* Any existing file is left alone. */
	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/other", dir),
	    (int)sizeof(path));
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not a database", f);
	fclose(f);
	ck_assert_int_eq(config_create(path), CONFIG_EXISTS);
	ck_assert_int_ne(file_has(path, "not a database", 14), 0);

	/* No such directory. */
	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/no/such.db", dir),
	    (int)sizeof(path));
	ck_assert_int_eq(config_create(path), CONFIG_ERROR);
	ck_assert_int_ne(access(path, F_OK), 0);

	config_close(NULL);
}
END_TEST

START_TEST(test_open_version)
{
	struct config	*c;

	config_close(w);
	w = NULL;

	/* Another schema version: refused in both modes. */
	raw_exec("PRAGMA user_version=99",
	    "UPDATE schema_version SET version = 99");
	c = (struct config *)&c;	/* not NULL: see that it is reset */
	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, 0, &c), CONFIG_ERROR);
	ck_assert_ptr_null(c);
	c = (struct config *)&c;
	ck_assert_int_eq(config_open(dbpath, CONFIG_WRITE, 0, &c),
	    CONFIG_ERROR);
	ck_assert_ptr_null(c);
	/* PostgreSQL: no version at all. */
	raw_exec("PRAGMA user_version=0", "DELETE FROM schema_version");
	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, 0, &c), CONFIG_ERROR);
	ck_assert_int_eq(config_open(dbpath, CONFIG_WRITE, 0, &c),
	    CONFIG_ERROR);

	/* An older one: for config_upgrade() alone, in either mode. */
	raw_exec("PRAGMA user_version=1",
	    "INSERT INTO schema_version(version) VALUES (1)");
	c = (struct config *)&c;
	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, 0, &c), CONFIG_OLD);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(config_open(dbpath, CONFIG_WRITE, 0, &c), CONFIG_OLD);
	ck_assert_ptr_null(c);

	/* The version was the only thing wrong. */
	raw_exec("PRAGMA user_version=" HB_STR(CONFIG_SCHEMA_VERSION),
	    "UPDATE schema_version SET version = "
	    HB_STR(CONFIG_SCHEMA_VERSION));
	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, 0, &c), CONFIG_OK);
	ck_assert_ptr_nonnull(c);
	config_close(c);
}
END_TEST

START_TEST(test_open_bad_files)
{
	struct config	*c;
	char		 path[PATH_MAX];
	FILE		*f;
	int		 i;

	/* Missing: an error in either mode, and nothing is created. */
	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/missing.db", dir),
	    (int)sizeof(path));
	ck_assert_int_eq(config_open(path, CONFIG_READ, 0, &c), CONFIG_ERROR);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(config_open(path, CONFIG_WRITE, 0, &c), CONFIG_ERROR);
	ck_assert_ptr_null(c);
	ck_assert_int_ne(access(path, F_OK), 0);

	/* Not a database. */
	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/text.db", dir),
	    (int)sizeof(path));
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (i = 0; i < 200; i++)
		fputs("this is not an SQLite database\n", f);
	fclose(f);
	ck_assert_int_eq(config_open(path, CONFIG_READ, 0, &c), CONFIG_ERROR);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(config_open(path, CONFIG_WRITE, 0, &c), CONFIG_ERROR);
	ck_assert_ptr_null(c);

	/* An empty file is an empty database, of version 0. */
	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/empty.db", dir),
	    (int)sizeof(path));
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(config_open(path, CONFIG_READ, 0, &c), CONFIG_ERROR);
	ck_assert_int_eq(config_open(path, CONFIG_WRITE, 0, &c), CONFIG_ERROR);
}
END_TEST


/*
 * PostgreSQL: config_create() makes the schema hookbox_config when it is
 * missing and answers CONFIG_EXISTS when it is there, so that init may
 * run twice; without it, opening is refused in both modes.
 */
START_TEST(test_pg_create)
{
	struct config	*c;

	if (test_backend != TEST_POSTGRES)
		return;
	ck_assert_int_eq(config_create(dbpath), CONFIG_EXISTS);
	ck_assert_int_eq(raw_int("SELECT version FROM schema_version"),
	    CONFIG_SCHEMA_VERSION);
	config_close(w);
	w = NULL;
	raw_exec(NULL, "DROP SCHEMA hookbox_config CASCADE");
	c = (struct config *)&c;
	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, 0, &c),
	    CONFIG_ERROR);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(config_open(dbpath, CONFIG_WRITE, 0, &c),
	    CONFIG_ERROR);
	ck_assert_ptr_null(c);
	/* Opening made nothing. */
	ck_assert_int_eq(raw_int("SELECT count(*) FROM pg_namespace"
	    " WHERE nspname = 'hookbox_config'"), 0);

	ck_assert_int_eq(config_create(dbpath), CONFIG_OK);
	ck_assert_int_eq(config_create(dbpath), CONFIG_EXISTS);
	ck_assert_int_eq(config_open(dbpath, CONFIG_WRITE, 0, &w), CONFIG_OK);
	ck_assert_int_eq(count(w, CONFIG_TENANTS), 0);
	test_add_tenant(w, "acme", 1);
	/* A second init leaves the rows alone. */
	ck_assert_int_eq(config_create(dbpath), CONFIG_EXISTS);
	ck_assert_int_eq(count(w, CONFIG_TENANTS), 1);

	/* A server that is not there: a retry later, not a failure. */
	c = (struct config *)&c;
	ck_assert_int_eq(config_open("host=/nonexistent dbname=x",
	    CONFIG_READ, 1000, &c), CONFIG_BUSY);
	ck_assert_ptr_null(c);
}
END_TEST

/*
 * PostgreSQL: a CONFIG_READ handle's session cannot write, even as a
 * role that could (the admin here): read-only by construction.  It stays
 * so on a connection opened again after the server dropped it.
 */
START_TEST(test_pg_reader)
{
	struct config		*r;
	struct config_tenant	 t;
	int			 i;
	enum config_status	 rc;

	if (test_backend != TEST_POSTGRES)
		return;
	test_add_tenant(w, "acme", 1);
	config_close(w);
	w = NULL;
	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, BUSY_MS, &r),
	    CONFIG_OK);
	ck_assert_int_eq(config_tenant_get(r, "acme", &t), CONFIG_OK);
	ck_assert_int_eq(db_exec(r->db, "INSERT INTO tenants(id, created_at)"
	    " VALUES ('evil', 1)"), DB_READONLY);
	ck_assert_int_eq(db_exec(r->db, "UPDATE tenants SET active = 0"),
	    DB_READONLY);
	ck_assert_int_eq(db_exec(r->db, "DROP TABLE jobs"), DB_READONLY);

	/* The server ends the reader's session; the next ones are new. */
	raw_exec(NULL, "SELECT pg_terminate_backend(pid) FROM"
	    " pg_stat_activity WHERE datname = current_database()"
	    " AND pid <> pg_backend_pid()");
	for (i = 0; i < 5; i++)
		if ((rc = config_tenant_get(r, "acme", &t)) == CONFIG_OK)
			break;
		else
			ck_assert_int_eq(rc, CONFIG_BUSY);
	ck_assert_int_eq(rc, CONFIG_OK);
	ck_assert_int_eq(db_exec(r->db, "INSERT INTO tenants(id, created_at)"
	    " VALUES ('evil', 1)"), DB_READONLY);
	config_close(r);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM tenants"), 1);
}
END_TEST

/* The value of key (up to a space) in a key=value conninfo; static. */
static const char *
conninfo_get(const char *info, const char *key)
{
	static char	 v[PATH_MAX];
	const char	*p = info, *e;
	size_t		 klen = strlen(key);

	v[0] = '\0';
	for (; (p = strstr(p, key)) != NULL; p += klen)
		if ((p == info || p[-1] == ' ') && p[klen] == '=') {
			e = p + klen + 1;
			copy(v, sizeof(v), e);
			v[strcspn(v, " ")] = '\0';
		}
	return v;
}

/*
 * PostgreSQL: the session's settings reach a server named by URI too
 * (as query parameters); a lock held past busy_ms is CONFIG_BUSY, in
 * about that time.
 */
START_TEST(test_pg_uri_busy)
{
	struct config		*r;
	struct config_tenant	 t;
	struct db		*db;
	char			 uri[PATH_MAX], host[PATH_MAX], user[128];
	long long		 t0;

	if (test_backend != TEST_POSTGRES)
		return;
	test_add_tenant(w, "acme", 1);
	/* The last of each key wins, as in libpq. */
	copy(host, sizeof(host), conninfo_get(dbpath, "host"));
	copy(user, sizeof(user), conninfo_get(dbpath, "user"));
	ck_assert_int_lt(snprintf(uri, sizeof(uri),
	    "postgresql:///%s?host=%s&user=%s", conninfo_get(dbpath, "dbname"),
	    host, user), (int)sizeof(uri));
	ck_assert_int_eq(config_open(uri, CONFIG_READ, BUSY_MS, &r),
	    CONFIG_OK);
	ck_assert_int_eq(config_tenant_get(r, "acme", &t), CONFIG_OK);
	ck_assert_int_eq(db_exec(r->db, "INSERT INTO tenants(id, created_at)"
	    " VALUES ('evil', 1)"), DB_READONLY);
	config_close(r);

	/* An admin holds the table; a reader gives up after its budget. */
	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, 300, &r),
	    CONFIG_OK);
	db = raw_open(NULL, 0);
	raw_run(db, NULL, "BEGIN; LOCK TABLE tenants IN ACCESS EXCLUSIVE MODE");
	t0 = util_now_ms();
	ck_assert_int_eq(config_tenant_get(r, "acme", &t), CONFIG_BUSY);
	ck_assert_int_ge(util_now_ms() - t0, 250);
	ck_assert_int_lt(util_now_ms() - t0, BUSY_MS);
	raw_run(db, NULL, "ROLLBACK");
	db_close(db);
	ck_assert_int_eq(config_tenant_get(r, "acme", &t), CONFIG_OK);
	config_close(r);
}
END_TEST

/*
 * PostgreSQL: a serving role with pg_schema_grants() reads the
 * configuration through the library, and cannot write it: not through
 * a handle for writing, nor by SQL of its own.
 */
START_TEST(test_pg_grants)
{
	static const struct db_text	 none[] = { { "SELECT 1", NULL } };
	struct config			*r, *c;
	struct config_tenant		 t;
	struct db			*db;
	char				 role[32], sql[128], grants[1024];
	char				 info[PATH_MAX + 64], why[256];
	const char			*whyc;

	if (test_backend != TEST_POSTGRES)
		return;
	test_add_tenant(w, "acme", 1);
	ck_assert_int_lt(snprintf(role, sizeof(role), "hb_cfg_%ld",
	    (long)getpid()), (int)sizeof(role));
	raw_exec(NULL, pg_schema_state);
	ck_assert_int_lt(snprintf(sql, sizeof(sql), "DROP ROLE IF EXISTS %s;"
	    " CREATE ROLE %s LOGIN", role, role), (int)sizeof(sql));
	raw_exec(NULL, sql);
	ck_assert_int_eq(pg_schema_grants(role, grants, sizeof(grants)), 0);
	raw_exec(NULL, grants);
	ck_assert_int_lt(snprintf(info, sizeof(info), "%s user=%s", dbpath,
	    role), (int)sizeof(info));

	ck_assert_int_eq(config_open(info, CONFIG_READ, BUSY_MS, &r),
	    CONFIG_OK);
	ck_assert_int_eq(config_tenant_get(r, "acme", &t), CONFIG_OK);
	ck_assert_int_eq(count(r, CONFIG_TENANTS), 1);
	config_close(r);

	/*
	 * A writer's handle opens (it reads the version) and writes nothing:
	 * denied, told apart from an error.
	 */
	ck_assert_int_eq(config_open(info, CONFIG_WRITE, BUSY_MS, &c),
	    CONFIG_OK);
	t = test_tenant("evil");
	ck_assert_int_eq(config_tenant_add(c, &t, NULL, 0, &whyc),
	    CONFIG_DENIED);
	ck_assert_int_eq(config_remove(c, CONFIG_TENANTS, "acme", NULL),
	    CONFIG_DENIED);
	config_close(c);

	ck_assert_msg(db_open_pg(info, 5000, 0, none, 1, &db, why,
	    sizeof(why)) == DB_OK, "PostgreSQL: %s", why);
	ck_assert_int_eq(db_exec(db, "INSERT INTO hookbox_config.tenants"
	    "(id, created_at) VALUES ('evil', 1)"), DB_DENIED);
	ck_assert_int_eq(db_exec(db, "UPDATE hookbox_config.secrets"
	    " SET expires_at = NULL"), DB_DENIED);
	ck_assert_int_eq(db_exec(db, "SELECT id FROM hookbox_config.tenants"),
	    DB_OK);
	db_close(db);
	ck_assert_int_eq(count(w, CONFIG_TENANTS), 1);

	ck_assert_int_lt(snprintf(sql, sizeof(sql), "DROP OWNED BY %s;"
	    " DROP ROLE %s", role, role), (int)sizeof(sql));
	raw_exec(NULL, sql);
}
END_TEST

/*
 * Registrars (config/registrar.h): named by the owner; a handle narrowed
 * to one writes and lists its tenants' jobs alone, prepares nothing else
 * (no tenant, no secret, no registrar), and stays narrow.
 */
START_TEST(test_registrar)
{
	struct config_secrets	 sec;
	struct config_tenant	 t;
	struct config_job	 j;
	struct config		*r;
	cJSON			*arr;
	const char		*why = NULL;
	char			 long_name[CONFIG_REGISTRAR_MAX + 2];

	test_add_tenant(w, "acme", 1);
	test_add_tenant(w, "other", 1);
	test_add_tenant(w, "lone", 1);
	test_add_destination(w, "acme", "sink");
	test_add_destination(w, "other", "sink");
	j = test_job("other", "jo", "ao", "sink");
	ck_assert_int_eq(config_job_add(w, &j, &why), CONFIG_OK);

	ck_assert(config_registrar_name_valid("www-data"));
	ck_assert(config_registrar_name_valid("_app9"));
	ck_assert(!config_registrar_name_valid(""));
	ck_assert(!config_registrar_name_valid("9app"));
	ck_assert(!config_registrar_name_valid("-app"));
	ck_assert(!config_registrar_name_valid("App"));
	ck_assert(!config_registrar_name_valid("a b"));
	ck_assert(!config_registrar_name_valid("a;b"));
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	ck_assert(!config_registrar_name_valid(long_name));
	long_name[CONFIG_REGISTRAR_MAX] = '\0';
	ck_assert(config_registrar_name_valid(long_name));
	CK_INVALID(config_registrar_add(w, "App", "acme", &why), "registrar");
	ck_assert_int_eq(config_registrar_add(w, "app", "nosuch", &why),
	    CONFIG_REFUSED);
	ck_assert_int_eq(config_registrar_add(w, "app", "acme", &why),
	    CONFIG_OK);
	ck_assert_int_eq(config_registrar_add(w, "app", "acme", &why),
	    CONFIG_EXISTS);
	ck_assert_int_eq(config_registrar_add(w, "app", "lone", &why),
	    CONFIG_OK);
	ck_assert_int_eq(count(w, CONFIG_REGISTRARS), 2);

	r = test_config_open(dir, CONFIG_WRITE, BUSY_MS);
	ck_assert_int_eq(config_registrar_scope(r, "app"), CONFIG_OK);
	ck_assert_int_eq(config_registrar_allows(r, "acme", &why), CONFIG_OK);
	ck_assert_int_eq(config_registrar_allows(r, "other", &why),
	    CONFIG_DENIED);
	ck_assert_ptr_nonnull(why);
	j = test_job("acme", "j1", "a1", "sink");
	ck_assert_int_eq(config_job_add(r, &j, &why), CONFIG_OK);
	ck_assert_int_eq(config_tenant_get(r, "acme", &t), CONFIG_OK);
	j = test_job("other", "j2", "a2", "sink");
	ck_assert_int_eq(config_job_add(r, &j, &why), CONFIG_DENIED);
	ck_assert_ptr_nonnull(strstr(why, "registrar"));
	ck_assert_int_eq(config_remove(r, CONFIG_JOBS, "other", "jo"),
	    CONFIG_DENIED);
	/* Its list: its tenants' jobs alone, whatever the filter. */
	ck_assert_int_eq(count(r, CONFIG_JOBS), 1);
	ck_assert_int_eq(config_list(r, CONFIG_JOBS,
	    &(struct config_list_filter){ .tenant = "other" }, &arr),
	    CONFIG_OK);
	ck_assert_int_eq(cJSON_GetArraySize(arr), 0);
	cJSON_Delete(arr);
	/* Nothing but jobs: no other write, no secret, no other list. */
	t = test_tenant("evil");
	ck_assert_int_eq(config_tenant_add(r, &t, NULL, 0, &why),
	    CONFIG_DENIED);
	ck_assert_int_eq(config_remove(r, CONFIG_TENANTS, "lone", NULL),
	    CONFIG_DENIED);
	ck_assert_int_eq(config_registrar_add(r, "app", "other", &why),
	    CONFIG_DENIED);
	ck_assert_int_eq(config_registrar_remove(r, "app", NULL),
	    CONFIG_DENIED);
	ck_assert_int_eq(config_tenant_api_key(r, "acme", &sec),
	    CONFIG_DENIED);
	ck_assert_int_eq(config_destination_secret(r, "acme", "sink", &sec),
	    CONFIG_DENIED);
	ck_assert_int_eq(config_list(r, CONFIG_TENANTS, NULL, &arr),
	    CONFIG_DENIED);
	ck_assert_int_eq(config_list(r, CONFIG_REGISTRARS, NULL, &arr),
	    CONFIG_DENIED);
	/* Narrow for good: another name does not widen it. */
	ck_assert_int_eq(config_registrar_scope(r, "nobody"), CONFIG_NOTFOUND);
	ck_assert_int_eq(config_registrar_allows(r, "acme", &why),
	    CONFIG_DENIED);
	config_close(r);

	/* A name that is no registrar is narrowed to nothing. */
	r = test_config_open(dir, CONFIG_WRITE, BUSY_MS);
	ck_assert_int_eq(config_registrar_scope(r, "nobody"), CONFIG_NOTFOUND);
	j = test_job("acme", "j3", "a3", "sink");
	ck_assert_int_eq(config_job_add(r, &j, &why), CONFIG_DENIED);
	ck_assert_int_eq(count(r, CONFIG_JOBS), 0);
	config_close(r);

	/* A tenant removed takes its registrars' rows; the jobs stay. */
	ck_assert_int_eq(config_remove(w, CONFIG_TENANTS, "lone", NULL),
	    CONFIG_OK);
	ck_assert_int_eq(count(w, CONFIG_REGISTRARS), 1);
	ck_assert_int_eq(config_registrar_remove(w, "app", "other"),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(config_registrar_remove(w, "app", NULL), CONFIG_OK);
	ck_assert_int_eq(config_registrar_remove(w, "app", NULL),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(count(w, CONFIG_JOBS), 2);
}
END_TEST

/*
 * PostgreSQL: a batch's jobs are read through the jobs' key, whatever the
 * table's size (a join of the key set, which the planner takes for 100
 * rows, was hashed over a scan of the whole table), and the version as
 * one value: crossed with the key set, a config_version not yet analyzed
 * made the estimate pass jit_above_cost.
 */
START_TEST(test_pg_jobs_by_key)
{
	char	plan[4096];

	if (test_backend != TEST_POSTGRES)
		return;
	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "sink");
	raw_exec(NULL, "INSERT INTO jobs(tenant, job_id, attempt, step,"
	    " destination, created_at) SELECT 'acme', 'job-' || i, 'a' || i,"
	    " 's', 'sink', 1 FROM generate_series(1, 12000) i; ANALYZE jobs");
	test_pg_plan(dbpath, config_text[CONFIG_Q_CACHE_JOBS].pg,
	    "[[\"acme\",\"job-5\"],[\"acme\",\"none\"]]", plan,
	    sizeof(plan));
	ck_assert_msg(strstr(plan, "Seq Scan on jobs") == NULL &&
	    strstr(plan, "Hash") == NULL, "%s", plan);
	ck_assert_msg(strstr(plan, "Index Scan using jobs_pkey") != NULL, "%s",
	    plan);
	ck_assert_msg(strstr(plan, "rows=100 ") != NULL, "%s", plan);
}
END_TEST

/*
 * PostgreSQL: the registrar service's role (pg_schema_registrar_grants())
 * registers and removes a registrar's jobs through the library, and by
 * SQL of its own can do nothing else: no tenant, no secret, no state.
 */
START_TEST(test_pg_registrar_grants)
{
	static const struct db_text	 none[] = { { "SELECT 1", NULL } };
	struct config			*c;
	struct config_job		 j;
	struct db			*db;
	char				 role[32], sql[128], grants[1024];
	char				 info[PATH_MAX + 64], why[256];
	const char			*whyc;

	if (test_backend != TEST_POSTGRES)
		return;
	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "sink");
	ck_assert_int_eq(config_registrar_add(w, "app", "acme", &whyc),
	    CONFIG_OK);
	ck_assert_int_lt(snprintf(role, sizeof(role), "hb_reg_%ld",
	    (long)getpid()), (int)sizeof(role));
	raw_exec(NULL, pg_schema_state);
	ck_assert_int_lt(snprintf(sql, sizeof(sql), "DROP ROLE IF EXISTS %s;"
	    " CREATE ROLE %s LOGIN", role, role), (int)sizeof(sql));
	raw_exec(NULL, sql);
	ck_assert_int_eq(pg_schema_registrar_grants(role, grants,
	    sizeof(grants)), 0);
	raw_exec(NULL, grants);
	ck_assert_int_lt(snprintf(info, sizeof(info), "%s user=%s", dbpath,
	    role), (int)sizeof(info));

	ck_assert_int_eq(config_open(info, CONFIG_WRITE, BUSY_MS, &c),
	    CONFIG_OK);
	ck_assert_int_eq(config_registrar_scope(c, "app"), CONFIG_OK);
	j = test_job("acme", "j1", "a1", "sink");
	ck_assert_int_eq(config_begin(c), CONFIG_OK);
	ck_assert_int_eq(config_job_add(c, &j, &whyc), CONFIG_OK);
	ck_assert_int_eq(config_commit(c), CONFIG_OK);
	ck_assert_int_eq(count(c, CONFIG_JOBS), 1);
	ck_assert_int_eq(config_remove(c, CONFIG_JOBS, "acme", "j1"),
	    CONFIG_OK);
	config_close(c);

	ck_assert_msg(db_open_pg(info, 5000, 0, none, 1, &db, why,
	    sizeof(why)) == DB_OK, "PostgreSQL: %s", why);
	ck_assert_int_eq(db_exec(db, "INSERT INTO hookbox_config.tenants"
	    "(id, created_at) VALUES ('evil', 1)"), DB_DENIED);
	ck_assert_int_eq(db_exec(db, "SELECT api_key FROM"
	    " hookbox_config.tenants"), DB_DENIED);
	ck_assert_int_eq(db_exec(db, "SELECT secret FROM"
	    " hookbox_config.secrets"), DB_DENIED);
	ck_assert_int_eq(db_exec(db, "SELECT secret FROM"
	    " hookbox_config.destinations"), DB_DENIED);
	ck_assert_int_eq(db_exec(db, "INSERT INTO hookbox_config.registrars"
	    " VALUES ('x', 'acme', 1)"), DB_DENIED);
	ck_assert_int_eq(db_exec(db, "UPDATE hookbox_config.jobs"
	    " SET step = 'x'"), DB_DENIED);
	ck_assert_int_eq(db_exec(db, "SELECT count(*) FROM"
	    " hookbox_state.outbox"), DB_DENIED);
	ck_assert_int_eq(db_exec(db, "SELECT id, active FROM"
	    " hookbox_config.tenants"), DB_OK);
	db_close(db);

	ck_assert_int_lt(snprintf(sql, sizeof(sql), "DROP OWNED BY %s;"
	    " DROP ROLE %s", role, role), (int)sizeof(sql));
	raw_exec(NULL, sql);
}
END_TEST

/*
 * access_probe() and access_grant(): what a role may do, said with the
 * server's words; a directory is not asked, and refused any grant.
 */
static char	acc_why[512];
#define PROBE(loc, need) \
	access_probe((loc), BUSY_MS, (need), acc_why, sizeof(acc_why))
#define GRANT(loc, role) \
	access_grant((loc), BUSY_MS, ACCESS_ROLE_SERVE, (role), acc_why, \
	    sizeof(acc_why))

START_TEST(test_access)
{
	char			 role[32], sql[128], info[PATH_MAX + 64];
	enum access_status	 st;

	for (st = ACCESS_OK; st <= ACCESS_REFUSED; st++)
		ck_assert_str_ne(access_strerror(st), "unknown error");
	if (test_backend == TEST_SQLITE) {
		ck_assert_int_eq(PROBE(dir, ACCESS_SERVE), ACCESS_OK);
		ck_assert_str_eq(acc_why, "");
		ck_assert_int_eq(GRANT(dir, "hb_serve"), ACCESS_REFUSED);
		return;
	}
	ck_assert_int_eq(PROBE(dbpath, ACCESS_CONNECT), ACCESS_OK);
	ck_assert_int_eq(PROBE(dbpath, ACCESS_CONFIG), ACCESS_OK);
	/* The configuration's schema alone: the state's is missing. */
	ck_assert_int_eq(PROBE(dbpath, ACCESS_SERVE), ACCESS_UNUSABLE);
	ck_assert_msg(strstr(acc_why, "hookbox_state") != NULL, "why: %s",
	    acc_why);
	raw_exec(NULL, pg_schema_state);
	ck_assert_int_eq(PROBE(dbpath, ACCESS_SERVE), ACCESS_OK);

	/* A role without its grants, then with them. */
	ck_assert_int_lt(snprintf(role, sizeof(role), "hb_acc_%ld",
	    (long)getpid()), (int)sizeof(role));
	ck_assert_int_lt(snprintf(sql, sizeof(sql), "DROP ROLE IF EXISTS %s;"
	    " CREATE ROLE %s LOGIN", role, role), (int)sizeof(sql));
	raw_exec(NULL, sql);
	ck_assert_int_lt(snprintf(info, sizeof(info), "%s user=%s", dbpath,
	    role), (int)sizeof(info));
	ck_assert_int_eq(PROBE(info, ACCESS_CONNECT), ACCESS_OK);
	ck_assert_int_eq(PROBE(info, ACCESS_CONFIG), ACCESS_DENIED);
	ck_assert_msg(strstr(acc_why, "hookbox_config") != NULL, "why: %s",
	    acc_why);
	ck_assert_int_eq(GRANT(dbpath, "Bad-Role"), ACCESS_REFUSED);
	/* The role may not grant itself anything. */
	ck_assert_int_eq(GRANT(info, role), ACCESS_DENIED);
	ck_assert_int_eq(GRANT(dbpath, role), ACCESS_OK);
	ck_assert_int_eq(GRANT(dbpath, role), ACCESS_OK);
	ck_assert_int_eq(PROBE(info, ACCESS_SERVE), ACCESS_OK);
	/* The probe's writes inserted nothing. */
	ck_assert_int_eq(raw_int("SELECT count(*) FROM hookbox_state.receipts"),
	    0);

	/* No server there: libpq's words, never the password. */
	ck_assert_int_lt(snprintf(info, sizeof(info), "host=%s/none"
	    " dbname=x user=x password=%s", dir, KEY_SECRET),
	    (int)sizeof(info));
	ck_assert_int_eq(PROBE(info, ACCESS_CONNECT), ACCESS_UNREACHABLE);
	ck_assert_str_ne(acc_why, "");
	ck_assert_ptr_null(strstr(acc_why, KEY_SECRET));
	ck_assert_int_eq(GRANT(info, "hb_serve"), ACCESS_UNREACHABLE);

	ck_assert_int_lt(snprintf(sql, sizeof(sql), "DROP OWNED BY %s;"
	    " DROP ROLE %s", role, role), (int)sizeof(sql));
	raw_exec(NULL, sql);
}
END_TEST

/*
 * config.db and schema hookbox_config have the same tables, column for
 * column (type, NOT NULL), with the same keys and indexes: a fresh file
 * beside the test's PostgreSQL database.
 */
START_TEST(test_schema_agrees)
{
	char	path[PATH_MAX];

	if (test_backend != TEST_POSTGRES)
		return;
	test_path(path, sizeof(path), dir, "config.db");
	ck_assert_int_eq(config_create(path), CONFIG_OK);
	test_schema_agree(path, dbpath, "hookbox_config", 7);
}
END_TEST

/*
 * Rows in and out
 */

START_TEST(test_roundtrip)
{
	struct config_tenant		 t, tg;
	struct config_endpoint		 e, eg;
	struct config_destination	 d, dg;
	struct config_job		 j, jg;
	struct config_secrets		 sec;
	const char			*why;

	/* Tenants, with and without an API key. */
	t = test_tenant("acme");
	SET(t.status_base, "https://api.tornado.example/v1");
	ck_assert_int_eq(config_tenant_add(w, &t,
	    (const unsigned char *)API_KEY, strlen(API_KEY), &why), CONFIG_OK);
	t = test_tenant("beta");
	t.active = 0;
	ck_assert_int_eq(config_tenant_add(w, &t, NULL, 0, &why), CONFIG_OK);

	memset(&tg, 'Z', sizeof(tg));
	ck_assert_int_eq(config_tenant_get(w, "acme", &tg), CONFIG_OK);
	ck_assert_str_eq(tg.id, "acme");
	ck_assert_int_ne(tg.active, 0);
	ck_assert_str_eq(tg.status_base, "https://api.tornado.example/v1");
	memset(&tg, 'Z', sizeof(tg));
	ck_assert_int_eq(config_tenant_get(w, "beta", &tg), CONFIG_OK);
	ck_assert_str_eq(tg.id, "beta");
	ck_assert_int_eq(tg.active, 0);
	ck_assert_str_eq(tg.status_base, "");

	ck_assert_int_eq(config_tenant_api_key(w, "acme", &sec), CONFIG_OK);
	ck_assert_uint_eq(sec.n, 1);
	ck_assert_uint_eq(sec.s[0].keylen, strlen(API_KEY));
	ck_assert_mem_eq(sec.s[0].key, API_KEY, strlen(API_KEY));
	config_secrets_clear(&sec);
	ck_assert_ptr_null(sec.buf);
	ck_assert_uint_eq(sec.n, 0);
	ck_assert_int_eq(config_tenant_api_key(w, "beta", &sec), CONFIG_OK);
	ck_assert_uint_eq(sec.n, 0);
	config_secrets_clear(&sec);

	/* Endpoints of each auth mode and kind. */
	e = test_endpoint("acme-org", "acme", CONFIG_AUTH_HMAC);
	e.kind = CONFIG_KIND_ORG;
	e.tolerance = 600;
	SET(e.key_header, "Mux-Signature");	/* hmac: the signature header */
	ck_assert_int_eq(config_endpoint_add(w, &e, &why), CONFIG_OK);
	e = test_endpoint("acme-key", "acme", CONFIG_AUTH_KEY);
	ck_assert_int_eq(config_endpoint_add(w, &e, &why), CONFIG_OK);
	e = test_endpoint("beta-std", "beta", CONFIG_AUTH_STANDARD);
	e.tolerance = 86400;
	ck_assert_int_eq(config_endpoint_add(w, &e, &why), CONFIG_OK);

	memset(&eg, 'Z', sizeof(eg));
	ck_assert_int_eq(config_endpoint_get(w, "acme-org", &eg), CONFIG_OK);
	ck_assert_str_eq(eg.name, "acme-org");
	ck_assert_str_eq(eg.tenant, "acme");
	ck_assert_int_eq(eg.kind, CONFIG_KIND_ORG);
	ck_assert_int_eq(eg.auth, CONFIG_AUTH_HMAC);
	ck_assert_str_eq(eg.key_header, "Mux-Signature");
	ck_assert_int_eq(eg.tolerance, 600);
	memset(&eg, 'Z', sizeof(eg));
	ck_assert_int_eq(config_endpoint_get(w, "acme-key", &eg), CONFIG_OK);
	ck_assert_str_eq(eg.name, "acme-key");
	ck_assert_str_eq(eg.tenant, "acme");
	ck_assert_int_eq(eg.kind, CONFIG_KIND_JOB);
	ck_assert_int_eq(eg.auth, CONFIG_AUTH_KEY);
	ck_assert_str_eq(eg.key_header, "X-Hook-Key");
	ck_assert_int_eq(eg.tolerance, 300);
	ck_assert_int_eq(config_endpoint_get(w, "beta-std", &eg), CONFIG_OK);
	ck_assert_str_eq(eg.tenant, "beta");
	ck_assert_int_eq(eg.auth, CONFIG_AUTH_STANDARD);
	ck_assert_int_eq(eg.tolerance, 86400);

	/* Destinations, signed and not. */
	d = test_destination("acme", "analyzer");
	SET(d.url, "https://analyzer.example/hook?x=1&y=\xc3\xa9");
	SET(d.status_url, "https://analyzer.example/status");
	d.idempotent = 1;
	d.timeout_ms = 2500;
	d.max_attempts = 12;
	ck_assert_int_eq(config_destination_add(w, &d,
	    (const unsigned char *)DEST_SECRET, strlen(DEST_SECRET), &why),
	    CONFIG_OK);
	d = test_destination("acme", "plain");
	ck_assert_int_eq(config_destination_add(w, &d, NULL, 0, &why),
	    CONFIG_OK);

	memset(&dg, 'Z', sizeof(dg));
	ck_assert_int_eq(config_destination_get(w, "acme", "analyzer", &dg),
	    CONFIG_OK);
	ck_assert_str_eq(dg.tenant, "acme");
	ck_assert_str_eq(dg.name, "analyzer");
	ck_assert_str_eq(dg.url, "https://analyzer.example/hook?x=1&y=\xc3\xa9");
	ck_assert_str_eq(dg.status_url, "https://analyzer.example/status");
	ck_assert_int_ne(dg.idempotent, 0);
	ck_assert_int_eq(dg.timeout_ms, 2500);
	ck_assert_int_eq(dg.max_attempts, 12);
	memset(&dg, 'Z', sizeof(dg));
	ck_assert_int_eq(config_destination_get(w, "acme", "plain", &dg),
	    CONFIG_OK);
	ck_assert_str_eq(dg.url, TEST_DEST_URL);
	ck_assert_str_eq(dg.status_url, "");
	ck_assert_int_eq(dg.idempotent, 0);
	ck_assert_int_eq(dg.timeout_ms, TEST_DEST_TIMEOUT_MS);
	ck_assert_int_eq(dg.max_attempts, TEST_DEST_MAX_ATTEMPTS);

	ck_assert_int_eq(config_destination_secret(w, "acme", "analyzer",
	    &sec), CONFIG_OK);
	ck_assert_uint_eq(sec.n, 1);
	ck_assert_uint_eq(sec.s[0].keylen, strlen(DEST_SECRET));
	ck_assert_mem_eq(sec.s[0].key, DEST_SECRET, strlen(DEST_SECRET));
	config_secrets_clear(&sec);
	ck_assert_int_eq(config_destination_secret(w, "acme", "plain", &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 0);
	config_secrets_clear(&sec);

	/* Jobs. */
	j = test_job("acme", "tj-0001", "att-1", "analyzer");
	SET(j.attempt, "att-42");
	SET(j.step, "analyze.v1");
	SET(j.source_url, "https://videos.example/src/1");
	SET(j.output, "{\"format\":\"mp4\",\"quality\":\"1080p\"}");
	ck_assert_int_eq(config_job_add(w, &j, &why), CONFIG_OK);
	test_add_job(w, "acme", "tj-0002", "att-1", "plain");

	memset(&jg, 'Z', sizeof(jg));
	ck_assert_int_eq(config_job_get(w, "acme", "tj-0001", &jg), CONFIG_OK);
	ck_assert_str_eq(jg.tenant, "acme");
	ck_assert_str_eq(jg.job_id, "tj-0001");
	ck_assert_str_eq(jg.attempt, "att-42");
	ck_assert_str_eq(jg.step, "analyze.v1");
	ck_assert_str_eq(jg.destination, "analyzer");
	ck_assert_str_eq(jg.source_url, "https://videos.example/src/1");
	ck_assert_str_eq(jg.output, "{\"format\":\"mp4\",\"quality\":\"1080p\"}");
	memset(&jg, 'Z', sizeof(jg));
	ck_assert_int_eq(config_job_get(w, "acme", "tj-0002", &jg), CONFIG_OK);
	ck_assert_str_eq(jg.destination, "plain");
	ck_assert_str_eq(jg.source_url, "");
	ck_assert_str_eq(jg.output, "");
	/* Jobs belong to their tenant. */
	ck_assert_int_eq(config_job_get(w, "beta", "tj-0001", &jg),
	    CONFIG_NOTFOUND);
}
END_TEST

/* The allow_internal of destination name in config_list()'s JSON: 0, 1,
   or -1 when it is not a boolean there. */
static int
listed_allow(struct config *c, const char *name)
{
	cJSON		*arr, *row, *v;
	const cJSON	*n;
	int		 found = -1;

	ck_assert_int_eq(config_list(c, CONFIG_DESTINATIONS, NULL,
	    &arr), CONFIG_OK);
	cJSON_ArrayForEach(row, arr) {
		n = cJSON_GetObjectItemCaseSensitive(row, "name");
		if (!cJSON_IsString(n) || strcmp(n->valuestring, name) != 0)
			continue;
		v = cJSON_GetObjectItemCaseSensitive(row, "allow_internal");
		if (cJSON_IsBool(v))
			found = cJSON_IsTrue(v) ? 1 : 0;
	}
	cJSON_Delete(arr);
	return found;
}

/*
 * A destination at an internal address (link-local, a cloud metadata
 * service), however its URL spells it, is refused when it is added or
 * changed, unless it allows them; loopback and the rest are not internal.
 * The refusal says which URL and names the option.
 */
static const char *const internal_urls[] = {
	"http://169.254.169.254/latest/meta-data/",
	"http://2852039166/",
	"http://0xa9fea9fe/",
	"http://0251.0376.0251.0376/",
	"http://169.254.43518/",
	"http://169.254.169.254./",
	"http://169.254.77.1:8080/hook",
	"http://[fe80::1]/",
	"http://[::ffff:169.254.169.254]/",
	"http://[::ffff:a9fe:4d01]/",
	"http://[fd00:ec2::254]/",
	"http://100.100.100.200/",
	"http://metadata.google.internal/computeMetadata/v1/",
	"https://user:pw@METADATA.google.internal.:8443/x",
};
static const char *const ordinary_urls[] = {
	"http://127.0.0.1:9/sink", "http://[::1]:8080/", "http://localhost/",
	"http://2130706433/", "https://hooks.example/in", "http://10.1.2.3/",
	"http://169.255.0.1/", "http://[2001:db8::1]/",
};

START_TEST(test_destination_internal)
{
	struct config_destination	 d, g;
	const char			*why = NULL, *what;
	char				 name[32], host[64];
	size_t				 i;

	test_add_tenant(w, "acme", 1);
	for (i = 0; i < NELEM(internal_urls); i++) {
		d = test_destination("acme", "meta");
		SET(d.url, internal_urls[i]);
		CK_INVALID(config_destination_add(w, &d, NULL, 0, &why),
		    "destination URL");
		ck_assert_ptr_nonnull(strstr(why, "internal address"));
		ck_assert_ptr_nonnull(strstr(why, "--allow-internal"));
		/* The same URL as a status URL. */
		d = test_destination("acme", "meta");
		SET(d.status_url, internal_urls[i]);
		CK_INVALID(config_destination_add(w, &d, NULL, 0, &why),
		    "status URL");
		ck_assert_msg(config_check_address(internal_urls[i], host,
		    sizeof(host)) != NULL, "%s not internal", internal_urls[i]);
		ck_assert_str_ne(host, "");
	}
	ck_assert_int_eq(count(w, CONFIG_DESTINATIONS), 0);
	/* What the check says: the host as libcurl reads it, and why. */
	what = config_check_address("http://0xa9fea9fe/x", host, sizeof(host));
	ck_assert_ptr_nonnull(what);
	ck_assert_str_eq(host, "169.254.169.254");
	ck_assert_ptr_nonnull(strstr(what, "metadata"));
	what = config_check_address("http://169.254.43519/", host,
	    sizeof(host));
	ck_assert_str_eq(host, "169.254.169.255");
	ck_assert_ptr_nonnull(strstr(what, "link-local"));
	ck_assert_ptr_null(config_check_address("http://[zz]/", host,
	    sizeof(host)));
	ck_assert_ptr_null(config_check_address(NULL, NULL, 0));

	/* Loopback and the rest: taken as they are. */
	for (i = 0; i < NELEM(ordinary_urls); i++) {
		ck_assert_ptr_null(config_check_address(ordinary_urls[i], host,
		    sizeof(host)));
		ck_assert_str_eq(host, "");
		ck_assert_int_lt(snprintf(name, sizeof(name), "d%zu", i),
		    (int)sizeof(name));
		d = test_destination("acme", name);
		SET(d.url, ordinary_urls[i]);
		SET(d.status_url, ordinary_urls[i]);
		ck_assert_int_eq(config_destination_add(w, &d, NULL, 0, &why),
		    CONFIG_OK);
		ck_assert_int_eq(config_destination_get(w, "acme", name, &g),
		    CONFIG_OK);
		ck_assert_int_eq(g.allow_internal, 0);
	}

	/* Allowed: added, read back and listed as allowed. */
	for (i = 0; i < NELEM(internal_urls); i++) {
		ck_assert_int_lt(snprintf(name, sizeof(name), "meta%zu", i),
		    (int)sizeof(name));
		d = test_destination("acme", name);
		SET(d.url, internal_urls[i]);
		SET(d.status_url, internal_urls[i]);
		d.allow_internal = 1;
		ck_assert_int_eq(config_destination_add(w, &d, NULL, 0, &why),
		    CONFIG_OK);
	}
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(config_destination_get(w, "acme", "meta0", &g),
	    CONFIG_OK);
	ck_assert_int_eq(g.allow_internal, 1);
	ck_assert_str_eq(g.url, internal_urls[0]);
	ck_assert_int_eq(listed_allow(w, "meta0"), 1);
	ck_assert_int_eq(listed_allow(w, "d0"), 0);

	/* Changed: no longer allowed while its URL is internal. */
	g.allow_internal = 0;
	CK_INVALID(config_destination_update(w, &g, NULL, 0, &why),
	    "destination URL");
	ck_assert_int_eq(config_destination_get(w, "acme", "meta0", &g),
	    CONFIG_OK);
	ck_assert_int_eq(g.allow_internal, 1);
	/* A URL elsewhere, the status URL still internal: refused too. */
	SET(g.url, "https://hooks.example/in");
	g.allow_internal = 0;
	CK_INVALID(config_destination_update(w, &g, NULL, 0, &why),
	    "status URL");
	SET(g.status_url, "");
	ck_assert_int_eq(config_destination_update(w, &g, NULL, 0, &why),
	    CONFIG_OK);
	ck_assert_int_eq(config_destination_get(w, "acme", "meta0", &g),
	    CONFIG_OK);
	ck_assert_int_eq(g.allow_internal, 0);
	ck_assert_int_eq(listed_allow(w, "meta0"), 0);
	/* And an ordinary destination moved to an internal address. */
	ck_assert_int_eq(config_destination_get(w, "acme", "d0", &g),
	    CONFIG_OK);
	SET(g.url, "http://[fe80::1%25lo]:8080/");
	CK_INVALID(config_destination_update(w, &g, NULL, 0, &why),
	    "destination URL");
	g.allow_internal = 1;
	ck_assert_int_eq(config_destination_update(w, &g, NULL, 0, &why),
	    CONFIG_OK);
	ck_assert_int_eq(listed_allow(w, "d0"), 1);
}
END_TEST

/*
 * A config.db made before destinations.allow_internal: its readers read
 * every destination as allowing nothing, the first writer adds the
 * column (the schema's version unchanged: it was added within one), and
 * a reader open all along sees what is written from then on.
 */
START_TEST(test_destination_allow_col)
{
	struct config			*r, *w2;
	struct config_destination	 d;
	const char			*why = NULL;
	const char			*has = test_backend == TEST_SQLITE ?
	    "SELECT count(*) FROM pragma_table_info('destinations')"
	    " WHERE name = 'allow_internal'" :
	    "SELECT count(*) FROM information_schema.columns"
	    " WHERE table_schema = 'hookbox_config'"
	    " AND table_name = 'destinations'"
	    " AND column_name = 'allow_internal'";

	test_add_tenant(w, "acme", 1);
	d = test_destination("acme", "sink");
	SET(d.status_url, "http://127.0.0.1:9/status");
	d.idempotent = 1;
	ck_assert_int_eq(config_destination_add(w, &d, NULL, 0, &why),
	    CONFIG_OK);
	config_close(w);
	w = NULL;
	ck_assert_int_eq(raw_int(has), 1);
	raw_exec("ALTER TABLE destinations DROP COLUMN allow_internal", NULL);
	ck_assert_int_eq(raw_int(has), 0);

	r = test_config_open(dir, CONFIG_READ, BUSY_MS);
	memset(&d, 'Z', sizeof(d));
	ck_assert_int_eq(config_destination_get(r, "acme", "sink", &d),
	    CONFIG_OK);
	ck_assert_str_eq(d.url, TEST_DEST_URL);
	ck_assert_str_eq(d.status_url, "http://127.0.0.1:9/status");
	ck_assert_int_eq(d.idempotent, 1);
	ck_assert_int_eq(d.allow_internal, 0);
	ck_assert_int_eq(listed_allow(r, "sink"), 0);
	/* A reader adds nothing. */
	ck_assert_int_eq(raw_int(has), 0);

	w2 = test_config_open(dir, CONFIG_WRITE, BUSY_MS);
	ck_assert_int_eq(raw_int(has), 1);
	ck_assert_int_eq(raw_int(test_backend == TEST_SQLITE ?
	    "PRAGMA user_version" : "SELECT version FROM schema_version"),
	    CONFIG_SCHEMA_VERSION);
	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(config_destination_get(w2, "acme", "sink", &d),
	    CONFIG_OK);
	ck_assert_int_eq(d.idempotent, 1);
	ck_assert_int_eq(d.allow_internal, 0);
	SET(d.url, "http://169.254.169.254/");
	d.allow_internal = 1;
	ck_assert_int_eq(config_destination_update(w2, &d, NULL, 0, &why),
	    CONFIG_OK);
	config_close(w2);
	/* Opened again, a writer finds the column and adds nothing. */
	w2 = test_config_open(dir, CONFIG_WRITE, BUSY_MS);
	config_close(w2);

	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(config_destination_get(r, "acme", "sink", &d),
	    CONFIG_OK);
	ck_assert_str_eq(d.url, "http://169.254.169.254/");
	ck_assert_int_eq(d.allow_internal, 1);
	ck_assert_int_eq(listed_allow(r, "sink"), 1);
	config_close(r);
}
END_TEST

START_TEST(test_notfound)
{
	struct config_tenant		t;
	struct config_endpoint		e;
	struct config_destination	d;
	struct config_job		j;

	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "dest");

	/* Not found, and the out structs are left alone. */
	memset(&t, 'Z', sizeof(t));
	ck_assert_int_eq(config_tenant_get(w, "nobody", &t), CONFIG_NOTFOUND);
	ck_assert_int_eq(t.id[0], 'Z');
	ck_assert_int_eq(config_tenant_get(w, "", &t), CONFIG_NOTFOUND);
	ck_assert_int_eq(config_tenant_get(w, "ACME", &t), CONFIG_NOTFOUND);
	memset(&e, 'Z', sizeof(e));
	ck_assert_int_eq(config_endpoint_get(w, "nope", &e), CONFIG_NOTFOUND);
	ck_assert_int_eq(e.name[0], 'Z');
	memset(&d, 'Z', sizeof(d));
	ck_assert_int_eq(config_destination_get(w, "acme", "nope", &d),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(config_destination_get(w, "nobody", "dest", &d),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(d.name[0], 'Z');
	memset(&j, 'Z', sizeof(j));
	ck_assert_int_eq(config_job_get(w, "acme", "nope", &j),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(j.job_id[0], 'Z');
}
END_TEST

/*
 * Validation
 */

START_TEST(test_tenant_invalid)
{
	struct config_tenant	 t;
	struct config_secrets	 sec;
	unsigned char		 key[CONFIG_SECRET_MAX + 1];
	const char		*why;

	t = test_tenant("");
	CK_INVALID(config_tenant_add(w, &t, NULL, 0, &why), "tenant");
	/* HB_ID_MAX + 1 bytes (no room for a NUL: none is read). */
	memset(t.id, 'a', sizeof(t.id));
	CK_INVALID(config_tenant_add(w, &t, NULL, 0, &why), "tenant");
	t = test_tenant("ac\x01me");
	CK_INVALID(config_tenant_add(w, &t, NULL, 0, &why), "tenant");
	t = test_tenant("ac\tme");
	CK_INVALID(config_tenant_add(w, &t, NULL, 0, &why), "tenant");
	t = test_tenant("acme\x7f");
	CK_INVALID(config_tenant_add(w, &t, NULL, 0, &why), "tenant");
	t = test_tenant("acme\xff");
	CK_INVALID(config_tenant_add(w, &t, NULL, 0, &why), "tenant");
	t = test_tenant("acme");
	memset(t.status_base, 'u', sizeof(t.status_base));
	CK_INVALID(config_tenant_add(w, &t, NULL, 0, &why), "status");
	t = test_tenant("acme");
	SET(t.status_base, "https://\xc0\xaf");
	CK_INVALID(config_tenant_add(w, &t, NULL, 0, &why), "status");
	t = test_tenant("acme");
	memset(key, 'k', sizeof(key));
	CK_INVALID(config_tenant_add(w, &t, key, sizeof(key), &why), "key");
	/* What we send in headers and request lines: no CR, LF, controls. */
	t = test_tenant("acme");
	SET(t.status_base, "https://api.example/\r\nX-Evil: 1");
	CK_INVALID(config_tenant_add(w, &t, NULL, 0, &why), "status");
	t = test_tenant("acme");
	CK_INVALID(config_tenant_add(w, &t, (const unsigned char *)"k\r\nX: 1",
	    7, &why), "key");
	CK_INVALID(config_tenant_add(w, &t, (const unsigned char *)"a b", 3,
	    &why), "key");
	CK_INVALID(config_tenant_add(w, &t, (const unsigned char *)"a\0b", 3,
	    &why), "key");
	ck_assert_int_eq(count(w, CONFIG_TENANTS), 0);

	/* The edges. */
	memset(t.id, 'a', HB_ID_MAX);
	t.id[HB_ID_MAX] = '\0';
	memset(t.status_base, 'u', HB_TEXT_MAX);
	memcpy(t.status_base, "https://", 8);
	t.status_base[HB_TEXT_MAX] = '\0';
	ck_assert_int_eq(config_tenant_add(w, &t, key, CONFIG_SECRET_MAX,
	    &why), CONFIG_OK);
	ck_assert_int_eq(config_tenant_api_key(w, t.id, &sec), CONFIG_OK);
	ck_assert_uint_eq(sec.n, 1);
	ck_assert_uint_eq(sec.s[0].keylen, CONFIG_SECRET_MAX);
	config_secrets_clear(&sec);
	/* Names are ASCII: they go into URLs, headers and metric labels. */
	t = test_tenant("t\xc3\xa9nant");
	CK_INVALID(config_tenant_add(w, &t, NULL, 0, &why), "tenant");
	t = test_tenant("tenant one");
	CK_INVALID(config_tenant_add(w, &t, NULL, 0, &why), "tenant");
	t = test_tenant("tenant_1.b-2");
	ck_assert_int_eq(config_tenant_add(w, &t, NULL, 0, &why), CONFIG_OK);
	ck_assert_int_eq(count(w, CONFIG_TENANTS), 2);
}
END_TEST

START_TEST(test_endpoint_invalid)
{
	struct config_endpoint	 e;
	const char		*why;

	test_add_tenant(w, "acme", 1);

	e = test_endpoint("", "acme", CONFIG_AUTH_HMAC);
	CK_INVALID(config_endpoint_add(w, &e, &why), "endpoint");
	memset(e.name, 'n', sizeof(e.name));
	CK_INVALID(config_endpoint_add(w, &e, &why), "endpoint");
	e = test_endpoint("ep\x01", "acme", CONFIG_AUTH_HMAC);
	CK_INVALID(config_endpoint_add(w, &e, &why), "endpoint");
	e = test_endpoint("ep\xff", "acme", CONFIG_AUTH_HMAC);
	CK_INVALID(config_endpoint_add(w, &e, &why), "endpoint");
	e = test_endpoint("ep", "", CONFIG_AUTH_HMAC);
	CK_INVALID(config_endpoint_add(w, &e, &why), "tenant");
	memset(e.tenant, 't', sizeof(e.tenant));
	CK_INVALID(config_endpoint_add(w, &e, &why), "tenant");
	/* Names that would clash with /hooks/_health or another path. */
	e = test_endpoint("_health", "acme", CONFIG_AUTH_HMAC);
	CK_INVALID(config_endpoint_add(w, &e, &why), "endpoint");
	e = test_endpoint("_", "acme", CONFIG_AUTH_HMAC);
	CK_INVALID(config_endpoint_add(w, &e, &why), "endpoint");
	e = test_endpoint("a/b", "acme", CONFIG_AUTH_HMAC);
	CK_INVALID(config_endpoint_add(w, &e, &why), "endpoint");
	e = test_endpoint("../x", "acme", CONFIG_AUTH_HMAC);
	CK_INVALID(config_endpoint_add(w, &e, &why), "endpoint");
	e = test_endpoint("ab/", "acme", CONFIG_AUTH_HMAC);
	CK_INVALID(config_endpoint_add(w, &e, &why), "endpoint");
	/* Key mode needs a usable header name. */
	e = test_endpoint("ep", "acme", CONFIG_AUTH_KEY);
	e.key_header[0] = '\0';
	CK_INVALID(config_endpoint_add(w, &e, &why), "header");
	SET(e.key_header, "X-Key\r\nX-Other");
	CK_INVALID(config_endpoint_add(w, &e, &why), "header");
	/* Tolerance in 1..86400. */
	e = test_endpoint("ep", "acme", CONFIG_AUTH_HMAC);
	e.tolerance = 0;
	CK_INVALID(config_endpoint_add(w, &e, &why), "tolerance");
	e.tolerance = -300;
	CK_INVALID(config_endpoint_add(w, &e, &why), "tolerance");
	e.tolerance = 86401;
	CK_INVALID(config_endpoint_add(w, &e, &why), "tolerance");
	e.tolerance = INT64_MAX;
	CK_INVALID(config_endpoint_add(w, &e, &why), "tolerance");
	ck_assert_int_eq(count(w, CONFIG_ENDPOINTS), 0);

	/* The edges. */
	e = test_endpoint("a_b", "acme", CONFIG_AUTH_HMAC);
	e.tolerance = 1;
	ck_assert_int_eq(config_endpoint_add(w, &e, &why), CONFIG_OK);
	memset(e.name, 'n', HB_ID_MAX);
	e.name[HB_ID_MAX] = '\0';
	e.tolerance = 86400;
	ck_assert_int_eq(config_endpoint_add(w, &e, &why), CONFIG_OK);
	ck_assert_int_eq(count(w, CONFIG_ENDPOINTS), 2);
}
END_TEST

START_TEST(test_endpoint_bad_enum)
{
	struct config_endpoint	 e;
	const char		*why;

	test_add_tenant(w, "acme", 1);

	/* An out-of-range kind or auth is refused with *why naming it. */
	e = test_endpoint("ep", "acme", CONFIG_AUTH_HMAC);
	e.kind = (enum config_kind)7;
	CK_INVALID(config_endpoint_add(w, &e, &why), "kind");
	e = test_endpoint("ep", "acme", CONFIG_AUTH_HMAC);
	e.auth = (enum config_auth)7;
	CK_INVALID(config_endpoint_add(w, &e, &why), "auth");
}
END_TEST

START_TEST(test_secret_invalid)
{
	unsigned char	 big[CONFIG_SECRET_MAX + 1];
	const char	*why;
	int		 found;

	test_add_tenant(w, "acme", 1);
	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC, NULL);

	CK_INVALID(config_secret_add(w, "ep", (const unsigned char *)"", 0, 0,
	    &why), "secret");
	CK_INVALID(config_secret_add(w, "ep", NULL, 0, 0, &why), "secret");
	memset(big, 's', sizeof(big));
	CK_INVALID(config_secret_add(w, "ep", big, sizeof(big), 0, &why),
	    "secret");
	ck_assert_int_eq(raw_scan("SELECT * FROM secrets", SECRET_COLS, "s",
	    1, &found), 0);

	/* No such endpoint. */
	ck_assert_int_eq(config_secret_add(w, "nope",
	    (const unsigned char *)"s", 1, 0, &why), CONFIG_NOTFOUND);

	/* The edges. */
	ck_assert_int_eq(config_secret_add(w, "ep", big, CONFIG_SECRET_MAX, 0,
	    &why), CONFIG_OK);
	ck_assert_int_eq(config_secret_add(w, "ep", big, 1, 0, &why),
	    CONFIG_OK);
	ck_assert_int_eq(raw_scan("SELECT * FROM secrets", SECRET_COLS, "s",
	    1, &found), 2);
}
END_TEST

START_TEST(test_destination_invalid)
{
	struct config_destination	 d;
	unsigned char			 big[CONFIG_SECRET_MAX + 1];
	const char			*why;

	test_add_tenant(w, "acme", 1);

	d = test_destination("", "dest");
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why), "tenant");
	d = test_destination("acme", "");
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why),
	    "destination");
	memset(d.name, 'd', sizeof(d.name));
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why),
	    "destination");
	d = test_destination("acme", "de\x1fst");
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why),
	    "destination");
	d = test_destination("acme", "dest");
	d.url[0] = '\0';
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why), "URL");
	memset(d.url, 'u', sizeof(d.url));
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why), "URL");
	SET(d.url, "https://x.example/\xed\xa0\x80");
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why), "URL");
	SET(d.url, "https://x.example/\nHost: evil");
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why), "URL");
	d = test_destination("acme", "dest");
	SET(d.status_url, "https://x.example/s\r");
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why), "status");
	d = test_destination("acme", "dest");
	memset(d.status_url, 'u', sizeof(d.status_url));
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why), "status");
	d = test_destination("acme", "dest");
	d.timeout_ms = 0;
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why), "timeout");
	d.timeout_ms = -1;
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why), "timeout");
	d = test_destination("acme", "dest");
	d.max_attempts = -1;
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why), "attempts");
	d = test_destination("acme", "dest");
	d.retry_for_s = 0;
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why), "horizon");
	d = test_destination("acme", "dest");
	d.cooldown_s = 0;
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why), "circuit");
	d = test_destination("acme", "dest");
	d.max_in_flight = -1;
	CK_INVALID(config_destination_add(w, &d, NULL, 0, &why), "limits");
	d = test_destination("acme", "dest");
	memset(big, 's', sizeof(big));
	CK_INVALID(config_destination_add(w, &d, big, sizeof(big), &why),
	    "secret");
	ck_assert_int_eq(count(w, CONFIG_DESTINATIONS), 0);

	/* The edges. */
	d = test_destination("acme", "dest");
	memset(d.url, 'u', HB_TEXT_MAX);
	memcpy(d.url, "http://", 7);
	d.url[HB_TEXT_MAX] = '\0';
	d.timeout_ms = 1;
	d.max_attempts = 0;	/* none: the horizon alone */
	d.retry_for_s = 1;
	d.circuit_failures = 0;
	d.cooldown_s = 1;
	ck_assert_int_eq(config_destination_add(w, &d, big, CONFIG_SECRET_MAX,
	    &why), CONFIG_OK);
	ck_assert_int_eq(count(w, CONFIG_DESTINATIONS), 1);
}
END_TEST

START_TEST(test_job_invalid)
{
	struct config_job	 j;
	const char		*why;

	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "dest");

	j = test_job("", "j1", "att-1", "dest");
	CK_INVALID(config_job_add(w, &j, &why), "tenant");
	j = test_job("acme", "", "att-1", "dest");
	CK_INVALID(config_job_add(w, &j, &why), "job");
	memset(j.job_id, 'j', sizeof(j.job_id));
	CK_INVALID(config_job_add(w, &j, &why), "job");
	j = test_job("acme", "j\x01", "att-1", "dest");
	CK_INVALID(config_job_add(w, &j, &why), "job");
	j = test_job("acme", "j\xc3", "att-1", "dest");
	CK_INVALID(config_job_add(w, &j, &why), "job");
	j = test_job("acme", "j1", "att-1", "dest");
	j.attempt[0] = '\0';
	CK_INVALID(config_job_add(w, &j, &why), "attempt");
	memset(j.attempt, 'a', sizeof(j.attempt));
	CK_INVALID(config_job_add(w, &j, &why), "attempt");
	j = test_job("acme", "j1", "att-1", "dest");
	j.step[0] = '\0';
	CK_INVALID(config_job_add(w, &j, &why), "step");
	j = test_job("acme", "j1", "att-1", "");
	CK_INVALID(config_job_add(w, &j, &why), "destination");
	/* The action id tenant:attempt:step must stay unambiguous. */
	j = test_job("acme", "j1", "att-1", "dest");
	SET(j.attempt, "att:1");
	CK_INVALID(config_job_add(w, &j, &why), "attempt");
	SET(j.attempt, ":");
	CK_INVALID(config_job_add(w, &j, &why), "attempt");
	j = test_job("ac:me", "j1", "att-1", "dest");
	CK_INVALID(config_job_add(w, &j, &why), "tenant");
	j = test_job("acme", "j1", "att-1", "dest");
	SET(j.step, "analyze:v1");
	CK_INVALID(config_job_add(w, &j, &why), "step");
	/* Names are [A-Za-z0-9._-], starting with a letter or digit. */
	SET(j.step, "analyze v1");
	CK_INVALID(config_job_add(w, &j, &why), "step");
	SET(j.step, ".hidden");
	CK_INVALID(config_job_add(w, &j, &why), "step");
	SET(j.step, "\xc3\xa9tape");
	CK_INVALID(config_job_add(w, &j, &why), "step");
	j = test_job("acme", "j1", "att-1", "dest");
	/* A job id is the provider's: any printable text, ':' included... */
	SET(j.job_id, "job:1/\xc3\xa9");
	ck_assert_int_eq(config_job_add(w, &j, &why), CONFIG_OK);
	ck_assert_int_eq(config_remove(w, CONFIG_JOBS, "acme", j.job_id),
	    CONFIG_OK);
	/* ...but no C1 control or bidirectional override. */
	SET(j.job_id, "job-\xc2\x85-1");
	CK_INVALID(config_job_add(w, &j, &why), "job id");
	SET(j.job_id, "job-\xe2\x80\xae-1");
	CK_INVALID(config_job_add(w, &j, &why), "job id");
	j = test_job("acme", "j1", "att-1", "dest");
	memset(j.source_url, 'u', sizeof(j.source_url));
	CK_INVALID(config_job_add(w, &j, &why), "source");
	j = test_job("acme", "j1", "att-1", "dest");
	SET(j.output, "{\"q\":\"\xff\"}");
	CK_INVALID(config_job_add(w, &j, &why), "output");
	ck_assert_int_eq(count(w, CONFIG_JOBS), 0);

	/* The edges. */
	j = test_job("acme", "j1", "att-1", "dest");
	memset(j.job_id, 'j', HB_ID_MAX);
	j.job_id[HB_ID_MAX] = '\0';
	memset(j.output, 'o', HB_TEXT_MAX);
	j.output[HB_TEXT_MAX] = '\0';
	ck_assert_int_eq(config_job_add(w, &j, &why), CONFIG_OK);
	ck_assert_int_eq(count(w, CONFIG_JOBS), 1);
}
END_TEST

/*
 * Keys: duplicates, references, removal
 */

START_TEST(test_duplicates)
{
	struct config_tenant		 t;
	struct config_endpoint		 e;
	struct config_destination	 d;
	struct config_job		 j;
	const char			*why;

	test_add_tenant(w, "acme", 1);
	test_add_tenant(w, "beta", 1);
	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC, NULL);
	test_add_destination(w, "acme", "dest");
	test_add_job(w, "acme", "j1", "att-1", "dest");

	t = test_tenant("acme");
	ck_assert_int_eq(config_tenant_add(w, &t, NULL, 0, &why),
	    CONFIG_EXISTS);
	/* Endpoint names are global: they are URL paths. */
	e = test_endpoint("ep", "acme", CONFIG_AUTH_KEY);
	ck_assert_int_eq(config_endpoint_add(w, &e, &why), CONFIG_EXISTS);
	e = test_endpoint("ep", "beta", CONFIG_AUTH_HMAC);
	ck_assert_int_eq(config_endpoint_add(w, &e, &why), CONFIG_EXISTS);
	d = test_destination("acme", "dest");
	SET(d.url, "https://other.example/");
	ck_assert_int_eq(config_destination_add(w, &d, NULL, 0, &why),
	    CONFIG_EXISTS);
	j = test_job("acme", "j1", "att-1", "dest");
	SET(j.attempt, "att-2");
	ck_assert_int_eq(config_job_add(w, &j, &why), CONFIG_EXISTS);

	/* Nothing was overwritten. */
	ck_assert_int_eq(config_endpoint_get(w, "ep", &e), CONFIG_OK);
	ck_assert_str_eq(e.tenant, "acme");
	ck_assert_int_eq(e.auth, CONFIG_AUTH_HMAC);
	ck_assert_int_eq(config_job_get(w, "acme", "j1", &j), CONFIG_OK);
	ck_assert_str_eq(j.attempt, "att-1");

	/* Destinations and jobs are per tenant. */
	test_add_destination(w, "beta", "dest");
	test_add_job(w, "beta", "j1", "att-1", "dest");
	ck_assert_int_eq(count(w, CONFIG_JOBS), 2);
}
END_TEST

START_TEST(test_references)
{
	struct config_endpoint		 e;
	struct config_destination	 d;
	struct config_job		 j;
	const char			*why;

	test_add_tenant(w, "acme", 1);
	test_add_tenant(w, "beta", 1);
	test_add_destination(w, "acme", "dest");

	e = test_endpoint("ep", "nobody", CONFIG_AUTH_HMAC);
	ck_assert_int_eq(config_endpoint_add(w, &e, &why), CONFIG_REFUSED);
	d = test_destination("nobody", "dest");
	ck_assert_int_eq(config_destination_add(w, &d, NULL, 0, &why),
	    CONFIG_REFUSED);
	/* A job whose destination does not exist. */
	j = test_job("acme", "j1", "att-1", "nowhere");
	ck_assert_int_eq(config_job_add(w, &j, &why), CONFIG_REFUSED);
	/* ...or exists for another tenant only. */
	j = test_job("beta", "j1", "att-1", "dest");
	ck_assert_int_eq(config_job_add(w, &j, &why), CONFIG_REFUSED);
	j = test_job("nobody", "j1", "att-1", "dest");
	ck_assert_int_eq(config_job_add(w, &j, &why), CONFIG_REFUSED);

	ck_assert_int_eq(count(w, CONFIG_ENDPOINTS), 0);
	ck_assert_int_eq(count(w, CONFIG_DESTINATIONS), 1);
	ck_assert_int_eq(count(w, CONFIG_JOBS), 0);
}
END_TEST

/*
 * What a refused write means is read from the server's codes, not its
 * words: a writer whose server speaks another language (its database's
 * lc_messages: test_pg_translated()) is told a key taken, a reference
 * refused and a value out of bounds as any other.
 */
START_TEST(test_constraint_language)
{
	static const struct {
		const char		*sql;
		enum config_status	 want;
	} cases[] = {
		{ "INSERT INTO tenants(id, active, created_at)"
		    " VALUES ('acme', 1, 1)", CONFIG_EXISTS },
		{ "INSERT INTO endpoints(name, tenant, kind, auth, created_at)"
		    " VALUES ('e', 'nobody', 'tornado-job', 'hmac', 1)",
		    CONFIG_REFUSED },
		{ "INSERT INTO endpoints(name, tenant, kind, auth, created_at)"
		    " VALUES ('e', 'acme', 'other', 'hmac', 1)",
		    CONFIG_INVALID },
		{ "INSERT INTO tenants(id, active) VALUES ('b', 1)",
		    CONFIG_INVALID },
		{ "DELETE FROM tenants WHERE id = 'acme'", CONFIG_REFUSED },
	};
	struct config_endpoint	 e;
	struct config		*g;
	const char		*loc = dbpath, *why;
	enum db_rc		 rc;
	size_t			 i;

	if (test_backend != TEST_SQLITE) {
		loc = test_pg_translated();
		ck_assert_int_eq(config_create(loc), CONFIG_OK);
	}
	ck_assert_int_eq(config_open(loc, CONFIG_WRITE, BUSY_MS, &g),
	    CONFIG_OK);
	test_add_tenant(g, "acme", 1);
	test_add_destination(g, "acme", "dest");
	test_add_job(g, "acme", "j1", "att-1", "dest");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rc = db_exec(g->db, cases[i].sql);
		ck_assert_msg(config_status_of(g, rc) == cases[i].want,
		    "%s: %s", cases[i].sql, db_errmsg(g->db));
		/* The server's words are its language's. */
		if (test_backend != TEST_SQLITE)
			ck_assert_msg(strstr(db_errmsg(g->db), "violates") ==
			    NULL && strstr(db_errmsg(g->db), "duplicate") ==
			    NULL, "in English: %s", db_errmsg(g->db));
	}
	/* The tool's own writes say the same. */
	e = test_endpoint("ep", "nobody", CONFIG_AUTH_HMAC);
	ck_assert_int_eq(config_endpoint_add(g, &e, &why), CONFIG_REFUSED);
	ck_assert_int_eq(config_remove(g, CONFIG_TENANTS, "acme", NULL),
	    CONFIG_REFUSED);
	ck_assert_int_eq(count(g, CONFIG_TENANTS), 1);
	ck_assert_int_eq(count(g, CONFIG_ENDPOINTS), 0);
	config_close(g);
	if (test_backend != TEST_SQLITE)
		test_pg_translated_drop();
}
END_TEST

START_TEST(test_remove)
{
	struct config_tenant	t;
	struct config_endpoint	e;
	struct config_secrets	sec;

	test_add_tenant(w, "acme", 1);
	test_add_tenant(w, "beta", 1);
	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC, NULL);
	add_secret("ep", HMAC_SECRET, 0);
	test_add_destination(w, "beta", "dest");
	test_add_job(w, "beta", "j1", "att-1", "dest");

	/* Still referenced. */
	ck_assert_int_eq(config_remove(w, CONFIG_TENANTS, "acme", NULL),
	    CONFIG_REFUSED);
	ck_assert_int_eq(config_remove(w, CONFIG_TENANTS, "beta", NULL),
	    CONFIG_REFUSED);
	ck_assert_int_eq(config_remove(w, CONFIG_DESTINATIONS, "beta", "dest"),
	    CONFIG_REFUSED);
	ck_assert_int_eq(config_tenant_get(w, "acme", &t), CONFIG_OK);
	ck_assert_int_eq(count(w, CONFIG_DESTINATIONS), 1);

	/* Missing rows. */
	ck_assert_int_eq(config_remove(w, CONFIG_TENANTS, "nobody", NULL),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(config_remove(w, CONFIG_ENDPOINTS, "nope", NULL),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(config_remove(w, CONFIG_DESTINATIONS, "beta", "nope"),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(config_remove(w, CONFIG_DESTINATIONS, "acme", "dest"),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(config_remove(w, CONFIG_JOBS, "beta", "nope"),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(config_remove(w, CONFIG_JOBS, "acme", "j1"),
	    CONFIG_NOTFOUND);
	ck_assert_int_ne(config_remove(w, (enum config_table)9, "acme", NULL),
	    CONFIG_OK);

	/* In order, everything goes. */
	ck_assert_int_eq(config_remove(w, CONFIG_JOBS, "beta", "j1"),
	    CONFIG_OK);
	ck_assert_int_eq(config_remove(w, CONFIG_DESTINATIONS, "beta", "dest"),
	    CONFIG_OK);
	ck_assert_int_eq(config_remove(w, CONFIG_TENANTS, "beta", NULL),
	    CONFIG_OK);
	ck_assert_int_eq(config_remove(w, CONFIG_ENDPOINTS, "ep", NULL),
	    CONFIG_OK);
	ck_assert_int_eq(config_remove(w, CONFIG_TENANTS, "acme", NULL),
	    CONFIG_OK);
	ck_assert_int_eq(config_tenant_get(w, "acme", &t), CONFIG_NOTFOUND);
	ck_assert_int_eq(config_endpoint_get(w, "ep", &e), CONFIG_NOTFOUND);
	ck_assert_int_eq(config_remove(w, CONFIG_TENANTS, "acme", NULL),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(count(w, CONFIG_TENANTS), 0);
	ck_assert_int_eq(count(w, CONFIG_JOBS), 0);

	/* An endpoint's secrets went with it: a new one starts bare. */
	test_add_tenant(w, "acme", 1);
	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC, NULL);
	ck_assert_int_eq(config_endpoint_secrets(w, "ep", util_now(), &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 0);
	config_secrets_clear(&sec);
}
END_TEST

/*
 * Secrets
 */

START_TEST(test_key_hashed)
{
	struct config_secrets	 sec;
	unsigned char		 hash[AUTH_HASH_LEN];
	char			 hex[2 * AUTH_HASH_LEN + 1];
	cJSON			*arr;
	char			*json;
	int			 found;

	test_add_tenant(w, "acme", 1);
	test_add_endpoint(w, "ep-key", "acme", CONFIG_AUTH_KEY, NULL);
	add_secret("ep-key", KEY_SECRET, 0);
	ck_assert_int_eq(auth_key_hash(KEY_SECRET, strlen(KEY_SECRET), hash),
	    0);

	/* What comes back is the BLAKE2b hash, and it verifies the key. */
	ck_assert_int_eq(config_endpoint_secrets(w, "ep-key", util_now(),
	    &sec), CONFIG_OK);
	ck_assert_uint_eq(sec.n, 1);
	ck_assert_uint_eq(sec.s[0].keylen, AUTH_HASH_LEN);
	ck_assert_mem_eq(sec.s[0].key, hash, AUTH_HASH_LEN);
	ck_assert_int_eq(auth_verify_key(KEY_SECRET, strlen(KEY_SECRET),
	    sec.s, sec.n, util_now(), NULL), AUTH_OK);
	ck_assert_int_eq(auth_verify_key("hb_live_key_4e8b1d6f0a2d",
	    strlen(KEY_SECRET), sec.s, sec.n, util_now(), NULL),
	    AUTH_BAD_SIGNATURE);
	config_secrets_clear(&sec);

	/* The clear key is nowhere in the table, nor in the file. */
	ck_assert_int_eq(raw_scan("SELECT * FROM secrets", SECRET_COLS,
	    KEY_SECRET, strlen(KEY_SECRET), &found), 1);
	ck_assert_int_eq(found, 0);
	ck_assert_int_eq(raw_scan("SELECT * FROM secrets", SECRET_COLS, hash,
	    sizeof(hash), &found), 1);
	ck_assert_int_eq(found, 1);
	ck_assert_int_eq(raw_scan("SELECT secret FROM secrets"
	    " WHERE length(secret) = 32", 1, "", 0, &found), 1);
	config_close(w);
	w = NULL;
	if (test_backend == TEST_SQLITE) {
		ck_assert_int_eq(file_has(dbpath, KEY_SECRET,
		    strlen(KEY_SECRET)), 0);
		ck_assert_int_ne(file_has(dbpath, hash, sizeof(hash)), 0);
	}

	/* Nor in a listing, in clear or as hex. */
	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, 0, &w), CONFIG_OK);
	ck_assert_int_eq(config_list(w, CONFIG_ENDPOINTS, NULL,
	    &arr), CONFIG_OK);
	json = cJSON_PrintUnformatted(arr);
	ck_assert_ptr_nonnull(json);
	ck_assert_ptr_null(strstr(json, KEY_SECRET));
	sodium_bin2hex(hex, sizeof(hex), hash, sizeof(hash));
	ck_assert_ptr_null(strstr(json, hex));
	cJSON_free(json);
	cJSON_Delete(arr);
}
END_TEST

START_TEST(test_hmac_secrets)
{
	static const unsigned char	 bin[] = { 0x00, 0x01, 's', 0xff, 0x00 };
	struct config_secrets		 sec;
	const char			*why;

	test_add_tenant(w, "acme", 1);
	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC, NULL);
	test_add_endpoint(w, "ep-std", "acme", CONFIG_AUTH_STANDARD, NULL);
	test_add_endpoint(w, "ep-none", "acme", CONFIG_AUTH_HMAC, NULL);

	add_secret("ep", "first-secret", 0);
	add_secret("ep", HMAC_SECRET, 0);
	ck_assert_int_eq(config_secret_add(w, "ep", bin, sizeof(bin), 0, &why),
	    CONFIG_OK);
	add_secret("ep-std", DEST_SECRET, 0);

	/* As configured, byte for byte, newest first. */
	ck_assert_int_eq(config_endpoint_secrets(w, "ep", util_now(), &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 3);
	ck_assert_uint_eq(sec.s[0].keylen, sizeof(bin));
	ck_assert_mem_eq(sec.s[0].key, bin, sizeof(bin));
	ck_assert_uint_eq(sec.s[1].keylen, strlen(HMAC_SECRET));
	ck_assert_mem_eq(sec.s[1].key, HMAC_SECRET, strlen(HMAC_SECRET));
	ck_assert_uint_eq(sec.s[2].keylen, strlen("first-secret"));
	ck_assert_mem_eq(sec.s[2].key, "first-secret", strlen("first-secret"));
	config_secrets_clear(&sec);
	ck_assert_uint_eq(sec.n, 0);
	ck_assert_ptr_null(sec.buf);

	ck_assert_int_eq(config_endpoint_secrets(w, "ep-std", util_now(),
	    &sec), CONFIG_OK);
	ck_assert_uint_eq(sec.n, 1);
	ck_assert_mem_eq(sec.s[0].key, DEST_SECRET, strlen(DEST_SECRET));
	config_secrets_clear(&sec);

	/* None, or no such endpoint: none. */
	ck_assert_int_eq(config_endpoint_secrets(w, "ep-none", util_now(),
	    &sec), CONFIG_OK);
	ck_assert_uint_eq(sec.n, 0);
	config_secrets_clear(&sec);
	ck_assert_int_eq(config_endpoint_secrets(w, "nope", util_now(), &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 0);
	config_secrets_clear(&sec);
	config_secrets_clear(NULL);
}
END_TEST

START_TEST(test_secret_expiry)
{
	struct config_secrets	sec;
	int64_t			now = util_now();

	test_add_tenant(w, "acme", 1);
	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC, NULL);
	add_secret("ep", "expires-1000", 1000);
	add_secret("ep", "expires-2000", 2000);
	add_secret("ep", "never", 0);

	ck_assert_int_eq(config_endpoint_secrets(w, "ep", 999, &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 3);
	ck_assert_mem_eq(sec.s[0].key, "never", 5);
	ck_assert_mem_eq(sec.s[1].key, "expires-2000", 12);
	ck_assert_mem_eq(sec.s[2].key, "expires-1000", 12);
	config_secrets_clear(&sec);

	/* expires_at <= now is expired. */
	ck_assert_int_eq(config_endpoint_secrets(w, "ep", 1000, &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 2);
	ck_assert_mem_eq(sec.s[0].key, "never", 5);
	ck_assert_mem_eq(sec.s[1].key, "expires-2000", 12);
	config_secrets_clear(&sec);
	ck_assert_int_eq(config_endpoint_secrets(w, "ep", 1999, &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 2);
	config_secrets_clear(&sec);
	ck_assert_int_eq(config_endpoint_secrets(w, "ep", 2000, &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 1);
	ck_assert_mem_eq(sec.s[0].key, "never", 5);
	config_secrets_clear(&sec);

	/* The same against the clock. */
	add_secret("ep", "expired-now", now);
	add_secret("ep", "expired-before", now - 10);
	add_secret("ep", "fresh", now + 3600);
	ck_assert_int_eq(config_endpoint_secrets(w, "ep", now, &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 2);
	ck_assert_mem_eq(sec.s[0].key, "fresh", 5);
	ck_assert_mem_eq(sec.s[1].key, "never", 5);
	config_secrets_clear(&sec);
}
END_TEST

START_TEST(test_secret_negative_expiry)
{
	struct config_secrets	 sec;
	const char		*why = NULL;
	enum config_status	 rc;

	test_add_tenant(w, "acme", 1);
	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC, NULL);

	/*
	 * Only 0 means "never expires" (config/admin.h); a negative expiry is a
	 * mistake, refused rather than stored as "never".
	 */
	rc = config_secret_add(w, "ep", (const unsigned char *)"old", 3, -1,
	    &why);
	ck_assert_int_eq(rc, CONFIG_INVALID);
	ck_assert_ptr_nonnull(why);
	ck_assert_int_eq(config_endpoint_secrets(w, "ep", util_now(), &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 0);	/* nothing was stored */
	config_secrets_clear(&sec);
}
END_TEST

START_TEST(test_secrets_max)
{
	struct config_secrets	 sec;
	char			 name[32];
	const char		*why;
	int			 i;

	test_add_tenant(w, "acme", 1);
	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC, NULL);
	for (i = 0; i < CONFIG_SECRETS_MAX; i++) {
		ck_assert_int_lt(snprintf(name, sizeof(name), "secret-%02d", i),
		    (int)sizeof(name));
		add_secret("ep", name, 0);
	}
	/* One more is refused, not allowed to push the oldest out. */
	CK_INVALID(config_secret_add(w, "ep", (const unsigned char *)"ninth",
	    5, 0, &why), "remove one");

	/* All CONFIG_SECRETS_MAX, newest first. */
	ck_assert_int_eq(config_endpoint_secrets(w, "ep", 1, &sec), CONFIG_OK);
	ck_assert_uint_eq(sec.n, CONFIG_SECRETS_MAX);
	for (i = 0; i < CONFIG_SECRETS_MAX; i++) {
		ck_assert_int_lt(snprintf(name, sizeof(name), "secret-%02d",
		    CONFIG_SECRETS_MAX - 1 - i), (int)sizeof(name));
		ck_assert_uint_eq(sec.s[i].keylen, strlen(name));
		ck_assert_mem_eq(sec.s[i].key, name, strlen(name));
	}
	config_secrets_clear(&sec);

	/* The limit applies to unexpired secrets only. */
	test_add_endpoint(w, "ep2", "acme", CONFIG_AUTH_HMAC, NULL);
	for (i = 0; i < CONFIG_SECRETS_MAX + 3; i++) {
		ck_assert_int_lt(snprintf(name, sizeof(name), "s2-%02d", i),
		    (int)sizeof(name));
		add_secret("ep2", name, i >= 5 ? 1000 : 0);
	}
	ck_assert_int_eq(config_endpoint_secrets(w, "ep2", 1000, &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 5);
	ck_assert_mem_eq(sec.s[0].key, "s2-04", 5);
	ck_assert_mem_eq(sec.s[4].key, "s2-00", 5);
	config_secrets_clear(&sec);
	/* Seen before they expired there were 11: refused, never cut. */
	ck_assert_int_eq(config_endpoint_secrets(w, "ep2", 999, &sec),
	    CONFIG_INVALID);
	ck_assert_uint_eq(sec.n, 0);
	ck_assert_ptr_null(sec.buf);

	/* A ninth row written behind the tool's back is refused as well. */
	raw_exec("INSERT INTO secrets(endpoint, secret, created_at)"
	    " VALUES ('ep', x'6e696e7468', 1)",
	    "INSERT INTO secrets(endpoint, secret, created_at)"
	    " VALUES ('ep', '\\x6e696e7468'::bytea, 1)");
	ck_assert_int_eq(config_endpoint_secrets(w, "ep", 1, &sec),
	    CONFIG_INVALID);
	ck_assert_uint_eq(sec.n, 0);
}
END_TEST

/*
 * Two admins adding the last secret an endpoint may have, at once: the
 * count each checks cannot be made wrong by the other.  SQLite lets one
 * writer in; PostgreSQL lets both run and fails the one whose commit
 * would break the rule (CONFIG_BUSY: try again).
 */
START_TEST(test_secrets_max_race)
{
	struct config	*w2;
	char		 name[32];
	const char	*why;
	int		 i;
	enum config_status rc1, rc2;

	test_add_tenant(w, "acme", 1);
	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC, NULL);
	for (i = 0; i < CONFIG_SECRETS_MAX - 1; i++) {
		ck_assert_int_lt(snprintf(name, sizeof(name), "secret-%02d", i),
		    (int)sizeof(name));
		add_secret("ep", name, 0);
	}
	/* SQLite's second writer waits briefly for the first one's lock;
	 * PostgreSQL's takes none the other holds. */
	ck_assert_int_eq(config_open(dbpath, CONFIG_WRITE,
	    test_backend == TEST_SQLITE ? 100 : BUSY_MS, &w2), CONFIG_OK);
	ck_assert_int_eq(config_begin(w), CONFIG_OK);
	ck_assert_int_eq(config_secret_add(w, "ep",
	    (const unsigned char *)"first", 5, 0, &why), CONFIG_OK);
	rc2 = config_begin(w2);
	if (rc2 == CONFIG_OK)
		rc2 = config_secret_add(w2, "ep",
		    (const unsigned char *)"second", 6, 0, &why);
	if (rc2 == CONFIG_OK)
		rc2 = config_commit(w2);
	if (rc2 != CONFIG_OK)
		config_rollback(w2);
	if ((rc1 = config_commit(w)) != CONFIG_OK)
		config_rollback(w);
	if (rc2 == CONFIG_OK && rc1 == CONFIG_OK)
		ck_abort_msg("both admins added a last secret");
	ck_assert_msg(rc1 == CONFIG_BUSY || rc2 == CONFIG_BUSY ||
	    rc2 == CONFIG_INVALID, "rc1 %d rc2 %d", rc1, rc2);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM secrets"),
	    CONFIG_SECRETS_MAX);
	config_close(w2);
}
END_TEST

/*
 * Rows written behind the tool's back are checked again when read: a
 * value that could inject a header line or split an action id is
 * refused, whatever wrote it.
 */
START_TEST(test_read_revalidates)
{
	/* Each as SQLite and as PostgreSQL write it. */
	static const char *const bad[][2] = {
		{ "UPDATE jobs SET attempt = 'att' || char(13, 10) ||"
		    " 'X-Evil: 1'", "UPDATE jobs SET attempt = 'att' ||"
		    " chr(13) || chr(10) || 'X-Evil: 1'" },
		{ "UPDATE jobs SET step = 'a:b'", NULL },
		{ "UPDATE jobs SET tenant = 'ac:me'", NULL },
		{ "UPDATE jobs SET job_id = 'j1' || char(27) || '[2J'",
		    "UPDATE jobs SET job_id = 'j1' || chr(27) || '[2J'" },
		{ "UPDATE jobs SET destination = 'dest' || char(10)",
		    "UPDATE jobs SET destination = 'dest' || chr(10)" },
	};
	static const char *const badd[][2] = {
		{ "UPDATE destinations SET url = 'http://x/' || char(13, 10) ||"
		    " 'Host: evil'", "UPDATE destinations SET url ="
		    " 'http://x/' || chr(13) || chr(10) || 'Host: evil'" },
		{ "UPDATE destinations SET url = 'file:///etc/passwd'", NULL },
		{ "UPDATE destinations SET status_url = 'gopher://x/'", NULL },
		{ "UPDATE destinations SET name = 'de st'", NULL },
		{ "UPDATE destinations SET url = ''", NULL },
	};
	struct config_job		 j;
	struct config_destination	 d;
	struct config_tenant		 t;
	struct config_endpoint		 e;
	struct config_secrets		 sec;
	struct db			*db;
	size_t				 i;
	const char			*why;

	test_add_tenant(w, "acme", 1);
	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC, NULL);
	test_add_destination(w, "acme", "dest");
	test_add_job(w, "acme", "j1", "att-1", "dest");
	/*
	 * Something that is not the tool and ignores the jobs' references,
	 * as SQLite's connections do unless asked: PostgreSQL's are gone.
	 */
	db = raw_open(NULL, 0);
	if (test_backend == TEST_POSTGRES)
		raw_run(db, NULL, "ALTER TABLE jobs"
		    " DROP CONSTRAINT jobs_tenant_fkey,"
		    " DROP CONSTRAINT jobs_tenant_destination_fkey");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		raw_run(db, bad[i][0], bad[i][1]);
		ck_assert_msg(config_job_get(w, "acme", "j1", &j) !=
		    CONFIG_OK || 0, "job read back after: %s", bad[i][0]);
		raw_run(db, "DELETE FROM jobs", NULL);
		test_add_job(w, "acme", "j1", "att-1", "dest");
	}
	for (i = 0; i < sizeof(badd) / sizeof(badd[0]); i++) {
		raw_run(db, badd[i][0], badd[i][1]);
		ck_assert_msg(config_destination_get(w, "acme", "dest", &d) !=
		    CONFIG_OK, "destination read back after: %s", badd[i][0]);
		raw_run(db, "DELETE FROM jobs; DELETE FROM destinations", NULL);
		test_add_destination(w, "acme", "dest");
		test_add_job(w, "acme", "j1", "att-1", "dest");
		ck_assert_int_eq(config_destination_get(w, "acme", "dest", &d),
		    CONFIG_OK);
	}
	ck_assert_int_eq(config_job_get(w, "acme", "j1", &j), CONFIG_OK);

	raw_run(db, "UPDATE endpoints SET key_header = 'X-Sig' ||"
	    " char(13, 10) || 'X: 1'", "UPDATE endpoints SET key_header ="
	    " 'X-Sig' || chr(13) || chr(10) || 'X: 1'");
	ck_assert_int_eq(config_endpoint_get(w, "ep", &e), CONFIG_INVALID);
	raw_run(db, "UPDATE tenants SET status_base = 'https://api/' ||"
	    " char(10)", "UPDATE tenants SET status_base = 'https://api/' ||"
	    " chr(10)");
	ck_assert_int_eq(config_tenant_get(w, "acme", &t), CONFIG_INVALID);
	raw_run(db, "UPDATE tenants SET status_base = NULL,"
	    " api_key = x'6b0d0a583a2031'", "UPDATE tenants SET"
	    " status_base = NULL, api_key = '\\x6b0d0a583a2031'::bytea");
	ck_assert_int_eq(config_tenant_get(w, "acme", &t), CONFIG_OK);
	ck_assert_int_eq(config_tenant_api_key(w, "acme", &sec),
	    CONFIG_INVALID);
	ck_assert_uint_eq(sec.n, 0);
	db_close(db);

	/* And the tool's own door: a tenant id may not contain ':'. */
	t = test_tenant("a:b");
	CK_INVALID(config_tenant_add(w, &t, NULL, 0, &why), "tenant");
}
END_TEST

/*
 * Readers
 */

START_TEST(test_read_refuses_writes)
{
	struct config			*r;
	struct config_tenant		 t;
	struct config_endpoint		 e;
	struct config_destination	 d;
	struct config_job		 j;
	struct config_secrets		 sec;
	const char			*why;

	test_add_tenant(w, "acme", 1);
	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC, NULL);
	test_add_destination(w, "acme", "dest");
	test_add_job(w, "acme", "j1", "att-1", "dest");

	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, BUSY_MS, &r),
	    CONFIG_OK);
	/* Reads work... */
	ck_assert_int_eq(config_tenant_get(r, "acme", &t), CONFIG_OK);
	ck_assert_int_eq(config_job_get(r, "acme", "j1", &j), CONFIG_OK);
	/* ...every write fails. */
	t = test_tenant("new");
	ck_assert_int_ne(config_tenant_add(r, &t, NULL, 0, &why), CONFIG_OK);
	e = test_endpoint("new-ep", "acme", CONFIG_AUTH_HMAC);
	ck_assert_int_ne(config_endpoint_add(r, &e, &why), CONFIG_OK);
	ck_assert_int_ne(config_secret_add(r, "ep",
	    (const unsigned char *)"s", 1, 0, &why), CONFIG_OK);
	d = test_destination("acme", "new-dest");
	ck_assert_int_ne(config_destination_add(r, &d, NULL, 0, &why),
	    CONFIG_OK);
	j = test_job("acme", "j2", "att-1", "dest");
	ck_assert_int_ne(config_job_add(r, &j, &why), CONFIG_OK);
	ck_assert_int_ne(config_remove(r, CONFIG_JOBS, "acme", "j1"),
	    CONFIG_OK);
	ck_assert_int_ne(config_remove(r, CONFIG_ENDPOINTS, "ep", NULL),
	    CONFIG_OK);
	ck_assert_int_ne(config_begin(r), CONFIG_OK);
	config_rollback(r);

	/* And nothing changed. */
	ck_assert_int_eq(count(w, CONFIG_TENANTS), 1);
	ck_assert_int_eq(count(w, CONFIG_ENDPOINTS), 1);
	ck_assert_int_eq(count(w, CONFIG_DESTINATIONS), 1);
	ck_assert_int_eq(count(w, CONFIG_JOBS), 1);
	ck_assert_int_eq(config_endpoint_secrets(w, "ep", 1, &sec), CONFIG_OK);
	ck_assert_uint_eq(sec.n, 0);
	config_secrets_clear(&sec);
	config_close(r);
}
END_TEST

START_TEST(test_read_only_open)
{
	struct config		*r;
	struct config_tenant	 t;
	char			 real[PATH_MAX];
	const char		*why;

	/* A file's: PostgreSQL's promise is test_pg_reader's. */
	if (test_backend != TEST_SQLITE)
		return;
	test_add_tenant(w, "acme", 1);
	config_close(w);
	w = NULL;
	ck_assert_ptr_nonnull(realpath(dbpath, real));
	ck_assert_int_eq(fd_accmode(real), -1);

	/*
	 * SQLITE_OPEN_READONLY opens the file O_RDONLY: the descriptor
	 * itself cannot write, whatever the file's mode or our uid.
	 */
	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, 0, &r), CONFIG_OK);
	ck_assert_int_eq(config_tenant_get(r, "acme", &t), CONFIG_OK);
	ck_assert_int_eq(fd_accmode(real), O_RDONLY);
	config_close(r);
	ck_assert_int_eq(fd_accmode(real), -1);

	/* The same look at a writer sees O_RDWR. */
	ck_assert_int_eq(config_open(dbpath, CONFIG_WRITE, 0, &w), CONFIG_OK);
	ck_assert_int_eq(config_tenant_get(w, "acme", &t), CONFIG_OK);
	ck_assert_int_eq(fd_accmode(real), O_RDWR);

	/*
	 * With the file mode 0444: readers need nothing more.  (Root
	 * ignores the mode, so the writer half is checked only as another
	 * user.)
	 */
	config_close(w);
	w = NULL;
	ck_assert_int_eq(chmod(dbpath, 0444), 0);
	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, 0, &r), CONFIG_OK);
	ck_assert_int_eq(config_tenant_get(r, "acme", &t), CONFIG_OK);
	ck_assert_int_eq(count(r, CONFIG_TENANTS), 1);
	config_close(r);
	if (geteuid() != 0) {
		if (config_open(dbpath, CONFIG_WRITE, 0, &w) == CONFIG_OK) {
			t = test_tenant("new");
			ck_assert_int_ne(config_tenant_add(w, &t, NULL, 0,
			    &why), CONFIG_OK);
		}
		ck_assert_int_eq(count(w != NULL ? w : r, CONFIG_TENANTS), 1);
	}
}
END_TEST

START_TEST(test_reader_sees_writes)
{
	struct config		*r;
	struct config_tenant	 t;
	struct config_endpoint	 e;
	struct config_secrets	 sec;

	/* Opened before anything exists. */
	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, BUSY_MS, &r),
	    CONFIG_OK);
	ck_assert_int_eq(config_tenant_get(r, "acme", &t), CONFIG_NOTFOUND);
	ck_assert_int_eq(count(r, CONFIG_TENANTS), 0);

	test_add_tenant(w, "acme", 1);
	ck_assert_int_eq(config_tenant_get(r, "acme", &t), CONFIG_OK);
	ck_assert_str_eq(t.id, "acme");
	ck_assert_int_eq(count(r, CONFIG_TENANTS), 1);

	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC, NULL);
	ck_assert_int_eq(config_endpoint_secrets(r, "ep", util_now(), &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 0);
	config_secrets_clear(&sec);
	add_secret("ep", HMAC_SECRET, 0);
	ck_assert_int_eq(config_endpoint_secrets(r, "ep", util_now(), &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 1);
	config_secrets_clear(&sec);

	/* Rotation: the new secret is first on the next read. */
	add_secret("ep", "rotated", 0);
	ck_assert_int_eq(config_endpoint_secrets(r, "ep", util_now(), &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 2);
	ck_assert_mem_eq(sec.s[0].key, "rotated", 7);
	config_secrets_clear(&sec);

	/* Removal. */
	ck_assert_int_eq(config_remove(w, CONFIG_ENDPOINTS, "ep", NULL),
	    CONFIG_OK);
	ck_assert_int_eq(config_endpoint_get(r, "ep", &e), CONFIG_NOTFOUND);

	/* Uncommitted work is not seen; once committed it is. */
	ck_assert_int_eq(config_begin(w), CONFIG_OK);
	test_add_tenant(w, "pending", 1);
	ck_assert_int_eq(config_tenant_get(r, "pending", &t), CONFIG_NOTFOUND);
	ck_assert_int_eq(config_commit(w), CONFIG_OK);
	ck_assert_int_eq(config_tenant_get(r, "pending", &t), CONFIG_OK);
	config_close(r);
}
END_TEST

/*
 * A snapshot: every look-up in it sees one config.db, a writer's commit
 * waits for it to end, and the next snapshot sees the change.
 */
START_TEST(test_snapshot)
{
	struct config		*r;
	struct config_tenant	 t;
	const char		*why;

	test_add_tenant(w, "acme", 1);
	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, 0, &r), CONFIG_OK);
	config_release(r);	/* without a snapshot: nothing */
	ck_assert_int_eq(config_snapshot(r), CONFIG_OK);
	ck_assert_int_eq(config_snapshot(r), CONFIG_OK);	/* nested: one */
	ck_assert_int_eq(config_tenant_get(r, "acme", &t), CONFIG_OK);
	ck_assert_int_eq(config_tenant_get(r, "late", &t), CONFIG_NOTFOUND);

	/*
	 * SQLite: the writer cannot commit under a reader's snapshot...
	 * PostgreSQL: it can, and the snapshot does not see it.
	 */
	config_close(w);
	ck_assert_int_eq(config_open(dbpath, CONFIG_WRITE, 0, &w), CONFIG_OK);
	t = test_tenant("late");
	ck_assert_int_eq(config_tenant_add(w, &t, NULL, 0, &why),
	    test_backend == TEST_SQLITE ? CONFIG_BUSY : CONFIG_OK);
	ck_assert_int_eq(config_tenant_get(r, "late", &t), CONFIG_NOTFOUND);
	ck_assert_int_eq(count(r, CONFIG_TENANTS), 1);
	/* ...and can once it is released; the next snapshot sees it. */
	config_release(r);
	t = test_tenant("late");
	if (test_backend == TEST_SQLITE)
		ck_assert_int_eq(config_tenant_add(w, &t, NULL, 0, &why),
		    CONFIG_OK);
	ck_assert_int_eq(config_snapshot(r), CONFIG_OK);
	ck_assert_int_eq(config_tenant_get(r, "late", &t), CONFIG_OK);
	config_release(r);
	config_release(r);
	config_close(r);
}
END_TEST

/*
 * Transactions
 */

START_TEST(test_rollback)
{
	struct config_endpoint	 e;
	const char		*why;

	test_add_tenant(w, "acme", 1);

	ck_assert_int_eq(config_begin(w), CONFIG_OK);
	test_add_endpoint(w, "ep-tx", "acme", CONFIG_AUTH_HMAC, NULL);
	add_secret("ep-tx", HMAC_SECRET, 0);
	ck_assert_int_eq(config_endpoint_get(w, "ep-tx", &e), CONFIG_OK);
	config_rollback(w);
	ck_assert_int_eq(config_endpoint_get(w, "ep-tx", &e), CONFIG_NOTFOUND);
	ck_assert_int_eq(count(w, CONFIG_ENDPOINTS), 0);
	/* What was there before stays. */
	ck_assert_int_eq(count(w, CONFIG_TENANTS), 1);

	/* Outside a transaction, rollback does nothing. */
	config_rollback(w);
	ck_assert_int_eq(count(w, CONFIG_TENANTS), 1);

	/* No nesting. */
	ck_assert_int_eq(config_begin(w), CONFIG_OK);
	ck_assert_int_ne(config_begin(w), CONFIG_OK);
	test_add_endpoint(w, "ep-1", "acme", CONFIG_AUTH_HMAC, NULL);
	ck_assert_int_eq(config_commit(w), CONFIG_OK);
	ck_assert_int_eq(config_endpoint_get(w, "ep-1", &e), CONFIG_OK);

	/* A failed write inside leaves the transaction usable. */
	ck_assert_int_eq(config_begin(w), CONFIG_OK);
	test_add_endpoint(w, "ep-2", "acme", CONFIG_AUTH_HMAC, NULL);
	e = test_endpoint("ep-1", "acme", CONFIG_AUTH_HMAC);
	ck_assert_int_eq(config_endpoint_add(w, &e, &why), CONFIG_EXISTS);
	ck_assert_int_eq(config_commit(w), CONFIG_OK);
	ck_assert_int_eq(count(w, CONFIG_ENDPOINTS), 2);
}
END_TEST

/*
 * Listing
 */

/* The string member name of object o, or NULL. */
static const char *
str(const cJSON *o, const char *name)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o,
	    name));
}

static double
num(const cJSON *o, const char *name)
{
	const cJSON	*it = cJSON_GetObjectItemCaseSensitive(o, name);

	ck_assert_msg(cJSON_IsNumber(it), "%s is not a number", name);
	return it->valuedouble;
}

static int
yes(const cJSON *o, const char *name)
{
	const cJSON	*it = cJSON_GetObjectItemCaseSensitive(o, name);

	ck_assert_msg(cJSON_IsBool(it), "%s is not a boolean", name);
	return cJSON_IsTrue(it);
}

START_TEST(test_list)
{
	static const enum config_table	 tables[] = { CONFIG_TENANTS,
	    CONFIG_ENDPOINTS, CONFIG_DESTINATIONS, CONFIG_JOBS };
	static const char *const	 secrets[] = { HMAC_SECRET, KEY_SECRET,
	    API_KEY, DEST_SECRET };
	struct config_tenant		 t;
	struct config_destination	 d;
	struct config			*r, *c;
	cJSON				*arr;
	const cJSON			*o;
	char				*json;
	const char			*why;
	size_t				 i, k, n;

	for (i = 0; i < NELEM(tables); i++)
		ck_assert_int_eq(count(w, tables[i]), 0);

	t = test_tenant("acme");
	SET(t.status_base, "https://api.tornado.example/v1");
	ck_assert_int_eq(config_tenant_add(w, &t,
	    (const unsigned char *)API_KEY, strlen(API_KEY), &why), CONFIG_OK);
	t = test_tenant("beta");
	t.active = 0;
	ck_assert_int_eq(config_tenant_add(w, &t, NULL, 0, &why), CONFIG_OK);
	test_add_endpoint(w, "ep-hmac", "acme", CONFIG_AUTH_HMAC, NULL);
	add_secret("ep-hmac", HMAC_SECRET, 0);
	add_secret("ep-hmac", "expired-long-ago", 1);
	test_add_endpoint(w, "ep-key", "beta", CONFIG_AUTH_KEY, NULL);
	add_secret("ep-key", KEY_SECRET, 0);
	d = test_destination("acme", "signed");
	ck_assert_int_eq(config_destination_add(w, &d,
	    (const unsigned char *)DEST_SECRET, strlen(DEST_SECRET), &why),
	    CONFIG_OK);
	test_add_destination(w, "acme", "unsigned");
	test_add_job(w, "acme", "j1", "att-1", "signed");

	/* Through the writer and through a reader alike. */
	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, 0, &r), CONFIG_OK);
	for (k = 0; k < 2; k++) {
		c = k == 0 ? w : r;

		ck_assert_int_eq(config_list(c, CONFIG_TENANTS, NULL, &arr),
		    CONFIG_OK);
		ck_assert_int_eq(cJSON_GetArraySize(arr), 2);
		o = cJSON_GetArrayItem(arr, 0);
		ck_assert_str_eq(str(o, "id"), "acme");
		ck_assert_int_ne(yes(o, "active"), 0);
		ck_assert_int_ne(yes(o, "api_key"), 0);
		ck_assert_str_eq(str(o, "status_base"),
		    "https://api.tornado.example/v1");
		o = cJSON_GetArrayItem(arr, 1);
		ck_assert_str_eq(str(o, "id"), "beta");
		ck_assert_int_eq(yes(o, "active"), 0);
		ck_assert_int_eq(yes(o, "api_key"), 0);
		cJSON_Delete(arr);

		ck_assert_int_eq(config_list(c, CONFIG_ENDPOINTS, NULL, &arr),
		    CONFIG_OK);
		ck_assert_int_eq(cJSON_GetArraySize(arr), 2);
		o = cJSON_GetArrayItem(arr, 0);
		ck_assert_str_eq(str(o, "name"), "ep-hmac");
		ck_assert_str_eq(str(o, "tenant"), "acme");
		ck_assert_str_eq(str(o, "kind"), "tornado-job");
		ck_assert_str_eq(str(o, "auth"), "hmac");
		ck_assert(num(o, "tolerance_s") == 300);
		/* Active secrets only. */
		ck_assert(num(o, "secrets") == 1);
		o = cJSON_GetArrayItem(arr, 1);
		ck_assert_str_eq(str(o, "name"), "ep-key");
		ck_assert_str_eq(str(o, "auth"), "key");
		ck_assert_str_eq(str(o, "key_header"), "X-Hook-Key");
		ck_assert(num(o, "secrets") == 1);
		cJSON_Delete(arr);

		ck_assert_int_eq(config_list(c, CONFIG_DESTINATIONS, NULL,
		    &arr),
		    CONFIG_OK);
		ck_assert_int_eq(cJSON_GetArraySize(arr), 2);
		o = cJSON_GetArrayItem(arr, 0);
		ck_assert_str_eq(str(o, "name"), "signed");
		ck_assert_str_eq(str(o, "url"), TEST_DEST_URL);
		ck_assert_int_ne(yes(o, "signed"), 0);
		ck_assert(num(o, "timeout_ms") == TEST_DEST_TIMEOUT_MS);
		ck_assert(num(o, "max_attempts") == TEST_DEST_MAX_ATTEMPTS);
		o = cJSON_GetArrayItem(arr, 1);
		ck_assert_str_eq(str(o, "name"), "unsigned");
		ck_assert_int_eq(yes(o, "signed"), 0);
		cJSON_Delete(arr);

		ck_assert_int_eq(config_list(c, CONFIG_JOBS, NULL,
		    &arr), CONFIG_OK);
		ck_assert_int_eq(cJSON_GetArraySize(arr), 1);
		o = cJSON_GetArrayItem(arr, 0);
		ck_assert_str_eq(str(o, "tenant"), "acme");
		ck_assert_str_eq(str(o, "job_id"), "j1");
		ck_assert_str_eq(str(o, "attempt"), "att-1");
		ck_assert_str_eq(str(o, "step"), "analyze-v1");
		ck_assert_str_eq(str(o, "destination"), "signed");
		cJSON_Delete(arr);

		/* No secret, in any table's listing. */
		for (i = 0; i < NELEM(tables); i++) {
			ck_assert_int_eq(config_list(c, tables[i], NULL, &arr),
			    CONFIG_OK);
			json = cJSON_PrintUnformatted(arr);
			ck_assert_ptr_nonnull(json);
			for (n = 0; n < NELEM(secrets); n++)
				ck_assert_msg(strstr(json, secrets[n]) == NULL,
				    "listing shows a secret: %s", json);
			ck_assert_ptr_null(strstr(json, "expired-long-ago"));
			cJSON_free(json);
			cJSON_Delete(arr);
		}
	}
	arr = (cJSON *)&arr;
	ck_assert_int_ne(config_list(r, (enum config_table)9, NULL, &arr),
	    CONFIG_OK);
	ck_assert_ptr_null(arr);
	config_close(r);
}
END_TEST

/*
 * Names
 */

START_TEST(test_names)
{
	static const enum config_status	 all[] = { CONFIG_OK, CONFIG_NOTFOUND,
	    CONFIG_EXISTS, CONFIG_INVALID, CONFIG_REFUSED, CONFIG_BUSY,
	    CONFIG_ERROR, CONFIG_NOMEM, CONFIG_STALE, CONFIG_OLD,
	    CONFIG_DENIED };
	enum config_kind		 k;
	enum config_auth		 a;
	size_t				 i, j;

	for (i = 0; i < NELEM(all); i++)
		for (j = 0; j < i; j++)
			ck_assert_str_ne(config_strerror(all[i]),
			    config_strerror(all[j]));
	ck_assert_ptr_nonnull(config_strerror((enum config_status)99));
	/*
	 * A write this user or role may not make is told apart; a database
	 * that refuses every writer (a standby, a reader's connection) is
	 * no one's permission to grant.
	 */
	ck_assert_int_eq(config_status_of(NULL, DB_DENIED), CONFIG_DENIED);
	ck_assert_int_eq(config_status_of(NULL, DB_READONLY), CONFIG_ERROR);
	ck_assert_int_eq(config_status_of(NULL, DB_ERROR), CONFIG_ERROR);
	ck_assert_int_eq(config_status_of(NULL, DB_IOERR), CONFIG_ERROR);
	ck_assert_int_eq(config_status_of(NULL, DB_GONE), CONFIG_BUSY);

	ck_assert_str_eq(config_kind_name(CONFIG_KIND_JOB), "tornado-job");
	ck_assert_str_eq(config_kind_name(CONFIG_KIND_ORG), "tornado-org");
	ck_assert_str_eq(config_kind_name(CONFIG_KIND_MAPPED), "mapped");
	ck_assert_str_eq(config_auth_name(CONFIG_AUTH_HMAC), "hmac");
	ck_assert_str_eq(config_auth_name(CONFIG_AUTH_KEY), "key");
	ck_assert_str_eq(config_auth_name(CONFIG_AUTH_STANDARD), "standard");
	ck_assert_ptr_nonnull(config_kind_name((enum config_kind)5));
	ck_assert_ptr_nonnull(config_auth_name((enum config_auth)5));

	ck_assert_int_eq(config_kind_parse("tornado-org", &k), 0);
	ck_assert_int_eq(k, CONFIG_KIND_ORG);
	ck_assert_int_eq(config_kind_parse("tornado-job", &k), 0);
	ck_assert_int_eq(k, CONFIG_KIND_JOB);
	ck_assert_int_eq(config_kind_parse("mapped", &k), 0);
	ck_assert_int_eq(k, CONFIG_KIND_MAPPED);
	ck_assert_int_eq(config_auth_parse("standard", &a), 0);
	ck_assert_int_eq(a, CONFIG_AUTH_STANDARD);
	ck_assert_int_eq(config_auth_parse("key", &a), 0);
	ck_assert_int_eq(a, CONFIG_AUTH_KEY);
	k = CONFIG_KIND_ORG;
	ck_assert_int_eq(config_kind_parse("tornado", &k), -1);
	ck_assert_int_eq(config_kind_parse("", &k), -1);
	ck_assert_int_eq(k, CONFIG_KIND_ORG);
	a = CONFIG_AUTH_KEY;
	ck_assert_int_eq(config_auth_parse("hmac-sha256", &a), -1);
	ck_assert_int_eq(config_auth_parse("", &a), -1);
	ck_assert_int_eq(a, CONFIG_AUTH_KEY);
}
END_TEST

/*
 * config/edit.h: the admin tool's checks, changes in place, secrets by id
 * and the explanation of refusals.
 */

START_TEST(test_check_values)
{
	static const char *const good_urls[] = {
		"http://a", "https://hooks.example/in?x=1",
		"HTTPS://h.example:8443/", "http://user:pw@h/p",
		"http://127.0.0.1:9/sink", "http://[::1]:8080/",
	};
	static const char *const bad_urls[] = {
		"", "ftp://x", "http://", "https://", "http:///path",
		"http://:80/", "http://u@", "http://a b/", "http://a\r\nX: 1",
		"file:///etc/passwd", "http:/a", "//a", "http://a/\"",
		"javascript:alert(1)",
	};
	static const char *const reserved[] = { "_health", "_metrics", "_x",
	    "unknown" };
	static const char *const bad_names[] = { "", "a/b", "..", ".a", "-a",
	    "a b", "a:b" };
	static const unsigned char bin16[16] = { 0 };
	size_t	i;

	for (i = 0; i < NELEM(good_urls); i++)
		ck_assert_msg(config_check_url(good_urls[i]) == NULL,
		    "\"%s\" refused", good_urls[i]);
	for (i = 0; i < NELEM(bad_urls); i++)
		ck_assert_msg(config_check_url(bad_urls[i]) != NULL &&
		    strstr(config_check_url(bad_urls[i]), "http://HOST") !=
		    NULL, "\"%s\" taken", bad_urls[i]);
	ck_assert_ptr_nonnull(config_check_url(NULL));

	ck_assert_ptr_null(config_check_endpoint_name("tornado-acme.v2"));
	for (i = 0; i < NELEM(reserved); i++)
		ck_assert_ptr_nonnull(strstr(config_check_endpoint_name(
		    reserved[i]), "reserved"));
	for (i = 0; i < NELEM(bad_names); i++)
		ck_assert_ptr_nonnull(strstr(config_check_endpoint_name(
		    bad_names[i]), "expected"));

	/* hmac: 16 bytes at least, any bytes. */
	ck_assert_ptr_null(config_check_secret(CONFIG_AUTH_HMAC, NULL, bin16,
	    16));
	ck_assert_ptr_nonnull(strstr(config_check_secret(CONFIG_AUTH_HMAC,
	    NULL,
	    bin16, 15), "16 bytes"));
	ck_assert_ptr_nonnull(config_check_secret(CONFIG_AUTH_HMAC, NULL, NULL,
	    0));
	/* standard: whsec_ and base64 of 16 bytes at least. */
	ck_assert_ptr_null(config_check_secret(CONFIG_AUTH_STANDARD, NULL,
	    (const unsigned char *)DEST_SECRET, strlen(DEST_SECRET)));
	ck_assert_ptr_nonnull(config_check_secret(CONFIG_AUTH_STANDARD, NULL,
	    (const unsigned char *)DEST_SECRET + 6, strlen(DEST_SECRET) - 6));
	ck_assert_ptr_nonnull(config_check_secret(CONFIG_AUTH_STANDARD, NULL,
	    (const unsigned char *)"whsec_c2hvcnQ=", 14));	/* 5 bytes */
	ck_assert_ptr_nonnull(config_check_secret(CONFIG_AUTH_STANDARD, NULL,
	    (const unsigned char *)"whsec_!!!!", 10));
	ck_assert_ptr_nonnull(config_check_secret(CONFIG_AUTH_STANDARD, NULL,
	    (const unsigned char *)"whsec_", 6));
	/* key: any 1..512 bytes. */
	ck_assert_ptr_null(config_check_secret(CONFIG_AUTH_KEY, NULL,
	    (const unsigned char *)"k", 1));
	ck_assert_ptr_nonnull(config_check_secret(CONFIG_AUTH_KEY, NULL,
	    bin16, CONFIG_SECRET_MAX + 1));

	/* A destination's: base64 with or without the prefix. */
	ck_assert_ptr_null(config_check_dest_secret(
	    (const unsigned char *)DEST_SECRET, strlen(DEST_SECRET)));
	ck_assert_ptr_null(config_check_dest_secret(
	    (const unsigned char *)DEST_SECRET + 6, strlen(DEST_SECRET) - 6));
	ck_assert_ptr_nonnull(config_check_dest_secret(
	    (const unsigned char *)HMAC_SECRET, strlen(HMAC_SECRET)));
	ck_assert_ptr_nonnull(config_check_dest_secret(
	    (const unsigned char *)"whsec_c2hvcnQ=", 14));

	ck_assert_ptr_null(config_check_api_key(
	    (const unsigned char *)API_KEY, strlen(API_KEY)));
	ck_assert_ptr_nonnull(config_check_api_key(
	    (const unsigned char *)"a b", 3));
	ck_assert_ptr_nonnull(config_check_api_key(
	    (const unsigned char *)"", 0));

	ck_assert_ptr_null(config_check_output("{}"));
	ck_assert_ptr_null(config_check_output("{\"format\":\"mp4\"}"));
	ck_assert_ptr_nonnull(config_check_output("[]"));
	ck_assert_ptr_nonnull(config_check_output("\"x\""));
	ck_assert_ptr_nonnull(config_check_output("{"));
	ck_assert_ptr_nonnull(config_check_output("{\"a\":1,\"a\":2}"));
	ck_assert_ptr_nonnull(config_check_output("{} {}"));
	ck_assert_ptr_nonnull(config_check_output(""));
}
END_TEST

START_TEST(test_referrer)
{
	const char	*kind;
	char		 name[HB_ID_MAX + 1], job[HB_ID_MAX + 1];

	test_add_tenant(w, "acme", 1);
	test_add_tenant(w, "beta", 1);
	ck_assert_int_eq(config_referrer(w, CONFIG_TENANTS, "acme", NULL,
	    &kind, name, sizeof(name)), CONFIG_NOTFOUND);
	test_add_destination(w, "acme", "sink");
	ck_assert_int_eq(config_referrer(w, CONFIG_TENANTS, "acme", NULL,
	    &kind, name, sizeof(name)), CONFIG_OK);
	ck_assert_str_eq(kind, "destination");
	ck_assert_str_eq(name, "sink");
	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC, HMAC_SECRET);
	ck_assert_int_eq(config_referrer(w, CONFIG_TENANTS, "acme", NULL,
	    &kind, name, sizeof(name)), CONFIG_OK);
	ck_assert_str_eq(kind, "endpoint");
	ck_assert_str_eq(name, "ep");

	ck_assert_int_eq(config_referrer(w, CONFIG_DESTINATIONS, "acme", "sink",
	    &kind, name, sizeof(name)), CONFIG_NOTFOUND);
	test_add_job(w, "acme", "job-1", "att-1", "sink");
	ck_assert_int_eq(config_referrer(w, CONFIG_DESTINATIONS, "acme", "sink",
	    &kind, name, sizeof(name)), CONFIG_OK);
	ck_assert_str_eq(kind, "job");
	ck_assert_str_eq(name, "job-1");
	/* Only tenants and destinations are referred to. */
	ck_assert_int_eq(config_referrer(w, CONFIG_JOBS, "acme", "job-1",
	    &kind, name, sizeof(name)), CONFIG_ERROR);
	ck_assert_int_eq(config_referrer(w, CONFIG_DESTINATIONS, "acme", NULL,
	    &kind, name, sizeof(name)), CONFIG_ERROR);
	/* A name that does not fit is an error, never cut. */
	ck_assert_int_eq(config_referrer(w, CONFIG_DESTINATIONS, "acme", "sink",
	    &kind, name, 3), CONFIG_ERROR);

	/* The job of an action id. */
	ck_assert_int_eq(config_job_of_action(w, "acme", "att-1", TEST_STEP,
	    job, sizeof(job)), CONFIG_OK);
	ck_assert_str_eq(job, "job-1");
	ck_assert_int_eq(config_job_of_action(w, "acme", "att-1", "other-step",
	    job, sizeof(job)), CONFIG_NOTFOUND);
	ck_assert_int_eq(config_job_of_action(w, "beta", "att-1", TEST_STEP,
	    job, sizeof(job)), CONFIG_NOTFOUND);
}
END_TEST

START_TEST(test_updates)
{
	struct config_tenant		 t;
	struct config_endpoint		 e;
	struct config_destination	 d;
	struct config_secrets		 sec;
	struct config			*r;
	const char			*why;

	test_add_tenant(w, "acme", 1);
	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC, HMAC_SECRET);
	test_add_endpoint(w, "std", "acme", CONFIG_AUTH_STANDARD, DEST_SECRET);
	d = test_destination("acme", "sink");
	test_put_destination(w, &d, DEST_SECRET);

	/* Tenant: every field written; the key only when given. */
	ck_assert_int_eq(config_tenant_get(w, "acme", &t), CONFIG_OK);
	t.active = 0;
	SET(t.status_base, "https://api.example/v2");
	ck_assert_int_eq(config_tenant_update(w, &t, NULL, 0, &why),
	    CONFIG_OK);
	ck_assert_int_eq(config_tenant_update(w, &t,
	    (const unsigned char *)API_KEY, strlen(API_KEY), &why), CONFIG_OK);
	t.active = 1;
	ck_assert_int_eq(config_tenant_update(w, &t, NULL, 0, &why),
	    CONFIG_OK);
	memset(&t, 0, sizeof(t));
	ck_assert_int_eq(config_tenant_get(w, "acme", &t), CONFIG_OK);
	ck_assert_int_eq(t.active, 1);
	ck_assert_str_eq(t.status_base, "https://api.example/v2");
	ck_assert_int_eq(config_tenant_api_key(w, "acme", &sec), CONFIG_OK);
	ck_assert_uint_eq(sec.n, 1);
	ck_assert_mem_eq(sec.s[0].key, API_KEY, strlen(API_KEY));
	config_secrets_clear(&sec);
	CK_INVALID(config_tenant_update(w, &t, (const unsigned char *)"a b", 3,
	    &why), "key");
	SET(t.status_base, "ftp://x");
	CK_INVALID(config_tenant_update(w, &t, NULL, 0, &why), "status");
	t = test_tenant("nosuch");
	ck_assert_int_eq(config_tenant_update(w, &t, NULL, 0, &why),
	    CONFIG_NOTFOUND);

	/* Endpoint: header and tolerance; kind, auth, tenant stay. */
	ck_assert_int_eq(config_endpoint_get(w, "ep", &e), CONFIG_OK);
	e.tolerance = 60;
	SET(e.key_header, "Mux-Signature");
	e.kind = CONFIG_KIND_ORG;	/* not written */
	ck_assert_int_eq(config_endpoint_update(w, &e, &why), CONFIG_OK);
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(config_endpoint_get(w, "ep", &e), CONFIG_OK);
	ck_assert_int_eq(e.tolerance, 60);
	ck_assert_str_eq(e.key_header, "Mux-Signature");
	ck_assert_int_eq(e.kind, CONFIG_KIND_JOB);
	e.tolerance = 0;
	CK_INVALID(config_endpoint_update(w, &e, &why), "tolerance");
	e.tolerance = 60;
	SET(e.key_header, "X Bad");
	CK_INVALID(config_endpoint_update(w, &e, &why), "header");
	SET(e.name, "nosuch");
	SET(e.key_header, "");
	ck_assert_int_eq(config_endpoint_update(w, &e, &why),
	    CONFIG_NOTFOUND);
	/* A standard endpoint keeps no header. */
	ck_assert_int_eq(config_endpoint_get(w, "std", &e), CONFIG_OK);
	SET(e.key_header, "X-Ignored");
	ck_assert_int_eq(config_endpoint_update(w, &e, &why), CONFIG_OK);
	ck_assert_int_eq(config_endpoint_get(w, "std", &e), CONFIG_OK);
	ck_assert_str_eq(e.key_header, "");

	/* Destination: every field; the secret only when given. */
	ck_assert_int_eq(config_destination_get(w, "acme", "sink", &d),
	    CONFIG_OK);
	SET(d.url, "https://hooks.example/in");
	SET(d.status_url, "https://hooks.example/status");
	d.idempotent = 1;
	d.timeout_ms = 2500;
	d.max_attempts = 3;
	ck_assert_int_eq(config_destination_update(w, &d, NULL, 0, &why),
	    CONFIG_OK);
	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(config_destination_get(w, "acme", "sink", &d),
	    CONFIG_OK);
	ck_assert_str_eq(d.url, "https://hooks.example/in");
	ck_assert_str_eq(d.status_url, "https://hooks.example/status");
	ck_assert_int_eq(d.idempotent, 1);
	ck_assert_int_eq(d.timeout_ms, 2500);
	ck_assert_int_eq(d.max_attempts, 3);
	ck_assert_int_eq(config_destination_secret(w, "acme", "sink", &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 1);
	ck_assert_mem_eq(sec.s[0].key, DEST_SECRET, strlen(DEST_SECRET));
	config_secrets_clear(&sec);
	ck_assert_int_eq(config_destination_update(w, &d,
	    (const unsigned char *)"whsec_bmV3LXNlY3JldC0xNi1ieXRlcw==", 34,
	    &why), CONFIG_OK);
	ck_assert_int_eq(config_destination_secret(w, "acme", "sink", &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 1);
	ck_assert_mem_eq(sec.s[0].key, "whsec_bmV3LXNlY3JldC0xNi1ieXRlcw==",
	    34);
	config_secrets_clear(&sec);
	SET(d.url, "ftp://x");
	CK_INVALID(config_destination_update(w, &d, NULL, 0, &why), "URL");
	SET(d.url, "https://hooks.example/in");
	d.timeout_ms = 0;
	CK_INVALID(config_destination_update(w, &d, NULL, 0, &why), "timeout");
	d.timeout_ms = 1;
	SET(d.name, "nosuch");
	ck_assert_int_eq(config_destination_update(w, &d, NULL, 0, &why),
	    CONFIG_NOTFOUND);

	/* A reader never writes. */
	r = test_config_open(dir, CONFIG_READ, BUSY_MS);
	ck_assert_int_eq(config_tenant_get(r, "acme", &t), CONFIG_OK);
	ck_assert_int_eq(config_tenant_update(r, &t, NULL, 0, &why),
	    CONFIG_ERROR);
	ck_assert_int_eq(config_secret_revoke(r, "ep", 1), CONFIG_ERROR);
	config_close(r);
}
END_TEST

/* Signs body at now with secret and verifies it against the endpoint's
   active secrets, as read by a read-only handle on config.db. */
static enum auth_status
verify_with(const char *endpoint, const char *secret, int64_t now)
{
	static const unsigned char	 body[] = "{\"job_id\":\"j\"}";
	struct auth_secret		 one;
	struct config_secrets		 sec;
	struct config			*r;
	enum auth_status		 as;
	char				 sig[AUTH_HEADER_MAX];

	one.key = (const unsigned char *)secret;
	one.keylen = strlen(secret);
	one.expires_at = 0;
	ck_assert_int_eq(auth_sign_tsig(&one, 1, now, now, body,
	    sizeof(body) - 1, sig, sizeof(sig)), 0);
	r = test_config_open(dir, CONFIG_READ, BUSY_MS);
	ck_assert_int_eq(config_endpoint_secrets(r, endpoint, now, &sec),
	    CONFIG_OK);
	as = auth_verify_tsig(sig, body, sizeof(body) - 1, sec.s, sec.n, now,
	    AUTH_TOLERANCE_DEFAULT, NULL);
	config_secrets_clear(&sec);
	config_close(r);
	return as;
}

struct seen {
	int64_t	id[8];
	int64_t	expires[8];
	int64_t	created[8];
	int	n;
	int	stop_after;
};

static int
see(void *arg, const struct config_secret_info *si)
{
	struct seen	*s = arg;

	ck_assert_int_lt(s->n, 8);
	s->id[s->n] = si->id;
	s->expires[s->n] = si->expires_at;
	s->created[s->n] = si->created_at;
	s->n++;
	return s->stop_after != 0 && s->n == s->stop_after;
}

START_TEST(test_secret_rotation)
{
	struct seen	 s;
	int64_t		 now = util_now();
	int		 n;

	test_add_tenant(w, "acme", 1);
	test_add_endpoint(w, "ep", "acme", CONFIG_AUTH_HMAC,
	    "old-secret-0123456789");
	test_add_endpoint(w, "other", "acme", CONFIG_AUTH_HMAC,
	    "other-secret-0123456789");
	add_secret("ep", "soon-secret-0123456789", now + 600);

	/* Listed oldest first, with ids, times and expiries. */
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(config_secret_each(w, "ep", see, &s), CONFIG_OK);
	ck_assert_int_eq(s.n, 2);
	ck_assert_int_lt(s.id[0], s.id[1]);
	ck_assert_int_eq(s.expires[0], 0);
	ck_assert_int_eq(s.expires[1], now + 600);
	ck_assert(s.created[0] >= now - 5 && s.created[0] <= now + 5);
	memset(&s, 0, sizeof(s));
	s.stop_after = 1;
	ck_assert_int_eq(config_secret_each(w, "ep", see, &s), CONFIG_OK);
	ck_assert_int_eq(s.n, 1);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(config_secret_each(w, "nosuch", see, &s),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(s.n, 0);

	/* Retire: a day for the one that never expired; the sooner one
	   keeps its own; another endpoint's are untouched. */
	ck_assert_int_eq(config_secret_retire(w, "ep", now + 86400, &n),
	    CONFIG_OK);
	ck_assert_int_eq(n, 1);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(config_secret_each(w, "ep", see, &s), CONFIG_OK);
	ck_assert_int_eq(s.expires[0], now + 86400);
	ck_assert_int_eq(s.expires[1], now + 600);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(config_secret_each(w, "other", see, &s), CONFIG_OK);
	ck_assert_int_eq(s.expires[0], 0);
	ck_assert_int_eq(config_secret_retire(w, "nosuch", now + 1, &n),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(config_secret_retire(w, "ep", 0, &n), CONFIG_ERROR);

	/* Until then both authenticate; after, the retired one does not. */
	ck_assert_int_eq(verify_with("ep", "old-secret-0123456789", now),
	    AUTH_OK);
	ck_assert_int_eq(verify_with("ep", "old-secret-0123456789",
	    now + 86400), AUTH_NO_SECRET);
	add_secret("ep", "new-secret-0123456789", 0);
	ck_assert_int_eq(verify_with("ep", "old-secret-0123456789",
	    now + 86400), AUTH_BAD_SIGNATURE);
	ck_assert_int_eq(verify_with("ep", "new-secret-0123456789",
	    now + 86400), AUTH_OK);

	/* Revoke: by id and endpoint; then refused at once. */
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(config_secret_each(w, "ep", see, &s), CONFIG_OK);
	ck_assert_int_eq(s.n, 3);
	ck_assert_int_eq(config_secret_revoke(w, "other", s.id[0]),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(config_secret_revoke(w, "ep", s.id[0]), CONFIG_OK);
	ck_assert_int_eq(config_secret_revoke(w, "ep", s.id[0]),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(verify_with("ep", "old-secret-0123456789", now),
	    AUTH_BAD_SIGNATURE);
	ck_assert_int_eq(verify_with("ep", "new-secret-0123456789", now),
	    AUTH_OK);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM secrets"
	    " WHERE endpoint = 'ep'"), 2);
}
END_TEST

/* ---- listing with filters, importing jobs ---- */

START_TEST(test_list_filter)
{
	struct config_destination	 d;
	struct config_list_filter	 f;
	cJSON				*arr, *row;
	const cJSON			*v;
	int64_t				 now = util_now_ms();

	test_add_tenant(w, "acme", 1);
	test_add_tenant(w, "beta", 1);
	d = test_destination("acme", "creds");
	SET(d.url, "https://user:pass@host/x?token=abc&a=1");
	SET(d.status_url, "https://host/s?api_key=k9&page=2");
	test_put_destination(w, &d, NULL);
	test_add_destination(w, "beta", "plain");
	test_add_job(w, "acme", "j1", "a1", "creds");
	test_add_job(w, "acme", "j2", "a2", "creds");
	test_add_job(w, "beta", "j3", "a3", "plain");

	/* No filter: all, times in unix ms (the row was made just now). */
	ck_assert_int_eq(config_list(w, CONFIG_JOBS, NULL, &arr),
	    CONFIG_OK);
	ck_assert_int_eq(cJSON_GetArraySize(arr), 3);
	v = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(arr, 0),
	    "created_at");
	ck_assert(cJSON_IsNumber(v));
	ck_assert((int64_t)v->valuedouble > now - 5000 &&
	    (int64_t)v->valuedouble < now + 5000);
	cJSON_Delete(arr);

	memset(&f, 0, sizeof(f));
	f.tenant = "beta";
	ck_assert_int_eq(config_list(w, CONFIG_JOBS, &f, &arr),
	    CONFIG_OK);
	ck_assert_int_eq(cJSON_GetArraySize(arr), 1);
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetArrayItem(arr, 0), "job_id")->valuestring, "j3");
	cJSON_Delete(arr);
	ck_assert_int_eq(config_list(w, CONFIG_TENANTS, &f, &arr),
	    CONFIG_OK);
	ck_assert_int_eq(cJSON_GetArraySize(arr), 1);
	cJSON_Delete(arr);

	memset(&f, 0, sizeof(f));
	f.limit = 2;
	ck_assert_int_eq(config_list(w, CONFIG_JOBS, &f, &arr),
	    CONFIG_OK);
	ck_assert_int_eq(cJSON_GetArraySize(arr), 2);
	cJSON_Delete(arr);

	f.limit = 0;
	f.since_ms = now + 60000;
	ck_assert_int_eq(config_list(w, CONFIG_JOBS, &f, &arr),
	    CONFIG_OK);
	ck_assert_int_eq(cJSON_GetArraySize(arr), 0);
	cJSON_Delete(arr);
	f.since_ms = now - 60000;
	ck_assert_int_eq(config_list(w, CONFIG_JOBS, &f, &arr),
	    CONFIG_OK);
	ck_assert_int_eq(cJSON_GetArraySize(arr), 3);
	cJSON_Delete(arr);

	/* Credentials in URLs never leave config_list(). */
	memset(&f, 0, sizeof(f));
	f.tenant = "acme";
	ck_assert_int_eq(config_list(w, CONFIG_DESTINATIONS, &f, &arr),
	    CONFIG_OK);
	ck_assert_int_eq(cJSON_GetArraySize(arr), 1);
	row = cJSON_GetArrayItem(arr, 0);
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(row,
	    "url")->valuestring, "https://***@host/x?token=***&a=1");
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(row,
	    "status_url")->valuestring, "https://host/s?api_key=***&page=2");
	cJSON_Delete(arr);
	ck_assert_int_eq(config_list(w, CONFIG_DESTINATIONS, NULL,
	    &arr), CONFIG_OK);
	row = cJSON_GetArrayItem(arr, 0);
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(row,
	    "url")->valuestring, "https://***@host/x?token=***&a=1");
	cJSON_Delete(arr);
	/* What is stored, and used to deliver, is the URL as given. */
	ck_assert_int_eq(config_destination_get(w, "acme", "creds", &d),
	    CONFIG_OK);
	ck_assert_str_eq(d.url, "https://user:pass@host/x?token=abc&a=1");
}
END_TEST

static const struct {
	const char	*line;
	const char	*tenant;	/* the caller's */
	const char	*why;		/* NULL: parses */
} parsecases[] = {
	{ "{\"tenant\":\"t\",\"job_id\":\"j\",\"attempt\":\"a\",\"step\":\"s\","
	    "\"destination\":\"d\",\"source_url\":\"https://x/\","
	    "\"output\":{\"k\":[1,2]}}", NULL, NULL },
	{ "{\"job_id\":\"j\",\"attempt\":\"a\",\"step\":\"s\","
	    "\"destination\":\"d\"}", "t", NULL },
	{ "{\"tenant\":\"t\",\"job_id\":\"j\",\"attempt\":\"a\",\"step\":\"s\","
	    "\"destination\":\"d\",\"output\":null}", "t", NULL },
	{ "{\"job_id\":\"j\",\"attempt\":\"a\",\"step\":\"s\","
	    "\"destination\":\"d\"}", NULL, "missing \"tenant\"" },
	{ "{\"tenant\":\"t\",\"job_id\":\"j\",\"attempt\":\"a\","
	    "\"destination\":\"d\"}", NULL, "missing \"step\"" },
	{ "{\"tenant\":\"t\",\"job_id\":7,\"attempt\":\"a\",\"step\":\"s\","
	    "\"destination\":\"d\"}", NULL, "\"job_id\" is not a string" },
	{ "{\"tenant\":\"u\",\"job_id\":\"j\",\"attempt\":\"a\",\"step\":\"s\","
	    "\"destination\":\"d\"}", "t", "\"tenant\" is not t" },
	{ "{\"tenant\":\"t\",\"job_id\":\"j\",\"attempt\":\"a\",\"step\":\"s\","
	    "\"destination\":\"d\",\"output\":\"{}\"}", NULL,
	    "\"output\" is not a JSON object" },
	{ "{\"tenant\":\"t\",\"job_id\":\"j\",\"attempt\":\"a\",\"step\":\"s\","
	    "\"destination\":\"d\",\"colour\":1}", NULL,
	    "unknown field \"colour\"" },
	{ "{\"tenant\":\"t\",\"tenant\":\"t\"}", NULL, "duplicate" },
	{ "[1]", NULL, "not a JSON object" },
	{ "{\"tenant\":", NULL, "not JSON" },
	{ "", NULL, "not JSON" },
};

START_TEST(test_job_parse)
{
	struct config_job	 j;
	enum config_status	 rc;
	char			 why[256];

	rc = config_job_parse(parsecases[_i].line, strlen(parsecases[_i].line),
	    parsecases[_i].tenant, &j, why, sizeof(why));
	if (parsecases[_i].why == NULL) {
		ck_assert_int_eq(rc, CONFIG_OK);
		ck_assert_str_eq(j.tenant, "t");
		ck_assert_str_eq(j.job_id, "j");
		ck_assert_str_eq(j.step, "s");
		return;
	}
	ck_assert_int_eq(rc, CONFIG_INVALID);
	ck_assert_msg(strstr(why, parsecases[_i].why) != NULL,
	    "reason \"%s\" does not mention \"%s\"", why, parsecases[_i].why);
}
END_TEST

START_TEST(test_job_parse_output)
{
	struct config_job	 j;
	const char		*ok = "{\"tenant\":\"t\",\"job_id\":\"j\","
	    "\"attempt\":\"a\",\"step\":\"s\",\"destination\":\"d\","
	    "\"output\": { \"k\" : [1, 2] } }";
	char			 why[256], line[HB_TEXT_MAX + 200];
	int			 n;

	ck_assert_int_eq(config_job_parse(ok, strlen(ok), NULL, &j, why,
	    sizeof(why)), CONFIG_OK);
	ck_assert_str_eq(j.output, "{\"k\":[1,2]}");
	/* A field over its bound is refused, not cut. */
	n = snprintf(line, sizeof(line), "{\"tenant\":\"t\",\"job_id\":\"j\","
	    "\"attempt\":\"a\",\"step\":\"s\",\"destination\":\"d\","
	    "\"source_url\":\"%0*d\"}", HB_TEXT_MAX + 1, 0);
	ck_assert_int_lt(n, (int)sizeof(line));
	ck_assert_int_eq(config_job_parse(line, (size_t)n, NULL, &j, why,
	    sizeof(why)), CONFIG_INVALID);
	ck_assert_ptr_nonnull(strstr(why, "\"source_url\" is longer than"));
}
END_TEST

START_TEST(test_job_import)
{
	struct config_job	 j;
	const char		*why = NULL;
	int			 present = -1;

	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "sink");
	j = test_job("acme", "j1", "a1", "sink");
	SET(j.output, "{\"k\":1}");
	ck_assert_int_eq(config_begin(w), CONFIG_OK);
	ck_assert_int_eq(config_job_import(w, &j, &present, &why), CONFIG_OK);
	ck_assert_int_eq(present, 0);
	/* The same again: present, nothing written. */
	ck_assert_int_eq(config_job_import(w, &j, &present, &why), CONFIG_OK);
	ck_assert_int_eq(present, 1);
	/* The same key with other fields: refused, naming the first. */
	SET(j.output, "{\"k\":2}");
	ck_assert_int_eq(config_job_import(w, &j, &present, &why),
	    CONFIG_EXISTS);
	ck_assert_int_eq(present, 0);
	ck_assert_str_eq(why, "output");
	SET(j.step, "other");
	ck_assert_int_eq(config_job_import(w, &j, &present, &why),
	    CONFIG_EXISTS);
	ck_assert_str_eq(why, "step");
	j = test_job("acme", "j1", "a1", "sink");
	SET(j.output, "{\"k\":1}");
	/* Unknown destination: refused, and the transaction goes on. */
	j = test_job("acme", "j2", "a2", "nowhere");
	ck_assert_int_eq(config_job_import(w, &j, &present, &why),
	    CONFIG_REFUSED);
	j = test_job("acme", "j3", "a3", "sink");
	ck_assert_int_eq(config_job_import(w, &j, &present, &why), CONFIG_OK);
	ck_assert_int_eq(config_commit(w), CONFIG_OK);
	ck_assert_int_eq(count(w, CONFIG_JOBS), 2);
	ck_assert_int_eq(config_job_get(w, "acme", "j1", &j), CONFIG_OK);
	ck_assert_str_eq(j.output, "{\"k\":1}");
}
END_TEST

/*
 * An import as the tool runs it, in one transaction: lines that are
 * refused (a destination that does not exist, a job id taken with other
 * fields) are reported one by one and the lines around them are written.
 */
START_TEST(test_job_import_bad_lines)
{
	static const char *const lines[] = {
		"{\"job_id\":\"j1\",\"attempt\":\"a1\",\"step\":\"s\","
		    "\"destination\":\"sink\"}",
		"{\"job_id\":\"j2\",\"attempt\":\"a2\",\"step\":\"s\","
		    "\"destination\":\"nowhere\"}",
		"{\"job_id\":\"j3\",\"attempt\":\"a3\",\"step\":\"s\","
		    "\"destination\":\"sink\"}",
		"{\"job_id\":\"j1\",\"attempt\":\"a9\",\"step\":\"s\","
		    "\"destination\":\"sink\"}",
		"{\"job_id\":\"j4\",\"attempt\":\"a4\",\"step\":\"s\","
		    "\"destination\":\"sink\"}",
	};
	static const enum config_status	 want[] = { CONFIG_OK, CONFIG_REFUSED,
	    CONFIG_OK, CONFIG_EXISTS, CONFIG_OK };
	struct config_job		 j;
	char				 why[256];
	const char			*whyc;
	size_t				 i;
	int				 present;

	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "sink");
	ck_assert_int_eq(config_begin(w), CONFIG_OK);
	for (i = 0; i < NELEM(lines); i++) {
		ck_assert_int_eq(config_job_parse(lines[i], strlen(lines[i]),
		    "acme", &j, why, sizeof(why)), CONFIG_OK);
		ck_assert_int_eq(config_job_import(w, &j, &present, &whyc),
		    want[i]);
		ck_assert_int_eq(present, 0);
	}
	ck_assert_int_eq(config_commit(w), CONFIG_OK);
	ck_assert_int_eq(count(w, CONFIG_JOBS), 3);
	ck_assert_int_eq(config_job_get(w, "acme", "j1", &j), CONFIG_OK);
	ck_assert_str_eq(j.attempt, "a1");
	ck_assert_int_eq(config_job_get(w, "acme", "j3", &j), CONFIG_OK);
	ck_assert_int_eq(config_job_get(w, "acme", "j4", &j), CONFIG_OK);
	ck_assert_int_eq(config_job_get(w, "acme", "j2", &j),
	    CONFIG_NOTFOUND);
}
END_TEST

/*
 * The version (config/config.c): kept by the file's own triggers, added to an
 * older file by its first writer; and the cache that reads it
 * (config/cache.h).
 */

#define VERSION_Q	"SELECT version FROM config_version"

static long long
version(void)
{
	return raw_int(VERSION_Q);
}

/* The id of an endpoint's first secret. */
static int
first_secret(void *arg, const struct config_secret_info *i)
{
	*(int64_t *)arg = i->id;
	return 1;
}

/* Drops the version as the previous release's file lacks it. */
static void
unversion(void)
{
	raw_exec(test_unversion_sqlite, test_unversion_pg);
}

/* The version's table and triggers, as a reader looks for them. */
static int
versioned(struct config *c)
{
	enum config_status	rc = CONFIG_OK;
	int			n;

	n = config_versioned(c, &rc);
	ck_assert_int_eq(rc, CONFIG_OK);
	return n;
}

START_TEST(test_version_bumps)
{
	struct config_tenant	 t;
	const char		*why;
	long long		 v0, v;
	int64_t			 id = 0;

	ck_assert_int_eq(versioned(w), 1);
	v0 = version();
	ck_assert_int_ge(v0, 0);
	ck_assert_int_lt(v0, 1LL << 48);
	test_add_tenant(w, "acme", 1);
	ck_assert_int_gt(v = version(), v0);
	/* Destinations and jobs are read afresh: no bump. */
	test_add_destination(w, "acme", "sink");
	test_add_job(w, "acme", "j1", "a1", "sink");
	ck_assert_int_eq(version(), v);
	ck_assert_int_eq(config_remove(w, CONFIG_JOBS, "acme", "j1"),
	    CONFIG_OK);
	ck_assert_int_eq(version(), v);
	test_add_endpoint(w, "hook", "acme", CONFIG_AUTH_HMAC, HMAC_SECRET);
	ck_assert_int_gt(version(), v);
	v = version();
	add_secret("hook", HMAC_SECRET "-2", 0);
	ck_assert_int_gt(version(), v);
	v = version();
	ck_assert_int_eq(config_secret_each(w, "hook", first_secret, &id),
	    CONFIG_OK);
	ck_assert_int_eq(config_secret_revoke(w, "hook", id), CONFIG_OK);
	ck_assert_int_gt(version(), v);
	v = version();
	ck_assert_int_eq(config_tenant_get(w, "acme", &t), CONFIG_OK);
	t.active = 0;
	ck_assert_int_eq(config_tenant_update(w, &t, NULL, 0, &why),
	    CONFIG_OK);
	ck_assert_int_gt(version(), v);
	v = version();
	/* Inside a transaction: committed with it, or not at all. */
	ck_assert_int_eq(config_begin(w), CONFIG_OK);
	test_add_tenant(w, "gone", 1);
	config_rollback(w);
	ck_assert_int_eq(version(), v);
	/* Plain SQL bumps it too: the triggers are the file's. */
	raw_exec("UPDATE tenants SET active = 1", NULL);
	ck_assert_int_gt(version(), v);
	v = version();
	raw_exec("DELETE FROM secrets", NULL);
	ck_assert_int_gt(version(), v);
	/* Only the version's one row. */
	ck_assert_int_eq(raw_int("SELECT count(*) FROM config_version"), 1);
}
END_TEST

/* Two files made apart do not start at the same version. */
START_TEST(test_version_random_start)
{
	struct config	*w2;
	char		 other[PATH_MAX + 16];

	if (test_backend != TEST_SQLITE)
		return;
	test_path(other, sizeof(other), dir, "other.db");
	ck_assert_int_eq(config_create(other), CONFIG_OK);
	ck_assert_int_eq(config_open(other, CONFIG_WRITE, BUSY_MS, &w2),
	    CONFIG_OK);
	config_close(w2);
	ck_assert_int_ne(test_db_int(other, VERSION_Q), version());
}
END_TEST

/*
 * A file made before the version: read as it is (a reader adds
 * nothing), and its first writer adds the table and the triggers, the
 * schema's version unchanged (it was added within one); on PostgreSQL a
 * role that could read the tenants can read the version.
 */
START_TEST(test_version_added)
{
	struct config	*r, *w2;
	struct db	*db;
	char		 role[32], sql[160], grants[1024], info[PATH_MAX + 64];
	char		 why[256];
	static const struct db_text text[] = { { VERSION_Q, NULL } };
	struct db_stmt	*st;
	long long	 v;

	test_add_tenant(w, "acme", 1);
	config_close(w);
	w = NULL;
	unversion();
	if (test_backend == TEST_POSTGRES) {
		ck_assert_int_lt(snprintf(role, sizeof(role), "hb_ver_%ld",
		    (long)getpid()), (int)sizeof(role));
		raw_exec(NULL, pg_schema_state);
		ck_assert_int_lt(snprintf(sql, sizeof(sql),
		    "DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN", role,
		    role), (int)sizeof(sql));
		raw_exec(NULL, sql);
		ck_assert_int_eq(pg_schema_grants(role, grants,
		    sizeof(grants)), 0);
		raw_exec(NULL, grants);
	}
	r = test_config_open(dir, CONFIG_READ, BUSY_MS);
	ck_assert_int_eq(versioned(r), 0);
	ck_assert_int_eq(raw_int(test_backend == TEST_SQLITE ?
	    "SELECT count(*) FROM sqlite_master WHERE name = 'config_version'" :
	    "SELECT count(to_regclass('hookbox_config.config_version'))"), 0);

	w = test_config_open(dir, CONFIG_WRITE, BUSY_MS);
	ck_assert_int_eq(versioned(w), 1);
	ck_assert_int_eq(versioned(r), 1);
	ck_assert_int_eq(raw_int(test_backend == TEST_SQLITE ?
	    "PRAGMA user_version" : "SELECT version FROM schema_version"),
	    CONFIG_SCHEMA_VERSION);
	v = version();
	ck_assert_int_ge(v, 0);
	/* Opened again, a writer finds it and changes nothing. */
	w2 = test_config_open(dir, CONFIG_WRITE, BUSY_MS);
	config_close(w2);
	ck_assert_int_eq(version(), v);
	test_add_tenant(w, "more", 1);
	ck_assert_int_gt(version(), v);
	config_close(r);

	if (test_backend != TEST_POSTGRES)
		return;
	ck_assert_int_lt(snprintf(info, sizeof(info), "%s user=%s", dbpath,
	    role), (int)sizeof(info));
	ck_assert_msg(db_open_pg(info, 5000, 0, text, 1, &db, why,
	    sizeof(why)) == DB_OK, "PostgreSQL: %s", why);
	ck_assert_int_eq(db_exec(db, "SET search_path = hookbox_config"),
	    DB_OK);
	ck_assert_ptr_nonnull(st = db_stmt(db, 0));
	ck_assert_int_eq(db_step(st), DB_ROW);
	ck_assert_int_eq(db_col_int64(st, 0), version());
	db_reset(st);
	/* Read, never written. */
	ck_assert_int_eq(db_exec(db, "UPDATE config_version"
	    " SET version = 0"), DB_DENIED);
	db_close(db);
	ck_assert_int_lt(snprintf(sql, sizeof(sql), "DROP OWNED BY %s;"
	    " DROP ROLE %s", role, role), (int)sizeof(sql));
	raw_exec(NULL, sql);
}
END_TEST

/* A cache over the test's config.db. */
static struct config_cache *
cache_new(void)
{
	struct config_cache	*cc;

	ck_assert_int_eq(config_cache_new(dbpath, BUSY_MS, 2, &cc), 0);
	return cc;
}

static struct config_snap *
hold(struct config_cache *cc, const char *ep)
{
	struct config_snap	*s;
	enum config_status	 why = CONFIG_OK;

	s = config_cache_hold(cc, ep, &why);
	ck_assert_msg(s != NULL, "hold: %s", config_strerror(why));
	return s;
}

/*
 * What a snapshot holds, looked up as config/config.h's reads look up: the same
 * rows, the same refusals; a change seen by the next check and the next
 * job, and a new snapshot read once for it.
 */
START_TEST(test_cache_snapshot)
{
	struct config_cache		*cc;
	struct config_snap		*s, *s2;
	struct config_cache_stats	 st;
	struct config_endpoint		 e;
	struct config_tenant		 t;
	struct config_secrets		 sec;
	struct config_job		 j;
	int64_t				 now = util_now();

	test_add_tenant(w, "acme", 1);
	test_add_tenant(w, "sleepy", 0);
	test_add_destination(w, "acme", "sink");
	test_add_endpoint(w, "hook", "acme", CONFIG_AUTH_HMAC, HMAC_SECRET);
	add_secret("hook", HMAC_SECRET "-old", now - 10);
	add_secret("hook", HMAC_SECRET "-new", now + 3600);
	test_add_endpoint(w, "bare", "acme", CONFIG_AUTH_HMAC, NULL);
	test_add_job(w, "acme", "j1", "a1", "sink");
	raw_exec("INSERT INTO endpoints(name, tenant, kind, auth, tolerance_s,"
	    " created_at) VALUES ('odd', 'acme', 'tornado-job', 'hmac', 100000, 0)",
	    NULL);

	cc = cache_new();
	s = hold(cc, "hook");
	ck_assert_int_eq(config_snap_endpoint(s, "hook", &e), CONFIG_OK);
	ck_assert_str_eq(e.tenant, "acme");
	ck_assert_int_eq(e.tolerance, TEST_TOLERANCE);
	ck_assert_int_eq(config_snap_endpoint(s, "nosuch", &e),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(config_snap_endpoint(s, "odd", &e), CONFIG_INVALID);
	ck_assert_int_eq(config_snap_tenant(s, "acme", &t), CONFIG_OK);
	ck_assert_int_eq(t.active, 1);
	ck_assert_int_eq(config_snap_tenant(s, "sleepy", &t), CONFIG_OK);
	ck_assert_int_eq(t.active, 0);
	ck_assert_int_eq(config_snap_tenant(s, "nosuch", &t),
	    CONFIG_NOTFOUND);
	/* Unexpired at now, newest first; the expired one left out. */
	ck_assert_int_eq(config_snap_secrets(s, "hook", now, &sec), CONFIG_OK);
	ck_assert_uint_eq(sec.n, 2);
	ck_assert_uint_eq(sec.s[0].keylen, strlen(HMAC_SECRET "-new"));
	ck_assert_mem_eq(sec.s[0].key, HMAC_SECRET "-new", sec.s[0].keylen);
	ck_assert_mem_eq(sec.s[1].key, HMAC_SECRET, sec.s[1].keylen);
	config_secrets_clear(&sec);
	ck_assert_int_eq(config_snap_secrets(s, "hook", now - 20, &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 3);
	config_secrets_clear(&sec);
	ck_assert_int_eq(config_snap_secrets(s, "bare", now, &sec), CONFIG_OK);
	ck_assert_uint_eq(sec.n, 0);
	/* The job, and the version with it: current. */
	ck_assert_int_eq(config_cache_job(cc, s, "acme", "j1", &j), CONFIG_OK);
	ck_assert_str_eq(j.attempt, "a1");
	ck_assert_int_eq(config_cache_job(cc, s, "acme", "j2", &j),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(config_cache_check(cc, s), CONFIG_OK);
	config_cache_stats(cc, &st);
	ck_assert_int_eq(st.loads, 1);
	ck_assert_int_eq(st.checks, 1);
	ck_assert_int_eq(st.singles, 0);
	ck_assert_int_eq(st.version, version());

	/* A job is no part of the snapshot: added, it is found at once. */
	test_add_job(w, "acme", "j2", "a2", "sink");
	ck_assert_int_eq(config_cache_job(cc, s, "acme", "j2", &j), CONFIG_OK);

	/* A change: the held snapshot is stale, the next one has it. */
	ck_assert_int_eq(config_remove(w, CONFIG_ENDPOINTS, "bare", NULL),
	    CONFIG_OK);
	ck_assert_int_eq(config_cache_job(cc, s, "acme", "j1", &j),
	    CONFIG_STALE);
	ck_assert_int_eq(config_cache_check(cc, s), CONFIG_STALE);
	/* Still held: what it holds is unchanged. */
	ck_assert_int_eq(config_snap_endpoint(s, "bare", &e), CONFIG_OK);
	s2 = hold(cc, "hook");
	ck_assert_ptr_ne(s, s2);
	ck_assert_int_eq(config_snap_endpoint(s2, "bare", &e),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(config_cache_check(cc, s2), CONFIG_OK);
	config_cache_drop(cc, s);
	config_cache_drop(cc, s2);
	config_cache_stats(cc, &st);
	ck_assert_int_eq(st.loads, 2);
	ck_assert_int_eq(st.version, version());
	config_cache_free(cc);
}
END_TEST

/*
 * Without the version, a snapshot per request (the endpoint asked for,
 * its secrets and tenant), current by construction; shared again from
 * the first hold after a writer added it.
 */
START_TEST(test_cache_without_version)
{
	struct config_cache		*cc;
	struct config_snap		*s;
	struct config_cache_stats	 st;
	struct config_endpoint		 e;
	struct config_tenant		 t;
	struct config_secrets		 sec;
	struct config_job		 j;

	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "sink");
	test_add_endpoint(w, "hook", "acme", CONFIG_AUTH_HMAC, HMAC_SECRET);
	test_add_endpoint(w, "other", "acme", CONFIG_AUTH_HMAC, HMAC_SECRET);
	test_add_job(w, "acme", "j1", "a1", "sink");
	config_close(w);
	w = NULL;
	unversion();
	cc = cache_new();
	s = hold(cc, "hook");
	ck_assert_int_eq(config_snap_endpoint(s, "hook", &e), CONFIG_OK);
	ck_assert_int_eq(config_snap_tenant(s, "acme", &t), CONFIG_OK);
	ck_assert_int_eq(config_snap_secrets(s, "hook", util_now(), &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 1);
	config_secrets_clear(&sec);
	/* Only what the request needs. */
	ck_assert_int_eq(config_snap_endpoint(s, "other", &e),
	    CONFIG_NOTFOUND);
	ck_assert_int_eq(config_cache_job(cc, s, "acme", "j1", &j), CONFIG_OK);
	ck_assert_int_eq(config_cache_check(cc, s), CONFIG_OK);
	config_cache_drop(cc, s);
	config_cache_stats(cc, &st);
	ck_assert_int_eq(st.singles, 1);
	ck_assert_int_eq(st.loads, 0);
	ck_assert_int_eq(st.version, -1);

	w = test_config_open(dir, CONFIG_WRITE, BUSY_MS);
	s = hold(cc, "hook");
	ck_assert_int_eq(config_snap_endpoint(s, "other", &e), CONFIG_OK);
	config_cache_drop(cc, s);
	config_cache_stats(cc, &st);
	ck_assert_int_eq(st.singles, 1);
	ck_assert_int_eq(st.loads, 1);
	ck_assert_int_eq(st.version, version());
	config_cache_free(cc);
}
END_TEST

/*
 * A read of the version that fails: no answer from the snapshot (the
 * caller's 503), and the next read is made afresh.
 */
static int
fail_read(enum fault_point p, void *arg)
{
	(void)p;
	(void)arg;
	return 1;
}

START_TEST(test_cache_read_fails)
{
	struct config_cache	*cc;
	struct config_snap	*s;
	enum config_status	 why = CONFIG_OK;

	test_add_tenant(w, "acme", 1);
	cc = cache_new();
	fault_set(FAULT_CACHE_READ, fail_read, NULL);
	ck_assert_ptr_null(config_cache_hold(cc, "hook", &why));
	ck_assert_int_eq(why, CONFIG_BUSY);
	fault_set(FAULT_CACHE_READ, NULL, NULL);
	s = hold(cc, "hook");
	fault_set(FAULT_CACHE_READ, fail_read, NULL);
	ck_assert_int_eq(config_cache_check(cc, s), CONFIG_BUSY);
	fault_set(FAULT_CACHE_READ, NULL, NULL);
	ck_assert_int_eq(config_cache_check(cc, s), CONFIG_OK);
	config_cache_drop(cc, s);
	config_cache_free(cc);
}
END_TEST

/*
 * Callers that come while a read of the version runs share the next
 * one: three callers, two reads.  The first read is held at its fault
 * point until the other two wait.
 */
struct gate {
	pthread_mutex_t	lock;
	pthread_cond_t	cond;
	int		entered, open;
};

static struct gate	gate = { PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_COND_INITIALIZER, 0, 0 };

static int
hold_first(enum fault_point p, void *arg)
{
	struct gate	*g = arg;

	(void)p;
	pthread_mutex_lock(&g->lock);
	if (g->entered++ == 0) {
		pthread_cond_broadcast(&g->cond);
		while (!g->open)
			pthread_cond_wait(&g->cond, &g->lock);
	}
	pthread_mutex_unlock(&g->lock);
	return 0;
}

struct checker {
	struct config_cache	*cc;
	struct config_snap	*s;
	enum config_status	 rc;
	pthread_t		 tid;
};

static void *
checker_run(void *arg)
{
	struct checker	*c = arg;

	c->rc = config_cache_check(c->cc, c->s);
	return NULL;
}

START_TEST(test_cache_check_shared)
{
	struct config_cache		*cc;
	struct config_snap		*s;
	struct config_cache_stats	 st;
	struct checker			 c[3];
	int				 i, n;

	test_add_tenant(w, "acme", 1);
	cc = cache_new();
	s = hold(cc, "hook");
	fault_set(FAULT_CACHE_READ, hold_first, &gate);
	for (i = 0; i < 3; i++) {
		c[i].cc = cc;
		c[i].s = s;
		c[i].rc = CONFIG_ERROR;
		ck_assert_int_eq(pthread_create(&c[i].tid, NULL, checker_run,
		    &c[i]), 0);
		if (i > 0)
			continue;
		/* The first is inside its read before the others call. */
		pthread_mutex_lock(&gate.lock);
		while (gate.entered == 0)
			pthread_cond_wait(&gate.cond, &gate.lock);
		pthread_mutex_unlock(&gate.lock);
	}
	/* A bound, not a pace: at most a minute for two threads to wait. */
	for (n = 0; n < 60000; n++) {
		config_cache_stats(cc, &st);
		if (st.waiting == 2)
			break;
		usleep(1000);
	}
	ck_assert_int_eq(st.waiting, 2);
	pthread_mutex_lock(&gate.lock);
	gate.open = 1;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(pthread_join(c[i].tid, NULL), 0);
		ck_assert_int_eq(c[i].rc, CONFIG_OK);
	}
	fault_set(FAULT_CACHE_READ, NULL, NULL);
	config_cache_stats(cc, &st);
	ck_assert_int_eq(st.checks, 2);
	ck_assert_int_eq(st.waiting, 0);
	ck_assert_int_eq(gate.entered, 2);
	config_cache_drop(cc, s);
	config_cache_free(cc);
}
END_TEST

/*
 * Endpoints of kind mapped (config/map.h): their mapping stored
 * canonical, refused with its reason, read back, carried parsed by the
 * snapshot; and the upgrade of a configuration the previous release made.
 */

/* Runs sql on a connection of the test's own: what db_exec() said. */
static enum db_rc
raw_try(const char *sql)
{
	struct db	*db;
	enum db_rc	 rc;

	db = raw_open(NULL, 0);
	rc = db_exec(db, sql);
	db_close(db);
	return rc;
}

/* A request's headers, for mapping_eval(): its webhook-id alone. */
static const char *
snap_header(void *arg, const char *name)
{
	(void)arg;
	return strcasecmp(name, "webhook-id") == 0 ? "evt-1" : NULL;
}

/* provider/mapping.h's example: the tenant acme's destination cms. */
#define MAP_CMS \
	"{\n  \"destination\": \"cms\",\n" \
	"  \"event_id\": {\"header\": \"webhook-id\"},\n" \
	"  \"subject\": \"/data/asset_id\",\n" \
	"  \"version\": \"/data/version\",\n" \
	"  \"type\": \"/type\",\n" \
	"  \"occurred\": \"/data/updated_at\",\n" \
	"  \"steps\": {\"publish\": [\"asset.approved\"," \
	" \"asset.replaced\"]},\n" \
	"  \"undo\": {\"unpublish\": [\"asset.unpublished\"]},\n" \
	"  \"ignore\": [\"asset.viewed\"]\n}\n"
/* Another, to destination cms2, a step of another name. */
#define MAP_CMS2 \
	"{\"destination\": \"cms2\", \"event_id\": \"/id\"," \
	" \"subject\": \"/asset\", \"type\": \"/type\"," \
	" \"occurred\": \"/at\", \"steps\": {\"ingest\": [\"asset.approved\"]}}"

/* The canonical text of a mapping's text, as provider/mapping.h makes it. */
static char *
canonical(const char *text)
{
	struct mapping	*m;
	char		 why[256], *t;

	m = mapping_parse(text, strlen(text), why, sizeof(why));
	ck_assert_msg(m != NULL, "mapping: %s", why);
	ck_assert_ptr_nonnull(t = mapping_text(m));
	mapping_free(m);
	return t;
}

/*
 * A mapped endpoint of acme with the mapping text, authenticated as
 * Standard Webhooks (which signs the webhook-id its mappings read); its
 * status, and why.
 */
static enum config_status
add_mapped(const char *name, const char *tenant, const char *text,
    char *why, size_t whylen)
{
	struct config_endpoint	e;

	e = test_endpoint(name, tenant, CONFIG_AUTH_STANDARD);
	e.kind = CONFIG_KIND_MAPPED;
	return config_endpoint_add_mapped(w, &e, text,
	    text != NULL ? strlen(text) : 0, why, whylen);
}

/* The "mapping" member of endpoint name's row in c's list. */
static cJSON *
listed_mapping(struct config *c, const char *name, cJSON **arr)
{
	cJSON	*row;

	ck_assert_int_eq(config_list(c, CONFIG_ENDPOINTS, NULL,
	    arr), CONFIG_OK);
	cJSON_ArrayForEach(row, *arr)
		if (strcmp(str(row, "name"), name) == 0)
			return cJSON_GetObjectItemCaseSensitive(row,
			    "mapping");
	ck_abort_msg("endpoint %s not listed", name);
	return NULL;
}

START_TEST(test_mapped_add)
{
	struct config_endpoint	 eg;
	struct config_secrets	 sec;
	struct config		*r;
	cJSON			*arr = NULL, *m;
	char			 why[512], *text = NULL, *canon, *again;
	int			 found;

	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "cms");
	test_add_endpoint(w, "tornado", "acme", CONFIG_AUTH_HMAC, NULL);
	ck_assert_msg(add_mapped("cms-hook", "acme", MAP_CMS, why,
	    sizeof(why)) == CONFIG_OK, "add: %s", why);
	ck_assert_str_eq(why, "");
	/* Its secrets, as any endpoint's. */
	add_secret("cms-hook", HMAC_SECRET, 0);
	ck_assert_int_eq(config_endpoint_secrets(w, "cms-hook", util_now(),
	    &sec), CONFIG_OK);
	ck_assert_uint_eq(sec.n, 1);
	config_secrets_clear(&sec);
	/* The same name again. */
	ck_assert_int_eq(add_mapped("cms-hook", "acme", MAP_CMS, why,
	    sizeof(why)), CONFIG_EXISTS);

	/* Read back: the row, and the mapping by its own call. */
	r = test_config_open(dir, CONFIG_READ, BUSY_MS);
	memset(&eg, 'Z', sizeof(eg));
	ck_assert_int_eq(config_endpoint_get(r, "cms-hook", &eg), CONFIG_OK);
	ck_assert_int_eq(eg.kind, CONFIG_KIND_MAPPED);
	ck_assert_str_eq(eg.tenant, "acme");
	ck_assert_int_eq(eg.auth, CONFIG_AUTH_STANDARD);
	ck_assert_ptr_null(eg.mapping);
	canon = canonical(MAP_CMS);
	ck_assert_int_eq(config_endpoint_mapping(r, "cms-hook", &text),
	    CONFIG_OK);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, canon);
	/* Canonical: parsed and written again, the same bytes. */
	again = canonical(text);
	ck_assert_str_eq(again, text);
	free(again);
	free(text);
	/* Stored as it is given back. */
	ck_assert_int_eq(raw_scan("SELECT mapping FROM endpoints"
	    " WHERE name = 'cms-hook'", 1, canon, strlen(canon), &found),
	    1);
	ck_assert_int_eq(found, 1);
	/* An endpoint of another kind has none; no such one, not found. */
	text = (char *)&text;
	ck_assert_int_eq(config_endpoint_mapping(r, "tornado", &text),
	    CONFIG_OK);
	ck_assert_ptr_null(text);
	ck_assert_int_eq(config_endpoint_mapping(r, "nosuch", &text),
	    CONFIG_NOTFOUND);
	ck_assert_ptr_null(text);

	/* Listed: the mapping as JSON; null for the other kind. */
	m = listed_mapping(r, "cms-hook", &arr);
	ck_assert(cJSON_IsObject(m));
	ck_assert_str_eq(str(m, "destination"), "cms");
	ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(m, "steps"));
	cJSON_Delete(arr);
	m = listed_mapping(r, "tornado", &arr);
	ck_assert(cJSON_IsNull(m));
	cJSON_Delete(arr);
	config_close(r);
	free(canon);
}
END_TEST

/*
 * A refused mapping, with why: one that does not parse (provider/mapping.h's
 * own words), too long, a destination not the tenant's, a mapping for another
 * kind, none for kind mapped.  Nothing is added.
 */
START_TEST(test_mapped_refused)
{
	struct config_endpoint	 e;
	struct mapping		*m;
	const char		*whyc;
	char			 why[512], expect[256], *big;
	static const char *const bad[] = {
		"",
		"not json",
		"[]",
		"{\"destination\": \"cms\"}",
		"{\"destination\": \"cms\", \"event_id\": \"/id\","
		    " \"subject\": \"/s\", \"type\": \"/t\","
		    " \"occurred\": \"/o\", \"steps\": {\"publish\": [1]}}",
	};
	size_t			 i;

	test_add_tenant(w, "acme", 1);
	test_add_tenant(w, "beta", 1);
	test_add_destination(w, "acme", "cms");
	test_add_destination(w, "beta", "cms2");

	/* Each bad text: mapping_parse()'s sentence, as it says it. */
	for (i = 0; i < NELEM(bad); i++) {
		m = mapping_parse(bad[i], strlen(bad[i]), expect,
		    sizeof(expect));
		ck_assert_ptr_null(m);
		ck_assert_int_eq(add_mapped("ep", "acme", bad[i], why,
		    sizeof(why)), CONFIG_INVALID);
		ck_assert_str_eq(why, expect);
	}
	/* One byte over the most a mapping may hold. */
	big = malloc(MAPPING_TEXT_MAX + 2);
	ck_assert_ptr_nonnull(big);
	memset(big, ' ', MAPPING_TEXT_MAX + 1);
	big[MAPPING_TEXT_MAX + 1] = '\0';
	memcpy(big, MAP_CMS, strlen(MAP_CMS));
	ck_assert_int_eq(add_mapped("ep", "acme", big, why, sizeof(why)),
	    CONFIG_INVALID);
	ck_assert_msg(strstr(why, "longer than") != NULL, "why: %s", why);
	/* At the limit it is taken. */
	big[MAPPING_TEXT_MAX] = '\0';
	ck_assert_msg(add_mapped("ep-big", "acme", big, why, sizeof(why)) ==
	    CONFIG_OK, "at the limit: %s", why);
	free(big);
	ck_assert_int_eq(config_remove(w, CONFIG_ENDPOINTS, "ep-big", NULL),
	    CONFIG_OK);

	/* A destination the tenant lacks, or another tenant's. */
	ck_assert_int_eq(add_mapped("ep", "acme", MAP_CMS2, why, sizeof(why)),
	    CONFIG_REFUSED);
	ck_assert_msg(strstr(why, "destination \"cms2\"") != NULL &&
	    strstr(why, "tenant acme") != NULL, "why: %s", why);
	ck_assert_int_eq(add_mapped("ep", "beta", MAP_CMS, why, sizeof(why)),
	    CONFIG_REFUSED);
	ck_assert_msg(strstr(why, "destination \"cms\"") != NULL &&
	    strstr(why, "tenant beta") != NULL, "why: %s", why);
	/* A tenant that does not exist. */
	ck_assert_int_eq(add_mapped("ep", "nosuch", MAP_CMS, why, sizeof(why)),
	    CONFIG_REFUSED);
	ck_assert_msg(strstr(why, "nosuch") != NULL, "why: %s", why);

	/* A mapping for a tornado kind; none for kind mapped. */
	e = test_endpoint("ep", "acme", CONFIG_AUTH_HMAC);
	ck_assert_int_eq(config_endpoint_add_mapped(w, &e, MAP_CMS,
	    strlen(MAP_CMS), why, sizeof(why)), CONFIG_INVALID);
	ck_assert_msg(strstr(why, "tornado-job") != NULL, "why: %s", why);
	e.kind = CONFIG_KIND_ORG;
	ck_assert_int_eq(config_endpoint_add_mapped(w, &e, MAP_CMS,
	    strlen(MAP_CMS), why, sizeof(why)), CONFIG_INVALID);
	ck_assert_msg(strstr(why, "tornado-org") != NULL, "why: %s", why);
	e.kind = CONFIG_KIND_MAPPED;
	ck_assert_int_eq(config_endpoint_add_mapped(w, &e, NULL, 0, why,
	    sizeof(why)), CONFIG_INVALID);
	ck_assert_msg(strstr(why, "needs a mapping") != NULL, "why: %s", why);
	whyc = NULL;
	ck_assert_int_eq(config_endpoint_add(w, &e, &whyc), CONFIG_INVALID);
	ck_assert_msg(whyc != NULL && strstr(whyc, "mapping") != NULL,
	    "why: %s", whyc != NULL ? whyc : "(none)");
	/* A field, as config_endpoint_add() names it. */
	e = test_endpoint("", "acme", CONFIG_AUTH_HMAC);
	e.kind = CONFIG_KIND_MAPPED;
	ck_assert_int_eq(config_endpoint_add_mapped(w, &e, MAP_CMS,
	    strlen(MAP_CMS), why, sizeof(why)), CONFIG_INVALID);
	ck_assert_msg(strstr(why, "endpoint name") != NULL, "why: %s", why);
	/* A reader may not write. */
	config_close(w);
	w = test_config_open(dir, CONFIG_READ, BUSY_MS);
	ck_assert_int_eq(add_mapped("ep", "acme", MAP_CMS, why, sizeof(why)),
	    CONFIG_ERROR);
	config_close(w);
	w = test_config_open(dir, CONFIG_WRITE, BUSY_MS);
	ck_assert_int_eq(count(w, CONFIG_ENDPOINTS), 0);

	/* The schema says the same to SQL of its own. */
	ck_assert_int_eq(raw_try("INSERT INTO endpoints(name, tenant, kind,"
	    " auth, created_at) VALUES ('x', 'acme', 'mapped', 'hmac', 1)"),
	    DB_CONSTRAINT);
	ck_assert_int_eq(raw_try("INSERT INTO endpoints(name, tenant, kind,"
	    " auth, created_at, mapping) VALUES ('x', 'acme', 'tornado-job',"
	    " 'hmac', 1, '{}')"), DB_CONSTRAINT);
	ck_assert_int_eq(raw_try("INSERT INTO endpoints(name, tenant, kind,"
	    " auth, created_at) VALUES ('x', 'acme', 'other', 'hmac', 1)"),
	    DB_CONSTRAINT);
	ck_assert_int_eq(count(w, CONFIG_ENDPOINTS), 0);
}
END_TEST

/*
 * A stored mapping that does not parse (written past the tool): its
 * endpoint is read, its mapping refused, listed as the string it is;
 * the snapshot refuses the endpoint.  endpoint set can mend it.
 */
/*
 * A field that decides an event's identity or order may come from a
 * header only when the endpoint's authentication signs that header:
 * Standard Webhooks signs webhook-id and webhook-timestamp; hmac (t= and
 * the body) and a shared key sign none.  Each field, each way; refused
 * with the field and the header named, nothing added; endpoint set says
 * the same.
 */
START_TEST(test_mapped_unsigned_header)
{
	static const char *const fields[] = {
		"event_id", "subject", "version", "type", "occurred"
	};
	static const enum config_auth	auths[] = {
		CONFIG_AUTH_HMAC, CONFIG_AUTH_KEY, CONFIG_AUTH_STANDARD
	};
	struct config_endpoint	 e;
	char			 text[1024], why[512];
	size_t			 i, k;

	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "cms");
	for (k = 0; k < sizeof(auths) / sizeof(auths[0]); k++)
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			/* MAP_CMS's fields, one of them from X-Forged. */
			(void)snprintf(text, sizeof(text), "{\"destination\":"
			    " \"cms\", \"event_id\": %s, \"subject\": %s,"
			    " \"version\": %s, \"type\": %s, \"occurred\": %s,"
			    " \"steps\": {\"publish\": [\"asset.approved\"]}}",
			    i == 0 ? "{\"header\": \"X-Forged\"}" : "\"/id\"",
			    i == 1 ? "{\"header\": \"X-Forged\"}" : "\"/s\"",
			    i == 2 ? "{\"header\": \"X-Forged\"}" : "\"/v\"",
			    i == 3 ? "{\"header\": \"X-Forged\"}" : "\"/t\"",
			    i == 4 ? "{\"header\": \"X-Forged\"}" : "\"/o\"");
			e = test_endpoint("ep", "acme", auths[k]);
			e.kind = CONFIG_KIND_MAPPED;
			ck_assert_int_eq(config_endpoint_add_mapped(w, &e,
			    text, strlen(text), why, sizeof(why)),
			    CONFIG_INVALID);
			ck_assert_msg(strstr(why, fields[i]) == why &&
			    strstr(why, "header x-forged") != NULL &&
			    strstr(why, "does not sign") != NULL, "why: %s",
			    why);
		}
	ck_assert_int_eq(count(w, CONFIG_ENDPOINTS), 0);
	/* webhook-id: signed by Standard Webhooks alone. */
	for (k = 0; k < sizeof(auths) / sizeof(auths[0]); k++) {
		e = test_endpoint(k == 0 ? "ep-hmac" : k == 1 ? "ep-key" :
		    "ep-std", "acme", auths[k]);
		e.kind = CONFIG_KIND_MAPPED;
		ck_assert_int_eq(config_endpoint_add_mapped(w, &e, MAP_CMS,
		    strlen(MAP_CMS), why, sizeof(why)),
		    auths[k] == CONFIG_AUTH_STANDARD ? CONFIG_OK :
		    CONFIG_INVALID);
	}
	ck_assert_int_eq(count(w, CONFIG_ENDPOINTS), 1);
	(void)snprintf(text, sizeof(text), "{\"destination\": \"cms\","
	    " \"event_id\": {\"header\": \"webhook-id\"}, \"subject\":"
	    " {\"header\": \"Webhook-Timestamp\"}, \"type\": \"/t\","
	    " \"occurred\": \"/o\", \"steps\": {\"publish\": [\"a\"]}}");
	ck_assert_msg(config_endpoint_set_mapping(w, "ep-std", text,
	    strlen(text), why, sizeof(why)) == CONFIG_OK, "why: %s", why);
	(void)snprintf(text, sizeof(text), "{\"destination\": \"cms\","
	    " \"event_id\": \"/id\", \"subject\": {\"header\": \"x-s\"},"
	    " \"type\": \"/t\", \"occurred\": \"/o\", \"steps\":"
	    " {\"publish\": [\"a\"]}}");
	ck_assert_int_eq(config_endpoint_set_mapping(w, "ep-std", text,
	    strlen(text), why, sizeof(why)), CONFIG_INVALID);
	ck_assert_msg(strstr(why, "subject comes from header x-s") != NULL,
	    "why: %s", why);
}
END_TEST

/* A mapping whose signature is declared (provider/scheme.h). */
#define MAP_SIGNED(idfrom, signed) \
	"{\"destination\": \"cms\", \"event_id\": " idfrom "," \
	" \"subject\": \"/s\", \"type\": \"/t\", \"occurred\": \"/o\"," \
	" \"steps\": {\"publish\": [\"a\"]}, \"signature\": {\"header\":" \
	" \"X-Sig\", \"prefix\": \"sha256=\", \"signed\": \"" signed "\"," \
	" \"algorithm\": \"hmac-sha256\", \"encoding\": \"hex\"}}"

/*
 * A mapping that declares its signature is the endpoint's
 * authentication (auth scheme), and auth scheme is that signature: each
 * without the other is refused, on add and on set; set of a signed
 * mapping makes a built-in endpoint scheme.  A field from a header needs
 * the scheme to sign it; the scheme checks the secrets given.
 */
START_TEST(test_mapped_scheme)
{
	struct config_endpoint	 e;
	struct mapping		*m;
	char			 why[512], *text = NULL;
	const char		*body = MAP_SIGNED("\"/id\"", "{body}");

	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "cms");
	e = test_endpoint("gh", "acme", CONFIG_AUTH_HMAC);
	e.kind = CONFIG_KIND_MAPPED;
	ck_assert_int_eq(config_endpoint_add_mapped(w, &e, body, strlen(body),
	    why, sizeof(why)), CONFIG_INVALID);
	ck_assert_msg(strstr(why, "signature: the mapping declares") == why &&
	    strstr(why, "not hmac") != NULL, "why: %s", why);
	e.auth = CONFIG_AUTH_SCHEME;
	test_add_destination(w, "acme", "cms2");
	ck_assert_int_eq(config_endpoint_add_mapped(w, &e, MAP_CMS2,
	    strlen(MAP_CMS2), why, sizeof(why)), CONFIG_INVALID);
	ck_assert_msg(strstr(why, "signature: missing") == why, "why: %s",
	    why);
	/* An event id from a header the scheme does not sign; one it does. */
	text = MAP_SIGNED("{\"header\": \"X-Delivery\"}", "{body}");
	ck_assert_int_eq(config_endpoint_add_mapped(w, &e, text, strlen(text),
	    why, sizeof(why)), CONFIG_INVALID);
	ck_assert_msg(strstr(why, "event_id comes from header x-delivery") ==
	    why && strstr(why, "{header:NAME}") != NULL, "why: %s", why);
	text = MAP_SIGNED("{\"header\": \"X-Delivery\"}",
	    "{header:x-delivery}.{body}");
	ck_assert_msg(config_endpoint_add_mapped(w, &e, text, strlen(text),
	    why, sizeof(why)) == CONFIG_OK, "why: %s", why);
	ck_assert_int_eq(count(w, CONFIG_ENDPOINTS), 1);
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(config_endpoint_get(w, "gh", &e), CONFIG_OK);
	ck_assert_int_eq(e.auth, CONFIG_AUTH_SCHEME);
	ck_assert_int_eq(config_endpoint_mapping(w, "gh", &text), CONFIG_OK);
	ck_assert_msg(strstr(text, ",\"signature\":{\"header\":\"x-sig\"") !=
	    NULL, "%s", text);
	/* Its secrets are the scheme's: a key of 16 bytes at least. */
	m = mapping_parse(text, strlen(text), why, sizeof(why));
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_null(config_check_secret(CONFIG_AUTH_SCHEME,
	    mapping_scheme(m), (const unsigned char *)"0123456789abcdef", 16));
	ck_assert_ptr_nonnull(config_check_secret(CONFIG_AUTH_SCHEME,
	    mapping_scheme(m), (const unsigned char *)"short", 5));
	ck_assert_ptr_nonnull(config_check_secret(CONFIG_AUTH_SCHEME, NULL,
	    (const unsigned char *)"0123456789abcdef", 16));
	mapping_free(m);
	free(text);

	/* Set: a mapping without its signature is refused... */
	ck_assert_int_eq(config_endpoint_set_mapping(w, "gh", MAP_CMS2,
	    strlen(MAP_CMS2), why, sizeof(why)), CONFIG_INVALID);
	ck_assert_msg(strstr(why, "signature: missing") == why, "why: %s",
	    why);
	/* ...and a built-in endpoint given a signed mapping is scheme. */
	e = test_endpoint("std", "acme", CONFIG_AUTH_STANDARD);
	e.kind = CONFIG_KIND_MAPPED;
	ck_assert_int_eq(config_endpoint_add_mapped(w, &e, MAP_CMS2,
	    strlen(MAP_CMS2), why, sizeof(why)), CONFIG_OK);
	ck_assert_msg(config_endpoint_set_mapping(w, "std", body, strlen(body),
	    why, sizeof(why)) == CONFIG_OK, "why: %s", why);
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(config_endpoint_get(w, "std", &e), CONFIG_OK);
	ck_assert_int_eq(e.auth, CONFIG_AUTH_SCHEME);
	ck_assert_str_eq(e.key_header, "");
}
END_TEST

START_TEST(test_mapped_revalidated)
{
	struct config_endpoint	 e;
	struct config_cache	*cc;
	struct config_snap	*s;
	cJSON			*arr = NULL, *m;
	char			*text = NULL, why[512];

	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "cms");
	raw_exec("INSERT INTO endpoints(name, tenant, kind, auth,"
	    " tolerance_s, created_at, mapping) VALUES ('odd', 'acme',"
	    " 'mapped', 'standard', 300, 1, '{\"destination\": 7}')", NULL);
	ck_assert_int_eq(config_endpoint_get(w, "odd", &e), CONFIG_OK);
	ck_assert_int_eq(e.kind, CONFIG_KIND_MAPPED);
	ck_assert_int_eq(config_endpoint_mapping(w, "odd", &text),
	    CONFIG_INVALID);
	ck_assert_ptr_null(text);
	m = listed_mapping(w, "odd", &arr);
	ck_assert(cJSON_IsObject(m));
	cJSON_Delete(arr);
	raw_exec("UPDATE endpoints SET mapping = 'not json' WHERE name = 'odd'",
	    NULL);
	m = listed_mapping(w, "odd", &arr);
	ck_assert(cJSON_IsString(m));
	ck_assert_str_eq(m->valuestring, "not json");
	cJSON_Delete(arr);

	cc = cache_new();
	s = hold(cc, "odd");
	ck_assert_int_eq(config_snap_endpoint(s, "odd", &e), CONFIG_INVALID);
	config_cache_drop(cc, s);

	ck_assert_msg(config_endpoint_set_mapping(w, "odd", MAP_CMS,
	    strlen(MAP_CMS), why, sizeof(why)) == CONFIG_OK, "set: %s", why);
	s = hold(cc, "odd");
	ck_assert_int_eq(config_cache_check(cc, s), CONFIG_STALE);
	config_cache_drop(cc, s);
	s = hold(cc, "odd");
	ck_assert_int_eq(config_snap_endpoint(s, "odd", &e), CONFIG_OK);
	ck_assert_ptr_nonnull(e.mapping);
	config_cache_drop(cc, s);
	config_cache_free(cc);
}
END_TEST

/* endpoint set's mapping: checked as add checks it, in place. */
START_TEST(test_mapped_set)
{
	struct config	*r;
	char		 why[512], *text = NULL, *canon;
	long long	 v;

	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "cms");
	test_add_endpoint(w, "tornado", "acme", CONFIG_AUTH_HMAC, NULL);
	ck_assert_int_eq(add_mapped("cms-hook", "acme", MAP_CMS, why,
	    sizeof(why)), CONFIG_OK);
	r = test_config_open(dir, CONFIG_READ, BUSY_MS);

	ck_assert_int_eq(config_endpoint_set_mapping(w, "nosuch", MAP_CMS,
	    strlen(MAP_CMS), why, sizeof(why)), CONFIG_NOTFOUND);
	ck_assert_int_eq(config_endpoint_set_mapping(w, "tornado", MAP_CMS,
	    strlen(MAP_CMS), why, sizeof(why)), CONFIG_INVALID);
	ck_assert_msg(strstr(why, "tornado-job") != NULL, "why: %s", why);
	ck_assert_int_eq(config_endpoint_set_mapping(w, "cms-hook", "{}", 2,
	    why, sizeof(why)), CONFIG_INVALID);
	ck_assert_str_ne(why, "");
	/* cms2 is not acme's yet. */
	ck_assert_int_eq(config_endpoint_set_mapping(w, "cms-hook", MAP_CMS2,
	    strlen(MAP_CMS2), why, sizeof(why)), CONFIG_REFUSED);
	ck_assert_msg(strstr(why, "cms2") != NULL, "why: %s", why);
	/* Nothing changed meanwhile. */
	canon = canonical(MAP_CMS);
	ck_assert_int_eq(config_endpoint_mapping(r, "cms-hook", &text),
	    CONFIG_OK);
	ck_assert_str_eq(text, canon);
	free(text);
	free(canon);

	test_add_destination(w, "acme", "cms2");
	v = version();
	ck_assert_msg(config_endpoint_set_mapping(w, "cms-hook", MAP_CMS2,
	    strlen(MAP_CMS2), why, sizeof(why)) == CONFIG_OK, "set: %s", why);
	/* A change to what a snapshot holds: the version moved. */
	ck_assert_int_gt(version(), v);
	canon = canonical(MAP_CMS2);
	ck_assert_int_eq(config_endpoint_mapping(r, "cms-hook", &text),
	    CONFIG_OK);
	ck_assert_str_eq(text, canon);
	free(text);
	free(canon);
	/* Inside a transaction: with it, or not at all. */
	ck_assert_int_eq(config_begin(w), CONFIG_OK);
	ck_assert_int_eq(config_endpoint_set_mapping(w, "cms-hook", MAP_CMS,
	    strlen(MAP_CMS), why, sizeof(why)), CONFIG_OK);
	config_rollback(w);
	canon = canonical(MAP_CMS2);
	ck_assert_int_eq(config_endpoint_mapping(r, "cms-hook", &text),
	    CONFIG_OK);
	ck_assert_str_eq(text, canon);
	free(text);
	free(canon);
	/* The reader writes nothing. */
	ck_assert_int_eq(config_endpoint_set_mapping(r, "cms-hook", MAP_CMS,
	    strlen(MAP_CMS), why, sizeof(why)), CONFIG_ERROR);
	config_close(r);
}
END_TEST

/*
 * A destination a mapping names stays while it does: remove refused,
 * the referrer named; free once the endpoint is gone.  A tenant with a
 * mapped endpoint stays too, as with any endpoint.
 */
START_TEST(test_mapped_destination_kept)
{
	const char	*kind;
	char		 name[HB_ID_MAX + 1], why[512];

	test_add_tenant(w, "acme", 1);
	test_add_tenant(w, "beta", 1);
	test_add_destination(w, "acme", "cms");
	test_add_destination(w, "beta", "cms");
	test_add_destination(w, "acme", "cms2");
	ck_assert_int_eq(add_mapped("cms-hook", "acme", MAP_CMS, why,
	    sizeof(why)), CONFIG_OK);
	ck_assert_int_eq(config_remove(w, CONFIG_DESTINATIONS, "acme", "cms"),
	    CONFIG_REFUSED);
	ck_assert_int_eq(config_referrer(w, CONFIG_DESTINATIONS, "acme", "cms",
	    &kind, name, sizeof(name)), CONFIG_OK);
	ck_assert_str_eq(kind, "endpoint");
	ck_assert_str_eq(name, "cms-hook");
	/* A job still comes first. */
	test_add_job(w, "acme", "j1", "a1", "cms");
	ck_assert_int_eq(config_referrer(w, CONFIG_DESTINATIONS, "acme", "cms",
	    &kind, name, sizeof(name)), CONFIG_OK);
	ck_assert_str_eq(kind, "job");
	ck_assert_int_eq(config_remove(w, CONFIG_JOBS, "acme", "j1"),
	    CONFIG_OK);
	/* Another tenant's of the same name, and another name: free. */
	ck_assert_int_eq(config_referrer(w, CONFIG_DESTINATIONS, "beta", "cms",
	    &kind, name, sizeof(name)), CONFIG_NOTFOUND);
	ck_assert_int_eq(config_remove(w, CONFIG_DESTINATIONS, "beta", "cms"),
	    CONFIG_OK);
	ck_assert_int_eq(config_remove(w, CONFIG_DESTINATIONS, "acme", "cms2"),
	    CONFIG_OK);
	ck_assert_int_eq(config_remove(w, CONFIG_TENANTS, "acme", NULL),
	    CONFIG_REFUSED);

	ck_assert_int_eq(config_remove(w, CONFIG_ENDPOINTS, "cms-hook", NULL),
	    CONFIG_OK);
	ck_assert_int_eq(config_referrer(w, CONFIG_DESTINATIONS, "acme", "cms",
	    &kind, name, sizeof(name)), CONFIG_NOTFOUND);
	ck_assert_int_eq(config_remove(w, CONFIG_DESTINATIONS, "acme", "cms"),
	    CONFIG_OK);
}
END_TEST

/*
 * The snapshot a responder answers from: a mapped endpoint comes with
 * its mapping parsed, the snapshot's while it is held; a changed mapping
 * is seen by the next check (CONFIG_STALE) and in force in the next
 * snapshot, the held one unchanged until dropped.
 */
START_TEST(test_cache_mapping)
{
	struct config_cache		*cc;
	struct config_snap		*s, *s2;
	struct config_endpoint		 e, e2;
	struct config_cache_stats	 st;
	struct config_job		 j;
	struct mapping_event		 ev;
	char				 why[512], *text, *canon;
	static const char		 body[] =
	    "{\"type\": \"asset.approved\", \"data\": {\"asset_id\": \"a-1\","
	    " \"version\": 3, \"updated_at\": \"2026-01-02T03:04:05Z\"}}";

	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "cms");
	test_add_destination(w, "acme", "cms2");
	test_add_endpoint(w, "tornado", "acme", CONFIG_AUTH_HMAC, HMAC_SECRET);
	ck_assert_int_eq(add_mapped("cms-hook", "acme", MAP_CMS, why,
	    sizeof(why)), CONFIG_OK);
	add_secret("cms-hook", HMAC_SECRET, 0);

	cc = cache_new();
	s = hold(cc, "cms-hook");
	ck_assert_int_eq(config_snap_endpoint(s, "cms-hook", &e), CONFIG_OK);
	ck_assert_int_eq(e.kind, CONFIG_KIND_MAPPED);
	ck_assert_ptr_nonnull(e.mapping);
	ck_assert_str_eq(mapping_destination(e.mapping), "cms");
	canon = canonical(MAP_CMS);
	ck_assert_ptr_nonnull(text = mapping_text(e.mapping));
	ck_assert_str_eq(text, canon);
	free(text);
	free(canon);
	/* Parsed once: every look-up gives the same one. */
	ck_assert_int_eq(config_snap_endpoint(s, "cms-hook", &e2), CONFIG_OK);
	ck_assert_ptr_eq(e2.mapping, e.mapping);
	ck_assert_int_eq(config_snap_endpoint(s, "tornado", &e2), CONFIG_OK);
	ck_assert_ptr_null(e2.mapping);
	/* It reads an event. */
	memset(&ev, 0, sizeof(ev));
	ck_assert_int_eq(mapping_eval(e.mapping, body, strlen(body),
	    snap_header, NULL, &ev, why, sizeof(why)), MAPPING_OK);
	ck_assert_str_eq(ev.event_id, "evt-1");
	ck_assert_str_eq(ev.subject, "a-1");
	ck_assert_int_eq(ev.version, 3);
	ck_assert_int_eq(ev.effect, MAPPING_DO);
	ck_assert_str_eq(ev.step, "publish");
	ck_assert_int_eq(config_cache_check(cc, s), CONFIG_OK);

	/* Changed with the tool: the next request has it. */
	ck_assert_int_eq(config_endpoint_set_mapping(w, "cms-hook", MAP_CMS2,
	    strlen(MAP_CMS2), why, sizeof(why)), CONFIG_OK);
	ck_assert_int_eq(config_cache_check(cc, s), CONFIG_STALE);
	ck_assert_int_eq(config_cache_job(cc, s, "acme", "j1", &j),
	    CONFIG_STALE);
	/* The held one is as it was, and usable until dropped. */
	ck_assert_str_eq(mapping_destination(e.mapping), "cms");
	s2 = hold(cc, "cms-hook");
	ck_assert_ptr_ne(s, s2);
	config_cache_drop(cc, s);
	ck_assert_int_eq(config_snap_endpoint(s2, "cms-hook", &e), CONFIG_OK);
	ck_assert_str_eq(mapping_destination(e.mapping), "cms2");
	ck_assert_int_eq(config_cache_check(cc, s2), CONFIG_OK);
	config_cache_stats(cc, &st);
	ck_assert_int_eq(st.loads, 2);
	config_cache_drop(cc, s2);

	/* Removed: gone from the next snapshot. */
	ck_assert_int_eq(config_remove(w, CONFIG_ENDPOINTS, "cms-hook", NULL),
	    CONFIG_OK);
	s = hold(cc, "cms-hook");
	ck_assert_int_eq(config_cache_check(cc, s), CONFIG_STALE);
	config_cache_drop(cc, s);
	s = hold(cc, "cms-hook");
	ck_assert_int_eq(config_snap_endpoint(s, "cms-hook", &e),
	    CONFIG_NOTFOUND);
	config_cache_drop(cc, s);
	config_cache_free(cc);
}
END_TEST

/* Without the version, the snapshot of one request carries it too. */
START_TEST(test_cache_mapping_single)
{
	struct config_cache		*cc;
	struct config_snap		*s;
	struct config_endpoint		 e;
	struct config_cache_stats	 st;
	char				 why[512];

	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "cms");
	test_add_destination(w, "acme", "cms2");
	ck_assert_int_eq(add_mapped("cms-hook", "acme", MAP_CMS, why,
	    sizeof(why)), CONFIG_OK);
	config_close(w);
	w = NULL;
	unversion();
	cc = cache_new();
	s = hold(cc, "cms-hook");
	ck_assert_int_eq(config_snap_endpoint(s, "cms-hook", &e), CONFIG_OK);
	ck_assert_ptr_nonnull(e.mapping);
	ck_assert_str_eq(mapping_destination(e.mapping), "cms");
	config_cache_drop(cc, s);
	/* A change made by SQL of its own: the next request reads it. */
	raw_exec("UPDATE endpoints SET mapping = replace(mapping, '\"cms\"',"
	    " '\"cms2\"') WHERE name = 'cms-hook'", NULL);
	s = hold(cc, "cms-hook");
	ck_assert_int_eq(config_snap_endpoint(s, "cms-hook", &e), CONFIG_OK);
	ck_assert_str_eq(mapping_destination(e.mapping), "cms2");
	config_cache_drop(cc, s);
	config_cache_stats(cc, &st);
	ck_assert_int_eq(st.singles, 2);
	config_cache_free(cc);
}
END_TEST

/*
 * The configuration as the previous release made it, schema version 1: no
 * mapping, the tornado kinds alone (its config/config.c and db/pg_schema.c, as
 * they were).  SQLite's with its version and triggers; PostgreSQL's gets them
 * from pg_schema_config_version, as that release's did.
 */
#define V1_BUMP(t, ev) \
	"CREATE TRIGGER " t "_version_" ev " AFTER " ev " ON " t \
	" BEGIN UPDATE config_version SET version = version + 1; END;"
#define V1_BUMPS(t) V1_BUMP(t, "insert") V1_BUMP(t, "update") \
	V1_BUMP(t, "delete")
static const char v1_lite[] =
	"PRAGMA journal_mode=DELETE;"
	"BEGIN;"
	"CREATE TABLE tenants("
	" id TEXT PRIMARY KEY,"
	" active INTEGER NOT NULL DEFAULT 1,"
	" status_base TEXT,"
	" api_key BLOB,"
	" created_at INTEGER NOT NULL);"
	"CREATE TABLE endpoints("
	" name TEXT PRIMARY KEY,"
	" tenant TEXT NOT NULL REFERENCES tenants(id),"
	" kind TEXT NOT NULL CHECK(kind IN ('tornado-job','tornado-org')),"
	" auth TEXT NOT NULL CHECK(auth IN ('hmac','key','standard')),"
	" key_header TEXT,"
	" tolerance_s INTEGER NOT NULL DEFAULT 300 CHECK(tolerance_s > 0),"
	" created_at INTEGER NOT NULL);"
	"CREATE TABLE secrets("
	" id INTEGER PRIMARY KEY,"
	" endpoint TEXT NOT NULL REFERENCES endpoints(name) ON DELETE CASCADE,"
	" secret BLOB NOT NULL,"
	" expires_at INTEGER,"
	" created_at INTEGER NOT NULL);"
	"CREATE INDEX secrets_endpoint ON secrets(endpoint);"
	"CREATE TABLE destinations("
	" tenant TEXT NOT NULL REFERENCES tenants(id),"
	" name TEXT NOT NULL,"
	" url TEXT NOT NULL,"
	" idempotent INTEGER NOT NULL DEFAULT 0,"
	" status_url TEXT,"
	" secret BLOB,"
	" timeout_ms INTEGER NOT NULL CHECK(timeout_ms > 0),"
	" max_attempts INTEGER NOT NULL CHECK(max_attempts > 0),"
	" created_at INTEGER NOT NULL,"
	" allow_internal INTEGER NOT NULL DEFAULT 0,"
	" PRIMARY KEY(tenant, name));"
	"CREATE TABLE jobs("
	" tenant TEXT NOT NULL REFERENCES tenants(id),"
	" job_id TEXT NOT NULL,"
	" attempt TEXT NOT NULL,"
	" step TEXT NOT NULL,"
	" destination TEXT NOT NULL,"
	" source_url TEXT,"
	" output TEXT,"
	" created_at INTEGER NOT NULL,"
	" PRIMARY KEY(tenant, job_id),"
	" FOREIGN KEY(tenant, destination)"
	" REFERENCES destinations(tenant, name));"
	"CREATE INDEX IF NOT EXISTS jobs_action ON jobs(tenant, attempt, step,"
	" job_id);"
	"CREATE TABLE config_version("
	" one INTEGER PRIMARY KEY CHECK(one = 1),"
	" version INTEGER NOT NULL);"
	"INSERT INTO config_version(one, version) VALUES (1, 1000);"
	V1_BUMPS("tenants") V1_BUMPS("endpoints") V1_BUMPS("secrets")
	"PRAGMA user_version=1;"
	"COMMIT;";
static const char v1_pg[] =
	"BEGIN;"
	"CREATE SCHEMA hookbox_config;"
	"CREATE TABLE hookbox_config.tenants("
	" id text PRIMARY KEY,"
	" active bigint NOT NULL DEFAULT 1,"
	" status_base text,"
	" api_key bytea,"
	" created_at bigint NOT NULL);"
	"CREATE TABLE hookbox_config.endpoints("
	" name text PRIMARY KEY,"
	" tenant text NOT NULL REFERENCES hookbox_config.tenants(id),"
	" kind text NOT NULL CHECK(kind IN ('tornado-job','tornado-org')),"
	" auth text NOT NULL CHECK(auth IN ('hmac','key','standard')),"
	" key_header text,"
	" tolerance_s bigint NOT NULL DEFAULT 300 CHECK(tolerance_s > 0),"
	" created_at bigint NOT NULL);"
	"CREATE TABLE hookbox_config.secrets("
	" id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
	" endpoint text NOT NULL REFERENCES hookbox_config.endpoints(name)"
	"  ON DELETE CASCADE,"
	" secret bytea NOT NULL,"
	" expires_at bigint,"
	" created_at bigint NOT NULL);"
	"CREATE INDEX secrets_endpoint ON hookbox_config.secrets(endpoint);"
	"CREATE TABLE hookbox_config.destinations("
	" tenant text NOT NULL REFERENCES hookbox_config.tenants(id),"
	" name text NOT NULL,"
	" url text NOT NULL,"
	" idempotent bigint NOT NULL DEFAULT 0,"
	" status_url text,"
	" secret bytea,"
	" timeout_ms bigint NOT NULL CHECK(timeout_ms > 0),"
	" max_attempts bigint NOT NULL CHECK(max_attempts > 0),"
	" created_at bigint NOT NULL,"
	" allow_internal bigint NOT NULL DEFAULT 0,"
	" PRIMARY KEY(tenant, name));"
	"CREATE TABLE hookbox_config.jobs("
	" tenant text NOT NULL REFERENCES hookbox_config.tenants(id),"
	" job_id text NOT NULL,"
	" attempt text NOT NULL,"
	" step text NOT NULL,"
	" destination text NOT NULL,"
	" source_url text,"
	" output text,"
	" created_at bigint NOT NULL,"
	" PRIMARY KEY(tenant, job_id),"
	" FOREIGN KEY(tenant, destination)"
	"  REFERENCES hookbox_config.destinations(tenant, name));"
	"CREATE INDEX jobs_action ON hookbox_config.jobs(tenant, attempt, step,"
	" job_id);"
	"CREATE TABLE hookbox_config.schema_version("
	" one boolean PRIMARY KEY DEFAULT true CHECK(one),"
	" version bigint NOT NULL);"
	"INSERT INTO hookbox_config.schema_version(version) VALUES (1);";
/* The rows that release wrote, in its own words. */
static const char v1_rows[] =
	"INSERT INTO tenants(id, created_at) VALUES ('acme', 1);"
	"INSERT INTO endpoints(name, tenant, kind, auth, key_header,"
	" tolerance_s, created_at) VALUES ('hook', 'acme', 'tornado-org',"
	" 'hmac', 'X-Sig', 120, 2);"
	"INSERT INTO secrets(endpoint, secret, created_at)"
	" VALUES ('hook', 'hmac-secret-7f3a9c1e5b2d', 3);"
	"INSERT INTO destinations(tenant, name, url, timeout_ms, max_attempts,"
	" created_at) VALUES ('acme', 'cms', 'http://127.0.0.1:9/sink', 1000,"
	" 3, 4);"
	"INSERT INTO jobs(tenant, job_id, attempt, step, destination,"
	" created_at) VALUES ('acme', 'j1', 'a1', 's1', 'cms', 5)";

/* Makes the configuration at path (dbpath, or a file) the previous
   release's, with its rows. */
static void
make_v1(const char *path)
{
	struct db	*db = NULL;
	char		 why[256];

	if (!db_is_postgres(path)) {
		(void)unlink(path);
		ck_assert_int_eq(db_open_sqlite(path, SQLITE_OPEN_READWRITE |
		    SQLITE_OPEN_CREATE, NULL, 0, &db), DB_OK);
		ck_assert_msg(db_exec(db, v1_lite) == DB_OK, "%s",
		    db_errmsg(db));
	} else {
		/*
		 * A budget for a loaded machine: the previous test's, or the
		 * fixture's, server processes may still be ending.
		 */
		ck_assert_msg(db_open_pg(path, 30000, 0, NULL, 0, &db, why,
		    sizeof(why)) == DB_OK, "PostgreSQL: %s", why);
		ck_assert_msg(db_exec(db, "DROP SCHEMA IF EXISTS hookbox_config"
		    " CASCADE") == DB_OK, "%s", db_errmsg(db));
		ck_assert_msg(db_exec(db, v1_pg) == DB_OK, "%s", db_errmsg(db));
		ck_assert_msg(db_exec(db, pg_schema_config_version) == DB_OK,
		    "%s", db_errmsg(db));
		ck_assert_msg(db_exec(db, "COMMIT") == DB_OK, "%s",
		    db_errmsg(db));
		ck_assert_int_eq(db_exec(db,
		    "SET search_path = hookbox_config"), DB_OK);
	}
	ck_assert_msg(db_exec(db, v1_rows) == DB_OK, "%s", db_errmsg(db));
	db_close(db);
}

/*
 * A configuration made by the previous release: no one opens it (the
 * responder's cache neither), a serving role's probe says to run init;
 * config_upgrade() brings it to this release's schema once, every row
 * kept (the secrets still their endpoint's), the version's triggers
 * working, kind mapped and auth scheme allowed and the CHECKs in force
 * (from 1 through 2 to 3); on PostgreSQL
 * both upgrades give the schema a new one has.
 */
START_TEST(test_upgrade)
{
	struct config_endpoint	 e;
	struct config_secrets	 sec;
	struct config_job	 j;
	struct config_cache	*cc;
	struct config		*c;
	enum config_status	 why_st = CONFIG_OK;
	char			 why[512], lite[PATH_MAX], role[32], sql[160];
	char			 grants[1024], info[PATH_MAX + 64], *text;
	long long		 v;
	int			 from = -1, found;

	config_close(w);
	w = NULL;
	make_v1(dbpath);
	c = (struct config *)&c;
	ck_assert_int_eq(config_open(dbpath, CONFIG_READ, BUSY_MS, &c),
	    CONFIG_OLD);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(config_open(dbpath, CONFIG_WRITE, BUSY_MS, &c),
	    CONFIG_OLD);
	cc = cache_new();
	ck_assert_ptr_null(config_cache_hold(cc, "hook", &why_st));
	ck_assert_int_eq(why_st, CONFIG_OLD);
	if (test_backend == TEST_POSTGRES) {
		ck_assert_int_eq(PROBE(dbpath, ACCESS_CONFIG), ACCESS_UNUSABLE);
		ck_assert_msg(strstr(acc_why, "hookbox init") != NULL &&
		    strstr(acc_why, "version 1") != NULL, "why: %s", acc_why);
		/* A serving role, granted before: told, and no upgrade. */
		ck_assert_int_lt(snprintf(role, sizeof(role), "hb_upg_%ld",
		    (long)getpid()), (int)sizeof(role));
		raw_exec(NULL, pg_schema_state);
		ck_assert_int_lt(snprintf(sql, sizeof(sql), "DROP ROLE IF"
		    " EXISTS %s; CREATE ROLE %s LOGIN", role, role),
		    (int)sizeof(sql));
		raw_exec(NULL, sql);
		ck_assert_int_eq(pg_schema_grants(role, grants,
		    sizeof(grants)), 0);
		raw_exec(NULL, grants);
		ck_assert_int_lt(snprintf(info, sizeof(info), "%s user=%s",
		    dbpath, role), (int)sizeof(info));
		ck_assert_int_eq(config_open(info, CONFIG_READ, BUSY_MS, &c),
		    CONFIG_OLD);
		ck_assert_int_eq(PROBE(info, ACCESS_SERVE), ACCESS_UNUSABLE);
		ck_assert_msg(strstr(acc_why, "hookbox init") != NULL,
		    "why: %s", acc_why);
		ck_assert_int_ne(config_upgrade(info, BUSY_MS, &from),
		    CONFIG_OK);
		ck_assert_int_eq(raw_int("SELECT version FROM"
		    " schema_version"), 1);
	}
	/* Opening changed nothing. */
	ck_assert_int_eq(raw_int(test_backend == TEST_SQLITE ?
	    "PRAGMA user_version" : "SELECT version FROM schema_version"), 1);

	ck_assert_int_eq(config_upgrade(dbpath, BUSY_MS, &from), CONFIG_OK);
	ck_assert_int_eq(from, 1);
	ck_assert_int_eq(raw_int(test_backend == TEST_SQLITE ?
	    "PRAGMA user_version" : "SELECT version FROM schema_version"),
	    CONFIG_SCHEMA_VERSION);
	/* Once: a second finds nothing to do. */
	ck_assert_int_eq(config_upgrade(dbpath, BUSY_MS, &from), CONFIG_OK);
	ck_assert_int_eq(from, CONFIG_SCHEMA_VERSION);
	if (test_backend == TEST_POSTGRES)
		ck_assert_int_eq(PROBE(dbpath, ACCESS_CONFIG), ACCESS_OK);

	/* The serving role reads it now, with its grants as they were. */
	if (test_backend == TEST_POSTGRES) {
		ck_assert_int_eq(PROBE(info, ACCESS_SERVE), ACCESS_OK);
		ck_assert_int_eq(config_open(info, CONFIG_READ, BUSY_MS, &c),
		    CONFIG_OK);
		ck_assert_int_eq(config_endpoint_get(c, "hook", &e), CONFIG_OK);
		config_close(c);
	}

	/* Every row as it was. */
	w = test_config_open(dir, CONFIG_WRITE, BUSY_MS);
	ck_assert_int_eq(versioned(w), 1);
	ck_assert_int_eq(config_endpoint_get(w, "hook", &e), CONFIG_OK);
	ck_assert_int_eq(e.kind, CONFIG_KIND_ORG);
	ck_assert_str_eq(e.key_header, "X-Sig");
	ck_assert_int_eq(e.tolerance, 120);
	ck_assert_int_eq(config_endpoint_secrets(w, "hook", util_now(), &sec),
	    CONFIG_OK);
	ck_assert_uint_eq(sec.n, 1);
	ck_assert_mem_eq(sec.s[0].key, HMAC_SECRET, strlen(HMAC_SECRET));
	config_secrets_clear(&sec);
	ck_assert_int_eq(config_job_get(w, "acme", "j1", &j), CONFIG_OK);
	ck_assert_str_eq(j.destination, "cms");
	ck_assert_int_eq(count(w, CONFIG_ENDPOINTS), 1);

	/* The version's triggers: a change to an endpoint bumps it. */
	v = version();
	ck_assert_int_eq(add_mapped("cms-hook", "acme", MAP_CMS, why,
	    sizeof(why)), CONFIG_OK);
	ck_assert_int_gt(version(), v);
	/* The snapshot reads it. */
	config_cache_free(cc);
	cc = cache_new();
	{
		struct config_snap	*s = hold(cc, "cms-hook");

		ck_assert_int_eq(config_snap_endpoint(s, "cms-hook", &e),
		    CONFIG_OK);
		ck_assert_ptr_nonnull(e.mapping);
		config_cache_drop(cc, s);
	}
	config_cache_free(cc);
	/* The new CHECKs hold. */
	ck_assert_int_eq(raw_try("INSERT INTO endpoints(name, tenant, kind,"
	    " auth, created_at) VALUES ('x', 'acme', 'mapped', 'hmac', 1)"),
	    DB_CONSTRAINT);
	ck_assert_int_eq(raw_try("INSERT INTO endpoints(name, tenant, kind,"
	    " auth, created_at) VALUES ('x', 'acme', 'other', 'hmac', 1)"),
	    DB_CONSTRAINT);
	ck_assert_int_eq(raw_try("INSERT INTO endpoints(name, tenant, kind,"
	    " auth, created_at) VALUES ('x', 'acme', 'tornado-job', 'md5', 1)"),
	    DB_CONSTRAINT);
	/* Version 3's auth, a declared scheme, is allowed. */
	ck_assert_int_eq(raw_try("INSERT INTO endpoints(name, tenant, kind,"
	    " auth, created_at, mapping) VALUES ('x', 'acme', 'mapped',"
	    " 'scheme', 1, '{}')"), DB_OK);
	/* The secrets still refer to their endpoint: removed with it. */
	ck_assert_int_eq(config_remove(w, CONFIG_ENDPOINTS, "hook", NULL),
	    CONFIG_OK);
	ck_assert_int_eq(raw_scan("SELECT endpoint FROM secrets", 1, "hook",
	    4, &found), 0);

	if (test_backend != TEST_POSTGRES)
		return;
	/* The serving role reads a mapped endpoint's mapping. */
	ck_assert_int_eq(config_open(info, CONFIG_READ, BUSY_MS, &c),
	    CONFIG_OK);
	ck_assert_int_eq(config_endpoint_mapping(c, "cms-hook", &text),
	    CONFIG_OK);
	ck_assert_ptr_nonnull(text);
	free(text);
	config_close(c);
	ck_assert_int_lt(snprintf(sql, sizeof(sql), "DROP OWNED BY %s;"
	    " DROP ROLE %s", role, role), (int)sizeof(sql));
	raw_exec(NULL, sql);
	/* Both upgrades make the schema a new configuration has. */
	test_path(lite, sizeof(lite), dir, "v1.db");
	make_v1(lite);
	ck_assert_int_eq(config_upgrade(lite, BUSY_MS, &from), CONFIG_OK);
	ck_assert_int_eq(from, 1);
	test_schema_agree(lite, dbpath, "hookbox_config", 7);
}
END_TEST

/* A version this release does not know is not upgraded. */
START_TEST(test_upgrade_refused)
{
	int	from = -1;

	config_close(w);
	w = NULL;
	raw_exec("PRAGMA user_version=99",
	    "UPDATE schema_version SET version = 99");
	ck_assert_int_eq(config_upgrade(dbpath, BUSY_MS, &from), CONFIG_ERROR);
	ck_assert_int_eq(from, 0);
	raw_exec("PRAGMA user_version=0", "DELETE FROM schema_version");
	ck_assert_int_eq(config_upgrade(dbpath, BUSY_MS, &from), CONFIG_ERROR);
	ck_assert_int_eq(raw_int(test_backend == TEST_SQLITE ?
	    "PRAGMA user_version" : "SELECT count(*) FROM schema_version"), 0);
}
END_TEST

static Suite *
config_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("config");

	tc = tcase_create("file");
	tcase_add_unchecked_fixture(tc, test_case_setup, test_case_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_create);
	tcase_add_test(tc, test_open_version);
	tcase_add_test(tc, test_open_bad_files);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_pg_create);
	tcase_add_test(tc, test_schema_agrees);
	suite_add_tcase(s, tc);

	tc = tcase_create("rows");
	tcase_add_unchecked_fixture(tc, test_case_setup, test_case_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_notfound);
	tcase_add_test(tc, test_tenant_invalid);
	tcase_add_test(tc, test_endpoint_invalid);
	tcase_add_test(tc, test_endpoint_bad_enum);
	tcase_add_test(tc, test_secret_invalid);
	tcase_add_test(tc, test_destination_invalid);
	tcase_add_test(tc, test_destination_internal);
	tcase_add_test(tc, test_destination_allow_col);
	tcase_add_test(tc, test_job_invalid);
	tcase_add_test(tc, test_read_revalidates);
	tcase_add_test(tc, test_duplicates);
	tcase_add_test(tc, test_references);
	tcase_add_test(tc, test_constraint_language);
	tcase_add_test(tc, test_remove);
	tcase_add_test(tc, test_rollback);
	tcase_add_test(tc, test_list);
	suite_add_tcase(s, tc);

	tc = tcase_create("secrets");
	tcase_add_unchecked_fixture(tc, test_case_setup, test_case_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_key_hashed);
	tcase_add_test(tc, test_hmac_secrets);
	tcase_add_test(tc, test_secret_expiry);
	tcase_add_test(tc, test_secret_negative_expiry);
	tcase_add_test(tc, test_secrets_max);
	tcase_add_test(tc, test_secrets_max_race);
	suite_add_tcase(s, tc);

	tc = tcase_create("edit");
	tcase_add_unchecked_fixture(tc, test_case_setup, test_case_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_check_values);
	tcase_add_test(tc, test_referrer);
	tcase_add_test(tc, test_updates);
	tcase_add_test(tc, test_secret_rotation);
	suite_add_tcase(s, tc);

	tc = tcase_create("readers");
	tcase_add_unchecked_fixture(tc, test_case_setup, test_case_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_read_refuses_writes);
	tcase_add_test(tc, test_read_only_open);
	tcase_add_test(tc, test_reader_sees_writes);
	tcase_add_test(tc, test_snapshot);
	tcase_add_test(tc, test_pg_reader);
	tcase_add_test(tc, test_pg_grants);
	tcase_add_test(tc, test_access);
	tcase_add_test(tc, test_pg_uri_busy);
	suite_add_tcase(s, tc);

	tc = tcase_create("version");
	tcase_add_unchecked_fixture(tc, test_case_setup, test_case_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_version_bumps);
	tcase_add_test(tc, test_version_random_start);
	tcase_add_test(tc, test_version_added);
	tcase_add_test(tc, test_cache_snapshot);
	tcase_add_test(tc, test_cache_without_version);
	tcase_add_test(tc, test_cache_read_fails);
	tcase_add_test(tc, test_cache_check_shared);
	suite_add_tcase(s, tc);

	tc = tcase_create("mapped");
	tcase_add_unchecked_fixture(tc, test_case_setup, test_case_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_mapped_add);
	tcase_add_test(tc, test_mapped_refused);
	tcase_add_test(tc, test_mapped_unsigned_header);
	tcase_add_test(tc, test_mapped_scheme);
	tcase_add_test(tc, test_mapped_revalidated);
	tcase_add_test(tc, test_mapped_set);
	tcase_add_test(tc, test_mapped_destination_kept);
	tcase_add_test(tc, test_cache_mapping);
	tcase_add_test(tc, test_cache_mapping_single);
	tcase_add_test(tc, test_upgrade);
	tcase_add_test(tc, test_upgrade_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("list_import");
	tcase_add_unchecked_fixture(tc, test_case_setup, test_case_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_list_filter);
	tcase_add_loop_test(tc, test_job_parse, 0, (int)NELEM(parsecases));
	tcase_add_test(tc, test_job_parse_output);
	tcase_add_test(tc, test_job_import);
	tcase_add_test(tc, test_job_import_bad_lines);
	tcase_add_test(tc, test_registrar);
	tcase_add_test(tc, test_pg_registrar_grants);
	tcase_add_test(tc, test_pg_jobs_by_key);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	if (util_init() != 0)
		return 1;
	return test_run_backends(config_suite, "config");
}
