/*
 * check_store.c: the state store's densest logic on real SQLite files
 * (store/store.h, store/outbox.h, store/admin.h): round-robin picks, guarded
 * claims, lease expiry, status checks, operator moves, the next wake-up,
 * prune boundaries and the counts.
 *
 * Rows are made the way the programs make them: accepted through
 * accept_observation(), then moved by the store's own functions.  Every
 * function is given its `now` (unix ms from the fixed T0), so nothing
 * depends on the clock or on sleeping.  The test looks at the file
 * through a connection of its own; it writes through one only where a
 * state cannot be reached through the store (each place says why).
 *
 * Each test gets its own directory under one per test case, which the
 * parent process removes even when a test fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>
#include <sqlite3.h>

#include "base/fault.h"
#include "config/admin.h"
#include "db/db.h"
#include "db/pg_schema.h"
#include "intake/accept.h"
#include "status/page.h"
#include "status/status.h"
#include "store/admin.h"
#include "store/circuit.h"
#include "store/flight.h"
#include "store/metrics.h"
#include "store/outbox.h"
#include "store/record.h"
#include "store/store_int.h"
#include "testutil.h"
#include "base/util.h"
#include "provider/tornado.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* A fixed clock: every call is given its own now from here. */
#define T0		1700000000000LL

/* The action that job j<n> of tenant t qualifies (attempt att-<n>). */
#define ACT(t, n)	t ":att-" #n ":" TEST_STEP

/* Jobs registered per tenant: a, b and c hold j1 .. j<JOBS>. */
#define JOBS		24

static char		 dir[PATH_MAX - 32];	/* per test */
static char		 state_path[PATH_MAX];
static struct store	*st;
static struct config	*cfg;

/*
 * Fixtures
 */

/*
 * In each test's process: tenants a, b and c, each with destination
 * "sink" and jobs j1 .. j<JOBS> (job jN qualifies action ACT(t, N)), and
 * an empty state.db.
 */
static void
setup(void)
{
	static const char *const	 tenants[] = { "a", "b", "c" };
	struct config			*w;
	char				 job[16], att[16];
	size_t				 i;
	int				 n;

	ck_assert_int_lt(snprintf(dir, sizeof(dir), "%s", test_tmpdir()),
	    (int)sizeof(dir));
	ck_assert_int_lt(snprintf(state_path, sizeof(state_path), "%s",
	    test_location(dir, "state.db")), (int)sizeof(state_path));
	w = test_config_create(dir);
	ck_assert_int_eq(config_begin(w), CONFIG_OK);	/* one sync */
	for (i = 0; i < NELEM(tenants); i++) {
		test_add_tenant(w, tenants[i], 1);
		test_add_destination(w, tenants[i], "sink");
		for (n = 1; n <= JOBS; n++) {
			ck_assert_int_lt(snprintf(job, sizeof(job), "j%d", n),
			    (int)sizeof(job));
			ck_assert_int_lt(snprintf(att, sizeof(att), "att-%d",
			    n), (int)sizeof(att));
			test_add_job(w, tenants[i], job, att, "sink");
		}
	}
	ck_assert_int_eq(config_commit(w), CONFIG_OK);
	config_close(w);
	cfg = test_config_open(dir, CONFIG_READ, TEST_BUSY_MS);
	st = test_store_open(dir, TEST_BUSY_MS, 1);
}

static void
teardown(void)
{
	store_close(st);
	config_close(cfg);
	st = NULL;
	cfg = NULL;
	test_rmdir(dir);
}

/*
 * The file through a connection of the test's own
 */

/*
 * A connection of the test's own (read-only on SQLite, opened per query;
 * on PostgreSQL the test's one, kept) with text t, ?1 bound to arg unless
 * NULL; *db is to be closed with done().
 */
static struct db_stmt *
prepare(struct db **db, const struct db_text *t, const char *arg)
{
	struct db_stmt	*s;

	if (test_backend == TEST_SQLITE) {
		ck_assert_int_eq(db_open_sqlite(state_path,
		    SQLITE_OPEN_READONLY, t, 1, db), DB_OK);
		ck_assert_msg((s = db_stmt(*db, 0)) != NULL, "%s: %s",
		    t->sqlite, db_errmsg(*db));
	} else
		s = test_own_stmt(state_path, t->sqlite, t->pg, db);
	if (arg != NULL)
		ck_assert_int_eq(db_bind_text(s, 1, arg), DB_OK);
	return s;
}

static void
done(struct db *db)
{
	if (test_backend == TEST_SQLITE)
		db_close(db);
}

/* The first column of the first row as an integer; -1 for no row or NULL. */
static long long
qi(const char *sql, const char *arg)
{
	struct db_text	 t = { sql, NULL };
	struct db	*db = NULL;
	struct db_stmt	*s;
	enum db_rc	 rc;
	long long	 v = -1;

	s = prepare(&db, &t, arg);
	if ((rc = db_step(s)) == DB_ROW) {
		if (!db_col_null(s, 0))
			v = db_col_int64(s, 0);
		db_reset(s);
	} else
		ck_assert_msg(rc == DB_DONE, "%s: %s", sql, db_errmsg(db));
	done(db);
	return v;
}

/*
 * The first column of the first row as text, "NULL" for NULL, "(no
 * row)" for none; static storage, valid until the next call.
 */
static const char *
qtt(const struct db_text *t, const char *arg)
{
	static char	 buf[4096];
	struct db	*db = NULL;
	struct db_stmt	*s;
	const char	*v;
	enum db_rc	 rc;

	s = prepare(&db, t, arg);
	if ((rc = db_step(s)) != DB_ROW) {
		ck_assert_msg(rc == DB_DONE, "%s: %s", t->sqlite,
		    db_errmsg(db));
		v = "(no row)";
	} else if (db_col_null(s, 0))
		v = "NULL";
	else
		v = db_col_text(s, 0);
	ck_assert_int_lt(snprintf(buf, sizeof(buf), "%s", v),
	    (int)sizeof(buf));
	db_reset(s);
	done(db);
	return buf;
}

static const char *
qt(const char *sql, const char *arg)
{
	struct db_text	 t = { sql, NULL };

	return qtt(&t, arg);
}

/* qt() where the two dialects differ (aggregates, JSON). */
static const char *
qt2(const char *sqlite, const char *pg, const char *arg)
{
	struct db_text	 t = { sqlite, pg };

	return qtt(&t, arg);
}

static const char *
state_of(const char *action)
{
	return qt("SELECT state FROM outbox WHERE action_id = ?1", action);
}

static long long
next_at(const char *action)
{
	return qi("SELECT next_at FROM outbox WHERE action_id = ?1", action);
}

static long long
attempts_of(const char *action)
{
	return qi("SELECT attempts FROM outbox WHERE action_id = ?1", action);
}

/*
 * Everything stored about one action (its outbox row, its attempts and
 * its accepted row) as one comparable string: a guarded move that does
 * not apply must leave it exactly as it was.
 */
static void
sig(const char *action, char *buf, size_t len)
{
	/* The same text but for the aggregate's name. */
#define SIG_SQL(agg)							\
	"SELECT o.state || '|' || o.attempts || '|' || o.next_at || '|' ||" \
	" coalesce(o.lease_owner, '-') || '|' ||"			\
	" coalesce(CAST(o.lease_until AS TEXT), '-')"			\
	" || '|' || o.updated_at || '|' ||"				\
	" coalesce(CAST(o.last_status AS TEXT), '-') ||"		\
	" '|' || coalesce(o.last_error, '-') || '|' || (SELECT"		\
	" coalesce(" agg "(n || ',' || coalesce(owner, '-') || ',' ||"	\
	" started_at || ',' || coalesce(CAST(ended_at AS TEXT), '-') ||" \
	" ',' || coalesce(CAST(http_status AS TEXT), '-') || ',' ||"	\
	" coalesce(error, '-'), ';'),"					\
	" 'none') FROM attempts a WHERE a.action_id = o.action_id) ||"	\
	" '|' || (SELECT count(*)"					\
	" FROM accepted c WHERE c.action_id = o.action_id)"		\
	" FROM outbox o WHERE o.action_id = ?1"
	static const struct db_text	t = {
		SIG_SQL("group_concat"), SIG_SQL("string_agg")
	};

	ck_assert_int_lt(snprintf(buf, len, "%s", qtt(&t, action)),
	    (int)len);
	ck_assert_msg(strchr(buf, '|') != NULL, "%s: %s", action, buf);
#undef SIG_SQL
}

#define SIG_MAX		1024

/* A function that changed nothing left no transaction open either. */
static void
no_lock_held(void)
{
	if (test_backend == TEST_SQLITE) {
		test_db_exec(state_path, "BEGIN IMMEDIATE; ROLLBACK");
		return;
	}
	/* PostgreSQL: no connection of the test's database sits in one. */
	ck_assert_int_eq(qi("SELECT count(*) FROM pg_stat_activity WHERE"
	    " datname = current_database() AND state LIKE"
	    " 'idle in transaction%'", NULL), 0);
}

/*
 * Rows, made the way the programs make them
 */

/* Accepts job j<n>'s completion for tenant t at now: ACT(t, n), due now. */
static void
accept_at(const char *t, int n, int64_t now)
{
	char	job[16];

	ck_assert_int_lt(snprintf(job, sizeof(job), "j%d", n),
	    (int)sizeof(job));
	ck_assert_int_eq(test_accept(st, cfg, t, job, now), HB_ACCEPTED);
}

/* accept_at(), and ACT(t, n) written into action (HB_ACTION_MAX + 1). */
static void
accept_named(const char *t, int n, int64_t now, char *action)
{
	ck_assert_int_lt(snprintf(action, HB_ACTION_MAX + 1, "%s:att-%d:%s",
	    t, n, TEST_STEP), HB_ACTION_MAX + 1);
	accept_at(t, n, now);
}

/* Runs a status-API document through acceptance for tenant t at now. */
static enum hb_result
observe(const char *t, const char *doc, int64_t now)
{
	struct accept_req	 req;
	struct accept_res	 res;
	struct obs		 o;
	char			 why[128];

	ck_assert_msg(tornado_parse_poll(doc, strlen(doc), &o, why,
	    sizeof(why)) == TORNADO_OK, "parse: %s", why);
	memset(&req, 0, sizeof(req));
	req.tenant = t;
	req.obs = &o;
	req.now_ms = now;
	return accept_observation(st, cfg, &req, &res);
}

/*
 * The row of action as a pick would see it (a read through the test's
 * own connection, to claim a given row rather than the next one).
 */
static struct store_row
row_of(const char *action)
{
	struct store_row	r;

	memset(&r, 0, sizeof(r));
	ck_assert_int_lt(snprintf(r.action, sizeof(r.action), "%s", action),
	    (int)sizeof(r.action));
	ck_assert_int_lt(snprintf(r.tenant, sizeof(r.tenant), "%s",
	    qt("SELECT tenant FROM outbox WHERE action_id = ?1", action)),
	    (int)sizeof(r.tenant));
	ck_assert_int_lt(snprintf(r.destination, sizeof(r.destination), "%s",
	    qt("SELECT destination FROM outbox WHERE action_id = ?1", action)),
	    (int)sizeof(r.destination));
	r.attempts = (int)attempts_of(action);
	return r;
}

/* Leases action's row to owner at now until `until`; it must be due. */
static void
claim(const char *action, const char *owner, int64_t now, int64_t until,
    struct store_lease *l)
{
	struct store_row	r = row_of(action);
	int			claimed;

	ck_assert_int_eq(test_claim1(st, &r, owner, now, until, l,
	    &claimed), STORE_OK);
	ck_assert_msg(claimed, "%s not claimed", action);
}

/* Claims action's row and finishes the attempt at now with out. */
static void
settle(const char *action, enum store_outcome out, int64_t now,
    int64_t next)
{
	struct store_lease	l;
	int			lost;

	claim(action, "w0", now, now + 30000, &l);
	ck_assert_int_eq(test_finish1(st, &l, "w0", out, now, next,
	    out == STORE_OUT_DELIVERED ? 204 : 503, "settled", &lost),
	    STORE_OK);
	ck_assert_int_eq(lost, 0);
	store_lease_clear(&l);
}

/*
 * Brings action (accepted, pending and due at now) into state s at now;
 * an unknown row is due for a check at now + 1000.
 */
static void
make_state(const char *action, enum store_state s, int64_t now)
{
	struct store_lease	l;

	switch (s) {
	case STORE_PENDING:
		break;
	case STORE_LEASED:
		claim(action, "w0", now, now + 30000, &l);
		store_lease_clear(&l);
		break;
	case STORE_DELIVERED:
		settle(action, STORE_OUT_DELIVERED, now, now);
		break;
	case STORE_DEAD:
		settle(action, STORE_OUT_DEAD, now, now);
		break;
	case STORE_UNKNOWN:
		settle(action, STORE_OUT_UNKNOWN, now, now + 1000);
		break;
	default:
		ck_abort_msg("no such state");
	}
	ck_assert_str_eq(state_of(action), store_state_name(s));
}

/*
 * Round-robin picks
 */

/*
 * A dispatcher's loop: pick after the cursor, claim, move the cursor to
 * the tenant served.  Tenant a's older backlog of five does not keep b
 * and c waiting: each gets its turn before a's second row.
 */
START_TEST(pick_round_robin)
{
	static const char *const want[] = {
		ACT("a", 1), ACT("b", 1), ACT("c", 1), ACT("a", 2),
		ACT("b", 2), ACT("a", 3), ACT("a", 4), ACT("a", 5),
	};
	struct store_row	 r;
	struct store_lease	 l;
	char			 cursor[HB_ID_MAX + 1] = "";
	size_t			 i;
	int			 found, claimed, n;

	for (n = 1; n <= 5; n++)
		accept_at("a", n, T0 + n);
	accept_at("b", 1, T0 + 10);
	accept_at("b", 2, T0 + 11);
	accept_at("c", 1, T0 + 12);
	for (i = 0; i < NELEM(want); i++) {
		ck_assert_int_eq(test_pick1(st, T0 + 100, cursor, &r,
		    &found), STORE_OK);
		ck_assert_int_eq(found, 1);
		ck_assert_msg(strcmp(r.action, want[i]) == 0,
		    "turn %zu after \"%s\": %s, want %s", i, cursor, r.action,
		    want[i]);
		ck_assert_str_eq(r.destination, "sink");
		ck_assert_int_eq(r.attempts, 0);
		ck_assert_int_eq(test_claim1(st, &r, "w1", T0 + 100,
		    T0 + 60000, &l, &claimed), STORE_OK);
		ck_assert_int_eq(claimed, 1);
		ck_assert_str_eq(l.tenant, r.tenant);
		store_lease_clear(&l);
		memcpy(cursor, r.tenant, sizeof(cursor));
	}
	ck_assert_int_eq(test_pick1(st, T0 + 100, cursor, &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 0);
	ck_assert_int_eq(test_pick1(st, T0 + 100, "", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 0);
}
END_TEST

/* The cursor: the first tenant after it, wrapping; a pick writes nothing. */
START_TEST(pick_cursor)
{
	static const struct {
		const char	*cursor, *want;
	} turns[] = {
		{ "", ACT("a", 2) },
		{ "0", ACT("a", 2) },	/* sorts before every tenant */
		{ "a", ACT("b", 1) },
		{ "a0", ACT("b", 1) },	/* between a and b */
		{ "b", ACT("c", 1) },
		{ "c", ACT("a", 2) },	/* wraps */
		{ "zzz", ACT("a", 2) },	/* after every tenant: wraps */
	};
	struct store_row	 r;
	char			 before[SIG_MAX], after[SIG_MAX];
	size_t			 i;
	int			 found;

	/* Within a tenant the row due first goes first: a2, not a1. */
	accept_at("a", 1, T0 + 3);
	accept_at("a", 2, T0 + 1);
	accept_at("b", 1, T0 + 2);
	accept_at("c", 1, T0);	/* due first, but tenants go in turn */
	sig(ACT("a", 2), before, sizeof(before));
	for (i = 0; i < NELEM(turns); i++) {
		memset(&r, 'Z', sizeof(r));
		ck_assert_int_eq(test_pick1(st, T0 + 100,
		    turns[i].cursor, &r, &found), STORE_OK);
		ck_assert_int_eq(found, 1);
		ck_assert_msg(strcmp(r.action, turns[i].want) == 0,
		    "after \"%s\": %s, want %s", turns[i].cursor, r.action,
		    turns[i].want);
		ck_assert_str_eq(r.owner, "");
		ck_assert_int_eq(r.lease_until, 0);
	}
	sig(ACT("a", 2), after, sizeof(after));
	ck_assert_str_eq(before, after);
	ck_assert_int_eq(test_db_int(state_path,
	    "SELECT count(*) FROM outbox WHERE state = 'pending'"), 4);
	ck_assert_int_eq(test_db_int(state_path,
	    "SELECT count(*) FROM attempts"), 0);
}
END_TEST

/* Only pending rows whose next_at has come: the boundary included. */
START_TEST(pick_due_only)
{
	static const enum store_state others[] = {
		STORE_LEASED, STORE_DELIVERED, STORE_DEAD, STORE_UNKNOWN
	};
	struct store_row	 r;
	struct store_lease	 l;
	char			 action[HB_ACTION_MAX + 1];
	size_t			 i;
	int			 found, lost;

	accept_at("a", 1, T0);
	accept_at("b", 1, T0 + 500);
	ck_assert_int_eq(test_pick1(st, T0 - 1, "", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 0);
	ck_assert_int_eq(test_pick1(st, T0 - 1, "a", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 0);
	ck_assert_int_eq(test_pick1(st, T0, "", &r, &found), STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_str_eq(r.action, ACT("a", 1));
	/* b's row is not due yet: after a, the pick wraps back to a. */
	ck_assert_int_eq(test_pick1(st, T0 + 499, "a", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_str_eq(r.action, ACT("a", 1));
	ck_assert_int_eq(test_pick1(st, T0 + 500, "a", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_str_eq(r.action, ACT("b", 1));

	/* A retry puts next_at in the future: not picked before then. */
	claim(ACT("a", 1), "w1", T0 + 600, T0 + 30000, &l);
	ck_assert_int_eq(test_finish1(st, &l, "w1", STORE_OUT_RETRY,
	    T0 + 700, T0 + 5000, 503, "HTTP 503", &lost), STORE_OK);
	ck_assert_int_eq(lost, 0);
	store_lease_clear(&l);
	ck_assert_int_eq(test_pick1(st, T0 + 4999, "b", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_str_eq(r.action, ACT("b", 1));
	claim(ACT("b", 1), "w1", T0 + 4999, T0 + 30000, &l);
	store_lease_clear(&l);
	/* b's row is leased now, a's not yet due: nothing at all. */
	ck_assert_int_eq(test_pick1(st, T0 + 4999, "", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 0);
	ck_assert_int_eq(test_pick1(st, T0 + 5000, "", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_str_eq(r.action, ACT("a", 1));
	ck_assert_int_eq(r.attempts, 1);

	/* No other state is ever picked, however late: c is passed over. */
	for (i = 0; i < NELEM(others); i++) {
		accept_named("c", (int)i + 1, T0 + 5000, action);
		make_state(action, others[i], T0 + 5000);
	}
	ck_assert_int_eq(test_pick1(st, T0 + 1000000000, "b", &r,
	    &found), STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_str_eq(r.action, ACT("a", 1));
}
END_TEST

/* Picks a batch of at most max after cursor at now; "a1 b1 ..." into buf. */
static const char *
batch(int64_t now, const char *cursor, int max)
{
	static char		 buf[1024];
	struct store_row	 rows[16];
	char			 before[SIG_MAX], after[SIG_MAX];
	size_t			 len = 0;
	int			 i, n = -1;
	const char		*job;

	ck_assert_int_le(max, (int)NELEM(rows));
	memset(rows, 'Z', sizeof(rows));
	test_state_snapshot(state_path, before, sizeof(before));
	ck_assert_int_eq(store_outbox_pick(st, now, cursor, rows, max, &n),
	    STORE_OK);
	test_state_snapshot(state_path, after, sizeof(after));
	ck_assert_str_eq(before, after);	/* a pick writes nothing */
	ck_assert_int_ge(n, 0);
	ck_assert_int_le(n, max);
	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		ck_assert_str_eq(rows[i].destination, "sink");
		ck_assert_str_eq(rows[i].owner, "");
		/* "t:att-N:step" -> "tN" */
		ck_assert_ptr_nonnull(job = strstr(rows[i].action, ":att-"));
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s%.*s",
		    i > 0 ? " " : "", rows[i].tenant,
		    (int)strcspn(job + 5, ":"), job + 5);
		ck_assert_uint_lt(len, sizeof(buf));
	}
	return buf;
}

/*
 * A batch is fair: the tenants after the cursor take turns, each an equal
 * share; a share one cannot fill goes to the others; oldest first within
 * a tenant; never all one tenant's while another has a row due.
 */
START_TEST(pick_batch_fair)
{
	int	n;

	/* a's backlog is older than anything b or c have. */
	for (n = 1; n <= 12; n++)
		accept_at("a", n, T0 + n);
	accept_at("b", 2, T0 + 21);
	accept_at("b", 1, T0 + 20);	/* due first: b1 before b2 */
	accept_at("c", 1, T0 + 30);

	ck_assert_str_eq(batch(T0 + 100, "", 8), "a1 b1 c1 a2 b2 a3 a4 a5");
	ck_assert_str_eq(batch(T0 + 100, "a", 8), "b1 c1 a1 b2 a2 a3 a4 a5");
	ck_assert_str_eq(batch(T0 + 100, "c", 8), "a1 b1 c1 a2 b2 a3 a4 a5");
	ck_assert_str_eq(batch(T0 + 100, "b", 4), "c1 a1 b1 a2");
	ck_assert_str_eq(batch(T0 + 100, "", 3), "a1 b1 c1");
	/* Wider than everything due: all of it. */
	ck_assert_str_eq(batch(T0 + 100, "", 16),
	    "a1 b1 c1 a2 b2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12");
	/* Only what is due: at T0 + 20, c is not, nor b2. */
	ck_assert_str_eq(batch(T0 + 20, "", 4), "a1 b1 a2 a3");
	/* More tenants than room: the first max after the cursor, one each. */
	ck_assert_str_eq(batch(T0 + 100, "", 2), "a1 b1");
	ck_assert_str_eq(batch(T0 + 100, "b", 2), "c1 a1");
	ck_assert_str_eq(batch(T0 + 100, "a", 1), "b1");
	ck_assert_str_eq(batch(T0, "", 8), "");
	ck_assert_str_eq(batch(T0 + 100, "", 0), "");
}
END_TEST

/*
 * The guarded claim
 */

/* A claim leases the row, records the attempt's start, returns the payload. */
START_TEST(claim_records_attempt)
{
	struct store_row	 r;
	struct store_lease	 l;
	struct store_lease	 l2;
	int			 found, claimed, lost;

	accept_at("a", 1, T0);
	ck_assert_int_eq(test_pick1(st, T0 + 5, "", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_int_eq(test_claim1(st, &r, "w1", T0 + 5, T0 + 30005,
	    &l, &claimed), STORE_OK);
	ck_assert_int_eq(claimed, 1);
	ck_assert_str_eq(l.action, ACT("a", 1));
	ck_assert_str_eq(l.tenant, "a");
	ck_assert_str_eq(l.destination, "sink");
	ck_assert_int_eq(l.attempt, 1);
	ck_assert_int_eq(l.n, 1);
	ck_assert_int_eq(l.lease_until, T0 + 30005);
	ck_assert_ptr_nonnull(l.payload);
	ck_assert_str_eq(l.payload, qt("SELECT payload FROM outbox"
	    " WHERE action_id = ?1", ACT("a", 1)));
	ck_assert_str_eq(qt2("SELECT json_extract(payload, '$.job_id')"
	    " FROM outbox WHERE action_id = ?1", "SELECT payload::json->>"
	    "'job_id' FROM outbox WHERE action_id = ?1", ACT("a", 1)), "j1");

	ck_assert_str_eq(state_of(ACT("a", 1)), "leased");
	ck_assert_str_eq(qt("SELECT lease_owner FROM outbox"
	    " WHERE action_id = ?1", ACT("a", 1)), "w1");
	ck_assert_int_eq(qi("SELECT lease_until FROM outbox"
	    " WHERE action_id = ?1", ACT("a", 1)), T0 + 30005);
	ck_assert_int_eq(attempts_of(ACT("a", 1)), 1);
	ck_assert_int_eq(qi("SELECT updated_at FROM outbox"
	    " WHERE action_id = ?1", ACT("a", 1)), T0 + 5);
	/* The attempt's start, open: the row the lease names. */
	ck_assert_int_eq(qi("SELECT count(*) FROM attempts"
	    " WHERE action_id = ?1", ACT("a", 1)), 1);
	ck_assert_int_eq(qi("SELECT id FROM attempts WHERE action_id = ?1",
	    ACT("a", 1)), l.attempt_id);
	ck_assert_str_eq(qt("SELECT n || ' ' || owner || ' ' || started_at ||"
	    " ' ' || coalesce(CAST(ended_at AS TEXT), 'open') FROM attempts"
	    " WHERE action_id = ?1", ACT("a", 1)), "1 w1 1700000000005 open");
	no_lock_held();

	/* Retried: the next claim is attempt 2, with a row of its own. */
	ck_assert_int_eq(test_finish1(st, &l, "w1", STORE_OUT_RETRY,
	    T0 + 50, T0 + 100, 500, "HTTP 500", &lost), STORE_OK);
	ck_assert_int_eq(lost, 0);
	ck_assert_int_eq(test_pick1(st, T0 + 100, "", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_int_eq(r.attempts, 1);
	ck_assert_int_eq(test_claim1(st, &r, "w2", T0 + 100, T0 + 200,
	    &l2, &claimed), STORE_OK);
	ck_assert_int_eq(claimed, 1);
	ck_assert_int_eq(l2.attempt, 2);
	ck_assert_int_ne(l2.attempt_id, l.attempt_id);
	ck_assert_str_eq(l2.payload, l.payload);
	ck_assert_int_eq(attempts_of(ACT("a", 1)), 2);
	ck_assert_str_eq(qt2("SELECT group_concat(n || ' ' || owner, ',') FROM"
	    " (SELECT * FROM attempts WHERE action_id = ?1 ORDER BY id)",
	    "SELECT string_agg(n || ' ' || owner, ',' ORDER BY id) FROM"
	    " attempts WHERE action_id = ?1", ACT("a", 1)), "1 w1,2 w2");
	store_lease_clear(&l);
	store_lease_clear(&l2);
	ck_assert_ptr_null(l.payload);
	store_lease_clear(NULL);
}
END_TEST

/* Tries a stale pick: nothing claimed, nothing written, no lock left. */
static void
claim_nothing(const struct store_row *r, int64_t now)
{
	struct store_lease	l;
	char			before[SIG_MAX], after[SIG_MAX];
	int			claimed = -1;

	sig(r->action, before, sizeof(before));
	memset(&l, 'Z', sizeof(l));
	ck_assert_int_eq(test_claim1(st, r, "late", now, now + 30000,
	    &l, &claimed), STORE_OK);
	ck_assert_int_eq(claimed, 0);
	ck_assert_ptr_null(l.payload);
	ck_assert_str_eq(l.action, "");
	sig(r->action, after, sizeof(after));
	ck_assert_str_eq(before, after);
	ck_assert_int_eq(qi("SELECT count(*) FROM attempts WHERE"
	    " owner = 'late'", NULL), 0);
	no_lock_held();
}

/*
 * A pick that went stale claims nothing: another worker claimed the row,
 * its attempts changed, an operator moved it, or it is not due at the
 * claim's now.
 */
START_TEST(claim_stale_pick)
{
	struct store_row	 r, r2;
	struct store_lease	 l;
	int			 found, lost, changed, claimed;

	/* Another worker's claim came first. */
	accept_at("a", 1, T0);
	ck_assert_int_eq(test_pick1(st, T0 + 10, "", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	claim(ACT("a", 1), "w1", T0 + 10, T0 + 30000, &l);
	claim_nothing(&r, T0 + 10);

	/* It came back pending and due, but after an attempt. */
	ck_assert_int_eq(test_finish1(st, &l, "w1", STORE_OUT_RETRY,
	    T0 + 20, T0 + 20, 503, "HTTP 503", &lost), STORE_OK);
	ck_assert_int_eq(lost, 0);
	store_lease_clear(&l);
	ck_assert_str_eq(state_of(ACT("a", 1)), "pending");
	claim_nothing(&r, T0 + 30);
	/* A fresh pick of the same row claims it. */
	ck_assert_int_eq(test_pick1(st, T0 + 30, "", &r2, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_str_eq(r2.action, ACT("a", 1));
	ck_assert_int_eq(test_claim1(st, &r2, "w2", T0 + 30, T0 + 60,
	    &l, &claimed), STORE_OK);
	ck_assert_int_eq(claimed, 1);
	store_lease_clear(&l);

	/* An operator resent it (unknown -> pending, attempts kept). */
	accept_at("b", 1, T0);
	r = row_of(ACT("b", 1));
	make_state(ACT("b", 1), STORE_UNKNOWN, T0 + 10);
	ck_assert_int_eq(store_outbox_move(st, ACT("b", 1), STORE_MOVE_RESEND,
	    T0 + 20, 0, "resend", &changed), STORE_OK);
	ck_assert_int_eq(changed, 1);
	claim_nothing(&r, T0 + 30);

	/* An operator marked it delivered. */
	accept_at("c", 1, T0);
	r = row_of(ACT("c", 1));
	make_state(ACT("c", 1), STORE_UNKNOWN, T0 + 10);
	ck_assert_int_eq(store_outbox_move(st, ACT("c", 1),
	    STORE_MOVE_DELIVERED, T0 + 20, 0, "delivered", &changed), STORE_OK);
	ck_assert_int_eq(changed, 1);
	claim_nothing(&r, T0 + 30);

	/* Picked after a retry; meanwhile it died and was requeued. */
	accept_at("a", 2, T0);
	settle(ACT("a", 2), STORE_OUT_RETRY, T0 + 10, T0 + 10);
	r = row_of(ACT("a", 2));
	ck_assert_int_eq(r.attempts, 1);
	settle(ACT("a", 2), STORE_OUT_DEAD, T0 + 20, T0 + 20);
	ck_assert_int_eq(store_outbox_move(st, ACT("a", 2), STORE_MOVE_REQUEUE,
	    T0 + 30, 0, "requeue", &changed), STORE_OK);
	ck_assert_int_eq(changed, 1);
	ck_assert_int_eq(attempts_of(ACT("a", 2)), 0);
	claim_nothing(&r, T0 + 40);

	/* Not due at the claim's now (a pick made later than the claim). */
	accept_at("c", 2, T0 + 100);
	ck_assert_int_eq(test_pick1(st, T0 + 100, "b", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_str_eq(r.action, ACT("c", 2));
	claim_nothing(&r, T0 + 99);
}
END_TEST

/*
 * Finishing an attempt
 */

START_TEST(finish_outcomes)
{
	static const struct {
		enum store_outcome	 out;
		long			 http;
		const char		*error, *state, *last_status;
		int64_t			 next;
	} c[] = {
		{ STORE_OUT_DELIVERED, 204, NULL, "delivered", "204", 0 },
		{ STORE_OUT_RETRY, 503, "HTTP 503", "pending", "503", 7000 },
		{ STORE_OUT_DEAD, 410, "HTTP 410", "dead", "410", 0 },
		{ STORE_OUT_UNKNOWN, 0, "timeout after send", "unknown",
		    "NULL", 9000 },
	};
	struct store_row	 r;
	struct store_lease	 l;
	char			 action[HB_ACTION_MAX + 1];
	size_t			 i;
	int			 lost, found;

	for (i = 0; i < NELEM(c); i++) {
		accept_named("a", (int)i + 1, T0, action);
		claim(action, "w1", T0 + 10, T0 + 30000, &l);
		lost = -1;
		ck_assert_int_eq(test_finish1(st, &l, "w1", c[i].out,
		    T0 + 20, T0 + c[i].next, c[i].http, c[i].error, &lost),
		    STORE_OK);
		ck_assert_int_eq(lost, 0);
		store_lease_clear(&l);
		ck_assert_str_eq(state_of(action), c[i].state);
		ck_assert_str_eq(qt("SELECT coalesce(CAST(lease_owner AS TEXT), 'none') ||"
		    " coalesce(CAST(lease_until AS TEXT), 'none') FROM outbox"
		    " WHERE action_id = ?1", action), "nonenone");
		ck_assert_str_eq(qt("SELECT last_status FROM outbox"
		    " WHERE action_id = ?1", action), c[i].last_status);
		ck_assert_str_eq(qt("SELECT last_error FROM outbox"
		    " WHERE action_id = ?1", action),
		    c[i].error != NULL ? c[i].error : "NULL");
		if (c[i].next != 0)
			ck_assert_int_eq(next_at(action), T0 + c[i].next);
		ck_assert_int_eq(qi("SELECT updated_at FROM outbox"
		    " WHERE action_id = ?1", action), T0 + 20);
		/* The attempt's end, as it happened. */
		ck_assert_int_eq(qi("SELECT ended_at FROM attempts"
		    " WHERE action_id = ?1", action), T0 + 20);
		ck_assert_str_eq(qt("SELECT coalesce(CAST(http_status AS TEXT), 'NULL')"
		    " FROM attempts WHERE action_id = ?1", action),
		    c[i].last_status);
		no_lock_held();
	}
	/* The retried row is due at its next_at, and only it. */
	ck_assert_int_eq(test_pick1(st, T0 + 6999, "", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 0);
	ck_assert_int_eq(test_pick1(st, T0 + 7000, "", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_str_eq(r.action, ACT("a", 2));
	ck_assert_int_eq(test_pick1(st, T0 + 1000000000, "a", &r,
	    &found), STORE_OK);
	ck_assert_str_eq(r.action, ACT("a", 2));
	/* No such outcome. */
	accept_at("a", 5, T0);
	claim(ACT("a", 5), "w1", T0, T0 + 100, &l);
	ck_assert_int_eq(test_finish1(st, &l, "w1",
	    (enum store_outcome)9, T0, T0, 200, NULL, &lost), STORE_ERROR);
	ck_assert_str_eq(state_of(ACT("a", 5)), "leased");
	ck_assert_int_eq(qi("SELECT count(*) FROM attempts WHERE"
	    " action_id = ?1 AND ended_at IS NULL", ACT("a", 5)), 1);
	store_lease_clear(&l);
	no_lock_held();
}
END_TEST

/*
 * A worker whose lease was recovered records its attempt's real end but
 * moves nothing, whether the row was put back pending, taken by another
 * worker, or set aside as unknown; except that an attempt that delivered
 * settles a row set aside as unknown (recovery could not know).
 */
START_TEST(finish_lost_after_recovery)
{
	struct store_row	 rows[4];
	struct store_lease	 l1, l2;
	char			 before[SIG_MAX], after[SIG_MAX];
	int			 i, n, changed, lost;

	accept_at("a", 1, T0);
	claim(ACT("a", 1), "w1", T0, T0 + 1000, &l1);
	ck_assert_int_eq(store_outbox_expired(st, T0 + 1001, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(store_outbox_expire(st, &rows[0], STORE_OUT_RETRY,
	    T0 + 1001, T0 + 1001, "lease expired", &changed), STORE_OK);
	ck_assert_int_eq(changed, 1);

	/* Back to pending: w1's late answer does not move it. */
	ck_assert_int_eq(qi("SELECT count(*) FROM attempts WHERE"
	    " error = 'lease expired: outcome unknown'", NULL), 1);
	sig(ACT("a", 1), before, sizeof(before));
	lost = -1;
	ck_assert_int_eq(test_finish1(st, &l1, "w1",
	    STORE_OUT_DELIVERED, T0 + 1500, T0 + 1500, 200, NULL, &lost),
	    STORE_OK);
	ck_assert_int_eq(lost, 1);
	ck_assert_str_eq(state_of(ACT("a", 1)), "pending");
	ck_assert_int_eq(next_at(ACT("a", 1)), T0 + 1001);
	ck_assert_str_eq(qt("SELECT last_error FROM outbox WHERE"
	    " action_id = ?1", ACT("a", 1)), "lease expired");
	/* Only the attempt's end changed: its real result over the note. */
	sig(ACT("a", 1), after, sizeof(after));
	ck_assert_str_ne(before, after);
	ck_assert_str_eq(qt("SELECT ended_at || ' ' || http_status || ' ' ||"
	    " coalesce(error, 'none') FROM attempts WHERE action_id = ?1",
	    ACT("a", 1)), "1700000001500 200 none");
	no_lock_held();

	/* Another worker has it now: still lost, w2's lease untouched. */
	claim(ACT("a", 1), "w2", T0 + 2000, T0 + 9000, &l2);
	sig(ACT("a", 1), before, sizeof(before));
	ck_assert_int_eq(test_finish1(st, &l1, "w1",
	    STORE_OUT_DEAD, T0 + 2500, T0 + 2500, 410, "HTTP 410", &lost),
	    STORE_OK);
	ck_assert_int_eq(lost, 1);
	ck_assert_str_eq(state_of(ACT("a", 1)), "leased");
	ck_assert_str_eq(qt("SELECT lease_owner FROM outbox WHERE"
	    " action_id = ?1", ACT("a", 1)), "w2");
	ck_assert_int_eq(qi("SELECT count(*) FROM attempts WHERE"
	    " action_id = ?1 AND n = 2 AND ended_at IS NULL", ACT("a", 1)), 1);
	/* w2's own answer applies. */
	ck_assert_int_eq(test_finish1(st, &l2, "w2",
	    STORE_OUT_DELIVERED, T0 + 3000, T0 + 3000, 200, NULL, &lost),
	    STORE_OK);
	ck_assert_int_eq(lost, 0);
	ck_assert_str_eq(state_of(ACT("a", 1)), "delivered");
	store_lease_clear(&l1);
	store_lease_clear(&l2);

	/* Set aside as unknown: a late failure does not settle it... */
	accept_at("b", 1, T0);
	accept_at("b", 2, T0);
	claim(ACT("b", 1), "w1", T0, T0 + 1000, &l1);
	claim(ACT("b", 2), "w1", T0, T0 + 1000, &l2);
	ck_assert_int_eq(store_outbox_expired(st, T0 + 1001, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 2);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(store_outbox_expire(st, &rows[i],
		    STORE_OUT_UNKNOWN, T0 + 1001, T0 + 5000,
		    "lease expired: outcome unknown", &changed), STORE_OK);
		ck_assert_int_eq(changed, 1);
	}
	ck_assert_int_eq(test_finish1(st, &l2, "w1",
	    STORE_OUT_DEAD, T0 + 1500, T0 + 1500, 410, "HTTP 410", &lost),
	    STORE_OK);
	ck_assert_int_eq(lost, 1);
	ck_assert_str_eq(state_of(ACT("b", 2)), "unknown");
	ck_assert_int_eq(next_at(ACT("b", 2)), T0 + 5000);
	/* ... a late delivery does: the destination has it. */
	ck_assert_int_eq(test_finish1(st, &l1, "w1",
	    STORE_OUT_DELIVERED, T0 + 1500, T0 + 1500, 200, NULL, &lost),
	    STORE_OK);
	ck_assert_int_eq(lost, 1);
	ck_assert_str_eq(state_of(ACT("b", 1)), "delivered");
	ck_assert_str_eq(qt("SELECT last_error || ' ' || updated_at FROM"
	    " outbox WHERE action_id = ?1", ACT("b", 1)), "delivered;"
	    " recorded after the lease expired 1700000001500");
	ck_assert_str_eq(qt("SELECT ended_at || ' ' || http_status FROM"
	    " attempts WHERE action_id = ?1", ACT("b", 1)),
	    "1700000001500 200");
	store_lease_clear(&l1);
	store_lease_clear(&l2);

	/*
	 * Claimed again under the same owner name (workers built with the
	 * default owner share one): the first attempt's late answer is
	 * still lost, the second attempt's lease untouched.
	 */
	accept_at("c", 1, T0);
	claim(ACT("c", 1), "w1", T0, T0 + 1000, &l1);
	ck_assert_int_eq(store_outbox_expired(st, T0 + 1001, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(store_outbox_expire(st, &rows[0], STORE_OUT_RETRY,
	    T0 + 1001, T0 + 1001, "lease expired", &changed), STORE_OK);
	claim(ACT("c", 1), "w1", T0 + 2000, T0 + 9000, &l2);
	ck_assert_int_eq(test_finish1(st, &l1, "w1",
	    STORE_OUT_DEAD, T0 + 2500, T0 + 2500, 410, "HTTP 410", &lost),
	    STORE_OK);
	ck_assert_int_eq(lost, 1);
	ck_assert_str_eq(state_of(ACT("c", 1)), "leased");
	ck_assert_int_eq(test_finish1(st, &l2, "w1",
	    STORE_OUT_DELIVERED, T0 + 3000, T0 + 3000, 200, NULL, &lost),
	    STORE_OK);
	ck_assert_int_eq(lost, 0);
	ck_assert_str_eq(state_of(ACT("c", 1)), "delivered");
	store_lease_clear(&l1);
	store_lease_clear(&l2);
}
END_TEST

/* Fails every commit while armed. */
static int
fail_commit(enum fault_point p, void *arg)
{
	(void)p;
	(void)arg;
	return 1;
}

/*
 * A batch's claim is one transaction: each row leased until its own
 * expiry and its attempt started at the same now; a row taken meanwhile,
 * stale or picked twice is skipped.  A failed commit claims nothing.
 */
START_TEST(claim_batch)
{
	struct store_claim_row	c[5];
	char			before[SIG_MAX], after[SIG_MAX];
	int			i;

	accept_at("a", 1, T0);
	accept_at("b", 1, T0);
	accept_at("c", 1, T0);
	accept_at("c", 2, T0);
	memset(c, 0, sizeof(c));
	c[0].row = row_of(ACT("a", 1));
	c[1].row = row_of(ACT("b", 1));
	c[2].row = row_of(ACT("a", 1));		/* the same row again */
	c[3].row = row_of(ACT("c", 1));
	c[3].row.attempts = 4;			/* stale */
	c[4].row = row_of(ACT("c", 2));
	for (i = 0; i < 5; i++)
		c[i].lease_until = T0 + 1000 * (i + 1);
	ck_assert_int_eq(store_outbox_claim(st, c, 5, "w1", T0 + 10),
	    STORE_OK);
	ck_assert_int_eq(c[0].claimed, 1);
	ck_assert_int_eq(c[1].claimed, 1);
	ck_assert_int_eq(c[2].claimed, 0);
	ck_assert_ptr_null(c[2].lease.payload);
	ck_assert_int_eq(c[3].claimed, 0);
	ck_assert_ptr_null(c[3].lease.payload);
	ck_assert_int_eq(c[4].claimed, 1);
	ck_assert_str_eq(c[1].lease.action, ACT("b", 1));
	ck_assert_int_eq(c[1].lease.attempt, 1);
	ck_assert_int_eq(c[4].lease.lease_until, T0 + 5000);
	ck_assert_int_eq(qi("SELECT lease_until FROM outbox"
	    " WHERE action_id = ?1", ACT("b", 1)), T0 + 2000);
	ck_assert_str_eq(state_of(ACT("c", 1)), "pending");
	ck_assert_int_eq(attempts_of(ACT("a", 1)), 1);	/* once, not twice */
	ck_assert_str_eq(qt2("SELECT count(*) || ' ' || min(started_at) || ' '"
	    " || max(started_at) || ' ' || group_concat(owner, '') FROM"
	    " attempts", "SELECT count(*) || ' ' || min(started_at) || ' '"
	    " || max(started_at) || ' ' || string_agg(owner, '') FROM"
	    " attempts", NULL), "3 1700000000010 1700000000010 w1w1w1");
	ck_assert_int_eq(qi("SELECT id FROM attempts WHERE action_id = ?1",
	    ACT("c", 2)), c[4].lease.attempt_id);
	for (i = 0; i < 5; i++)
		store_lease_clear(&c[i].lease);
	no_lock_held();

	/* Nothing left to take: nothing written, no lock kept. */
	sig(ACT("b", 1), before, sizeof(before));
	c[0].row = row_of(ACT("b", 1));
	c[0].row.attempts = 0;
	ck_assert_int_eq(store_outbox_claim(st, c, 1, "w2", T0 + 20),
	    STORE_OK);
	ck_assert_int_eq(c[0].claimed, 0);
	sig(ACT("b", 1), after, sizeof(after));
	ck_assert_str_eq(before, after);
	no_lock_held();

	/* A commit that fails: nothing claimed, every lease clear. */
	accept_at("a", 2, T0);
	c[0].row = row_of(ACT("a", 2));
	c[1].row = row_of(ACT("c", 1));
	sig(ACT("a", 2), before, sizeof(before));
	fault_set(FAULT_BEFORE_COMMIT, fail_commit, NULL);
	ck_assert_int_eq(store_outbox_claim(st, c, 2, "w3", T0 + 30),
	    STORE_IO);
	fault_set(FAULT_BEFORE_COMMIT, NULL, NULL);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(c[i].claimed, 0);
		ck_assert_ptr_null(c[i].lease.payload);
	}
	sig(ACT("a", 2), after, sizeof(after));
	ck_assert_str_eq(before, after);
	ck_assert_str_eq(state_of(ACT("c", 1)), "pending");
	ck_assert_int_eq(qi("SELECT count(*) FROM attempts WHERE"
	    " owner = 'w3'", NULL), 0);
	no_lock_held();
	ck_assert_int_eq(store_outbox_claim(st, c, 0, "w3", T0 + 30),
	    STORE_OK);
}
END_TEST

/*
 * A batch's outcomes are one transaction, each guarded like a single
 * finish: its own end and next time, a lost lease moving nothing but a
 * delivery settling what recovery set aside.  A failed commit writes
 * nothing.
 */
/*
 * PostgreSQL: a claim of a batch costs at most three round trips (its
 * BEGIN and the circuits, locked; the leases and attempts; the COMMIT),
 * and recording it with its counts and its destination's circuit two
 * (the outcomes and the circuit, locked; its move and the COMMIT);
 * counted by the db layer.  SQLite: none.
 */
START_TEST(claim_and_record_round_trips)
{
	enum { N = 8 };
	struct store_claim_row	 c[N];
	struct store_finish	 f[N];
	struct store_finish_dest d;
	struct metrics_set	 m;
	char			 act[N][HB_ACTION_MAX + 1];
	uint64_t		 t;
	int			 i;

	memset(c, 0, sizeof(c));
	memset(f, 0, sizeof(f));
	memset(&m, 0, sizeof(m));
	for (i = 0; i < N; i++)
		accept_named("a", i + 1, T0, act[i]);
	/* The connection has its statements prepared once. */
	accept_at("b", 1, T0);
	c[0].row = row_of(ACT("b", 1));
	c[0].lease_until = T0 + 30000;
	ck_assert_int_eq(store_outbox_claim(st, c, 1, "w1", T0 + 10),
	    STORE_OK);
	f[0].lease = &c[0].lease;
	f[0].ended = T0 + 20;
	ck_assert_int_eq(store_outbox_finish(st, f, 1, "w1", &m, NULL, 0),
	    STORE_OK);
	store_lease_clear(&c[0].lease);
	for (i = 0; i < N; i++) {
		c[i].row = row_of(act[i]);
		c[i].lease_until = T0 + 30000;
	}
	t = store_round_trips(st);
	ck_assert_int_eq(store_outbox_claim(st, c, N, "w1", T0 + 10),
	    STORE_OK);
	if (test_backend == TEST_POSTGRES)
		ck_assert_uint_le(store_round_trips(st) - t, 3);
	else
		ck_assert_uint_eq(store_round_trips(st), 0);
	memset(&d, 0, sizeof(d));
	snprintf(d.tenant, sizeof(d.tenant), "%s", c[0].lease.tenant);
	snprintf(d.destination, sizeof(d.destination), "%s",
	    c[0].lease.destination);
	d.report.ok = N / 2;
	d.report.failed = N / 2;
	d.report.threshold = 1;
	d.report.cooldown_ms = 1000;
	d.report.now = T0 + 20;
	for (i = 0; i < N; i++) {
		ck_assert_msg(c[i].claimed == 1 && c[i].lease.attempt_id > 0,
		    "%d: claimed %d, attempt %lld", i, c[i].claimed,
		    (long long)c[i].lease.attempt_id);
		f[i].lease = &c[i].lease;
		f[i].ended = T0 + 20;
		f[i].next_at = T0 + 5000;
		f[i].out = i % 2 == 0 ? STORE_OUT_DELIVERED : STORE_OUT_RETRY;
		f[i].http_status = i % 2 == 0 ? 200 : 503;
		ck_assert_int_eq(metrics_set_add(&m, "deliveries", "sink",
		    i % 2 == 0 ? "delivered" : "retry", 1), 0);
	}
	t = store_round_trips(st);
	ck_assert_int_eq(store_outbox_finish(st, f, N, "w1", &m, &d, 1),
	    STORE_OK);
	if (test_backend == TEST_POSTGRES)
		ck_assert_uint_le(store_round_trips(st) - t, 2);
	/* A delivery among them: the circuit stays closed, its count 0. */
	ck_assert_int_eq(d.was, STORE_CIRCUIT_CLOSED);
	ck_assert_int_eq(d.now.state, STORE_CIRCUIT_CLOSED);
	ck_assert_int_eq(qi("SELECT failures FROM circuits WHERE"
	    " destination = ?1", d.destination), 0);
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(f[i].lost, 0);
		ck_assert_str_eq(state_of(act[i]), i % 2 == 0 ?
		    "delivered" : "pending");
		store_lease_clear(&c[i].lease);
	}
	/* And the first claim's. */
	ck_assert_int_eq(qi("SELECT count(*) FROM attempts WHERE ended_at ="
	    " ?1", "1700000000020"), N + 1);
	ck_assert_int_eq(qi("SELECT value FROM metrics WHERE name ="
	    " 'deliveries' AND l2 = ?1", "delivered"), N / 2);
	metrics_set_free(&m);
	no_lock_held();
}
END_TEST

START_TEST(finish_batch)
{
	struct store_lease	 l[4];
	struct store_finish	 f[4];
	struct store_row	 rows[4];
	char			 before[SIG_MAX], after[SIG_MAX];
	int			 i, n, changed;

	accept_at("a", 1, T0);
	accept_at("b", 1, T0);
	accept_at("c", 1, T0);
	accept_at("c", 2, T0);
	claim(ACT("a", 1), "w1", T0, T0 + 30000, &l[0]);
	claim(ACT("b", 1), "w1", T0, T0 + 30000, &l[1]);
	claim(ACT("c", 1), "w1", T0, T0 + 1000, &l[2]);
	claim(ACT("c", 2), "w1", T0, T0 + 30000, &l[3]);
	/* c1's lease ran out and recovery set it aside. */
	ck_assert_int_eq(store_outbox_expired(st, T0 + 1001, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(store_outbox_expire(st, &rows[0], STORE_OUT_UNKNOWN,
	    T0 + 1001, T0 + 9000, "lease expired: outcome unknown", &changed),
	    STORE_OK);
	ck_assert_int_eq(changed, 1);

	memset(f, 0, sizeof(f));
	for (i = 0; i < 4; i++) {
		f[i].lease = &l[i];
		f[i].ended = T0 + 1500 + i;
		f[i].next_at = f[i].ended;
		f[i].lost = -1;
	}
	f[0].out = STORE_OUT_DELIVERED;
	f[0].http_status = 204;
	f[1].out = STORE_OUT_RETRY;
	f[1].next_at = T0 + 7000;
	f[1].http_status = 503;
	f[1].error = "HTTP 503";
	f[2].out = STORE_OUT_DELIVERED;
	f[2].http_status = 200;
	f[3].out = STORE_OUT_UNKNOWN;
	f[3].next_at = T0 + 60000;
	f[3].error = "timed out (may have been received)";

	/* A commit that fails writes nothing. */
	sig(ACT("b", 1), before, sizeof(before));
	fault_set(FAULT_BEFORE_COMMIT, fail_commit, NULL);
	ck_assert_int_eq(store_outbox_finish(st, f, 4, "w1", NULL, NULL, 0),
	    STORE_IO);
	fault_set(FAULT_BEFORE_COMMIT, NULL, NULL);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(f[i].lost, 0);
	sig(ACT("b", 1), after, sizeof(after));
	ck_assert_str_eq(before, after);
	ck_assert_str_eq(state_of(ACT("a", 1)), "leased");
	ck_assert_str_eq(state_of(ACT("c", 1)), "unknown");
	no_lock_held();

	ck_assert_int_eq(store_outbox_finish(st, f, 4, "w1", NULL, NULL, 0),
	    STORE_OK);
	ck_assert_int_eq(f[0].lost, 0);
	ck_assert_int_eq(f[1].lost, 0);
	ck_assert_int_eq(f[2].lost, 1);
	ck_assert_int_eq(f[3].lost, 0);
	ck_assert_str_eq(state_of(ACT("a", 1)), "delivered");
	ck_assert_str_eq(state_of(ACT("b", 1)), "pending");
	ck_assert_int_eq(next_at(ACT("b", 1)), T0 + 7000);
	ck_assert_str_eq(state_of(ACT("c", 1)), "delivered");
	ck_assert_str_eq(state_of(ACT("c", 2)), "unknown");
	ck_assert_int_eq(next_at(ACT("c", 2)), T0 + 60000);
	/* Each attempt ended at its own time, with its own answer. */
	ck_assert_str_eq(qt2("SELECT group_concat((ended_at - 1700000000000)"
	    " || ':' || coalesce(CAST(http_status AS TEXT), '-'), ' ') FROM"
	    " (SELECT * FROM attempts ORDER BY id)",
	    "SELECT string_agg((ended_at - 1700000000000) || ':' ||"
	    " coalesce(CAST(http_status AS TEXT), '-'), ' ' ORDER BY id)"
	    " FROM attempts", NULL), "1500:204 1501:503 1502:200 1503:-");
	ck_assert_str_eq(qt("SELECT last_error FROM outbox"
	    " WHERE action_id = ?1", ACT("c", 2)),
	    "timed out (may have been received)");
	no_lock_held();

	/* Again (a retried record): every lease is gone now, nothing moves. */
	sig(ACT("a", 1), before, sizeof(before));
	ck_assert_int_eq(store_outbox_finish(st, f, 2, "w1", NULL, NULL, 0),
	    STORE_OK);
	ck_assert_int_eq(f[0].lost, 1);
	ck_assert_int_eq(f[1].lost, 1);
	sig(ACT("a", 1), after, sizeof(after));
	ck_assert_str_eq(before, after);
	ck_assert_str_eq(state_of(ACT("b", 1)), "pending");
	/* An outcome out of range is refused before anything is written. */
	f[0].out = (enum store_outcome)9;
	ck_assert_int_eq(store_outbox_finish(st, f, 1, "w1", NULL, NULL, 0),
	    STORE_ERROR);
	for (i = 0; i < 4; i++)
		store_lease_clear(&l[i]);
	no_lock_held();
}
END_TEST

/*
 * Lease expiry
 */

/* Only leases whose expiry is before now, oldest first, at most max. */
START_TEST(expired_collects_past_leases)
{
	struct store_row	 rows[4];
	struct store_lease	 l;
	int			 n, claimed;

	accept_at("a", 1, T0);
	accept_at("b", 1, T0);
	accept_at("c", 1, T0);
	accept_at("a", 2, T0);
	claim(ACT("b", 1), "w2", T0, T0 + 200, &l);
	store_lease_clear(&l);
	claim(ACT("a", 1), "w1", T0, T0 + 100, &l);
	store_lease_clear(&l);
	claim(ACT("c", 1), "w3", T0, T0 + 300, &l);
	store_lease_clear(&l);
	/* An unknown row under a status check holds a lease too: not one. */
	make_state(ACT("a", 2), STORE_UNKNOWN, T0);
	ck_assert_int_eq(store_outbox_check(st, ACT("a", 2), "checker",
	    T0 + 1000, T0 + 1050, &claimed), STORE_OK);
	ck_assert_int_eq(claimed, 1);

	ck_assert_int_eq(store_outbox_expired(st, T0 + 100, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(store_outbox_expired(st, T0 + 101, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(rows[0].action, ACT("a", 1));
	ck_assert_int_eq(store_outbox_expired(st, T0 + 100000, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(rows[0].action, ACT("a", 1));
	ck_assert_str_eq(rows[0].tenant, "a");
	ck_assert_str_eq(rows[0].destination, "sink");
	ck_assert_str_eq(rows[0].owner, "w1");
	ck_assert_int_eq(rows[0].lease_until, T0 + 100);
	ck_assert_int_eq(rows[0].attempts, 1);
	ck_assert_str_eq(rows[1].action, ACT("b", 1));
	ck_assert_str_eq(rows[1].owner, "w2");
	ck_assert_int_eq(rows[1].lease_until, T0 + 200);
	ck_assert_str_eq(rows[2].action, ACT("c", 1));
	ck_assert_str_eq(rows[2].owner, "w3");
	ck_assert_int_eq(rows[2].lease_until, T0 + 300);
	/* At most max. */
	memset(rows, 'Z', sizeof(rows));
	ck_assert_int_eq(store_outbox_expired(st, T0 + 100000, rows, 2, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(rows[1].action, ACT("b", 1));
	ck_assert_int_eq(rows[2].attempts, 0x5a5a5a5a);
	ck_assert_int_eq(store_outbox_expired(st, T0 + 100000, rows, 0, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 0);
}
END_TEST

/*
 * An expiry applies only to the lease as collected (owner and expiry)
 * and only while it is still expired at now; otherwise nothing changes.
 */
START_TEST(expire_guarded)
{
	struct store_row	 rows[4], r;
	struct store_lease	 l;
	char			 before[SIG_MAX], after[SIG_MAX];
	int			 n, changed;

	accept_at("a", 1, T0);
	claim(ACT("a", 1), "w1", T0, T0 + 100, &l);
	store_lease_clear(&l);
	ck_assert_int_eq(store_outbox_expired(st, T0 + 200, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 1);
	r = rows[0];
	sig(ACT("a", 1), before, sizeof(before));

	/* Not expired at the now given. */
	changed = -1;
	ck_assert_int_eq(store_outbox_expire(st, &r, STORE_OUT_RETRY, T0 + 100,
	    T0 + 100, "early", &changed), STORE_OK);
	ck_assert_int_eq(changed, 0);
	/* Not an outcome an expiry can have. */
	ck_assert_int_eq(store_outbox_expire(st, &r, STORE_OUT_DELIVERED,
	    T0 + 200, T0 + 200, "no", &changed), STORE_ERROR);
	ck_assert_int_eq(changed, 0);
	ck_assert_int_eq(store_outbox_expire(st, &r, (enum store_outcome)7,
	    T0 + 200, T0 + 200, "no", &changed), STORE_ERROR);
	sig(ACT("a", 1), after, sizeof(after));
	ck_assert_str_eq(before, after);

	/* Put off: the view collected before is stale. */
	ck_assert_int_eq(store_outbox_defer(st, &r, T0 + 200, T0 + 500,
	    &changed), STORE_OK);
	ck_assert_int_eq(changed, 1);
	sig(ACT("a", 1), before, sizeof(before));
	ck_assert_int_eq(store_outbox_expire(st, &r, STORE_OUT_UNKNOWN,
	    T0 + 600, T0 + 600, "stale", &changed), STORE_OK);
	ck_assert_int_eq(changed, 0);
	sig(ACT("a", 1), after, sizeof(after));
	ck_assert_str_eq(before, after);
	no_lock_held();

	/* Collected again, it is settled once; the same view twice is stale. */
	ck_assert_int_eq(store_outbox_expired(st, T0 + 600, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 1);
	r = rows[0];
	ck_assert_int_eq(r.lease_until, T0 + 500);
	ck_assert_int_eq(store_outbox_expire(st, &r, STORE_OUT_RETRY, T0 + 600,
	    T0 + 600, "lease expired", &changed), STORE_OK);
	ck_assert_int_eq(changed, 1);
	ck_assert_int_eq(store_outbox_expire(st, &r, STORE_OUT_RETRY, T0 + 600,
	    T0 + 600, "lease expired", &changed), STORE_OK);
	ck_assert_int_eq(changed, 0);

	/*
	 * Another owner's lease with the very same expiry (already lapsed):
	 * the view of w1's lease does not settle w2's.
	 */
	claim(ACT("a", 1), "w2", T0 + 600, T0 + 500, &l);
	store_lease_clear(&l);
	sig(ACT("a", 1), before, sizeof(before));
	ck_assert_int_eq(store_outbox_expire(st, &r, STORE_OUT_DEAD, T0 + 700,
	    T0 + 700, "wrong owner", &changed), STORE_OK);
	ck_assert_int_eq(changed, 0);
	sig(ACT("a", 1), after, sizeof(after));
	ck_assert_str_eq(before, after);
	ck_assert_int_eq(qi("SELECT count(*) FROM attempts WHERE"
	    " action_id = ?1 AND ended_at IS NULL", ACT("a", 1)), 1);
	/* Collected as w2's, it is. */
	ck_assert_int_eq(store_outbox_expired(st, T0 + 700, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(rows[0].owner, "w2");
	ck_assert_int_eq(store_outbox_expire(st, &rows[0], STORE_OUT_DEAD,
	    T0 + 700, T0 + 700, "lease expired", &changed), STORE_OK);
	ck_assert_int_eq(changed, 1);
	ck_assert_str_eq(state_of(ACT("a", 1)), "dead");
	no_lock_held();
}
END_TEST

/* Each outcome of an expiry, with its next_at; the open attempt closed. */
START_TEST(expire_outcomes)
{
	static const struct {
		const char		*action;
		enum store_outcome	 out;
		const char		*state;
		int64_t			 at;
	} c[] = {
		{ ACT("a", 1), STORE_OUT_RETRY, "pending", 1000 },
		{ ACT("a", 2), STORE_OUT_UNKNOWN, "unknown", 2000 },
		{ ACT("a", 3), STORE_OUT_DEAD, "dead", 3000 },
	};
	struct store_row	 rows[4], r;
	struct store_lease	 l;
	size_t			 i;
	int			 n, j, changed, found;

	for (i = 0; i < NELEM(c); i++) {
		accept_at("a", (int)i + 1, T0);
		claim(c[i].action, "w1", T0 + (int64_t)i,
		    T0 + 100 + (int64_t)i, &l);
		store_lease_clear(&l);
	}
	ck_assert_int_eq(store_outbox_expired(st, T0 + 200, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 3);
	for (i = 0; i < NELEM(c); i++) {
		/* Oldest expiry first: a1, a2, a3. */
		ck_assert_str_eq(rows[i].action, c[i].action);
		ck_assert_int_eq(store_outbox_expire(st, &rows[i], c[i].out,
		    T0 + 200, T0 + c[i].at, "expired here", &changed),
		    STORE_OK);
		ck_assert_int_eq(changed, 1);
		ck_assert_str_eq(state_of(rows[i].action), c[i].state);
		ck_assert_int_eq(next_at(rows[i].action), T0 + c[i].at);
		ck_assert_str_eq(qt("SELECT coalesce(CAST(lease_owner AS TEXT), 'none') ||"
		    " coalesce(CAST(lease_until AS TEXT), 'none') || last_error FROM outbox"
		    " WHERE action_id = ?1", rows[i].action),
		    "nonenoneexpired here");
		/* The claim counted; the attempt is closed, not a new one. */
		ck_assert_int_eq(attempts_of(rows[i].action), 1);
		ck_assert_str_eq(qt("SELECT count(*) || ' ' || max(ended_at)"
		    " || ' ' || max(error) || ' ' ||"
		    " coalesce(CAST(max(http_status) AS TEXT), 'none')"
		    " FROM attempts WHERE action_id = ?1", rows[i].action),
		    "1 1700000000200 lease expired: outcome unknown none");
	}
	ck_assert_int_eq(store_outbox_expired(st, T0 + 100000, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 0);
	/* The retry is due at its next_at, the unknown row checked at its. */
	ck_assert_int_eq(test_pick1(st, T0 + 999, "", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 0);
	ck_assert_int_eq(test_pick1(st, T0 + 1000, "", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_str_eq(r.action, ACT("a", 1));
	ck_assert_int_eq(r.attempts, 1);
	ck_assert_int_eq(store_outbox_unknown(st, T0 + 1999, rows, 4, &j),
	    STORE_OK);
	ck_assert_int_eq(j, 0);
	ck_assert_int_eq(store_outbox_unknown(st, T0 + 2000, rows, 4, &j),
	    STORE_OK);
	ck_assert_int_eq(j, 1);
	ck_assert_str_eq(rows[0].action, ACT("a", 2));
	ck_assert_str_eq(rows[0].owner, "");
	ck_assert_int_eq(rows[0].lease_until, 0);
}
END_TEST

/*
 * Defer moves the expiry as collected; the worker that holds the lease
 * may still record its outcome.
 */
START_TEST(defer_moves_expiry)
{
	struct store_row	 rows[4], r;
	struct store_lease	 l;
	char			 before[SIG_MAX], after[SIG_MAX];
	int			 n, changed, lost;

	accept_at("a", 1, T0);
	claim(ACT("a", 1), "w1", T0, T0 + 100, &l);
	ck_assert_int_eq(store_outbox_expired(st, T0 + 150, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 1);
	r = rows[0];
	ck_assert_int_eq(store_outbox_defer(st, &r, T0 + 150, T0 + 1000,
	    &changed), STORE_OK);
	ck_assert_int_eq(changed, 1);
	ck_assert_str_eq(state_of(ACT("a", 1)), "leased");
	ck_assert_str_eq(qt("SELECT lease_owner || ' ' || lease_until || ' ' ||"
	    " updated_at FROM outbox WHERE action_id = ?1", ACT("a", 1)),
	    "w1 1700000001000 1700000000150");
	ck_assert_int_eq(qi("SELECT count(*) FROM attempts WHERE"
	    " ended_at IS NULL", NULL), 1);
	ck_assert_int_eq(store_outbox_expired(st, T0 + 1000, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(store_outbox_expired(st, T0 + 1001, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(rows[0].lease_until, T0 + 1000);
	/* The old view is stale now. */
	sig(ACT("a", 1), before, sizeof(before));
	ck_assert_int_eq(store_outbox_defer(st, &r, T0 + 1001, T0 + 2000,
	    &changed), STORE_OK);
	ck_assert_int_eq(changed, 0);
	sig(ACT("a", 1), after, sizeof(after));
	ck_assert_str_eq(before, after);
	/* The worker, alive after all, records its outcome. */
	ck_assert_int_eq(test_finish1(st, &l, "w1", STORE_OUT_DELIVERED,
	    T0 + 1100, T0 + 1100, 200, NULL, &lost), STORE_OK);
	ck_assert_int_eq(lost, 0);
	ck_assert_str_eq(state_of(ACT("a", 1)), "delivered");
	/* A settled row is no lease to defer. */
	ck_assert_int_eq(store_outbox_defer(st, &rows[0], T0 + 1200, T0 + 3000,
	    &changed), STORE_OK);
	ck_assert_int_eq(changed, 0);
	store_lease_clear(&l);
}
END_TEST

/*
 * Status checks
 */

/* One check at a time: a claim holds until `until`, then lapses. */
START_TEST(check_claims_once)
{
	struct store_row	 rows[4];
	char			 before[SIG_MAX], after[SIG_MAX];
	int			 n, ok;

	accept_at("a", 1, T0);
	accept_at("b", 1, T0);
	make_state(ACT("a", 1), STORE_UNKNOWN, T0);	/* due T0 + 1000 */
	ck_assert_int_eq(next_at(ACT("a", 1)), T0 + 1000);

	/* Not due yet; and a pending row is not checked at all. */
	ck_assert_int_eq(store_outbox_check(st, ACT("a", 1), "ca", T0 + 999,
	    T0 + 4000, &ok), STORE_OK);
	ck_assert_int_eq(ok, 0);
	ck_assert_int_eq(store_outbox_check(st, ACT("b", 1), "ca", T0 + 999,
	    T0 + 4000, &ok), STORE_OK);
	ck_assert_int_eq(ok, 0);
	ck_assert_str_eq(state_of(ACT("b", 1)), "pending");
	ck_assert_int_eq(store_outbox_unknown(st, T0 + 999, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(store_outbox_unknown(st, T0 + 1000, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(rows[0].action, ACT("a", 1));
	ck_assert_int_eq(rows[0].attempts, 1);

	ck_assert_int_eq(store_outbox_check(st, ACT("a", 1), "ca", T0 + 1000,
	    T0 + 4000, &ok), STORE_OK);
	ck_assert_int_eq(ok, 1);
	ck_assert_str_eq(qt("SELECT state || ' ' || lease_owner || ' ' ||"
	    " lease_until || ' ' || next_at FROM outbox WHERE action_id = ?1",
	    ACT("a", 1)), "unknown ca 1700000004000 1700000004000");
	/* Nobody else until it lapses, and it is not listed as due. */
	ck_assert_int_eq(store_outbox_check(st, ACT("a", 1), "cb", T0 + 1001,
	    T0 + 5000, &ok), STORE_OK);
	ck_assert_int_eq(ok, 0);
	ck_assert_int_eq(store_outbox_check(st, ACT("a", 1), "cb", T0 + 3999,
	    T0 + 5000, &ok), STORE_OK);
	ck_assert_int_eq(ok, 0);
	ck_assert_int_eq(store_outbox_unknown(st, T0 + 3999, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 0);

	/* Lapsed: listed with the old claim, and another checker takes it. */
	ck_assert_int_eq(store_outbox_unknown(st, T0 + 4000, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(rows[0].owner, "ca");
	ck_assert_int_eq(rows[0].lease_until, T0 + 4000);
	ck_assert_int_eq(store_outbox_check(st, ACT("a", 1), "cb", T0 + 4000,
	    T0 + 7000, &ok), STORE_OK);
	ck_assert_int_eq(ok, 1);
	/* The first checker's late answer does not apply. */
	sig(ACT("a", 1), before, sizeof(before));
	ck_assert_int_eq(store_outbox_checked(st, ACT("a", 1), "ca", T0 + 4000,
	    STORE_CHECKED_DELIVERED, T0 + 4100, 0, "late", &ok), STORE_OK);
	ck_assert_int_eq(ok, 0);
	sig(ACT("a", 1), after, sizeof(after));
	ck_assert_str_eq(before, after);
	/* The second's does, once. */
	ck_assert_int_eq(store_outbox_checked(st, ACT("a", 1), "cb", T0 + 7000,
	    STORE_CHECKED_AGAIN, T0 + 4500, T0 + 9000, "inconclusive", &ok),
	    STORE_OK);
	ck_assert_int_eq(ok, 1);
	ck_assert_str_eq(qt("SELECT state || ' ' || coalesce(lease_owner, '-')"
	    " || ' ' || coalesce(CAST(lease_until AS TEXT), '-') || ' ' ||"
	    " next_at || ' ' ||"
	    " last_error FROM outbox WHERE action_id = ?1", ACT("a", 1)),
	    "unknown - - 1700000009000 inconclusive");
	ck_assert_int_eq(store_outbox_checked(st, ACT("a", 1), "cb", T0 + 7000,
	    STORE_CHECKED_DELIVERED, T0 + 4600, 0, "twice", &ok), STORE_OK);
	ck_assert_int_eq(ok, 0);
	ck_assert_str_eq(state_of(ACT("a", 1)), "unknown");
	no_lock_held();
}
END_TEST

/* How a check ends: the state and next_at of each answer. */
START_TEST(checked_outcomes)
{
	static const struct {
		enum store_checked	 c;
		const char		*state;
		int64_t			 next;	/* from T0 */
	} c[] = {
		{ STORE_CHECKED_DELIVERED, "delivered", 2500 },
		{ STORE_CHECKED_RESEND, "pending", 2500 },
		{ STORE_CHECKED_DEAD, "dead", 2500 },
		{ STORE_CHECKED_AGAIN, "unknown", 60000 },
	};
	struct store_row	 r;
	char			 action[HB_ACTION_MAX + 1];
	size_t			 i;
	int			 ok, found;

	for (i = 0; i < NELEM(c); i++) {
		accept_named("a", (int)i + 1, T0, action);
		make_state(action, STORE_UNKNOWN, T0);
		ck_assert_int_eq(store_outbox_check(st, action, "ca", T0 + 1000,
		    T0 + 3000, &ok), STORE_OK);
		ck_assert_int_eq(ok, 1);
		/* Another claim's expiry is not this claim. */
		ck_assert_int_eq(store_outbox_checked(st, action, "ca",
		    T0 + 3001, c[i].c, T0 + 2500, T0 + 60000, "wrong", &ok),
		    STORE_OK);
		ck_assert_int_eq(ok, 0);
		ck_assert_int_eq(store_outbox_checked(st, action, "ca",
		    T0 + 3000, c[i].c, T0 + 2500, T0 + 60000, "answered", &ok),
		    STORE_OK);
		ck_assert_int_eq(ok, 1);
		ck_assert_str_eq(state_of(action), c[i].state);
		ck_assert_int_eq(next_at(action), T0 + c[i].next);
		ck_assert_str_eq(qt("SELECT coalesce(CAST(lease_owner AS TEXT), 'none') ||"
		    " coalesce(CAST(lease_until AS TEXT), 'none') || last_error FROM outbox"
		    " WHERE action_id = ?1", action), "nonenoneanswered");
		ck_assert_int_eq(attempts_of(action), 1);
	}
	/* Resent: pending and due at once, its attempts kept. */
	ck_assert_int_eq(test_pick1(st, T0 + 2500, "", &r, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_str_eq(r.action, ACT("a", 2));
	ck_assert_int_eq(r.attempts, 1);
	/* No such answer. */
	accept_at("a", 5, T0);
	make_state(ACT("a", 5), STORE_UNKNOWN, T0);
	ck_assert_int_eq(store_outbox_check(st, ACT("a", 5), "ca", T0 + 1000,
	    T0 + 3000, &ok), STORE_OK);
	ck_assert_int_eq(ok, 1);
	ck_assert_int_eq(store_outbox_checked(st, ACT("a", 5), "ca", T0 + 3000,
	    (enum store_checked)9, T0 + 2500, 0, "no", &ok), STORE_ERROR);
	ck_assert_int_eq(ok, 0);
	ck_assert_str_eq(qt("SELECT lease_owner FROM outbox WHERE"
	    " action_id = ?1", ACT("a", 5)), "ca");
}
END_TEST

/* An operator's move ends a check under way: its answer is not applied. */
START_TEST(move_ends_check)
{
	static const enum store_move moves[] = {
		STORE_MOVE_RECHECK, STORE_MOVE_REQUEUE, STORE_MOVE_RESEND,
		STORE_MOVE_DELIVERED
	};
	static const char *const after[] = {
		"unknown", "pending", "pending", "delivered"
	};
	char			 action[HB_ACTION_MAX + 1];
	size_t			 i;
	int			 ok;

	for (i = 0; i < NELEM(moves); i++) {
		accept_named("a", (int)i + 1, T0, action);
		make_state(action, STORE_UNKNOWN, T0);
		ck_assert_int_eq(store_outbox_check(st, action, "ca", T0 + 1000,
		    T0 + 3000, &ok), STORE_OK);
		ck_assert_int_eq(ok, 1);
		ck_assert_int_eq(store_outbox_move(st, action, moves[i],
		    T0 + 1500, T0 + 8000, "operator", &ok), STORE_OK);
		ck_assert_int_eq(ok, 1);
		ck_assert_str_eq(qt("SELECT coalesce(CAST(lease_owner AS TEXT), 'none') ||"
		    " coalesce(CAST(lease_until AS TEXT), 'none') FROM outbox"
		    " WHERE action_id = ?1", action), "nonenone");
		ck_assert_int_eq(store_outbox_checked(st, action, "ca",
		    T0 + 3000, STORE_CHECKED_DEAD, T0 + 2000, 0, "stale", &ok),
		    STORE_OK);
		ck_assert_int_eq(ok, 0);
		ck_assert_str_eq(state_of(action), after[i]);
		ck_assert_str_eq(qt("SELECT last_error FROM outbox"
		    " WHERE action_id = ?1", action), "operator");
	}
	/* The recheck set the next check where the operator said. */
	ck_assert_int_eq(next_at(ACT("a", 1)), T0 + 8000);
}
END_TEST

/* A recheck moves the next check of a due, unclaimed unknown row only. */
START_TEST(recheck_due_only)
{
	char	before[SIG_MAX], after[SIG_MAX];
	int	ok;

	accept_at("a", 1, T0);
	accept_at("b", 1, T0);
	make_state(ACT("a", 1), STORE_UNKNOWN, T0);	/* due T0 + 1000 */
	sig(ACT("a", 1), before, sizeof(before));
	ck_assert_int_eq(store_outbox_recheck(st, ACT("a", 1), T0 + 999,
	    T0 + 5000, "later", &ok), STORE_OK);
	ck_assert_int_eq(ok, 0);
	ck_assert_int_eq(store_outbox_recheck(st, ACT("b", 1), T0 + 999,
	    T0 + 5000, "later", &ok), STORE_OK);
	ck_assert_int_eq(ok, 0);
	ck_assert_str_eq(state_of(ACT("b", 1)), "pending");
	sig(ACT("a", 1), after, sizeof(after));
	ck_assert_str_eq(before, after);
	ck_assert_int_eq(store_outbox_recheck(st, ACT("a", 1), T0 + 1000,
	    T0 + 5000, "waiting for an operator", &ok), STORE_OK);
	ck_assert_int_eq(ok, 1);
	ck_assert_int_eq(next_at(ACT("a", 1)), T0 + 5000);
	ck_assert_str_eq(qt("SELECT state || ' ' || last_error FROM outbox"
	    " WHERE action_id = ?1", ACT("a", 1)),
	    "unknown waiting for an operator");
	/* Claimed for a check: not until the claim lapses. */
	ck_assert_int_eq(store_outbox_check(st, ACT("a", 1), "ca", T0 + 5000,
	    T0 + 8000, &ok), STORE_OK);
	ck_assert_int_eq(ok, 1);
	ck_assert_int_eq(store_outbox_recheck(st, ACT("a", 1), T0 + 7999,
	    T0 + 20000, "again", &ok), STORE_OK);
	ck_assert_int_eq(ok, 0);
	ck_assert_int_eq(next_at(ACT("a", 1)), T0 + 8000);
}
END_TEST

/*
 * Operator moves
 */

/* Every move from every state: only the states named move, and right. */
START_TEST(moves_from_allowed_states)
{
	static const enum store_state states[] = {
		STORE_PENDING, STORE_LEASED, STORE_DELIVERED, STORE_DEAD,
		STORE_UNKNOWN
	};
	static const struct {
		enum store_move	 m;
		const char	*name;
		int		 from[5];	/* indexed like states[] */
	} moves[] = {
		{ STORE_MOVE_REQUEUE, "requeue", { 0, 0, 0, 1, 1 } },
		{ STORE_MOVE_DELIVERED, "delivered", { 0, 0, 0, 1, 1 } },
		{ STORE_MOVE_RESEND, "resend", { 0, 0, 0, 0, 1 } },
		{ STORE_MOVE_RECHECK, "recheck", { 0, 0, 0, 0, 1 } },
	};
	char		 action[HB_ACTION_MAX + 1];
	char		 before[SIG_MAX], after[SIG_MAX];
	const char	*want;
	size_t		 i, s;
	int		 n = 0, changed;
	int64_t		 now = T0 + 50000;

	for (i = 0; i < NELEM(moves); i++)
		for (s = 0; s < NELEM(states); s++) {
			n++;
			accept_named("a", n, T0, action);
			make_state(action, states[s], T0);
			sig(action, before, sizeof(before));
			changed = -1;
			ck_assert_int_eq(store_outbox_move(st, action,
			    moves[i].m, now, now + 7000, "by hand", &changed),
			    STORE_OK);
			ck_assert_msg(changed == moves[i].from[s],
			    "%s from %s: changed %d", moves[i].name,
			    store_state_name(states[s]), changed);
			sig(action, after, sizeof(after));
			if (!changed) {
				ck_assert_str_eq(before, after);
				continue;
			}
			switch (moves[i].m) {
			case STORE_MOVE_REQUEUE:
				want = "pending 0 1700000050000";
				break;
			case STORE_MOVE_RESEND:
				want = "pending 1 1700000050000";
				break;
			case STORE_MOVE_RECHECK:
				want = "unknown 1 1700000057000";
				break;
			default:
				want = NULL;
				break;
			}
			if (want != NULL)
				ck_assert_str_eq(qt("SELECT state || ' ' ||"
				    " attempts || ' ' || next_at FROM outbox"
				    " WHERE action_id = ?1", action), want);
			else
				ck_assert_str_eq(state_of(action),
				    "delivered");
			ck_assert_str_eq(qt("SELECT coalesce(CAST(lease_owner AS TEXT), 'none')"
			    " || coalesce(CAST(lease_until AS TEXT), 'none') || ' ' ||"
			    " updated_at || ' ' || last_error FROM outbox"
			    " WHERE action_id = ?1", action),
			    "nonenone 1700000050000 by hand");
			/* History stays: the attempts are not touched. */
			ck_assert_int_eq(qi("SELECT count(*) FROM attempts"
			    " WHERE action_id = ?1", action),
			    states[s] == STORE_PENDING ? 0 : 1);
		}
	ck_assert_int_le(n, JOBS);
	/* No such action, no such move. */
	ck_assert_int_eq(store_outbox_move(st, "a:none:x", STORE_MOVE_REQUEUE,
	    now, now, "x", &changed), STORE_OK);
	ck_assert_int_eq(changed, 0);
	ck_assert_int_eq(store_outbox_move(st, ACT("a", 4), (enum store_move)9,
	    now, now, "x", &changed), STORE_ERROR);
	ck_assert_int_eq(changed, 0);
	no_lock_held();
}
END_TEST

/*
 * The next wake-up
 */

START_TEST(next_due_or_expiry)
{
	struct store_lease	l;
	int64_t			in;

	in = 12345;
	ck_assert_int_eq(store_outbox_next(st, T0, &in), STORE_OK);
	ck_assert_int_eq(in, -1);
	accept_at("a", 1, T0 + 1000);
	ck_assert_int_eq(store_outbox_next(st, T0, &in), STORE_OK);
	ck_assert_int_eq(in, 1000);
	ck_assert_int_eq(store_outbox_next(st, T0 + 1000, &in), STORE_OK);
	ck_assert_int_eq(in, 0);
	/* Overdue is now, never negative. */
	ck_assert_int_eq(store_outbox_next(st, T0 + 1500, &in), STORE_OK);
	ck_assert_int_eq(in, 0);
	/* A lease: its expiry. */
	claim(ACT("a", 1), "w1", T0 + 1500, T0 + 3000, &l);
	ck_assert_int_eq(store_outbox_next(st, T0 + 2000, &in), STORE_OK);
	ck_assert_int_eq(in, 1000);
	/* The sooner of a due row and an expiry. */
	accept_at("b", 1, T0 + 2500);
	ck_assert_int_eq(store_outbox_next(st, T0 + 2000, &in), STORE_OK);
	ck_assert_int_eq(in, 500);
	accept_at("c", 1, T0 + 2100);
	ck_assert_int_eq(store_outbox_next(st, T0 + 2000, &in), STORE_OK);
	ck_assert_int_eq(in, 100);
	/* Settled rows wake nobody. */
	settle(ACT("b", 1), STORE_OUT_DEAD, T0 + 2500, T0 + 2500);
	settle(ACT("c", 1), STORE_OUT_DELIVERED, T0 + 2500, T0 + 2500);
	{
		int	lost;

		ck_assert_int_eq(test_finish1(st, &l, "w1",
		    STORE_OUT_UNKNOWN, T0 + 2600, T0 + 9000, 0, "timeout",
		    &lost), STORE_OK);
		ck_assert_int_eq(lost, 0);
	}
	store_lease_clear(&l);
	ck_assert_int_eq(store_outbox_next(st, T0 + 2600, &in), STORE_OK);
	ck_assert_int_eq(in, -1);
}
END_TEST

/*
 * Prune
 */

/* Receipts strictly before the cut go; at the cut they stay. */
START_TEST(prune_receipts_cut)
{
	struct store_pruned	p;
	const int64_t		cut = T0 + 1000;

	accept_at("a", 1, cut - 1);
	accept_at("a", 2, cut);
	accept_at("a", 3, cut + 1);
	ck_assert_int_eq(observe("a", "{\"id\":\"j1\",\"status\":"
	    "\"Completed\"}", cut - 2), HB_DUPLICATE);
	ck_assert_int_eq(test_db_int(state_path,
	    "SELECT count(*) FROM receipts"), 4);
	memset(&p, 'Z', sizeof(p));
	ck_assert_int_eq(store_prune(st, cut, 0, &p), STORE_OK);
	ck_assert_int_eq(p.receipts, 2);
	ck_assert_int_eq(p.actions, 0);
	ck_assert_int_eq(test_db_int(state_path,
	    "SELECT count(*) FROM receipts"), 2);
	ck_assert_int_eq(test_db_int(state_path,
	    "SELECT min(received_at) FROM receipts"), cut);
	/* Receipts only: every action stays. */
	ck_assert_int_eq(test_db_int(state_path,
	    "SELECT count(*) FROM accepted"), 3);
	ck_assert_int_eq(test_db_int(state_path,
	    "SELECT count(*) FROM outbox"), 3);
	ck_assert_int_eq(store_prune(st, cut, 0, &p), STORE_OK);
	ck_assert_int_eq(p.receipts, 0);
	ck_assert_int_eq(store_prune(st, cut + 2, 0, &p), STORE_OK);
	ck_assert_int_eq(p.receipts, 2);
	no_lock_held();
}
END_TEST

/*
 * Delivered actions accepted before the cut go with their attempts and
 * tombstone; one accepted at the cut stays; undelivered ones never go.
 */
START_TEST(prune_actions_cut)
{
	static const enum store_state undelivered[] = {
		STORE_PENDING, STORE_LEASED, STORE_DEAD, STORE_UNKNOWN
	};
	struct store_pruned	 p;
	char			 action[HB_ACTION_MAX + 1];
	const int64_t		 cut = T0 + 1000;
	size_t			 i;

	accept_at("a", 1, cut - 1);
	make_state(ACT("a", 1), STORE_DELIVERED, cut);
	accept_at("a", 2, cut);
	make_state(ACT("a", 2), STORE_DELIVERED, cut);
	for (i = 0; i < NELEM(undelivered); i++) {
		accept_named("b", (int)i + 1, T0, action);
		make_state(action, undelivered[i], cut);
	}
	ck_assert_int_eq(test_db_int(state_path,
	    "SELECT count(*) FROM attempts"), 5);

	memset(&p, 'Z', sizeof(p));
	ck_assert_int_eq(store_prune(st, 0, cut, &p), STORE_OK);
	ck_assert_int_eq(p.actions, 1);
	ck_assert_int_eq(p.receipts, 0);
	ck_assert_int_eq(qi("SELECT count(*) FROM outbox WHERE action_id = ?1",
	    ACT("a", 1)), 0);
	ck_assert_int_eq(qi("SELECT count(*) FROM accepted WHERE"
	    " action_id = ?1", ACT("a", 1)), 0);
	ck_assert_int_eq(qi("SELECT count(*) FROM attempts WHERE"
	    " action_id = ?1", ACT("a", 1)), 0);
	/* Accepted at the cut: kept whole. */
	ck_assert_int_eq(qi("SELECT count(*) FROM outbox WHERE action_id = ?1",
	    ACT("a", 2)), 1);
	ck_assert_int_eq(qi("SELECT count(*) FROM accepted WHERE"
	    " action_id = ?1", ACT("a", 2)), 1);
	ck_assert_int_eq(qi("SELECT count(*) FROM attempts WHERE"
	    " action_id = ?1", ACT("a", 2)), 1);
	/* Receipts are not actions. */
	ck_assert_int_eq(test_db_int(state_path,
	    "SELECT count(*) FROM receipts"), 6);

	/* However late the cut, the undelivered stay, whole. */
	ck_assert_int_eq(store_prune(st, 0, cut + 1000000000, &p), STORE_OK);
	ck_assert_int_eq(p.actions, 1);
	ck_assert_int_eq(test_db_int(state_path,
	    "SELECT count(*) FROM outbox"), 4);
	ck_assert_int_eq(test_db_int(state_path,
	    "SELECT count(*) FROM outbox WHERE action_id LIKE 'b:%'"), 4);
	ck_assert_int_eq(test_db_int(state_path,
	    "SELECT count(*) FROM accepted"), 4);
	ck_assert_int_eq(test_db_int(state_path,
	    "SELECT count(*) FROM attempts"), 3);
	ck_assert_int_eq(test_db_int(state_path, "SELECT count(*) FROM outbox"
	    " WHERE state = 'delivered'"), 0);
	ck_assert_int_eq(store_prune(st, 0, cut + 1000000000, &p), STORE_OK);
	ck_assert_int_eq(p.actions, 0);
	no_lock_held();
}
END_TEST

/*
 * Counts
 */

START_TEST(counts_by_state)
{
	struct store_counts	c;
	struct store_row	rows[4];
	size_t			i;
	int			n, ok;

	memset(&c, 'Z', sizeof(c));
	ck_assert_int_eq(store_counts(st, &c), STORE_OK);
	for (i = 0; i < STORE_STATE__N; i++)
		ck_assert_int_eq(c.outbox[i], 0);
	ck_assert_int_eq(c.conflicts_open, 0);
	ck_assert_int_eq(c.oldest_pending_ms, 0);
	ck_assert_int_eq(store_counts_age(&c, T0), 0);

	accept_at("a", 1, T0 + 1);	/* delivered */
	accept_at("a", 2, T0 + 2);	/* dead */
	accept_at("a", 3, T0 + 3);	/* unknown */
	accept_at("a", 4, T0 + 5);	/* leased: the oldest not settled */
	accept_at("a", 5, T0 + 10);	/* pending */
	accept_at("b", 1, T0 + 20);	/* pending, then a conflict */
	make_state(ACT("a", 1), STORE_DELIVERED, T0 + 100);
	make_state(ACT("a", 2), STORE_DEAD, T0 + 100);
	make_state(ACT("a", 3), STORE_UNKNOWN, T0 + 100);
	make_state(ACT("a", 4), STORE_LEASED, T0 + 100);
	ck_assert_int_eq(observe("b", "{\"id\":\"j1\",\"status\":\"Failed\"}",
	    T0 + 200), HB_CONFLICT);
	ck_assert_int_eq(store_counts(st, &c), STORE_OK);
	ck_assert_int_eq(c.outbox[STORE_PENDING], 2);
	ck_assert_int_eq(c.outbox[STORE_LEASED], 1);
	ck_assert_int_eq(c.outbox[STORE_DELIVERED], 1);
	ck_assert_int_eq(c.outbox[STORE_DEAD], 1);
	ck_assert_int_eq(c.outbox[STORE_UNKNOWN], 1);
	ck_assert_int_eq(c.conflicts_open, 1);
	ck_assert_int_eq(c.oldest_pending_ms, T0 + 5);
	/* The age in whole seconds; none before it was created. */
	ck_assert_int_eq(store_counts_age(&c, T0 + 5 + 12999), 12);
	ck_assert_int_eq(store_counts_age(&c, T0 + 5 + 1000), 1);
	ck_assert_int_eq(store_counts_age(&c, T0 + 5 + 999), 0);
	ck_assert_int_eq(store_counts_age(&c, T0 + 5), 0);
	ck_assert_int_eq(store_counts_age(&c, T0), 0);

	/* A pending row delivered: the leased one is still the oldest. */
	make_state(ACT("a", 5), STORE_DELIVERED, T0 + 300);
	ck_assert_int_eq(store_counts(st, &c), STORE_OK);
	ck_assert_int_eq(c.outbox[STORE_PENDING], 1);
	ck_assert_int_eq(c.outbox[STORE_DELIVERED], 2);
	ck_assert_int_eq(c.oldest_pending_ms, T0 + 5);
	/* The lease settled as dead: the oldest is b's row of T0 + 20. */
	ck_assert_int_eq(store_outbox_expired(st, T0 + 100000, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(store_outbox_expire(st, &rows[0], STORE_OUT_DEAD,
	    T0 + 100000, T0 + 100000, "lease expired", &ok), STORE_OK);
	ck_assert_int_eq(ok, 1);
	ck_assert_int_eq(store_outbox_move(st, ACT("a", 3),
	    STORE_MOVE_DELIVERED, T0 + 100000, 0, "by hand", &ok), STORE_OK);
	ck_assert_int_eq(ok, 1);
	ck_assert_int_eq(store_counts(st, &c), STORE_OK);
	ck_assert_int_eq(c.outbox[STORE_PENDING], 1);
	ck_assert_int_eq(c.outbox[STORE_LEASED], 0);
	ck_assert_int_eq(c.outbox[STORE_DELIVERED], 3);
	ck_assert_int_eq(c.outbox[STORE_DEAD], 2);
	ck_assert_int_eq(c.outbox[STORE_UNKNOWN], 0);
	ck_assert_int_eq(c.oldest_pending_ms, T0 + 20);
	ck_assert_int_eq(store_counts_age(&c, T0 + 20 + 60000), 60);
}
END_TEST

/* The per-destination gauges: undelivered rows only, by destination. */
START_TEST(destination_gauges)
{
	struct store_dest_gauge	g[4];
	sqlite3			*db;
	sqlite3_stmt		*q;
	int			n;

	ck_assert_int_eq(store_dest_gauges(st, g, 4, &n), STORE_OK);
	ck_assert_int_eq(n, 0);
	accept_at("a", 1, T0 + 1);	/* delivered */
	accept_at("a", 2, T0 + 2);	/* dead */
	accept_at("a", 3, T0 + 3);	/* unknown */
	accept_at("a", 4, T0 + 5);	/* leased */
	accept_at("a", 5, T0 + 10);	/* pending */
	accept_at("b", 1, T0 + 20);	/* pending, at "other" */
	make_state(ACT("a", 1), STORE_DELIVERED, T0 + 100);
	make_state(ACT("a", 2), STORE_DEAD, T0 + 100);
	make_state(ACT("a", 3), STORE_UNKNOWN, T0 + 100);
	make_state(ACT("a", 4), STORE_LEASED, T0 + 100);
	test_db_exec(state_path, "UPDATE outbox SET destination = 'other'"
	    " WHERE tenant = 'b'");
	ck_assert_int_eq(store_dest_gauges(st, g, 4, &n), STORE_OK);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(g[0].destination, "other");
	ck_assert_int_eq(g[0].n[STORE_PENDING], 1);
	ck_assert_int_eq(g[0].oldest_ms, T0 + 20);
	ck_assert_str_eq(g[1].destination, "sink");
	ck_assert_int_eq(g[1].n[STORE_PENDING], 1);
	ck_assert_int_eq(g[1].n[STORE_LEASED], 1);
	ck_assert_int_eq(g[1].n[STORE_DEAD], 1);
	ck_assert_int_eq(g[1].n[STORE_UNKNOWN], 1);
	ck_assert_int_eq(g[1].n[STORE_DELIVERED], 0);
	/* Pending or leased only: the dead and unknown rows are older. */
	ck_assert_int_eq(g[1].oldest_ms, T0 + 5);
	/* Bounded by the caller's array. */
	ck_assert_int_eq(store_dest_gauges(st, g, 1, &n), STORE_OK);
	ck_assert_int_eq(n, 1);
	/* The query reads the undelivered rows through their index. */
	if (test_backend != TEST_SQLITE)
		return;		/* the planner's choice varies with size */
	ck_assert_int_eq(sqlite3_open_v2(state_path, &db, SQLITE_OPEN_READONLY,
	    NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "EXPLAIN QUERY PLAN SELECT"
	    " destination, state, count(*), min(created_at) FROM outbox"
	    " WHERE state IN ('pending','leased','dead','unknown')"
	    " GROUP BY state, destination", -1, &q, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(q, 3),
	    "SEARCH outbox USING COVERING INDEX outbox_dest (state=?)");
	sqlite3_finalize(q);
	sqlite3_close(db);
}
END_TEST

/* The metrics table: adds in the caller's transaction, all or none. */
START_TEST(metrics_table)
{
	struct metrics_set	m, r;
	int			i;

	memset(&m, 0, sizeof(m));
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(metrics_set_add(&m, "requests", "ep", "accepted", 2),
	    0);
	ck_assert_int_eq(metrics_set_add(&m, "requests", "ep", "accepted", 3),
	    0);
	ck_assert_int_eq(metrics_set_add(&m, "polls", "", "failed", 1), 0);
	ck_assert_int_eq(metrics_set_max(&m, "heartbeat_ms", "", "", 500), 0);
	ck_assert_int_eq(m.n, 3);
	ck_assert_int_eq(store_begin(st), STORE_OK);
	store_metrics_send(st, &m);
	ck_assert_int_eq(store_commit(st), STORE_OK);
	ck_assert_int_eq(store_begin(st), STORE_OK);
	store_metrics_send(st, &m);
	ck_assert_int_eq(store_land(st, NULL), STORE_OK);
	store_rollback(st);	/* never committed: never counted */
	ck_assert_int_eq(store_metrics_beat(st, 400), STORE_OK);	/* older */
	ck_assert_int_eq(store_metrics_read(st, &r), STORE_OK);
	ck_assert_int_eq(r.n, 3);
	for (i = 0; i < r.n; i++)
		if (strcmp(r.rows[i].name, "requests") == 0)
			ck_assert_int_eq(r.rows[i].value, 5);
		else if (strcmp(r.rows[i].name, "polls") == 0)
			ck_assert_int_eq(r.rows[i].value, 1);
		else {
			ck_assert_str_eq(r.rows[i].name, "heartbeat_ms");
			ck_assert_int_eq(r.rows[i].value, 500);
		}
	ck_assert_int_eq(store_metrics_beat(st, 900), STORE_OK);
	metrics_set_clear(&r);
	ck_assert_int_eq(store_metrics_read(st, &r), STORE_OK);
	for (i = 0; i < r.n; i++)
		if (strcmp(r.rows[i].name, "heartbeat_ms") == 0)
			ck_assert_int_eq(r.rows[i].value, 900);
	/* A label too long for its field is refused, never cut. */
	ck_assert_int_eq(metrics_set_add(&m, "requests", "ep",
	    "a-result-word-longer-than-thirty-one-bytes", 1), -1);
	metrics_set_free(&m);
	metrics_set_free(&r);
}
END_TEST

/* What status_page() writes, gathered. */
struct page {
	char	*s;
	size_t	 n;
};

static void
collect(void *arg, const char *s, size_t len)
{
	struct page	*p = arg;
	char		*t;

	ck_assert_ptr_nonnull(t = realloc(p->s, p->n + len + 1));
	memcpy(t + p->n, s, len);
	p->n += len;
	t[p->n] = '\0';
	p->s = t;
}

/* Flushes m in a transaction of its own. */
static void
flush(struct metrics_set *m)
{
	ck_assert_int_eq(store_begin(st), STORE_OK);
	store_metrics_send(st, m);
	ck_assert_int_eq(store_commit(st), STORE_OK);
	metrics_set_clear(m);
}

static int
by_row(const void *a, const void *b)
{
	const struct metrics_row	*x = a, *y = b;
	int				 c;

	if ((c = strcmp(x->name, y->name)) != 0 ||
	    (c = strcmp(x->l1, y->l1)) != 0)
		return c;
	return strcmp(x->l2, y->l2);
}

/* The series named in state.db, one "name l1 l2 value" a line, sorted. */
static char *
series(void)
{
	struct metrics_set	 r;
	static char		 buf[1024];
	size_t			 o = 0;
	int			 i;

	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(store_metrics_read(st, &r), STORE_OK);
	qsort(r.rows, (size_t)r.n, sizeof(*r.rows), by_row);
	buf[0] = '\0';
	for (i = 0; i < r.n; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s %s %s %lld\n",
		    r.rows[i].name, r.rows[i].l1, r.rows[i].l2,
		    (long long)r.rows[i].value);
	metrics_set_free(&r);
	return buf;
}

/*
 * A tenant's series dropped by their labels (hookbox disorder's, once
 * it is gone), the chart's minutes kept; prune forgets the last use of
 * the secrets of an endpoint no longer configured, with its requests.
 */
START_TEST(metrics_drop_and_forget)
{
	struct metrics_set	m;
	int64_t			n;

	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(metrics_set_count(&m, "requests", "run-1",
	    "accepted", 60000), 0);
	ck_assert_int_eq(metrics_set_max(&m, "secret_used_ms", "run-1", "7",
	    900), 0);
	ck_assert_int_eq(metrics_set_count(&m, "deliveries", "run-1",
	    "retry", 60000), 0);
	ck_assert_int_eq(metrics_set_add(&m, "requests", "run-1-org",
	    "duplicate", 2), 0);
	ck_assert_int_eq(metrics_set_add(&m, "requests", "site", "accepted",
	    4), 0);
	ck_assert_int_eq(metrics_set_max(&m, "secret_used_ms", "site", "3",
	    800), 0);
	ck_assert_int_eq(metrics_set_max(&m, "secret_used_ms", "gone", "2",
	    700), 0);
	flush(&m);
	ck_assert_int_eq(store_metrics_drop(st, "[\"run-1\",\"run-1-org\"]",
	    &n), STORE_OK);
	ck_assert_int_eq(n, 4);
	ck_assert_str_eq(series(), "minute 0000000001 deliveries:retry 1\n"
	    "minute 0000000001 requests:accepted 1\n"
	    "requests site accepted 4\n"
	    "secret_used_ms gone 2 700\n"
	    "secret_used_ms site 3 800\n");
	ck_assert_int_eq(store_metrics_drop(st, "[]", &n), STORE_OK);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(store_metrics_forget(st, "[\"site\"]", "[]", &n),
	    STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(series(), "minute 0000000001 deliveries:retry 1\n"
	    "minute 0000000001 requests:accepted 1\n"
	    "requests site accepted 4\n"
	    "secret_used_ms site 3 800\n");
	metrics_set_free(&m);
}
END_TEST

/*
 * PostgreSQL: a batch's receipts whose bodies pass what a set's text
 * holds (store_put_set(): about a megabyte) take a statement each: all
 * three written, every byte of each kept, whatever it is (the text
 * carries them as hex).
 */
START_TEST(put_set_large_bodies)
{
	enum { N = 3, LEN = 700000 };
	struct store_receipt	 r[N];
	struct store_put	 w[N];
	char			*body, job[N][16];
	size_t			 i, failed;

	if (test_backend != TEST_POSTGRES)
		return;
	ck_assert(store_sets(st));
	ck_assert_ptr_nonnull(body = malloc(LEN));
	for (i = 0; i < LEN; i++)
		body[i] = (char)(i * 7 % 256);
	memset(r, 0, sizeof(r));
	memset(w, 0, sizeof(w));
	for (i = 0; i < N; i++) {
		(void)snprintf(job[i], sizeof(job[i]), "big-%zu", i);
		r[i].at = 1000;
		r[i].tenant = "acme";
		r[i].endpoint = "hook";
		r[i].source = "job";
		r[i].job_id = job[i];
		r[i].body = body;
		r[i].bodylen = LEN;
		w[i].rcpt = &r[i];
		w[i].result = "recorded";
	}
	ck_assert_int_eq(store_begin(st), STORE_OK);
	ck_assert_int_eq(store_put_set(st, w, N, &failed), STORE_OK);
	ck_assert_int_eq(store_land(st, NULL), STORE_OK);
	ck_assert_int_eq(store_commit(st), STORE_OK);
	free(body);
	ck_assert_int_eq(qi("SELECT count(*) FROM receipts WHERE job_id LIKE"
	    " 'big-%' AND length(body) = 700000 AND get_byte(body, 0) = 0"
	    " AND get_byte(body, 255) = 249 AND get_byte(body, 699999) ="
	    " 699999 * 7 % 256", NULL), N);
}
END_TEST

/* Adds 1 to requests{ep, each of labels} in a set, in that order. */
static void
counts_of(struct metrics_set *m, const char *const *labels, int n)
{
	int	i;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < n; i++)
		ck_assert_int_eq(metrics_set_add(m, "requests", "ep", labels[i],
		    1), 0);
}

/*
 * PostgreSQL: two writers count the same rows in two orders (each host
 * counts its labels as its requests come).  Their rows' locks are taken
 * in one order, the key's, whatever the order counted: the second waits
 * for the first's COMMIT, and neither is ended as a deadlock (which the
 * server finds only after deadlock_timeout, a second by default).
 */
START_TEST(metrics_two_writers)
{
	static const char *const	 ab[] = { "a", "b" }, *const ba[] = {
					    "b", "a" }, *const b[] = { "b" };
	struct metrics_set		 m;
	struct store			*other;
	pid_t				 pid;
	int				 status, i;

	if (test_backend != TEST_POSTGRES)
		return;
	counts_of(&m, ab, 2);		/* both rows there */
	flush(&m);
	metrics_set_free(&m);
	other = test_store_open(dir, 10000, 0);
	/* Holds a's lock. */
	counts_of(&m, ab, 1);
	ck_assert_int_eq(store_begin(other), STORE_OK);
	store_metrics_send(other, &m);
	ck_assert_int_eq(store_land(other, NULL), STORE_OK);
	metrics_set_free(&m);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		struct store	*s = test_store_open(dir, 10000, 0);

		/* Counted b first: waits for a, holding neither. */
		counts_of(&m, ba, 2);
		if (store_begin(s) != STORE_OK)
			_exit(10);
		store_metrics_send(s, &m);
		if (store_land(s, NULL) != STORE_OK)
			_exit(11);
		_exit(store_commit(s) == STORE_OK ? 0 : 12);
	}
	usleep(300 * 1000);	/* the child waits for a's lock */
	counts_of(&m, b, 1);
	store_metrics_send(other, &m);
	ck_assert_int_eq(store_land(other, NULL), STORE_OK);
	ck_assert_int_eq(store_commit(other), STORE_OK);
	metrics_set_free(&m);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	store_close(other);
	ck_assert_int_eq(store_metrics_read(st, &m), STORE_OK);
	for (i = 0; i < m.n; i++)
		if (strcmp(m.rows[i].name, "requests") == 0)
			ck_assert_int_eq(m.rows[i].value, 3);
	metrics_set_free(&m);
}
END_TEST

/*
 * On PostgreSQL a batch's look-ups read each key's row through its
 * table's key, whatever the table's size: joined to the key set (which
 * the planner takes for 100 rows), a table of some thousands of rows was
 * hashed over a scan of the whole table, once a batch.  And they find
 * what they did.
 */
START_TEST(look_by_key)
{
	static const struct {
		enum store_q	 q;
		const char	*keys, *table;
	} looks[] = {
		{ STORE_Q_LOOK_RECEIPTS, "[[\"ep\",\"d-5\"]]", "receipts" },
		{ STORE_Q_LOOK_JOBS, "[[\"t\",\"job-5\"]]", "job_state" },
		{ STORE_Q_LOOK_SUBJECTS, "[[\"t\",\"ns/s-5\"]]", "subjects" },
		{ STORE_Q_LOOK_ACTIONS, "[\"t:a5:s\"]", "accepted" },
	};
	struct store_look	look[2];
	char			plan[4096], seq[64], idx[64];
	size_t			i;

	if (test_backend != TEST_POSTGRES)
		return;
	test_db_exec(state_path,
	    "INSERT INTO accepted SELECT 't:a' || i || ':s', 't', 'a' || i,"
	    " 's', 'job-' || i, 1 FROM generate_series(1, 12000) i;"
	    "INSERT INTO job_state SELECT 't', 'job-' || i, 1, 'none', NULL,"
	    " NULL, NULL, 1 FROM generate_series(1, 12000) i;"
	    "INSERT INTO receipts(received_at, tenant, endpoint, source,"
	    " delivery_id, result) SELECT 1, 't', 'ep', 'callback', 'd-' || i,"
	    " 'accepted' FROM generate_series(1, 12000) i;"
	    "INSERT INTO subjects SELECT 't', 'ns/s-' || i, 7, 1, 'do', 's',"
	    " 'x', 1 FROM generate_series(1, 12000) i");
	for (i = 0; i < sizeof(looks) / sizeof(looks[0]); i++) {
		test_pg_plan(state_path, store_text[looks[i].q].pg,
		    looks[i].keys, plan, sizeof(plan));
		(void)snprintf(seq, sizeof(seq), "Seq Scan on %s",
		    looks[i].table);
		(void)snprintf(idx, sizeof(idx), "Index Scan using %s_",
		    looks[i].table);
		ck_assert_msg(strstr(plan, seq) == NULL &&
		    strstr(plan, "Hash") == NULL, "%s", plan);
		ck_assert_msg(strstr(plan, idx) != NULL, "%s", plan);
	}
	memset(look, 0, sizeof(look));
	look[0].endpoint = "ep";
	look[0].delivery_id = "d-5";
	look[0].tenant = "t";
	look[0].job_id = "job-5";
	look[0].subject = "ns/s-5";
	look[0].action = "t:a5:s";
	look[1] = look[0];
	look[1].delivery_id = "d-none";
	look[1].job_id = "job-none";
	look[1].subject = "ns/none";
	look[1].action = "t:none:s";
	ck_assert_int_eq(store_begin(st), STORE_OK);
	ck_assert_int_eq(store_look_batch(st, look, 2), STORE_OK);
	store_rollback(st);
	ck_assert_int_eq(look[0].found.seen, 1);
	ck_assert_int_eq(look[0].found.job.stage, 1);
	ck_assert_int_eq(look[0].found.subject.version, 7);
	ck_assert_int_eq(look[0].found.claimed, 1);
	ck_assert_str_eq(look[0].found.owner, "job-5");
	ck_assert_int_eq(look[1].found.seen + look[1].found.claimed +
	    look[1].found.subject.seen, 0);
	ck_assert_int_eq(look[1].found.job.stage, OBS_STAGE_QUEUED);
}
END_TEST

/* A file SQLite made for its own use ("etilqs_", deleted once open). */
static int
sqlite_temp(const char *fd, const char *target, void *arg)
{
	(void)fd;
	(void)arg;
	return strstr(target, "etilqs_") != NULL;
}

/*
 * Non-zero while this process holds a file SQLite made for its own use:
 * a savepoint's journal spilled to disk.
 */
static int
holds_temp_file(void)
{
	return test_each_fd(sqlite_temp, NULL);
}

/*
 * A batch's savepoint changes pages that were there before it, and keeps
 * each one's original to roll back to: past 64 KiB SQLite writes them to
 * a temporary file, two writes a page, unless the store keeps them in
 * memory.  Both ways roll back alike.
 */
START_TEST(savepoint_journal_in_memory)
{
	static struct obs	 o;
	struct store_opts	 opts;
	struct store_job	 job;
	struct store		*w;
	char			 id[32];
	int			 mem, i;

	if (test_backend != TEST_SQLITE)
		return;
	job.stage = OBS_STAGE_COMPLETED;
	job.terminal = OBS_ST_COMPLETED;
	test_db_exec(state_path, "WITH RECURSIVE n(i) AS (SELECT 1"
	    " UNION ALL SELECT i + 1 FROM n WHERE i < 4000)"
	    " INSERT INTO job_state SELECT 't', 'job-' || i, 1, 'none',"
	    " NULL, NULL, NULL, 1 FROM n");
	for (mem = 0; mem < 2; mem++) {
		memset(&opts, 0, sizeof(opts));
		opts.busy_ms = 1000;
		opts.journal_in_memory = mem;
		ck_assert_int_eq(store_open(state_path, &opts, &w), STORE_OK);
		ck_assert_int_eq(store_begin(w), STORE_OK);
		ck_assert_int_eq(store_savepoint(w), STORE_OK);
		/* One row in forty: a hundred pages, 400 KiB. */
		for (i = 1; i <= 4000; i += 40) {
			(void)snprintf(id, sizeof(id), "job-%d", i);
			ck_assert_int_eq(store_job_put(w, "t", id, &job, &o, 2),
			    STORE_OK);
		}
		ck_assert_int_eq(holds_temp_file(), !mem);
		ck_assert_int_eq(store_rollback_to(w), STORE_OK);
		ck_assert_int_eq(store_commit(w), STORE_OK);
		store_close(w);
		ck_assert_int_eq(holds_temp_file(), 0);
	}
	ck_assert_int_eq(qi("SELECT count(*) FROM job_state"
	    " WHERE tenant = 't' AND stage = 1", NULL), 4000);
}
END_TEST

/*
 * What the status page shows: the minutes ride the flush and go once
 * past the window (the operator's routes have none); each destination's
 * latest error and delivery; the dead rows; the same in JSON.
 */
START_TEST(status_view)
{
	const int64_t		 now = 1800000000000LL;
	struct metrics_set	 m;
	struct status_view	 v;
	struct status_hour	 h;
	struct page		 page;
	char			 a1[HB_ACTION_MAX + 1], a2[HB_ACTION_MAX + 1];
	char			 a3[HB_ACTION_MAX + 1], dest[HB_ID_MAX + 1];
	cJSON			*doc;
	char			*js;

	accept_named("a", 1, now - 5000, a1);
	accept_named("a", 2, now - 5000, a2);
	accept_named("a", 3, now - 5000, a3);
	make_state(a1, STORE_DEAD, now - 4000);
	make_state(a2, STORE_UNKNOWN, now - 3000);
	make_state(a3, STORE_DELIVERED, now - 2000);
	ck_assert_int_lt(snprintf(dest, sizeof(dest), "%s", qt("SELECT"
	    " destination FROM outbox WHERE action_id = ?1", a1)),
	    (int)sizeof(dest));

	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(metrics_set_count(&m, "requests", "ep", "accepted",
	    now - 2 * 3600 * 1000), 0);
	flush(&m);
	ck_assert_int_eq(qi("SELECT count(*) FROM metrics WHERE name ="
	    " 'minute'", NULL), 1);
	ck_assert_int_eq(metrics_set_count(&m, "requests", "ep", "accepted",
	    now), 0);
	ck_assert_int_eq(metrics_set_count(&m, "requests", "ep", "accepted",
	    now - 60000), 0);
	ck_assert_int_eq(metrics_set_count(&m, "requests", "_status", "ok",
	    now), 0);
	ck_assert_int_eq(metrics_set_count(&m, "deliveries", dest,
	    "delivered", now - 2000), 0);
	ck_assert_int_eq(metrics_set_max(&m, "delivered_ms", dest, "",
	    now - 2000), 0);
	flush(&m);
	/* The two-hour-old minute is gone; the last two minutes stay. */
	ck_assert_int_eq(qi("SELECT count(*) FROM metrics WHERE name ="
	    " 'minute'", NULL), 3);
	ck_assert_int_eq(qi("SELECT count(*) FROM metrics WHERE name ="
	    " 'minute' AND l2 LIKE '%ok'", NULL), 0);

	ck_assert_int_eq(status_read(st, NULL, now, &v), STORE_OK);
	ck_assert_int_eq(v.counts.outbox[STORE_DEAD], 1);
	ck_assert_int_eq(v.counts.outbox[STORE_UNKNOWN], 1);
	ck_assert_int_eq(v.counts.outbox[STORE_DELIVERED], 1);
	ck_assert_int_eq(v.ndests, 1);
	ck_assert_str_eq(v.dests[0].g.destination, dest);
	ck_assert_int_eq(v.dests[0].g.n[STORE_DEAD], 1);
	ck_assert_int_eq(v.dests[0].g.n[STORE_UNKNOWN], 1);
	/* The latest error of the undelivered rows: the unknown one's. */
	ck_assert_int_eq(v.dests[0].g.error_ms, now - 3000);
	ck_assert_str_eq(v.dests[0].g.error, "settled");
	ck_assert_int_eq(v.dests[0].delivered_ms, now - 2000);
	ck_assert_int_eq(cJSON_GetArraySize(v.dead), 1);
	status_hour(&v, "requests", &h);
	ck_assert_int_eq(h.nwords, 1);
	ck_assert_str_eq(h.words[0], "accepted");
	ck_assert_int_eq(h.total[0], 2);
	ck_assert_int_eq(h.counts[METRICS_MINUTES - 1][0], 1);
	ck_assert_int_eq(h.counts[METRICS_MINUTES - 2][0], 1);
	status_hour(&v, "deliveries", &h);
	ck_assert_int_eq(h.nwords, 1);
	ck_assert_int_eq(h.total[0], 1);

	ck_assert_ptr_nonnull(doc = status_json(&v));
	ck_assert_ptr_nonnull(js = cJSON_PrintUnformatted(doc));
	ck_assert_msg(strstr(js, "\"last_hour\":{\"requests\":{\"accepted\":2},"
	    "\"deliveries\":{\"delivered\":1}}") != NULL, "%s", js);
	ck_assert_msg(strstr(js, "\"backlog\":0,\"oldest_pending_age_s\":0,"
	    "\"last_delivery_at\":1799999998,\"last_error_at\":1799999997,"
	    "\"last_error\":\"settled\"}") != NULL, "%s", js);
	cJSON_free(js);
	cJSON_Delete(doc);

	/*
	 * The page (tests/e2e/page.sh loads it in a browser): its figures
	 * by id, and a name and an error holding markup as text.
	 */
	memset(&page, 0, sizeof(page));
	memcpy(v.dests[0].g.destination, "<b>d</b>", sizeof("<b>d</b>"));
	memcpy(v.dests[0].g.error, "<script>x('\"&')</script>",
	    sizeof("<script>x('\"&')</script>"));
	status_page(&v, "disk <full>", collect, &page);
	ck_assert_ptr_nonnull(page.s);
	ck_assert_ptr_nonnull(strstr(page.s, "<td id=\"outbox-dead\">1</td>"));
	ck_assert_ptr_nonnull(strstr(page.s,
	    "<span id=\"requests-accepted\">2</span>"));
	ck_assert_ptr_nonnull(strstr(page.s,
	    "<span id=\"deliveries-delivered\">1</span>"));
	ck_assert_ptr_nonnull(strstr(page.s, ">&lt;b&gt;d&lt;/b&gt;</td>"));
	ck_assert_ptr_nonnull(strstr(page.s,
	    "&lt;script&gt;x(&#39;&quot;&amp;&#39;)&lt;/script&gt;"));
	ck_assert_ptr_nonnull(strstr(page.s, "unavailable</span>: disk"
	    " &lt;full&gt;"));
	ck_assert_ptr_null(strstr(page.s, "<b>"));
	ck_assert_ptr_null(strstr(page.s, "<script"));
	ck_assert_ptr_nonnull(strstr(status_page_csp(),
	    "default-src 'none'; style-src 'sha256-"));
	free(page.s);
	status_view_free(&v);
	metrics_set_free(&m);
}
END_TEST

/* The one vocabulary of states, and its negative cases. */
START_TEST(state_names)
{
	enum store_state	s;
	int			i;

	for (i = 0; i < STORE_STATE__N; i++) {
		ck_assert_ptr_nonnull(store_state_name((enum store_state)i));
		ck_assert_int_eq(store_state_parse(store_state_name(
		    (enum store_state)i), &s), 0);
		ck_assert_int_eq(s, i);
	}
	ck_assert_str_eq(store_state_name(STORE_UNKNOWN), "unknown");
	ck_assert_ptr_null(store_state_name(STORE_STATE__N));
	ck_assert_ptr_null(store_state_name((enum store_state)-1));
	s = STORE_DEAD;
	ck_assert_int_eq(store_state_parse("Pending", &s), -1);
	ck_assert_int_eq(store_state_parse("", &s), -1);
	ck_assert_int_eq(store_state_parse(NULL, &s), -1);
	ck_assert_int_eq(s, STORE_DEAD);
}
END_TEST

START_TEST(receipt_counts_by_result)
{
	struct store_receipts	r;
	size_t			i;

	memset(&r, 'Z', sizeof(r));
	ck_assert_int_eq(store_receipt_counts(st, &r), STORE_OK);
	for (i = 0; i < HB_RESULT__N; i++)
		ck_assert_int_eq(r.n[i], 0);

	accept_at("a", 1, T0);
	accept_at("a", 2, T0);
	ck_assert_int_eq(observe("a", "{\"id\":\"j1\",\"status\":"
	    "\"Completed\"}", T0 + 1), HB_DUPLICATE);
	ck_assert_int_eq(observe("a", "{\"id\":\"j1\",\"status\":\"Failed\"}",
	    T0 + 2), HB_CONFLICT);
	ck_assert_int_eq(observe("a", "{\"id\":\"j3\",\"status\":\"Failed\"}",
	    T0 + 3), HB_RECORDED);
	/* Refused before anything is written: no receipt. */
	ck_assert_int_eq(observe("a", "{\"id\":\"nope\",\"status\":"
	    "\"Completed\"}", T0 + 4), HB_UNKNOWN_JOB);
	ck_assert_int_eq(store_receipt_counts(st, &r), STORE_OK);
	ck_assert_int_eq(r.n[HB_ACCEPTED], 2);
	ck_assert_int_eq(r.n[HB_DUPLICATE], 1);
	ck_assert_int_eq(r.n[HB_CONFLICT], 1);
	ck_assert_int_eq(r.n[HB_RECORDED], 1);
	ck_assert_int_eq(r.n[HB_UNKNOWN_JOB], 0);
	ck_assert_int_eq(r.n[HB_STALE], 0);

	/*
	 * A result word that names no result (the store writes only
	 * names, so only another writer leaves one: set here through the
	 * test's own connection) is not counted under any.
	 */
	test_db_exec(state_path, "UPDATE receipts SET result = 'bogus'"
	    " WHERE id = (SELECT min(id) FROM receipts)");
	ck_assert_int_eq(store_receipt_counts(st, &r), STORE_OK);
	ck_assert_int_eq(r.n[HB_ACCEPTED], 1);
	ck_assert_int_eq(r.n[HB_DUPLICATE] + r.n[HB_CONFLICT] +
	    r.n[HB_RECORDED], 3);
}
END_TEST

/*
 * Read-outs with filters, unknown rows, jobs that ended
 */

/* The number of rows in a read-out; frees it. */
static int
rows_of(enum store_status rc, struct cJSON *arr)
{
	int	n;

	ck_assert_int_eq(rc, STORE_OK);
	ck_assert(cJSON_IsArray(arr));
	n = cJSON_GetArraySize(arr);
	cJSON_Delete(arr);
	return n;
}

/* The rows a read-out call puts in arr (the call runs first). */
#define ROWS(call)	(src = (call), rows_of(src, arr))

/*
 * An action's attempts are numbered 1, 2, 3 across a requeue, while the
 * outbox's count, which the backoff and max_attempts go by, starts again.
 */
START_TEST(requeue_numbers_go_on)
{
	struct store_lease	l;
	int			changed;

	accept_at("a", 1, T0);
	settle(ACT("a", 1), STORE_OUT_RETRY, T0 + 10, T0 + 10);
	settle(ACT("a", 1), STORE_OUT_DEAD, T0 + 20, T0 + 20);
	ck_assert_int_eq(store_outbox_move(st, ACT("a", 1), STORE_MOVE_REQUEUE,
	    T0 + 30, 0, "requeue", &changed), STORE_OK);
	ck_assert_int_eq(changed, 1);
	ck_assert_int_eq(attempts_of(ACT("a", 1)), 0);
	/* The lease says the count; the attempt's row, its number. */
	claim(ACT("a", 1), "w1", T0 + 40, T0 + 30040, &l);
	ck_assert_int_eq(l.attempt, 1);
	ck_assert_int_eq(l.n, 3);
	store_lease_clear(&l);
	ck_assert_int_eq(attempts_of(ACT("a", 1)), 1);
	ck_assert_str_eq(qt2("SELECT group_concat(n, ',') FROM"
	    " (SELECT n FROM attempts WHERE action_id = ?1 ORDER BY id)",
	    "SELECT string_agg(n::text, ',' ORDER BY id) FROM attempts"
	    " WHERE action_id = ?1", ACT("a", 1)), "1,2,3");
	/* Another action's numbers are its own. */
	accept_at("b", 1, T0);
	settle(ACT("b", 1), STORE_OUT_RETRY, T0 + 50, T0 + 50);
	ck_assert_str_eq(qt("SELECT CAST(max(n) AS TEXT) FROM attempts"
	    " WHERE action_id = ?1", ACT("b", 1)), "1");
	no_lock_held();
}
END_TEST

START_TEST(list_filters)
{
	struct store_list_filter	 f;
	struct cJSON			*arr = NULL;
	enum store_status		 src;

	accept_at("a", 1, T0);
	accept_at("a", 2, T0 + 10);
	accept_at("b", 1, T0 + 20);
	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(ROWS(store_outbox_list(st, STORE_PENDING,
	    NULL, &arr)), 3);
	f.tenant = "a";
	ck_assert_int_eq(ROWS(store_outbox_list(st, STORE_PENDING,
	    &f, &arr)), 2);
	f.tenant = NULL;
	f.since = T0 + 10;
	ck_assert_int_eq(ROWS(store_outbox_list(st, STORE_PENDING,
	    &f, &arr)), 2);
	f.since = 0;
	f.limit = 1;
	ck_assert_int_eq(ROWS(store_outbox_list(st, STORE_PENDING,
	    &f, &arr)), 1);
	f.limit = 0;
	f.destination = "sink";
	ck_assert_int_eq(ROWS(store_outbox_list(st, STORE_PENDING,
	    &f, &arr)), 3);
	f.destination = "nosuch";
	ck_assert_int_eq(ROWS(store_outbox_list(st, STORE_PENDING,
	    &f, &arr)), 0);

	/* Attempts: since and limit. */
	make_state(ACT("a", 1), STORE_DEAD, T0 + 100);
	/* STORE_STATE__N: every state, filters kept. */
	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(ROWS(store_outbox_list(st, STORE_PENDING,
	    &f, &arr)), 2);
	ck_assert_int_eq(ROWS(store_outbox_list(st, STORE_STATE__N,
	    &f, &arr)), 3);
	f.tenant = "a";
	ck_assert_int_eq(ROWS(store_outbox_list(st, STORE_STATE__N,
	    &f, &arr)), 2);
	f.tenant = NULL;
	f.destination = "nosuch";
	ck_assert_int_eq(ROWS(store_outbox_list(st, STORE_STATE__N,
	    &f, &arr)), 0);
	f.destination = NULL;
	f.limit = 1;
	ck_assert_int_eq(ROWS(store_outbox_list(st, STORE_STATE__N,
	    &f, &arr)), 1);
	ck_assert_int_eq(store_outbox_list(st, STORE_STATE__N + 1, &f,
	    &arr), STORE_ERROR);
	memset(&f, 0, sizeof(f));
	ck_assert_int_ge(ROWS(store_attempts_list(st, ACT("a", 1),
	    &f, &arr)), 1);
	f.limit = 1;
	ck_assert_int_eq(ROWS(store_attempts_list(st, ACT("a", 1),
	    &f, &arr)), 1);
	f.limit = 0;
	f.since = T0 + 1000000000;
	ck_assert_int_eq(ROWS(store_attempts_list(st, ACT("a", 1),
	    &f, &arr)), 0);

	/* Conflicts: a failure after a completion, for tenant a. */
	ck_assert_int_eq(observe("a", "{\"id\":\"j2\",\"status\":\"Failed\"}",
	    T0 + 200), HB_CONFLICT);
	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(ROWS(store_conflicts_list(st, 0, &f, &arr)), 1);
	f.tenant = "b";
	ck_assert_int_eq(ROWS(store_conflicts_list(st, 0, &f, &arr)), 0);
	f.tenant = "a";
	f.since = T0 + 201;
	ck_assert_int_eq(ROWS(store_conflicts_list(st, 1, &f, &arr)), 0);
	/* No filter (NULL) shows all. */
	ck_assert_int_eq(ROWS(store_conflicts_list(st, 0, NULL, &arr)), 1);
	ck_assert_int_eq(ROWS(store_outbox_list(st, STORE_PENDING, NULL,
	    &arr)), 2);
	no_lock_held();
}
END_TEST

START_TEST(unknown_rows)
{
	enum store_state	 state = STORE_DELIVERED;
	int64_t			 id;
	int			 found = -1, resolved = -1, changed;

	accept_at("a", 1, T0);
	ck_assert_int_eq(store_action_state(st, ACT("a", 1), &state, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_int_eq(state, STORE_PENDING);
	ck_assert_int_eq(store_action_state(st, "a:att-9:nosuch", &state,
	    &found), STORE_OK);
	ck_assert_int_eq(found, 0);

	ck_assert_int_eq(store_conflict_state(st, 1, &found, &resolved),
	    STORE_OK);
	ck_assert_int_eq(found, 0);
	ck_assert_int_eq(observe("a", "{\"id\":\"j1\",\"status\":\"Failed\"}",
	    T0 + 1), HB_CONFLICT);
	id = qi("SELECT max(id) FROM conflicts", NULL);
	ck_assert_int_eq(store_conflict_state(st, id, &found, &resolved),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_int_eq(resolved, 0);
	ck_assert_int_eq(store_conflict_resolve(st, id, "n", T0 + 2, &changed),
	    STORE_OK);
	ck_assert_int_eq(store_conflict_state(st, id, &found, &resolved),
	    STORE_OK);
	ck_assert_int_eq(resolved, 1);
	no_lock_held();
}
END_TEST

START_TEST(jobs_ended_forget)
{
	struct store_job_ref	refs[4];
	int64_t			jobs = 0, polls = 0;
	int			n = -1;

	accept_at("a", 1, T0);		/* j1 completed at T0 */
	accept_at("b", 2, T0 + 10);
	ck_assert_int_eq(store_poll_mark(st, "a", "j1", T0), STORE_OK);
	ck_assert_int_eq(store_poll_mark(st, "b", "j2", T0), STORE_OK);
	ck_assert_int_eq(store_jobs_ended(st, T0, refs, 4, &n), STORE_OK);
	ck_assert_int_eq(n, 0);		/* strictly before */
	ck_assert_int_eq(store_jobs_ended(st, T0 + 1, refs, 4, &n), STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(refs[0].tenant, "a");
	ck_assert_str_eq(refs[0].job_id, "j1");
	ck_assert_int_eq(store_jobs_ended(st, T0 + 11, refs, 1, &n), STORE_OK);
	ck_assert_int_eq(n, 1);		/* at most max */

	/* Guarded: with an earlier cut than read, nothing goes. */
	ck_assert_int_eq(store_jobs_ended(st, T0 + 1, refs, 4, &n), STORE_OK);
	ck_assert_int_eq(store_jobs_forget(st, refs, n, T0, &jobs, &polls),
	    STORE_OK);
	ck_assert_int_eq(jobs, 0);
	ck_assert_int_eq(polls, 0);
	ck_assert_int_eq(store_jobs_forget(st, refs, n, T0 + 1, &jobs, &polls),
	    STORE_OK);
	ck_assert_int_eq(jobs, 1);
	ck_assert_int_eq(polls, 1);
	ck_assert_int_eq(qi("SELECT count(*) FROM job_state WHERE tenant = ?1",
	    "a"), 0);
	ck_assert_int_eq(qi("SELECT count(*) FROM polls WHERE tenant = ?1",
	    "a"), 0);
	/* The other job, not ended before the cut, stays with its mark. */
	ck_assert_int_eq(qi("SELECT count(*) FROM job_state WHERE tenant = ?1",
	    "b"), 1);
	ck_assert_int_eq(qi("SELECT count(*) FROM polls WHERE tenant = ?1",
	    "b"), 1);
	ck_assert_int_eq(store_jobs_ended(st, T0 + 1, refs, 4, &n), STORE_OK);
	ck_assert_int_eq(n, 0);
	no_lock_held();
}
END_TEST

/*
 * state.db, every migration run, and schema hookbox_state have the same
 * tables, column for column (type, NOT NULL), with the same keys and
 * indexes: a fresh file beside the test's PostgreSQL database.
 */
START_TEST(schema_agrees)
{
	struct store_opts	 opts;
	struct store		*s;
	char			 path[PATH_MAX];

	if (test_backend != TEST_POSTGRES)
		return;
	test_path(path, sizeof(path), dir, "state.db");
	memset(&opts, 0, sizeof(opts));
	opts.busy_ms = TEST_BUSY_MS;
	opts.create = 1;
	ck_assert_int_eq(store_open(path, &opts, &s), STORE_OK);
	store_close(s);
	test_schema_agree(path, state_path, "hookbox_state", 10);
}
END_TEST

/* A state from before the circuits (migration 6 -> 7, or 3 -> 4). */
#define UNMAKE_7_LITE "DROP TABLE circuits;" \
	"ALTER TABLE outbox DROP COLUMN horizon_from;" \
	"ALTER TABLE outbox DROP COLUMN held_ms;"
#define UNMAKE_7_PG "DROP TABLE hookbox_state.circuits;" \
	"ALTER TABLE hookbox_state.outbox DROP COLUMN horizon_from," \
	" DROP COLUMN held_ms;"

/* The state's schema is this release's: user_version 7, or version 4. */
static void
assert_state_current(void)
{
	ck_assert_int_eq(test_db_int(state_path, test_backend == TEST_SQLITE ?
	    "PRAGMA user_version" : "SELECT version FROM"
	    " hookbox_state.schema_version"), test_backend == TEST_SQLITE ?
	    7 : 4);
}

/*
 * A state made by the previous release (SQLite user_version 4, schema
 * hookbox_state version 1), with a conflict in it: opened by this one,
 * it is migrated (on PostgreSQL only by the owner, `init`: a serving
 * open says so), the conflict kept, and a version conflict, a subject
 * and a receipt's version can be written.  On PostgreSQL the new table's
 * grants go to the serving role the previous release was granted for.
 */
START_TEST(migrate_previous_release)
{
	struct store_opts	 o = { .busy_ms = TEST_BUSY_MS };
	struct store		*s = NULL;
	char			 role[32], sql[1024];

	store_close(st);
	st = NULL;
	if (test_backend == TEST_SQLITE)
		test_db_exec(state_path, "DROP TABLE subjects;" UNMAKE_7_LITE
		    "ALTER TABLE receipts DROP COLUMN version;"
		    "ALTER TABLE receipts DROP COLUMN occurred_at;"
		    "CREATE TABLE c4(id INTEGER PRIMARY KEY,"
		    " created_at INTEGER NOT NULL, tenant TEXT NOT NULL,"
		    " job_id TEXT NOT NULL, action_id TEXT, kind TEXT NOT NULL"
		    " CHECK(kind IN ('terminal','action')),"
		    " recorded TEXT NOT NULL, observed TEXT NOT NULL,"
		    " seen INTEGER NOT NULL DEFAULT 1, resolved_at INTEGER,"
		    " resolution TEXT);"
		    "DROP TABLE conflicts; ALTER TABLE c4 RENAME TO conflicts;"
		    "CREATE UNIQUE INDEX conflicts_open ON conflicts(tenant,"
		    " job_id, kind, observed) WHERE resolved_at IS NULL;"
		    "INSERT INTO conflicts(created_at, tenant, job_id, kind,"
		    " recorded, observed) VALUES (1, 'a', 'j1', 'terminal',"
		    " 'completed', 'failed');"
		    "PRAGMA user_version = 4");
	else {
		ck_assert_int_lt(snprintf(role, sizeof(role), "hb_mig_%ld",
		    (long)getpid()), (int)sizeof(role));
		test_db_exec(state_path, "DROP TABLE hookbox_state.subjects;"
		    UNMAKE_7_PG
		    "ALTER TABLE hookbox_state.receipts DROP COLUMN version,"
		    " DROP COLUMN occurred_at;"
		    "ALTER TABLE hookbox_state.conflicts"
		    " DROP CONSTRAINT conflicts_kind_check, ADD CONSTRAINT"
		    " conflicts_kind_check CHECK(kind IN ('terminal','action'));"
		    "INSERT INTO hookbox_state.conflicts(created_at, tenant,"
		    " job_id, kind, recorded, observed) VALUES (1, 'a', 'j1',"
		    " 'terminal', 'completed', 'failed');"
		    "UPDATE hookbox_state.schema_version SET version = 1");
		ck_assert_int_lt(snprintf(sql, sizeof(sql), "DROP ROLE IF"
		    " EXISTS %s; CREATE ROLE %s", role, role),
		    (int)sizeof(sql));
		test_db_exec(state_path, sql);
		ck_assert_int_eq(pg_schema_grants(role, sql, sizeof(sql)), 0);
		test_db_exec(state_path, sql);
		/* A serving open is told what to do, and changes nothing. */
		ck_assert_int_eq(store_open(state_path, &o, &s), STORE_ERROR);
		ck_assert_ptr_null(s);
		ck_assert_msg(strstr(store_errmsg(NULL), "run hookbox init") !=
		    NULL, "%s", store_errmsg(NULL));
		ck_assert_int_eq(test_db_int(state_path, "SELECT version FROM"
		    " hookbox_state.schema_version"), 1);
	}
	o.create = 1;
	ck_assert_int_eq(store_open(state_path, &o, &st), STORE_OK);
	assert_state_current();
	ck_assert_int_eq(test_db_int(state_path, "SELECT count(*) FROM"
	    " conflicts WHERE job_id = 'j1' AND kind = 'terminal'"
	    " AND observed = 'failed'"), 1);
	test_db_exec(state_path, "INSERT INTO conflicts(created_at, tenant,"
	    " job_id, kind, recorded, observed) VALUES (2, 'a', 'x', 'version',"
	    " 'do publish v3', 'undo unpublish v3');"
	    "INSERT INTO subjects VALUES ('a', 'x', 3, 5, 'do', 'publish',"
	    " 'asset.approved', 6);"
	    "INSERT INTO receipts(received_at, tenant, source, result,"
	    " version, occurred_at) VALUES (1, 'a', 'event', 'accepted', 3,"
	    " 5)");
	if (test_backend == TEST_POSTGRES) {
		ck_assert_int_lt(snprintf(sql, sizeof(sql), "SELECT"
		    " has_table_privilege('%s', 'hookbox_state.subjects',"
		    " 'INSERT')::int", role), (int)sizeof(sql));
		ck_assert_int_eq(test_db_int(state_path, sql), 1);
		/* And the circuits, to a role that moves the outbox's rows. */
		ck_assert_int_lt(snprintf(sql, sizeof(sql), "SELECT"
		    " has_table_privilege('%s', 'hookbox_state.circuits',"
		    " 'UPDATE')::int", role), (int)sizeof(sql));
		ck_assert_int_eq(test_db_int(state_path, sql), 1);
		/* Opened again: nothing to do. */
		ck_assert_int_eq(store_open(state_path, &o, &s), STORE_OK);
		store_close(s);
		ck_assert_int_lt(snprintf(sql, sizeof(sql), "DROP OWNED BY %s;"
		    " DROP ROLE %s", role, role), (int)sizeof(sql));
		test_db_exec(state_path, sql);
	}
}
END_TEST


/*
 * A state of the release before subjects had namespaces (SQLite
 * user_version 5, schema hookbox_state version 2): opened by this one
 * (on PostgreSQL by the owner), each subject's state is kept as
 * /subject, and no action, outbox row or receipt changes.
 */
START_TEST(migrate_subjects_namespaced)
{
	struct store_opts	 o = { .busy_ms = TEST_BUSY_MS, .create = 1 };
	/* Each row as written, and no other: 3 when all are there. */
	static const char	 rows[] = "SELECT (SELECT count(*) FROM"
	    " accepted WHERE action_id = 'acme:a-1:2:publish' AND attempt ="
	    " 'a-1:2' AND job_id = 'a-1' AND accepted_at = 7) + (SELECT"
	    " count(*) FROM outbox WHERE action_id = 'acme:a-1:2:publish' AND"
	    " payload = '{\"subject\":\"a-1\"}' AND state = 'pending') +"
	    " (SELECT count(*) FROM receipts WHERE job_id = 'a-1' AND"
	    " endpoint = 'cms' AND action_id = 'acme:a-1:2:publish' AND"
	    " version = 2) + 10 * ((SELECT count(*) FROM accepted) + (SELECT"
	    " count(*) FROM outbox) + (SELECT count(*) FROM receipts) - 3)";

	store_close(st);
	st = NULL;
	test_db_exec(state_path, "INSERT INTO subjects VALUES ('acme', 'a-1',"
	    " 2, 5, 'do', 'publish', 'asset.approved', 6),"
	    " ('acme', 'b/c', 1, 5, 'undo', 'unpublish', 'asset.deleted', 6);"
	    "INSERT INTO accepted VALUES ('acme:a-1:2:publish', 'acme',"
	    " 'a-1:2', 'publish', 'a-1', 7);"
	    "INSERT INTO outbox(action_id, tenant, destination, payload,"
	    " next_at, created_at, updated_at) VALUES ('acme:a-1:2:publish',"
	    " 'acme', 'sink', '{\"subject\":\"a-1\"}', 7, 7, 7);"
	    "INSERT INTO receipts(received_at, tenant, endpoint, source,"
	    " delivery_id, job_id, result, action_id, version, occurred_at)"
	    " VALUES (7, 'acme', 'cms', 'event', 'e-1', 'a-1', 'accepted',"
	    " 'acme:a-1:2:publish', 2, 5)");
	test_db_exec(state_path, test_backend == TEST_SQLITE ?
	    UNMAKE_7_LITE "PRAGMA user_version = 5" :
	    UNMAKE_7_PG "UPDATE hookbox_state.schema_version SET version = 2");
	ck_assert_int_eq(test_db_int(state_path, rows), 3);

	ck_assert_int_eq(store_open(state_path, &o, &st), STORE_OK);
	assert_state_current();
	ck_assert_int_eq(test_db_int(state_path, "SELECT count(*) FROM"
	    " subjects WHERE (subject = '/a-1' AND version = 2) OR"
	    " (subject = '/b/c' AND effect = 'undo')"), 2);
	ck_assert_int_eq(test_db_int(state_path, "SELECT count(*) FROM"
	    " subjects"), 2);
	ck_assert_int_eq(test_db_int(state_path, rows), 3);
}
END_TEST

/*
 * A file a newer release migrated is refused, untouched, with what to
 * do: run that release, or restore the backup taken before (SQLite; the
 * PostgreSQL schema says the same in pg_open_errors).
 */
START_TEST(newer_schema_refused)
{
	struct store	*s = NULL;

	if (test_backend != TEST_SQLITE)
		return;
	store_close(st);
	st = NULL;
	test_db_exec(state_path, "PRAGMA user_version = 99");
	ck_assert_int_eq(store_open(state_path, NULL, &s), STORE_ERROR);
	ck_assert_ptr_null(s);
	ck_assert_msg(strstr(store_errmsg(NULL), "version 99") != NULL &&
	    strstr(store_errmsg(NULL), "a newer hookbox wrote it") != NULL,
	    "%s", store_errmsg(NULL));
	ck_assert_int_eq(test_db_int(state_path, "PRAGMA user_version"), 99);
}
END_TEST

/*
 * PostgreSQL: without create, a database whose schema was never made is
 * refused with words that say what to do; and no message of a failed
 * open repeats a password the conninfo held.
 */
START_TEST(pg_open_errors)
{
	struct store_opts	 o = { .busy_ms = 1000 };
	struct store		*s = NULL;
	struct db		*admin = NULL;
	char			 why[256], conn[PATH_MAX + 64];

	if (test_backend != TEST_POSTGRES)
		return;
	ck_assert_int_eq(db_open_pg(state_path, 10000, 0, NULL, 0, &admin, why,
	    sizeof(why)), DB_OK);
	ck_assert_int_eq(db_exec(admin, "DROP SCHEMA hookbox_state CASCADE"),
	    DB_OK);
	db_close(admin);
	store_close(st);
	st = NULL;
	ck_assert_int_eq(store_open(state_path, &o, &s), STORE_ERROR);
	ck_assert_ptr_null(s);
	ck_assert_msg(strstr(store_errmsg(NULL), "hookbox init") != NULL, "%s",
	    store_errmsg(NULL));
	/* With create it is made again, and opens from then on. */
	o.create = 1;
	ck_assert_int_eq(store_open(state_path, &o, &st), STORE_OK);
	o.create = 0;
	ck_assert_int_eq(store_open(state_path, &o, &s), STORE_OK);
	store_close(s);
	s = NULL;
	(void)snprintf(conn, sizeof(conn), "%s port=1 password=Sesame-42",
	    state_path);
	ck_assert_int_ne(store_open(conn, &o, &s), STORE_OK);
	ck_assert_ptr_null(s);
	ck_assert_ptr_null(strstr(store_errmsg(NULL), "Sesame-42"));
	ck_assert_str_ne(store_errmsg(NULL), "");
}
END_TEST

/*
 * SQLite: the data directory is writable by the service user, who may
 * plant a link at state.db before root runs `hookbox init`.  A link is
 * refused, and create never makes or touches the file it points to; a
 * FIFO is refused at once, never waited on.
 */
START_TEST(sqlite_create_refuses_links)
{
	struct store_opts	 o = { .busy_ms = 1000, .create = 1 };
	struct store		*s = NULL;
	struct stat		 sb;
	char			 link[PATH_MAX], target[PATH_MAX];
	char			 fifo[PATH_MAX];
	int			 fd;

	if (test_backend != TEST_SQLITE)
		return;
	test_path(link, sizeof(link), dir, "linked.db");
	test_path(target, sizeof(target), dir, "victim");
	test_path(fifo, sizeof(fifo), dir, "fifo.db");
	ck_assert_int_eq(symlink(target, link), 0);
	ck_assert_int_ne(store_open(link, &o, &s), STORE_OK);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(access(target, F_OK), -1);
	ck_assert_msg(strstr(store_errmsg(NULL), "symbolic link") != NULL,
	    "%s", store_errmsg(NULL));

	ck_assert_int_ge(fd = open(target, O_WRONLY | O_CREAT | O_EXCL |
	    O_CLOEXEC, 0644), 0);
	ck_assert_int_eq(write(fd, "victim", 6), 6);
	close(fd);
	ck_assert_int_ne(store_open(link, &o, &s), STORE_OK);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(stat(target, &sb), 0);
	ck_assert_int_eq(sb.st_size, 6);
	ck_assert_int_eq(sb.st_mode & 07777, 0644);
	o.create = 0;
	ck_assert_int_ne(store_open(link, &o, &s), STORE_OK);
	ck_assert_int_eq(stat(target, &sb), 0);
	ck_assert_int_eq(sb.st_size, 6);

	o.create = 1;
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_ne(store_open(fifo, &o, &s), STORE_OK);
	ck_assert_ptr_null(s);
	ck_assert_msg(strstr(store_errmsg(NULL), "not a regular file") !=
	    NULL, "%s", store_errmsg(NULL));
}
END_TEST

/*
 * PostgreSQL: a COMMIT that waits for a synchronous standby that is not
 * there is cut short after the busy budget, and the dispatcher takes it
 * as not done: a claim claims nothing (no lease in hand, nothing to
 * send), an attempt's end is not recorded (BUSY: tried again).  What the
 * server did commit on the primary is there once the standby is no
 * longer waited for: a lease, which expires as a dead owner's does, and
 * an outcome that the second recording finds already written (lost,
 * never written twice).
 */
START_TEST(pg_syncrep_claim_finish)
{
	struct store_row	r;
	struct store_lease	l, l2;
	int			claimed, lost;

	if (test_backend != TEST_POSTGRES)
		return;
	accept_at("a", 1, T0);
	accept_at("a", 2, T0);
	r = row_of(ACT("a", 1));
	test_pg_standby("hookbox_missing");
	ck_assert_int_eq(test_claim1(st, &r, "w1", T0 + 5, T0 + 30005, &l,
	    &claimed), STORE_BUSY);
	ck_assert_int_eq(claimed, 0);
	ck_assert_ptr_null(l.payload);
	test_pg_standby(NULL);
	ck_assert_str_eq(state_of(ACT("a", 1)), "leased");
	ck_assert_int_eq(attempts_of(ACT("a", 1)), 1);

	claim(ACT("a", 2), "w1", T0 + 10, T0 + 30010, &l2);
	test_pg_standby("hookbox_missing");
	ck_assert_int_eq(test_finish1(st, &l2, "w1", STORE_OUT_DELIVERED,
	    T0 + 20, T0 + 20, 204, NULL, &lost), STORE_BUSY);
	ck_assert_int_eq(lost, 0);
	test_pg_standby(NULL);
	ck_assert_str_eq(state_of(ACT("a", 2)), "delivered");
	ck_assert_int_eq(test_finish1(st, &l2, "w1", STORE_OUT_DELIVERED,
	    T0 + 30, T0 + 30, 204, NULL, &lost), STORE_OK);
	ck_assert_int_eq(lost, 1);
	ck_assert_str_eq(state_of(ACT("a", 2)), "delivered");
	ck_assert_int_eq(qi("SELECT count(*) FROM attempts WHERE action_id ="
	    " ?1 AND ended_at IS NOT NULL", ACT("a", 2)), 1);
	store_lease_clear(&l2);
}
END_TEST

/*
 * Two dispatchers (two processes, two connections: two hosts on
 * PostgreSQL) pick and claim the same due rows at once, in batches: each
 * row is leased once, with one attempt, whichever wins it.
 */
START_TEST(two_claimers_never_share)
{
	enum { N = 2, BATCH = 4 };
	pid_t	pids[N];
	int	gun[2], i, t, status, total = 0;
	char	c;

	for (t = 0; t < 3; t++)
		for (i = 1; i <= 8; i++)
			accept_at(t == 0 ? "a" : t == 1 ? "b" : "c", i,
			    T0 + i);
	ck_assert_int_eq(pipe(gun), 0);
	for (i = 0; i < N; i++) {
		pids[i] = fork();
		ck_assert_int_ne(pids[i], -1);
		if (pids[i] == 0) {
			struct store		*s;
			struct store_row	 rows[BATCH];
			struct store_claim_row	 cl[BATCH];
			char			 owner[16], cursor[HB_ID_MAX + 1];
			int			 n, k, got = 0;

			close(gun[1]);
			s = test_store_open(dir, 10000, 0);
			(void)snprintf(owner, sizeof(owner), "w%d", i);
			cursor[0] = '\0';
			while (read(gun[0], &c, 1) < 0 && errno == EINTR)
				;
			for (;;) {
				if (store_outbox_pick(s, T0 + 100, cursor, rows,
				    BATCH, &n) != STORE_OK)
					_exit(200);
				if (n == 0)
					break;
				memcpy(cursor, rows[n - 1].tenant,
				    sizeof(cursor));
				memset(cl, 0, sizeof(cl));
				for (k = 0; k < n; k++) {
					cl[k].row = rows[k];
					cl[k].lease_until = T0 + 60000;
				}
				if (store_outbox_claim(s, cl, n, owner,
				    T0 + 100) != STORE_OK)
					_exit(201);
				for (k = 0; k < n; k++) {
					got += cl[k].claimed;
					store_lease_clear(&cl[k].lease);
				}
			}
			store_close(s);
			_exit(got);
		}
	}
	close(gun[0]);
	usleep(50 * 1000);
	close(gun[1]);
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert(WIFEXITED(status));
		ck_assert_int_le(WEXITSTATUS(status), 24);
		total += WEXITSTATUS(status);
	}
	ck_assert_int_eq(total, 24);
	ck_assert_int_eq(qi("SELECT count(*) FROM outbox WHERE state ="
	    " 'leased' AND attempts = 1", NULL), 24);
	ck_assert_int_eq(qi("SELECT count(*) FROM attempts", NULL), 24);
	ck_assert_int_eq(qi("SELECT count(DISTINCT action_id) FROM attempts",
	    NULL), 24);
	no_lock_held();
}
END_TEST


/*
 * A circuit's moves, as a pure function: failures in a row open it, a
 * probe's failure doubles the cool-down up to the cap, a delivery closes
 * it and gives back the hold to release, unless an operator's pause
 * holds it still.  What it lets through: nothing while paused, held or
 * open before the cool-down's end; one probe after; under a cap, what is
 * left of it.
 */
START_TEST(circuit_moves)
{
	struct store_circuit		c;
	struct store_circuit_report	r;

	memset(&c, 0, sizeof(c));
	memset(&r, 0, sizeof(r));
	r.threshold = 3;
	r.cooldown_ms = 1000;
	r.cooldown_max_ms = 3000;
	r.now = T0;
	r.failed = 2;
	ck_assert_int_eq(store_circuit_step(&c, &r), 0);
	ck_assert_int_eq(c.state, STORE_CIRCUIT_CLOSED);
	ck_assert_int_eq(c.failures, 2);
	ck_assert_int_eq(store_circuit_allows(&c, T0, 0), -1);
	r.failed = 1;
	ck_assert_int_eq(store_circuit_step(&c, &r), 0);
	ck_assert_int_eq(c.state, STORE_CIRCUIT_OPEN);
	ck_assert_int_eq(c.opened_at, T0);
	ck_assert_int_eq(c.retry_at, T0 + 1000);
	ck_assert_int_eq(c.held_since, T0);
	ck_assert_int_eq(store_circuit_allows(&c, T0 + 999, 0), 0);
	ck_assert_int_eq(store_circuit_held_until(&c, T0 + 999), T0 + 1000);
	ck_assert_int_eq(store_circuit_allows(&c, T0 + 1000, 0), 1);
	ck_assert_int_eq(store_circuit_held_until(&c, T0 + 1000), 0);
	/* Late failures of requests sent before: still open, as it was. */
	r.now = T0 + 10;
	ck_assert_int_eq(store_circuit_step(&c, &r), 0);
	ck_assert_int_eq(c.retry_at, T0 + 1000);
	/* Probes that fail: 2 s, then 3 s (the cap), then 3 s again. */
	c.state = STORE_CIRCUIT_HALF;
	r.now = T0 + 1500;
	ck_assert_int_eq(store_circuit_step(&c, &r), 0);
	ck_assert_int_eq(c.state, STORE_CIRCUIT_OPEN);
	ck_assert_int_eq(c.retry_at, T0 + 3500);
	c.state = STORE_CIRCUIT_HALF;
	ck_assert_int_eq(store_circuit_step(&c, &r), 0);
	ck_assert_int_eq(c.retry_at, T0 + 4500);
	c.state = STORE_CIRCUIT_HALF;
	ck_assert_int_eq(store_circuit_step(&c, &r), 0);
	ck_assert_int_eq(c.cooldown_ms, 3000);
	ck_assert_int_eq(c.opened_at, T0);	/* the outage's start */
	/* A delivery closes it and gives back the hold. */
	r.failed = 0;
	r.ok = 1;
	r.now = T0 + 5000;
	ck_assert_int_eq(store_circuit_step(&c, &r), T0);
	ck_assert_int_eq(c.state, STORE_CIRCUIT_CLOSED);
	ck_assert_int_eq(c.failures, 0);
	ck_assert_int_eq(c.held_since, 0);
	/* Paused: closed, but the hold stays until resume. */
	c.paused_at = c.held_since = T0 + 6000;
	ck_assert_int_eq(store_circuit_step(&c, &r), 0);
	ck_assert_int_eq(c.held_since, T0 + 6000);
	ck_assert_int_eq(store_circuit_allows(&c, T0 + 7000, 0), 0);
	ck_assert_int_eq(store_circuit_held_until(&c, T0 + 7000),
	    T0 + 7000 + STORE_PAUSE_RETIME_MS);
	c.paused_at = c.held_since = 0;
	/* A Retry-After holds it; a cap leaves what is not in flight. */
	r.ok = 0;
	r.hold_until = T0 + 9000;
	(void)store_circuit_step(&c, &r);
	ck_assert_int_eq(store_circuit_allows(&c, T0 + 8999, 0), 0);
	ck_assert_int_eq(store_circuit_held_until(&c, T0 + 8999), T0 + 9000);
	ck_assert_int_eq(store_circuit_allows(&c, T0 + 9000, 0), -1);
	c.leased = 3;
	ck_assert_int_eq(store_circuit_allows(&c, T0 + 9000, 4), 1);
	ck_assert_int_eq(store_circuit_allows(&c, T0 + 9000, 3), 0);
	/* threshold 0: never opens. */
	r.threshold = 0;
	r.failed = 100;
	(void)store_circuit_step(&c, &r);
	ck_assert_int_eq(c.state, STORE_CIRCUIT_CLOSED);
}
END_TEST

/*
 * Claims acts[0 .. n) at now with cap and rate into c (its leases of
 * before cleared first); returns how many.
 */
static int
claim_n(const char (*acts)[HB_ACTION_MAX + 1], int n, int64_t now, int cap,
    int rate, struct store_claim_row *c)
{
	int	i, got = 0;

	for (i = 0; i < n; i++)
		store_lease_clear(&c[i].lease);
	memset(c, 0, sizeof(*c) * (size_t)n);
	for (i = 0; i < n; i++) {
		c[i].row = row_of(acts[i]);
		c[i].lease_until = now + 30000;
		c[i].in_flight_max = cap;
		c[i].rate = rate;
	}
	ck_assert_int_eq(store_outbox_claim(st, c, n, "w1", now), STORE_OK);
	for (i = 0; i < n; i++)
		got += c[i].claimed;
	return got;
}

/*
 * A destination's circuit, read and moved in the claim's and the
 * finish's transactions: opened by failures, it holds every row back
 * until its cool-down ends, then lets one through as a probe (half open,
 * the others held); the probe's delivery closes it and gives each
 * undelivered row the time it was held; an operator's pause holds too,
 * and its resume gives the time back; a cap and a rate let through only
 * what they allow, a rate's rows each with its start.
 */
START_TEST(circuit_gates_claims)
{
	enum { N = 6 };
	struct store_claim_row	 c[N];
	struct store_finish_dest d;
	struct store_finish	 f;
	char			 act[N][HB_ACTION_MAX + 1];
	int			 i, changed;

	memset(c, 0, sizeof(c));
	for (i = 0; i < N; i++)
		accept_named("a", i + 1, T0, act[i]);
	/* One attempt fails, and the circuit (threshold 1) opens. */
	ck_assert_int_eq(claim_n((const char (*)[HB_ACTION_MAX + 1])act, 1,
	    T0 + 10, 0, 0, c), 1);
	memset(&d, 0, sizeof(d));
	memcpy(d.tenant, c[0].lease.tenant, sizeof(d.tenant));
	memcpy(d.destination, c[0].lease.destination, sizeof(d.destination));
	d.report.failed = 1;
	d.report.threshold = 1;
	d.report.cooldown_ms = 1000;
	d.report.cooldown_max_ms = 4000;
	d.report.now = T0 + 100;
	memset(&f, 0, sizeof(f));
	f.lease = &c[0].lease;
	f.out = STORE_OUT_RETRY;
	f.ended = f.next_at = T0 + 100;
	ck_assert_int_eq(store_outbox_finish(st, &f, 1, "w1", NULL, &d, 1),
	    STORE_OK);
	store_lease_clear(&c[0].lease);
	ck_assert_int_eq(d.was, STORE_CIRCUIT_CLOSED);
	ck_assert_int_eq(d.now.state, STORE_CIRCUIT_OPEN);
	ck_assert_str_eq(qt("SELECT state FROM circuits", NULL), "open");
	/* Open: nothing through, and nothing due before its probe. */
	ck_assert_int_eq(claim_n((const char (*)[HB_ACTION_MAX + 1])act, N,
	    T0 + 500, 0, 0, c), 0);
	for (i = 0; i < N; i++)
		ck_assert_int_eq(c[i].retimed, 1);
	ck_assert_int_eq(qi("SELECT count(*) FROM outbox WHERE"
	    " next_at = 1700000001100", NULL), N);
	/* After the cool-down: one probe, and the circuit half open. */
	ck_assert_int_eq(claim_n((const char (*)[HB_ACTION_MAX + 1])act, N,
	    T0 + 1100, 0, 0, c), 1);
	ck_assert_int_eq(c[0].probe, 1);
	ck_assert_int_eq(c[0].held_since, T0 + 100);
	ck_assert_str_eq(qt("SELECT state || ' ' || retry_at FROM circuits",
	    NULL), "half 1700000031100");
	/* The others wait for it to end. */
	for (i = 1; i < N; i++)
		ck_assert_int_eq(c[i].retimed, 1);
	ck_assert_int_eq(qi("SELECT count(*) FROM outbox WHERE"
	    " next_at = 1700000031100", NULL), N - 1);
	/* The probe delivers: closed, the hold given back. */
	memset(&f, 0, sizeof(f));
	f.lease = &c[0].lease;
	f.out = STORE_OUT_DELIVERED;
	f.ended = T0 + 1200;
	d.report.failed = 0;
	d.report.ok = 1;
	d.report.now = T0 + 1200;
	ck_assert_int_eq(store_outbox_finish(st, &f, 1, "w1", NULL, &d, 1),
	    STORE_OK);
	store_lease_clear(&c[0].lease);
	ck_assert_int_eq(d.was, STORE_CIRCUIT_HALF);
	ck_assert_int_eq(d.now.state, STORE_CIRCUIT_CLOSED);
	ck_assert_int_eq(d.released, 1);
	ck_assert_int_eq(qi("SELECT count(*) FROM outbox WHERE held_ms = 1100"
	    " AND state = 'pending' AND next_at = 1700000001200", NULL), N - 1);
	ck_assert_int_eq(qi("SELECT held_ms FROM outbox WHERE"
	    " state = 'delivered'", NULL), 0);
	/* Paused, then resumed: the pause's time given back too. */
	ck_assert_int_eq(store_circuit_pause(st, d.tenant, d.destination, 1,
	    T0 + 2000, &changed), STORE_OK);
	ck_assert_int_eq(changed, 1);
	ck_assert_int_eq(claim_n((const char (*)[HB_ACTION_MAX + 1])act + 1,
	    N - 1, T0 + 2500, 0, 0, c), 0);
	ck_assert_int_eq(c[0].start_at, T0 + 2500 + STORE_PAUSE_RETIME_MS);
	ck_assert_int_eq(store_circuit_pause(st, d.tenant, d.destination, 0,
	    T0 + 3000, &changed), STORE_OK);
	ck_assert_int_eq(changed, 1);
	ck_assert_int_eq(qi("SELECT count(*) FROM outbox WHERE held_ms = 2100"
	    " AND next_at = 1700000003000", NULL), N - 1);
	/* A cap of 2: two through, the rest held. */
	ck_assert_int_eq(claim_n((const char (*)[HB_ACTION_MAX + 1])act + 1,
	    N - 1, T0 + 4000, 2, 0, c), 2);
	ck_assert_int_eq(c[2].held + c[3].held + c[4].held, 3);
	/* With those two in flight, none more. */
	ck_assert_int_eq(claim_n((const char (*)[HB_ACTION_MAX + 1])act + 3,
	    N - 3, T0 + 4000, 2, 0, c), 0);
	/* A rate of 2 a second: starts now and in 500 ms, then held. */
	ck_assert_int_eq(claim_n((const char (*)[HB_ACTION_MAX + 1])act + 3,
	    N - 3, T0 + 5000, 0, 2, c), 2);
	ck_assert_int_eq(c[0].start_at, T0 + 5000);
	ck_assert_int_eq(c[1].start_at, T0 + 5500);
	ck_assert_int_eq(c[1].lease.lease_until, T0 + 5000 + 30000 + 500);
	ck_assert_int_eq(c[2].held, 1);
	for (i = 0; i < N; i++)
		store_lease_clear(&c[i].lease);
}
END_TEST


/*
 * A requeue by filter moves exactly what its dry run listed, each as one
 * requeue moves it (attempts and horizon anew), and nothing else: not
 * another state, not another tenant's, not one that went dead outside
 * the time range.
 */
START_TEST(requeue_by_filter)
{
	enum { N = 4 };
	struct store_requeue_filter	 f;
	struct store_claim_row		 c[N];
	struct store_finish		 fin[N];
	char				 act[N][HB_ACTION_MAX + 1];
	cJSON				*dry = NULL, *moved = NULL;
	char				*a, *b;
	int				 i;

	memset(c, 0, sizeof(c));
	memset(fin, 0, sizeof(fin));
	for (i = 0; i < N; i++)
		accept_named(i < 3 ? "a" : "b", i + 1, T0, act[i]);
	ck_assert_int_eq(claim_n((const char (*)[HB_ACTION_MAX + 1])act, N,
	    T0 + 10, 0, 0, c), N);
	for (i = 0; i < N; i++) {
		fin[i].lease = &c[i].lease;
		fin[i].out = i == 1 ? STORE_OUT_UNKNOWN : STORE_OUT_DEAD;
		/* The first went dead before the range asked for. */
		fin[i].ended = fin[i].next_at = i == 0 ? T0 + 20 : T0 + 500;
	}
	ck_assert_int_eq(store_outbox_finish(st, fin, N, "w1", NULL, NULL, 0),
	    STORE_OK);
	memset(&f, 0, sizeof(f));
	f.state = STORE_DEAD;
	f.tenant = "a";
	f.since = T0 + 100;
	ck_assert_int_eq(store_outbox_requeue(st, &f, 1, T0 + 1000, "again",
	    &dry), STORE_OK);
	ck_assert_ptr_nonnull(a = cJSON_PrintUnformatted(dry));
	ck_assert_str_eq(a, "[\"a:att-3:" TEST_STEP "\"]");
	ck_assert_str_eq(state_of(act[2]), "dead");
	ck_assert_int_eq(store_outbox_requeue(st, &f, 0, T0 + 1000, "again",
	    &moved), STORE_OK);
	ck_assert_ptr_nonnull(b = cJSON_PrintUnformatted(moved));
	ck_assert_str_eq(a, b);
	ck_assert_str_eq(state_of(act[2]), "pending");
	ck_assert_int_eq(qi("SELECT attempts + held_ms FROM outbox WHERE"
	    " action_id = ?1", act[2]), 0);
	ck_assert_int_eq(qi("SELECT horizon_from FROM outbox WHERE"
	    " action_id = ?1", act[2]), T0 + 1000);
	ck_assert_str_eq(state_of(act[0]), "dead");
	ck_assert_str_eq(state_of(act[1]), "unknown");
	ck_assert_str_eq(state_of(act[3]), "dead");
	f.state = STORE_DELIVERED;
	cJSON_Delete(dry);
	ck_assert_int_eq(store_outbox_requeue(st, &f, 1, T0, NULL, &dry),
	    STORE_ERROR);
	cJSON_free(a);
	cJSON_free(b);
	cJSON_Delete(moved);
	for (i = 0; i < N; i++)
		store_lease_clear(&c[i].lease);
}
END_TEST

static Suite *
store_suite(void)
{
	Suite	*s = suite_create("store");
	TCase	*pick = tcase_create("pick");
	TCase	*lease = tcase_create("lease");
	TCase	*check = tcase_create("check");
	TCase	*ops = tcase_create("ops");
	TCase	*sync = tcase_create("syncrep");
	TCase	*tc[4];
	size_t	 i;

	tc[0] = pick;
	tc[1] = lease;
	tc[2] = check;
	tc[3] = ops;
	for (i = 0; i < NELEM(tc); i++) {
		tcase_add_unchecked_fixture(tc[i], test_case_setup,
		    test_case_teardown);
		tcase_add_checked_fixture(tc[i], setup, teardown);
		suite_add_tcase(s, tc[i]);
	}
	tcase_add_test(pick, pick_round_robin);
	tcase_add_test(pick, pick_cursor);
	tcase_add_test(pick, pick_due_only);
	tcase_add_test(pick, claim_records_attempt);
	tcase_add_test(pick, claim_stale_pick);
	tcase_add_test(pick, pick_batch_fair);
	tcase_add_test(pick, claim_batch);
	tcase_add_test(pick, two_claimers_never_share);
	tcase_add_test(lease, finish_outcomes);
	tcase_add_test(lease, circuit_moves);
	tcase_add_test(lease, circuit_gates_claims);
	tcase_add_test(lease, requeue_by_filter);
	tcase_add_test(lease, finish_lost_after_recovery);
	tcase_add_test(lease, finish_batch);
	tcase_add_test(lease, claim_and_record_round_trips);
	tcase_add_test(lease, expired_collects_past_leases);
	tcase_add_test(lease, expire_guarded);
	tcase_add_test(lease, expire_outcomes);
	tcase_add_test(lease, defer_moves_expiry);
	tcase_add_test(check, check_claims_once);
	tcase_add_test(check, checked_outcomes);
	tcase_add_test(check, move_ends_check);
	tcase_add_test(check, recheck_due_only);
	tcase_add_test(ops, moves_from_allowed_states);
	tcase_add_test(ops, next_due_or_expiry);
	tcase_add_test(ops, prune_receipts_cut);
	tcase_add_test(ops, prune_actions_cut);
	tcase_add_test(ops, counts_by_state);
	tcase_add_test(ops, destination_gauges);
	tcase_add_test(ops, metrics_table);
	tcase_add_test(ops, metrics_drop_and_forget);
	tcase_add_test(ops, metrics_two_writers);
	tcase_add_test(ops, look_by_key);
	tcase_add_test(ops, savepoint_journal_in_memory);
	tcase_add_test(ops, put_set_large_bodies);
	tcase_add_test(ops, status_view);
	tcase_add_test(ops, state_names);
	tcase_add_test(ops, receipt_counts_by_result);
	tcase_add_test(ops, requeue_numbers_go_on);
	tcase_add_test(ops, list_filters);
	tcase_add_test(ops, unknown_rows);
	tcase_add_test(ops, jobs_ended_forget);
	tcase_add_test(ops, pg_open_errors);
	tcase_add_test(ops, migrate_previous_release);
	tcase_add_test(ops, migrate_subjects_namespaced);
	tcase_add_test(ops, newer_schema_refused);
	tcase_add_test(ops, schema_agrees);
	tcase_add_test(ops, sqlite_create_refuses_links);
	/* The server's standby setting, reset after, even on a failure. */
	tcase_add_unchecked_fixture(sync, test_case_setup,
	    test_case_teardown_standby);
	tcase_add_checked_fixture(sync, setup, teardown);
	tcase_add_test(sync, pg_syncrep_claim_finish);
	suite_add_tcase(s, sync);
	return s;
}

int
main(void)
{
	if (util_init() != 0)
		return 1;
	return test_run_backends(store_suite, "store");
}
