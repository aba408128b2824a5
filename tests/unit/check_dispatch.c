/*
 * check_dispatch.c: the dispatcher in-process, against a real local HTTP
 * server (tests/sink, started here): backoff bounds, the Standard
 * Webhooks signature it sends verified with the project's own verifier,
 * and the guards on the store's recovery moves (real SQLite files).  The
 * process-level windows (SIGKILL, two dispatchers, a locked config.db,
 * restart) are in tests/e2e/dispatch.sh.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "delivery/dispatch.h"
#include "net/http.h"
#include "provider/auth.h"
#include "testutil.h"
#include "base/util.h"

#define SECRET	"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

static char		 sink_path[PATH_MAX];
static char		 dir[PATH_MAX - 64];
static char		 log_path[PATH_MAX];
static pid_t		 sink_pid;
static int		 sink_port;
static struct store	*st;
static struct config	*cfg;

/*
 * base/log.h, the lines the dispatcher (and the responder) write: one line
 * each, keys as given, values escaped and bounded.
 */
static char	logged[LOG_LINE_MAX * 2];

/* Runs f with the log going to a file; its text in logged. */
static void
capture(void (*f)(void))
{
	char	path[] = "/tmp/hb-log-XXXXXX";
	int	fd, old;
	ssize_t	n;

	ck_assert_int_ge(fd = mkstemp(path), 0);
	unlink(path);
	old = log_set_fd(fd);
	f();
	log_set_fd(old);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_ge(n = read(fd, logged, sizeof(logged) - 1), 0);
	logged[n] = '\0';
	close(fd);
}

static void
plain_line(void)
{
	struct log_line	l;

	log_begin(&l, LOG_LV_WARN, "delivery");
	log_str(&l, "bare", "acme:att-1:x");
	log_str(&l, "spaced", "a b");
	log_str(&l, "quoted", "say \"hi\"=\\");
	log_str(&l, "ctl", "a\nb\r\t\001\177");
	log_str(&l, "high", "\xc2\x9b\xe2\x80\xae");
	log_str(&l, "empty", "");
	log_str(&l, "none", NULL);
	log_int(&l, "n", -42);
	log_fmt(&l, "ms", "%.3f", 1.5);
	log_end(&l);
}

static void
long_line(void)
{
	struct log_line	l;
	char		v[2000];
	int		i;

	memset(v, 'x', sizeof(v) - 1);
	v[sizeof(v) - 1] = '\0';
	log_begin(&l, LOG_LV_INFO, "long");
	log_str(&l, "v", v);
	log_end(&l);
	log_begin(&l, LOG_LV_INFO, "full");
	for (i = 0; i < 20; i++)
		log_str(&l, "v", v);
	log_end(&l);
}

START_TEST(log_lines)
{
	const char	*p, *nl;

	capture(plain_line);
	ck_assert_msg(strncmp(logged, "ts=", 3) == 0 && logged[7] == '-' &&
	    logged[26] == 'Z' && logged[22] == '.', "%s", logged);
	ck_assert_ptr_nonnull(strstr(logged, "Z level=warn event=delivery"
	    " bare=acme:att-1:x spaced=\"a b\" quoted=\"say \\\"hi\\\"=\\\\\""
	    " ctl=\"a\\nb\\r\\t\\x01\\x7f\" high=\"\\xc2\\x9b\\xe2\\x80\\xae\""
	    " empty=\"\" n=-42 ms=1.500\n"));
	ck_assert_ptr_null(strstr(logged, "none="));
	ck_assert_int_eq((int)strlen(logged), (int)(strchr(logged, '\n') -
	    logged) + 1);

	capture(long_line);
	/* A long value is cut at LOG_VALUE_MAX and marked. */
	nl = strchr(logged, '\n');
	ck_assert_ptr_nonnull(nl);
	p = strstr(logged, " v=\"");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq((int)(nl - p), 4 + LOG_VALUE_MAX + 4);
	ck_assert_int_eq(memcmp(nl - 4, "...\"", 4), 0);
	/* A line with too much: whole keys only, marked, one write. */
	p = nl + 1;
	nl = strchr(p, '\n');
	ck_assert_ptr_nonnull(nl);
	ck_assert_int_eq(nl[1], '\0');
	ck_assert_int_le((int)(nl - p + 1), LOG_LINE_MAX);
	ck_assert_int_eq(memcmp(nl - 12, " truncated=1", 12), 0);
	ck_assert_int_eq(memcmp(nl - 16, "...\"", 4), 0);
}
END_TEST

START_TEST(backoff_bounds)
{
	struct dispatch_opts	o;
	int64_t			d, cap, seen_max = 0;
	int			a, i;

	memset(&o, 0, sizeof(o));
	o.backoff_base_ms = 100;
	o.backoff_max_ms = 1000;
	for (a = 1; a <= 12; a++) {
		cap = 100LL << (a - 1);
		if (cap > 1000)
			cap = 1000;
		for (i = 0; i < 200; i++) {
			d = dispatch_backoff(&o, a, -1);
			ck_assert_int_ge(d, 0);
			ck_assert_int_le(d, cap);
			if (a == 3 && d > seen_max)
				seen_max = d;
		}
	}
	/* Full jitter spreads: 200 draws in [0, 400] reach past 200. */
	ck_assert_int_gt(seen_max, 200);
	/* Retry-After is a floor. */
	for (i = 0; i < 50; i++)
		ck_assert_int_ge(dispatch_backoff(&o, 1, 5000), 5000);
}
END_TEST

/* Starts the sink with a script; reads the port it prints. */
static void
start_sink(const char *script)
{
	int	 out[2];
	char	 buf[32];
	ssize_t	 n;

	ck_assert_int_eq(pipe(out), 0);
	sink_pid = fork();
	ck_assert_int_ne(sink_pid, -1);
	if (sink_pid == 0) {
		dup2(out[1], STDOUT_FILENO);
		close(out[0]);
		execl(sink_path, "sink", "-p", "0", "-l", log_path, "-s",
		    script, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	n = read(out[0], buf, sizeof(buf) - 1);
	close(out[0]);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	sink_port = (int)strtol(buf, NULL, 10);
	ck_assert_int_gt(sink_port, 0);
}

static void
setup(void)
{
	struct config			*w;
	struct config_destination	 d;

	snprintf(dir, sizeof(dir), "%s", test_tmpdir());
	test_path(log_path, sizeof(log_path), dir, "sink.log");
	/* Without a database to test on, fail before any sink is started. */
	(void)test_location(dir, "state.db");
	start_sink("204");

	w = test_config_create(dir);
	test_add_tenant(w, "acme", 1);
	d = test_destination("acme", "signed");
	snprintf(d.url, sizeof(d.url), "http://127.0.0.1:%d/in", sink_port);
	d.timeout_ms = 5000;
	test_put_destination(w, &d, SECRET);
	test_add_job(w, "acme", "job-1", "att-1", "signed");
	test_add_job(w, "acme", "job-2", "att-2", "signed");
	test_add_job(w, "acme", "job-3", "att-3", "signed");
	config_close(w);

	cfg = test_config_open(dir, CONFIG_READ, 1000);
	st = test_store_open(dir, 1000, 1);
}

static void
teardown(void)
{
	if (sink_pid > 0) {
		kill(sink_pid, SIGTERM);
		waitpid(sink_pid, NULL, 0);
	}
	store_close(st);
	config_close(cfg);
	test_rmdir(dir);
}

/* Splits one tab-separated log line in place; returns the field count. */
static int
fields(char *line, char **f, int max)
{
	int	n = 0;

	while (n < max) {
		f[n++] = line;
		if ((line = strchr(line, '\t')) == NULL)
			break;
		*line++ = '\0';
	}
	return n;
}

/*
 * Three rows in one batch: each request signed for its own body and id,
 * verified with the project's own verifier; the same headers do not
 * verify another body.
 */
START_TEST(signature_verifies)
{
	static const char *const jobs[] = { "job-1", "job-2", "job-3" };
	struct auth_secret	 sec;
	struct dispatch		*ob;
	char			 line[16384], *f[11], *nl, want[64];
	FILE			*fp;
	int64_t			 now = util_now();
	size_t			 i;
	int			 n = 0, seen = 0;

	for (i = 0; i < 3; i++)
		ck_assert_int_eq(test_accept(st, cfg, "acme", jobs[i],
		    util_now_ms()), HB_ACCEPTED);

	ck_assert_ptr_nonnull(ob = dispatch_new(st, cfg, NULL));
	ck_assert_int_eq(dispatch_step(ob), DISPATCH_WORKED);
	ck_assert_int_eq(dispatch_step(ob), DISPATCH_IDLE);
	dispatch_free(ob);

	sec.key = (const unsigned char *)SECRET;
	sec.keylen = strlen(SECRET);
	sec.expires_at = 0;
	/* seq method path key id timestamp signature length answer body conn */
	ck_assert_ptr_nonnull(fp = fopen(log_path, "r"));
	while (fgets(line, sizeof(line), fp) != NULL) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		ck_assert_int_eq(fields(line, f, 11), 11);
		ck_assert_str_eq(f[1], "POST");
		ck_assert_str_eq(f[8], "204");
		ck_assert_str_eq(f[3], f[4]);
		for (i = 0; i < 3; i++) {
			snprintf(want, sizeof(want), "acme:att-%zu:analyze-v1",
			    i + 1);
			if (strcmp(f[3], want) == 0)
				seen |= 1 << i;
		}
		/* The body is this action's own. */
		snprintf(want, sizeof(want), "\"action\":\"%s\"", f[3]);
		ck_assert_ptr_nonnull(strstr(f[9], want));
		ck_assert_int_eq(auth_verify_stdwebhooks(f[4], f[5], f[6],
		    (const unsigned char *)f[9], strlen(f[9]), &sec, 1, now,
		    AUTH_TOLERANCE_DEFAULT, NULL), AUTH_OK);
		/* The same headers do not verify another body. */
		f[9][1] = f[9][1] == 'x' ? 'y' : 'x';
		ck_assert_int_eq(auth_verify_stdwebhooks(f[4], f[5], f[6],
		    (const unsigned char *)f[9], strlen(f[9]), &sec, 1, now,
		    AUTH_TOLERANCE_DEFAULT, NULL), AUTH_BAD_SIGNATURE);
		n++;
	}
	fclose(fp);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(seen, 7);
}
END_TEST

/* Stops the fixture's sink and starts one with this script. */
static void
restart_sink(const char *script)
{
	kill(sink_pid, SIGTERM);
	waitpid(sink_pid, NULL, 0);
	sink_pid = 0;
	start_sink(script);
}

/*
 * A batch's requests are in flight together, each with its own timeout:
 * one that times out ends on its own, before the slow answer of the
 * other, and each result lands in its own slot.  A full batch refuses
 * more at once, sent 0.
 */
START_TEST(batch_timeouts_independent)
{
	struct http_batch	*b;
	struct http_result	 res[HTTP_BATCH_MAX + 1];
	struct http_header	 h[1] = { { "Idempotency-Key", "k" } };
	struct http_req		 req;
	char			 url[64];
	int			 done[HTTP_BATCH_MAX], ndone, left, i, sa, sb;
	int			 got_a = 0, got_b = 0;
	int64_t			 t0, ta = 0, tb = 0;

	restart_sink("slow:1500:204");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/in", sink_port);
	ck_assert_ptr_nonnull(b = http_batch_new());
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = url;
	req.hdrs = h;
	req.nhdrs = 1;
	req.body = "{}";
	req.bodylen = 2;
	req.flags = HTTP_FRESH;
	t0 = util_now_ms();
	req.timeout_ms = 5000;
	ck_assert_int_ge(sb = http_batch_add(b, &req, &res[1]), 0);
	req.timeout_ms = 300;
	ck_assert_int_ge(sa = http_batch_add(b, &req, &res[0]), 0);
	ck_assert_int_ne(sa, sb);
	do {
		left = http_batch_run(b, 10000, done, &ndone);
		for (i = 0; i < ndone; i++) {
			if (done[i] == sa) {
				got_a++;
				ta = util_now_ms() - t0;
			} else if (done[i] == sb) {
				got_b++;
				tb = util_now_ms() - t0;
			} else
				ck_abort_msg("slot %d never used", done[i]);
		}
	} while (left > 0);
	ck_assert_int_eq(got_a, 1);
	ck_assert_int_eq(got_b, 1);
	ck_assert_int_lt(ta, 1500);
	ck_assert_int_ge(tb, 1500);
	ck_assert_int_eq(res[0].status, 0);
	ck_assert_int_eq(res[0].timed_out, 1);
	ck_assert_int_eq(res[0].sent, 1);
	ck_assert_int_eq(res[1].status, 204);
	ck_assert_int_eq(res[1].timed_out, 0);

	/* Nothing listens on port 9: every request fails to connect. */
	req.url = "http://127.0.0.1:9/x";
	req.timeout_ms = 2000;
	for (i = 0; i < HTTP_BATCH_MAX; i++)
		ck_assert_int_ge(http_batch_add(b, &req, &res[i]), 0);
	ck_assert_int_eq(http_batch_add(b, &req, &res[HTTP_BATCH_MAX]), -1);
	ck_assert_int_eq(res[HTTP_BATCH_MAX].sent, 0);
	ck_assert_str_ne(res[HTTP_BATCH_MAX].error, "");
	got_a = 0;
	do {
		left = http_batch_run(b, 10000, done, &ndone);
		got_a += ndone;
	} while (left > 0);
	ck_assert_int_eq(got_a, HTTP_BATCH_MAX);
	for (i = 0; i < HTTP_BATCH_MAX; i++) {
		ck_assert_int_eq(res[i].status, 0);
		ck_assert_int_eq(res[i].sent, 0);
	}
	http_batch_free(b);
	http_batch_free(NULL);
}
END_TEST

/*
 * A request to an internal address, however the URL spells it, is
 * refused before libcurl connects: not sent, refused set, the address
 * named, and the decision is dead at once.  In a batch too.  Loopback is
 * not internal.  The addresses are link-local ones no service is known
 * at: should the check fail, no metadata service of the machine running
 * the tests gets a request (check_util judges the metadata addresses on
 * paper; tests/e2e/internal.sh lets a request through to a link-local
 * address of its own network namespace).
 */
START_TEST(internal_refused)
{
	static const char *const urls[] = {
		"http://169.254.77.1:9/x",
		"http://0xa9fe4d01:9/x",
		"http://169.254.19713:9/x",
		"http://[::ffff:169.254.77.1]:9/x",
		"http://[fe80::1]:9/x",
	};
	static const char *const where[] = {
		"169.254.77.1", "169.254.77.1", "169.254.77.1",
		"::ffff:169.254.77.1", "fe80::1",
	};
	struct http		*h;
	struct http_batch	*b;
	struct http_result	 res;
	struct http_req		 req;
	char			 url[64], want[64];
	int			 done[HTTP_BATCH_MAX], ndone;
	size_t			 i;

	ck_assert_ptr_nonnull(h = http_new());
	for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		ck_assert_int_eq(http_request(h, "POST", urls[i], NULL, 0,
		    "{}", 2, 5000, 0, HTTP_FRESH, &res), -1);
		ck_assert_msg(res.refused == 1, "%s: not refused: %s",
		    urls[i], res.error);
		ck_assert_int_eq(res.sent, 0);
		ck_assert_int_eq(res.status, 0);
		snprintf(want, sizeof(want), "refused to connect to %s, ",
		    where[i]);
		ck_assert_msg(strstr(res.error, want) != NULL, "%s: \"%s\"",
		    urls[i], res.error);
		ck_assert_int_eq(dispatch_decide(&res, 1, 0),
		    STORE_OUT_DEAD);
		ck_assert_int_eq(dispatch_decide(&res, 0, 0),
		    STORE_OUT_DEAD);
		http_result_clear(&res);
	}

	/* Loopback: the sink answers. */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/in", sink_port);
	ck_assert_int_eq(http_request(h, "POST", url, NULL, 0, "{}", 2, 5000,
	    0, HTTP_FRESH, &res), 0);
	ck_assert_int_eq(res.status, 204);
	ck_assert_int_eq(res.refused, 0);
	http_result_clear(&res);
	snprintf(url, sizeof(url), "http://2130706433:%d/in", sink_port);
	ck_assert_int_eq(http_request(h, "POST", url, NULL, 0, "{}", 2, 5000,
	    0, 0, &res), 0);
	ck_assert_int_eq(res.status, 204);
	http_result_clear(&res);

	http_free(h);

	/* A batch keeps the rule. */
	ck_assert_ptr_nonnull(b = http_batch_new());
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = "http://2852015361:9/x";
	req.body = "{}";
	req.bodylen = 2;
	req.timeout_ms = 5000;
	ck_assert_int_ge(http_batch_add(b, &req, &res), 0);
	while (http_batch_run(b, 10000, done, &ndone) > 0)
		;
	ck_assert_int_eq(res.refused, 1);
	ck_assert_int_eq(res.sent, 0);
	ck_assert_ptr_nonnull(strstr(res.error,
	    "169.254.77.1, a link-local address"));
	http_result_clear(&res);
	http_batch_free(b);
}
END_TEST

/* Accepts job-1's completion: one pending row, acme:att-1:analyze-v1. */
static void
accept_one(void)
{
	ck_assert_int_eq(test_accept(st, cfg, "acme", "job-1",
	    util_now_ms() - 60000), HB_ACCEPTED);
}


/*
 * The dispatcher's decision table, exhaustively: every class of answer,
 * idempotent or not, with attempts left or none.  The expected outcome is
 * written out per class, not computed the way the code computes it.
 */
enum answer_class { A_2XX, A_RETRYABLE, A_4XX, A_1XX3XX, A_NOT_SENT,
    A_TIMEOUT_BEFORE, A_TIMEOUT_AFTER, A_REFUSED, A_CLASSES };

static const struct {
	enum answer_class	 cls;
	long			 status;
	int			 sent, timed_out, refused;
} answers[] = {
	{ A_2XX, 200, 1, 0, 0 }, { A_2XX, 201, 1, 0, 0 },
	{ A_2XX, 204, 1, 0, 0 }, { A_2XX, 299, 1, 0, 0 },
	{ A_RETRYABLE, 408, 1, 0, 0 }, { A_RETRYABLE, 429, 1, 0, 0 },
	{ A_RETRYABLE, 500, 1, 0, 0 }, { A_RETRYABLE, 502, 1, 0, 0 },
	{ A_RETRYABLE, 503, 1, 0, 0 }, { A_RETRYABLE, 504, 1, 0, 0 },
	{ A_RETRYABLE, 599, 1, 0, 0 },
	{ A_4XX, 400, 1, 0, 0 }, { A_4XX, 401, 1, 0, 0 },
	{ A_4XX, 403, 1, 0, 0 }, { A_4XX, 404, 1, 0, 0 },
	{ A_4XX, 409, 1, 0, 0 }, { A_4XX, 410, 1, 0, 0 },
	{ A_4XX, 422, 1, 0, 0 }, { A_4XX, 499, 1, 0, 0 },
	{ A_1XX3XX, 100, 1, 0, 0 }, { A_1XX3XX, 199, 1, 0, 0 },
	{ A_1XX3XX, 301, 1, 0, 0 }, { A_1XX3XX, 302, 1, 0, 0 },
	{ A_1XX3XX, 304, 1, 0, 0 }, { A_1XX3XX, 399, 1, 0, 0 },
	{ A_NOT_SENT, 0, 0, 0, 0 },	/* could not connect */
	{ A_TIMEOUT_BEFORE, 0, 0, 1, 0 },	/* timed out connecting */
	{ A_TIMEOUT_AFTER, 0, 1, 1, 0 },	/* sent, then no answer */
	{ A_TIMEOUT_AFTER, 0, 1, 0, 0 },	/* sent, connection broke */
	{ A_REFUSED, 0, 0, 0, 1 },	/* every address internal */
};

static enum store_outcome
expected(enum answer_class c, int idempotent, int last_attempt)
{
	switch (c) {
	case A_2XX:
		return STORE_OUT_DELIVERED;
	case A_4XX:
	case A_1XX3XX:
	case A_REFUSED:
		return STORE_OUT_DEAD;
	case A_RETRYABLE:
	case A_NOT_SENT:
	case A_TIMEOUT_BEFORE:
		return last_attempt ? STORE_OUT_DEAD : STORE_OUT_RETRY;
	case A_TIMEOUT_AFTER:
		if (!idempotent)
			return STORE_OUT_UNKNOWN;
		return last_attempt ? STORE_OUT_DEAD : STORE_OUT_RETRY;
	case A_CLASSES:
		break;
	}
	ck_abort_msg("no such class");
	return STORE_OUT_DEAD;
}

START_TEST(decision_table)
{
	struct http_result	r;
	size_t			i;
	int			idem, max, attempt, seen[A_CLASSES];

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		seen[answers[i].cls] = 1;
		for (idem = 0; idem <= 1; idem++)
			for (max = 1; max <= 4; max++)
				for (attempt = 1; attempt <= max; attempt++) {
			memset(&r, 0, sizeof(r));
			r.status = answers[i].status;
			r.sent = answers[i].sent;
			r.timed_out = answers[i].timed_out;
			r.refused = answers[i].refused;
			r.retry_after_ms = -1;
			ck_assert_msg(dispatch_decide(&r, idem, attempt >= max) ==
			    expected(answers[i].cls, idem, attempt >= max),
			    "status %ld sent %d idempotent %d attempt %d/%d:"
			    " got %d", r.status, r.sent, idem, attempt, max,
			    (int)dispatch_decide(&r, idem, attempt >= max));
		}
	}
	/* Every class was tried. */
	for (i = 0; i < A_CLASSES; i++)
		ck_assert_msg(seen[i], "class %zu untried", i);
	/* The last attempt: a retry is dead, an unknown outcome stays. */
	memset(&r, 0, sizeof(r));
	r.status = 503;
	ck_assert_int_eq(dispatch_decide(&r, 1, 1), STORE_OUT_DEAD);
	r.status = 0;
	r.sent = 1;
	ck_assert_int_eq(dispatch_decide(&r, 0, 1), STORE_OUT_UNKNOWN);
}
END_TEST

/*
 * A recovery move applies only to the row as collected: a lease that
 * was put off, or a status check whose claim an operator ended, is not
 * moved by a stale decision.  One status check at a time.
 */
START_TEST(guarded_moves)
{
	static const char	 action[] = "acme:att-1:analyze-v1";
	struct store_row	 rows[4], seen;
	struct store_lease	 l, l2;
	char			 cursor[HB_ID_MAX + 1] = "";
	int64_t			 now = util_now_ms(), until;
	int			 found, n, ok, lost;

	accept_one();
	ck_assert_int_eq(test_pick1(st, now - 50000, cursor, &seen,
	    &found), STORE_OK);
	ck_assert_int_eq(found, 1);
	/* A claim of the row as picked, whose lease has already lapsed. */
	ck_assert_int_eq(test_claim1(st, &seen, "ghost", now - 50000,
	    now - 51000, &l, &found), STORE_OK);
	ck_assert_int_eq(found, 1);
	/* The same pick again is stale: another claim takes nothing. */
	ck_assert_int_eq(test_claim1(st, &seen, "other", now - 50000,
	    now, &l2, &found), STORE_OK);
	ck_assert_int_eq(found, 0);
	ck_assert_ptr_null(l2.payload);

	/* Expired: collected with its lease; put off, the old view is stale. */
	ck_assert_int_eq(store_outbox_expired(st, now, rows, 4, &n), STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(rows[0].action, action);
	ck_assert_str_eq(rows[0].owner, "ghost");
	ck_assert_int_eq(rows[0].attempts, 1);
	seen = rows[0];
	ck_assert_int_eq(store_outbox_defer(st, &seen, now, now + 5000, &ok),
	    STORE_OK);
	ck_assert_int_eq(ok, 1);
	ck_assert_int_eq(store_outbox_expire(st, &seen, STORE_OUT_UNKNOWN, now,
	    now, "stale", &ok), STORE_OK);
	ck_assert_int_eq(ok, 0);
	ck_assert_int_eq(store_outbox_expired(st, now, rows, 4, &n), STORE_OK);
	ck_assert_int_eq(n, 0);
	/* Seen again once it is due, it is settled. */
	ck_assert_int_eq(store_outbox_expired(st, now + 6000, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(store_outbox_expire(st, &rows[0], STORE_OUT_UNKNOWN,
	    now + 6000, now, "lease expired", &ok), STORE_OK);
	ck_assert_int_eq(ok, 1);
	/* The dead worker's late record moves nothing. */
	ck_assert_int_eq(test_finish1(st, &l, "ghost", STORE_OUT_RETRY,
	    now, now, 503, "HTTP 503", &lost), STORE_OK);
	ck_assert_int_eq(lost, 1);
	store_lease_clear(&l);

	/* Unknown and due: one claim at a time. */
	ck_assert_int_eq(store_outbox_unknown(st, now, rows, 4, &n), STORE_OK);
	ck_assert_int_eq(n, 1);
	until = now + 3000;
	ck_assert_int_eq(store_outbox_check(st, action, "a", now, until, &ok),
	    STORE_OK);
	ck_assert_int_eq(ok, 1);
	ck_assert_int_eq(store_outbox_check(st, action, "b", now, now + 3000,
	    &ok), STORE_OK);
	ck_assert_int_eq(ok, 0);
	ck_assert_int_eq(store_outbox_recheck(st, action, now, now + 1000,
	    "later", &ok), STORE_OK);
	ck_assert_int_eq(ok, 0);
	ck_assert_int_eq(store_outbox_unknown(st, now, rows, 4, &n), STORE_OK);
	ck_assert_int_eq(n, 0);
	/* Another owner's answer does not apply; the claimant's does. */
	ck_assert_int_eq(store_outbox_checked(st, action, "b", until,
	    STORE_CHECKED_RESEND, now, now, "not found", &ok), STORE_OK);
	ck_assert_int_eq(ok, 0);
	ck_assert_int_eq(store_outbox_checked(st, action, "a", until,
	    STORE_CHECKED_AGAIN, now, now, "inconclusive", &ok), STORE_OK);
	ck_assert_int_eq(ok, 1);

	/* An operator's move ends a check under way: its answer is stale. */
	ck_assert_int_eq(store_outbox_check(st, action, "a", now, until, &ok),
	    STORE_OK);
	ck_assert_int_eq(ok, 1);
	ck_assert_int_eq(store_outbox_move(st, action, STORE_MOVE_DELIVERED,
	    now, 0, "operator", &ok), STORE_OK);
	ck_assert_int_eq(ok, 1);
	ck_assert_int_eq(store_outbox_checked(st, action, "a", until,
	    STORE_CHECKED_RESEND, now, now, "not found", &ok), STORE_OK);
	ck_assert_int_eq(ok, 0);
	ck_assert_int_eq(store_outbox_unknown(st, now + 10000, rows, 4, &n),
	    STORE_OK);
	ck_assert_int_eq(n, 0);
}
END_TEST

static Suite *
dispatch_suite(void)
{
	Suite	*s = suite_create("dispatch");
	TCase	*tc = tcase_create("backoff");
	TCase	*sig = tcase_create("signature");

	tcase_add_test(tc, backoff_bounds);
	tcase_add_test(tc, log_lines);
	tcase_add_test(tc, decision_table);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(sig, setup, teardown);
	tcase_add_test(sig, signature_verifies);
	tcase_add_test(sig, batch_timeouts_independent);
	tcase_add_test(sig, internal_refused);
	tcase_add_test(sig, guarded_moves);
	suite_add_tcase(s, sig);
	return s;
}

int
main(int argc, char *argv[])
{
	const char	*slash;
	size_t		 n;

	(void)argc;
	/* The sink is built next to this program. */
	slash = strrchr(argv[0], '/');
	n = slash != NULL ? (size_t)(slash - argv[0]) + 1 : 0;
	if (n + sizeof("sink") > sizeof(sink_path))
		return 1;
	memcpy(sink_path, argv[0], n);
	memcpy(sink_path + n, "sink", sizeof("sink"));
	if (util_init() != 0 || http_global_init(NULL) != 0)
		return 1;
	return test_run_backends(dispatch_suite, "dispatch");
}
