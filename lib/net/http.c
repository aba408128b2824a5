/*
 * net/http.c: libcurl behind a small interface.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "base/util.h"
#include "net/addr.h"
#include "net/http.h"

#define RETRY_AFTER_MAX_MS	(3600 * 1000LL)

struct http {
	CURL	*curl;
};

struct sink {
	struct http_result	*out;
	size_t			 cap;
	int			 hangup;	/* HTTP_HANGUP */
};

/* http_global_init()'s proxy, or "" for none (libcurl's word for it). */
static char	*proxy_url;

int
http_global_init(const char *proxy)
{
	if (proxy_url == NULL && (proxy_url = strdup(proxy != NULL ? proxy :
	    "")) == NULL)
		return -1;
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

struct http *
http_new(void)
{
	struct http	*h;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	if ((h->curl = curl_easy_init()) == NULL) {
		free(h);
		return NULL;
	}
	return h;
}

void
http_free(struct http *h)
{
	if (h == NULL)
		return;
	curl_easy_cleanup(h->curl);
	free(h);
}

void
http_result_clear(struct http_result *r)
{
	if (r == NULL)
		return;
	free(r->body);
	memset(r, 0, sizeof(*r));
	r->retry_after_ms = -1;
}

static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	struct sink	*s = arg;
	size_t		 len = size * n, room;
	char		*p;

	if (s->cap == 0)
		return len;
	if (s->out->body == NULL) {
		if ((s->out->body = malloc(s->cap + 1)) == NULL)
			return 0;	/* aborts the transfer */
		s->out->body[0] = '\0';
	}
	room = s->cap - s->out->bodylen;
	if (len > room) {
		/* More than we keep: an oversized answer is an error. */
		return 0;
	}
	p = s->out->body + s->out->bodylen;
	memcpy(p, data, len);
	s->out->bodylen += len;
	s->out->body[s->out->bodylen] = '\0';
	return len;
}

/* Retry-After: delta-seconds or an HTTP-date; capped at an hour. */
static size_t
on_header(char *data, size_t size, size_t n, void *arg)
{
	struct sink	*s = arg;
	size_t		 len = size * n, i;
	char		 v[64];
	enum util_num	 num;
	long long	 secs = 0;
	time_t		 when;

	if (s->hangup)
		return 0;	/* not a byte of the answer is taken */
	if (len < 12 || strncasecmp(data, "Retry-After:", 12) != 0)
		return len;
	for (i = 12; i < len && isspace((unsigned char)data[i]); i++)
		;
	len -= i;
	while (len > 0 && isspace((unsigned char)data[i + len - 1]))
		len--;
	if (len == 0 || len >= sizeof(v))
		return size * n;
	memcpy(v, data + i, len);
	v[len] = '\0';
	if ((num = util_parse_num(v, 0, RETRY_AFTER_MAX_MS / 1000, &secs)) ==
	    UTIL_NUM_LARGE)
		secs = RETRY_AFTER_MAX_MS / 1000;
	else if (num != UTIL_NUM_OK) {
		if ((when = curl_getdate(v, NULL)) < 0)
			return size * n;
		secs = (long long)(when - time(NULL));
		if (secs < 0)
			secs = 0;
		if (secs > RETRY_AFTER_MAX_MS / 1000)
			secs = RETRY_AFTER_MAX_MS / 1000;
	}
	s->out->retry_after_ms = secs * 1000;
	return size * n;
}

/* HTTP_HANGUP: once the whole body is written, the transfer ends. */
static int
on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
    curl_off_t ultotal, curl_off_t ulnow)
{
	(void)arg;
	(void)dltotal;
	(void)dlnow;
	return ultotal > 0 && ulnow >= ultotal;
}

/*
 * Whether any of the request left: libcurl counts the bytes of requests
 * it wrote.  On a reused connection the connect time is 0 even though
 * the request went out, so that is no test.
 */
static int
wrote_request(CURL *c)
{
	long	n = 0;

	return curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &n) != CURLE_OK ||
	    n > 0;
}

/*
 * One transfer's own state: its header list, where its answer goes,
 * libcurl's error text, and what its addresses were judged to be.  Lives
 * until the transfer ends.
 */
struct xfer {
	CURL			*curl;
	struct curl_slist	*list;
	struct sink		 sink;
	char			 errbuf[CURL_ERROR_SIZE];
	int			 guard;		/* no HTTP_INTERNAL */
	int			 allowed;	/* addresses let through */
	int			 refused;	/* addresses refused */
	int			 refused_conn;	/* a connection refused */
	/* The first address refused, and its kind. */
	char			 where[INET6_ADDRSTRLEN];
	enum addr_kind		 kind;
};

/* Notes an internal address refused (the first one is named). */
static void
refuse(struct xfer *x, enum addr_kind k, const char *where)
{
	if (x->refused++ > 0)
		return;
	x->kind = k;
	(void)snprintf(x->where, sizeof(x->where), "%s", where);
}

/*
 * The socket for one address libcurl is about to connect to, each of a
 * host's in turn: an internal address gets none, before a packet goes
 * to it, and libcurl goes on to the next address or fails to connect.
 */
static curl_socket_t
on_open(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct xfer	*x = arg;
	enum addr_kind	 k;
	char		 text[INET6_ADDRSTRLEN];
	const void	*in;

	if (purpose == CURLSOCKTYPE_IPCXN &&
	    addr_internal(k = addr_kind_of(&a->addr, a->addrlen))) {
		in = a->family == AF_INET6 ?
		    (const void *)&((const struct sockaddr_in6 *)(const void *)
		    &a->addr)->sin6_addr :
		    (const void *)&((const struct sockaddr_in *)(const void *)
		    &a->addr)->sin_addr;
		if (inet_ntop(a->family, in, text, sizeof(text)) == NULL)
			(void)snprintf(text, sizeof(text), "?");
		refuse(x, k, text);
		return CURL_SOCKET_BAD;
	}
	x->allowed++;
	return socket(a->family, a->socktype, a->protocol);
}

/*
 * Just before the request is written, on whatever connection it is to
 * go: one this transfer opened, or one kept alive or shared (HTTP/2)
 * that another transfer opened, perhaps one allowed internal addresses.
 */
static int
on_prereq(void *arg, char *primary_ip, char *local_ip, int primary_port,
    int local_port)
{
	struct xfer	*x = arg;
	enum addr_kind	 k;

	(void)local_ip;
	(void)primary_port;
	(void)local_port;
	if (!addr_internal(k = addr_kind_host(primary_ip)))
		return CURL_PREREQFUNC_OK;
	refuse(x, k, primary_ip);
	x->refused_conn = 1;
	return CURL_PREREQFUNC_ABORT;
}

static void
xfer_end(struct xfer *x)
{
	curl_slist_free_all(x->list);
	x->list = NULL;
}

/* A result for a request that never left. */
static void
not_sent(struct http_result *out, const char *why)
{
	out->status = 0;
	out->sent = 0;
	(void)snprintf(out->error, sizeof(out->error), "%s", why);
}

/*
 * Sets x->curl up for req, its answer going to out (cleared here).
 * copy: libcurl keeps its own copy of the body (a batch's caller need
 * not keep it).  Returns 0, or -1 with out filled as not sent.
 */
static int
xfer_setup(struct xfer *x, const struct http_req *req, int copy,
    struct http_result *out)
{
	struct curl_slist	*l;
	char			 line[HB_TEXT_MAX + 256];
	CURL			*c = x->curl;
	size_t			 i;
	int			 fresh = (req->flags & HTTP_FRESH) != 0;

	memset(out, 0, sizeof(*out));
	out->retry_after_ms = -1;
	out->sent = 1;
	x->sink.out = out;
	x->sink.cap = req->body_cap;
	x->sink.hangup = (req->flags & HTTP_HANGUP) != 0;
	x->errbuf[0] = '\0';
	x->list = NULL;
	x->guard = (req->flags & HTTP_INTERNAL) == 0;
	x->allowed = x->refused = x->refused_conn = 0;
	x->where[0] = '\0';

	for (i = 0; i < req->nhdrs; i++) {
		if (snprintf(line, sizeof(line), "%s: %s", req->hdrs[i].name,
		    req->hdrs[i].value) >= (int)sizeof(line) ||
		    (l = curl_slist_append(x->list, line)) == NULL) {
			not_sent(out, "request header too long or out of memory");
			return -1;
		}
		x->list = l;
	}
	/* No "Expect: 100-continue" round trip for small bodies. */
	if ((l = curl_slist_append(x->list, "Expect:")) == NULL) {
		not_sent(out, "out of memory");
		return -1;
	}
	x->list = l;

	curl_easy_reset(c);
	if (curl_easy_setopt(c, CURLOPT_URL, req->url) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") !=
	    CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, req->timeout_ms) !=
	    CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
	    req->timeout_ms < 5000 ? req->timeout_ms : 5000L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_HTTPHEADER, x->list) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_WRITEDATA, &x->sink) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header) !=
	    CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_HEADERDATA, &x->sink) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, x->errbuf) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_USERAGENT, "hookbox") != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_PROXY, proxy_url != NULL ? proxy_url :
	    "") != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, fresh ? 1L : 0L) !=
	    CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, fresh ? 1L : 0L) !=
	    CURLE_OK) {
		not_sent(out, "cannot set up the request");
		return -1;
	}
	if (x->sink.hangup && (curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L) !=
	    CURLE_OK || curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION,
	    on_progress) != CURLE_OK)) {
		not_sent(out, "cannot set up the request");
		return -1;
	}
	if (x->guard && (curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION,
	    on_open) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, x) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_PREREQFUNCTION, on_prereq) !=
	    CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_PREREQDATA, x) != CURLE_OK)) {
		not_sent(out, "cannot set up the request");
		return -1;
	}
	if (strcmp(req->method, "POST") == 0) {
		if (curl_easy_setopt(c, CURLOPT_POST, 1L) != CURLE_OK ||
		    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)req->bodylen) != CURLE_OK ||
		    curl_easy_setopt(c, copy ? CURLOPT_COPYPOSTFIELDS :
		    CURLOPT_POSTFIELDS, req->body != NULL ? req->body : "") !=
		    CURLE_OK) {
			not_sent(out, "cannot set up the request");
			return -1;
		}
	} else if (curl_easy_setopt(c, CURLOPT_HTTPGET, 1L) != CURLE_OK) {
		not_sent(out, "cannot set up the request");
		return -1;
	}
	return 0;
}

/* Fills the result of a transfer that ended with cc.  Returns 0 for an
 * answer (any status), -1 otherwise. */
static int
xfer_result(struct xfer *x, CURLcode cc, struct http_result *out)
{
	size_t	n;

	(void)curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &out->status);
	if (cc == CURLE_OK)
		return 0;
	out->status = 0;
	out->timed_out = cc == CURLE_OPERATION_TIMEDOUT;
	/* Not sent: no connection, or not a byte of the request written. */
	out->sent = !(cc == CURLE_COULDNT_CONNECT ||
	    cc == CURLE_COULDNT_RESOLVE_HOST || cc == CURLE_COULDNT_RESOLVE_PROXY ||
	    cc == CURLE_UNSUPPORTED_PROTOCOL || cc == CURLE_URL_MALFORMAT) &&
	    wrote_request(x->curl);
	if (x->refused_conn || (x->refused > 0 && x->allowed == 0)) {
		/* Nowhere it may go: the judgement, not the network's. */
		out->refused = 1;
		out->sent = 0;
		out->timed_out = 0;
		(void)snprintf(out->error, sizeof(out->error),
		    "refused to connect to %s, %s", x->where,
		    addr_kind_name(x->kind));
		return -1;
	}
	(void)snprintf(out->error, sizeof(out->error), "%s",
	    x->errbuf[0] != '\0' ? x->errbuf : curl_easy_strerror(cc));
	/* Another address failed; this one was refused: both are said. */
	if (x->refused > 0 && (n = strlen(out->error)) < sizeof(out->error))
		(void)snprintf(out->error + n, sizeof(out->error) - n,
		    " (%s refused, %s)", x->where, addr_kind_name(x->kind));
	return -1;
}

int
http_request(struct http *h, const char *method, const char *url,
    const struct http_header *hdrs, size_t nhdrs, const char *body,
    size_t bodylen, long timeout_ms, size_t body_cap, int flags,
    struct http_result *out)
{
	struct http_req	 req;
	struct xfer	 x;
	int		 rc = -1;

	memset(&req, 0, sizeof(req));
	req.method = method;
	req.url = url;
	req.hdrs = hdrs;
	req.nhdrs = nhdrs;
	req.body = body;
	req.bodylen = bodylen;
	req.timeout_ms = timeout_ms;
	req.body_cap = body_cap;
	req.flags = flags;
	x.curl = h->curl;
	if (xfer_setup(&x, &req, 0, out) == 0)
		rc = xfer_result(&x, curl_easy_perform(h->curl), out);
	xfer_end(&x);
	return rc;
}

/* ---- batches ---- */

struct slot {
	struct xfer		 x;	/* x.curl made on first use, then kept */
	struct http_result	*out;	/* NULL when the slot is free */
};

struct http_batch {
	CURLM		*multi;
	struct slot	 slots[HTTP_BATCH_MAX];
	int		 running;	/* slots in use */
};

struct http_batch *
http_batch_new(void)
{
	struct http_batch	*b;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	if ((b->multi = curl_multi_init()) == NULL) {
		free(b);
		return NULL;
	}
	return b;
}

/* Ends slot i's transfer and frees the slot; its result is as filled. */
static void
slot_end(struct http_batch *b, int i)
{
	struct slot	*s = &b->slots[i];

	(void)curl_multi_remove_handle(b->multi, s->x.curl);
	xfer_end(&s->x);
	s->out = NULL;
	b->running--;
}

void
http_batch_free(struct http_batch *b)
{
	int	i;

	if (b == NULL)
		return;
	for (i = 0; i < HTTP_BATCH_MAX; i++) {
		if (b->slots[i].out != NULL)
			slot_end(b, i);
		if (b->slots[i].x.curl != NULL)
			curl_easy_cleanup(b->slots[i].x.curl);
	}
	/* After the easy handles: the connections go with the multi. */
	(void)curl_multi_cleanup(b->multi);
	free(b);
}

int
http_batch_add(struct http_batch *b, const struct http_req *req,
    struct http_result *out)
{
	struct slot	*s = NULL;
	int		 i;

	for (i = 0; i < HTTP_BATCH_MAX; i++)
		if (b->slots[i].out == NULL) {
			s = &b->slots[i];
			break;
		}
	if (s == NULL) {
		memset(out, 0, sizeof(*out));
		out->retry_after_ms = -1;
		not_sent(out, "too many requests in flight");
		return -1;
	}
	if (s->x.curl == NULL && (s->x.curl = curl_easy_init()) == NULL) {
		memset(out, 0, sizeof(*out));
		out->retry_after_ms = -1;
		not_sent(out, "out of memory");
		return -1;
	}
	if (xfer_setup(&s->x, req, 1, out) != 0 ||
	    curl_easy_setopt(s->x.curl, CURLOPT_PRIVATE, (void *)s) !=
	    CURLE_OK ||
	    curl_multi_add_handle(b->multi, s->x.curl) != CURLM_OK) {
		if (out->error[0] == '\0')
			not_sent(out, "cannot set up the request");
		xfer_end(&s->x);
		return -1;
	}
	s->out = out;
	b->running++;
	return i;
}

/* libcurl failed as a whole: every request in flight ends, maybe sent. */
static void
batch_fail(struct http_batch *b, const char *why, int *done, int *ndone)
{
	struct http_result	*out;
	int			 i;

	for (i = 0; i < HTTP_BATCH_MAX; i++) {
		if ((out = b->slots[i].out) == NULL)
			continue;
		out->status = 0;
		out->sent = 1;
		(void)snprintf(out->error, sizeof(out->error), "%s", why);
		slot_end(b, i);
		done[(*ndone)++] = i;
	}
}

int
http_batch_run(struct http_batch *b, long wait_ms, int *done, int *ndone)
{
	struct slot	*s;
	CURLMsg		*m;
	CURLMcode	 mc;
	char		*priv;
	int64_t		 until = util_now_ms() + (wait_ms > 0 ? wait_ms : 0);
	int64_t		 left;
	int		 still, queued, i;

	*ndone = 0;
	for (;;) {
		if ((mc = curl_multi_perform(b->multi, &still)) != CURLM_OK) {
			batch_fail(b, curl_multi_strerror(mc), done, ndone);
			return 0;
		}
		while ((m = curl_multi_info_read(b->multi, &queued)) != NULL) {
			if (m->msg != CURLMSG_DONE ||
			    curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE,
			    &priv) != CURLE_OK || priv == NULL)
				continue;
			s = (struct slot *)(void *)priv;
			i = (int)(s - b->slots);
			(void)xfer_result(&s->x, m->data.result, s->out);
			slot_end(b, i);
			done[(*ndone)++] = i;
		}
		if (*ndone > 0 || b->running == 0)
			return b->running;
		if ((left = until - util_now_ms()) <= 0)
			return b->running;
		if ((mc = curl_multi_poll(b->multi, NULL, 0,
		    left < 1000 ? (int)left : 1000, NULL)) != CURLM_OK) {
			batch_fail(b, curl_multi_strerror(mc), done, ndone);
			return 0;
		}
	}
}

int
http_url_host(const char *url, char *host, size_t len)
{
	CURLU	*u;
	char	*h = NULL;
	int	 rc = -1;

	if ((u = curl_url()) == NULL)
		return -1;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK &&
	    strlen(h) < len) {
		memcpy(host, h, strlen(h) + 1);
		rc = 0;
	}
	curl_free(h);
	curl_url_cleanup(u);
	return rc;
}

int
http_escape(struct http *h, const char *s, char *out, size_t len)
{
	char	*e;
	int	 rc = -1;

	if ((e = curl_easy_escape(h->curl, s, 0)) == NULL)
		return -1;
	if (strlen(e) < len) {
		memcpy(out, e, strlen(e) + 1);
		rc = 0;
	}
	curl_free(e);
	return rc;
}
