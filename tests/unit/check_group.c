/*
 * check_group.c: group commit (lib/intake/group.h) with real threads against
 * real SQLite files.
 *
 * Each caller is a thread of its own that does what a serving thread
 * does: webhook_receive(), which prepares the request from the process's
 * configuration cache and hands it to group_submit(); the batch looks up
 * its members' jobs in one read of config.db.
 * A batch is formed on purpose: the thread that runs it (the first
 * caller's, or the writer) is held at FAULT_GROUP_TAKE until every
 * caller's observation waits in its queue
 * (group_stats().waiting), so that one batch holds them all and the
 * assertions do not depend on timing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fault.h"
#include "config/admin.h"
#include "config/cache.h"
#include "intake/group.h"
#include "intake/webhook.h"
#include "testutil.h"
#include "base/util.h"

#define KEY		"a-long-shared-key"
#define ACTION1		"acme:att-1:" TEST_STEP
/* Fresh jobs f-000.., each with an action of its own. */
#define FRESH		(GROUP_BATCH_MAX + 8)
#define CALLS_MAX	(GROUP_BATCH_MAX + 8)
/* The longest any wait for another thread may take: a bound, not a pace. */
#define WAIT_MS		60000

static char			 dir[PATH_MAX - 32];
static char			 state_path[PATH_MAX];
static struct config_cache	*cache;
static struct group		*grp;

/* One caller: its request, and what it was answered. */
struct call {
	char			 body[256];
	char			 job[32];	/* for the queries; "" when none */
	const char		*endpoint;	/* NULL: "hook" */
	const char		*key;		/* X-Hook-Key, or NULL */
	int			 prepared;	/* answered by the writer */
	struct accept_res	 res;
	pthread_t		 tid;
};

static struct call	calls[CALLS_MAX];

/*
 * The link wraps pthread_join() (see the Makefile): group_free() sets its
 * stop flag before it joins the writer, so a join begun tells a held
 * writer that the stop was asked for.  The tests' own joins set it too,
 * harmlessly: the one test that reads it joins only afterwards.
 */
static atomic_int	joining;

int __real_pthread_join(pthread_t, void **);

int
__wrap_pthread_join(pthread_t t, void **ret)
{
	atomic_store(&joining, 1);
	return __real_pthread_join(t, ret);
}

static void
nap(void)
{
	struct timespec	ts = { 0, 1000 * 1000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		continue;
}

/*
 * The batch's hold (FAULT_GROUP_TAKE, on the thread that runs it): the
 * first time only, waits until target observations wait and, when also
 * is set, until *also is non-zero.  Takes only the group's lock, through
 * group_stats(), and never while the batch's thread needs it.
 */
struct hold {
	struct group	*g;
	int64_t		 target;
	atomic_int	*also;
	int		 done;		/* the writer's own */
};

static struct hold	held;

static int
hold(enum fault_point p, void *arg)
{
	struct hold		*h = arg;
	struct group_stats	 st;
	int			 i;

	(void)p;
	if (h->done)
		return 0;
	h->done = 1;
	for (i = 0; i < WAIT_MS; i++) {
		group_stats(h->g, &st);
		if (st.waiting >= h->target &&
		    (h->also == NULL || atomic_load(h->also)))
			break;
		nap();
	}
	return 0;
}

/* Arms the hold for the next batch; the writer must be idle. */
static void
hold_next(int64_t target, atomic_int *also)
{
	held.g = grp;
	held.target = target;
	held.also = also;
	held.done = 0;
	fault_set(FAULT_GROUP_TAKE, hold, &held);
}

/* Waits until n observations wait for the writer. */
static void
wait_waiting(int64_t n)
{
	struct group_stats	st;
	int			i;

	for (i = 0; i < WAIT_MS; i++) {
		group_stats(grp, &st);
		if (st.waiting >= n)
			return;
		nap();
	}
	ck_abort_msg("never %lld waiting (%lld)", (long long)n,
	    (long long)st.waiting);
}

/*
 * The writer counts a batch after it has answered its members: a test
 * that reads the counts waits for them first.
 */
static struct group_stats
settle(int64_t observations)
{
	struct group_stats	st;
	int			i;

	for (i = 0; i < WAIT_MS; i++) {
		group_stats(grp, &st);
		if (st.observations >= observations)
			return st;
		nap();
	}
	ck_abort_msg("the writer never counted %lld observations (%lld)",
	    (long long)observations, (long long)st.observations);
	return st;
}

static const char *
header(const void *arg, const char *name)
{
	const struct call	*c = arg;

	return strcmp(name, TEST_KEY_HEADER) == 0 ? c->key : NULL;
}

/* What a serving thread does with one request. */
static void
serve(struct call *c)
{
	struct webhook_req		 req;
	struct webhook_obs		 h;

	memset(&req, 0, sizeof(req));
	req.endpoint = c->endpoint != NULL ? c->endpoint : "hook";
	req.header = header;
	req.arg = c;
	req.body = c->body;
	req.bodylen = strlen(c->body);
	req.now_ms = util_now_ms();
	c->prepared = webhook_receive(cache, grp, &req, &h, &c->res) == 0;
}

static void *
caller(void *arg)
{
	serve(arg);
	return NULL;
}

static void
start(struct call *c)
{
	pthread_attr_t	attr;

	ck_assert_int_eq(pthread_attr_init(&attr), 0);
	ck_assert_int_eq(pthread_attr_setstacksize(&attr, 1024 * 1024), 0);
	ck_assert_int_eq(pthread_create(&c->tid, &attr, caller, c), 0);
	pthread_attr_destroy(&attr);
}

/* Every call on a thread of its own, all at once. */
static void
start_all(struct call *c, int n)
{
	int	i;

	for (i = 0; i < n; i++)
		start(&c[i]);
}

/*
 * One by one, each once the one before waits in the writer's queue: they
 * arrive, and so are applied, in the array's order (the writer is held).
 */
static void
start_in_order(struct call *c, int n, int64_t before)
{
	int	i;

	for (i = 0; i < n; i++) {
		start(&c[i]);
		wait_waiting(before + i + 1);
	}
}

static void
join_all(struct call *c, int n)
{
	int	i;

	for (i = 0; i < n; i++)
		ck_assert_int_eq(pthread_join(c[i].tid, NULL), 0);
}

/* A call's request; the answer is reset to "none yet" (HB_RESULT__N). */
static void
set_call(struct call *c, const char *key, const char *job, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));

static void
set_call(struct call *c, const char *key, const char *job, const char *fmt,
    ...)
{
	va_list	ap;
	int	n;

	memset(c, 0, sizeof(*c));
	va_start(ap, fmt);
	n = vsnprintf(c->body, sizeof(c->body), fmt, ap);
	va_end(ap);
	ck_assert(n > 0 && (size_t)n < sizeof(c->body));
	ck_assert(strlen(job) < sizeof(c->job));
	memcpy(c->job, job, strlen(job) + 1);
	c->key = key;
	c->res.result = HB_RESULT__N;
}

static void
completed(struct call *c, const char *job)
{
	set_call(c, KEY, job, "{\"type\":\"job_completed\",\"job_id\":\"%s\","
	    "\"status\":\"completed\",\"key\":\"out/%s.mp4\"}", job, job);
}

static void
fresh(struct call *c, int i)
{
	char	job[32];

	ck_assert(i >= 0 && i < FRESH);
	snprintf(job, sizeof(job), "f-%03d", i);
	completed(c, job);
}

/* Answers: how many calls in c[0..n) were answered r. */
static int
answered(const struct call *c, int n, enum hb_result r)
{
	int	i, k = 0;

	for (i = 0; i < n; i++)
		k += c[i].res.result == r;
	return k;
}

/* One integer from path, the query formatted. */
static long long
qf(const char *path, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static long long
qf(const char *path, const char *fmt, ...)
{
	char	sql[512];
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	ck_assert(n > 0 && (size_t)n < sizeof(sql));
	return test_db_int(path, sql);
}

static void
snapshot_is(const char *path, const char *want)
{
	char	snap[128];

	test_state_snapshot(path, snap, sizeof(snap));
	ck_assert_str_eq(snap, want);
}

/* A fresh empty state file at path (the group does not create one). */
static void
state_create(const char *path)
{
	struct store_opts	 o;
	struct store		*s = NULL;

	memset(&o, 0, sizeof(o));
	o.busy_ms = 1000;
	o.create = 1;
	ck_assert_int_eq(store_open(path, &o, &s), STORE_OK);
	store_close(s);
}

static void
setup(void)
{
	struct config	*w;
	char		 job[32], att[32], cpath[PATH_MAX];
	int		 i;

	snprintf(dir, sizeof(dir), "%s", test_tmpdir());
	ck_assert_int_lt(snprintf(state_path, sizeof(state_path), "%s",
	    test_location(dir, "state.db")), (int)sizeof(state_path));
	w = test_config_create(dir);
	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "sink");
	test_add_endpoint(w, "hook", "acme", CONFIG_AUTH_KEY, KEY);
	test_add_job(w, "acme", "job-1", "att-1", "sink");
	/* The same attempt and step as job-1: the same action id. */
	test_add_job(w, "acme", "job-twin", "att-1", "sink");
	/* An inactive tenant's endpoint and job. */
	test_add_tenant(w, "sleepy", 0);
	test_add_destination(w, "sleepy", "sink");
	test_add_endpoint(w, "sleepy-hook", "sleepy", CONFIG_AUTH_KEY, KEY);
	test_add_job(w, "sleepy", "s-1", "att-s", "sink");
	ck_assert_int_eq(config_begin(w), CONFIG_OK);
	for (i = 0; i < FRESH; i++) {
		snprintf(job, sizeof(job), "f-%03d", i);
		snprintf(att, sizeof(att), "att-f-%03d", i);
		test_add_job(w, "acme", job, att, "sink");
	}
	ck_assert_int_eq(config_commit(w), CONFIG_OK);
	config_close(w);
	state_create(state_path);
	ck_assert_int_lt(snprintf(cpath, sizeof(cpath), "%s",
	    test_location(dir, "config.db")), (int)sizeof(cpath));
	ck_assert_int_eq(config_cache_new(cpath, 2000, 4, &cache), 0);
	grp = test_group_new(state_path, 1, cache);
	atomic_store(&joining, 0);
}

static void
teardown(void)
{
	fault_set(FAULT_GROUP_TAKE, NULL, NULL);
	fault_set(FAULT_OUTBOX_INSERT, NULL, NULL);
	fault_set(FAULT_BEFORE_COMMIT, NULL, NULL);
	group_free(grp);
	grp = NULL;
	config_cache_free(cache);
	cache = NULL;
	test_rmdir(dir);
}

static long long
q(const char *sql)
{
	return test_db_int(state_path, sql);
}

/*
 * Two hundred identical callbacks in one batch: the first claims the
 * action, the other 199 find it claimed inside the same transaction.
 */
START_TEST(one_action_from_one_batch)
{
	enum { N = 200 };
	struct group_stats	st;
	struct config_cache_stats cs;
	int			i;

	for (i = 0; i < N; i++)
		completed(&calls[i], "job-1");
	hold_next(N, NULL);
	start_all(calls, N);
	join_all(calls, N);
	ck_assert_int_eq(answered(calls, N, HB_ACCEPTED), 1);
	ck_assert_int_eq(answered(calls, N, HB_DUPLICATE), N - 1);
	for (i = 0; i < N; i++)
		ck_assert_str_eq(calls[i].res.action, ACTION1);
	ck_assert_int_eq(q("SELECT count(*) FROM accepted"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox WHERE action_id='"
	    ACTION1 "' AND state='pending'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), N);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE"
	    " result='accepted'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE"
	    " result='duplicate' AND action_id='" ACTION1 "'"), N - 1);
	st = settle(N);
	ck_assert_int_eq(st.batches, 1);
	ck_assert_int_eq(st.largest, N);
	ck_assert_int_eq(st.observations, N);
	ck_assert_int_eq(st.failed, 0);
	ck_assert_int_eq(st.waiting, 0);
	/* Their jobs were read in one statement, the batch's. */
	config_cache_stats(cache, &cs);
	ck_assert_int_eq(cs.batches, 1);
	ck_assert_int_eq(cs.asked, N);
}
END_TEST

/* More than a batch holds: two COMMITs, still one action. */
START_TEST(batch_capped)
{
	enum { N = GROUP_BATCH_MAX + 8 };
	struct group_stats	st;
	int			i;

	for (i = 0; i < N; i++)
		completed(&calls[i], "job-1");
	hold_next(N, NULL);
	start_all(calls, N);
	join_all(calls, N);
	ck_assert_int_eq(answered(calls, N, HB_ACCEPTED), 1);
	ck_assert_int_eq(answered(calls, N, HB_DUPLICATE), N - 1);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), N);
	st = settle(N);
	ck_assert_int_eq(st.batches, 2);
	ck_assert_int_eq(st.largest, GROUP_BATCH_MAX);
}
END_TEST

static int
fail_counting(enum fault_point p, void *arg)
{
	int	*fired = arg;

	(void)p;
	(*fired)++;
	return 1;
}

/*
 * A COMMIT that fails answers every member "try again" (503) and keeps
 * nothing; the next batch commits.
 */
START_TEST(failed_commit_fails_every_member)
{
	enum { N = 64 };
	struct group_stats	st;
	int			i, fired = 0;

	for (i = 0; i < N; i++)
		fresh(&calls[i], i);
	fault_set(FAULT_BEFORE_COMMIT, fail_counting, &fired);
	hold_next(N, NULL);
	start_all(calls, N);
	join_all(calls, N);
	ck_assert_int_eq(answered(calls, N, HB_UNAVAILABLE), N);
	for (i = 0; i < N; i++) {
		ck_assert(calls[i].prepared);
		ck_assert(!hb_result_is_ack(calls[i].res.result));
	}
	/* One COMMIT tried for all of them. */
	ck_assert_int_eq(fired, 1);
	snapshot_is(state_path, "r0 j0 a0 o0 c0");
	st = settle(N);
	ck_assert_int_eq(st.batches, 1);
	ck_assert_int_eq(st.failed, 1);
	ck_assert_int_eq(st.largest, N);

	/* The providers' retries, in the next batch. */
	fault_set(FAULT_BEFORE_COMMIT, NULL, NULL);
	for (i = 0; i < N; i++)
		fresh(&calls[i], i);
	hold_next(N, NULL);
	start_all(calls, N);
	join_all(calls, N);
	ck_assert_int_eq(answered(calls, N, HB_ACCEPTED), N);
	snapshot_is(state_path, "r64 j64 a64 o64 c0");
	st = settle(2 * N);
	ck_assert_int_eq(st.batches, 2);
	ck_assert_int_eq(st.failed, 1);
}
END_TEST

/* A count as state.db's metrics table has it; 0 when absent. */
static long long
persisted(const char *l2)
{
	char	sql[256];

	ck_assert_int_lt(snprintf(sql, sizeof(sql), "SELECT coalesce(sum(value),"
	    " 0) FROM metrics WHERE name = 'requests' AND l1 = 'hook' AND"
	    " l2 = '%s'", l2), (int)sizeof(sql));
	return q(sql);
}

/* The same, as this process holds it uncommitted. */
static long long
unflushed(struct metrics *m, const char *l2)
{
	struct metrics_set	s;
	long long		v = 0;
	int			i;

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(metrics_unflushed(m, &s), 0);
	for (i = 0; i < s.n; i++)
		if (strcmp(s.rows[i].l1, "hook") == 0 &&
		    strcmp(s.rows[i].l2, l2) == 0)
			v += s.rows[i].value;
	metrics_set_free(&s);
	return v;
}

/* A group on state_path with a metrics registry, threaded. */
static struct metrics *
counted_group(void)
{
	struct group_opts	 o;
	struct metrics		*m;

	group_free(grp);
	ck_assert_ptr_nonnull(m = metrics_new());
	memset(&o, 0, sizeof(o));
	o.state_path = state_path;
	o.busy_ms = 1000;
	o.threaded = 1;
	o.metrics = m;
	o.configs = cache;
	ck_assert_int_eq(group_new(&o, &grp), 0);
	return m;
}

/*
 * Counts ride on the batch's own transaction: what the process counted
 * before (requests refused before any write) and the members' results.
 * A COMMIT that fails keeps nothing of them in state.db and puts them
 * back, its members counted as unavailable; the next batch commits all.
 */
START_TEST(counts_ride_the_commit)
{
	enum { N = 16 };
	struct metrics		*m = counted_group();
	int			 i, fired = 0;

	metrics_add(m, "requests", "hook", "unauthorized", 5);

	for (i = 0; i < N; i++)
		fresh(&calls[i], i);
	fault_set(FAULT_BEFORE_COMMIT, fail_counting, &fired);
	hold_next(N, NULL);
	start_all(calls, N);
	join_all(calls, N);
	ck_assert_int_eq(answered(calls, N, HB_UNAVAILABLE), N);
	(void)settle(N);
	ck_assert_int_eq(q("SELECT count(*) FROM metrics"), 0);
	ck_assert_int_eq(unflushed(m, "unauthorized"), 5);
	ck_assert_int_eq(unflushed(m, "unavailable"), N);
	ck_assert_int_eq(unflushed(m, "accepted"), 0);

	fault_set(FAULT_BEFORE_COMMIT, NULL, NULL);
	for (i = 0; i < N; i++)
		fresh(&calls[i], i);
	hold_next(N, NULL);
	start_all(calls, N);
	join_all(calls, N);
	ck_assert_int_eq(answered(calls, N, HB_ACCEPTED), N);
	(void)settle(2 * N);
	ck_assert_int_eq(persisted("unauthorized"), 5);
	ck_assert_int_eq(persisted("unavailable"), N);
	ck_assert_int_eq(persisted("accepted"), N);
	/*
	 * One row per label set, however many members: three results, and
	 * the last use of the one secret they were all signed with.
	 */
	ck_assert_int_eq(q("SELECT count(*) FROM metrics"
	    " WHERE name <> 'minute'"), 4);
	ck_assert_int_eq(q("SELECT count(*) FROM metrics WHERE name ="
	    " 'secret_used_ms' AND l2 <> '' AND value > 0"), 1);
	/* And their minutes, for the status page: the same counts. */
	ck_assert_int_eq(q("SELECT sum(value) FROM metrics WHERE name ="
	    " 'minute' AND l2 = 'requests:accepted'"), N);
	ck_assert_int_eq(q("SELECT sum(value) FROM metrics WHERE name ="
	    " 'minute' AND l2 = 'requests:unavailable'"), N);
	ck_assert_int_eq(unflushed(m, "unauthorized"), 0);
	ck_assert_int_eq(unflushed(m, "accepted"), 0);
	group_free(grp);
	grp = NULL;
	metrics_free(m);
}
END_TEST

/* Calls c[0..n) on jobs f-(from)..., all in one batch. */
static void
one_batch(int from, int n)
{
	int	i;

	for (i = 0; i < n; i++)
		fresh(&calls[i], from + i);
	hold_next(n, NULL);
	start_all(calls, n);
	join_all(calls, n);
}

/*
 * PostgreSQL: a batch costs at most three round trips to the server,
 * whatever its size: its BEGIN, locks and look-ups in one flight, its
 * writes in a second, its counts with the COMMIT in a third; and at most
 * eight statements of the transaction's own (BEGIN, savepoints, COMMIT),
 * its locks being one statement and its writes one a table; fresh
 * observations, their duplicates, and one job's many.  Counted by the db
 * layer (the writer's connection), after a first batch has connected.
 * SQLite: none.
 */
START_TEST(three_round_trips_a_batch)
{
	enum { N = 16 };
	struct metrics		*m = counted_group();
	struct group_stats	 a, b;
	int			 i, round;

	one_batch(0, N);	/* connects, and prepares its statements */
	(void)settle(N);
	for (round = 0; round < 3; round++) {
		group_stats(grp, &a);
		if (round == 0)
			one_batch(N, N);		/* fresh */
		else if (round == 1)
			one_batch(0, N);		/* duplicates */
		else {
			for (i = 0; i < N; i++)		/* one job */
				fresh(&calls[i], 2 * N);
			hold_next(N, NULL);
			start_all(calls, N);
			join_all(calls, N);
		}
		b = settle(a.observations + N);
		ck_assert_int_eq(b.batches - a.batches, 1);
		ck_assert_int_eq(b.failed, 0);
		if (test_backend == TEST_SQLITE)
			ck_assert_int_eq(b.round_trips, 0);
		else {
			ck_assert_msg(b.round_trips - a.round_trips <= 3,
			    "round %d: %lld round trips for a batch of %d",
			    round, (long long)(b.round_trips -
			    a.round_trips), N);
			/*
			 * BEGIN, the locks' SAVEPOINT and RELEASE, the
			 * look-ups' and writes', the counts', COMMIT: none
			 * per member.
			 */
			ck_assert_msg(b.tx_statements - a.tx_statements <= 8,
			    "round %d: %lld transaction statements for a"
			    " batch of %d", round, (long long)(b.tx_statements -
			    a.tx_statements), N);
		}
	}
	ck_assert_int_eq(answered(calls, N, HB_ACCEPTED), 1);
	ck_assert_int_eq(answered(calls, N, HB_DUPLICATE), N - 1);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 2 * N + 1);
	ck_assert_int_eq(persisted("accepted"), 2 * N + 1);
	group_free(grp);
	grp = NULL;
	metrics_free(m);
}
END_TEST

/*
 * The counts' own UPSERT fails in a batch that stands (a lock on a
 * metrics row, a trigger): the batch commits without them, and they stay
 * in memory, the members' results with them, for the next batch.
 */
START_TEST(counts_kept_when_their_write_fails)
{
	enum { N = 8 };
	struct metrics	*m = counted_group();

	metrics_add(m, "requests", "hook", "unauthorized", 5);
	if (test_backend == TEST_SQLITE)
		test_db_exec(state_path, "CREATE TRIGGER no_counts BEFORE"
		    " INSERT ON metrics BEGIN SELECT RAISE(ABORT, 'no counts');"
		    " END");
	else
		test_db_exec(state_path, "CREATE FUNCTION no_counts() RETURNS"
		    " trigger LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION"
		    " 'no counts'; END$$; CREATE TRIGGER no_counts BEFORE INSERT"
		    " ON metrics FOR EACH ROW EXECUTE FUNCTION no_counts()");
	one_batch(0, N);
	ck_assert_int_eq(answered(calls, N, HB_ACCEPTED), N);
	(void)settle(N);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), N);
	ck_assert_int_eq(q("SELECT count(*) FROM metrics"), 0);
	ck_assert_int_eq(unflushed(m, "unauthorized"), 5);
	ck_assert_int_eq(unflushed(m, "accepted"), N);

	test_db_exec(state_path, test_backend == TEST_SQLITE ?
	    "DROP TRIGGER no_counts" : "DROP TRIGGER no_counts ON metrics");
	one_batch(N, N);
	ck_assert_int_eq(answered(calls, N, HB_ACCEPTED), N);
	(void)settle(2 * N);
	ck_assert_int_eq(persisted("unauthorized"), 5);
	ck_assert_int_eq(persisted("accepted"), 2 * N);
	ck_assert_int_eq(unflushed(m, "unauthorized"), 0);
	ck_assert_int_eq(unflushed(m, "accepted"), 0);
	group_free(grp);
	grp = NULL;
	metrics_free(m);
}
END_TEST

/*
 * A COMMIT that went through, then a file check that failed (the file
 * left the path meanwhile): the members are answered 503, and the counts
 * that rode the COMMIT are where its rows are, once: never put back to be
 * written again, the members never counted a second time.
 */
START_TEST(counts_committed_once)
{
	enum { N = 8 };
	struct metrics	*m = counted_group();
	int		 fired = 0;

	metrics_add(m, "requests", "hook", "unauthorized", 5);
	fault_set(FAULT_AFTER_COMMIT, fail_counting, &fired);
	one_batch(0, N);
	fault_set(FAULT_AFTER_COMMIT, NULL, NULL);
	ck_assert_int_eq(fired, 1);
	ck_assert_int_eq(answered(calls, N, HB_UNAVAILABLE), N);
	(void)settle(N);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), N);
	ck_assert_int_eq(persisted("unauthorized"), 5);
	ck_assert_int_eq(persisted("accepted"), N);
	ck_assert_int_eq(unflushed(m, "unauthorized"), 0);
	ck_assert_int_eq(unflushed(m, "unavailable"), 0);
	ck_assert_int_eq(unflushed(m, "accepted"), 0);

	/* The providers' retries: duplicates, each counted once. */
	one_batch(0, N);
	ck_assert_int_eq(answered(calls, N, HB_DUPLICATE), N);
	(void)settle(2 * N);
	ck_assert_int_eq(persisted("unauthorized"), 5);
	ck_assert_int_eq(persisted("accepted"), N);
	ck_assert_int_eq(persisted("duplicate"), N);
	ck_assert_int_eq(persisted("unavailable"), 0);
	group_free(grp);
	grp = NULL;
	metrics_free(m);
}
END_TEST

/* Fails only the k-th firing (*arg is k, counted down). */
static int
fail_kth(enum fault_point p, void *arg)
{
	int	*k = arg;

	(void)p;
	return --*k == 0;
}

/*
 * One member's outbox insert fails: it alone is rolled back to its
 * savepoint and answered 503, with no row of its own; the batch commits
 * the others whole.
 */
START_TEST(failing_member_alone)
{
	enum { N = 40 };
	struct group_stats	 st;
	const struct call	*bad = NULL;
	int			 i, k = 7;

	for (i = 0; i < N; i++)
		fresh(&calls[i], i);
	fault_set(FAULT_OUTBOX_INSERT, fail_kth, &k);
	hold_next(N, NULL);
	start_all(calls, N);
	join_all(calls, N);
	fault_set(FAULT_OUTBOX_INSERT, NULL, NULL);
	ck_assert_int_eq(answered(calls, N, HB_UNAVAILABLE), 1);
	ck_assert_int_eq(answered(calls, N, HB_ACCEPTED), N - 1);
	for (i = 0; i < N; i++)
		if (calls[i].res.result == HB_UNAVAILABLE)
			bad = &calls[i];
	ck_assert_ptr_nonnull(bad);
	ck_assert_str_eq(bad->res.action, "");
	ck_assert_int_eq(qf(state_path, "SELECT count(*) FROM receipts WHERE"
	    " job_id='%s'", bad->job), 0);
	ck_assert_int_eq(qf(state_path, "SELECT count(*) FROM job_state WHERE"
	    " job_id='%s'", bad->job), 0);
	ck_assert_int_eq(qf(state_path, "SELECT count(*) FROM accepted WHERE"
	    " job_id='%s'", bad->job), 0);
	/* Every other member has all four of its rows. */
	snapshot_is(state_path, "r39 j39 a39 o39 c0");
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE"
	    " result='accepted'"), N - 1);
	ck_assert_int_eq(q("SELECT count(*) FROM job_state WHERE"
	    " terminal='completed'"), N - 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts r JOIN accepted a"
	    " USING(action_id) JOIN outbox o USING(action_id) JOIN job_state j"
	    " ON j.job_id=r.job_id WHERE a.job_id=r.job_id"), N - 1);
	st = settle(N);
	ck_assert_int_eq(st.batches, 1);
	ck_assert_int_eq(st.failed, 0);
	ck_assert_int_eq(st.largest, N);

	/* Its retry is accepted (in a call of its own: bad is one of them). */
	completed(&calls[N], bad->job);
	fault_set(FAULT_GROUP_TAKE, NULL, NULL);
	serve(&calls[N]);
	ck_assert_int_eq(calls[N].res.result, HB_ACCEPTED);
	snapshot_is(state_path, "r40 j40 a40 o40 c0");
}
END_TEST

/*
 * Conflicts in the same batch as fresh observations, in a known order:
 * job-1 completed, then failed (a terminal conflict), job-twin completed
 * (its action id is job-1's: an action conflict), job-1 completed again
 * (a duplicate); then fresh jobs, all at once.  Each is answered as if it
 * had been alone, after the ones before it.
 */
START_TEST(conflicts_in_a_batch)
{
	enum { ORDERED = 4, N = ORDERED + 20 };
	struct group_stats	st;
	int			i;

	completed(&calls[0], "job-1");
	set_call(&calls[1], KEY, "job-1", "{\"type\":\"job_failed\","
	    "\"job_id\":\"job-1\",\"status\":\"failed\",\"error\":\"boom\"}");
	completed(&calls[2], "job-twin");
	completed(&calls[3], "job-1");
	for (i = ORDERED; i < N; i++)
		fresh(&calls[i], i);
	hold_next(N, NULL);
	start_in_order(calls, ORDERED, 0);
	start_all(calls + ORDERED, N - ORDERED);
	join_all(calls, N);
	ck_assert_int_eq(calls[0].res.result, HB_ACCEPTED);
	ck_assert_int_eq(calls[1].res.result, HB_CONFLICT);
	ck_assert_int_eq(calls[2].res.result, HB_ACTION_CONFLICT);
	ck_assert_str_eq(calls[2].res.action, ACTION1);
	ck_assert_int_eq(calls[3].res.result, HB_DUPLICATE);
	ck_assert_int_eq(answered(calls + ORDERED, N - ORDERED, HB_ACCEPTED),
	    N - ORDERED);
	/* Recorded: both conflicts, job-1 still completed, one action. */
	ck_assert_int_eq(q("SELECT count(*) FROM conflicts WHERE"
	    " kind='terminal' AND job_id='job-1' AND recorded='completed'"
	    " AND observed='failed'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM conflicts WHERE"
	    " kind='action' AND job_id='job-twin' AND action_id='" ACTION1
	    "'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM job_state WHERE"
	    " job_id='job-1' AND terminal='completed'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM accepted WHERE"
	    " action_id='" ACTION1 "' AND job_id='job-1'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE"
	    " result='conflict'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE"
	    " result='action_conflict'"), 1);
	snapshot_is(state_path, "r24 j22 a21 o21 c2");
	st = settle(N);
	ck_assert_int_eq(st.batches, 1);
	ck_assert_int_eq(st.largest, N);
}
END_TEST

/*
 * Refused requests never reach the writer: mixed with valid ones, all at
 * once, they are answered by webhook_prepare() (the parser, the key, or
 * accept_prepare()), and the batch holds exactly the valid ones, all
 * accepted.
 */
START_TEST(malformed_never_reach_the_writer)
{
	enum { VALID = 60, N = 2 * VALID };
	static const struct {
		const char	*key;
		const char	*body;
		enum hb_result	 want;
		const char	*endpoint;
	} bad[] = {
		/* Refused by the parser. */
		{ KEY, "{\"type\":\"job_completed\",\"job_id\":",
		    HB_MALFORMED, NULL },
		{ KEY, "{\"type\":\"job_completed\",\"status\":\"completed\"}",
		    HB_MALFORMED, NULL },
		{ KEY, "{\"type\":\"job_completed\",\"job_id\":\"f-001\","
		    "\"job_id\":\"f-002\",\"status\":\"completed\"}",
		    HB_MALFORMED, NULL },
		{ KEY, "{\"type\":\"job_completed\",\"job_id\":\"f\\u0001\","
		    "\"status\":\"completed\"}", HB_MALFORMED, NULL },
		/* By authentication. */
		{ "wrong-key-for-this", "{\"type\":\"job_completed\","
		    "\"job_id\":\"f-003\",\"status\":\"completed\"}",
		    HB_UNAUTHORIZED, NULL },
		{ NULL, "{\"type\":\"job_completed\",\"job_id\":\"f-004\","
		    "\"status\":\"completed\"}", HB_UNAUTHORIZED, NULL },
		/* Parsed and authenticated; accept_prepare() refuses them. */
		{ KEY, "{\"type\":\"job_completed\",\"job_id\":\"nope\","
		    "\"status\":\"completed\"}", HB_UNKNOWN_JOB, NULL },
		{ KEY, "{\"type\":\"job_completed\",\"job_id\":\"s-1\","
		    "\"status\":\"completed\"}", HB_UNKNOWN_ENDPOINT,
		    "sleepy-hook" },
	};
	const size_t		nbad = sizeof(bad) / sizeof(bad[0]);
	struct group_stats	st;
	int			i;

	/* Valid at even places, refused at odd ones. */
	for (i = 0; i < N; i++) {
		if (i % 2 == 0)
			fresh(&calls[i], i / 2);
		else {
			set_call(&calls[i], bad[(size_t)i % nbad].key, "", "%s",
			    bad[(size_t)i % nbad].body);
			calls[i].endpoint = bad[(size_t)i % nbad].endpoint;
		}
	}
	hold_next(VALID, NULL);
	start_all(calls, N);
	join_all(calls, N);
	for (i = 0; i < N; i++) {
		if (i % 2 == 0) {
			ck_assert_msg(calls[i].res.result == HB_ACCEPTED,
			    "call %d: %s", i,
			    hb_result_name(calls[i].res.result));
			continue;
		}
		ck_assert(!calls[i].prepared);
		ck_assert_msg(calls[i].res.result == bad[(size_t)i % nbad].want,
		    "call %d: %s, not %s", i,
		    hb_result_name(calls[i].res.result),
		    hb_result_name(bad[(size_t)i % nbad].want));
	}
	snapshot_is(state_path, "r60 j60 a60 o60 c0");
	st = settle(VALID);
	ck_assert_int_eq(st.observations, VALID);
	ck_assert_int_eq(st.batches, 1);
	ck_assert_int_eq(st.largest, VALID);
	ck_assert_int_eq(st.waiting, 0);
}
END_TEST

/*
 * The configuration changed while requests waited for the writer: the
 * batch looks their jobs up, so a job removed meanwhile is "unknown job"
 * and nothing is written for it, and a key revoked meanwhile (a new
 * version) sends its request back to the new snapshot, which refuses it.
 */
START_TEST(changed_while_waiting)
{
	struct config_cache_stats	cs;
	char				cpath[PATH_MAX];
	atomic_int			go;

	ck_assert_int_lt(snprintf(cpath, sizeof(cpath), "%s",
	    test_location(dir, "config.db")), (int)sizeof(cpath));
	fresh(&calls[0], 0);
	fresh(&calls[1], 1);
	atomic_store(&go, 0);
	hold_next(2, &go);
	start_all(calls, 2);
	wait_waiting(2);
	test_db_exec(cpath, "DELETE FROM jobs WHERE job_id = 'f-001'");
	atomic_store(&go, 1);
	join_all(calls, 2);
	ck_assert_int_eq(calls[0].res.result, HB_ACCEPTED);
	ck_assert_int_eq(calls[1].res.result, HB_UNKNOWN_JOB);
	snapshot_is(state_path, "r1 j1 a1 o1 c0");
	settle(2);

	fresh(&calls[2], 2);
	atomic_store(&go, 0);
	hold_next(1, &go);
	start_all(&calls[2], 1);
	wait_waiting(1);
	test_db_exec(cpath, "DELETE FROM secrets WHERE endpoint = 'hook'");
	atomic_store(&go, 1);
	join_all(&calls[2], 1);
	ck_assert_int_eq(calls[2].res.result, HB_UNAUTHORIZED);
	ck_assert_int_eq(calls[2].prepared, 0);
	snapshot_is(state_path, "r1 j1 a1 o1 c0");
	config_cache_stats(cache, &cs);
	ck_assert_int_eq(cs.batches, 2);
}
END_TEST

/* One observation after the other, on this thread, through g. */
static void
run_sequence(struct group *g, enum hb_result *got, char (*action)[64],
    int n, const struct call *seq)
{
	struct group	*saved = grp;
	int		 i;

	grp = g;
	for (i = 0; i < n; i++) {
		calls[i] = seq[i];
		serve(&calls[i]);
		got[i] = calls[i].res.result;
		snprintf(action[i], sizeof(action[i]), "%s",
		    calls[i].res.action);
	}
	grp = saved;
}

/*
 * One batch writes one job's state twice, and a body of bytes beyond
 * ASCII: on PostgreSQL one statement a table (store_put_set()), where
 * the two writes are one row, the later over the earlier, keeping what
 * only the earlier said (the file's key); the body's bytes are the
 * request's, through the set's text.  As on SQLite, a statement a row.
 */
START_TEST(one_job_twice_in_a_set)
{
	static const char	 body[] = "{\"type\":\"job_completed\","
	    "\"job_id\":\"f-041\",\"status\":\"completed\","
	    "\"key\":\"out/\xc3\xa9t\xc3\xa9 \\\"q\\\".mp4\"}";
	char			 hex[2 * sizeof(body) + 1];
	size_t			 i;

	set_call(&calls[0], KEY, "f-040", "{\"type\":\"job_progress\","
	    "\"job_id\":\"f-040\",\"stage\":\"downloading\","
	    "\"key\":\"out/early.mp4\"}");
	set_call(&calls[1], KEY, "f-040", "{\"type\":\"job_progress\","
	    "\"job_id\":\"f-040\",\"stage\":\"muxing\"}");
	set_call(&calls[2], KEY, "f-041", "%s", body);
	hold_next(3, NULL);
	start_in_order(calls, 2, 0);	/* the third lets the batch go */
	start(&calls[2]);
	join_all(calls, 3);
	ck_assert_int_eq(calls[0].res.result, HB_RECORDED);
	ck_assert_int_eq(calls[1].res.result, HB_RECORDED);
	ck_assert_int_eq(calls[2].res.result, HB_ACCEPTED);
	ck_assert_int_eq(settle(3).batches, 1);
	ck_assert_int_eq(q("SELECT count(*) FROM job_state WHERE"
	    " job_id='f-040'"), 1);
	ck_assert_int_eq(q("SELECT stage FROM job_state WHERE"
	    " job_id='f-040'"), OBS_STAGE_MUXING);
	ck_assert_int_eq(q("SELECT count(*) FROM job_state WHERE"
	    " job_id='f-040' AND file_key='out/early.mp4'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM job_state WHERE"
	    " job_id='f-041' AND file_key='out/\xc3\xa9t\xc3\xa9 \"q\".mp4'"),
	    1);
	for (i = 0; i < sizeof(body) - 1; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)body[i]);
	ck_assert_int_eq(qf(state_path, test_backend == TEST_SQLITE ?
	    "SELECT count(*) FROM receipts WHERE lower(hex(body)) = '%s'" :
	    "SELECT count(*) FROM receipts WHERE encode(body, 'hex') = '%s'",
	    hex), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE"
	    " job_id='f-040' AND endpoint='hook' AND delivery_id IS NULL"), 2);
	snapshot_is(state_path, "r3 j2 a1 o1 c0");
}
END_TEST

/*
 * Inline (a batch of one on the caller's thread) and threaded give the
 * same answers, the same rows, for a sequence with every kind of answer.
 */
START_TEST(inline_matches_threaded)
{
	enum { N = 10 };
	static const enum hb_result want[N] = {
		HB_ACCEPTED, HB_DUPLICATE, HB_CONFLICT, HB_ACTION_CONFLICT,
		HB_RECORDED, HB_STALE, HB_IGNORED, HB_RECORDED, HB_ACCEPTED,
		HB_UNKNOWN_JOB,
	};
	static struct call	 seq[N];
	enum hb_result		 got_inline[N], got_threaded[N];
	char			 act_inline[N][64], act_threaded[N][64];
	char			 other[PATH_MAX], a[128], b[128];
	struct group		*inl;
	struct group_stats	 st;
	int			 i;

	completed(&seq[0], "job-1");
	completed(&seq[1], "job-1");
	set_call(&seq[2], KEY, "job-1", "{\"type\":\"job_failed\","
	    "\"job_id\":\"job-1\",\"status\":\"failed\",\"error\":\"x\"}");
	completed(&seq[3], "job-twin");
	set_call(&seq[4], KEY, "f-000", "{\"type\":\"job_progress\","
	    "\"job_id\":\"f-000\",\"stage\":\"muxing\"}");
	set_call(&seq[5], KEY, "f-000", "{\"type\":\"job_progress\","
	    "\"job_id\":\"f-000\",\"stage\":\"downloading\"}");
	set_call(&seq[6], KEY, "f-000", "{\"type\":\"job_archived\","
	    "\"job_id\":\"f-000\"}");
	set_call(&seq[7], KEY, "", "{\"type\":\"batch_completed\","
	    "\"batch_id\":\"b-1\",\"completed\":2,\"failed\":0,\"total\":2}");
	completed(&seq[8], "f-000");
	completed(&seq[9], "nope");

	/* The logic is the backends' both: on one, a second file. */
	if (test_backend != TEST_SQLITE)
		return;
	test_path(other, sizeof(other), dir, "inline.db");
	state_create(other);
	inl = test_group_new(other, 0, cache);
	run_sequence(inl, got_inline, act_inline, N, seq);
	run_sequence(grp, got_threaded, act_threaded, N, seq);
	for (i = 0; i < N; i++) {
		ck_assert_msg(got_inline[i] == want[i], "inline %d: %s", i,
		    hb_result_name(got_inline[i]));
		ck_assert_msg(got_threaded[i] == want[i], "threaded %d: %s", i,
		    hb_result_name(got_threaded[i]));
		ck_assert_str_eq(act_inline[i], act_threaded[i]);
	}
	test_state_snapshot(other, a, sizeof(a));
	test_state_snapshot(state_path, b, sizeof(b));
	ck_assert_str_eq(a, b);
	ck_assert_str_eq(a, "r9 j3 a2 o2 c2");
	/*
	 * One batch each: all ten reached a writer, the unknown job too:
	 * its batch looked it up and wrote nothing for it.
	 */
	group_stats(inl, &st);
	ck_assert_int_eq(st.batches, N);
	ck_assert_int_eq(st.largest, 1);
	ck_assert_int_eq(st.waiting, 0);
	st = settle(N);
	ck_assert_int_eq(st.batches, N);
	ck_assert_int_eq(st.largest, 1);
	group_free(inl);
}
END_TEST

/* A byte copy of one closed, checkpointed database file. */
static void
copy_file(const char *from, const char *to)
{
	char	buf[65536];
	ssize_t	n;
	int	in, out;

	ck_assert_int_ge(in = open(from, O_RDONLY | O_CLOEXEC), 0);
	ck_assert_int_ge(out = open(to, O_WRONLY | O_CREAT | O_TRUNC |
	    O_CLOEXEC, 0600), 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(fsync(out), 0);
	close(in);
	close(out);
}

static void
checkpoint(const char *path)
{
	test_db_exec(path, "PRAGMA wal_checkpoint(TRUNCATE)");
}

static enum hb_result
accept_job(const char *job)
{
	memset(&calls[0], 0, sizeof(calls[0]));
	completed(&calls[0], job);
	serve(&calls[0]);
	return calls[0].res.result;
}

/*
 * state.db removed, then replaced, under a running group: nothing is
 * written into the file that left the path; the next batch opens the one
 * now there.
 */
START_TEST(state_file_replaced)
{
	char	moved[PATH_MAX], restored[PATH_MAX], old[PATH_MAX];

	if (test_backend != TEST_SQLITE)
		return;		/* a file's: PostgreSQL has none of ours */
	test_path(moved, sizeof(moved), dir, "moved.db");
	test_path(restored, sizeof(restored), dir, "restored.db");
	test_path(old, sizeof(old), dir, "old.db");

	ck_assert_int_eq(accept_job("f-000"), HB_ACCEPTED);

	/* Removed: 503, and no file made at the path either. */
	checkpoint(state_path);
	ck_assert_int_eq(rename(state_path, moved), 0);
	ck_assert_int_eq(accept_job("f-001"), HB_UNAVAILABLE);
	ck_assert_int_eq(accept_job("f-001"), HB_UNAVAILABLE);
	ck_assert_int_eq(access(state_path, F_OK), -1);
	snapshot_is(moved, "r1 j1 a1 o1 c0");

	/* A copy put back at the path: the next batch writes there. */
	copy_file(moved, restored);
	ck_assert_int_eq(rename(restored, state_path), 0);
	ck_assert_int_eq(accept_job("f-001"), HB_ACCEPTED);
	snapshot_is(state_path, "r2 j2 a2 o2 c0");
	snapshot_is(moved, "r1 j1 a1 o1 c0");

	/*
	 * Renamed over while the group has it open (a restore): the file
	 * that left the path, still reachable as old.db, gets nothing more.
	 */
	checkpoint(state_path);
	ck_assert_int_eq(link(state_path, old), 0);
	copy_file(old, restored);
	ck_assert_int_eq(rename(restored, state_path), 0);
	ck_assert_int_eq(accept_job("f-002"), HB_ACCEPTED);
	ck_assert_int_eq(accept_job("f-002"), HB_DUPLICATE);
	snapshot_is(state_path, "r4 j3 a3 o3 c0");
	snapshot_is(old, "r2 j2 a2 o2 c0");
	ck_assert_int_eq(q("SELECT count(*) FROM accepted WHERE"
	    " job_id='f-002'"), 1);
}
END_TEST

/*
 * group_free() with observations still waiting: the writer is held until
 * the stop was asked for (group_free() is joining it), with more waiting
 * than one batch takes, so that the writer meets the stop with work left;
 * every waiting observation is answered, and committed, before
 * group_free() returns.
 */
START_TEST(free_answers_the_waiting)
{
	enum { N = GROUP_BATCH_MAX + 8 };
	char	want[64];
	int	i;

	for (i = 0; i < N; i++)
		fresh(&calls[i], i);
	atomic_store(&joining, 0);
	hold_next(N, &joining);
	start_all(calls, N);
	wait_waiting(N);
	group_free(grp);
	grp = NULL;
	/* The writer's answers were written before it was joined. */
	for (i = 0; i < N; i++)
		ck_assert_msg(calls[i].res.result == HB_ACCEPTED,
		    "call %d not answered before group_free() returned: %d", i,
		    (int)calls[i].res.result);
	snprintf(want, sizeof(want), "r%d j%d a%d o%d c0", N, N, N, N);
	snapshot_is(state_path, want);
	join_all(calls, N);
}
END_TEST

/* Calls group_quiet() over and over until stop is set. */
static void *
quieter(void *arg)
{
	atomic_int	*stop = arg;

	while (!atomic_load(stop))
		(void)group_quiet(grp);
	return NULL;
}

/*
 * A quiet process's writer gives back its page cache (SQLite; a server's
 * connection has none to give), and the next batch reads its pages
 * again; asked while batches run, it waits for none and breaks none.
 */
START_TEST(quiet_gives_back_the_cache)
{
	enum { N = 64 };
	atomic_int	stop;
	pthread_t	tid;
	size_t		given;
	char		want[64];
	int		i;

	/* Before the first batch, no connection: nothing held. */
	ck_assert_uint_eq(group_quiet(grp), 0);
	for (i = 0; i < N; i++)
		fresh(&calls[i], i);
	start_all(calls, N);
	join_all(calls, N);
	ck_assert_int_eq(answered(calls, N, HB_ACCEPTED), N);
	(void)settle(N);
	given = group_quiet(grp);
	if (test_backend == TEST_SQLITE)
		ck_assert_msg(given >= 4096, "the cache held %zu bytes", given);
	else
		ck_assert_uint_eq(given, 0);
	ck_assert_uint_eq(group_quiet(grp), 0);

	/* Asked all along while the next batches run. */
	atomic_store(&stop, 0);
	ck_assert_int_eq(pthread_create(&tid, NULL, quieter, &stop), 0);
	for (i = 0; i < N; i++)
		fresh(&calls[i], N + i);
	start_all(calls, N);
	join_all(calls, N);
	atomic_store(&stop, 1);
	ck_assert_int_eq(pthread_join(tid, NULL), 0);
	ck_assert_int_eq(answered(calls, N, HB_ACCEPTED), N);
	snprintf(want, sizeof(want), "r%d j%d a%d o%d c0", 2 * N, 2 * N,
	    2 * N, 2 * N);
	snapshot_is(state_path, want);
}
END_TEST

static Suite *
group_suite(void)
{
	Suite	*s = suite_create("group");
	TCase	*tc = tcase_create("batches");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, one_action_from_one_batch);
	tcase_add_test(tc, batch_capped);
	tcase_add_test(tc, failed_commit_fails_every_member);
	tcase_add_test(tc, counts_ride_the_commit);
	tcase_add_test(tc, counts_kept_when_their_write_fails);
	tcase_add_test(tc, three_round_trips_a_batch);
	tcase_add_test(tc, counts_committed_once);
	tcase_add_test(tc, failing_member_alone);
	tcase_add_test(tc, conflicts_in_a_batch);
	tcase_add_test(tc, malformed_never_reach_the_writer);
	tcase_add_test(tc, one_job_twice_in_a_set);
	tcase_add_test(tc, inline_matches_threaded);
	tcase_add_test(tc, changed_while_waiting);
	tcase_add_test(tc, state_file_replaced);
	tcase_add_test(tc, free_answers_the_waiting);
	tcase_add_test(tc, quiet_gives_back_the_cache);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (util_init() != 0)
		return 1;
	return test_run_backends(group_suite, "group");
}
