/*
 * respond.c: the HTTP side of one webhook request.
 */
#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sodium.h>

#include "base/log.h"
#include "config/cache.h"
#include "intake/group.h"
#include "intake/webhook.h"
#include "respond.h"
#include "base/text.h"
#include "base/util.h"
#include "status/page.h"
#include "status/status.h"

#define HOOKS_PREFIX	"/hooks/"
/* Health's and metrics' state.db page cache, KiB (SQLite's: 2000). */
#define RESP_STATUS_CACHE_KIB	256

/* What the responder answers before the library is asked. */
enum reply {
	R_METHOD,	/* 405 */
	R_LENGTH,	/* 411 */
	R_TOO_LARGE,	/* 413 */
	R_MEDIA,	/* 415 */
	R_NOT_FOUND	/* 404 for paths outside /hooks/{endpoint} */
};

/*
 * One request as it is answered and then logged (one line, every
 * request) and counted.  endpoint is the metric label: a configured
 * endpoint's name, "_health", "_metrics" or "unknown", never the path
 * as sent; path is that (attacker-controlled, escaped by the log).
 */
struct rq {
	const struct resp_io	*io;
	char			 rid[RESP_RID_MAX + 1];	/* X-Request-Id */
	struct timespec		 t0;
	const char		*method;
	const char		*path;		/* after /hooks/ */
	const char		*endpoint;	/* label */
	const char		*tenant;	/* NULL before it is known */
	const char		*action;	/* NULL or "" when none */
	const char		*result;	/* the word answered */
	const char		*detail;
	int			 status;
	int			 counted;	/* by the writer
						   (intake/group.h) */
	int64_t			 secret;	/* the id of the secret it
						   was signed with; 0: none */
};

static int
status_of_result(enum hb_result r)
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
	return 500;
}

static const char *
reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Content";
	case 503: return "Service Unavailable";
	}
	return "Internal Server Error";
}

static void
out(const struct resp_io *io, const char *s, size_t len)
{
	(void)io->write(io->arg, s, len);
}

/*
 * Writes the status line and headers, X-Request-Id among them; extra is
 * "" or "Name: v\r\n...".  Notes the status for the log line.
 */
static void
head(struct rq *rq, int status, const char *type, const char *extra)
{
	char	buf[1024];
	int	n;

	rq->status = status;
	n = snprintf(buf, sizeof(buf), "Status: %d %s\r\n"
	    "Content-Type: %s\r\nCache-Control: no-store\r\n"
	    "X-Request-Id: %s\r\n%s\r\n",
	    status, reason(status), type, rq->rid, extra);
	if (n > 0 && (size_t)n < sizeof(buf))
		out(rq->io, buf, (size_t)n);
}

/*
 * Answers a result as its JSON document: in a buffer of the thread's
 * stack, or for a fan-out's, whose "actions" may not fit there, one
 * allocated (without it, the answer is its result alone).
 */
static void
answer(const struct resp_server *srv, struct rq *rq, int status,
    const struct accept_res *res, const char *word)
{
	const struct resp_io	*io = rq->io;
	char			 small[ACCEPT_JSON_ONE], extra[96];
	char			*body = small, *big = NULL;
	size_t			 size = sizeof(small);
	int			 n;

	if (res != NULL && res->nmore > 0 &&
	    (big = malloc(ACCEPT_JSON_MAX)) != NULL) {
		body = big;
		size = ACCEPT_JSON_MAX;
	}

	extra[0] = '\0';
	if (status == 503)
		(void)snprintf(extra, sizeof(extra), "Retry-After: %d\r\n",
		    srv->retry_after);
	else if (status == 405)
		(void)snprintf(extra, sizeof(extra), "Allow: POST\r\n");
	if (word != NULL)
		n = snprintf(body, size, "{\"result\":\"%s\"}", word);
	else
		n = accept_res_json(res, body, size) == 0 ?
		    (int)strlen(body) : snprintf(body, size,
		    "{\"result\":\"%s\"}", hb_result_name(res->result));
	head(rq, status, "application/json", extra);
	rq->result = word != NULL ? word : hb_result_name(res->result);
	if (res != NULL) {
		rq->action = res->action;
		rq->detail = res->detail;
	}
	if (n > 0 && (size_t)n < size) {
		out(io, body, (size_t)n);
		out(io, "\n", 1);
	}
	free(big);
}

static void
answer_reply(const struct resp_server *srv, struct rq *rq, enum reply r)
{
	static const struct {
		int		 status;
		const char	*word;
	} replies[] = {
		[R_METHOD] = { 405, "method_not_allowed" },
		[R_LENGTH] = { 411, "length_required" },
		[R_TOO_LARGE] = { 413, "payload_too_large" },
		[R_MEDIA] = { 415, "unsupported_media_type" },
		[R_NOT_FOUND] = { 404, "unknown_endpoint" },
	};

	answer(srv, rq, replies[r].status, NULL, replies[r].word);
}

/* dir without its trailing slashes: the length to compare. */
static size_t
dir_len(const char *dir)
{
	size_t	n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return n;
}

/*
 * The HOOKBOX_DIR parameter, when nginx sends one (fastcgi_param), is a
 * cross-check, never a choice: a request naming another directory than
 * the responder's own is a misconfiguration (or a peer on the socket
 * trying to redirect it) and changes nothing.
 */
static int
dir_param_ok(const struct resp_server *srv, const struct resp_io *io)
{
	const char	*p;
	size_t		 n;

	if ((p = io->param(io->arg, "HOOKBOX_DIR")) == NULL || *p == '\0')
		return 1;
	n = dir_len(p);
	return n == dir_len(srv->set.dir) && memcmp(p, srv->set.dir, n) == 0;
}

/*
 * What the threads of a process share.  Health and metrics use one
 * state.db connection of their own, one request at a time: a metrics scan
 * fills a connection's cache, and one such cache per thread would add up.
 */
struct resp_shared {
	struct metrics		*metrics;	/* this process's counts */
	struct group		*group;
	struct config_cache	*configs;
	pthread_mutex_t		 lock;	/* st */
	struct store		*st;
};

int
respond_shared_new(const struct settings *set, int threads,
    struct resp_shared **out)
{
	struct resp_shared	*sh;
	struct group_opts	 go;

	*out = NULL;
	if ((sh = calloc(1, sizeof(*sh))) == NULL)
		return -1;
	pthread_mutex_init(&sh->lock, NULL);
	memset(&go, 0, sizeof(go));
	go.state_path = set->state_path;
	go.busy_ms = set->busy_ms;
	go.sync_normal = set->sync_normal;
	go.threaded = threads > 1;
	if ((sh->metrics = metrics_new()) == NULL) {
		respond_shared_free(sh);
		return -1;
	}
	go.metrics = sh->metrics;
	if (config_cache_new(set->config_path, set->busy_ms,
	    threads < RESP_CONFIGS ? threads : RESP_CONFIGS,
	    &sh->configs) != 0) {
		respond_shared_free(sh);
		return -1;
	}
	go.configs = sh->configs;
	if (group_new(&go, &sh->group) != 0) {
		respond_shared_free(sh);
		return -1;
	}
	*out = sh;
	return 0;
}

int
respond_connections(int threads, int server)
{
	if (threads <= 1)
		return 3;	/* a pool of one, the inline writer, health */
	return (threads < RESP_CONFIGS ? threads : RESP_CONFIGS) +
	    (server ? 2 : 3);
}

void
respond_shared_free(struct resp_shared *sh)
{
	if (sh == NULL)
		return;
	group_free(sh->group);
	config_cache_free(sh->configs);
	store_close(sh->st);
	metrics_free(sh->metrics);
	pthread_mutex_destroy(&sh->lock);
	free(sh);
}

void
respond_quiet(struct resp_shared *sh)
{
	if (sh != NULL)
		(void)group_quiet(sh->group);
	util_give_heap_back();
}

/* No shared state given: a writer and a pool of one, on this thread. */
static int
open_shared(struct resp_server *srv)
{
	if (srv->shared != NULL)
		return 0;
	if (respond_shared_new(&srv->set, 1, &srv->shared) != 0)
		return -1;
	srv->own = 1;
	return 0;
}

/*
 * The state.db connection for health and metrics, locked (unlock_store()
 * after), opened when not open yet; one whose file is no longer the one
 * at its path (removed, renamed over or made read-only under us) is
 * closed first, so that the request meets the file the operator's tools
 * see.  NULL (unlocked) when it cannot be opened: the request gets 503.
 * The writer and the config.db pool check their own files the same way.
 */
static struct store *
lock_store(struct resp_server *srv)
{
	struct resp_shared	*sh;
	struct store_opts	 opts;

	if (open_shared(srv) != 0)
		return NULL;
	sh = srv->shared;
	pthread_mutex_lock(&sh->lock);
	if (sh->st != NULL && store_check_file(sh->st) != STORE_OK) {
		store_close(sh->st);
		sh->st = NULL;
	}
	if (sh->st == NULL) {
		memset(&opts, 0, sizeof(opts));
		/* Health must not wait: its write check is bounded. */
		opts.busy_ms = srv->set.busy_ms < STATUS_BUSY_MS ?
		    srv->set.busy_ms : STATUS_BUSY_MS;
		/* A scrape now and then: its pages need not stay. */
		opts.cache_kib = RESP_STATUS_CACHE_KIB;
		opts.sync_normal = srv->set.sync_normal;
		if (store_open(srv->set.state_path, &opts, &sh->st) !=
		    STORE_OK) {
			sh->st = NULL;
			pthread_mutex_unlock(&sh->lock);
			return NULL;
		}
	}
	return sh->st;
}

static void
unlock_store(struct resp_server *srv)
{
	pthread_mutex_unlock(&srv->shared->lock);
}

void
respond_close(struct resp_server *srv)
{
	if (srv->own)
		respond_shared_free(srv->shared);
	srv->shared = NULL;
	srv->own = 0;
}

/* The request path without its query string; "" when absent. */
static const char *
request_path(const struct resp_io *io, char *buf, size_t len)
{
	const char	*p;
	size_t		 n;

	if ((p = io->param(io->arg, "PATH_INFO")) != NULL && *p != '\0')
		return p;
	if ((p = io->param(io->arg, "DOCUMENT_URI")) != NULL && *p != '\0')
		return p;
	if ((p = io->param(io->arg, "REQUEST_URI")) == NULL)
		return "";
	n = strcspn(p, "?");
	if (n >= len)
		return "";
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

/* Header look-up for webhook_prepare(): "X-Foo-Bar" is HTTP_X_FOO_BAR. */
static const char *
header(const void *arg, const char *name)
{
	const struct resp_io	*io = arg;
	char			 var[160];
	size_t			 i, n = strlen(name);

	if (n + 5 >= sizeof(var))
		return NULL;
	memcpy(var, "HTTP_", 5);
	for (i = 0; i < n; i++)
		var[5 + i] = name[i] == '-' ? '_' :
		    (char)toupper((unsigned char)name[i]);
	var[5 + n] = '\0';
	return io->param(io->arg, var);
}

/*
 * A media type of the name given (application/json, application/x-www-
 * form-urlencoded), optionally with parameters ("; charset=utf-8"),
 * white space (OWS: space or tab) allowed before the ';'.
 */
static int
is_type(const char *type, const char *name)
{
	size_t	n = strlen(name);

	if (type == NULL || strncasecmp(type, name, n) != 0)
		return 0;
	return type[n] == '\0' || type[n] == ';' || type[n] == ' ' ||
	    type[n] == '\t';
}

/* A fixed text to the client. */
static void
puts_io(const struct resp_io *io, const char *s)
{
	out(io, s, strlen(s));
}

static void
unavailable(const struct resp_server *srv, struct rq *rq, const char *detail)
{
	struct accept_res	res;

	memset(&res, 0, sizeof(res));
	res.result = HB_UNAVAILABLE;
	res.detail = detail;
	answer(srv, rq, 503, &res, NULL);
	rq->action = NULL;
}

/* status_metrics()'s writer: the head goes before its first piece. */
struct text {
	struct rq	*rq;
	int		 headed;
};

static void
put_text(void *arg, const char *s, size_t len)
{
	struct text	*t = arg;

	if (!t->headed) {
		head(t->rq, 200, "text/plain; version=0.0.4; charset=utf-8",
		    "");
		t->rq->result = "ok";
		t->headed = 1;
	}
	out(t->rq->io, s, len);
}

/* Prometheus text exposition of what to watch (status/status.h). */
static void
metrics(struct resp_server *srv, struct store *st, struct rq *rq)
{
	struct text	t = { rq, 0 };

	if (status_metrics(st, srv->shared->group, srv->shared->metrics,
	    put_text, &t) != STORE_OK)
		unavailable(srv, rq, "state database unreadable");
}

/* Health: can a callback be accepted now (status/status.h)?  200 or 503. */
static void
health(struct resp_server *srv, struct store *st, struct rq *rq)
{
	const char	*why;
	char		 body[256], extra[64];

	if ((why = status_health(st, srv->shared->group, util_now_ms())) ==
	    NULL) {
		head(rq, 200, "application/json", "");
		rq->result = "ok";
		puts_io(rq->io, "{\"status\":\"ok\"}\n");
		return;
	}
	(void)snprintf(extra, sizeof(extra), "Retry-After: %d\r\n",
	    srv->retry_after);
	head(rq, 503, "application/json", extra);
	rq->result = "unavailable";
	rq->detail = why;
	if (snprintf(body, sizeof(body), "{\"status\":\"unavailable\","
	    "\"detail\":\"%s\"}\n", why) < (int)sizeof(body))
		out(rq->io, body, strlen(body));
}

/* The status page (status/page.h): 200 whatever health says, or 503. */
static void
page(struct resp_server *srv, struct store *st, struct rq *rq)
{
	struct status_view	 v;
	struct text		 t = { rq, 0 };
	const char		*why;
	char			 extra[384];
	int64_t			 now = util_now_ms();

	if (status_read(st, srv->shared->metrics, now, &v) != STORE_OK) {
		unavailable(srv, rq, "state database unreadable");
		return;
	}
	why = status_health(st, srv->shared->group, now);
	(void)snprintf(extra, sizeof(extra), "Content-Security-Policy: %s\r\n"
	    "X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer"
	    "\r\n", status_page_csp());
	head(rq, 200, "text/html; charset=utf-8", extra);
	rq->result = "ok";
	t.headed = 1;
	status_page(&v, why, put_text, &t);
	status_view_free(&v);
}

/*
 * The operator's routes, beside the hooks: read-only, GET, state.db
 * through health's connection.  nginx admits the local monitoring only
 * (nginx/hookbox.conf).
 */
static const struct {
	const char	*path;
	void		(*fn)(struct resp_server *, struct store *,
			    struct rq *);
} views[] = {
	{ "_health", health },
	{ "_metrics", metrics },
	{ "_status", page },
};

/*
 * The request's id: nginx's $request_id when the snippet passes it
 * (fastcgi_param REQUEST_ID, a parameter no client header can set), else
 * a fresh random one.  Either way [0-9A-Za-z_-], bounded.
 */
static void
request_id(const struct resp_io *io, char *buf, size_t len)
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned char		 r[8];
	const char		*p;
	size_t			 n, i;

	if ((p = io->param(io->arg, "REQUEST_ID")) != NULL &&
	    (n = strlen(p)) > 0 && n < len &&
	    strspn(p, "0123456789abcdefABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "ghijklmnopqrstuvwxyz_-") == n) {
		memcpy(buf, p, n + 1);
		return;
	}
	randombytes_buf(r, sizeof(r));
	for (i = 0; i < sizeof(r) && 2 * i + 2 < len; i++) {
		buf[2 * i] = hex[r[i] >> 4];
		buf[2 * i + 1] = hex[r[i] & 15];
	}
	buf[2 * i] = '\0';
}

/*
 * One line per request, whatever its outcome; never a secret or a body.
 * The path comes from anyone who can reach the socket: base/log.h escapes
 * and bounds it.
 */
static void
log_request(const struct rq *rq)
{
	struct log_line	l;
	struct timespec	t1;
	double		ms;

	(void)clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - rq->t0.tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - rq->t0.tv_nsec) / 1e6;
	log_begin(&l, rq->status >= 500 ? LOG_LV_ERROR : rq->status >= 400 ?
	    LOG_LV_WARN : LOG_LV_INFO, "request");
	log_str(&l, "method", rq->method);
	log_str(&l, "endpoint", rq->path);
	log_str(&l, "tenant", rq->tenant);
	if (rq->secret > 0)
		log_int(&l, "secret", rq->secret);
	log_str(&l, "result", rq->result);
	log_int(&l, "status", rq->status);
	log_str(&l, "action", rq->action != NULL && rq->action[0] != '\0' ?
	    rq->action : NULL);
	log_fmt(&l, "duration_ms", "%.3f", ms);
	log_str(&l, "request_id", rq->rid);
	log_str(&l, "detail", rq->detail);
	log_end(&l);
}

/* 500: the request names another data directory than ours. */
static void
misdirected(struct rq *rq)
{
	head(rq, 500, "application/json", "");
	rq->result = "misconfigured";
	rq->detail = "the request's HOOKBOX_DIR differs from -d; refused";
	puts_io(rq->io, "{\"result\":\"misconfigured\",\"detail\":\"HOOKBOX_DIR"
	    " differs from the responder's data directory\"}\n");
}

/*
 * What a webhook request holds from its body's arrival to its log line,
 * which names the endpoint, the tenant and the action from it: one
 * allocation, the body after it.  On a serving thread's stack it would
 * be some 16 KiB of every thread's resident size, for good; freed, it is
 * the heap's, which the process gives back once quiet (main.c).
 */
struct hook_mem {
	struct webhook_obs	 h;
	struct accept_res	 res;
	char			 body[];
};

/* Answers for which no request's memory was allocated. */
static const struct accept_res	bad_length = {
	.result = HB_MALFORMED,
	.detail = "invalid Content-Length",
};
static const struct accept_res	no_memory = { .result = HB_NOMEM };

/*
 * The webhook itself: POST /hooks/{endpoint}.  Returns what the answer
 * and rq point into, for the caller to free after the log line: NULL
 * when nothing was allocated.
 */
static struct hook_mem *
hook(struct resp_server *srv, struct rq *rq)
{
	const struct resp_io	*io = rq->io;
	struct webhook_req	 req;
	struct hook_mem		*m;
	struct accept_res	*res;
	const char		*s, *ctype;
	int			 form = 0;
	long long		 len = 0;
	enum util_num		 num;

	if (strcmp(rq->method, "POST") != 0) {
		answer_reply(srv, rq, R_METHOD);
		return NULL;
	}
	/* JSON, or a form for an endpoint whose mapping reads forms. */
	ctype = io->param(io->arg, "CONTENT_TYPE");
	if (!is_type(ctype, "application/json") &&
	    !(form = is_type(ctype, "application/x-www-form-urlencoded"))) {
		answer_reply(srv, rq, R_MEDIA);
		return NULL;
	}
	/* Bound the input before allocating or reading any of it. */
	if ((s = io->param(io->arg, "CONTENT_LENGTH")) == NULL || *s == '\0') {
		answer_reply(srv, rq, R_LENGTH);
		return NULL;
	}
	/* 1*DIGIT (RFC 9110): util_parse_num() alone would take "-0". */
	if ((num = util_parse_num(s, 0, LLONG_MAX, &len)) == UTIL_NUM_OK &&
	    s[strspn(s, "0123456789")] != '\0')
		num = UTIL_NUM_INVALID;
	if (num == UTIL_NUM_LARGE)
		len = LLONG_MAX;
	else if (num != UTIL_NUM_OK) {
		answer(srv, rq, 400, &bad_length, NULL);
		return NULL;
	}
	if ((unsigned long long)len > srv->body_max) {
		answer_reply(srv, rq, R_TOO_LARGE);
		return NULL;
	}

	if (open_shared(srv) != 0 ||
	    (m = malloc(sizeof(*m) + (size_t)len + 1)) == NULL) {
		answer(srv, rq, status_of_result(no_memory.result), &no_memory,
		    NULL);
		return NULL;
	}
	memset(&m->h, 0, sizeof(m->h));
	memset(&m->res, 0, sizeof(m->res));
	res = &m->res;
	if (io->read(io->arg, m->body, (size_t)len) != (size_t)len) {
		/* Cut off (or interrupted): nothing done, so try again. */
		res->result = HB_UNAVAILABLE;
		res->detail = "body shorter than Content-Length";
	} else {
		m->body[len] = '\0';	/* a stray str*() stops here */
		memset(&req, 0, sizeof(req));
		req.endpoint = rq->path;
		req.header = header;
		req.arg = io;
		req.body = m->body;
		req.bodylen = (size_t)len;
		req.query = io->param(io->arg, "QUERY_STRING");
		req.form = form;
		req.now_ms = util_now_ms();
		/* No config.db connection is held while the COMMIT is. */
		rq->counted = webhook_receive(srv->shared->configs,
		    srv->shared->group, &req, &m->h, res) == 0;
	}
	/* A configured endpoint's own name; else the path stays unnamed. */
	if (m->h.ep.name[0] != '\0') {
		rq->endpoint = m->h.ep.name;
		rq->tenant = m->h.ep.tenant;
	}
	rq->secret = m->h.secret;
	answer(srv, rq, status_of_result(res->result), res, NULL);
	return m;
}

/*
 * The request's log line and, unless the writer counted it with its
 * batch, its count.
 */
static void
log_count(struct resp_server *srv, const struct rq *rq)
{
	char	id[24];

	log_request(rq);
	/*
	 * Counted in memory; state.db has it with the writer's next COMMIT
	 * (an unauthenticated request writes nothing by itself), with the
	 * last use of the secret it was signed with: what a rotation
	 * watches before it revokes the old one.  A request the writer
	 * answered was counted with its batch.
	 */
	if (rq->counted || open_shared(srv) != 0)
		return;
	metrics_count(srv->shared->metrics, "requests", rq->endpoint,
	    rq->result != NULL ? rq->result : "none", util_now_ms());
	if (rq->secret > 0) {
		(void)snprintf(id, sizeof(id), "%lld", (long long)rq->secret);
		metrics_max(srv->shared->metrics, "secret_used_ms",
		    rq->endpoint, id, util_now_ms());
	}
}

void
respond(struct resp_server *srv, const struct resp_io *io)
{
	struct rq		 rq;
	struct hook_mem		*m = NULL;
	struct store		*st;
	const char	*path;
	char		 pathbuf[1024];
	size_t		 i;
	int		 get;

	memset(&rq, 0, sizeof(rq));
	(void)clock_gettime(CLOCK_MONOTONIC, &rq.t0);
	rq.io = io;
	rq.endpoint = "unknown";
	request_id(io, rq.rid, sizeof(rq.rid));
	if ((rq.method = io->param(io->arg, "REQUEST_METHOD")) == NULL)
		rq.method = "";
	get = strcmp(rq.method, "GET") == 0 || strcmp(rq.method, "HEAD") == 0;
	path = request_path(io, pathbuf, sizeof(pathbuf));
	if (strncmp(path, HOOKS_PREFIX, sizeof(HOOKS_PREFIX) - 1) != 0) {
		rq.path = path;
		answer_reply(srv, &rq, R_NOT_FOUND);
		goto done;
	}
	rq.path = path + sizeof(HOOKS_PREFIX) - 1;

	if (!dir_param_ok(srv, io)) {
		misdirected(&rq);
		goto done;
	}
	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		if (strcmp(rq.path, views[i].path) == 0)
			break;
	if (i < sizeof(views) / sizeof(views[0])) {
		rq.endpoint = views[i].path;
		if (!get) {
			head(&rq, 405, "application/json", "Allow: GET\r\n");
			rq.result = "method_not_allowed";
			puts_io(io, "{\"result\":\"method_not_allowed\"}\n");
		} else if ((st = lock_store(srv)) == NULL)
			unavailable(srv, &rq, "cannot open the databases");
		else {
			views[i].fn(srv, st, &rq);
			unlock_store(srv);
		}
		goto done;
	}
	m = hook(srv, &rq);
done:
	if (rq.status != 0)
		log_count(srv, &rq);
	free(m);
}
