/*
 * check_json.c: tests of lib/base/json.c, the library's one door to cJSON,
 * and of every JSON path of the library when memory runs out
 * (hookbox-fcgi(8), HTTP CONTRACT: out of memory is "unavailable", never
 * "malformed", and nothing is half-written): the parse of a webhook
 * through webhook_prepare(), the action payload built inside the acceptance
 * transaction, the JSON read-outs, and the answer document.
 *
 * Allocation failures come from the test build's fault point FAULT_ALLOC,
 * which every cJSON allocation passes once util_init() installed the
 * hooks; the databases are real SQLite files.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <sqlite3.h>

#include "base/fault.h"
#include "base/json.h"
#include "config/admin.h"
#include "config/bulk.h"
#include "db/db.h"
#include "intake/accept.h"
#include "intake/webhook.h"
#include "store/outbox.h"
#include "testutil.h"
#include "base/text.h"
#include "base/util.h"
#include "provider/tornado.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

#define KEY_HEADER	"X-Hook-Key"
#define KEY		"k3y-for-tests"
#define OUTPUT		"{\"format\":\"mp4\",\"height\":720,\"tags\":[\"a\"]}"

static char		 dir[PATH_MAX - 32];
static char		 state_path[PATH_MAX];
static struct store	*st;
static struct group	*grp;	/* inline: commits on the test's thread */
static struct config	*cfg;
static struct config_cache *cache;	/* what webhook_prepare() reads */

/*
 * Fault callbacks
 */

struct failnth {
	long	n;	/* the allocation to fail, from 0 */
	int	sticky;	/* and every one after it */
	long	seen;	/* allocations that reached the point */
	int	fired;
};

static int
fail_nth(enum fault_point p, void *arg)
{
	struct failnth	*f = arg;
	long		 i = f->seen++;

	(void)p;
	if (i == f->n || (f->sticky && i > f->n)) {
		f->fired = 1;
		return 1;
	}
	return 0;
}

static void
arm(struct failnth *f, long n, int sticky)
{
	memset(f, 0, sizeof(*f));
	f->n = n;
	f->sticky = sticky;
	fault_set(FAULT_ALLOC, fail_nth, f);
}

static void
disarm(void)
{
	fault_set(FAULT_ALLOC, NULL, NULL);
}

/*
 * Fixtures: tenant acme, a key-mode per-job endpoint "hook", job-1 whose
 * completion qualifies action acme:att-42:analyze-v1 with output settings.
 */

static void
setup(void)
{
	struct config		*w;
	struct config_endpoint	 e;
	struct config_job	 j;

	snprintf(dir, sizeof(dir), "%s", test_tmpdir());
	test_path(state_path, sizeof(state_path), dir, "state.db");
	w = test_config_create(dir);
	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "sink");
	e = test_endpoint("hook", "acme", CONFIG_AUTH_KEY);
	snprintf(e.key_header, sizeof(e.key_header), KEY_HEADER);
	test_put_endpoint(w, &e, KEY);
	j = test_job("acme", "job-1", "att-42", "sink");
	snprintf(j.source_url, sizeof(j.source_url), "https://src.example/1");
	snprintf(j.output, sizeof(j.output), OUTPUT);
	test_put_job(w, &j);
	config_close(w);
	st = test_store_open(dir, 1000, 1);
	cfg = test_config_open(dir, CONFIG_READ, 1000);
	ck_assert_int_eq(config_cache_new(test_location(dir, "config.db"), 1000,
	    1, &cache), 0);
	grp = test_group_new(state_path, 0, NULL);
}

static void
teardown(void)
{
	disarm();
	group_free(grp);
	store_close(st);
	config_close(cfg);
	config_cache_free(cache);
	cache = NULL;
	grp = NULL;
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

static void
snapshot(char *buf, size_t len)
{
	test_state_snapshot(state_path, buf, len);
}

static const char *
header(const void *arg, const char *name)
{
	(void)arg;
	return strcmp(name, KEY_HEADER) == 0 ? KEY : NULL;
}

/*
 * Runs len bytes at body through webhook_prepare() and the writer, on
 * "hook".
 */
static enum hb_result
webhook_len(const char *body, size_t len, struct accept_res *res)
{
	struct webhook_req	req;
	struct webhook_obs	h;

	memset(&req, 0, sizeof(req));
	req.endpoint = "hook";
	req.header = header;
	req.body = body;
	req.bodylen = len;
	req.now_ms = util_now_ms();
	if (webhook_prepare(cache, &req, &h, res) != 0)
		return res->result;
	return group_submit(grp, &h.prep, res);
}

static enum hb_result
hook(const char *body, struct accept_res *res)
{
	return webhook_len(body, strlen(body), res);
}

static const char completed1[] = "{\"type\":\"job_completed\","
    "\"job_id\":\"job-1\",\"status\":\"completed\",\"key\":\"out/1.mp4\","
    "\"url\":\"https://cdn.example/out/1.mp4\",\"title\":\"t\"}";

/*
 * One request under memory pressure
 */

/*
 * Every cJSON allocation of one accepted webhook fails in turn: the
 * body's parse, then the action payload built inside the transaction.
 * Each answer is HB_NOMEM (the responder's 503: the provider retries),
 * never HB_MALFORMED and never an acknowledgement, and nothing is
 * written.  Then the request goes through once, with the payload whole.
 */
START_TEST(webhook_nomem_each_allocation)
{
	struct failnth		f;
	struct accept_res	res;
	enum hb_result		r;
	char			snap[128];

	for (f.n = 0;; f.n++) {
		arm(&f, f.n, _i);
		r = hook(completed1, &res);
		disarm();
		if (!f.fired)
			break;
		ck_assert_msg(r == HB_NOMEM, "allocation %ld (sticky %d) "
		    "failed: %s (%s), want nomem", f.n, _i, hb_result_name(r),
		    res.detail != NULL ? res.detail : "");
		snapshot(snap, sizeof(snap));
		ck_assert_msg(strcmp(snap, "r0 j0 a0 o0 c0") == 0,
		    "allocation %ld: %s written", f.n, snap);
	}
	/* Both the parse and the payload allocate several times. */
	ck_assert_int_ge(f.n, 10);
	ck_assert_int_eq(r, HB_ACCEPTED);
	ck_assert_str_eq(res.action, "acme:att-42:analyze-v1");
	ck_assert_int_eq(q("SELECT count(*) FROM outbox WHERE"
	    " json_extract(payload, '$.action') = 'acme:att-42:analyze-v1'"
	    " AND json_extract(payload, '$.file.key') = 'out/1.mp4'"
	    " AND json_extract(payload, '$.source_url') ="
	    " 'https://src.example/1'"
	    " AND json_type(payload, '$.output') = 'object'"
	    " AND json_extract(payload, '$.output.height') = 720"
	    " AND json_extract(payload, '$.accepted_at_ms') > 0"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM receipts"), 1);
}
END_TEST

/* The same through accept_observation() alone: only payload building. */
START_TEST(payload_nomem_rolls_back)
{
	struct failnth		 f;
	struct accept_req	 req;
	struct accept_res	 res;
	struct obs		 o;
	enum hb_result		 r;
	char			 why[128], snap[128];
	long			 fired = 0;

	ck_assert_int_eq(tornado_parse_callback(completed1, strlen(completed1),
	    &o, why, sizeof(why)), TORNADO_OK);
	memset(&req, 0, sizeof(req));
	req.tenant = "acme";
	req.endpoint = "hook";
	req.obs = &o;
	req.body = completed1;
	req.bodylen = strlen(completed1);
	for (f.n = 0;; f.n++) {
		req.now_ms = util_now_ms();
		arm(&f, f.n, 0);
		r = accept_observation(st, cfg, &req, &res);
		disarm();
		if (!f.fired)
			break;
		fired++;
		ck_assert_msg(r == HB_NOMEM, "allocation %ld: %s", f.n,
		    hb_result_name(r));
		snapshot(snap, sizeof(snap));
		ck_assert_str_eq(snap, "r0 j0 a0 o0 c0");
	}
	ck_assert_int_ge(fired, 5);
	ck_assert_int_eq(r, HB_ACCEPTED);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox WHERE"
	    " json_type(payload, '$.output') = 'object'"), 1);
	/* The same again is a duplicate: no payload is built at all. */
	arm(&f, 0, 1);
	ck_assert_int_eq(accept_observation(st, cfg, &req, &res),
	    HB_DUPLICATE);
	disarm();
	ck_assert_int_eq(f.seen, 0);
}
END_TEST

/*
 * Output settings that are not JSON still travel, as a string; output
 * settings that are JSON never turn into one because memory ran out.
 */
START_TEST(payload_output_text)
{
	struct config		*w;
	struct config_job	 j;
	struct accept_res	 res;

	w = test_config_open(dir, CONFIG_WRITE, 1000);
	j = test_job("acme", "job-2", "att-43", "sink");
	snprintf(j.output, sizeof(j.output), "mp4, 720p");
	test_put_job(w, &j);
	config_close(w);
	ck_assert_int_eq(hook("{\"type\":\"job_completed\","
	    "\"job_id\":\"job-2\"}", &res), HB_ACCEPTED);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox WHERE"
	    " json_extract(payload, '$.output') = 'mp4, 720p'"), 1);
}
END_TEST

/*
 * Malformed bodies through the real request path: refused, nothing
 * written, and the why never carries the sender's bytes.
 */
START_TEST(webhook_malformed_nothing_written)
{
	static const struct {
		const char	*body;
		size_t		 len;
	} bad[] = {
		{ "{\"type\":\"job_completed\",\"job_id\":\"job-1\0-x\"}", 43 },
		{ "{\"type\":\"job_completed\",\"job_id\":\"job-1\",\"key\":"
		    "\"a\rb\"}", 0 },
		{ "{\"job_id\":\"job-1\",\"job_id\":\"job-2\","
		    "\"type\":\"job_completed\"}", 0 },
		{ "{\"type\":\"job_completed\",\"job_id\":\"job-1\","
		    "\"x\\u001b[2J\":1,\"x\\u001b[2J\":2}", 0 },
		{ "{\"type\":\"job_completed\",\"job_id\":\"job-1\\n\"}", 0 },
	};
	struct accept_res	 res;
	enum hb_result		 r;
	char			 snap[128];
	size_t			 i, len;

	for (i = 0; i < NELEM(bad); i++) {
		len = bad[i].len != 0 ? bad[i].len : strlen(bad[i].body);
		r = webhook_len(bad[i].body, len, &res);
		ck_assert_msg(r == HB_MALFORMED, "case %zu: %s", i,
		    hb_result_name(r));
		ck_assert_ptr_nonnull(res.detail);
		ck_assert_msg(text_valid_line(res.detail, sizeof(res.why)),
		    "case %zu: detail has control characters", i);
		snapshot(snap, sizeof(snap));
		ck_assert_str_eq(snap, "r0 j0 a0 o0 c0");
	}
	/* The example of the issue reads "job-1" no more: */
	ck_assert_int_eq(webhook_len(bad[0].body, bad[0].len, &res),
	    HB_MALFORMED);
	/* and a duplicate names the key when it is plain. */
	ck_assert_int_eq(hook(bad[2].body, &res), HB_MALFORMED);
	ck_assert_str_eq(res.detail, "job_id: duplicate key");
	ck_assert_int_eq(hook(bad[3].body, &res), HB_MALFORMED);
	ck_assert_str_eq(res.detail, "body: duplicate key");
}
END_TEST

/* A multi-line error is recorded, its control characters blanked. */
START_TEST(webhook_error_text_recorded)
{
	struct accept_res	res;

	ck_assert_int_eq(hook("{\"type\":\"job_failed\",\"job_id\":\"job-1\","
	    "\"error\":\"ffmpeg: exit 1\\n\\u001b[31mboom\\u001b[0m\"}", &res),
	    HB_RECORDED);
	ck_assert_int_eq(q("SELECT count(*) FROM job_state WHERE"
	    " error = 'ffmpeg: exit 1  [31mboom [0m'"), 1);
	/* The receipt keeps the body as sent. */
	ck_assert_int_eq(q("SELECT count(*) FROM receipts WHERE"
	    " instr(CAST(body AS TEXT), '\\u001b[31m') > 0"), 1);
}
END_TEST

/*
 * Read-outs
 */

/* Every allocation of a read-out fails in turn: NOMEM, no array. */
START_TEST(readouts_nomem)
{
	struct failnth		 f;
	struct accept_res	 res;
	cJSON			*arr;
	enum store_status	 ss;
	enum config_status	 cs;
	long			 fired = 0;

	ck_assert_int_eq(hook(completed1, &res), HB_ACCEPTED);
	for (f.n = 0;; f.n++) {
		arm(&f, f.n, _i);
		arr = (cJSON *)&f;	/* proves *out is written */
		ss = store_outbox_list(st, STORE_PENDING, NULL, &arr);
		disarm();
		if (!f.fired)
			break;
		fired++;
		ck_assert_int_eq(ss, STORE_NOMEM);
		ck_assert_ptr_null(arr);
	}
	ck_assert_int_ge(fired, 3);
	ck_assert_int_eq(ss, STORE_OK);
	ck_assert_int_eq(cJSON_GetArraySize(arr), 1);
	ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetArrayItem(arr, 0), "action")), "acme:att-42:analyze-v1");
	cJSON_Delete(arr);

	for (f.n = 0, fired = 0;; f.n++) {
		arm(&f, f.n, _i);
		cs = config_list(cfg, CONFIG_JOBS, NULL, &arr);
		disarm();
		if (!f.fired)
			break;
		fired++;
		ck_assert_int_eq(cs, CONFIG_NOMEM);
		ck_assert_ptr_null(arr);
	}
	ck_assert_int_ge(fired, 3);
	ck_assert_int_eq(cs, CONFIG_OK);
	ck_assert_int_eq(cJSON_GetArraySize(arr), 1);
	cJSON_Delete(arr);
}
END_TEST

/* db_json_rows() itself: rows that are not JSON are no memory failure. */
static const struct db_text json_rows_text[] = {
	{ "SELECT '{\"a\":1}' UNION ALL SELECT '{\"b\":[2]}'", NULL },
	{ "SELECT '{\"a\":1}' UNION ALL SELECT 'nope'", NULL },
	{ "SELECT NULL", NULL },
	{ "SELECT 1 WHERE 0", NULL },
};

START_TEST(json_rows_status)
{
	struct db	*db;
	cJSON		*arr;
	struct failnth	 f;
	enum db_rc	 rc;
	char		 path[PATH_MAX], here[PATH_MAX];

	(void)snprintf(here, sizeof(here), "%s", test_tmpdir());
	test_path(path, sizeof(path), here, "rows.db");
	ck_assert_int_eq(db_open_sqlite(path, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE, json_rows_text, 4, &db), DB_OK);
	ck_assert_int_eq(db_json_rows(db_stmt(db, 0), &arr), DB_OK);
	ck_assert_int_eq(cJSON_GetArraySize(arr), 2);
	cJSON_Delete(arr);
	/* Every allocation, in turn. */
	for (f.n = 0;; f.n++) {
		arm(&f, f.n, 0);
		rc = db_json_rows(db_stmt(db, 0), &arr);
		disarm();
		if (!f.fired)
			break;
		ck_assert_int_eq(rc, DB_NOMEM);
		ck_assert_ptr_null(arr);
	}
	ck_assert_int_eq(rc, DB_OK);
	cJSON_Delete(arr);
	ck_assert_int_ge(f.n, 3);

	/* A row that is not JSON, or NULL: the data is wrong, not memory. */
	ck_assert_int_eq(db_json_rows(db_stmt(db, 1), &arr), DB_ERROR);
	ck_assert_ptr_null(arr);
	ck_assert_int_eq(db_json_rows(db_stmt(db, 2), &arr), DB_ERROR);
	ck_assert_ptr_null(arr);
	/* No rows: an empty array. */
	ck_assert_int_eq(db_json_rows(db_stmt(db, 3), &arr), DB_OK);
	ck_assert(cJSON_IsArray(arr));
	ck_assert_int_eq(cJSON_GetArraySize(arr), 0);
	cJSON_Delete(arr);
	db_close(db);
	test_rmdir(here);
}
END_TEST

/*
 * The answer document
 */

/*
 * accept_res_json() allocates nothing: when memory is short the answer
 * (a 503, or a 200 whose provider must stop retrying) still carries its
 * result and action.  Its output is what a JSON parser reads back.
 */
START_TEST(result_json_without_memory)
{
	static const char *const details[] = { NULL, "",
	    "delivery id received before", "job_id: duplicate key",
	    "quote \" backslash \\ slash /", "\x01\x1f\x7f tab\t nl\n",
	    "caf\xc3\xa9 \xe2\x82\xac" };
	static const char *const actions[] = { "", "acme:att-42:analyze-v1",
	    "a\"b:c\\d:\xc3\xa9" };
	struct accept_res	 res;
	struct failnth		 f;
	cJSON			*doc;
	char			 buf[1024], small[24];
	size_t			 a, d;
	int			 r;

	for (r = HB_ACCEPTED; r <= HB_NOMEM; r++)
		for (a = 0; a < NELEM(actions); a++)
			for (d = 0; d < NELEM(details); d++) {
				memset(&res, 0, sizeof(res));
				res.result = (enum hb_result)r;
				snprintf(res.action, sizeof(res.action), "%s",
				    actions[a]);
				res.detail = details[d];
				arm(&f, 0, 1);
				ck_assert_int_eq(accept_res_json(&res, buf,
				    sizeof(buf)), 0);
				disarm();
				ck_assert_int_eq(f.seen, 0);
				ck_assert_int_ne(text_valid_line(buf,
				    sizeof(buf)), 0);
				doc = cJSON_Parse(buf);
				ck_assert_msg(doc != NULL, "not JSON: %s", buf);
				ck_assert_str_eq(cJSON_GetStringValue(
				    cJSON_GetObjectItemCaseSensitive(doc,
				    "result")), hb_result_name(res.result));
				if (a == 0)
					ck_assert_ptr_null(
					    cJSON_GetObjectItemCaseSensitive(
					    doc, "action"));
				else
					ck_assert_str_eq(cJSON_GetStringValue(
					    cJSON_GetObjectItemCaseSensitive(
					    doc, "action")), actions[a]);
				if (details[d] == NULL)
					ck_assert_ptr_null(
					    cJSON_GetObjectItemCaseSensitive(
					    doc, "detail"));
				else
					ck_assert_str_eq(cJSON_GetStringValue(
					    cJSON_GetObjectItemCaseSensitive(
					    doc, "detail")), details[d]);
				cJSON_Delete(doc);
			}

	/* Exactly the compact form the responder has always sent. */
	memset(&res, 0, sizeof(res));
	res.result = HB_ACCEPTED;
	snprintf(res.action, sizeof(res.action), "acme:att-42:analyze-v1");
	ck_assert_int_eq(accept_res_json(&res, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "{\"result\":\"accepted\","
	    "\"action\":\"acme:att-42:analyze-v1\"}");
	res.detail = "a \"b\"";
	ck_assert_int_eq(accept_res_json(&res, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "{\"result\":\"accepted\","
	    "\"action\":\"acme:att-42:analyze-v1\",\"detail\":\"a \\\"b\\\"\"}");

	/* Too small: -1, an empty string, nothing past the buffer. */
	memset(small, 'Z', sizeof(small));
	ck_assert_int_eq(accept_res_json(&res, small, 20), -1);
	ck_assert_str_eq(small, "");
	ck_assert_int_eq(small[20], 'Z');
	ck_assert_int_eq(accept_res_json(&res, small, 0), -1);
	/* The exact fit and one byte less. */
	ck_assert_int_eq(accept_res_json(&res, buf, sizeof(buf)), 0);
	r = (int)strlen(buf);
	ck_assert_int_eq(accept_res_json(&res, buf, (size_t)r + 1), 0);
	ck_assert_int_eq((int)strlen(buf), r);
	ck_assert_int_eq(accept_res_json(&res, buf, (size_t)r), -1);
}
END_TEST

/*
 * base/json.c itself
 */

START_TEST(hooks_installed)
{
	struct failnth	 f;
	cJSON		*doc;

	/* util_init() routed cJSON's allocations through the hook. */
	arm(&f, 0, 1);
	ck_assert_ptr_null(cJSON_CreateObject());
	ck_assert_ptr_null(cJSON_Parse("{\"a\":1}"));
	disarm();
	ck_assert_int_eq(f.seen, 2);
	/* Without failures, cJSON works; memory goes back through free. */
	ck_assert_ptr_nonnull(doc = cJSON_Parse("{\"a\":[1,2,3]}"));
	cJSON_Delete(doc);
}
END_TEST

START_TEST(parse_own_documents)
{
	struct failnth	 f;
	cJSON		*doc;

	ck_assert_int_eq(json_parse("{\"a\":1}", &doc), JSON_OK);
	ck_assert(cJSON_IsObject(doc));
	cJSON_Delete(doc);
	ck_assert_int_eq(json_parse("[1, \"x\"] ", &doc), JSON_OK);
	cJSON_Delete(doc);
	doc = (cJSON *)&f;
	ck_assert_int_eq(json_parse("nope", &doc), JSON_SYNTAX);
	ck_assert_ptr_null(doc);
	ck_assert_int_eq(json_parse("{\"a\":1} x", &doc), JSON_SYNTAX);
	ck_assert_int_eq(json_parse("", &doc), JSON_SYNTAX);
	arm(&f, 0, 0);
	ck_assert_int_eq(json_parse("{\"a\":1}", &doc), JSON_NOMEM);
	disarm();
	ck_assert_ptr_null(doc);
	/* A failure noted earlier does not leak into the next parse. */
	ck_assert_int_eq(json_parse("nope", &doc), JSON_SYNTAX);
}
END_TEST

START_TEST(strict_statuses)
{
	static const struct {
		const char		*body;
		size_t			 len;	/* 0: strlen */
		enum json_status	 want;
		const char		*dup;
	} cases[] = {
		{ "{\"a\":1}", 0, JSON_OK, "" },
		{ " [1,{\"a\":{\"a\":1}},{\"a\":2}]\r\n\t ", 0, JSON_OK, "" },
		{ "\"s\"", 0, JSON_OK, "" },
		{ "{\"a\":1", 0, JSON_SYNTAX, "" },
		{ "{\"a\":1}\x0b", 0, JSON_CONTROL, "" },
		{ "{\"a\":\"\x7f\"}", 0, JSON_OK, "" },
		{ "{\"a\":\"\\\x01\"}", 0, JSON_CONTROL, "" },
		{ "{\"a\":\"x\0\"}", 10, JSON_CONTROL, "" },
		{ "{\"a\":\"\\u0000\"}", 0, JSON_NUL, "" },
		{ "{\"a\":\"\\\\u0000\"}", 0, JSON_OK, "" },
		{ "{\"\\u0000\":1}", 0, JSON_NUL, "" },
		{ "{\"a\":1,\"a\":1}", 0, JSON_DUPKEY, "a" },
		{ "{\"x.y-z_9\":1,\"x.y-z_9\":1}", 0, JSON_DUPKEY, "x.y-z_9" },
		{ "{\"a b\":1,\"a b\":1}", 0, JSON_DUPKEY, "" },
		{ "{\"\":1,\"\":1}", 0, JSON_DUPKEY, "" },
		{ "{\"\\u00e9\":1,\"\xc3\xa9\":1}", 0, JSON_DUPKEY, "" },
		{ "{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":1,"
		    "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":1}", 0,
		    JSON_DUPKEY, "" },
	};
	cJSON			*doc;
	char			 dup[33];
	enum json_status	 rc;
	size_t			 i, len;

	for (i = 0; i < NELEM(cases); i++) {
		len = cases[i].len != 0 ? cases[i].len : strlen(cases[i].body);
		memset(dup, 'Z', sizeof(dup));
		rc = json_parse_strict(cases[i].body, len, &doc, dup,
		    sizeof(dup));
		ck_assert_msg(rc == cases[i].want, "case %zu: %s, want %s", i,
		    json_strerror(rc), json_strerror(cases[i].want));
		ck_assert_msg((doc != NULL) == (rc == JSON_OK), "case %zu", i);
		ck_assert_msg(strcmp(dup, cases[i].dup) == 0,
		    "case %zu: dup \"%.32s\"", i, dup);
		cJSON_Delete(doc);
	}
	/* dup may be left out. */
	ck_assert_int_eq(json_parse_strict("{\"a\":1,\"a\":1}", 13, &doc, NULL,
	    0), JSON_DUPKEY);
	/* Every status has its own sentence. */
	for (i = JSON_OK; i < JSON_NOMEM; i++)
		ck_assert_str_ne(json_strerror((enum json_status)i),
		    json_strerror((enum json_status)(i + 1)));
}
END_TEST

/*
 * The failure flag is per thread: one thread running out of memory does
 * not make another thread's syntax error look like out of memory.
 */
static _Thread_local int	starving;
static pthread_barrier_t	start_line;

#define ROUNDS	20000

static int
fail_on_starved(enum fault_point p, void *arg)
{
	(void)p;
	(void)arg;
	return starving;
}

static void *
starve(void *arg)
{
	cJSON	*doc;
	long	 i, *bad = arg;

	starving = 1;
	pthread_barrier_wait(&start_line);
	for (i = 0; i < ROUNDS; i++)
		if (json_parse("{\"a\":[1,2,3],\"b\":\"x\"}", &doc) !=
		    JSON_NOMEM)
			(*bad)++;
	return NULL;
}

static void *
misspell(void *arg)
{
	cJSON	*doc;
	long	 i, *bad = arg;

	/* Allocates for "a" and the array, then fails on the syntax. */
	pthread_barrier_wait(&start_line);
	for (i = 0; i < ROUNDS; i++)
		if (json_parse("{\"a\":[1,2,3],\"b\":x}", &doc) != JSON_SYNTAX)
			(*bad)++;
	return NULL;
}

START_TEST(nomem_flag_per_thread)
{
	pthread_t	starved, other;
	long		bad_starved = 0, bad_other = 0;

	ck_assert_int_eq(pthread_barrier_init(&start_line, NULL, 2), 0);
	fault_set(FAULT_ALLOC, fail_on_starved, NULL);
	ck_assert_int_eq(pthread_create(&starved, NULL, starve, &bad_starved),
	    0);
	ck_assert_int_eq(pthread_create(&other, NULL, misspell, &bad_other),
	    0);
	ck_assert_int_eq(pthread_join(starved, NULL), 0);
	ck_assert_int_eq(pthread_join(other, NULL), 0);
	disarm();
	pthread_barrier_destroy(&start_line);
	ck_assert_int_eq(bad_starved, 0);
	ck_assert_int_eq(bad_other, 0);
}
END_TEST

/*
 * Which cJSON runs: in the sanitizer build, when Debian's source package
 * could be had (scripts/cjson-src.sh), the instrumented copy compiled into
 * the program, so that ASan and UBSan see inside the parser; elsewhere
 * the system's shared libcjson.
 */
START_TEST(cjson_origin)
{
	Dl_info	di;

	ck_assert_int_ne(dladdr((void *)cJSON_ParseWithLengthOpts, &di), 0);
	ck_assert_ptr_nonnull(di.dli_fname);
#ifdef HB_CJSON_SOURCE
	ck_assert_msg(strstr(di.dli_fname, "libcjson") == NULL,
	    "cJSON comes from %s, not from the program", di.dli_fname);
#else
	ck_assert_msg(strstr(di.dli_fname, "libcjson") != NULL,
	    "cJSON comes from %s, not from libcjson", di.dli_fname);
#endif
}
END_TEST

static Suite *
json_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("json");

	tc = tcase_create("module");
	tcase_add_test(tc, hooks_installed);
	tcase_add_test(tc, parse_own_documents);
	tcase_add_test(tc, strict_statuses);
	tcase_add_test(tc, nomem_flag_per_thread);
	tcase_add_test(tc, result_json_without_memory);
	tcase_add_test(tc, json_rows_status);
	tcase_add_test(tc, cjson_origin);
	suite_add_tcase(s, tc);

	tc = tcase_create("library");
	tcase_add_checked_fixture(tc, setup, teardown);
	/* _i: 0 fails one allocation, 1 that one and every later one. */
	tcase_add_loop_test(tc, webhook_nomem_each_allocation, 0, 2);
	tcase_add_test(tc, payload_nomem_rolls_back);
	tcase_add_test(tc, payload_output_text);
	tcase_add_test(tc, webhook_malformed_nothing_written);
	tcase_add_test(tc, webhook_error_text_recorded);
	tcase_add_loop_test(tc, readouts_nomem, 0, 2);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	if (util_init() != 0)
		return 1;
	return test_run(json_suite);
}
