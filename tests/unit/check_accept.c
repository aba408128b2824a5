/*
 * check_accept.c: the acceptance routine against real databases, and
 * every library failure window tests/README.md lists: the whole suite
 * runs on SQLite files, then on PostgreSQL databases (test_run_backends()),
 * where a window needs another means (another connection's lock instead
 * of a file's) the test says so; and PostgreSQL's own windows: a role
 * without the write grant, a connection cut by the server, a batch whose
 * one member cannot have its job's lock.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "base/fault.h"
#include "db/db.h"
#include "intake/accept.h"
#include "intake/group.h"
#include "store/tenant.h"
#include "testutil.h"
#include "base/util.h"
#include "provider/tornado.h"

static char		 dir[PATH_MAX - 32];
static char		 state_path[PATH_MAX];
static struct store	*st;
static struct config	*cfg;

/* A tenant with its destination "sink". */
static void
add_tenant(struct config *w, const char *id, int active)
{
	test_add_tenant(w, id, active);
	test_add_destination(w, id, "sink");
}

static void
open_both(int busy_ms, struct store **s, struct config **c)
{
	*s = test_store_open(dir, busy_ms, 0);
	*c = test_config_open(dir, CONFIG_READ, busy_ms);
}

static void
setup(void)
{
	struct config	*w;

	snprintf(dir, sizeof(dir), "%s", test_tmpdir());
	ck_assert_int_lt(snprintf(state_path, sizeof(state_path), "%s",
	    test_location(dir, "state.db")), (int)sizeof(state_path));
	w = test_config_create(dir);
	add_tenant(w, "acme", 1);
	add_tenant(w, "other", 1);
	add_tenant(w, "sleepy", 0);
	test_add_job(w, "acme", "job-1", "att-42", "sink");
	test_add_job(w, "acme", "job-2", "att-42", "sink");	/* same action */
	test_add_job(w, "acme", "job-3", "att-43", "sink");
	test_add_job(w, "other", "job-x", "att-1", "sink");
	test_add_job(w, "sleepy", "job-s", "att-1", "sink");
	config_close(w);
	st = test_store_open(dir, 1000, 1);
	cfg = test_config_open(dir, CONFIG_READ, 1000);
}

static void
teardown(void)
{
	fault_set(FAULT_OUTBOX_INSERT, NULL, NULL);
	fault_set(FAULT_BEFORE_COMMIT, NULL, NULL);
	store_close(st);
	config_close(cfg);
	st = NULL;
	cfg = NULL;
	test_rmdir(dir);
}

/* One integer from state.db through a connection of the test's own. */
static long long
q(const char *sql)
{
	return test_db_int(state_path, sql);
}

/* q() with a text per backend, where the dialects differ. */
static long long
q2(const char *sqlite, const char *pg)
{
	return q(test_backend == TEST_SQLITE ? sqlite : pg);
}

/*
 * PostgreSQL: a connection of the test's own to the test's database (as
 * another host's would be), with the state's names.
 */
static struct db *
pg_other(const char *conninfo)
{
	struct db	*db = NULL;
	char		 why[256];

	ck_assert_msg(db_open_pg(conninfo, 10000, 0, NULL, 0, &db, why,
	    sizeof(why)) == DB_OK, "%s", why);
	ck_assert_int_eq(db_exec(db, "SET search_path = hookbox_state,"
	    " hookbox_config"), DB_OK);
	return db;
}

static void
snapshot(char *buf, size_t len)
{
	test_state_snapshot(state_path, buf, len);
}

enum kind { POLL, CALLBACK, EVENT };

static enum hb_result
run_with(struct store *s, struct config *c, const char *tenant,
    enum kind kind, const char *json, struct accept_res *res)
{
	struct accept_req	 req;
	struct obs		 o;
	enum tornado_err	 e;
	char			 why[128];

	switch (kind) {
	case POLL:
		e = tornado_parse_poll(json, strlen(json), &o, why,
		    sizeof(why));
		break;
	case CALLBACK:
		e = tornado_parse_callback(json, strlen(json), &o, why,
		    sizeof(why));
		break;
	default:
		e = tornado_parse_event(json, strlen(json), &o, why,
		    sizeof(why));
		break;
	}
	ck_assert_msg(e == TORNADO_OK, "parse: %s", why);
	memset(&req, 0, sizeof(req));
	req.tenant = tenant;
	req.endpoint = kind == POLL ? NULL : "hook";
	req.obs = &o;
	req.body = json;
	req.bodylen = strlen(json);
	req.now_ms = util_now_ms();
	return accept_observation(s, c, &req, res);
}

static enum hb_result
run(const char *tenant, enum kind kind, const char *json)
{
	struct accept_res	res;

	return run_with(st, cfg, tenant, kind, json, &res);
}

static const char completed1[] = "{\"type\":\"job_completed\","
    "\"job_id\":\"job-1\",\"status\":\"completed\",\"key\":\"out/1.mp4\","
    "\"url\":\"https://cdn.example/out/1.mp4\"}";
static const char failed1[] = "{\"type\":\"job_failed\",\"job_id\":\"job-1\","
    "\"status\":\"failed\",\"error\":\"boom\"}";

START_TEST(same_event_twice)
{
	struct accept_res	res;

	ck_assert_int_eq(run_with(st, cfg, "acme", CALLBACK, completed1, &res),
	    HB_ACCEPTED);
	ck_assert_str_eq(res.action, "acme:att-42:analyze-v1");
	ck_assert_int_eq(run_with(st, cfg, "acme", CALLBACK, completed1, &res),
	    HB_DUPLICATE);
	ck_assert_str_eq(res.action, "acme:att-42:analyze-v1");
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM accepted"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), 2);
	ck_assert_int_eq(q2("SELECT count(*) FROM outbox WHERE state='pending'"
	    " AND action_id='acme:att-42:analyze-v1' AND destination='sink'"
	    " AND json_extract(payload,'$.file.key')='out/1.mp4'",
	    "SELECT count(*) FROM outbox WHERE state='pending'"
	    " AND action_id='acme:att-42:analyze-v1' AND destination='sink'"
	    " AND payload::json->'file'->>'key' = 'out/1.mp4'"), 1);
}
END_TEST

/*
 * A subject's event (hookbox(7), Versioned events), as a mapped endpoint
 * gives it: subject a-1 of tenant acme, from endpoint ep, in namespace
 * space, its actions to dest.
 */
static enum hb_result
event_body(const char *ep, const char *space, const char *dest,
    const char *id, int64_t v, int64_t t, int undo, const char *step,
    int carry, const char *body, size_t len, struct accept_res *res)
{
	struct accept_req	req;
	struct obs		o;

	memset(&o, 0, sizeof(o));
	o.source = OBS_SRC_EVENT;
	o.event = OBS_EV_SUBJECT;
	(void)snprintf(o.type, sizeof(o.type), "asset.%s", step);
	(void)snprintf(o.job_id, sizeof(o.job_id), "a-1");
	(void)snprintf(o.delivery_id, sizeof(o.delivery_id), "%s", id);
	(void)snprintf(o.step, sizeof(o.step), "%s", step);
	o.version = v;
	o.occurred_ms = t;
	o.undo = undo;
	memset(&req, 0, sizeof(req));
	req.tenant = "acme";
	req.endpoint = ep;
	req.destination = dest;
	req.space = space;
	req.obs = &o;
	req.carry = carry;
	req.body = body;
	req.bodylen = len;
	req.now_ms = util_now_ms();
	return accept_observation(st, cfg, &req, res);
}

/* event_body() with the body "{}", which travels with no action. */
static enum hb_result
event_at(const char *ep, const char *space, const char *dest,
    const char *id, int64_t v, int64_t t, int undo, const char *step,
    struct accept_res *res)
{
	return event_body(ep, space, dest, id, v, t, undo, step, 0, "{}", 2,
	    res);
}

/* event_at() from endpoint "cms", in its own namespace, to "sink". */
static enum hb_result
event(const char *id, int64_t v, int64_t t, int undo, const char *step,
    struct accept_res *res)
{
	return event_at("cms", "cms", "sink", id, v, t, undo, step, res);
}

/*
 * The versioned rules against the real tables: an older event changes
 * nothing and makes no action; the same event under another id, or the
 * same id again, is a duplicate; an undo makes its own action, and an
 * approval older than it is stale; two events of one version and time
 * that contradict are a conflict.  Every receipt keeps its version.
 */
START_TEST(subject_versions)
{
	static const struct {
		const char	*id;
		int64_t		 v, t;
		int		 undo;
		const char	*step;
		enum hb_result	 result;
		const char	*action;
	} ev[] = {
		{ "e-1", 2, 1000, 0, "publish", HB_ACCEPTED,
		    "acme:cms/a-1:2:publish" },
		{ "e-2", 3, 2000, 0, "publish", HB_ACCEPTED,
		    "acme:cms/a-1:3:publish" },
		{ "e-3", 2, 3000, 0, "publish", HB_STALE, "acme:cms/a-1:2:publish" },
		{ "e-1", 2, 1000, 0, "publish", HB_DUPLICATE,
		    "acme:cms/a-1:2:publish" },
		{ "e-4", 3, 2000, 0, "publish", HB_DUPLICATE,
		    "acme:cms/a-1:3:publish" },
		{ "e-5", 3, 4000, 1, "unpublish", HB_ACCEPTED,
		    "acme:cms/a-1:3:unpublish" },
		{ "e-6", 3, 3000, 0, "publish", HB_STALE, "acme:cms/a-1:3:publish" },
		{ "e-7", 3, 4000, 0, "publish", HB_CONFLICT,
		    "acme:cms/a-1:3:publish" },
	};
	struct accept_res	res;
	size_t			i;

	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		ck_assert_msg(event(ev[i].id, ev[i].v, ev[i].t, ev[i].undo,
		    ev[i].step, &res) == ev[i].result, "event %zu: %s", i,
		    hb_result_name(res.result));
		ck_assert_str_eq(res.action, ev[i].action);
	}
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 3);
	ck_assert_int_eq(q("SELECT count(*) FROM accepted WHERE job_id ="
	    " 'cms/a-1' AND attempt IN ('cms/a-1:2', 'cms/a-1:3')"), 3);
	/* The undo's state stands: version 3 at 4000, unpublished. */
	ck_assert_int_eq(q("SELECT count(*) FROM subjects WHERE tenant = 'acme'"
	    " AND subject = 'cms/a-1' AND version = 3 AND occurred_at = 4000"
	    " AND effect = 'undo' AND step = 'unpublish'"
	    " AND type = 'asset.unpublish'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM conflicts WHERE kind ="
	    " 'version' AND job_id = 'cms/a-1' AND recorded = 'undo unpublish v3'"
	    " AND observed = 'do publish v3'"), 1);
	/* Every event but the repeated id has its receipt, with version. */
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), 7);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE source ="
	    " 'event' AND job_id = 'a-1' AND version IS NOT NULL AND"
	    " occurred_at IS NOT NULL AND status IS NULL"), 7);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE delivery_id ="
	    " 'e-3' AND result = 'stale' AND version = 2"), 1);
	/* What the downstream gets: enough to compare versions too. */
	ck_assert_int_eq(q2("SELECT count(*) FROM outbox WHERE action_id ="
	    " 'acme:cms/a-1:3:unpublish' AND destination = 'sink'"
	    " AND json_extract(payload, '$.namespace') = 'cms'"
	    " AND json_extract(payload, '$.subject') = 'a-1'"
	    " AND json_extract(payload, '$.version') = 3"
	    " AND json_extract(payload, '$.effect') = 'undo'"
	    " AND json_extract(payload, '$.step') = 'unpublish'"
	    " AND json_extract(payload, '$.type') = 'asset.unpublish'"
	    " AND json_extract(payload, '$.event_id') = 'e-5'"
	    " AND json_extract(payload, '$.occurred_at_ms') = 4000",
	    "SELECT count(*) FROM outbox WHERE action_id ="
	    " 'acme:cms/a-1:3:unpublish' AND destination = 'sink'"
	    " AND payload::json->>'namespace' = 'cms'"
	    " AND payload::json->>'subject' = 'a-1'"
	    " AND (payload::json->>'version')::int = 3"
	    " AND payload::json->>'effect' = 'undo'"
	    " AND payload::json->>'step' = 'unpublish'"
	    " AND payload::json->>'type' = 'asset.unpublish'"
	    " AND payload::json->>'event_id' = 'e-5'"
	    " AND (payload::json->>'occurred_at_ms')::bigint = 4000"), 1);
}
END_TEST

/*
 * The server refuses to insert action's outbox row (a trigger), so that
 * the statement that writes it fails as a full disk's would; NULL: it
 * takes every row again.
 */
static void
refuse_outbox(const char *action)
{
	char	sql[512];

	if (action == NULL)
		(void)snprintf(sql, sizeof(sql), "%s", test_backend ==
		    TEST_SQLITE ? "DROP TRIGGER refuse" :
		    "DROP TRIGGER refuse ON outbox; DROP FUNCTION refuse()");
	else if (test_backend == TEST_SQLITE)
		(void)snprintf(sql, sizeof(sql), "CREATE TRIGGER refuse BEFORE"
		    " INSERT ON outbox WHEN NEW.action_id = '%s' BEGIN SELECT"
		    " RAISE(ABORT, 'refused'); END", action);
	else
		(void)snprintf(sql, sizeof(sql), "CREATE FUNCTION refuse()"
		    " RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RAISE"
		    " EXCEPTION 'refused'; END$$; CREATE TRIGGER refuse BEFORE"
		    " INSERT ON outbox FOR EACH ROW WHEN (NEW.action_id ="
		    " '%s') EXECUTE FUNCTION refuse()", action);
	test_db_exec(state_path, sql);
}

/*
 * A fan-out's event (provider/mapping.h): of subject a-1 from endpoint
 * cms, its first step publish to sink, then purge to cdn and index to
 * search (the first nmore of those), into *p prepared, its answer in
 * *res.  Returns accept_prepare()'s.
 */
static const struct mapping_step fan_steps[] = {
	{ "purge", "cdn" }, { "index", "search" },
};

static int
fan_prepare(struct accept_req *req, struct obs *o, const char *id,
    int64_t v, int64_t t, size_t nmore, struct accept_prep *p,
    struct accept_res *res)
{
	memset(o, 0, sizeof(*o));
	o->source = OBS_SRC_EVENT;
	o->event = OBS_EV_SUBJECT;
	(void)snprintf(o->type, sizeof(o->type), "asset.replaced");
	(void)snprintf(o->job_id, sizeof(o->job_id), "a-1");
	(void)snprintf(o->delivery_id, sizeof(o->delivery_id), "%s", id);
	(void)snprintf(o->step, sizeof(o->step), "publish");
	o->version = v;
	o->occurred_ms = t;
	memset(req, 0, sizeof(*req));
	req->tenant = "acme";
	req->endpoint = "cms";
	req->destination = "sink";
	req->space = "cms";
	req->obs = o;
	req->more = fan_steps;
	req->nmore = nmore;
	req->body = "{}";
	req->bodylen = 2;
	req->now_ms = util_now_ms();
	return p != NULL ? accept_prepare(cfg, req, p, res) : 0;
}

/* fan_prepare(), then the event accepted alone. */
static enum hb_result
fan(const char *id, int64_t v, int64_t t, size_t nmore,
    struct accept_res *res)
{
	struct accept_req	req;
	struct obs		o;

	(void)fan_prepare(&req, &o, id, v, t, nmore, NULL, NULL);
	return accept_observation(st, cfg, &req, res);
}

/*
 * A fan-out: one event, one receipt and one subject state, an action for
 * each step with its own destination; the event again, or another id of
 * it, makes none; an older one is stale for every step; a newer one
 * makes each again; a step acted on before (by an event of that step
 * alone) is a duplicate while the others are accepted.  The answer names
 * every action.
 */
START_TEST(fanout_steps)
{
	struct accept_res	res;
	char			buf[ACCEPT_JSON_MAX];

	ck_assert_int_eq(fan("f-1", 1, 1000, 2, &res), HB_ACCEPTED);
	ck_assert_str_eq(res.action, "acme:cms/a-1:1:publish");
	ck_assert_uint_eq(res.nmore, 2);
	ck_assert_int_eq(accept_res_json(&res, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "{\"result\":\"accepted\","
	    "\"action\":\"acme:cms/a-1:1:publish\",\"actions\":["
	    "\"acme:cms/a-1:1:publish\",\"acme:cms/a-1:1:purge\","
	    "\"acme:cms/a-1:1:index\"]}");
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM subjects"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM accepted WHERE job_id ="
	    " 'cms/a-1'"), 3);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox WHERE"
	    " (action_id = 'acme:cms/a-1:1:publish' AND destination = 'sink')"
	    " OR (action_id = 'acme:cms/a-1:1:purge' AND destination = 'cdn')"
	    " OR (action_id = 'acme:cms/a-1:1:index' AND"
	    " destination = 'search')"), 3);
	/* Each payload names its own step and action. */
	ck_assert_int_eq(q2("SELECT count(*) FROM outbox WHERE"
	    " json_extract(payload, '$.step') = substr(action_id, 16)"
	    " AND json_extract(payload, '$.action') = action_id",
	    "SELECT count(*) FROM outbox WHERE"
	    " payload::json->>'step' = substr(action_id, 16)"
	    " AND payload::json->>'action' = action_id"), 3);

	ck_assert_int_eq(fan("f-1", 1, 1000, 2, &res), HB_DUPLICATE);
	ck_assert_int_eq(fan("f-2", 1, 1000, 2, &res), HB_DUPLICATE);
	ck_assert_uint_eq(res.nmore, 2);
	ck_assert_int_eq(fan("f-3", 0, 3000, 2, &res), HB_STALE);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 3);

	ck_assert_int_eq(fan("f-4", 2, 1000, 2, &res), HB_ACCEPTED);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox WHERE action_id LIKE"
	    " 'acme:cms/a-1:2:%'"), 3);

	/* v3's publish alone, then v3 later with its fan-out. */
	ck_assert_int_eq(fan("f-5", 3, 1000, 0, &res), HB_ACCEPTED);
	ck_assert_uint_eq(res.nmore, 0);
	ck_assert_int_eq(fan("f-6", 3, 2000, 1, &res), HB_ACCEPTED);
	ck_assert_str_eq(res.action, "acme:cms/a-1:3:publish");
	ck_assert_ptr_null(res.detail);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox WHERE action_id LIKE"
	    " 'acme:cms/a-1:3:%'"), 2);
	/* Its receipt says what its answer does. */
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE delivery_id ="
	    " 'f-6' AND result = 'accepted'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), 6);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 8);
}
END_TEST

/*
 * A fan-out in a batch: its event and the same event under another id in
 * one batch make each step's action once.  When one step's row is
 * refused, that observation alone is answered 503 and nothing of it
 * stays, not its receipt nor its other steps; the batch's other member
 * is accepted.
 */
START_TEST(fanout_batch)
{
	struct accept_req		 req[3];
	struct obs			 o[3];
	struct accept_prep		 p[3];
	struct accept_res		 r[3];
	const struct accept_prep	*pp[3] = { &p[0], &p[1], &p[2] };
	struct accept_res		*rp[3] = { &r[0], &r[1], &r[2] };

	ck_assert_int_eq(fan_prepare(&req[0], &o[0], "b-1", 1, 1000, 2, &p[0],
	    &r[0]), 0);
	ck_assert_int_eq(fan_prepare(&req[1], &o[1], "b-2", 1, 1000, 2, &p[1],
	    &r[1]), 0);
	ck_assert_int_eq(store_begin(st), STORE_OK);
	ck_assert_int_eq(accept_batch(st, 2, pp, rp, NULL), STORE_OK);
	ck_assert_int_eq(store_commit(st), STORE_OK);
	ck_assert_int_eq(r[0].result, HB_ACCEPTED);
	ck_assert_int_eq(r[1].result, HB_DUPLICATE);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 3);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), 2);

	refuse_outbox("acme:cms/a-1:2:index");
	ck_assert_int_eq(fan_prepare(&req[0], &o[0], "b-3", 2, 1000, 2, &p[0],
	    &r[0]), 0);
	ck_assert_int_eq(run_with(st, cfg, "acme", CALLBACK, completed1,
	    &r[2]), HB_ACCEPTED);	/* job-1's action, claimed now */
	ck_assert_int_eq(fan_prepare(&req[1], &o[1], "b-4", 4, 1000, 1, &p[1],
	    &r[1]), 0);
	ck_assert_int_eq(store_begin(st), STORE_OK);
	ck_assert_int_eq(accept_batch(st, 2, pp, rp, NULL), STORE_OK);
	ck_assert_int_eq(store_commit(st), STORE_OK);
	ck_assert_int_eq(r[0].result, HB_UNAVAILABLE);
	ck_assert_int_eq(r[1].result, HB_ACCEPTED);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE delivery_id ="
	    " 'b-3'"), 0);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox WHERE action_id LIKE"
	    " 'acme:cms/a-1:2:%'"), 0);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox WHERE action_id LIKE"
	    " 'acme:cms/a-1:4:%'"), 2);
	refuse_outbox(NULL);
}
END_TEST

/*
 * A fan-out's step that is no name, or more steps than an event makes:
 * malformed, nothing written.
 */
START_TEST(fanout_bad_steps)
{
	struct mapping_step	m[MAPPING_FANOUT_MAX];
	struct accept_req	req;
	struct accept_res	res;
	struct obs		o;
	char			snap[128];
	size_t			i;

	(void)fan_prepare(&req, &o, "l-1", 1, 1000, 0, NULL, NULL);
	memset(m, 0, sizeof(m));
	for (i = 0; i < MAPPING_FANOUT_MAX; i++) {
		(void)snprintf(m[i].name, sizeof(m[i].name), "s%zu", i);
		(void)snprintf(m[i].destination, sizeof(m[i].destination),
		    "cdn");
	}
	req.more = m;
	req.nmore = MAPPING_FANOUT_MAX;
	ck_assert_int_eq(accept_observation(st, cfg, &req, &res),
	    HB_MALFORMED);
	ck_assert_str_eq(res.detail, "more steps than an event makes");
	(void)snprintf(m[1].name, sizeof(m[1].name), "a:b");
	req.nmore = 2;
	ck_assert_int_eq(accept_observation(st, cfg, &req, &res),
	    HB_MALFORMED);
	m[1].name[1] = '-';
	m[1].destination[0] = '\0';
	ck_assert_int_eq(accept_observation(st, cfg, &req, &res),
	    HB_MALFORMED);
	snapshot(snap, sizeof(snap));
	ck_assert_str_eq(snap, "r0 j0 a0 o0 c0");
	/* One fewer, each a name: all of them. */
	m[1].destination[0] = 'c';
	req.nmore = MAPPING_FANOUT_MAX - 1;
	ck_assert_int_eq(accept_observation(st, cfg, &req, &res),
	    HB_ACCEPTED);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), MAPPING_FANOUT_MAX);
}
END_TEST

/*
 * The payload's integers keep every digit: the highest version a mapping
 * reads (2^53 - 1), which cJSON's printing of a double cut to fifteen
 * significant digits, reaches the downstream as it came.
 */
START_TEST(payload_integers_exact)
{
	struct accept_res	res;

	ck_assert_int_eq(event("e-1", 9007199254740991LL, 1714557600123LL, 0,
	    "publish", &res), HB_ACCEPTED);
	ck_assert_str_eq(res.action, "acme:cms/a-1:9007199254740991:publish");
	ck_assert_int_eq(q2("SELECT count(*) FROM outbox WHERE"
	    " instr(payload, '\"version\":9007199254740991,') > 0"
	    " AND instr(payload, '\"occurred_at_ms\":1714557600123,') > 0",
	    "SELECT count(*) FROM outbox WHERE"
	    " strpos(payload, '\"version\":9007199254740991,') > 0"
	    " AND strpos(payload, '\"occurred_at_ms\":1714557600123,') > 0"),
	    1);
}
END_TEST

/*
 * The provider's body travels with the action as "data", byte for byte
 * as received (a number of seventeen digits too), the request's len bytes
 * and no more; a mapping with "carry": false sends none.
 */
START_TEST(payload_carries_body)
{
	static const char	 body[] = "{\"id\":\"e-1\",\"output\":"
	    "[\"https://cdn.example/a.mp4\"],\"n\":12345678901234567}XYZ";
	struct accept_res	 res;

	ck_assert_int_eq(event_body("cms", "cms", "sink", "e-1", 2, 1000, 0,
	    "publish", 1, body, strlen(body) - 3, &res), HB_ACCEPTED);
	ck_assert_int_eq(event_body("cms", "cms", "sink", "e-2", 3, 2000, 0,
	    "publish", 0, body, strlen(body) - 3, &res), HB_ACCEPTED);
	ck_assert_int_eq(q2("SELECT count(*) FROM outbox WHERE action_id ="
	    " 'acme:cms/a-1:2:publish' AND substr(payload, length(payload) -"
	    " 81) = ',\"data\":{\"id\":\"e-1\",\"output\":"
	    "[\"https://cdn.example/a.mp4\"],\"n\":12345678901234567}}'",
	    "SELECT count(*) FROM outbox WHERE action_id ="
	    " 'acme:cms/a-1:2:publish' AND right(payload, 82) ="
	    " ',\"data\":{\"id\":\"e-1\",\"output\":"
	    "[\"https://cdn.example/a.mp4\"],\"n\":12345678901234567}}'"), 1);
	ck_assert_int_eq(q2("SELECT count(*) FROM outbox WHERE action_id ="
	    " 'acme:cms/a-1:3:publish' AND instr(payload, '\"data\"') = 0",
	    "SELECT count(*) FROM outbox WHERE action_id ="
	    " 'acme:cms/a-1:3:publish' AND strpos(payload, '\"data\"') = 0"),
	    1);
}
END_TEST

/*
 * One tenant's rows as a whole (store/tenant.h), as the disorder tester
 * reads and removes them: the tally counts the tenant's own rows only,
 * the subject's state reads back, a leased action holds the removal off,
 * and the removal takes every table's rows of that tenant and no other's.
 */
START_TEST(tenant_tally_forget)
{
	struct accept_res	res;
	struct store_tally	t;
	struct store_subject	sub;
	int			found, leased;
	int64_t			removed;

	ck_assert_int_eq(event("e-1", 2, 1000, 0, "publish", &res),
	    HB_ACCEPTED);
	ck_assert_int_eq(event("e-2", 1, 900, 0, "publish", &res), HB_STALE);
	ck_assert_int_eq(event("e-3", 3, 2000, 1, "unpublish", &res),
	    HB_ACCEPTED);
	ck_assert_int_eq(event("e-4", 3, 2000, 0, "publish", &res),
	    HB_CONFLICT);
	ck_assert_int_eq(run("acme", CALLBACK, completed1), HB_ACCEPTED);
	ck_assert_int_eq(run("other", CALLBACK, "{\"type\":\"job_completed\","
	    "\"job_id\":\"job-x\",\"status\":\"completed\",\"key\":\"k\"}"),
	    HB_ACCEPTED);

	ck_assert_int_eq(store_tenant_tally(st, "acme", &t), STORE_OK);
	ck_assert_int_eq(t.actions, 3);
	ck_assert_int_eq(t.receipts, 5);
	ck_assert_int_eq(t.conflicts, 1);
	ck_assert_int_eq(store_tenant_tally(st, "nobody", &t), STORE_OK);
	ck_assert_int_eq(t.actions + t.receipts + t.conflicts, 0);

	ck_assert_int_eq(store_subject_get(st, "acme", "cms/a-1", &sub, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_int_eq(sub.version, 3);
	ck_assert_int_eq(sub.occurred_ms, 2000);
	ck_assert_int_eq(sub.undo, 1);
	ck_assert_str_eq(sub.step, "unpublish");
	ck_assert_int_eq(store_subject_get(st, "other", "cms/a-1", &sub, &found),
	    STORE_OK);
	ck_assert_int_eq(found, 0);

	/* A delivery in flight: nothing is removed. */
	test_db_exec(state_path, "UPDATE outbox SET state = 'leased'"
	    " WHERE action_id = 'acme:cms/a-1:2:publish'");
	ck_assert_int_eq(store_tenant_forget(st, "acme", &leased, &removed),
	    STORE_OK);
	ck_assert_int_eq(leased, 1);
	ck_assert_int_eq(removed, 0);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox WHERE tenant ="
	    " 'acme'"), 3);
	test_db_exec(state_path, "UPDATE outbox SET state = 'pending'");
	test_db_exec(state_path, "INSERT INTO attempts(action_id, n,"
	    " started_at, error) VALUES ('acme:cms/a-1:2:publish', 1, 1,"
	    " 'refused')");

	ck_assert_int_eq(store_tenant_forget(st, "acme", &leased, &removed),
	    STORE_OK);
	ck_assert_int_eq(leased, 0);
	/* 3 outbox, 3 accepted, 5 receipts, 1 job, 1 subject, 1 conflict,
	   1 attempt. */
	ck_assert_int_eq(removed, 15);
	ck_assert_int_eq(q("SELECT (SELECT count(*) FROM outbox WHERE tenant"
	    " = 'acme') + (SELECT count(*) FROM accepted WHERE tenant ="
	    " 'acme') + (SELECT count(*) FROM receipts WHERE tenant = 'acme')"
	    " + (SELECT count(*) FROM job_state WHERE tenant = 'acme')"
	    " + (SELECT count(*) FROM subjects WHERE tenant = 'acme')"
	    " + (SELECT count(*) FROM conflicts WHERE tenant = 'acme')"
	    " + (SELECT count(*) FROM attempts)"), 0);
	/* The other tenant's rows stay. */
	ck_assert_int_eq(q("SELECT count(*) FROM outbox WHERE tenant ="
	    " 'other'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE tenant ="
	    " 'other'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM job_state WHERE tenant ="
	    " 'other'"), 1);
}
END_TEST

/* A subject and version too long for an action id: refused, unwritten. */
START_TEST(subject_too_long)
{
	struct accept_req	req;
	struct accept_res	res;
	struct obs		o;

	memset(&o, 0, sizeof(o));
	o.source = OBS_SRC_EVENT;
	o.event = OBS_EV_SUBJECT;
	(void)snprintf(o.type, sizeof(o.type), "asset.approved");
	memset(o.job_id, 'x', HB_ID_MAX - 2);
	(void)snprintf(o.delivery_id, sizeof(o.delivery_id), "e-1");
	(void)snprintf(o.step, sizeof(o.step), "publish");
	o.version = 12345;
	memset(&req, 0, sizeof(req));
	req.tenant = "acme";
	req.endpoint = "cms";
	req.destination = "sink";
	req.space = "cms";
	req.obs = &o;
	req.now_ms = util_now_ms();
	ck_assert_int_eq(accept_observation(st, cfg, &req, &res),
	    HB_MALFORMED);
	ck_assert_str_eq(res.detail, "namespace, subject and version too long"
	    " for an action id");
	/* The namespace counts: 124 bytes of subject fit alone, not in it. */
	o.job_id[HB_ID_MAX - 4] = '\0';
	o.version = 1;
	ck_assert_int_eq(accept_observation(st, cfg, &req, &res),
	    HB_MALFORMED);
	ck_assert_str_eq(res.detail, "namespace, subject and version too long"
	    " for an action id");
	/* No destination, no namespace, or a negative version: refused. */
	o.job_id[8] = '\0';
	o.version = -1;
	ck_assert_int_eq(accept_observation(st, cfg, &req, &res),
	    HB_MALFORMED);
	o.version = 1;
	req.space = "a/b";
	ck_assert_int_eq(accept_observation(st, cfg, &req, &res),
	    HB_MALFORMED);
	req.space = NULL;
	ck_assert_int_eq(accept_observation(st, cfg, &req, &res),
	    HB_MALFORMED);
	req.space = "cms";
	req.destination = NULL;
	ck_assert_int_eq(accept_observation(st, cfg, &req, &res),
	    HB_MALFORMED);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), 0);
}
END_TEST

/*
 * Two endpoints of one tenant, each in its namespace (hookbox(7),
 * Versioned events): a second endpoint's event of the highest version
 * freezes nothing of the first's, and its event taken first takes no
 * action of the first's.  Two that name one namespace share subjects.
 */
START_TEST(subject_namespaces_apart)
{
	struct accept_res	res;

	/* The freeze: 2^53 - 1 for a-1 from the other endpoint. */
	ck_assert_int_eq(event_at("minor", "minor", "other", "m-1",
	    9007199254740991LL, 1000, 0, "publish", &res), HB_ACCEPTED);
	ck_assert_str_eq(res.action, "acme:minor/a-1:9007199254740991:publish");
	ck_assert_int_eq(event("e-1", 2, 2000, 0, "publish", &res),
	    HB_ACCEPTED);
	ck_assert_str_eq(res.action, "acme:cms/a-1:2:publish");
	/* The take: v3 from the other endpoint first, then the genuine v3. */
	ck_assert_int_eq(event_at("minor", "minor", "other", "m-2", 3, 3000, 0,
	    "publish", &res), HB_STALE);
	ck_assert_int_eq(event_at("minor2", "minor2", "other", "m-3", 3, 3000,
	    0, "publish", &res), HB_ACCEPTED);
	ck_assert_int_eq(event("e-2", 3, 3000, 0, "publish", &res),
	    HB_ACCEPTED);
	ck_assert_str_eq(res.action, "acme:cms/a-1:3:publish");
	ck_assert_int_eq(q("SELECT count(*) FROM outbox WHERE action_id ="
	    " 'acme:cms/a-1:3:publish' AND destination = 'sink'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox WHERE action_id ="
	    " 'acme:minor2/a-1:3:publish' AND destination = 'other'"), 1);
	/* A second route that names the first's namespace shares it. */
	ck_assert_int_eq(event_at("cms-2", "cms", "sink", "r-1", 3, 3000, 0,
	    "publish", &res), HB_DUPLICATE);
	ck_assert_str_eq(res.action, "acme:cms/a-1:3:publish");
	ck_assert_int_eq(event_at("cms-2", "cms", "sink", "r-2", 2, 2500, 0,
	    "publish", &res), HB_STALE);
	ck_assert_int_eq(q("SELECT count(*) FROM subjects"), 3);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 4);
}
END_TEST

/*
 * A subject's state recorded before namespaces (/a-1, as the migration
 * keeps it) is where every namespace of its tenant starts from, and is
 * never written again: an event older than it is stale in any namespace,
 * a newer one is recorded in its own.
 */
START_TEST(subject_state_before_namespaces)
{
	struct accept_res	res;
	struct store_subject	sub;
	int			found;

	test_db_exec(state_path, "INSERT INTO subjects VALUES ('acme', '/a-1',"
	    " 5, 5000, 'do', 'publish', 'asset.publish', 1)");
	ck_assert_int_eq(event("e-1", 4, 4000, 0, "publish", &res), HB_STALE);
	ck_assert_int_eq(event_at("minor", "minor", "other", "m-1", 4, 4000,
	    0, "publish", &res), HB_STALE);
	ck_assert_int_eq(event("e-2", 5, 5000, 0, "publish", &res),
	    HB_DUPLICATE);
	ck_assert_int_eq(event("e-3", 6, 6000, 0, "publish", &res),
	    HB_ACCEPTED);
	ck_assert_int_eq(event("e-4", 5, 5500, 0, "publish", &res), HB_STALE);
	ck_assert_int_eq(store_subject_get(st, "acme", "cms/a-1", &sub,
	    &found), STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_int_eq(sub.version, 6);
	ck_assert_int_eq(store_subject_get(st, "acme", "minor/a-1", &sub,
	    &found), STORE_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_int_eq(sub.version, 5);
	ck_assert_int_eq(q("SELECT count(*) FROM subjects WHERE subject ="
	    " '/a-1' AND version = 5"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
}
END_TEST

/*
 * Eight processes, eight connections, one action: exactly one is
 * accepted, the rest are duplicates, none fails, one outbox row.
 */
START_TEST(concurrent_processes_one_action)
{
	enum { N = 8 };
	pid_t	pids[N];
	int	gun[2], i, status, accepted = 0, duplicate = 0;
	char	c;

	ck_assert_int_eq(pipe(gun), 0);
	for (i = 0; i < N; i++) {
		pids[i] = fork();
		ck_assert_int_ne(pids[i], -1);
		if (pids[i] == 0) {
			struct store		*s;
			struct config		*k;
			struct accept_res	 res;
			enum hb_result		 r;

			close(gun[1]);
			open_both(10000, &s, &k);
			/* Wait for the start: the parent closes the pipe. */
			while (read(gun[0], &c, 1) < 0 && errno == EINTR)
				;
			r = run_with(s, k, "acme", i % 2 ? POLL : CALLBACK,
			    i % 2 ? "{\"id\":\"job-1\",\"status\":\"Completed\"}" :
			    completed1, &res);
			store_close(s);
			config_close(k);
			_exit((int)r);
		}
	}
	close(gun[0]);
	usleep(100 * 1000);
	close(gun[1]);
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert(WIFEXITED(status));
		if (WEXITSTATUS(status) == HB_ACCEPTED)
			accepted++;
		else if (WEXITSTATUS(status) == HB_DUPLICATE)
			duplicate++;
		else
			ck_abort_msg("process %d: result %d", i,
			    WEXITSTATUS(status));
	}
	ck_assert_int_eq(accepted, 1);
	ck_assert_int_eq(duplicate, N - 1);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM accepted"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), N);
}
END_TEST

START_TEST(action_maps_to_another_job)
{
	struct accept_res	res;

	ck_assert_int_eq(run("acme", CALLBACK, completed1), HB_ACCEPTED);
	/* job-2 was registered with the same attempt and step. */
	ck_assert_int_eq(run_with(st, cfg, "acme", POLL,
	    "{\"id\":\"job-2\",\"status\":\"Completed\"}", &res),
	    HB_ACTION_CONFLICT);
	ck_assert_str_eq(res.action, "acme:att-42:analyze-v1");
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM conflicts WHERE kind='action'"
	    " AND job_id='job-2' AND resolved_at IS NULL"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM accepted WHERE"
	    " job_id='job-1'"), 1);
	/* Seen again: still one open conflict, counted twice. */
	ck_assert_int_eq(run("acme", POLL,
	    "{\"id\":\"job-2\",\"status\":\"Completed\"}"), HB_ACTION_CONFLICT);
	ck_assert_int_eq(q("SELECT seen FROM conflicts WHERE kind='action'"),
	    2);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM conflicts"), 1);
}
END_TEST

/* Hand-built observations: the routine validates what parsers did not. */
static enum hb_result
run_ids(const char *tenant, const char *job_id, size_t jlen)
{
	struct accept_req	req;
	struct accept_res	res;
	struct obs		o;

	memset(&o, 0, sizeof(o));
	o.source = OBS_SRC_POLL;
	o.event = OBS_EV_JOB;
	o.status = OBS_ST_COMPLETED;
	o.stage = OBS_STAGE_COMPLETED;
	memcpy(o.job_id, job_id, jlen < sizeof(o.job_id) ? jlen :
	    sizeof(o.job_id) - 1);
	memset(&req, 0, sizeof(req));
	req.tenant = tenant;
	req.obs = &o;
	req.now_ms = util_now_ms();
	return accept_observation(st, cfg, &req, &res);
}

START_TEST(bad_ids_rejected)
{
	char	big[HB_ID_MAX + 2];
	char	snap[128];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(run_ids("acme", "", 0), HB_MALFORMED);
	ck_assert_int_eq(run_ids("acme", "job\xff", 4), HB_MALFORMED);
	ck_assert_int_eq(run_ids("acme", "job\xc0\x80", 5), HB_MALFORMED);
	ck_assert_int_eq(run_ids("acme", "job\x01", 4), HB_MALFORMED);
	ck_assert_int_eq(run_ids("", "job-1", 5), HB_MALFORMED);
	ck_assert_int_eq(run_ids(big, "job-1", 5), HB_MALFORMED);
	ck_assert_int_eq(run_ids("ac\xffme", "job-1", 5), HB_MALFORMED);
	/* An id of HB_ID_MAX + 1 bytes cannot even be represented in obs;
	 * the parser rejects it (see check_tornado), and HB_ID_MAX is fine. */
	big[HB_ID_MAX] = '\0';
	ck_assert_int_eq(run_ids("acme", big, HB_ID_MAX), HB_UNKNOWN_JOB);
	snapshot(snap, sizeof(snap));
	ck_assert_str_eq(snap, "r0 j0 a0 o0 c0");
	/* The parsers reject the same through JSON. */
	ck_assert_int_eq(run_ids("acme", "job-1", 5), HB_ACCEPTED);
}
END_TEST

static int
fail_once(enum fault_point p, void *arg)
{
	int	*left = arg;

	(void)p;
	return (*left)-- > 0;
}

START_TEST(outbox_failure_rolls_back)
{
	struct accept_res	res;
	char			snap[128];
	int			left = 1;

	fault_set(FAULT_OUTBOX_INSERT, fail_once, &left);
	ck_assert_int_eq(run_with(st, cfg, "acme", CALLBACK, completed1, &res),
	    HB_UNAVAILABLE);
	ck_assert(!hb_result_is_ack(res.result));
	snapshot(snap, sizeof(snap));
	ck_assert_str_eq(snap, "r0 j0 a0 o0 c0");
	/* The retry claims the action afresh. */
	ck_assert_int_eq(run("acme", CALLBACK, completed1), HB_ACCEPTED);
	snapshot(snap, sizeof(snap));
	ck_assert_str_eq(snap, "r1 j1 a1 o1 c0");
}
END_TEST

START_TEST(survives_reopen)
{
	ck_assert_int_eq(run("acme", CALLBACK, completed1), HB_ACCEPTED);
	store_close(st);
	config_close(cfg);
	open_both(1000, &st, &cfg);
	ck_assert_int_eq(run("acme", POLL,
	    "{\"id\":\"job-1\",\"status\":\"Completed\"}"), HB_DUPLICATE);
	ck_assert_int_eq(run("acme", CALLBACK, failed1), HB_CONFLICT);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
}
END_TEST

static int
stop_here(enum fault_point p, void *arg)
{
	int	fd = *(int *)arg;

	(void)p;
	/* Tell the parent we are inside the transaction, then wait to die. */
	if (write(fd, "x", 1) != 1)
		_exit(99);
	for (;;)
		pause();
	return 0;
}

START_TEST(killed_before_commit)
{
	pid_t	pid;
	int	sync[2], status;
	char	c, snap[128];

	ck_assert_int_eq(pipe(sync), 0);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		struct store	*s;
		struct config	*k;

		close(sync[0]);
		open_both(1000, &s, &k);
		fault_set(FAULT_BEFORE_COMMIT, stop_here, &sync[1]);
		(void)run_with(s, k, "acme", CALLBACK, completed1,
		    &(struct accept_res){ 0 });
		_exit(98);	/* not reached */
	}
	close(sync[1]);
	ck_assert_int_eq(read(sync[0], &c, 1), 1);
	/* The child has inserted the accepted and outbox rows; not committed. */
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	close(sync[0]);

	snapshot(snap, sizeof(snap));
	ck_assert_str_eq(snap, "r0 j0 a0 o0 c0");
	/* The lock died with the process: a retry is accepted at once. */
	ck_assert_int_eq(run("acme", CALLBACK, completed1), HB_ACCEPTED);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
}
END_TEST

START_TEST(stale_progress_after_completion)
{
	ck_assert_int_eq(run("acme", CALLBACK, "{\"type\":\"job_progress\","
	    "\"job_id\":\"job-1\",\"stage\":\"downloading\"}"), HB_RECORDED);
	ck_assert_int_eq(run("acme", CALLBACK, "{\"type\":\"job_progress\","
	    "\"job_id\":\"job-1\",\"stage\":\"muxing\"}"), HB_RECORDED);
	ck_assert_int_eq(q("SELECT stage FROM job_state"), OBS_STAGE_MUXING);
	/* An older stage arriving late is stale. */
	ck_assert_int_eq(run("acme", CALLBACK, "{\"type\":\"job_progress\","
	    "\"job_id\":\"job-1\",\"step\":\"download_complete\"}"), HB_STALE);
	ck_assert_int_eq(q("SELECT stage FROM job_state"), OBS_STAGE_MUXING);
	ck_assert_int_eq(run("acme", CALLBACK, completed1), HB_ACCEPTED);
	ck_assert_int_eq(run("acme", CALLBACK, "{\"type\":\"job_progress\","
	    "\"job_id\":\"job-1\",\"stage\":\"uploading\"}"), HB_STALE);
	ck_assert_int_eq(run("acme", POLL, "{\"id\":\"job-1\","
	    "\"status\":\"Processing\",\"step\":\"Muxing\"}"), HB_STALE);
	ck_assert_int_eq(q("SELECT stage FROM job_state"),
	    OBS_STAGE_COMPLETED);
	ck_assert_int_eq(q("SELECT count(*) FROM job_state"
	    " WHERE terminal='completed'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE"
	    " result='stale'"), 3);
}
END_TEST

START_TEST(completed_then_failed)
{
	struct accept_res	res;

	ck_assert_int_eq(run("acme", CALLBACK, completed1), HB_ACCEPTED);
	ck_assert_int_eq(run_with(st, cfg, "acme", CALLBACK, failed1, &res),
	    HB_CONFLICT);
	ck_assert_int_eq(q("SELECT count(*) FROM conflicts WHERE"
	    " kind='terminal' AND recorded='completed' AND observed='failed'"),
	    1);
	/* No last-arrival-wins: the job stays completed, one action. */
	ck_assert_int_eq(q("SELECT count(*) FROM job_state"
	    " WHERE terminal='completed'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM accepted"), 1);
}
END_TEST

START_TEST(failed_then_completed)
{
	ck_assert_int_eq(run("acme", CALLBACK, failed1), HB_RECORDED);
	ck_assert_int_eq(run("acme", CALLBACK, completed1), HB_CONFLICT);
	ck_assert_int_eq(q("SELECT count(*) FROM accepted"), 0);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 0);
	ck_assert_int_eq(q("SELECT count(*) FROM conflicts WHERE"
	    " recorded='failed' AND observed='completed'"), 1);
	/* Failed and skipped are both "no file": not a contradiction. */
	ck_assert_int_eq(run("acme", CALLBACK, "{\"type\":\"job_skipped\","
	    "\"job_id\":\"job-1\",\"reason\":\"dup\"}"), HB_RECORDED);
	ck_assert_int_eq(q("SELECT count(*) FROM job_state"
	    " WHERE terminal='failed'"), 1);
}
END_TEST

START_TEST(warning_is_terminal_without_action)
{
	ck_assert_int_eq(run("acme", POLL, "{\"id\":\"job-3\","
	    "\"status\":\"Warning\"}"), HB_RECORDED);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 0);
	ck_assert_int_eq(run("acme", CALLBACK, "{\"type\":\"job_completed\","
	    "\"job_id\":\"job-3\",\"status\":\"completed\"}"), HB_CONFLICT);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 0);
}
END_TEST

START_TEST(poll_then_webhook_one_action)
{
	ck_assert_int_eq(run("acme", POLL, "{\"id\":\"job-1\","
	    "\"status\":\"Completed\",\"step\":\"Finished\"}"), HB_ACCEPTED);
	ck_assert_int_eq(run("acme", CALLBACK, completed1), HB_DUPLICATE);
	ck_assert_int_eq(run("acme", EVENT, "{\"delivery_id\":\"d-1\","
	    "\"type\":\"job_completed\",\"created_at\":\"2026-01-01\","
	    "\"data\":{\"job_id\":\"job-1\",\"status\":\"completed\"}}"),
	    HB_DUPLICATE);
	/* The legacy generation resolves to the same action too. */
	ck_assert_int_eq(run("acme", CALLBACK, "{\"type\":\"job_completed\","
	    "\"job_id\":\"job-1\",\"status\":\"Completed\",\"s3_key\":\"k\"}"),
	    HB_DUPLICATE);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), 4);
}
END_TEST

START_TEST(delivery_id_deduplicated)
{
	static const char ev[] = "{\"delivery_id\":\"d-7\","
	    "\"type\":\"job_completed\",\"data\":{\"job_id\":\"job-3\"}}";
	struct accept_res	res;

	ck_assert_int_eq(run("acme", EVENT, ev), HB_ACCEPTED);
	ck_assert_int_eq(run_with(st, cfg, "acme", EVENT, ev, &res),
	    HB_DUPLICATE);
	ck_assert_str_eq(res.action, "acme:att-43:analyze-v1");
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
}
END_TEST

/*
 * A delivery refused with 409 stays refused when it comes again, and so
 * does any other body that reuses its delivery id: a retry must not turn
 * a refusal into an acknowledgement.
 */
START_TEST(delivery_id_refusal_kept)
{
	static const char ev[] = "{\"delivery_id\":\"d-9\","
	    "\"type\":\"job_completed\",\"data\":{\"job_id\":\"job-2\","
	    "\"status\":\"completed\"}}";
	static const char other[] = "{\"delivery_id\":\"d-9\","
	    "\"type\":\"job_progress\",\"data\":{\"job_id\":\"job-3\","
	    "\"stage\":\"muxing\"}}";
	struct accept_res	res;

	ck_assert_int_eq(run("acme", CALLBACK, completed1), HB_ACCEPTED);
	/* job-2 shares job-1's attempt and step: 409. */
	ck_assert_int_eq(run_with(st, cfg, "acme", EVENT, ev, &res),
	    HB_ACTION_CONFLICT);
	ck_assert_int_eq(run_with(st, cfg, "acme", EVENT, ev, &res),
	    HB_ACTION_CONFLICT);
	ck_assert_str_eq(res.action, "acme:att-42:analyze-v1");
	ck_assert_int_eq(run_with(st, cfg, "acme", EVENT, other, &res),
	    HB_ACTION_CONFLICT);
	ck_assert(!hb_result_is_ack(res.result));
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), 2);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
	ck_assert_int_eq(q("SELECT seen FROM conflicts WHERE kind='action'"),
	    1);
}
END_TEST

/*
 * PostgreSQL: another host writes what a batch looked up as absent, in
 * the moment between its look-up and its writes (no lock covers a
 * delivery id, nor an action id another job holds).  The batch is
 * decided again on what is there now: never an answer the state
 * contradicts.  (On SQLite the batch holds the one write lock.)
 */
static struct db	*meddler;
static const char	*meddling;

static int
meddle(enum fault_point fp, void *arg)
{
	(void)fp;
	(void)arg;
	if (meddling != NULL)
		ck_assert_int_eq(db_exec(meddler, meddling), DB_OK);
	meddling = NULL;	/* once */
	return 0;
}

START_TEST(written_between_look_and_write)
{
	static const char ev[] = "{\"delivery_id\":\"d-7\","
	    "\"type\":\"job_completed\",\"data\":{\"job_id\":\"job-3\"}}";
	struct accept_res	res;

	if (test_backend != TEST_POSTGRES)
		return;
	meddler = pg_other(state_path);
	fault_set(FAULT_LOOKED, meddle, NULL);
	meddling = "INSERT INTO receipts(received_at, tenant, endpoint,"
	    " source, delivery_id, result, action_id) VALUES (1, 'acme',"
	    " 'hook', 'org', 'd-7', 'accepted', 'acme:elsewhere:s')";
	ck_assert_int_eq(run_with(st, cfg, "acme", EVENT, ev, &res),
	    HB_DUPLICATE);
	ck_assert_str_eq(res.action, "acme:elsewhere:s");
	ck_assert_ptr_null(meddling);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 0);

	meddling = "INSERT INTO accepted VALUES ('acme:att-42:analyze-v1',"
	    " 'acme', 'att-42', 'analyze-v1', 'job-2', 1)";
	ck_assert_int_eq(run_with(st, cfg, "acme", CALLBACK, completed1, &res),
	    HB_ACTION_CONFLICT);
	ck_assert_ptr_null(meddling);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 0);
	ck_assert_int_eq(q("SELECT count(*) FROM conflicts WHERE kind ="
	    " 'action' AND job_id = 'job-1'"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE result ="
	    " 'action_conflict'"), 1);
	fault_set(FAULT_LOOKED, NULL, NULL);
	db_close(meddler);
}
END_TEST

START_TEST(other_tenants_job_refused)
{
	char	snap[128];

	/* job-x belongs to "other"; acme's endpoint may not attach it. */
	ck_assert_int_eq(run("acme", CALLBACK, "{\"type\":\"job_completed\","
	    "\"job_id\":\"job-x\",\"status\":\"completed\"}"), HB_UNKNOWN_JOB);
	ck_assert_int_eq(run("acme", POLL, "{\"id\":\"nope\","
	    "\"status\":\"Completed\"}"), HB_UNKNOWN_JOB);
	ck_assert_int_eq(run("nobody", POLL, "{\"id\":\"job-1\","
	    "\"status\":\"Completed\"}"), HB_UNKNOWN_ENDPOINT);
	ck_assert_int_eq(run("sleepy", POLL, "{\"id\":\"job-s\","
	    "\"status\":\"Completed\"}"), HB_UNKNOWN_ENDPOINT);
	snapshot(snap, sizeof(snap));
	ck_assert_str_eq(snap, "r0 j0 a0 o0 c0");
	ck_assert_int_eq(run("other", POLL, "{\"id\":\"job-x\","
	    "\"status\":\"Completed\"}"), HB_ACCEPTED);
}
END_TEST

START_TEST(unknown_and_batch_recorded)
{
	ck_assert_int_eq(run("acme", CALLBACK, "{\"type\":\"job_archived\","
	    "\"job_id\":\"job-1\"}"), HB_IGNORED);
	ck_assert_int_eq(run("acme", CALLBACK, "{\"type\":\"batch_completed\","
	    "\"batch_id\":\"b-1\",\"completed\":2,\"failed\":0,\"total\":2}"),
	    HB_RECORDED);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), 2);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE"
	    " result='ignored' AND body IS NOT NULL"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM job_state"), 0);
}
END_TEST

/*
 * With the lock held elsewhere past the busy timeout: 503, nothing.  On
 * SQLite the file's write lock; on PostgreSQL the job's lock, held by
 * another connection's transaction as another host's acceptance would.
 */
START_TEST(busy_database_unavailable)
{
	struct store	*s;
	struct config	*k;
	sqlite3		*db = NULL;
	struct db	*pg = NULL;
	struct timespec	 a, b;
	long		 ms;
	char		 snap[128];

	if (test_backend == TEST_SQLITE) {
		ck_assert_int_eq(sqlite3_open(state_path, &db), SQLITE_OK);
		ck_assert_int_eq(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL,
		    NULL), SQLITE_OK);
	} else {
		pg = pg_other(state_path);
		ck_assert_int_eq(db_exec(pg, "BEGIN; SELECT"
		    " pg_advisory_xact_lock(hashtextextended('acme:job-1', 0))"),
		    DB_OK);
	}
	open_both(300, &s, &k);
	clock_gettime(CLOCK_MONOTONIC, &a);
	ck_assert_int_eq(run_with(s, k, "acme", CALLBACK, completed1,
	    &(struct accept_res){ 0 }), HB_UNAVAILABLE);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	/* It waited for the lock (bounded below only: no timing flakes). */
	ck_assert_int_ge(ms, 290);
	if (db != NULL) {
		ck_assert_int_eq(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL),
		    SQLITE_OK);
		sqlite3_close(db);
	} else {
		ck_assert_int_eq(db_exec(pg, "ROLLBACK"), DB_OK);
		db_close(pg);
	}
	snapshot(snap, sizeof(snap));
	ck_assert_str_eq(snap, "r0 j0 a0 o0 c0");
	/* Once the lock is gone the same observation is accepted. */
	ck_assert_int_eq(run_with(s, k, "acme", CALLBACK, completed1,
	    &(struct accept_res){ 0 }), HB_ACCEPTED);
	store_close(s);
	config_close(k);
}
END_TEST

START_TEST(wal_and_full_sync)
{
	sqlite3		*db;
	sqlite3_stmt	*s;

	if (test_backend == TEST_POSTGRES) {
		/* No file, no pragmas: the schema's version is kept. */
		ck_assert_int_eq(q("SELECT version FROM"
		    " hookbox_state.schema_version"), 4);
		ck_assert_int_eq(q("SELECT count(*) FROM"
		    " hookbox_state.schema_version"), 1);
		return;
	}
	ck_assert_int_eq(sqlite3_open(state_path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s,
	    NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(s, 0), "wal");
	sqlite3_finalize(s);
	sqlite3_close(db);
	ck_assert_int_eq(q("PRAGMA user_version"), 7);
}
END_TEST

/*
 * PostgreSQL: a serving role without the write grant on the state tables
 * (a mistaken GRANT) answers 503, says why, and writes nothing; health
 * says so before any callback.  SQLite has no roles: there the nearest
 * window, a read-only file, is check_store's and check_respond's.
 */
START_TEST(denied_role_unavailable)
{
	struct store		*s = NULL;
	struct config		*k;
	struct accept_res	 res;
	struct db		*admin;
	char			 role[32], sql[1024], conn[PATH_MAX + 64];
	char			 snap[128];

	if (test_backend != TEST_POSTGRES)
		return;
	(void)snprintf(role, sizeof(role), "hbt_ro_%ld", (long)getpid());
	admin = pg_other(state_path);
	/*
	 * A role that reads everything and writes nothing.  Granted through
	 * the predefined roles, a membership row each, rather than a GRANT
	 * on every table: that one rewrites the tables' catalog rows and
	 * queues behind any other session (autovacuum's, under load) that
	 * holds one of them.
	 */
	(void)snprintf(sql, sizeof(sql), "CREATE ROLE %s LOGIN IN ROLE"
	    " pg_read_all_data", role);
	ck_assert_msg(db_exec(admin, sql) == DB_OK, "%s", db_errmsg(admin));
	(void)snprintf(conn, sizeof(conn), "%s user=%s", state_path, role);
	ck_assert_int_eq(store_open(conn, &(struct store_opts){
	    .busy_ms = 1000 }, &s), STORE_OK);
	k = test_config_open(dir, CONFIG_READ, 1000);
	ck_assert_int_eq(store_check_writable(s), STORE_IO);
	ck_assert_msg(strstr(store_errmsg(s), "grant") != NULL, "%s",
	    store_errmsg(s));
	ck_assert_int_eq(run_with(s, k, "acme", CALLBACK, completed1, &res),
	    HB_UNAVAILABLE);
	ck_assert(!hb_result_is_ack(res.result));
	ck_assert_ptr_nonnull(res.detail);
	/* The answer's detail, which the request's log line shows too. */
	ck_assert_msg(strstr(res.detail, "permission denied") != NULL, "%s",
	    res.detail);
	ck_assert_msg(strstr(store_errmsg(s), "permission denied") != NULL,
	    "%s", store_errmsg(s));
	snapshot(snap, sizeof(snap));
	ck_assert_str_eq(snap, "r0 j0 a0 o0 c0");
	/* The same connection, granted again, writes. */
	(void)snprintf(sql, sizeof(sql), "GRANT pg_write_all_data TO %s",
	    role);
	ck_assert_msg(db_exec(admin, sql) == DB_OK, "%s", db_errmsg(admin));
	ck_assert_int_eq(store_check_writable(s), STORE_OK);
	ck_assert_int_eq(run_with(s, k, "acme", CALLBACK, completed1, &res),
	    HB_ACCEPTED);
	store_close(s);
	config_close(k);
	(void)snprintf(sql, sizeof(sql), "DROP ROLE %s", role);
	(void)db_exec(admin, sql);
	db_close(admin);
}
END_TEST

/*
 * Ends the state store's connections to the test's database (named
 * "hookbox-state"), as a server restart or a failover would; the
 * configuration's have their own tests.
 */
static void
terminate_others(void)
{
	struct db	*admin;
	int		 i;

	admin = pg_other(state_path);
	ck_assert_int_eq(db_exec(admin, "SELECT pg_terminate_backend(pid)"
	    " FROM pg_stat_activity WHERE datname = current_database()"
	    " AND application_name = 'hookbox-state'"), DB_OK);
	db_close(admin);
	/* Gone for certain before the next call: the server says so. */
	for (i = 0; i < 5000 && test_db_int(state_path, "SELECT count(*) FROM"
	    " pg_stat_activity WHERE datname = current_database() AND"
	    " application_name = 'hookbox-state'") > 0; i++)
		usleep(1000);
	ck_assert_int_lt(i, 5000);
}

/*
 * PostgreSQL: the server ends the connection (a restart, a failover, an
 * administrator): the call that meets it answers "try again" (STORE_GONE,
 * 503), the next one runs on a new connection, no restart needed; and a
 * transaction the loss cut off is cleared, so the next BEGIN runs.
 */
START_TEST(connection_lost_recovers)
{
	char	snap[128];

	if (test_backend != TEST_POSTGRES)
		return;
	ck_assert_int_eq(run("acme", CALLBACK, "{\"type\":\"job_progress\","
	    "\"job_id\":\"job-1\",\"stage\":\"downloading\"}"),
	    HB_RECORDED);
	/*
	 * Outside a transaction: the BEGIN is sent, and the call that lands
	 * it meets the loss.
	 */
	terminate_others();
	ck_assert_int_eq(store_begin(st), STORE_OK);
	ck_assert_int_eq(store_commit(st), STORE_GONE);
	store_rollback(st);
	ck_assert_int_eq(store_begin(st), STORE_OK);
	store_rollback(st);
	/* Inside one: its COMMIT fails, nothing of it stays. */
	ck_assert_int_eq(store_begin(st), STORE_OK);
	terminate_others();
	ck_assert_int_eq(store_commit(st), STORE_GONE);
	store_rollback(st);
	ck_assert_int_eq(run("acme", CALLBACK, completed1), HB_ACCEPTED);
	snapshot(snap, sizeof(snap));
	ck_assert_str_eq(snap, "r2 j1 a1 o1 c0");
	/* An acceptance cut in the middle answers 503, then works. */
	terminate_others();
	ck_assert_int_eq(run("acme", CALLBACK, failed1), HB_UNAVAILABLE);
	ck_assert_int_eq(run("acme", CALLBACK, failed1), HB_CONFLICT);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
}
END_TEST

/* One caller of a group: its observation, prepared, and its answer. */
struct gcall {
	struct group		*g;
	struct accept_prep	 p;
	struct accept_res	 res;
	struct obs		 o;
	enum hb_result		 r;
};

static void *
gcall_run(void *arg)
{
	struct gcall	*c = arg;

	c->r = group_submit(c->g, &c->p, &c->res);
	return NULL;
}

static void
gcall_prepare(struct gcall *c, const char *json)
{
	struct accept_req	req;
	char			why[128];

	ck_assert_int_eq(tornado_parse_callback(json, strlen(json), &c->o,
	    why, sizeof(why)), TORNADO_OK);
	memset(&req, 0, sizeof(req));
	req.tenant = "acme";
	req.endpoint = "hook";
	req.obs = &c->o;
	req.body = json;
	req.bodylen = strlen(json);
	req.now_ms = util_now_ms();
	ck_assert_int_eq(accept_prepare(cfg, &req, &c->p, &c->res), 0);
}

struct gwait {
	struct group	*g;
	int64_t		 n;
};

/* The group's writer, held until n observations wait (FAULT_GROUP_TAKE). */
static int
gwait(enum fault_point p, void *arg)
{
	struct gwait		*w = arg;
	struct group_stats	 gs;
	int			 i;

	(void)p;
	for (i = 0; i < 10000; i++) {
		group_stats(w->g, &gs);
		if (gs.waiting >= w->n)
			break;
		usleep(1000);
	}
	fault_set(FAULT_GROUP_TAKE, NULL, NULL);
	return 0;
}

/*
 * One batch of the group's writer, two members: one whose job's lock is
 * held elsewhere past the busy budget, one whose is not.  The first
 * answers 503; the second is accepted all the same: on PostgreSQL an
 * error inside the batch's transaction would abort all of it, but for
 * the savepoint it is in.  On SQLite both are accepted (no job locks).
 */
START_TEST(group_member_fails_alone)
{
	struct gcall	c[2];
	struct gwait	w;
	pthread_t	t[2];
	struct db	*pg = NULL;
	int		i;

	memset(c, 0, sizeof(c));
	gcall_prepare(&c[0], completed1);
	gcall_prepare(&c[1], "{\"type\":\"job_completed\","
	    "\"job_id\":\"job-3\",\"status\":\"completed\"}");
	c[0].g = c[1].g = test_group_new(state_path, 1, NULL);
	if (test_backend == TEST_POSTGRES) {
		pg = pg_other(state_path);
		ck_assert_int_eq(db_exec(pg, "BEGIN; SELECT"
		    " pg_advisory_xact_lock(hashtextextended('acme:job-1', 0))"),
		    DB_OK);
	}
	w.g = c[0].g;
	w.n = 2;
	fault_set(FAULT_GROUP_TAKE, gwait, &w);
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, gcall_run, &c[i]),
		    0);
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	ck_assert_int_eq(c[1].r, HB_ACCEPTED);
	if (pg != NULL) {
		ck_assert_int_eq(c[0].r, HB_UNAVAILABLE);
		ck_assert_int_eq(db_exec(pg, "ROLLBACK"), DB_OK);
		db_close(pg);
		ck_assert_int_eq(q("SELECT count(*) FROM receipts"), 1);
	} else
		ck_assert_int_eq(c[0].r, HB_ACCEPTED);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox WHERE action_id ="
	    " 'acme:att-43:analyze-v1'"), 1);
	group_free(c[0].g);
}
END_TEST

/* Runs c[0..n) as one batch of their group. */
static void
gcall_batch(struct gcall *c, int n)
{
	struct gwait	w;
	pthread_t	t[4];
	int		i;

	ck_assert_int_le(n, 4);
	w.g = c[0].g;
	w.n = n;
	fault_set(FAULT_GROUP_TAKE, gwait, &w);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, gcall_run, &c[i]),
		    0);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	fault_set(FAULT_GROUP_TAKE, NULL, NULL);
}

/*
 * A member whose write the server refuses, in the batch's write flight
 * (a trigger on its outbox row): it alone is answered 503 and nothing of
 * it stays; the other commits.  Then its retry is accepted.
 */
START_TEST(write_flight_member_fails_alone)
{
	struct gcall	c[2];
	char		snap[128];

	memset(c, 0, sizeof(c));
	gcall_prepare(&c[0], completed1);
	gcall_prepare(&c[1], "{\"type\":\"job_completed\","
	    "\"job_id\":\"job-3\",\"status\":\"completed\"}");
	c[0].g = c[1].g = test_group_new(state_path, 1, NULL);
	refuse_outbox("acme:att-42:analyze-v1");
	gcall_batch(c, 2);
	ck_assert_int_eq(c[0].r, HB_UNAVAILABLE);
	ck_assert_int_eq(c[1].r, HB_ACCEPTED);
	snapshot(snap, sizeof(snap));
	ck_assert_str_eq(snap, "r1 j1 a1 o1 c0");
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE job_id ="
	    " 'job-1'"), 0);
	refuse_outbox(NULL);
	gcall_batch(c, 1);
	ck_assert_int_eq(c[0].r, HB_ACCEPTED);
	group_free(c[0].g);
}
END_TEST

/* FAULT_LOOKED: ends the store's connections, the first cuts[0] times. */
static int
cut(enum fault_point fp, void *arg)
{
	int	*cuts = arg;

	(void)fp;
	if (cuts[1]++ < cuts[0])
		terminate_others();
	return 0;
}

/*
 * PostgreSQL: the connection is cut between the batch's flights (its
 * look-ups landed, its writes not sent).  Nothing of it ran: the group
 * runs it once more on a new connection, and each member is accepted
 * once.  Cut again there, every member is answered 503 and nothing of
 * the batch stays; the next batch runs on a new one.
 */
START_TEST(cut_between_flights)
{
	struct gcall	c[2];
	char		snap[128];
	int		cuts[2] = { 1, 0 };

	if (test_backend != TEST_POSTGRES)
		return;
	memset(c, 0, sizeof(c));
	gcall_prepare(&c[0], completed1);
	gcall_prepare(&c[1], "{\"type\":\"job_completed\","
	    "\"job_id\":\"job-3\",\"status\":\"completed\"}");
	c[0].g = c[1].g = test_group_new(state_path, 1, NULL);
	fault_set(FAULT_LOOKED, cut, cuts);
	gcall_batch(c, 2);
	ck_assert_int_eq(cuts[1], 2);
	ck_assert_int_eq(c[0].r, HB_ACCEPTED);
	ck_assert_int_eq(c[1].r, HB_ACCEPTED);
	snapshot(snap, sizeof(snap));
	ck_assert_str_eq(snap, "r2 j2 a2 o2 c0");

	gcall_prepare(&c[0], "{\"type\":\"job_progress\","
	    "\"job_id\":\"job-2\",\"stage\":\"downloading\"}");
	gcall_prepare(&c[1], "{\"type\":\"job_failed\","
	    "\"job_id\":\"job-2\",\"error\":\"e\"}");
	cuts[0] = 2;
	cuts[1] = 0;
	gcall_batch(c, 2);
	ck_assert_int_eq(cuts[1], 2);
	ck_assert_int_eq(c[0].r, HB_UNAVAILABLE);
	ck_assert_int_eq(c[1].r, HB_UNAVAILABLE);
	snapshot(snap, sizeof(snap));
	ck_assert_str_eq(snap, "r2 j2 a2 o2 c0");
	fault_set(FAULT_LOOKED, NULL, NULL);
	gcall_batch(c, 2);
	/* Whichever came first: the progress after the failure is stale. */
	ck_assert_int_eq(c[1].r, HB_RECORDED);
	ck_assert_msg(c[0].r == HB_RECORDED || c[0].r == HB_STALE, "%s",
	    hb_result_name(c[0].r));
	snapshot(snap, sizeof(snap));
	ck_assert_str_eq(snap, "r4 j3 a2 o2 c0");
	group_free(c[0].g);
}
END_TEST

START_TEST(result_json)
{
	struct accept_res	res;
	char			buf[1024];

	ck_assert_int_eq(run_with(st, cfg, "acme", CALLBACK, completed1, &res),
	    HB_ACCEPTED);
	ck_assert_int_eq(accept_res_json(&res, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "{\"result\":\"accepted\","
	    "\"action\":\"acme:att-42:analyze-v1\"}");
	ck_assert_int_eq(accept_res_json(&res, buf, 10), -1);
}
END_TEST

static Suite *
accept_suite(void)
{
	Suite	*s = suite_create("accept");
	TCase	*tc = tcase_create("windows");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, same_event_twice);
	tcase_add_test(tc, subject_versions);
	tcase_add_test(tc, fanout_steps);
	tcase_add_test(tc, fanout_batch);
	tcase_add_test(tc, fanout_bad_steps);
	tcase_add_test(tc, payload_integers_exact);
	tcase_add_test(tc, payload_carries_body);
	tcase_add_test(tc, subject_too_long);
	tcase_add_test(tc, subject_namespaces_apart);
	tcase_add_test(tc, subject_state_before_namespaces);
	tcase_add_test(tc, tenant_tally_forget);
	tcase_add_test(tc, concurrent_processes_one_action);
	tcase_add_test(tc, action_maps_to_another_job);
	tcase_add_test(tc, bad_ids_rejected);
	tcase_add_test(tc, outbox_failure_rolls_back);
	tcase_add_test(tc, survives_reopen);
	tcase_add_test(tc, killed_before_commit);
	tcase_add_test(tc, stale_progress_after_completion);
	tcase_add_test(tc, completed_then_failed);
	tcase_add_test(tc, failed_then_completed);
	tcase_add_test(tc, warning_is_terminal_without_action);
	tcase_add_test(tc, poll_then_webhook_one_action);
	tcase_add_test(tc, delivery_id_deduplicated);
	tcase_add_test(tc, delivery_id_refusal_kept);
	tcase_add_test(tc, written_between_look_and_write);
	tcase_add_test(tc, other_tenants_job_refused);
	tcase_add_test(tc, unknown_and_batch_recorded);
	tcase_add_test(tc, busy_database_unavailable);
	tcase_add_test(tc, wal_and_full_sync);
	tcase_add_test(tc, denied_role_unavailable);
	tcase_add_test(tc, connection_lost_recovers);
	tcase_add_test(tc, group_member_fails_alone);
	tcase_add_test(tc, write_flight_member_fails_alone);
	tcase_add_test(tc, cut_between_flights);
	tcase_add_test(tc, result_json);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (util_init() != 0)
		return 1;
	return test_run_backends(accept_suite, "accept");
}
