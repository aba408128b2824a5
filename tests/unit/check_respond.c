/*
 * check_respond.c: the responder's request path, fcgi/respond.c, driven
 * in-process through its transport table (struct resp_io), the way kcgi
 * tests its request parsing: no nginx, no socket.  Every row of the HTTP
 * table of hookbox-fcgi(8), HTTP CONTRACT, the checks made before a byte
 * of the body is read, the answer's format, health and metrics, and a
 * transport whose writes fail.
 *
 * The databases are real SQLite files made through the library's own
 * functions, bodies are signed with its own signing helpers.  The binary
 * is linked with --wrap=webhook_receive: the wrapper counts the calls (what
 * the responder refuses by itself must never reach the library) and
 * passes them on to the real webhook_receive(), or, in one test, forces a
 * result so that every value of enum hb_result is seen mapped to its
 * status.
 *
 * What respond() logs is caught per request (at most one line, never a
 * secret), and copied to the real stderr with HB_TEST_VERBOSE set.
 */
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <sqlite3.h>

#include "base/fault.h"
#include "config/admin.h"
#include "config/edit.h"
#include "db/db.h"
#include "intake/webhook.h"
#include "provider/auth.h"
#include "respond.h"
#include "store/store.h"
#include "testutil.h"
#include "base/util.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

#define SECRET		"tornado-secret-for-responder-tests"
#define MUX_SECRET	"mux-secret-for-responder-tests"
#define KEY_HEADER	"x-acme_Key2"		/* HTTP_X_ACME_KEY2 */
#define KEY		"key-for-responder-tests"
#define SW_SECRET	"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#define BODY_MAX	2048
#define RETRY_AFTER	7
#define ACTION1		"acme:att-1:analyze-v1"
#define NOBODY		65534

static char			 dir[PATH_MAX - 32];
static char			 state_path[PATH_MAX];
static char			 config_path[PATH_MAX];
static char			 log_path[PATH_MAX];
static struct resp_server	 srv;
static sqlite3			*locker;

/*
 * The library's entry point, wrapped (-Wl,--wrap=webhook_receive)
 */

int __real_webhook_receive(struct config_cache *, struct group *,
    const struct webhook_req *, struct webhook_obs *, struct accept_res *);
int __wrap_webhook_receive(struct config_cache *, struct group *,
    const struct webhook_req *, struct webhook_obs *, struct accept_res *);

static atomic_int	webhook_calls;
/* The page cache health's state.db connection was given, in KiB. */
static atomic_int	status_cache_kib;
static int		forcing;
static enum hb_result	forced;
static int		in_respond;	/* set while respond() runs */

int
__wrap_webhook_receive(struct config_cache *c, struct group *g,
    const struct webhook_req *req, struct webhook_obs *h,
    struct accept_res *res)
{
	webhook_calls++;
	if (!forcing)
		return __real_webhook_receive(c, g, req, h, res);
	/* The final answer, as if the library had refused the request. */
	memset(res, 0, sizeof(*res));
	res->result = forced;
	snprintf(res->action, sizeof(res->action), ACTION1);
	return -1;
}

/*
 * The transport: CGI variables from a table, the body from memory, and
 * every byte respond() writes (or tries to) kept.
 */

#define FK_PARAMS	24
#define FK_OUT		16384

struct fake {
	const char	*name[FK_PARAMS];
	const char	*value[FK_PARAMS];
	size_t		 nparams;
	char		 pool[8192];	/* names and values */
	size_t		 poollen;
	const char	*body;		/* what read() hands out */
	size_t		 bodylen, bodyoff;
	int		 reads;
	char		 out[FK_OUT];	/* all written, or tried */
	size_t		 outlen;
	int		 writes;
	int		 fail_at;	/* 0, or the write() to fail */
	int		 fail_sticky;	/* and every one after it */
	int		 failed;	/* write() calls answered -1 */
	char		 asked[2048];	/* "\nNAME\n..": param()'s */
	size_t		 askedlen;
};

static const char *
fk_save(struct fake *f, const char *s)
{
	size_t	 n = strlen(s) + 1;
	char	*p;

	ck_assert_msg(f->poollen + n <= sizeof(f->pool), "fake: pool full");
	p = f->pool + f->poollen;
	memcpy(p, s, n);
	f->poollen += n;
	return p;
}

/* Sets (or replaces) a CGI variable. */
static void
fk_set(struct fake *f, const char *name, const char *value)
{
	size_t	i;

	for (i = 0; i < f->nparams; i++)
		if (strcmp(f->name[i], name) == 0) {
			f->value[i] = fk_save(f, value);
			return;
		}
	ck_assert_msg(f->nparams < FK_PARAMS, "fake: too many variables");
	f->name[f->nparams] = fk_save(f, name);
	f->value[f->nparams++] = fk_save(f, value);
}

/* A request: method and PATH_INFO when not NULL, nothing else. */
static void
fk_init(struct fake *f, const char *method, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->asked[0] = '\n';
	f->askedlen = 1;
	if (method != NULL)
		fk_set(f, "REQUEST_METHOD", method);
	if (path != NULL)
		fk_set(f, "PATH_INFO", path);
}

/* The body, its CONTENT_LENGTH and CONTENT_TYPE application/json. */
static void
fk_body(struct fake *f, const char *body, size_t len)
{
	char	n[32];

	f->body = body;
	f->bodylen = len;
	snprintf(n, sizeof(n), "%zu", len);
	fk_set(f, "CONTENT_LENGTH", n);
	fk_set(f, "CONTENT_TYPE", "application/json");
}

static int
fk_was_asked(const struct fake *f, const char *name)
{
	char	line[192];

	snprintf(line, sizeof(line), "\n%s\n", name);
	return strstr(f->asked, line) != NULL;
}

static const char *
fk_param(void *arg, const char *name)
{
	struct fake	*f = arg;
	size_t		 i, n = strlen(name);

	if (f->askedlen + n + 2 <= sizeof(f->asked)) {
		memcpy(f->asked + f->askedlen, name, n);
		f->askedlen += n;
		f->asked[f->askedlen++] = '\n';
		f->asked[f->askedlen] = '\0';
	}
	for (i = 0; i < f->nparams; i++)
		if (strcmp(f->name[i], name) == 0)
			return f->value[i];
	return NULL;
}

static size_t
fk_read(void *arg, char *buf, size_t len)
{
	struct fake	*f = arg;
	size_t		 n = f->bodylen - f->bodyoff;

	f->reads++;
	if (n > len)
		n = len;
	if (n > 0)
		memcpy(buf, f->body + f->bodyoff, n);
	f->bodyoff += n;
	return n;
}

static int
fk_write(void *arg, const char *buf, size_t len)
{
	struct fake	*f = arg;

	f->writes++;
	ck_assert_msg(f->outlen + len < sizeof(f->out), "answer too long");
	memcpy(f->out + f->outlen, buf, len);
	f->outlen += len;
	if (f->fail_at > 0 && (f->writes == f->fail_at ||
	    (f->fail_sticky && f->writes > f->fail_at))) {
		f->failed++;
		return -1;
	}
	return 0;
}

/*
 * The log: stderr goes to a file while respond() runs.
 */

static int	saved_stderr = -1;

static void
log_begin(void)
{
	int	fd;

	fflush(stderr);
	ck_assert_int_ge(saved_stderr = dup(2), 0);
	ck_assert_int_ge(fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC,
	    0600), 0);
	ck_assert_int_eq(dup2(fd, 2), 2);
	close(fd);
}

/*
 * Restores stderr; returns the log's number of lines.  The log is copied
 * to stderr only with HB_TEST_VERBOSE set, so that a passing run is quiet.
 */
static int
log_end(char *buf, size_t len)
{
	ssize_t	n, w;
	int	fd, lines = 0;
	char	*p;

	fflush(stderr);
	ck_assert_int_eq(dup2(saved_stderr, 2), 2);
	close(saved_stderr);
	saved_stderr = -1;
	ck_assert_int_ge(fd = open(log_path, O_RDONLY), 0);
	n = read(fd, buf, len - 1);
	close(fd);
	ck_assert_int_ge(n, 0);
	buf[n] = '\0';
	if (n > 0 && getenv("HB_TEST_VERBOSE") != NULL &&
	    (w = write(2, buf, (size_t)n)) != n)
		ck_abort_msg("stderr: short write");
	for (p = buf; (p = strchr(p, '\n')) != NULL; p++)
		lines++;
	return lines;
}

/*
 * The answer, read the way nginx reads a CGI response, and held to the
 * house format.
 */

struct answer {
	int	 status;
	char	 reason[64];
	char	 type[128];
	char	 retry_after[32];	/* "" when absent */
	char	 allow[64];		/* "" when absent */
	char	 rid[80];		/* X-Request-Id */
	char	 raw[FK_OUT];		/* everything written */
	char	 bare[FK_OUT];		/* raw without its X-Request-Id */
	const char *body;		/* into raw */
	size_t	 bodylen;
	char	 result[64];		/* the body's "result", or "" */
	char	 action[HB_ACTION_MAX + 1];	/* "" when absent */
	char	 detail[256];		/* "" when absent */
	int	 has_detail;
	int	 reads, writes, hooks;	/* what the request took */
	int	 loglines;
	char	 log[1024];
};

/* The reason phrases of RFC 9110. */
static const char *
want_reason(int status)
{
	static const struct {
		int		 status;
		const char	*reason;
	} r[] = {
		{ 200, "OK" }, { 400, "Bad Request" }, { 401, "Unauthorized" },
		{ 404, "Not Found" }, { 405, "Method Not Allowed" },
		{ 409, "Conflict" }, { 411, "Length Required" },
		{ 413, "Content Too Large" },
		{ 415, "Unsupported Media Type" },
		{ 422, "Unprocessable Content" },
		{ 500, "Internal Server Error" },
		{ 503, "Service Unavailable" },
	};
	size_t	i;

	for (i = 0; i < NELEM(r); i++)
		if (r[i].status == status)
			return r[i].reason;
	return NULL;
}

static void
copy_field(char *dst, size_t len, const char *src, size_t n)
{
	ck_assert_msg(n < len, "header value too long");
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* A string member of doc into buf; 1 when present. */
static int
json_str(const cJSON *doc, const char *name, char *buf, size_t len)
{
	const cJSON	*v;

	buf[0] = '\0';
	if ((v = cJSON_GetObjectItemCaseSensitive(doc, name)) == NULL)
		return 0;
	ck_assert_msg(cJSON_IsString(v), "\"%s\" is not a string", name);
	ck_assert_uint_lt(strlen(v->valuestring), len);
	snprintf(buf, len, "%s", v->valuestring);
	return 1;
}

static void
no_secrets(const struct fake *f, const char *text)
{
	static const char *const secrets[] = { SECRET, MUX_SECRET, KEY,
	    SW_SECRET, SW_SECRET + 6 };
	size_t	i;

	for (i = 0; i < NELEM(secrets); i++)
		ck_assert_msg(strstr(text, secrets[i]) == NULL,
		    "a secret in: %s", text);
	/* Nor any header value worth the name (signatures, keys). */
	for (i = 0; i < f->nparams; i++)
		if (strncmp(f->name[i], "HTTP_", 5) == 0 &&
		    strlen(f->value[i]) >= 8)
			ck_assert_msg(strstr(text, f->value[i]) == NULL,
			    "%s echoed in: %s", f->name[i], text);
}

static void
parse(const struct fake *f, struct answer *a)
{
	const char	*p, *end, *line, *eol, *colon;
	cJSON		*doc;
	char		 code[4];
	long long	 v;
	size_t		 n, nlen;
	int		 nstatus = 0, ntype = 0, ncache = 0, nretry = 0, nrid = 0;
	int		 nallow = 0;

	ck_assert_msg(f->outlen > 0, "no answer at all");
	memcpy(a->raw, f->out, f->outlen);
	a->raw[f->outlen] = '\0';
	ck_assert_msg(strlen(a->raw) == f->outlen, "a NUL in the answer");

	/* Exactly one status line in all that was written, and first. */
	for (p = a->raw; (p = strstr(p, "Status:")) != NULL; p++)
		nstatus++;
	ck_assert_msg(nstatus == 1, "%d status lines in: %s", nstatus,
	    a->raw);
	ck_assert_msg(strncmp(a->raw, "Status: ", 8) == 0,
	    "no status line first: %s", a->raw);
	end = strstr(a->raw, "\r\n\r\n");
	ck_assert_msg(end != NULL, "headers never end: %s", a->raw);

	for (line = a->raw; line < end + 2; line = eol + 2) {
		eol = strstr(line, "\r\n");
		n = (size_t)(eol - line);
		ck_assert_msg(memchr(line, '\n', n) == NULL &&
		    memchr(line, '\r', n) == NULL, "bare CR or LF: %s", a->raw);
		colon = memchr(line, ':', n);
		ck_assert_msg(colon != NULL && colon[1] == ' ',
		    "not a header: %.*s", (int)n, line);
		nlen = (size_t)(colon - line);
		p = colon + 2;
		n = (size_t)(eol - p);
		if (nlen == 6 && memcmp(line, "Status", 6) == 0) {
			ck_assert_msg(n > 4 && p[3] == ' ', "status line: %s",
			    a->raw);
			copy_field(a->reason, sizeof(a->reason), p + 4, n - 4);
			copy_field(code, sizeof(code), p, 3);
			ck_assert_msg(util_parse_num(code, 100, 599, &v) ==
			    UTIL_NUM_OK, "status: %s", a->raw);
			a->status = (int)v;
		} else if (nlen == 12 && memcmp(line, "Content-Type", 12) ==
		    0) {
			copy_field(a->type, sizeof(a->type), p, n);
			ntype++;
		} else if (nlen == 13 && memcmp(line, "Cache-Control", 13) ==
		    0) {
			ck_assert_msg(n == 8 && memcmp(p, "no-store", 8) == 0,
			    "Cache-Control: %.*s", (int)n, p);
			ncache++;
		} else if (nlen == 11 && memcmp(line, "Retry-After", 11) == 0) {
			copy_field(a->retry_after, sizeof(a->retry_after), p,
			    n);
			nretry++;
		} else if (nlen == 12 && memcmp(line, "X-Request-Id", 12) ==
		    0) {
			copy_field(a->rid, sizeof(a->rid), p, n);
			nrid++;
		} else if (nlen == 5 && memcmp(line, "Allow", 5) == 0) {
			copy_field(a->allow, sizeof(a->allow), p, n);
			nallow++;
		} else
			ck_abort_msg("unexpected header: %.*s",
			    (int)(eol - line), line);
	}
	ck_assert_int_eq(ntype, 1);
	ck_assert_int_eq(ncache, 1);
	ck_assert_int_eq(nrid, 1);
	ck_assert_int_le(nretry, 1);
	ck_assert_int_le(nallow, 1);
	ck_assert_msg(want_reason(a->status) != NULL, "status %d", a->status);
	ck_assert_str_eq(a->reason, want_reason(a->status));
	if (a->status == 503) {
		ck_assert_int_eq(nretry, 1);
		ck_assert_int_eq(util_parse_num(a->retry_after, 0, 86400, &v),
		    UTIL_NUM_OK);
		ck_assert_int_eq(v, RETRY_AFTER);
	} else
		ck_assert_int_eq(nretry, 0);
	ck_assert_int_eq(nallow, a->status == 405);

	a->body = end + 4;
	a->bodylen = f->outlen - (size_t)(a->body - a->raw);
	no_secrets(f, a->raw);
	/* The answer without its one line that changes from run to run. */
	if ((p = strstr(a->raw, "\r\nX-Request-Id: ")) != NULL &&
	    (eol = strstr(p + 2, "\r\n")) != NULL) {
		memcpy(a->bare, a->raw, (size_t)(p - a->raw));
		memcpy(a->bare + (p - a->raw), eol, strlen(eol) + 1);
	}

	if (strcmp(a->type, "application/json") != 0)
		return;
	/* One line of JSON: an object with its "result". */
	ck_assert_msg(a->bodylen > 1 && a->body[a->bodylen - 1] == '\n' &&
	    memchr(a->body, '\n', a->bodylen - 1) == NULL, "body: %s",
	    a->body);
	doc = cJSON_ParseWithLength(a->body, a->bodylen);
	ck_assert_msg(cJSON_IsObject(doc), "not a JSON object: %s", a->body);
	if (!json_str(doc, "result", a->result, sizeof(a->result)))
		/* Only health has none: its "status" says the same. */
		ck_assert_msg(json_str(doc, "status", a->result,
		    sizeof(a->result)) && strcmp(a->result, a->status == 200 ?
		    "ok" : "unavailable") == 0, "no result: %s", a->body);
	json_str(doc, "action", a->action, sizeof(a->action));
	a->has_detail = json_str(doc, "detail", a->detail, sizeof(a->detail));
	cJSON_Delete(doc);
}

/* The log line holds " key" (a key=value, preceded by a space). */
static void
log_has(const struct answer *a, const char *kv)
{
	const char	*p = a->log;
	size_t		 n = strlen(kv);

	while ((p = strstr(p, kv)) != NULL) {
		if (p > a->log && p[-1] == ' ' && (p[n] == ' ' ||
		    p[n] == '\n' || p[n] == '\0'))
			return;
		p++;
	}
	ck_abort_msg("log lacks %s: %s", kv, a->log);
}

static void log_keyf(const struct answer *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static void
log_keyf(const struct answer *a, const char *fmt, ...)
{
	char	kv[512];
	va_list	ap;

	va_start(ap, fmt);
	ck_assert_int_lt(vsnprintf(kv, sizeof(kv), fmt, ap), (int)sizeof(kv));
	va_end(ap);
	log_has(a, kv);
}

/* Runs one request through s; parses and checks the answer. */
static int
run_on(struct resp_server *s, struct fake *f, struct answer *a)
{
	struct resp_io	io;
	int		calls = webhook_calls;

	memset(a, 0, sizeof(*a));
	io.param = fk_param;
	io.read = fk_read;
	io.write = fk_write;
	io.arg = f;
	log_begin();
	in_respond = 1;
	respond(s, &io);
	in_respond = 0;
	a->loglines = log_end(a->log, sizeof(a->log));
	a->hooks = webhook_calls - calls;
	a->reads = f->reads;
	a->writes = f->writes;
	parse(f, a);
	/*
	 * Exactly one log line, whatever the outcome, with the request's
	 * keys; no secret, no body.
	 */
	ck_assert_int_eq(a->loglines, 1);
	log_has(a, "event=request");
	log_keyf(a, "status=%d", a->status);
	log_keyf(a, "request_id=%s", a->rid);
	if (a->result[0] != '\0')
		log_keyf(a, "result=%s", a->result);
	if (a->action[0] != '\0')
		log_keyf(a, "action=%s", a->action);
	ck_assert_msg(strncmp(a->log, "ts=", 3) == 0, "%s", a->log);
	ck_assert_ptr_nonnull(strstr(a->log, " duration_ms="));
	no_secrets(f, a->log);
	if (f->bodylen > 8)
		ck_assert_msg(memmem(a->log, strlen(a->log), f->body,
		    f->bodylen) == NULL, "body in the log: %s", a->log);
	return a->status;
}

static int
run(struct fake *f, struct answer *a)
{
	return run_on(&srv, f, a);
}

/*
 * Runs one request whose writes fail: respond() returns, offered at
 * most what it offers a working client and never more than one status
 * line; it may stop at the first failure.  Returns the status offered.
 */
static int
run_failing(struct fake *f, int most)
{
	struct resp_io	 io;
	char		 log[1024];
	const char	*p;
	char		 code[4];
	long long	 v;
	int		 n = 0;

	io.param = fk_param;
	io.read = fk_read;
	io.write = fk_write;
	io.arg = f;
	log_begin();
	respond(&srv, &io);
	ck_assert_int_le(log_end(log, sizeof(log)), 1);
	ck_assert_int_ge(f->writes, 1);
	ck_assert_int_le(f->writes, most);
	ck_assert_int_ge(f->failed, 1);
	f->out[f->outlen] = '\0';
	for (p = f->out; (p = strstr(p, "Status:")) != NULL; p++)
		n++;
	ck_assert_int_eq(n, 1);
	ck_assert_msg(strncmp(f->out, "Status: ", 8) == 0 && f->outlen > 11,
	    "%s", f->out);
	memcpy(code, f->out + 8, 3);
	code[3] = '\0';
	ck_assert_int_eq(util_parse_num(code, 100, 599, &v), UTIL_NUM_OK);
	no_secrets(f, f->out);
	return (int)v;
}

/*
 * Signing, with the library's own helpers
 */

static void
sign_tsig(struct fake *f, const char *param, const char *secret, int64_t t)
{
	struct auth_secret	s;
	char			hdr[256];

	memset(&s, 0, sizeof(s));
	s.key = (const unsigned char *)secret;
	s.keylen = strlen(secret);
	ck_assert_int_eq(auth_sign_tsig(&s, 1, util_now(), t,
	    (const unsigned char *)f->body, f->bodylen, hdr, sizeof(hdr)), 0);
	fk_set(f, param, hdr);
}

static void
sign_sw(struct fake *f, const char *id, int64_t t)
{
	char	sig[256], ts[32];

	ck_assert_int_eq(auth_sign_stdwebhooks((const unsigned char *)SW_SECRET,
	    strlen(SW_SECRET), id, t, (const unsigned char *)f->body,
	    f->bodylen, sig, sizeof(sig)), 0);
	snprintf(ts, sizeof(ts), "%lld", (long long)t);
	fk_set(f, "HTTP_WEBHOOK_ID", id);
	fk_set(f, "HTTP_WEBHOOK_TIMESTAMP", ts);
	fk_set(f, "HTTP_WEBHOOK_SIGNATURE", sig);
}

/* A POST of body to /hooks/tornado, signed now. */
static void
tornado_req(struct fake *f, const char *body)
{
	fk_init(f, "POST", "/hooks/tornado");
	fk_body(f, body, strlen(body));
	sign_tsig(f, "HTTP_X_TORNADO_SIGNATURE", SECRET, util_now());
}

static int
tornado(const char *body, struct answer *a)
{
	struct fake	f;

	tornado_req(&f, body);
	return run(&f, a);
}

static int
get(const char *method, const char *name, struct answer *a)
{
	struct fake	f;
	char		path[256];

	snprintf(path, sizeof(path), "/hooks/%s", name);
	fk_init(&f, method, path);
	return run(&f, a);
}

#define COMPLETED(job)	"{\"type\":\"job_completed\",\"job_id\":\"" job \
	"\",\"status\":\"completed\",\"key\":\"out/" job ".mp4\"}"
#define FAILED(job)	"{\"type\":\"job_failed\",\"job_id\":\"" job \
	"\",\"status\":\"failed\",\"error\":\"boom\"}"
#define PROGRESS(job, stage)	"{\"type\":\"job_progress\",\"job_id\":\"" \
	job "\",\"stage\":\"" stage "\"}"

/* One integer from state.db through a connection of the test's own. */
static long long
q(const char *sql)
{
	return test_db_int(state_path, sql);
}

static long long
receipts(void)
{
	return q("SELECT count(*) FROM receipts");
}

/*
 * Fixtures: tenant acme with destination sink, and endpoints for every
 * scheme:
 *   tornado  per-job, hmac, X-Tornado-Signature
 *   mux      per-job, hmac, Mux-Signature
 *   keyed    per-job, key in KEY_HEADER
 *   sw       per-job, Standard Webhooks
 *   dozy     per-job, key, of the inactive tenant sleepy
 * Jobs job-1 .. job-6; job-1 and job-2 resolve to the same action ACTION1.
 */

static void
add_endpoint(struct config *w, const char *name, const char *tenant,
    enum config_auth auth, const char *hdr, const char *secret)
{
	struct config_endpoint	e = test_endpoint(name, tenant, auth);

	snprintf(e.key_header, sizeof(e.key_header), "%s", hdr);
	test_put_endpoint(w, &e, secret);
}

static void
add_job(struct config *w, const char *job, const char *attempt)
{
	test_add_job(w, "acme", job, attempt, "sink");
}

/* A worker's state, as main.c sets it up, on the test's directory. */
static void
server_init(struct resp_server *s, int busy_ms)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->set.dir, sizeof(s->set.dir), "%s", dir);
	snprintf(s->set.state_path, sizeof(s->set.state_path), "%s",
	    state_path);
	snprintf(s->set.config_path, sizeof(s->set.config_path), "%s",
	    config_path);
	s->set.busy_ms = busy_ms;
	s->body_max = BODY_MAX;
	s->retry_after = RETRY_AFTER;
}

static void
setup(void)
{
	struct config	*w;

	ck_assert_int_lt(snprintf(dir, sizeof(dir), "%s", test_tmpdir()),
	    (int)sizeof(dir));
	test_path(state_path, sizeof(state_path), dir, "state.db");
	test_path(config_path, sizeof(config_path), dir, "config.db");
	test_path(log_path, sizeof(log_path), dir, "respond.log");
	w = test_config_create(dir);
	ck_assert_int_eq(config_begin(w), CONFIG_OK);	/* one sync */
	test_add_tenant(w, "acme", 1);
	test_add_tenant(w, "sleepy", 0);
	test_add_destination(w, "acme", "sink");
	add_endpoint(w, "tornado", "acme", CONFIG_AUTH_HMAC, "", SECRET);
	add_endpoint(w, "mux", "acme", CONFIG_AUTH_HMAC, "Mux-Signature",
	    MUX_SECRET);
	add_endpoint(w, "keyed", "acme", CONFIG_AUTH_KEY, KEY_HEADER, KEY);
	add_endpoint(w, "sw", "acme", CONFIG_AUTH_STANDARD, "", SW_SECRET);
	add_endpoint(w, "dozy", "sleepy", CONFIG_AUTH_KEY, "X-Key", KEY);
	add_job(w, "job-1", "att-1");
	add_job(w, "job-2", "att-1");	/* the same action as job-1 */
	add_job(w, "job-3", "att-3");
	add_job(w, "job-4", "att-4");
	add_job(w, "job-5", "att-5");
	add_job(w, "job-6", "att-6");
	ck_assert_int_eq(config_commit(w), CONFIG_OK);
	config_close(w);
	store_close(test_store_open(dir, 1000, 1));

	server_init(&srv, 1000);
}

static void
teardown(void)
{
	forcing = 0;
	fault_set(FAULT_ALLOC, NULL, NULL);
	respond_close(&srv);
	if (locker != NULL) {
		sqlite3_close(locker);
		locker = NULL;
	}
	test_rmdir(dir);
}

/* Takes state.db's write lock from a connection of our own. */
static void
lock_state(void)
{
	ck_assert_int_eq(sqlite3_open_v2(state_path, &locker,
	    SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(locker, "BEGIN IMMEDIATE", NULL, NULL,
	    NULL), SQLITE_OK);
}

static void
unlock_state(void)
{
	ck_assert_int_eq(sqlite3_exec(locker, "ROLLBACK", NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(locker);
	locker = NULL;
}

/*
 * The 200 rows
 */

START_TEST(ok_rows)
{
	static const struct {
		const char	*body;
		const char	*result;
		const char	*action;
	} rows[] = {
		{ COMPLETED("job-1"), "accepted", ACTION1 },
		{ COMPLETED("job-1"), "duplicate", ACTION1 },
		{ PROGRESS("job-3", "muxing"), "recorded",
		    "acme:att-3:analyze-v1" },
		{ PROGRESS("job-3", "downloading"), "stale",
		    "acme:att-3:analyze-v1" },
		{ FAILED("job-1"), "conflict", ACTION1 },
		{ "{\"type\":\"job_teleported\",\"job_id\":\"job-4\"}",
		    "ignored", "" },
		{ "{\"type\":\"batch_completed\",\"batch_id\":\"b-1\","
		    "\"completed\":1,\"failed\":0,\"total\":1}", "recorded",
		    "" },
		{ FAILED("job-5"), "recorded", "acme:att-5:analyze-v1" },
	};
	struct answer	a;
	size_t		i;

	for (i = 0; i < NELEM(rows); i++) {
		ck_assert_msg(tornado(rows[i].body, &a) == 200,
		    "row %zu: %d %s", i, a.status, a.body);
		ck_assert_str_eq(a.result, rows[i].result);
		ck_assert_str_eq(a.action, rows[i].action);
		ck_assert_int_eq(a.reads, 1);
		ck_assert_int_eq(a.hooks, 1);
	}
	ck_assert_int_eq(receipts(), NELEM(rows));
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
	ck_assert_int_eq(q("SELECT count(*) FROM conflicts"), 1);
}
END_TEST

/*
 * The library's refusals: 400, 401, 404, 409, 422
 */

START_TEST(malformed_400)
{
	static const char *const bodies[] = { "not json", "", "{}", "[]",
	    "{\"type\":\"job_completed\"}",
	    "{\"type\":\"job_completed\",\"job_id\":7}",
	    "{\"type\":\"job_completed\",\"job_id\":\"job-1\","
	    "\"job_id\":\"job-2\"}" };
	struct answer	a;
	size_t		i;

	for (i = 0; i < NELEM(bodies); i++) {
		ck_assert_msg(tornado(bodies[i], &a) == 400, "body %zu: %d", i,
		    a.status);
		ck_assert_str_eq(a.result, "malformed");
		ck_assert_int_eq(a.hooks, 1);
		ck_assert_int_eq(a.loglines, 1);
	}
	ck_assert_int_eq(receipts(), 0);
}
END_TEST

START_TEST(unauthorized_401)
{
	static const char	body[] = COMPLETED("job-1");
	struct fake		f;
	struct answer		a;
	int64_t			now = util_now();
	int			i;

	for (i = 0; i < 9; i++) {
		tornado_req(&f, body);
		switch (i) {
		case 0:		/* no signature */
			fk_init(&f, "POST", "/hooks/tornado");
			fk_body(&f, body, strlen(body));
			break;
		case 1:
			fk_set(&f, "HTTP_X_TORNADO_SIGNATURE", "garbage");
			break;
		case 2:		/* another secret */
			sign_tsig(&f, "HTTP_X_TORNADO_SIGNATURE", MUX_SECRET,
			    now);
			break;
		case 3:		/* an hour old, then an hour ahead */
			sign_tsig(&f, "HTTP_X_TORNADO_SIGNATURE", SECRET,
			    now - 3600);
			break;
		case 4:
			sign_tsig(&f, "HTTP_X_TORNADO_SIGNATURE", SECRET,
			    now + 3600);
			break;
		case 5:		/* signed for another body */
			f.body = COMPLETED("job-3");
			f.bodylen = strlen(f.body);
			break;
		case 6:		/* key mode: a wrong key, then none */
			fk_init(&f, "POST", "/hooks/keyed");
			fk_body(&f, body, strlen(body));
			fk_set(&f, "HTTP_X_ACME_KEY2", "not-the-key-at-all");
			break;
		case 7:
			fk_init(&f, "POST", "/hooks/keyed");
			fk_body(&f, body, strlen(body));
			break;
		case 8:		/* Standard Webhooks, another body */
			fk_init(&f, "POST", "/hooks/sw");
			fk_body(&f, COMPLETED("job-3"),
			    strlen(COMPLETED("job-3")));
			sign_sw(&f, "msg_1", now);
			f.body = body;
			f.bodylen = strlen(body);
			break;
		}
		ck_assert_msg(run(&f, &a) == 401, "case %d: %d %s", i,
		    a.status, a.body);
		ck_assert_str_eq(a.result, "unauthorized");
		ck_assert_int_eq(a.hooks, 1);
		ck_assert_int_eq(a.loglines, 1);
	}
	/* Unauthenticated requests write nothing. */
	ck_assert_int_eq(receipts(), 0);
	ck_assert_int_eq(q("SELECT count(*) FROM job_state"), 0);
}
END_TEST

START_TEST(unknown_endpoint_404)
{
	/* Outside /hooks/{endpoint}: refused before the library. */
	static const char *const outside[] = { "/", "", "/hooks",
	    "/hook/tornado", "/hookstornado", "/HOOKS/tornado",
	    "/x/hooks/tornado", "hooks/tornado", " /hooks/tornado" };
	/* Under /hooks/: the library finds no such endpoint. */
	static const char *const unknown[] = { "/hooks/nope", "/hooks/",
	    "/hooks/tornado/", "/hooks/tornado/x", "/hooks/Tornado",
	    "/hooks/_health/", "/hooks/../hooks/tornado",
	    "/hooks/tornado%20", "/hooks/\xc2\x9b\xe2\x80\xae" };
	static const char	body[] = COMPLETED("job-1");
	struct fake		f;
	struct answer		a;
	size_t			i;

	for (i = 0; i < NELEM(outside); i++) {
		tornado_req(&f, body);
		fk_set(&f, "PATH_INFO", outside[i]);
		ck_assert_msg(run(&f, &a) == 404, "%s: %d", outside[i],
		    a.status);
		ck_assert_str_eq(a.result, "unknown_endpoint");
		ck_assert_int_eq(a.reads, 0);
		ck_assert_int_eq(a.hooks, 0);
	}
	for (i = 0; i < NELEM(unknown); i++) {
		tornado_req(&f, body);
		fk_set(&f, "PATH_INFO", unknown[i]);
		ck_assert_msg(run(&f, &a) == 404, "%s: %d", unknown[i],
		    a.status);
		ck_assert_str_eq(a.result, "unknown_endpoint");
		ck_assert_int_eq(a.hooks, 1);
		ck_assert_int_eq(a.loglines, 1);
	}
	/* The last name reaches the log escaped. */
	ck_assert_ptr_nonnull(strstr(a.log, "\\xc2\\x9b\\xe2\\x80\\xae"));
	ck_assert_ptr_null(strstr(a.log, "\xc2\x9b"));
	/* No path at all. */
	fk_init(&f, "POST", NULL);
	fk_body(&f, body, strlen(body));
	ck_assert_int_eq(run(&f, &a), 404);
	ck_assert_int_eq(a.hooks, 0);
	/* An endpoint of an inactive tenant, rightly authenticated. */
	fk_init(&f, "POST", "/hooks/dozy");
	fk_body(&f, body, strlen(body));
	fk_set(&f, "HTTP_X_KEY", KEY);
	ck_assert_int_eq(run(&f, &a), 404);
	ck_assert_str_eq(a.result, "unknown_endpoint");
	ck_assert_int_eq(receipts(), 0);
}
END_TEST

START_TEST(action_conflict_409)
{
	struct answer	a;

	ck_assert_int_eq(tornado(COMPLETED("job-1"), &a), 200);
	ck_assert_str_eq(a.result, "accepted");
	/* job-2 resolves to the action job-1 holds. */
	ck_assert_int_eq(tornado(COMPLETED("job-2"), &a), 409);
	ck_assert_str_eq(a.result, "action_conflict");
	ck_assert_str_eq(a.action, ACTION1);
	ck_assert_int_eq(a.loglines, 1);
	/* Recorded, and still a conflict when sent again. */
	ck_assert_int_eq(q("SELECT count(*) FROM conflicts WHERE"
	    " kind = 'action'"), 1);
	ck_assert_int_eq(tornado(COMPLETED("job-2"), &a), 409);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
}
END_TEST

START_TEST(unknown_job_422)
{
	struct answer	a;

	ck_assert_int_eq(tornado(COMPLETED("job-99"), &a), 422);
	ck_assert_str_eq(a.result, "unknown_job");
	ck_assert_str_eq(a.action, "");
	ck_assert_int_eq(a.hooks, 1);
	ck_assert_int_eq(receipts(), 0);
}
END_TEST

/*
 * What the responder refuses by itself: 405, 411, 413, 415
 */

START_TEST(method_405)
{
	static const char *const hooks[] = { "GET", "HEAD", "PUT", "DELETE",
	    "PATCH", "OPTIONS", "post", "POST ", "", NULL };
	static const char *const monitors[] = { "POST", "PUT", "DELETE", "get",
	    "", NULL };
	static const char *const names[] = { "/hooks/_health",
	    "/hooks/_metrics" };
	static const char	body[] = COMPLETED("job-1");
	struct fake		f;
	struct answer		a;
	size_t			i, j;

	for (i = 0; i < NELEM(hooks); i++) {
		fk_init(&f, hooks[i], "/hooks/tornado");
		fk_body(&f, body, strlen(body));
		ck_assert_msg(run(&f, &a) == 405, "%s: %d", hooks[i], a.status);
		ck_assert_str_eq(a.allow, "POST");
		ck_assert_str_eq(a.result, "method_not_allowed");
		ck_assert_int_eq(a.reads, 0);
		ck_assert_int_eq(a.hooks, 0);
	}
	for (j = 0; j < NELEM(names); j++)
		for (i = 0; i < NELEM(monitors); i++) {
			fk_init(&f, monitors[i], names[j]);
			fk_body(&f, body, strlen(body));
			ck_assert_msg(run(&f, &a) == 405, "%s %s: %d",
			    monitors[i], names[j], a.status);
			ck_assert_str_eq(a.allow, "GET");
			ck_assert_str_eq(a.result, "method_not_allowed");
			ck_assert_int_eq(a.reads, 0);
		}
	ck_assert_int_eq(receipts(), 0);
}
END_TEST

START_TEST(length_411)
{
	static const char	body[] = COMPLETED("job-1");
	struct fake		f;
	struct answer		a;
	int			i;

	for (i = 0; i < 2; i++) {
		tornado_req(&f, body);
		if (i == 0)
			fk_set(&f, "CONTENT_LENGTH", "");
		else {
			fk_init(&f, "POST", "/hooks/tornado");
			fk_set(&f, "CONTENT_TYPE", "application/json");
			f.body = body;
			f.bodylen = strlen(body);
		}
		ck_assert_int_eq(run(&f, &a), 411);
		ck_assert_str_eq(a.result, "length_required");
		ck_assert_int_eq(a.reads, 0);
		ck_assert_int_eq(a.hooks, 0);
	}
}
END_TEST

START_TEST(content_length_values)
{
	static const struct {
		const char	*value;
		int		 status;
	} cls[] = {
		{ "-1", 400 }, { "abc", 400 }, { "1e3", 400 }, { " 5", 400 },
		{ "5 ", 400 }, { "+5", 400 }, { "0x10", 400 }, { "5\n", 400 },
		{ "5,5", 400 }, { "-99999999999999999999999", 400 },
		{ "-0", 400 }, { "-088", 400 },
		{ "99999999999999999999999", 413 },
		{ "9223372036854775807", 413 }, { "9223372036854775808", 413 },
		{ "18446744073709551616", 413 }, { "2049", 413 },
		{ "1000000", 413 },
	};
	static const char	body[] = COMPLETED("job-1");
	struct fake		f;
	struct answer		a;
	char			zeros[32];
	size_t			i;

	for (i = 0; i < NELEM(cls); i++) {
		tornado_req(&f, body);
		fk_set(&f, "CONTENT_LENGTH", cls[i].value);
		ck_assert_msg(run(&f, &a) == cls[i].status,
		    "Content-Length \"%s\": %d", cls[i].value, a.status);
		ck_assert_str_eq(a.result, cls[i].status == 400 ? "malformed" :
		    "payload_too_large");
		if (cls[i].status == 400)
			ck_assert_str_eq(a.detail, "invalid Content-Length");
		/* Bound before reading anything. */
		ck_assert_int_eq(a.reads, 0);
		ck_assert_int_eq(a.hooks, 0);
	}
	ck_assert_int_eq(receipts(), 0);
	/* Leading zeros are digits: read, and answered by the library. */
	tornado_req(&f, body);
	snprintf(zeros, sizeof(zeros), "00%zu", strlen(body));
	fk_set(&f, "CONTENT_LENGTH", zeros);
	ck_assert_int_eq(run(&f, &a), 200);
	ck_assert_str_eq(a.result, "accepted");
	/* Zero: an empty body, which is not JSON. */
	tornado_req(&f, "");
	ck_assert_int_eq(run(&f, &a), 400);
	ck_assert_int_eq(a.hooks, 1);
}
END_TEST

/* A body of exactly len bytes: a completion padded with blanks. */
static void
padded(char *buf, size_t len, const char *job)
{
	int	n;

	n = snprintf(buf, len, "{\"type\":\"job_completed\",\"job_id\":\"%s\"",
	    job);
	ck_assert(n > 0 && (size_t)n + 1 < len);
	memset(buf + n, ' ', len - (size_t)n - 1);
	buf[len - 1] = '}';
	buf[len] = '\0';
}

START_TEST(body_max_edge)
{
	static char	big[HB_BODY_MAX_DEFAULT + 2];
	struct fake	f;
	struct answer	a;

	/* Exactly body_max: read and accepted. */
	padded(big, BODY_MAX, "job-1");
	tornado_req(&f, big);
	ck_assert_int_eq(f.bodylen, BODY_MAX);
	ck_assert_int_eq(run(&f, &a), 200);
	ck_assert_str_eq(a.result, "accepted");
	ck_assert_int_eq(a.reads, 1);
	/* One more: 413, nothing read. */
	padded(big, BODY_MAX + 1, "job-3");
	tornado_req(&f, big);
	ck_assert_int_eq(run(&f, &a), 413);
	ck_assert_int_eq(a.reads, 0);
	ck_assert_int_eq(a.hooks, 0);

	/* The same at the default limit, 64 KiB. */
	srv.body_max = HB_BODY_MAX_DEFAULT;
	padded(big, HB_BODY_MAX_DEFAULT, "job-3");
	tornado_req(&f, big);
	ck_assert_int_eq(run(&f, &a), 200);
	ck_assert_str_eq(a.result, "accepted");
	padded(big, HB_BODY_MAX_DEFAULT + 1, "job-4");
	tornado_req(&f, big);
	ck_assert_int_eq(run(&f, &a), 413);
	ck_assert_int_eq(a.reads, 0);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 2);
}
END_TEST

/*
 * JSON is taken; a form is read, and answered 400 by an endpoint whose
 * mapping does not read forms (the Tornado endpoint here); any other
 * type, 415 before the body is read.
 */
START_TEST(media_415)
{
	static const struct {
		const char	*type;
		int		 json;	/* 2: a form */
	} types[] = {
		{ "application/json", 1 },
		{ "application/json; charset=utf-8", 1 },
		{ "application/json;charset=UTF-8", 1 },
		{ "Application/JSON", 1 },
		{ "application/json ; charset=utf-8", 1 },
		{ "application/json\t; charset=utf-8", 1 },	/* OWS */
		{ "application/jsonx", 0 }, { "text/plain", 0 }, { "", 0 },
		{ NULL, 0 }, { "application/json-seq", 0 },
		{ "application/x-www-form-urlencoded", 2 },
		{ "Application/X-WWW-Form-Urlencoded; charset=utf-8", 2 },
		{ "application/x-www-form-urlencodedx", 0 }, { "text/json", 0 },
		{ "application/", 0 }, { "application/jso", 0 },
		{ "multipart/form-data; boundary=application/json", 0 },
	};
	static const char	body[] = COMPLETED("job-1");
	struct fake		f;
	struct answer		a;
	char			len[32];
	size_t			i;
	int			hooks = 0;

	for (i = 0; i < NELEM(types); i++) {
		tornado_req(&f, body);
		if (types[i].type != NULL)
			fk_set(&f, "CONTENT_TYPE", types[i].type);
		else {
			fk_init(&f, "POST", "/hooks/tornado");
			f.body = body;
			f.bodylen = strlen(body);
			snprintf(len, sizeof(len), "%zu", strlen(body));
			fk_set(&f, "CONTENT_LENGTH", len);
			sign_tsig(&f, "HTTP_X_TORNADO_SIGNATURE", SECRET,
			    util_now());
		}
		run(&f, &a);
		if (types[i].json == 2) {
			ck_assert_msg(a.status == 400, "%s: %d", types[i].type,
			    a.status);
			ck_assert_str_eq(a.result, "malformed");
		} else if (types[i].json) {
			ck_assert_msg(a.status == 200, "%s: %d", types[i].type,
			    a.status);
			ck_assert_str_eq(a.result, hooks++ == 0 ? "accepted" :
			    "duplicate");
			ck_assert_int_eq(a.hooks, 1);
		} else {
			ck_assert_msg(a.status == 415, "%s: %d",
			    types[i].type != NULL ? types[i].type : "(none)",
			    a.status);
			ck_assert_str_eq(a.result, "unsupported_media_type");
			ck_assert_int_eq(a.reads, 0);
			ck_assert_int_eq(a.hooks, 0);
		}
	}
}
END_TEST

/*
 * 503: nothing committed, try again
 */

START_TEST(short_body_503)
{
	static const char	body[] = COMPLETED("job-1");
	struct fake		f;
	struct answer		a;

	tornado_req(&f, body);
	fk_set(&f, "CONTENT_LENGTH", "100");
	ck_assert_int_eq(run(&f, &a), 503);
	ck_assert_str_eq(a.result, "unavailable");
	ck_assert_str_eq(a.detail, "body shorter than Content-Length");
	ck_assert_int_eq(a.hooks, 0);
	ck_assert_int_eq(a.loglines, 1);
	ck_assert_int_eq(receipts(), 0);
	/* The provider's retry, whole, goes through. */
	ck_assert_int_eq(tornado(body, &a), 200);
	ck_assert_str_eq(a.result, "accepted");
}
END_TEST

static long long sample(const char *, const char *);

START_TEST(locked_503)
{
	struct resp_server	fresh;
	struct fake		f;
	struct answer		a;

	srv.set.busy_ms = 50;
	ck_assert_int_eq(get("GET", "_health", &a), 200);
	lock_state();
	ck_assert_int_eq(tornado(COMPLETED("job-1"), &a), 503);
	ck_assert_str_eq(a.result, "unavailable");
	ck_assert_int_eq(get("GET", "_health", &a), 503);
	ck_assert_str_eq(a.result, "unavailable");
	ck_assert_int_eq(get("HEAD", "_health", &a), 503);
	/* Readers are not blocked in WAL mode: metrics still answer. */
	ck_assert_int_eq(get("GET", "_metrics", &a), 200);
	/* The 503s are counted: the callback's and health's. */
	ck_assert_int_eq(sample(a.body, "hookbox_requests_total{endpoint="
	    "\"tornado\",result=\"unavailable\"}"), 1);
	ck_assert_int_eq(sample(a.body, "hookbox_requests_total{endpoint="
	    "\"_health\",result=\"unavailable\"}"), 2);
	/* A worker that had nothing open yet. */
	server_init(&fresh, 50);
	tornado_req(&f, COMPLETED("job-1"));
	ck_assert_int_eq(run_on(&fresh, &f, &a), 503);
	unlock_state();
	ck_assert_int_eq(receipts(), 0);

	ck_assert_int_eq(tornado(COMPLETED("job-1"), &a), 200);
	ck_assert_str_eq(a.result, "accepted");
	ck_assert_int_eq(get("GET", "_health", &a), 200);
	tornado_req(&f, COMPLETED("job-1"));
	ck_assert_int_eq(run_on(&fresh, &f, &a), 200);
	ck_assert_str_eq(a.result, "duplicate");
	respond_close(&fresh);
}
END_TEST

/* Every allocation of the responder's fails; the test's own do not. */
static int
fail_in_respond(enum fault_point p, void *arg)
{
	int	*fired = arg;

	(void)p;
	*fired += in_respond;
	return in_respond;
}

START_TEST(nomem_503)
{
	struct answer	a;
	int		fired = 0;

	fault_set(FAULT_ALLOC, fail_in_respond, &fired);
	ck_assert_int_eq(tornado(COMPLETED("job-1"), &a), 503);
	fault_set(FAULT_ALLOC, NULL, NULL);
	ck_assert_int_gt(fired, 0);
	ck_assert_str_eq(a.result, "unavailable");
	ck_assert_int_eq(receipts(), 0);
	ck_assert_int_eq(tornado(COMPLETED("job-1"), &a), 200);
	ck_assert_str_eq(a.result, "accepted");
}
END_TEST

/*
 * Health: 503 while the last COMMIT failed on the disk, until one
 * succeeds; counted in the metrics; and never the whole busy timeout.
 */

START_TEST(health_after_failed_commit)
{
	struct answer	a;
	int		fired = 0;

	ck_assert_int_eq(get("GET", "_health", &a), 200);
	fault_set(FAULT_BEFORE_COMMIT, fail_in_respond, &fired);
	ck_assert_int_eq(tornado(COMPLETED("job-1"), &a), 503);
	fault_set(FAULT_BEFORE_COMMIT, NULL, NULL);
	ck_assert_int_eq(fired, 1);
	ck_assert_int_eq(receipts(), 0);
	/* The disk may be fine now: health says so only after a commit. */
	ck_assert_int_eq(get("GET", "_health", &a), 503);
	ck_assert_str_eq(a.result, "unavailable");
	ck_assert_ptr_nonnull(strstr(a.detail, "last commit failed"));
	ck_assert_int_eq(get("GET", "_metrics", &a), 200);
	ck_assert_ptr_nonnull(strstr(a.body,
	    "\nhookbox_commit_failures_total 1\n"));
	ck_assert_int_eq(tornado(COMPLETED("job-1"), &a), 200);
	ck_assert_str_eq(a.result, "accepted");
	ck_assert_int_eq(get("GET", "_health", &a), 200);
	ck_assert_str_eq(a.result, "ok");
}
END_TEST

START_TEST(health_does_not_wait)
{
	struct answer	a;
	int64_t		t0;

	srv.set.busy_ms = 5000;
	ck_assert_int_eq(get("GET", "_health", &a), 200);
	lock_state();
	t0 = util_now_ms();
	ck_assert_int_eq(get("GET", "_health", &a), 503);
	/* Its bound is 100 ms; half the busy timeout leaves room for load. */
	ck_assert_int_lt(util_now_ms() - t0, 2500);
	ck_assert_str_eq(a.result, "unavailable");
	unlock_state();
	ck_assert_int_eq(get("GET", "_health", &a), 200);
}
END_TEST

/*
 * 500: the request names another data directory
 */

START_TEST(misdirected_500)
{
	static const char *const others[] = { "/", "/tmp", "/etc/hookbox",
	    "%s/sub", "%s/.", "%s/..", "%s-x", "%.*s" };
	static const char *const same[] = { "%s", "%s/", "%s//", "" };
	static const char	body[] = COMPLETED("job-1");
	struct fake		f;
	struct answer		a;
	char			v[PATH_MAX + 8];
	size_t			i;

	for (i = 0; i < NELEM(others); i++) {
		if (strcmp(others[i], "%.*s") == 0)	/* a prefix of dir */
			snprintf(v, sizeof(v), "%.*s", (int)strlen(dir) - 1,
			    dir);
		else
			snprintf(v, sizeof(v), others[i], dir);
		tornado_req(&f, body);
		fk_set(&f, "HOOKBOX_DIR", v);
		ck_assert_msg(run(&f, &a) == 500, "%s: %d", v, a.status);
		ck_assert_str_eq(a.result, "misconfigured");
		ck_assert_int_eq(a.reads, 0);
		ck_assert_int_eq(a.hooks, 0);
		ck_assert_int_eq(a.loglines, 1);
		/* The monitors too. */
		fk_init(&f, "GET", "/hooks/_health");
		fk_set(&f, "HOOKBOX_DIR", v);
		ck_assert_int_eq(run(&f, &a), 500);
	}
	ck_assert_int_eq(receipts(), 0);
	for (i = 0; i < NELEM(same); i++) {
		snprintf(v, sizeof(v), same[i], dir);
		tornado_req(&f, body);
		fk_set(&f, "HOOKBOX_DIR", v);
		ck_assert_msg(run(&f, &a) == 200, "%s: %d", v, a.status);
		ck_assert_str_eq(a.result, i == 0 ? "accepted" : "duplicate");
	}
	/* The server's own directory written with a slash is the same. */
	snprintf(srv.set.dir, sizeof(srv.set.dir), "%s/", dir);
	tornado_req(&f, body);
	fk_set(&f, "HOOKBOX_DIR", dir);
	ck_assert_int_eq(run(&f, &a), 200);
}
END_TEST

/*
 * Headers: webhook_prepare() asks by HTTP name, the transport has CGI names
 */

START_TEST(header_mapping)
{
	static const char	body[] = COMPLETED("job-1");
	static const char	body3[] = COMPLETED("job-3");
	static const char	body4[] = COMPLETED("job-4");
	static const char *const wrong[] = { "HTTP_x_acme_key2",
	    "HTTP_X-ACME-KEY2", "X_ACME_KEY2", "HTTP_X_ACME_KEY", "x-acme_Key2",
	    "HTTP_X_ACME_KEY2_" };
	struct fake		f;
	struct answer		a;
	size_t			i;

	/* hmac, the default header. */
	tornado_req(&f, body);
	ck_assert_int_eq(run(&f, &a), 200);
	ck_assert_str_eq(a.result, "accepted");
	ck_assert(fk_was_asked(&f, "HTTP_X_TORNADO_SIGNATURE"));

	/* hmac, a configured header: Mux-Signature. */
	fk_init(&f, "POST", "/hooks/mux");
	fk_body(&f, body3, strlen(body3));
	sign_tsig(&f, "HTTP_MUX_SIGNATURE", MUX_SECRET, util_now());
	ck_assert_int_eq(run(&f, &a), 200);
	ck_assert_str_eq(a.result, "accepted");
	ck_assert(fk_was_asked(&f, "HTTP_MUX_SIGNATURE"));
	ck_assert(!fk_was_asked(&f, "HTTP_X_TORNADO_SIGNATURE"));
	/* The right signature under the other name is no signature. */
	fk_init(&f, "POST", "/hooks/mux");
	fk_body(&f, body3, strlen(body3));
	sign_tsig(&f, "HTTP_X_TORNADO_SIGNATURE", MUX_SECRET, util_now());
	ck_assert_int_eq(run(&f, &a), 401);

	/* key, a header name in mixed case with '_' and a digit. */
	for (i = 0; i < NELEM(wrong); i++) {
		fk_init(&f, "POST", "/hooks/keyed");
		fk_body(&f, body4, strlen(body4));
		fk_set(&f, wrong[i], KEY);
		ck_assert_msg(run(&f, &a) == 401, "%s: %d", wrong[i],
		    a.status);
		ck_assert(fk_was_asked(&f, "HTTP_X_ACME_KEY2"));
	}
	fk_init(&f, "POST", "/hooks/keyed");
	fk_body(&f, body4, strlen(body4));
	fk_set(&f, "HTTP_X_ACME_KEY2", KEY);
	ck_assert_int_eq(run(&f, &a), 200);
	ck_assert_str_eq(a.result, "accepted");

	/* Standard Webhooks: three headers. */
	fk_init(&f, "POST", "/hooks/sw");
	fk_body(&f, COMPLETED("job-5"), strlen(COMPLETED("job-5")));
	sign_sw(&f, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", util_now());
	ck_assert_int_eq(run(&f, &a), 200);
	ck_assert_str_eq(a.result, "accepted");
	ck_assert(fk_was_asked(&f, "HTTP_WEBHOOK_ID"));
	ck_assert(fk_was_asked(&f, "HTTP_WEBHOOK_TIMESTAMP"));
	ck_assert(fk_was_asked(&f, "HTTP_WEBHOOK_SIGNATURE"));
	/* One of them missing. */
	fk_init(&f, "POST", "/hooks/sw");
	fk_body(&f, COMPLETED("job-6"), strlen(COMPLETED("job-6")));
	sign_sw(&f, "msg_3", util_now());
	fk_set(&f, "HTTP_WEBHOOK_ID", "msg_4");
	ck_assert_int_eq(run(&f, &a), 401);
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 4);
}
END_TEST

/*
 * Where the path comes from: PATH_INFO, else DOCUMENT_URI, else
 * REQUEST_URI without its query string.
 */

START_TEST(path_sources)
{
	static const struct {
		const char	*path_info, *document_uri, *request_uri;
		int		 status;
		int		 hooks;	/* reached the library */
	} cases[] = {
		{ "/hooks/tornado", NULL, NULL, 200, 1 },
		{ NULL, "/hooks/tornado", NULL, 200, 1 },
		{ NULL, NULL, "/hooks/tornado", 200, 1 },
		{ NULL, NULL, "/hooks/tornado?a=1&b=/hooks/x", 200, 1 },
		{ NULL, NULL, "/hooks/tornado?", 200, 1 },
		{ "/hooks/tornado", "/elsewhere", "/elsewhere?x", 200, 1 },
		{ "/elsewhere", "/hooks/tornado", "/hooks/tornado", 404, 0 },
		{ "", "/hooks/tornado", "/elsewhere", 200, 1 },
		{ "", "", "/hooks/tornado?x=y", 200, 1 },
		{ NULL, "/elsewhere", "/hooks/tornado", 404, 0 },
		{ NULL, "/hooks/nope", "/hooks/tornado", 404, 1 },
		{ NULL, NULL, "?/hooks/tornado", 404, 0 },
		{ NULL, NULL, "/elsewhere?/hooks/tornado", 404, 0 },
		{ NULL, NULL, "", 404, 0 },
		{ "", "", "", 404, 0 },
	};
	static const char	body[] = COMPLETED("job-1");
	struct fake		f;
	struct answer		a;
	char			longuri[1200];
	size_t			i;

	for (i = 0; i < NELEM(cases); i++) {
		fk_init(&f, "POST", NULL);
		fk_body(&f, body, strlen(body));
		sign_tsig(&f, "HTTP_X_TORNADO_SIGNATURE", SECRET, util_now());
		if (cases[i].path_info != NULL)
			fk_set(&f, "PATH_INFO", cases[i].path_info);
		if (cases[i].document_uri != NULL)
			fk_set(&f, "DOCUMENT_URI", cases[i].document_uri);
		if (cases[i].request_uri != NULL)
			fk_set(&f, "REQUEST_URI", cases[i].request_uri);
		ck_assert_msg(run(&f, &a) == cases[i].status,
		    "case %zu: %d", i, a.status);
		ck_assert_msg(a.hooks == cases[i].hooks, "case %zu", i);
	}
	/*
	 * A path as long as the responder keeps (1023 bytes) reaches the
	 * library; one byte more is not found.  A long query string is
	 * no matter.
	 */
	for (i = 1023; i <= 1025; i++) {
		memset(longuri, 'a', i);
		longuri[i] = '\0';
		memcpy(longuri, "/hooks/", 7);
		fk_init(&f, "POST", NULL);
		fk_body(&f, body, strlen(body));
		fk_set(&f, "REQUEST_URI", longuri);
		ck_assert_int_eq(run(&f, &a), 404);
		ck_assert_int_eq(a.hooks, i == 1023);
	}
	memset(longuri, 'a', sizeof(longuri) - 1);
	longuri[sizeof(longuri) - 1] = '\0';
	memcpy(longuri, "/hooks/tornado?", 15);
	fk_init(&f, "POST", NULL);
	fk_body(&f, body, strlen(body));
	sign_tsig(&f, "HTTP_X_TORNADO_SIGNATURE", SECRET, util_now());
	fk_set(&f, "REQUEST_URI", longuri);
	ck_assert_int_eq(run(&f, &a), 200);
	/* The monitors by REQUEST_URI. */
	fk_init(&f, "GET", NULL);
	fk_set(&f, "REQUEST_URI", "/hooks/_health?verbose=1");
	ck_assert_int_eq(run(&f, &a), 200);
	ck_assert_str_eq(a.body, "{\"status\":\"ok\"}\n");
	fk_init(&f, "GET", NULL);
	fk_set(&f, "DOCUMENT_URI", "/hooks/_metrics");
	ck_assert_int_eq(run(&f, &a), 200);
	ck_assert_ptr_nonnull(strstr(a.body, "hookbox_conflicts_open 0\n"));
}
END_TEST

/*
 * The result-to-status map
 */

/*
 * hookbox-fcgi(8), HTTP CONTRACT.  No default: a result added to enum
 * hb_result without a row here fails to compile (-Wswitch), as
 * respond.c's own map.
 */
static int
want_status(enum hb_result r)
{
	switch (r) {
	case HB_ACCEPTED:
	case HB_DUPLICATE:
	case HB_RECORDED:
	case HB_STALE:
	case HB_CONFLICT:
	case HB_IGNORED:
		return 200;
	case HB_MALFORMED:
		return 400;
	case HB_UNAUTHORIZED:
		return 401;
	case HB_UNKNOWN_ENDPOINT:
		return 404;
	case HB_ACTION_CONFLICT:
		return 409;
	case HB_UNKNOWN_JOB:
		return 422;
	case HB_UNAVAILABLE:
	case HB_NOMEM:
		return 503;
	case HB_RESULT__N:
		break;
	}
	return -1;
}

START_TEST(result_status_map)
{
	struct answer	a;
	int		r;

	/* Every value up to the last one. */
	forcing = 1;
	for (r = 0; r < HB_RESULT__N; r++) {
		forced = (enum hb_result)r;
		ck_assert_msg(want_status(forced) > 0, "%s: no status in this "
		    "test", hb_result_name(forced));
		tornado(COMPLETED("job-1"), &a);
		ck_assert_msg(a.status == want_status(forced), "%s: %d, want "
		    "%d", hb_result_name(forced), a.status,
		    want_status(forced));
		ck_assert_str_eq(a.result, hb_result_name(forced));
		ck_assert_str_eq(a.action, ACTION1);
		/* The 200 rows are exactly the acknowledgements. */
		ck_assert_int_eq(a.status == 200, hb_result_is_ack(forced));
		ck_assert_int_eq(a.hooks, 1);
	}
	/* Past the last one: never an acknowledgement. */
	forced = HB_RESULT__N;
	tornado(COMPLETED("job-1"), &a);
	ck_assert_int_eq(a.status, 500);
	forcing = 0;
	ck_assert_int_eq(receipts(), 0);
}
END_TEST

/*
 * The answer, byte for byte
 */

START_TEST(answer_bytes)
{
	struct fake	f;
	struct answer	a;

	/* nginx's $request_id, passed as REQUEST_ID, is echoed and logged. */
	tornado_req(&f, COMPLETED("job-1"));
	fk_set(&f, "REQUEST_ID", "0123456789abcdef0123456789abcdef");
	ck_assert_int_eq(run(&f, &a), 200);
	ck_assert_str_eq(a.raw, "Status: 200 OK\r\n"
	    "Content-Type: application/json\r\n"
	    "Cache-Control: no-store\r\n"
	    "X-Request-Id: 0123456789abcdef0123456789abcdef\r\n\r\n"
	    "{\"result\":\"accepted\",\"action\":\"" ACTION1 "\"}\n");
	log_has(&a, "request_id=0123456789abcdef0123456789abcdef");
	/* One that is not an id of that shape is replaced by our own. */
	tornado_req(&f, COMPLETED("job-1"));
	fk_set(&f, "REQUEST_ID", "a b\"c");
	ck_assert_int_eq(run(&f, &a), 200);
	ck_assert_int_eq((int)strlen(a.rid), 16);
	ck_assert_int_eq((int)strspn(a.rid, "0123456789abcdef"), 16);
	ck_assert_int_eq(get("GET", "tornado", &a), 405);
	ck_assert_str_eq(a.bare, "Status: 405 Method Not Allowed\r\n"
	    "Content-Type: application/json\r\n"
	    "Cache-Control: no-store\r\nAllow: POST\r\n\r\n"
	    "{\"result\":\"method_not_allowed\"}\n");
	tornado_req(&f, COMPLETED("job-3"));
	fk_set(&f, "CONTENT_LENGTH", "1000");
	ck_assert_int_eq(run(&f, &a), 503);
	ck_assert_str_eq(a.bare, "Status: 503 Service Unavailable\r\n"
	    "Content-Type: application/json\r\n"
	    "Cache-Control: no-store\r\nRetry-After: 7\r\n\r\n"
	    "{\"result\":\"unavailable\","
	    "\"detail\":\"body shorter than Content-Length\"}\n");
	ck_assert_int_eq(get("GET", "_health", &a), 200);
	ck_assert_str_eq(a.bare, "Status: 200 OK\r\n"
	    "Content-Type: application/json\r\n"
	    "Cache-Control: no-store\r\n\r\n{\"status\":\"ok\"}\n");
	ck_assert_int_eq(get("POST", "_health", &a), 405);
	ck_assert_str_eq(a.bare, "Status: 405 Method Not Allowed\r\n"
	    "Content-Type: application/json\r\n"
	    "Cache-Control: no-store\r\nAllow: GET\r\n\r\n"
	    "{\"result\":\"method_not_allowed\"}\n");
	/* A 401's detail names the reason, never the signature. */
	tornado_req(&f, COMPLETED("job-3"));
	fk_set(&f, "HTTP_X_TORNADO_SIGNATURE", "t=1,v1=" SECRET);
	ck_assert_int_eq(run(&f, &a), 401);
	ck_assert_int_eq(a.has_detail, 1);
	ck_assert_ptr_null(strstr(a.raw, "v1="));
}
END_TEST

/*
 * Health and metrics
 */

START_TEST(health)
{
	struct answer	a;

	status_cache_kib = 0;
	ck_assert_int_eq(get("GET", "_health", &a), 200);
	ck_assert_str_eq(a.body, "{\"status\":\"ok\"}\n");
	/* Its connection keeps a small cache (the writer SQLite's own). */
	ck_assert_int_eq(status_cache_kib, 256);
	ck_assert_int_eq(get("HEAD", "_health", &a), 200);
	/* Health takes the write lock and gives it back at once. */
	lock_state();
	unlock_state();
	ck_assert_int_eq(get("GET", "_health", &a), 200);
	ck_assert_int_eq(sqlite3_open_v2(state_path, &locker,
	    SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	sqlite3_busy_timeout(locker, 0);
	ck_assert_int_eq(sqlite3_exec(locker, "BEGIN IMMEDIATE", NULL, NULL,
	    NULL), SQLITE_OK);
	unlock_state();
	ck_assert_int_eq(tornado(COMPLETED("job-1"), &a), 200);
	ck_assert_int_eq(get("GET", "_health", &a), 200);
	ck_assert_int_eq(receipts(), 1);
}
END_TEST

static int
chown_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return lchown(path, NOBODY, NOBODY);
}

/*
 * In a child, without Check's assertions: runs one request (a signed
 * POST of body to /hooks/tornado, or with body NULL GET /hooks/_health)
 * and appends "NNN " to out, "NNNr " when Retry-After came with it.
 */
static void
quietly(const char *body, char *out, size_t len)
{
	struct fake	f;
	struct resp_io	io;
	size_t		off = strlen(out);

	if (body == NULL)
		fk_init(&f, "GET", "/hooks/_health");
	else {
		fk_init(&f, "POST", "/hooks/tornado");
		fk_body(&f, body, strlen(body));
		sign_tsig(&f, "HTTP_X_TORNADO_SIGNATURE", SECRET, util_now());
	}
	io.param = fk_param;
	io.read = fk_read;
	io.write = fk_write;
	io.arg = &f;
	respond(&srv, &io);
	f.out[f.outlen] = '\0';
	if (f.outlen < 12 || strncmp(f.out, "Status: ", 8) != 0)
		snprintf(out + off, len - off, "??? ");
	else
		snprintf(out + off, len - off, "%.3s%s ", f.out + 8,
		    strstr(f.out, "\r\nRetry-After: 7\r\n") != NULL ? "r" : "");
}

static void
read_only_child(int fd, int keep_other)
{
	sqlite3	*other = NULL;
	char	 got[256];
	ssize_t	 w;

	got[0] = '\0';
	if (geteuid() == 0 && (setgroups(0, NULL) != 0 ||
	    setgid(NOBODY) != 0 || setuid(NOBODY) != 0))
		snprintf(got, sizeof(got), "cannot change user");
	else if (keep_other && (sqlite3_open_v2(state_path, &other,
	    SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK || sqlite3_exec(other,
	    "SELECT count(*) FROM outbox", NULL, NULL, NULL) != SQLITE_OK))
		snprintf(got, sizeof(got), "cannot open state.db");
	else {
		quietly(COMPLETED("job-1"), got, sizeof(got));
		quietly(NULL, got, sizeof(got));
		if (chmod(state_path, 0444) != 0)
			snprintf(got, sizeof(got), "chmod 0444 failed");
		quietly(COMPLETED("job-3"), got, sizeof(got));
		quietly(NULL, got, sizeof(got));
		if (chmod(state_path, 0600) != 0)
			snprintf(got, sizeof(got), "chmod 0600 failed");
		quietly(COMPLETED("job-3"), got, sizeof(got));
		quietly(NULL, got, sizeof(got));
	}
	sqlite3_close(other);
	w = write(fd, got, strlen(got));
	_exit(w == (ssize_t)strlen(got) ? 0 : 1);
}

/*
 * state.db made read-only under a running responder: 503 with
 * Retry-After, health 503, and both well again once it is writable.
 * Root writes read-only files, so as root the responder runs as another
 * user, in a child: once with another connection keeping state.db open
 * throughout, as a running dispatcher's would, once without.  Without
 * one, a reopen while state.db is 0444 would be the file's only
 * connection, and SQLite would make state.db-shm anew with the database's
 * mode, 0444: every write after would fail although state.db is writable
 * again.  So store_open() refuses a file it may not write.
 */
START_TEST(read_only_state)
{
	char	 got[256];
	ssize_t	 n;
	size_t	 off = 0;
	pid_t	 pid;
	int	 fds[2], status;

	ck_assert_int_eq(pipe(fds), 0);
	if (geteuid() == 0)
		ck_assert_int_eq(nftw(dir, chown_one, 16, FTW_PHYS), 0);
	ck_assert_int_ge(pid = fork(), 0);
	if (pid == 0) {
		close(fds[0]);
		read_only_child(fds[1], _i == 0);
	}
	close(fds[1]);
	while (off < sizeof(got) - 1 &&
	    (n = read(fds[0], got + off, sizeof(got) - 1 - off)) > 0)
		off += (size_t)n;
	got[off] = '\0';
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_str_eq(got, "200 200 503r 503r 200 200 ");
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 2);
}
END_TEST

/* One sample of the exposition: name{labels} value. */
static long long
sample(const char *text, const char *series)
{
	const char	*p, *eol;
	char		 v[32];
	size_t		 n = strlen(series), linelen;
	long long	 x;

	for (p = text; (eol = strchr(p, '\n')) != NULL; p = eol + 1) {
		linelen = (size_t)(eol - p);
		if (linelen <= n + 1 || strncmp(p, series, n) != 0 ||
		    p[n] != ' ')
			continue;
		ck_assert_uint_lt(linelen - n - 1, sizeof(v));
		memcpy(v, p + n + 1, linelen - n - 1);
		v[linelen - n - 1] = '\0';
		ck_assert_msg(util_parse_num(v, 0, LLONG_MAX, &x) ==
		    UTIL_NUM_OK, "%s: \"%s\"", series, v);
		return x;
	}
	ck_abort_msg("no sample %s in:\n%s", series, text);
	return -1;
}

/* Every line a comment or a sample of a family TYPE announced before. */
static void
exposition_ok(const char *text)
{
	const char	*p, *eol, *sp;
	char		 type[64][64];
	size_t		 ntype = 0, i, n;
	int		 found;

	ck_assert_msg(*text != '\0' && text[strlen(text) - 1] == '\n',
	    "%s", text);
	for (p = text; *p != '\0'; p = eol + 1) {
		eol = strchr(p, '\n');
		if (strncmp(p, "# TYPE ", 7) == 0) {
			sp = memchr(p + 7, ' ', (size_t)(eol - p - 7));
			ck_assert_ptr_nonnull(sp);
			/* A counter's name ends in _total (Prometheus). */
			ck_assert_msg(strncmp(sp, " gauge\n", 7) == 0 ||
			    strncmp(sp, " histogram\n", 11) == 0 ||
			    (strncmp(sp, " counter\n", 9) == 0 &&
			    strncmp(sp - 6, "_total", 6) == 0),
			    "%.*s", (int)(eol - p), p);
			ck_assert_uint_lt(ntype, NELEM(type));
			snprintf(type[ntype++], sizeof(type[0]), "%.*s",
			    (int)(sp - p - 7), p + 7);
			continue;
		}
		if (*p == '#')
			continue;
		n = strcspn(p, "{ ");
		/* A histogram's samples: its name and a suffix. */
		for (i = 0, found = 0; i < ntype; i++)
			found |= strncmp(type[i], p, strlen(type[i])) == 0 &&
			    (strlen(type[i]) == n || (strlen(type[i]) + 7 == n &&
			    strncmp(p + n - 7, "_bucket", 7) == 0) ||
			    (strlen(type[i]) + 4 == n && (strncmp(p + n - 4,
			    "_sum", 4) == 0 || strncmp(p + n - 4, "_count", 4) ==
			    0)) || (strlen(type[i]) + 6 == n && strncmp(p + n - 6,
			    "_count", 6) == 0));
		ck_assert_msg(found, "no TYPE before: %.*s", (int)(eol - p), p);
	}
}

START_TEST(metrics)
{
	struct answer	 a;
	sqlite3		*db;
	long long	 age;

	/* Empty. */
	ck_assert_int_eq(get("GET", "_metrics", &a), 200);
	ck_assert_str_eq(a.type, "text/plain; version=0.0.4; charset=utf-8");
	exposition_ok(a.body);
	ck_assert_int_eq(sample(a.body,
	    "hookbox_outbox_actions{state=\"pending\"}"), 0);
	ck_assert_int_eq(sample(a.body, "hookbox_oldest_pending_age_seconds"),
	    0);
	ck_assert_ptr_null(strstr(a.body, "hookbox_receipts{"));
	ck_assert_int_eq(sample(a.body,
	    "hookbox_build_info{version=\"" HB_VERSION "\"}"), 1);

	/*
	 * Two accepted, a terminal and an action conflict, progress, a
	 * duplicate; the unknown job leaves no receipt.
	 */
	ck_assert_int_eq(tornado(COMPLETED("job-1"), &a), 200);
	ck_assert_int_eq(tornado(COMPLETED("job-3"), &a), 200);
	ck_assert_int_eq(tornado(FAILED("job-1"), &a), 200);
	ck_assert_int_eq(tornado(COMPLETED("job-2"), &a), 409);
	ck_assert_int_eq(tornado(PROGRESS("job-4", "muxing"), &a), 200);
	ck_assert_int_eq(tornado(COMPLETED("job-1"), &a), 200);	/* dup */
	ck_assert_int_eq(tornado(COMPLETED("job-99"), &a), 422);
	/* One row delivered, the oldest pending an hour old. */
	ck_assert_int_eq(sqlite3_open(state_path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "UPDATE outbox SET"
	    " state = 'delivered' WHERE action_id = 'acme:att-3:analyze-v1';"
	    " UPDATE outbox SET created_at = created_at - 3600000", NULL, NULL,
	    NULL), SQLITE_OK);
	sqlite3_close(db);

	ck_assert_int_eq(get("GET", "_metrics", &a), 200);
	exposition_ok(a.body);
	ck_assert_int_eq(sample(a.body,
	    "hookbox_outbox_actions{state=\"pending\"}"), 1);
	ck_assert_int_eq(sample(a.body,
	    "hookbox_outbox_actions{state=\"leased\"}"), 0);
	ck_assert_int_eq(sample(a.body,
	    "hookbox_outbox_actions{state=\"delivered\"}"), 1);
	ck_assert_int_eq(sample(a.body,
	    "hookbox_outbox_actions{state=\"dead\"}"), 0);
	ck_assert_int_eq(sample(a.body,
	    "hookbox_outbox_actions{state=\"unknown\"}"), 0);
	ck_assert_int_eq(sample(a.body, "hookbox_conflicts_open"), 2);
	age = sample(a.body, "hookbox_oldest_pending_age_seconds");
	ck_assert_int_ge(age, 3600);
	ck_assert_int_le(age, 3700);
	ck_assert_int_eq(sample(a.body,
	    "hookbox_receipts{result=\"accepted\"}"), 2);
	ck_assert_int_eq(sample(a.body,
	    "hookbox_receipts{result=\"conflict\"}"), 1);
	ck_assert_int_eq(sample(a.body,
	    "hookbox_receipts{result=\"action_conflict\"}"), 1);
	ck_assert_int_eq(sample(a.body,
	    "hookbox_receipts{result=\"recorded\"}"), 1);
	ck_assert_int_eq(sample(a.body,
	    "hookbox_receipts{result=\"duplicate\"}"), 1);
	ck_assert_ptr_null(strstr(a.body,
	    "hookbox_receipts{result=\"unknown_job\"}"));
	/* Every request counted, by endpoint and result. */
	ck_assert_int_eq(sample(a.body, "hookbox_requests_total{endpoint="
	    "\"tornado\",result=\"accepted\"}"), 2);
	ck_assert_int_eq(sample(a.body, "hookbox_requests_total{endpoint="
	    "\"tornado\",result=\"duplicate\"}"), 1);
	ck_assert_int_eq(sample(a.body, "hookbox_requests_total{endpoint="
	    "\"tornado\",result=\"action_conflict\"}"), 1);
	ck_assert_int_eq(sample(a.body, "hookbox_requests_total{endpoint="
	    "\"tornado\",result=\"unknown_job\"}"), 1);
	ck_assert_int_eq(get("HEAD", "_metrics", &a), 200);
}
END_TEST

/*
 * The transport fails: the responder neither stops nor repeats itself
 */

static void
k_accept(struct fake *f)
{
	tornado_req(f, COMPLETED("job-1"));
}

static void
k_unauthorized(struct fake *f)
{
	tornado_req(f, COMPLETED("job-1"));
	fk_set(f, "HTTP_X_TORNADO_SIGNATURE", "t=1,v1=00");
}

static void
k_method(struct fake *f)
{
	fk_init(f, "GET", "/hooks/tornado");
}

static void
k_too_large(struct fake *f)
{
	tornado_req(f, COMPLETED("job-1"));
	fk_set(f, "CONTENT_LENGTH", "999999");
}

static void
k_short(struct fake *f)
{
	tornado_req(f, COMPLETED("job-1"));
	fk_set(f, "CONTENT_LENGTH", "1000");
}

static void
k_health(struct fake *f)
{
	fk_init(f, "GET", "/hooks/_health");
}

static void
k_metrics(struct fake *f)
{
	fk_init(f, "GET", "/hooks/_metrics");
}

static void
k_health_post(struct fake *f)
{
	fk_init(f, "POST", "/hooks/_health");
}

static void
k_misdirected(struct fake *f)
{
	tornado_req(f, COMPLETED("job-1"));
	fk_set(f, "HOOKBOX_DIR", "/elsewhere");
}

static void
k_not_found(struct fake *f)
{
	fk_init(f, "POST", "/nowhere");
}

static void (*const kinds[])(struct fake *) = { k_accept, k_unauthorized,
    k_method, k_too_large, k_short, k_health, k_metrics, k_health_post,
    k_misdirected, k_not_found };

/* PRAGMA data_version as another connection sees it: moves on a commit. */
static long long
data_version(sqlite3 *db)
{
	sqlite3_stmt	*st;
	long long	 v;

	ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA data_version", -1,
	    &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static long long
series_count(const char *text, const char *prefix)
{
	const char	*p;
	long long	 n = 0;

	for (p = text; (p = strstr(p, prefix)) != NULL; p++)
		n += p == text || p[-1] == '\n';
	return n;
}

#define REQ(ep, res)	"hookbox_requests_total{endpoint=\"" ep "\",result=\"" \
			res "\"}"

/*
 * Counters: every request, by endpoint and result; the unauthenticated
 * ones held in memory (no write of their own) and persisted with the
 * next commit; kept across a restart; the endpoint label bounded.
 */
START_TEST(counters)
{
	struct answer	 a;
	struct fake	 f;
	sqlite3		*db;
	long long	 v0;
	char		 path[64];
	int		 i;

	ck_assert_int_eq(sqlite3_open(state_path, &db), SQLITE_OK);
	ck_assert_int_eq(tornado(COMPLETED("job-1"), &a), 200);
	v0 = data_version(db);
	for (i = 0; i < 20; i++) {
		k_unauthorized(&f);
		ck_assert_int_eq(run(&f, &a), 401);
	}
	k_method(&f);
	ck_assert_int_eq(run(&f, &a), 405);
	/* 100 names no one configured: one series. */
	for (i = 0; i < 100; i++) {
		ck_assert_int_lt(snprintf(path, sizeof(path),
		    "/hooks/nosuch-%u", (unsigned)randombytes_random()),
		    (int)sizeof(path));
		fk_init(&f, "POST", path);
		fk_set(&f, "CONTENT_TYPE", "application/json");
		fk_body(&f, "{}", 2);
		ck_assert_int_eq(run(&f, &a), 404);
	}
	ck_assert_int_eq(data_version(db), v0);
	/* Shown from memory meanwhile. */
	ck_assert_int_eq(get("GET", "_metrics", &a), 200);
	exposition_ok(a.body);
	ck_assert_int_eq(sample(a.body, REQ("tornado", "unauthorized")), 20);
	ck_assert_int_eq(sample(a.body, REQ("tornado", "accepted")), 1);
	ck_assert_int_eq(sample(a.body, REQ("unknown",
	    "method_not_allowed")), 1);
	ck_assert_int_eq(sample(a.body, REQ("unknown", "unknown_endpoint")),
	    100);
	ck_assert_int_eq(series_count(a.body,
	    "hookbox_requests_total{endpoint=\"unknown\",result=\"unknown_"
	    "endpoint\"}"), 1);
	ck_assert_ptr_null(strstr(a.body, "nosuch"));
	/* Still nothing written by the refused ones, nor by metrics. */
	ck_assert_int_eq(data_version(db), v0);
	ck_assert_int_eq(q("SELECT count(*) FROM metrics WHERE l2 ="
	    " 'unauthorized'"), 0);
	/* The next commit takes them along. */
	ck_assert_int_eq(tornado(COMPLETED("job-3"), &a), 200);
	ck_assert_int_eq(q("SELECT value FROM metrics WHERE name = 'requests'"
	    " AND l1 = 'tornado' AND l2 = 'unauthorized'"), 20);
	ck_assert_int_eq(q("SELECT value FROM metrics WHERE name = 'requests'"
	    " AND l1 = 'unknown' AND l2 = 'unknown_endpoint'"), 100);
	ck_assert_int_eq(q("SELECT value FROM metrics WHERE name = 'requests'"
	    " AND l1 = 'tornado' AND l2 = 'accepted'"), 2);
	/* A restart: the same counts, from state.db alone. */
	ck_assert_int_eq(get("GET", "_metrics", &a), 200);
	respond_close(&srv);
	server_init(&srv, 1000);
	ck_assert_int_eq(get("GET", "_metrics", &a), 200);
	ck_assert_int_eq(sample(a.body, REQ("tornado", "unauthorized")), 20);
	ck_assert_int_eq(sample(a.body, REQ("tornado", "accepted")), 2);
	ck_assert_int_eq(sample(a.body, REQ("unknown", "unknown_endpoint")),
	    100);
	/*
	 * The first metrics request went with the commit after it; the
	 * second, after the last commit, was lost with the process.
	 */
	ck_assert_int_eq(sample(a.body, REQ("_metrics", "ok")), 1);
	sqlite3_close(db);
}
END_TEST

/*
 * Each request kind with its nth write failing, alone or with every one
 * after it: one answer, the same status, and a commit made before the
 * answer stays made.
 */
START_TEST(write_fails)
{
	struct fake	f;
	struct answer	a, base;
	size_t		k;
	int		at, sticky;

	for (k = 0; k < NELEM(kinds); k++) {
		/*
		 * Metrics shows its own count once it was counted: the
		 * second answer is as long as every later one.
		 */
		if (kinds[k] == k_metrics) {
			kinds[k](&f);
			run(&f, &base);
		}
		kinds[k](&f);
		run(&f, &base);
		ck_assert_int_ge(base.writes, 2);
		for (sticky = 0; sticky < 2; sticky++)
			for (at = 1; at <= base.writes; at++) {
				kinds[k](&f);
				f.fail_at = at;
				f.fail_sticky = sticky;
				ck_assert_msg(run_failing(&f, base.writes) ==
				    base.status, "kind %zu, write %d fails",
				    k, at);
			}
		if (k == 0) {
			/* The client gone after the commit: work done. */
			ck_assert_str_eq(base.result, "accepted");
			ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
			kinds[k](&f);
			ck_assert_int_eq(run(&f, &a), 200);
			ck_assert_str_eq(a.result, "duplicate");
		}
	}
	/* The worker serves on. */
	ck_assert_int_eq(get("GET", "_health", &a), 200);
	ck_assert_int_eq(tornado(COMPLETED("job-3"), &a), 200);
	ck_assert_str_eq(a.result, "accepted");
}
END_TEST

/* Every write fails, from the first: respond() returns all the same. */
START_TEST(write_always_fails)
{
	struct fake	f;
	size_t		i;

	for (i = 0; i < NELEM(kinds); i++) {
		kinds[i](&f);
		f.fail_at = 1;
		f.fail_sticky = 1;
		run_failing(&f, FK_OUT);
		ck_assert_int_eq(f.failed, f.writes);
	}
	ck_assert_int_eq(q("SELECT count(*) FROM outbox"), 1);
}
END_TEST

/*
 * Whatever arrives is answered, once: a product of odd requests.
 */

START_TEST(odd_requests)
{
	static const char *const methods[] = { "POST", "GET", NULL };
	static const char *const paths[] = { "/hooks/tornado", "/hooks/_health",
	    "/hooks/_metrics", "/hooks/", "/x", NULL,
	    "/hooks/\xff\xfe\x01\x1b[2J\"\\" };
	static const char *const types[] = { "application/json", NULL };
	static const char *const lengths[] = { NULL, "", "0", "2", "9", "abc",
	    "2049", "99999999999999999999999", "-0" };
	static const char *const bodies[] = { "", "garbage!!" };
	struct fake	f;
	struct answer	a;
	size_t		m, p, t, l, b;
	int		n = 0;

	for (m = 0; m < NELEM(methods); m++)
	for (p = 0; p < NELEM(paths); p++)
	for (t = 0; t < NELEM(types); t++)
	for (l = 0; l < NELEM(lengths); l++)
	for (b = 0; b < NELEM(bodies); b++) {
		fk_init(&f, methods[m], paths[p]);
		if (types[t] != NULL)
			fk_set(&f, "CONTENT_TYPE", types[t]);
		if (lengths[l] != NULL)
			fk_set(&f, "CONTENT_LENGTH", lengths[l]);
		f.body = bodies[b];
		f.bodylen = strlen(bodies[b]);
		run(&f, &a);
		/* Nothing here is signed: only the monitors say 200. */
		ck_assert(a.status != 200 || p == 1 || p == 2);
		ck_assert_int_le(a.reads, 1);
		n++;
	}
	ck_assert_int_eq(n, 3 * 7 * 2 * 9 * 2);
	ck_assert_int_eq(receipts(), 0);
}
END_TEST

/*
 * Configuration changes, on both backends: the responder serves from a
 * snapshot it shares between requests (config/cache.h), and a change
 * must be in force for the very next request, whoever made it.  The
 * server (srv) lives through each test, as a worker does: its snapshot
 * is the one a running responder would hold.
 */

#define SECRET2		"second-tornado-secret-for-the-cache"

/*
 * Round trips: every libpq call that sends a command, and every SQLite
 * statement stepped or text run on config.db, counted.  db/pg.c finds
 * libpq's functions with dlsym(), which the link wraps, as it wraps
 * SQLite's two (see the Makefile): it is handed counting ones instead.
 * PostgreSQL's are counted on config.db's connections only: the writer's
 * says application_name hookbox-state.
 */
void *__real_dlsym(void *, const char *);
void *__wrap_dlsym(void *, const char *);
int __real_sqlite3_step(sqlite3_stmt *);
int __real_sqlite3_exec(sqlite3 *, const char *,
    int (*)(void *, int, char **, char **), void *, char **);
int __wrap_sqlite3_step(sqlite3_stmt *);
int __wrap_sqlite3_exec(sqlite3 *, const char *,
    int (*)(void *, int, char **, char **), void *, char **);

static atomic_int	config_trips;

static void
pg_trip(PGconn *c)
{
	const char	*a = PQparameterStatus(c, "application_name");

	if (a != NULL && strcmp(a, "hookbox") == 0)
		config_trips++;
}

static void
lite_trip(sqlite3 *db)
{
	const char	*f = db != NULL ? sqlite3_db_filename(db, "main") :
	    NULL;
	size_t		 n = f != NULL ? strlen(f) : 0;

	if (n >= 10 && strcmp(f + n - 10, "/config.db") == 0)
		config_trips++;
}

static __typeof__(PQexec)		*real_exec;
static __typeof__(PQexecPrepared)	*real_exec_prepared;
static __typeof__(PQprepare)		*real_prepare;
static __typeof__(PQsendQuery)		*real_send;
static __typeof__(PQsendQueryPrepared)	*real_send_prepared;

static PGresult *
count_exec(PGconn *c, const char *q)
{
	pg_trip(c);
	return real_exec(c, q);
}

static PGresult *
count_exec_prepared(PGconn *c, const char *n, int np,
    const char *const *v, const int *l, const int *f, int rf)
{
	pg_trip(c);
	return real_exec_prepared(c, n, np, v, l, f, rf);
}

static PGresult *
count_prepare(PGconn *c, const char *n, const char *q, int np,
    const Oid *t)
{
	pg_trip(c);
	return real_prepare(c, n, q, np, t);
}

static int
count_send(PGconn *c, const char *q)
{
	pg_trip(c);
	return real_send(c, q);
}

static int
count_send_prepared(PGconn *c, const char *n, int np,
    const char *const *v, const int *l, const int *f, int rf)
{
	pg_trip(c);
	return real_send_prepared(c, n, np, v, l, f, rf);
}

/* libpq's function name, its real one kept in real, mine handed out. */
#define COUNTED(f, real, mine)						\
	if (strcmp(name, #f) == 0) {					\
		memcpy(&(real), &p, sizeof(p));				\
		return (void *)(mine);					\
	}

void *
__wrap_dlsym(void *lib, const char *name)
{
	void	*p = __real_dlsym(lib, name);

	if (p == NULL)
		return NULL;
	COUNTED(PQexec, real_exec, count_exec)
	COUNTED(PQexecPrepared, real_exec_prepared, count_exec_prepared)
	COUNTED(PQprepare, real_prepare, count_prepare)
	COUNTED(PQsendQuery, real_send, count_send)
	COUNTED(PQsendQueryPrepared, real_send_prepared, count_send_prepared)
	return p;
}

int
__wrap_sqlite3_step(sqlite3_stmt *s)
{
	lite_trip(sqlite3_db_handle(s));
	return __real_sqlite3_step(s);
}

int
__wrap_sqlite3_exec(sqlite3 *db, const char *sql,
    int (*cb)(void *, int, char **, char **), void *arg, char **err)
{
	const char	*f = sqlite3_db_filename(db, "main");
	size_t		 n = f != NULL ? strlen(f) : 0;
	long long	 kib;

	if (n >= 9 && strcmp(f + n - 9, "/state.db") == 0 &&
	    strncmp(sql, "PRAGMA cache_size=-", 19) == 0 &&
	    util_parse_num(sql + 19, 1, INT_MAX, &kib) == UTIL_NUM_OK)
		status_cache_kib = (int)kib;
	lite_trip(db);
	return __real_sqlite3_exec(db, sql, cb, arg, err);
}

/*
 * Fixtures: tenant acme, destination sink, endpoints tornado and
 * other (hmac, SECRET), jobs job-1 .. job-8 with actions of their own; on
 * the running test's backend, config.db and state.db both.
 */
static void
cfg_setup(void)
{
	struct config	*w;
	char		 job[16], att[16];
	int		 i;

	ck_assert_int_lt(snprintf(dir, sizeof(dir), "%s", test_tmpdir()),
	    (int)sizeof(dir));
	snprintf(config_path, sizeof(config_path), "%s",
	    test_location(dir, "config.db"));
	snprintf(state_path, sizeof(state_path), "%s",
	    test_location(dir, "state.db"));
	test_path(log_path, sizeof(log_path), dir, "respond.log");
	w = test_config_create(dir);
	ck_assert_int_eq(config_begin(w), CONFIG_OK);
	test_add_tenant(w, "acme", 1);
	test_add_destination(w, "acme", "sink");
	add_endpoint(w, "tornado", "acme", CONFIG_AUTH_HMAC, "", SECRET);
	add_endpoint(w, "other", "acme", CONFIG_AUTH_HMAC, "", SECRET);
	for (i = 1; i <= 8; i++) {
		snprintf(job, sizeof(job), "job-%d", i);
		snprintf(att, sizeof(att), "att-%d", i);
		add_job(w, job, att);
	}
	ck_assert_int_eq(config_commit(w), CONFIG_OK);
	config_close(w);
	store_close(test_store_open(dir, 1000, 1));
	server_init(&srv, 1000);
}

/* The tool's connection, for one change. */
static struct config *
tool(void)
{
	return test_config_open(dir, CONFIG_WRITE, TEST_BUSY_MS);
}

/* Plain SQL on config.db, behind the tool's back. */
static void
behind(const char *sql)
{
	test_db_exec(config_path, sql);
}

/* A POST of body to /hooks/ep, signed with secret now; its status. */
static int
post(const char *ep, const char *secret, const char *body, struct answer *a)
{
	struct fake	f;
	char		path[256];

	snprintf(path, sizeof(path), "/hooks/%s", ep);
	fk_init(&f, "POST", path);
	fk_body(&f, body, strlen(body));
	sign_tsig(&f, "HTTP_X_TORNADO_SIGNATURE", secret, util_now());
	return run(&f, a);
}

static void
expect(const char *ep, const char *secret, const char *body, int status,
    const char *result)
{
	struct answer	a;

	ck_assert_int_eq(post(ep, secret, body, &a), status);
	ck_assert_str_eq(a.result, result);
}

/* The id of an endpoint's newest secret. */
static int
newest_fn(void *arg, const struct config_secret_info *i)
{
	*(int64_t *)arg = i->id;
	return 0;
}

static int64_t
newest_secret(struct config *w, const char *ep)
{
	int64_t	id = -1;

	ck_assert_int_eq(config_secret_each(w, ep, newest_fn, &id), CONFIG_OK);
	ck_assert_int_gt(id, 0);
	return id;
}

START_TEST(secret_revoked_and_added)
{
	struct config	*w;
	const char	*why;
	int64_t		 first;

	expect("tornado", SECRET, COMPLETED("job-1"), 200, "accepted");
	/* Not a secret of the endpoint's yet: refused, from the snapshot. */
	expect("tornado", SECRET2, COMPLETED("job-2"), 401, "unauthorized");
	w = tool();
	first = newest_secret(w, "tornado");
	ck_assert_int_eq(config_secret_add(w, "tornado",
	    (const unsigned char *)SECRET2, strlen(SECRET2), 0, &why),
	    CONFIG_OK);
	config_close(w);
	expect("tornado", SECRET2, COMPLETED("job-2"), 200, "accepted");
	expect("tornado", SECRET, COMPLETED("job-3"), 200, "accepted");
	w = tool();
	ck_assert_int_eq(config_secret_revoke(w, "tornado", first), CONFIG_OK);
	config_close(w);
	expect("tornado", SECRET, COMPLETED("job-4"), 401, "unauthorized");
	expect("tornado", SECRET, COMPLETED("job-1"), 401, "unauthorized");
	expect("tornado", SECRET2, COMPLETED("job-4"), 200, "accepted");
	/* The other endpoint's secret is its own. */
	expect("other", SECRET, COMPLETED("job-5"), 200, "accepted");
}
END_TEST

START_TEST(job_removed_422)
{
	struct config	*w;

	expect("tornado", SECRET, PROGRESS("job-6", "muxing"), 200,
	    "recorded");
	w = tool();
	ck_assert_int_eq(config_remove(w, CONFIG_JOBS, "acme", "job-6"),
	    CONFIG_OK);
	config_close(w);
	expect("tornado", SECRET, COMPLETED("job-6"), 422, "unknown_job");
	w = tool();
	add_job(w, "job-6", "att-6b");
	config_close(w);
	expect("tornado", SECRET, COMPLETED("job-6"), 200, "accepted");
}
END_TEST

START_TEST(endpoint_removed_and_added_404)
{
	struct config	*w;
	struct answer	 a;

	expect("other", SECRET, COMPLETED("job-1"), 200, "accepted");
	w = tool();
	ck_assert_int_eq(config_remove(w, CONFIG_ENDPOINTS, "other", NULL),
	    CONFIG_OK);
	config_close(w);
	expect("other", SECRET, COMPLETED("job-1"), 404, "unknown_endpoint");
	/* Added while the snapshot says there is none. */
	expect("late", SECRET2, COMPLETED("job-2"), 404, "unknown_endpoint");
	w = tool();
	add_endpoint(w, "late", "acme", CONFIG_AUTH_HMAC, "", SECRET2);
	config_close(w);
	ck_assert_int_eq(post("late", SECRET2, COMPLETED("job-2"), &a), 200);
	ck_assert_str_eq(a.result, "accepted");
	log_has(&a, "endpoint=late");
}
END_TEST

START_TEST(tenant_deactivated)
{
	struct config		*w;
	struct config_tenant	 t;
	const char		*why;

	expect("tornado", SECRET, COMPLETED("job-1"), 200, "accepted");
	w = tool();
	ck_assert_int_eq(config_tenant_get(w, "acme", &t), CONFIG_OK);
	t.active = 0;
	ck_assert_int_eq(config_tenant_update(w, &t, NULL, 0, &why),
	    CONFIG_OK);
	config_close(w);
	expect("tornado", SECRET, COMPLETED("job-2"), 404, "unknown_endpoint");
	/* An event with no job reads no job: confirmed all the same. */
	expect("tornado", SECRET, "{\"type\":\"batch_completed\","
	    "\"batch_id\":\"b1\",\"completed\":1,\"failed\":0,\"total\":1}",
	    404, "unknown_endpoint");
	w = tool();
	t.active = 1;
	ck_assert_int_eq(config_tenant_update(w, &t, NULL, 0, &why),
	    CONFIG_OK);
	config_close(w);
	expect("tornado", SECRET, COMPLETED("job-2"), 200, "accepted");
	expect("tornado", SECRET, "{\"type\":\"batch_completed\","
	    "\"batch_id\":\"b2\",\"completed\":1,\"failed\":0,\"total\":1}",
	    200, "recorded");
}
END_TEST

/* Plain SQL, as an operator might run it, or an older tool's writes. */
START_TEST(changed_behind_the_tool)
{
	expect("tornado", SECRET, COMPLETED("job-1"), 200, "accepted");
	behind("DELETE FROM secrets WHERE endpoint = 'tornado'");
	expect("tornado", SECRET, COMPLETED("job-2"), 401, "unauthorized");
	behind("INSERT INTO secrets(endpoint, secret, created_at) SELECT"
	    " 'tornado', secret, 0 FROM secrets WHERE endpoint = 'other'");
	expect("tornado", SECRET, COMPLETED("job-2"), 200, "accepted");
	behind("UPDATE tenants SET active = 0");
	expect("tornado", SECRET, COMPLETED("job-3"), 404, "unknown_endpoint");
	behind("UPDATE tenants SET active = 1");
	expect("tornado", SECRET, COMPLETED("job-3"), 200, "accepted");
	behind("DELETE FROM jobs WHERE job_id = 'job-4'");
	expect("tornado", SECRET, COMPLETED("job-4"), 422, "unknown_job");
	behind("UPDATE endpoints SET tolerance_s = 1 WHERE name = 'tornado'");
	{
		struct fake	f;
		struct answer	a;

		fk_init(&f, "POST", "/hooks/tornado");
		fk_body(&f, COMPLETED("job-5"), strlen(COMPLETED("job-5")));
		sign_tsig(&f, "HTTP_X_TORNADO_SIGNATURE", SECRET,
		    util_now() - 60);
		ck_assert_int_eq(run(&f, &a), 401);
	}
}
END_TEST

/* Holds config.db from a connection of our own: nothing reads it. */
static sqlite3	*cfg_locker;
static struct db *pg_locker;

static void
lock_config(void)
{
	struct db_stmt	*st;

	if (test_backend == TEST_SQLITE) {
		ck_assert_int_eq(sqlite3_open_v2(config_path, &cfg_locker,
		    SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
		ck_assert_int_eq(sqlite3_exec(cfg_locker, "BEGIN EXCLUSIVE",
		    NULL, NULL, NULL), SQLITE_OK);
		return;
	}
	st = test_own_stmt(config_path, "SELECT 1", NULL, &pg_locker);
	(void)st;
	ck_assert_msg(db_exec(pg_locker, "BEGIN; LOCK TABLE"
	    " hookbox_config.config_version IN ACCESS EXCLUSIVE MODE") ==
	    DB_OK, "%s", db_errmsg(pg_locker));
}

static void
unlock_config(void)
{
	if (test_backend == TEST_SQLITE) {
		ck_assert_int_eq(sqlite3_exec(cfg_locker, "ROLLBACK", NULL,
		    NULL, NULL), SQLITE_OK);
		sqlite3_close(cfg_locker);
		cfg_locker = NULL;
		return;
	}
	ck_assert_int_eq(db_exec(pg_locker, "ROLLBACK"), DB_OK);
}

/*
 * The version cannot be read: every answer that would come from the
 * snapshot is 503 with Retry-After instead, the unauthenticated ones
 * too; then the same requests as before.
 */
START_TEST(version_unreadable_503)
{
	struct answer	a;
	struct fake	f;

	respond_close(&srv);
	server_init(&srv, 200);
	expect("tornado", SECRET, COMPLETED("job-1"), 200, "accepted");
	expect("tornado", SECRET2, COMPLETED("job-2"), 401, "unauthorized");
	expect("nosuch", SECRET, COMPLETED("job-2"), 404, "unknown_endpoint");
	lock_config();
	ck_assert_int_eq(post("tornado", SECRET, COMPLETED("job-2"), &a), 503);
	ck_assert_str_eq(a.result, "unavailable");
	ck_assert_str_eq(a.retry_after, "7");
	ck_assert_int_eq(post("tornado", SECRET, COMPLETED("job-1"), &a), 503);
	ck_assert_int_eq(post("tornado", SECRET2, COMPLETED("job-2"), &a),
	    503);
	ck_assert_int_eq(post("nosuch", SECRET, COMPLETED("job-2"), &a), 503);
	ck_assert_int_eq(post("tornado", SECRET, "{\"type\":\"job_completed\"",
	    &a), 503);
	/* A name nothing can configure: 404 without a read. */
	fk_init(&f, "POST", "/hooks/no%20such");
	fk_body(&f, "{}", 2);
	ck_assert_int_eq(run(&f, &a), 404);
	unlock_config();
	expect("tornado", SECRET, COMPLETED("job-2"), 200, "accepted");
	expect("tornado", SECRET2, COMPLETED("job-3"), 401, "unauthorized");
	ck_assert_int_eq(q("SELECT count(*) FROM accepted"), 2);
}
END_TEST

/* config.db replaced by a file that is none: 503, then the real one. */
START_TEST(config_replaced_503)
{
	char	saved[PATH_MAX], junk[PATH_MAX];
	FILE	*fp;

	if (test_backend != TEST_SQLITE)
		return;		/* a file's fate */
	expect("tornado", SECRET, COMPLETED("job-1"), 200, "accepted");
	test_path(saved, sizeof(saved), dir, "config.saved");
	test_path(junk, sizeof(junk), dir, "config.junk");
	ck_assert_ptr_nonnull(fp = fopen(junk, "w"));
	ck_assert_int_gt(fprintf(fp, "%0512d", 0), 0);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_int_eq(link(config_path, saved), 0);
	ck_assert_int_eq(rename(junk, config_path), 0);
	expect("tornado", SECRET, COMPLETED("job-2"), 503, "unavailable");
	expect("tornado", SECRET2, COMPLETED("job-2"), 503, "unavailable");
	ck_assert_int_eq(rename(saved, config_path), 0);
	expect("tornado", SECRET, COMPLETED("job-2"), 200, "accepted");
}
END_TEST

/*
 * A restore renamed over config.db, of a copy made before a change: the
 * copy's configuration is in force for the next request.
 */
START_TEST(config_restored)
{
	struct config	*w;
	char		 copy[PATH_MAX], sql[PATH_MAX + 32];

	if (test_backend != TEST_SQLITE)
		return;
	expect("tornado", SECRET, COMPLETED("job-1"), 200, "accepted");
	test_path(copy, sizeof(copy), dir, "config.copy");
	snprintf(sql, sizeof(sql), "VACUUM INTO '%s'", copy);
	behind(sql);
	w = tool();
	ck_assert_int_eq(config_remove(w, CONFIG_ENDPOINTS, "other", NULL),
	    CONFIG_OK);
	config_close(w);
	expect("other", SECRET, COMPLETED("job-2"), 404, "unknown_endpoint");
	ck_assert_int_eq(rename(copy, config_path), 0);
	expect("other", SECRET, COMPLETED("job-2"), 200, "accepted");
}
END_TEST

/* Drops the version, its triggers and (PostgreSQL) their function. */
static void
unversion(void)
{
	behind(test_backend == TEST_POSTGRES ? test_unversion_pg :
	    test_unversion_sqlite);
}

/*
 * A config.db as the previous release made it, without the version:
 * read for each request, every change in force at once; made with the
 * version again by the tool's first write, dropped under the running
 * responder (a restore of such a file), and back.
 */
START_TEST(without_version)
{
	struct config	*w;
	const char	*why;

	unversion();
	expect("tornado", SECRET, COMPLETED("job-1"), 200, "accepted");
	behind("DELETE FROM secrets WHERE endpoint = 'tornado'");
	expect("tornado", SECRET, COMPLETED("job-2"), 401, "unauthorized");
	/* The tool's first write adds the version, and bumps it. */
	w = tool();
	ck_assert_int_eq(config_secret_add(w, "tornado",
	    (const unsigned char *)SECRET2, strlen(SECRET2), 0, &why),
	    CONFIG_OK);
	config_close(w);
	ck_assert_int_ge(test_db_int(config_path,
	    "SELECT count(*) FROM config_version"), 1);
	expect("tornado", SECRET2, COMPLETED("job-2"), 200, "accepted");
	behind("DELETE FROM secrets WHERE endpoint = 'tornado'");
	expect("tornado", SECRET2, COMPLETED("job-3"), 401, "unauthorized");
	/* Gone again under the running responder: read per request. */
	unversion();
	expect("tornado", SECRET2, COMPLETED("job-3"), 401, "unauthorized");
	behind("INSERT INTO secrets(endpoint, secret, created_at) SELECT"
	    " 'tornado', secret, 0 FROM secrets WHERE endpoint = 'other'");
	expect("tornado", SECRET, COMPLETED("job-3"), 200, "accepted");
}
END_TEST

/*
 * What a request costs config.db once the snapshot is read: an accepted
 * one, one statement, its batch's (on PostgreSQL one round trip: the
 * batch's jobs with the version; SQLite's count is of steps, the job's
 * row and the statement's end); an unauthenticated one, one read of the
 * version; a name nothing can configure, none.
 */
START_TEST(one_round_trip)
{
	struct answer	a;
	struct fake	f;
	int		n, job = test_backend == TEST_SQLITE ? 2 : 1;

	expect("tornado", SECRET, COMPLETED("job-1"), 200, "accepted");
	expect("tornado", SECRET2, COMPLETED("job-2"), 401, "unauthorized");
	config_trips = 0;
	ck_assert_int_eq(post("tornado", SECRET, COMPLETED("job-2"), &a), 200);
	ck_assert_str_eq(a.result, "accepted");
	ck_assert_int_eq(n = config_trips, job);
	config_trips = 0;
	ck_assert_int_eq(post("tornado", SECRET, COMPLETED("job-2"), &a), 200);
	ck_assert_str_eq(a.result, "duplicate");
	ck_assert_int_eq(config_trips, job);
	config_trips = 0;
	ck_assert_int_eq(post("tornado", SECRET2, COMPLETED("job-3"), &a),
	    401);
	ck_assert_int_eq(config_trips, 1);
	config_trips = 0;
	ck_assert_int_eq(post("nosuch", SECRET, COMPLETED("job-3"), &a), 404);
	ck_assert_int_eq(config_trips, 1);
	config_trips = 0;
	fk_init(&f, "POST", "/hooks/no%20such");
	fk_body(&f, "{}", 2);
	ck_assert_int_eq(run(&f, &a), 404);
	ck_assert_int_eq(config_trips, 0);
	if (getenv("HB_TEST_VERBOSE") != NULL)
		fprintf(stderr, "config round trips per accepted request: %d\n",
		    n);
}
END_TEST

/*
 * Threads share the snapshot while its secret is revoked and added back,
 * again and again: a request sent and answered while the secret was
 * revoked (no change under way from its start to its answer) is refused,
 * one sent and answered while it was there is accepted, and none is
 * answered anything else.  The ThreadSanitizer build runs it too.
 */
#define SHARE_THREADS	6
#define SHARE_ROUNDS	3

/*
 * 4k+1 the secret is there, 4k+2 being revoked, 4k+3 revoked, 4k+4
 * being added back; past SHARE_END the threads stop.
 */
#define SHARE_END	(4 * SHARE_ROUNDS + 1)
static atomic_int	share_phase;
static atomic_int	share_stable[SHARE_END + 1];	/* right answers */
static struct resp_server share_srv;

struct sharer {
	int		n;	/* the thread's number */
	pthread_t	tid;
	int		bad;
	char		why[160];
	int		seen[2];	/* stable answers: accepted, refused */
};

/* One request on share_srv: its status (0: none). */
static int
share_one(const char *secret, const char *job)
{
	struct fake	*f;
	struct resp_io	 io;
	char		 body[128], code[4];
	long long	 v;
	int		 status = 0;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return 0;
	snprintf(body, sizeof(body), "{\"type\":\"job_completed\","
	    "\"job_id\":\"%s\",\"status\":\"completed\"}", job);
	fk_init(f, "POST", "/hooks/tornado");
	fk_body(f, body, strlen(body));
	sign_tsig(f, "HTTP_X_TORNADO_SIGNATURE", secret, util_now());
	io.param = fk_param;
	io.read = fk_read;
	io.write = fk_write;
	io.arg = f;
	respond(&share_srv, &io);
	if (f->outlen > 11 && strncmp(f->out, "Status: ", 8) == 0) {
		memcpy(code, f->out + 8, 3);
		code[3] = '\0';
		if (util_parse_num(code, 100, 599, &v) == UTIL_NUM_OK)
			status = (int)v;
	}
	free(f);
	return status;
}

static void *
sharer_run(void *arg)
{
	struct sharer	*s = arg;
	char		 job[16];
	int		 i, p0, p1, st, want;

	for (i = 0; (p0 = share_phase) < SHARE_END; i++) {
		snprintf(job, sizeof(job), "job-%d", 1 + (s->n + i) % 8);
		st = share_one(SECRET, job);
		p1 = share_phase;
		want = p0 != p1 || p0 % 2 == 0 ? 0 : p0 % 4 == 1 ? 200 : 401;
		if ((want != 0 && st != want) || (st != 200 && st != 401)) {
			if (s->bad++ == 0)
				snprintf(s->why, sizeof(s->why), "phase %d to"
				    " %d: %d", p0, p1, st);
		} else if (want != 0) {
			s->seen[want == 401]++;
			share_stable[p0]++;
		}
	}
	return NULL;
}

/* Waits until a request was answered inside phase p (WAIT_S at most). */
#define WAIT_S	60
static void
share_wait(int p)
{
	int	i;

	for (i = 0; i < WAIT_S * 1000 && share_stable[p] == 0; i++)
		usleep(1000);
	ck_assert_msg(share_stable[p] > 0, "no request answered in phase %d"
	    " in %d s", p, WAIT_S);
}

START_TEST(threads_share_the_snapshot)
{
	struct sharer		 t[SHARE_THREADS];
	struct resp_shared	*sh;
	struct config		*w;
	const char		*why;
	int			 i, r, saved, devnull, seen[2] = { 0, 0 };

	share_srv = srv;
	ck_assert_int_eq(respond_shared_new(&srv.set, SHARE_THREADS, &sh), 0);
	share_srv.shared = sh;
	share_srv.own = 0;
	share_phase = 1;
	for (i = 0; i <= SHARE_END; i++)
		share_stable[i] = 0;
	/* Thousands of log lines: to /dev/null. */
	fflush(stderr);
	ck_assert_int_ge(saved = dup(2), 0);
	ck_assert_int_ge(devnull = open("/dev/null", O_WRONLY), 0);
	ck_assert_int_eq(dup2(devnull, 2), 2);
	close(devnull);
	for (i = 0; i < SHARE_THREADS; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].n = i;
		ck_assert_int_eq(pthread_create(&t[i].tid, NULL, sharer_run,
		    &t[i]), 0);
	}
	/*
	 * Each state lasts until a request was answered inside it: the
	 * threads' pace, whatever the machine's load.
	 */
	for (r = 0; r < SHARE_ROUNDS; r++) {
		share_wait(4 * r + 1);
		share_phase = 4 * r + 2;
		behind("DELETE FROM secrets WHERE endpoint = 'tornado'");
		share_phase = 4 * r + 3;
		share_wait(4 * r + 3);
		share_phase = 4 * r + 4;
		w = tool();
		ck_assert_int_eq(config_secret_add(w, "tornado",
		    (const unsigned char *)SECRET, strlen(SECRET), 0, &why),
		    CONFIG_OK);
		config_close(w);
		share_phase = 4 * r + 5;
	}
	for (i = 0; i < SHARE_THREADS; i++)
		ck_assert_int_eq(pthread_join(t[i].tid, NULL), 0);
	fflush(stderr);
	ck_assert_int_eq(dup2(saved, 2), 2);
	close(saved);
	respond_shared_free(sh);
	for (i = 0; i < SHARE_THREADS; i++) {
		ck_assert_msg(t[i].bad == 0, "thread %d: %d wrong, the first"
		    " %s", i, t[i].bad, t[i].why);
		seen[0] += t[i].seen[0];
		seen[1] += t[i].seen[1];
	}
	/* Both kinds were seen, or the test proved nothing. */
	ck_assert_int_gt(seen[0], 0);
	ck_assert_int_gt(seen[1], 0);
	/* And the last word is the tool's: the secret is there. */
	expect("tornado", SECRET, COMPLETED("job-1"), 200, "duplicate");
}
END_TEST

/*
 * Health while every commit waits past the busy budget (on SQLite, a
 * lock held by another writer; on PostgreSQL, a synchronous standby
 * that is not there, which only a COMMIT meets): 503 once a callback's
 * commit has failed so, with no callback in flight; and back to 200 by
 * itself once commits go through, before any callback does.
 */
START_TEST(health_while_commits_wait)
{
	struct answer	 a;
	sqlite3		*l = NULL;

	respond_close(&srv);
	server_init(&srv, 300);
	ck_assert_int_eq(get("GET", "_health", &a), 200);
	if (test_backend == TEST_SQLITE) {
		ck_assert_int_eq(sqlite3_open_v2(state_path, &l,
		    SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
		ck_assert_int_eq(sqlite3_exec(l, "BEGIN IMMEDIATE", NULL,
		    NULL, NULL), SQLITE_OK);
	} else
		test_pg_standby("hookbox_missing");
	ck_assert_int_eq(tornado(COMPLETED("job-1"), &a), 503);
	ck_assert_str_eq(a.result, "unavailable");
	ck_assert_int_eq(get("GET", "_health", &a), 503);
	ck_assert_str_eq(a.result, "unavailable");
	ck_assert_int_eq(get("GET", "_health", &a), 503);
	if (test_backend == TEST_SQLITE) {
		ck_assert_int_eq(sqlite3_exec(l, "ROLLBACK", NULL, NULL,
		    NULL), SQLITE_OK);
		sqlite3_close(l);
	} else
		test_pg_standby(NULL);
	/* By itself: no callback has gone through yet. */
	ck_assert_int_eq(get("GET", "_health", &a), 200);
	ck_assert_int_eq(tornado(COMPLETED("job-1"), &a), 200);
	ck_assert_int_eq(get("GET", "_health", &a), 200);
}
END_TEST

static Suite *
config_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("respond-config");
	tc = tcase_create("changes");
	tcase_add_checked_fixture(tc, cfg_setup, teardown);
	tcase_add_test(tc, secret_revoked_and_added);
	tcase_add_test(tc, job_removed_422);
	tcase_add_test(tc, endpoint_removed_and_added_404);
	tcase_add_test(tc, tenant_deactivated);
	tcase_add_test(tc, changed_behind_the_tool);
	tcase_add_test(tc, version_unreadable_503);
	tcase_add_test(tc, config_replaced_503);
	tcase_add_test(tc, config_restored);
	tcase_add_test(tc, without_version);
	tcase_add_test(tc, one_round_trip);
	tcase_add_test(tc, threads_share_the_snapshot);
	suite_add_tcase(s, tc);
	/* The server's synchronous standby is set, and reset after. */
	tc = tcase_create("commits-wait");
	tcase_add_unchecked_fixture(tc, test_case_setup,
	    test_case_teardown_standby);
	tcase_add_checked_fixture(tc, cfg_setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, health_while_commits_wait);
	suite_add_tcase(s, tc);
	return s;
}

static Suite *
respond_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("respond");

	tc = tcase_create("table");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ok_rows);
	tcase_add_test(tc, malformed_400);
	tcase_add_test(tc, unauthorized_401);
	tcase_add_test(tc, unknown_endpoint_404);
	tcase_add_test(tc, method_405);
	tcase_add_test(tc, length_411);
	tcase_add_test(tc, content_length_values);
	tcase_add_test(tc, body_max_edge);
	tcase_add_test(tc, media_415);
	tcase_add_test(tc, action_conflict_409);
	tcase_add_test(tc, unknown_job_422);
	tcase_add_test(tc, short_body_503);
	tcase_add_test(tc, locked_503);
	tcase_add_test(tc, health_after_failed_commit);
	tcase_add_test(tc, health_does_not_wait);
	tcase_add_test(tc, nomem_503);
	tcase_add_test(tc, misdirected_500);
	suite_add_tcase(s, tc);

	tc = tcase_create("request");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, header_mapping);
	tcase_add_test(tc, path_sources);
	tcase_add_test(tc, result_status_map);
	tcase_add_test(tc, answer_bytes);
	suite_add_tcase(s, tc);

	tc = tcase_create("monitors");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, health);
	tcase_add_loop_test(tc, read_only_state, 0, 2);
	tcase_add_test(tc, metrics);
	tcase_add_test(tc, counters);
	suite_add_tcase(s, tc);

	tc = tcase_create("transport");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, write_fails);
	tcase_add_test(tc, write_always_fails);
	tcase_add_test(tc, odd_requests);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	if (util_init() != 0)
		return 1;
	return test_run(respond_suite) == EXIT_SUCCESS &&
	    test_run_backends(config_suite, "respond-config") ==
	    EXIT_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
