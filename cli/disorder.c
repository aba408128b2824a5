/*
 * cli/disorder.c: the delivery-disorder tester (cli/disorder.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>
#include <sodium.h>

#include "config/admin.h"
#include "config/config.h"
#include "config/map.h"
#include "provider/auth.h"
#include "disorder.h"
#include "base/util.h"
#include "intake/webhook.h"
#include "net/http.h"
#include "provider/mapping.h"
#include "provider/scheme.h"
#include "store/admin.h"
#include "store/metrics.h"
#include "store/tenant.h"

#define STEP_TORNADO	"disorder"	/* the step of the tester's jobs */
#define SINK_NOWHERE	"http://127.0.0.1:9/disorder"	/* discard: shut */
#define RESENDS		5	/* a 503 sent again, as a provider would */
#define RETRY_MAX_MS	5000	/* the longest Retry-After waited for */
#define LAND_TRIES	100	/* 0.1 s apart: a dropped request's commit */
/* The mapping's, the signature's three, Content-Type. */
#define HDRS_MAX	(MAPPING_HEADERS_MAX + 4)
#define REPLY_MAX	4096
#define FORGET_TRIES	100		/* 0.1 s apart: a delivery's 10 s */

/* One request, ready to send. */
struct msg {
	char			*body;
	size_t			 len;
	struct mapping_header	 hv[HDRS_MAX];	/* names and values */
	struct http_header	 h[HDRS_MAX];
	size_t			 nh;
	size_t			 nbase;		/* the mapping's; the rest
						   are the signature's */
	const char		*url;
	struct mapping_event	 ev;		/* mapped: as the responder
						   will read it */
};

/* What came back: the status, and "result" of the JSON answer. */
struct answer {
	long	status;
	char	result[32];
};

struct ctx {
	const struct disorder_opts	*o;
	struct config			*cfg;
	struct store			*st;
	struct http			*http;
	struct disorder_report		*rep;
	struct config_endpoint		 site;	/* the endpoint tried */
	struct mapping			*m;	/* its mapping (mapped) */
	char				*maptext;
	char				 tag[9];	/* random, hex */
	char				 tenant[32];
	char				 org[40];	/* Tornado */
	char				 url[HB_TEXT_MAX + 1];
	char				 org_url[HB_TEXT_MAX + 1];
	char				 secret[SCHEME_SECRET_LEN];
	/* What signs: the secret, or an ed25519 scheme's private key. */
	char				 signer[SCHEME_SECRET_LEN];
	int				 made;		/* config.db rows */
	int				 jobs;		/* Tornado jobs made */
	int64_t				 t0;		/* ms */
};

static void say(char *, size_t, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static void
say(char *buf, size_t len, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static struct disorder_row *
row(struct ctx *c, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A new row of the report, with what is expected. */
static struct disorder_row *
row(struct ctx *c, const char *name, const char *fmt, ...)
{
	struct disorder_row	*r;
	va_list			 ap;

	/* The cases are this file's: a run has at most DISORDER_ROWS_MAX. */
	if (c->rep->n == DISORDER_ROWS_MAX)
		abort();
	r = &c->rep->rows[c->rep->n++];

	r->name = name;
	va_start(ap, fmt);
	(void)vsnprintf(r->expected, sizeof(r->expected), fmt, ap);
	va_end(ap);
	return r;
}

/* The row's verdict: what was seen, and whether it is what was meant. */
static void seen(struct ctx *, struct disorder_row *, int, const char *, ...)
    __attribute__((format(printf, 4, 5)));

static void
seen(struct ctx *c, struct disorder_row *r, int ok, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	(void)vsnprintf(r->seen, sizeof(r->seen), fmt, ap);
	va_end(ap);
	r->verdict = ok ? DISORDER_PASS : DISORDER_FAIL;
	if (!ok)
		c->rep->failed++;
}

static void
skip(struct ctx *c, const char *name, const char *why)
{
	struct disorder_row	*r = row(c, name, "-");

	(void)snprintf(r->seen, sizeof(r->seen), "%s", why);
	r->verdict = DISORDER_SKIP;
	c->rep->skipped++;
}

/* ---- requests ---- */

static void
msg_free(struct msg *q)
{
	free(q->body);
	q->body = NULL;
	/* In key mode a header holds the run's secret. */
	sodium_memzero(q->hv, sizeof(q->hv));
}

/* Adds a header; there is room for every one a request gets. */
static void
header(struct msg *q, const char *name, const char *value)
{
	if (q->nh == HDRS_MAX)
		return;
	(void)snprintf(q->hv[q->nh].name, sizeof(q->hv[q->nh].name), "%s",
	    name);
	(void)snprintf(q->hv[q->nh].value, sizeof(q->hv[q->nh].value), "%s",
	    value);
	q->nh++;
}

static const char *
header_get(const struct msg *q, const char *name)
{
	size_t	i;

	for (i = 0; i < q->nh; i++)
		if (strcasecmp(q->hv[i].name, name) == 0)
			return q->hv[i].value;
	return NULL;
}

static const char *
on_header(void *arg, const char *name)
{
	return header_get(arg, name);
}

static const char *
msg_header(const void *arg, const char *name)
{
	return header_get(arg, name);
}

/* Signs q with the scheme the endpoint's mapping declares, at now. */
static int
sign_scheme(struct ctx *c, struct msg *q, int64_t now)
{
	struct scheme_header	out[SCHEME_OUT_MAX];
	struct scheme_req	r;
	size_t			nout, i;

	memset(&r, 0, sizeof(r));
	r.header = msg_header;
	r.arg = q;
	r.body = (const unsigned char *)q->body;
	r.bodylen = q->len;
	r.now_ms = now * 1000;
	if (scheme_sign(mapping_scheme(c->m), &r,
	    (const unsigned char *)c->signer, strlen(c->signer), out,
	    &nout) != 0)
		return -1;
	for (i = 0; i < nout; i++)
		header(q, out[i].name, out[i].value);
	return 0;
}

/*
 * Signs q->body as the endpoint's mode wants, now, and points q->h at
 * its headers: each time it is sent, so that no signature ages.
 */
static int
sign(struct ctx *c, struct msg *q)
{
	struct auth_secret	 s;
	const char		*id;
	char			 sig[AUTH_HEADER_MAX], idbuf[40], ts[24];
	unsigned char		 rnd[12];
	int64_t			 now = util_now();
	size_t			 i;

	q->nh = q->nbase;
	s.key = (const unsigned char *)c->secret;
	s.keylen = strlen(c->secret);
	s.expires_at = 0;
	switch (c->site.auth) {
	case CONFIG_AUTH_KEY:
		header(q, c->site.key_header, c->secret);
		break;
	case CONFIG_AUTH_HMAC:
		if (auth_sign_tsig(&s, 1, now, now,
		    (const unsigned char *)q->body, q->len, sig,
		    sizeof(sig)) != 0)
			return -1;
		header(q, c->site.key_header[0] != '\0' ? c->site.key_header :
		    WEBHOOK_HMAC_HEADER, sig);
		break;
	case CONFIG_AUTH_STANDARD:
		/* A mapping may read its event id from webhook-id. */
		if ((id = header_get(q, "webhook-id")) == NULL) {
			randombytes_buf(rnd, sizeof(rnd));
			memcpy(idbuf, "msg_", 4);
			sodium_bin2hex(idbuf + 4, sizeof(idbuf) - 4, rnd,
			    sizeof(rnd));
			header(q, "webhook-id", idbuf);
			id = idbuf;
		}
		if (auth_sign_stdwebhooks(s.key, s.keylen, id, now,
		    (const unsigned char *)q->body, q->len, sig,
		    sizeof(sig)) != 0)
			return -1;
		(void)snprintf(ts, sizeof(ts), "%lld", (long long)now);
		header(q, "webhook-timestamp", ts);
		header(q, "webhook-signature", sig);
		break;
	case CONFIG_AUTH_SCHEME:
		if (sign_scheme(c, q, now) != 0)
			return -1;
		break;
	}
	header(q, "Content-Type", c->m != NULL && mapping_reads_form(c->m) ?
	    "application/x-www-form-urlencoded" : "application/json");
	for (i = 0; i < q->nh; i++) {
		q->h[i].name = q->hv[i].name;
		q->h[i].value = q->hv[i].value;
	}
	return 0;
}

/* Whether the answer is a 2xx with that result. */
static int
is(const struct answer *a, const char *result)
{
	return a->status / 100 == 2 && strcmp(a->result, result) == 0;
}

/* The answer's status and result ("" when it has none). */
static void
answer_of(const struct http_result *r, struct answer *a)
{
	cJSON	*doc, *v;

	a->status = r->status;
	a->result[0] = '\0';
	if (r->body == NULL ||
	    (doc = cJSON_ParseWithLength(r->body, r->bodylen)) == NULL)
		return;
	v = cJSON_GetObjectItemCaseSensitive(doc, "result");
	if (cJSON_IsString(v))
		(void)snprintf(a->result, sizeof(a->result), "%s",
		    v->valuestring);
	cJSON_Delete(doc);
}

/* How long a 503 asks to be waited for, within bounds. */
static void
wait_retry(const struct http_result *r)
{
	int64_t	ms = r->retry_after_ms;

	if (ms < 100 || ms > RETRY_MAX_MS)
		ms = ms < 100 ? 100 : RETRY_MAX_MS;
	util_sleep_ms(ms);
}

/*
 * Signs and sends q (flags: HTTP_HANGUP or 0) and reads the answer.  A
 * 503 (nothing was recorded) is sent again after its Retry-After, up to
 * RESENDS times, as a provider does.
 */
static void
send1(struct ctx *c, struct msg *q, int flags, struct answer *a)
{
	struct http_result	r;
	int			i;

	for (i = 0;; i++) {
		if (sign(c, q) != 0) {
			a->status = 0;
			(void)snprintf(a->result, sizeof(a->result),
			    "cannot sign");
			return;
		}
		(void)http_request(c->http, "POST", q->url, q->h, q->nh,
		    q->body, q->len, c->o->timeout_ms, REPLY_MAX,
		    HTTP_FRESH | HTTP_INTERNAL | flags, &r);
		answer_of(&r, a);
		if (r.status != 503 || i == RESENDS || (flags & HTTP_HANGUP)) {
			if (r.status == 0 && a->result[0] == '\0')
				(void)snprintf(a->result, sizeof(a->result),
				    "%s", flags & HTTP_HANGUP ? "dropped" :
				    "no answer");
			http_result_clear(&r);
			return;
		}
		wait_retry(&r);
		http_result_clear(&r);
	}
}

/*
 * Sends n requests together; a[i] is q[i]'s answer.  One answered 503 is
 * then sent again on its own, as send1() does.
 */
static int
send_all(struct ctx *c, struct msg *const *q, int n, struct answer *a)
{
	struct http_result	r[HTTP_BATCH_MAX];
	struct http_batch	*b;
	struct http_req		 req;
	int			 done[HTTP_BATCH_MAX];
	int			 i, nd, left;

	if ((b = http_batch_new()) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		if (sign(c, q[i]) != 0) {
			(void)snprintf(r[i].error, sizeof(r[i].error),
			    "cannot sign");
			continue;
		}
		memset(&req, 0, sizeof(req));
		req.method = "POST";
		req.url = q[i]->url;
		req.hdrs = q[i]->h;
		req.nhdrs = q[i]->nh;
		req.body = q[i]->body;
		req.bodylen = q[i]->len;
		req.timeout_ms = c->o->timeout_ms;
		req.body_cap = REPLY_MAX;
		req.flags = HTTP_FRESH | HTTP_INTERNAL;
		/* One that cannot start has its result at once. */
		if (http_batch_add(b, &req, &r[i]) < 0)
			continue;
	}
	do {
		left = http_batch_run(b, c->o->timeout_ms, done, &nd);
	} while (left > 0);
	http_batch_free(b);
	for (i = 0; i < n; i++) {
		answer_of(&r[i], &a[i]);
		if (r[i].status == 503)
			send1(c, q[i], 0, &a[i]);
		else if (a[i].status == 0)
			(void)snprintf(a[i].result, sizeof(a[i].result),
			    "no answer");
		http_result_clear(&r[i]);
	}
	return 0;
}

/* ---- mapped endpoints: events made from the samples ---- */

/*
 * The sample (or the undo sample) as the event of version step k and
 * event id tag-<id>: restamped, signed, and read back as the responder
 * will read it.  Versions and occurrences rise with k.
 */
static int
mapped_msg(struct ctx *c, int undo, int k, const char *id, struct msg *q,
    char *why, size_t whylen)
{
	struct mapping_event	ev;
	const char		*body = undo ? c->o->undo : c->o->sample;
	size_t			 len = undo ? c->o->undolen : c->o->samplelen;
	size_t			 nh;
	char			 w[256];

	memset(q, 0, sizeof(*q));
	memset(&ev, 0, sizeof(ev));
	q->url = c->url;
	/* The type stays the sample's ("": not written). */
	(void)snprintf(ev.event_id, sizeof(ev.event_id), "%s-%s", c->tenant,
	    id);
	(void)snprintf(ev.subject, sizeof(ev.subject), "%s", c->tenant);
	ev.occurred_ms = c->t0 + (int64_t)k * 1000;
	ev.version = k;
	if ((q->body = mapping_restamp(c->m, body, len, &ev, q->hv, &nh, w,
	    sizeof(w))) == NULL) {
		say(why, whylen, "%s sample: %s", undo ? "the undo" : "the", w);
		return -1;
	}
	q->len = strlen(q->body);
	q->nh = q->nbase = nh;
	/* Read back: what the responder reads must be what was written. */
	if (mapping_eval(c->m, q->body, q->len, on_header, q, &q->ev, w,
	    sizeof(w)) != MAPPING_OK) {
		say(why, whylen, "%s sample, restamped: %s",
		    undo ? "the undo" : "the", w);
		goto bad;
	}
	if (strcmp(q->ev.subject, ev.subject) != 0 ||
	    (mapping_reads_event_id(c->m) &&
	    strcmp(q->ev.event_id, ev.event_id) != 0)) {
		say(why, whylen, "the mapping reads the subject and the event"
		    " id from one place: they cannot be told apart");
		goto bad;
	}
	if (q->ev.effect != (undo ? MAPPING_UNDO : MAPPING_DO)) {
		say(why, whylen, "%s sample: type %s does not %s in the"
		    " mapping", undo ? "the undo" : "the", q->ev.type,
		    undo ? "undo a step" : "take effect for a step");
		goto bad;
	}
	return 0;
bad:
	msg_free(q);
	return -1;
}

/*
 * The run's subjects' namespace: the mapping's, or the name of the run's
 * endpoint, which is its tenant's (disorder_run()).
 */
static const char *
space_of(const struct ctx *c)
{
	const char	*s = mapping_namespace(c->m);

	return s != NULL ? s : c->tenant;
}

/* The action id an event makes ("" when it does not fit). */
static void
action_of(const struct ctx *c, const struct mapping_event *ev, char *buf,
    size_t len)
{
	if (snprintf(buf, len, "%s:%s/%s:%lld:%s", c->tenant, space_of(c),
	    ev->subject, (long long)ev->version, ev->step) >= (int)len)
		buf[0] = '\0';
}

/* Whether the action exists (-1: state.db could not say). */
static int
has_action(struct ctx *c, const char *action)
{
	enum store_state	s;
	int			found;

	if (store_action_state(c->st, action, &s, &found) != STORE_OK)
		return -1;
	return found;
}

static int64_t
actions(struct ctx *c)
{
	struct store_tally	t;

	if (store_tenant_tally(c->st, c->tenant, &t) != STORE_OK)
		return -1;
	return t.actions;
}

/* Whether every answer is a 2xx, with one "accepted" and the rest
   "duplicate"; fills the counts. */
static int
one_accepted(const struct answer *a, int n, int *acc, int *dup, int *other)
{
	int	i;

	*acc = *dup = *other = 0;
	for (i = 0; i < n; i++) {
		if (is(&a[i], "accepted"))
			(*acc)++;
		else if (is(&a[i], "duplicate"))
			(*dup)++;
		else
			(*other)++;
	}
	return *acc == 1 && *dup == n - 1;
}

/* "200 accepted" */
static const char *
said(const struct answer *a, char *buf, size_t len)
{
	(void)snprintf(buf, len, "%ld %s", a->status,
	    a->result[0] != '\0' ? a->result : "(no result)");
	return buf;
}

static void
twice(struct ctx *c, struct msg *q, const char *action)
{
	struct disorder_row	*r;
	struct answer		 a1, a2;
	char			 s1[64], s2[64];
	int64_t			 n = actions(c);
	int			 has;

	r = row(c, "same event twice", "accepted, duplicate; +1 action");
	send1(c, q, 0, &a1);
	send1(c, q, 0, &a2);
	has = has_action(c, action);
	n = actions(c) - n;
	seen(c, r, is(&a1, "accepted") && is(&a2, "duplicate") && has == 1 &&
	    n == 1, "%s, %s; %+lld%s", said(&a1, s1, sizeof(s1)),
	    said(&a2, s2, sizeof(s2)), (long long)n, has == 1 ? "" :
	    ", not the one expected");
}

static void
at_once(struct ctx *c, struct msg *const *q, int n, const char *action,
    const char *name)
{
	struct disorder_row	*r;
	struct answer		 a[HTTP_BATCH_MAX];
	int			 acc, dup, other, ok, has;
	int64_t			 got = actions(c);

	r = row(c, name, "1 accepted, %d duplicate; +1 action", n - 1);
	if (send_all(c, q, n, a) != 0) {
		seen(c, r, 0, "out of memory");
		return;
	}
	ok = one_accepted(a, n, &acc, &dup, &other);
	has = has_action(c, action);
	got = actions(c) - got;
	seen(c, r, ok && has == 1 && got == 1,
	    "%d accepted, %d duplicate, %d other; %+lld%s", acc, dup,
	    other, (long long)got, has == 1 ? "" : ", not the one expected");
}

/*
 * Sends q and drops the connection once it is written; waits (at most
 * LAND_TRIES tenths of a second) for its action to be committed, as the
 * provider's work would have been; then sends it again: a duplicate.  A
 * proxy that ends a request whose client left (nginx without
 * fastcgi_ignore_client_abort) may stop it before it commits: then the
 * resend is the first, and accepted.
 */
static void
timeout_after(struct ctx *c, struct msg *q, const char *action)
{
	struct disorder_row	*r;
	struct timespec		 tenth = { 0, 100 * 1000 * 1000 };
	struct answer		 a1, a2;
	char			 s2[64];
	int64_t			 got = actions(c);
	int			 has, i;

	r = row(c, "timeout after success", "dropped; resent: duplicate"
	    " (accepted if it never landed); +1 action");
	send1(c, q, HTTP_HANGUP, &a1);
	for (i = 0; (has = has_action(c, action)) == 0 && i < LAND_TRIES; i++)
		(void)nanosleep(&tenth, NULL);
	send1(c, q, 0, &a2);
	got = actions(c) - got;
	seen(c, r, (has == 1 ? is(&a2, "duplicate") : is(&a2, "accepted")) &&
	    has_action(c, action) == 1 && got == 1, "%s, %s; resent: %s;"
	    " %+lld", a1.result, has == 1 ? "landed" : "never landed",
	    said(&a2, s2, sizeof(s2)), (long long)got);
}

/* The subject's recorded version and whether it is undone, as text. */
static void
subject_text(struct ctx *c, char *buf, size_t len, int64_t *version,
    int *undo)
{
	struct store_subject	s;
	int			found;
	char			key[HB_ID_MAX + 1];

	*version = -1;
	*undo = 0;
	(void)snprintf(key, sizeof(key), "%s/%s", space_of(c), c->tenant);
	if (store_subject_get(c->st, c->tenant, key, &s, &found) !=
	    STORE_OK || !found) {
		(void)snprintf(buf, len, "no state");
		return;
	}
	*version = s.version;
	*undo = s.undo;
	(void)snprintf(buf, len, "%s %s v%lld", s.undo ? "undone by" : "at",
	    s.step, (long long)s.version);
}

/* newer first (accepted), then older: stale, no action, state kept. */
static void
older_after(struct ctx *c, const char *name, struct msg *newer,
    struct msg *older)
{
	struct disorder_row	*r;
	struct answer		 a1, a2;
	char			 s1[64], s2[64], st[HB_ID_MAX + 48];
	char			 act[HB_ID_MAX * 2 + 64];
	int64_t			 got = actions(c), v;
	int			 has, undo;

	r = row(c, name, "%s accepted, older stale; +1 action; stays %s",
	    newer->ev.effect == MAPPING_UNDO ? "undo" : "newer",
	    newer->ev.effect == MAPPING_UNDO ? "undone" : "at the newer");
	send1(c, newer, 0, &a1);
	send1(c, older, 0, &a2);
	action_of(c, &older->ev, act, sizeof(act));
	has = has_action(c, act);
	got = actions(c) - got;
	subject_text(c, st, sizeof(st), &v, &undo);
	seen(c, r, is(&a1, "accepted") && is(&a2, "stale") && has == 0 &&
	    got == 1 && v == newer->ev.version &&
	    undo == (newer->ev.effect == MAPPING_UNDO), "%s, %s; %+lld%s;"
	    " %s", said(&a1, s1, sizeof(s1)), said(&a2, s2,
	    sizeof(s2)), (long long)got, has == 0 ? "" :
	    ", one for the older event", st);
}

/* The tenant's rows against what the cases made. */
static void
event_log(struct ctx *c, int64_t want_actions, int64_t want_receipts)
{
	struct disorder_row	*r;
	struct store_tally	 t;

	if (want_receipts >= 0)
		r = row(c, "the event log", "%lld actions, %lld receipts, 0"
		    " conflicts", (long long)want_actions,
		    (long long)want_receipts);
	else
		r = row(c, "the event log", "%lld actions, 0 conflicts",
		    (long long)want_actions);
	if (store_tenant_tally(c->st, c->tenant, &t) != STORE_OK) {
		seen(c, r, 0, "state.db: %s", store_errmsg(c->st));
		return;
	}
	seen(c, r, t.actions == want_actions && t.conflicts == 0 &&
	    (want_receipts < 0 || t.receipts == want_receipts),
	    "%lld actions, %lld receipts, %lld conflicts",
	    (long long)t.actions, (long long)t.receipts,
	    (long long)t.conflicts);
}

/* The same event under another event id: a duplicate. */
static void
new_id(struct ctx *c, struct msg *q)
{
	struct disorder_row	*r;
	struct answer		 a;
	char			 s[64];
	int64_t			 n = actions(c);

	r = row(c, "same event, new id", "duplicate; +0 actions");
	send1(c, q, 0, &a);
	n = actions(c) - n;
	seen(c, r, is(&a, "duplicate") && n == 0, "%s; %+lld",
	    said(&a, s, sizeof(s)), (long long)n);
}

/* Whether the operator asked the run to stop: the cases left are not run. */
static int
stopped(struct ctx *c)
{
	if (c->o->stop != NULL && c->o->stop(c->o->stop_arg))
		c->rep->interrupted = 1;
	return c->rep->interrupted;
}

static int
run_mapped(struct ctx *c, char *why, size_t whylen)
{
	/* Each event: its version step, its event id, from the undo sample. */
	static const struct {
		int		 k;
		const char	*id;
		int		 undo;
	} evs[] = {
		{ 1, "a", 0 }, { 1, "b", 0 }, { 2, "c", 0 }, { 3, "e", 0 },
		{ 4, "d", 0 }, { 5, "f", 0 }, { 6, "h", 0 }, { 7, "g", 1 },
	};
	enum { E1, E1B, E2, E3, E4, E5, E6, U7, NEV };
	struct msg	 q[NEV];
	struct msg	*all[HTTP_BATCH_MAX] = { NULL };
	char		 act[HB_ID_MAX * 2 + 64];
	int		 i, rc = -1, undo = c->o->undo != NULL;

	memset(q, 0, sizeof(q));
	for (i = 0; i < (undo ? NEV : E6); i++)
		if (mapped_msg(c, evs[i].undo, evs[i].k, evs[i].id, &q[i], why,
		    whylen) != 0)
			goto out;
	rc = 0;
	action_of(c, &q[E1].ev, act, sizeof(act));
	twice(c, &q[E1], act);
	if (stopped(c))
		goto out;
	/* Without ids, the same event is the same id. */
	if (mapping_reads_event_id(c->m))
		new_id(c, &q[E1B]);
	else
		skip(c, "same event, new id", "the mapping reads no event id:"
		    " an event is its type, subject and version");
	if (stopped(c))
		goto out;
	for (i = 0; i < c->o->at_once; i++)
		all[i] = &q[E2];
	action_of(c, &q[E2].ev, act, sizeof(act));
	at_once(c, all, c->o->at_once, act, "N at once");
	if (stopped(c))
		goto out;
	older_after(c, "older after newer", &q[E4], &q[E3]);
	if (stopped(c))
		goto out;
	action_of(c, &q[E5].ev, act, sizeof(act));
	timeout_after(c, &q[E5], act);
	if (stopped(c))
		goto out;
	if (undo)
		older_after(c, "older than an undo", &q[U7], &q[E6]);
	else
		skip(c, "older than an undo", "no undo sample given");
	/* Event ids a to f, and g, h with an undo sample; b is a's when
	   the mapping reads none. */
	event_log(c, undo ? 5 : 4, (undo ? 8 : 6) -
	    !mapping_reads_event_id(c->m));
out:
	for (i = 0; i < NEV; i++)
		msg_free(&q[i]);
	return rc;
}

/* ---- Tornado endpoints ---- */

/* The tester's job k: made in config.db; its id into job. */
static int
tornado_job(struct ctx *c, int k, char *job, size_t len, char *action,
    size_t alen, char *why, size_t whylen)
{
	struct config_job	j;
	const char		*w = NULL;
	enum config_status	 rc;

	memset(&j, 0, sizeof(j));
	(void)snprintf(j.tenant, sizeof(j.tenant), "%s", c->tenant);
	(void)snprintf(j.job_id, sizeof(j.job_id), "%s-%d", c->tenant, k);
	(void)snprintf(j.attempt, sizeof(j.attempt), "att-%s-%d", c->tenant, k);
	(void)snprintf(j.step, sizeof(j.step), "%s", STEP_TORNADO);
	(void)snprintf(j.destination, sizeof(j.destination), "%s",
	    c->tenant);
	if ((rc = config_job_add(c->cfg, &j, &w)) != CONFIG_OK) {
		say(why, whylen, "config.db: job %s: %s%s%s", j.job_id,
		    config_strerror(rc), w != NULL ? ": " : "",
		    w != NULL ? w : "");
		return -1;
	}
	c->jobs = k;
	(void)snprintf(job, len, "%s", j.job_id);
	(void)snprintf(action, alen, "%s:%s:%s", c->tenant, j.attempt,
	    j.step);
	return 0;
}

/* A completed job, by its callback (org 0) or its organization event
   (org 1, delivery n). */
static int
tornado_msg(struct ctx *c, const char *job, int org, int n, struct msg *q)
{
	char		 ts[32];
	struct tm	 tm;
	time_t		 t = (time_t)util_now();
	int		 len;

	memset(q, 0, sizeof(*q));
	q->url = org ? c->org_url : c->url;
	if (gmtime_r(&t, &tm) == NULL)
		return -1;
	(void)strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (org)
		len = asprintf(&q->body, "{\"delivery_id\":\"dlv-%s-%d\","
		    "\"type\":\"job_completed\",\"created_at\":\"%s\","
		    "\"data\":{\"job_id\":\"%s\",\"status\":\"completed\","
		    "\"key\":\"out/%s.mp4\"}}", job, n, ts, job, job);
	else
		len = asprintf(&q->body, "{\"type\":\"job_completed\","
		    "\"job_id\":\"%s\",\"status\":\"completed\","
		    "\"key\":\"out/%s.mp4\",\"url\":\"https://cdn.example/"
		    "out/%s.mp4\"}", job, job, job);
	if (len < 0) {
		q->body = NULL;
		return -1;
	}
	q->len = (size_t)len;
	if (sign(c, q) != 0) {
		msg_free(q);
		return -1;
	}
	return 0;
}

static int
run_tornado(struct ctx *c, char *why, size_t whylen)
{
	struct msg	 q[HTTP_BATCH_MAX], *all[HTTP_BATCH_MAX] = { NULL };
	struct {
		char	id[HB_ID_MAX + 1];
		char	action[3 * HB_ID_MAX + 8];
	}		 j[4];
	enum config_status cs;
	int		 i, n = c->o->at_once;

	memset(q, 0, sizeof(q));
	/* A job per case, made in one configuration transaction. */
	if ((cs = config_begin(c->cfg)) != CONFIG_OK) {
		say(why, whylen, "config.db: %s", config_strerror(cs));
		return -1;
	}
	for (i = 0; i < 4; i++)
		if (tornado_job(c, i + 1, j[i].id, sizeof(j[i].id),
		    j[i].action, sizeof(j[i].action), why, whylen) != 0) {
			config_rollback(c->cfg);
			c->jobs = 0;
			return -1;
		}
	if (config_commit(c->cfg) != CONFIG_OK) {
		/* A COMMIT refused (busy) leaves the transaction open. */
		config_rollback(c->cfg);
		c->jobs = 0;
		say(why, whylen, "config.db: the jobs were not committed");
		return -1;
	}

	/* The same callback twice. */
	if (tornado_msg(c, j[0].id, 0, 0, &q[0]) != 0)
		goto nomem;
	twice(c, &q[0], j[0].action);
	msg_free(&q[0]);
	if (stopped(c))
		return 0;

	/* One callback N times at once. */
	if (tornado_msg(c, j[1].id, 0, 0, &q[0]) != 0)
		goto nomem;
	for (i = 0; i < n; i++)
		all[i] = &q[0];
	at_once(c, all, n, j[1].action, "N at once");
	msg_free(&q[0]);
	if (stopped(c))
		return 0;

	skip(c, "older after newer", "Tornado's callbacks carry no version");

	/* Both routes raced: half callbacks, half organization events. */
	for (i = 0; i < n; i++) {
		if (tornado_msg(c, j[2].id, i % 2, i, &q[i]) != 0)
			goto nomem;
		all[i] = &q[i];
	}
	at_once(c, all, n, j[2].action, "routes raced");
	for (i = 0; i < n; i++)
		msg_free(&q[i]);
	if (stopped(c))
		return 0;

	/* Dropped, then sent again. */
	if (tornado_msg(c, j[3].id, 0, 0, &q[0]) != 0)
		goto nomem;
	timeout_after(c, &q[0], j[3].action);
	msg_free(&q[0]);
	event_log(c, 4, -1);
	return 0;
nomem:
	for (i = 0; i < n; i++)
		msg_free(&q[i]);
	say(why, whylen, "out of memory, or cannot sign");
	return -1;
}

/* ---- set-up and clean-up ---- */

static int
cfg_fail(char *why, size_t whylen, const char *what, enum config_status rc,
    const char *w)
{
	say(why, whylen, "config.db: %s: %s%s%s", what, config_strerror(rc),
	    w != NULL && *w != '\0' ? ": " : "", w != NULL ? w : "");
	return -1;
}

/*
 * Makes the tenant, its destination and its endpoints, in one
 * transaction.  The destination is named as the tenant (a mapping's is
 * renamed so), so that no series of the site's destinations counts the
 * run's actions.
 */
static int
setup(struct ctx *c, char *why, size_t whylen)
{
	struct config_tenant		t;
	struct config_destination	d;
	struct config_endpoint		ep;
	const char			*w = NULL;
	char				 wb[256];
	enum config_status		 rc;

	memset(&t, 0, sizeof(t));
	memset(&d, 0, sizeof(d));
	(void)snprintf(t.id, sizeof(t.id), "%s", c->tenant);
	t.active = 1;
	(void)snprintf(d.tenant, sizeof(d.tenant), "%s", c->tenant);
	(void)snprintf(d.name, sizeof(d.name), "%s", c->tenant);
	(void)snprintf(d.url, sizeof(d.url), "%s", c->o->sink != NULL ?
	    c->o->sink : SINK_NOWHERE);
	d.idempotent = 1;
	d.timeout_ms = 5000;
	d.max_attempts = 10;
	d.retry_for_s = HB_RETRY_FOR_S_DEFAULT;
	d.circuit_failures = HB_CIRCUIT_FAILURES_DEFAULT;
	d.cooldown_s = HB_COOLDOWN_S_DEFAULT;
	/* Its own discard port is loopback; a sink given is judged. */
	d.allow_internal = c->o->sink == NULL;
	/* The site's format, under the run's names: the job's route (or
	   the mapped endpoint) is the tenant's name. */
	ep = c->site;
	(void)snprintf(ep.tenant, sizeof(ep.tenant), "%s", c->tenant);
	(void)snprintf(ep.name, sizeof(ep.name), "%s", c->tenant);
	if (ep.kind != CONFIG_KIND_MAPPED)
		ep.kind = CONFIG_KIND_JOB;
	ep.mapping = NULL;

	if ((rc = config_begin(c->cfg)) != CONFIG_OK)
		return cfg_fail(why, whylen, "begin", rc, NULL);
	if ((rc = config_tenant_add(c->cfg, &t, NULL, 0, &w)) != CONFIG_OK) {
		cfg_fail(why, whylen, "tenant", rc, w);
		goto fail;
	}
	if ((rc = config_destination_add(c->cfg, &d, NULL, 0, &w)) !=
	    CONFIG_OK) {
		cfg_fail(why, whylen, "destination", rc, w);
		goto fail;
	}
	wb[0] = '\0';
	if ((rc = config_endpoint_add_mapped(c->cfg, &ep, c->maptext,
	    c->maptext != NULL ? strlen(c->maptext) : 0, wb,
	    sizeof(wb))) != CONFIG_OK ||
	    (rc = config_secret_add(c->cfg, ep.name,
	    (const unsigned char *)c->secret, strlen(c->secret), 0, &w)) !=
	    CONFIG_OK) {
		cfg_fail(why, whylen, "endpoint", rc, wb[0] != '\0' ? wb : w);
		goto fail;
	}
	if (c->site.kind != CONFIG_KIND_MAPPED) {
		/* Tornado: both routes, the job's and the organization's. */
		ep.kind = CONFIG_KIND_ORG;
		(void)snprintf(ep.name, sizeof(ep.name), "%s", c->org);
		if ((rc = config_endpoint_add(c->cfg, &ep, &w)) != CONFIG_OK ||
		    (rc = config_secret_add(c->cfg, ep.name,
		    (const unsigned char *)c->secret, strlen(c->secret), 0,
		    &w)) != CONFIG_OK) {
			cfg_fail(why, whylen, "endpoint", rc, w);
			goto fail;
		}
	}
	if ((rc = config_commit(c->cfg)) != CONFIG_OK) {
		cfg_fail(why, whylen, "commit", rc, NULL);
		goto fail;
	}
	c->made = 1;
	return 0;
fail:
	/* A COMMIT refused (busy) leaves the transaction open. */
	config_rollback(c->cfg);
	return -1;
}

/* Removes one config.db row the run made; gone already is as well. */
static enum config_status
unmake(struct config *cfg, enum config_table t, const char *key,
    const char *key2, enum config_status was)
{
	enum config_status	rc;

	if (was != CONFIG_OK)
		return was;
	rc = config_remove(cfg, t, key, key2);
	return rc == CONFIG_NOTFOUND ? CONFIG_OK : rc;
}

/*
 * Removes what the run made: its endpoints first, so that nothing more
 * can arrive; then its rows in state.db, once none of its actions is
 * being delivered (FORGET_TRIES tenths of a second at most); then its
 * jobs, destination and tenant.  While rows stay, so does their
 * configuration, and the report says so.
 */
static void
cleanup(struct ctx *c, char *why, size_t whylen)
{
	enum store_status	 rc = STORE_OK;
	enum config_status	 crc = CONFIG_OK;
	char			 job[HB_ID_MAX + 1];
	struct timespec		 pause = { 0, 100 * 1000 * 1000 };
	char			 labels[2 * HB_ID_MAX + 8];
	int64_t			 n;
	int			 i, leased = 1;

	if (c->made) {
		if (c->site.kind != CONFIG_KIND_MAPPED)
			crc = unmake(c->cfg, CONFIG_ENDPOINTS, c->org, NULL,
			    crc);
		crc = unmake(c->cfg, CONFIG_ENDPOINTS, c->tenant, NULL, crc);
	}
	for (i = 0; i < FORGET_TRIES; i++) {
		rc = store_tenant_forget(c->st, c->tenant, &leased,
		    &c->rep->removed);
		if (rc == STORE_OK && !leased)
			break;
		(void)nanosleep(&pause, NULL);
	}
	if (rc != STORE_OK || leased) {
		c->rep->left = 1;
		say(why, whylen, "state.db: the rows of tenant %s stay (%s),"
		    " and so does its configuration", c->tenant,
		    rc != STORE_OK ? store_strerror(rc) :
		    "one of its actions is still being delivered");
		return;
	}
	/*
	 * Its counters too (its endpoints' and its destination's, all
	 * named from the tenant), so that its requests and retries feed
	 * no alert once it is gone.
	 */
	(void)snprintf(labels, sizeof(labels), "[\"%s\",\"%s\"]", c->tenant,
	    c->org);
	if ((rc = store_metrics_drop(c->st, labels, &n)) != STORE_OK) {
		c->rep->left = 1;
		say(why, whylen, "state.db: the counters of tenant %s stay"
		    " (%s)", c->tenant, store_strerror(rc));
	} else
		c->rep->removed += n;
	if (!c->made)
		return;
	for (i = c->jobs; i >= 1; i--) {
		(void)snprintf(job, sizeof(job), "%s-%d", c->tenant, i);
		crc = unmake(c->cfg, CONFIG_JOBS, c->tenant, job, crc);
	}
	crc = unmake(c->cfg, CONFIG_DESTINATIONS, c->tenant, c->tenant, crc);
	crc = unmake(c->cfg, CONFIG_TENANTS, c->tenant, NULL, crc);
	if (crc != CONFIG_OK) {
		c->rep->left = 1;
		say(why, whylen, "config.db: tenant %s stays: %s", c->tenant,
		    config_strerror(crc));
	}
}

/*
 * The site's mapping for the run: the same, but for its destination,
 * which is the run's own.
 */
static int
own_mapping(struct ctx *c, char *why, size_t whylen)
{
	cJSON	*doc, *d;
	char	*t = NULL;

	if ((doc = cJSON_Parse(c->maptext)) != NULL &&
	    cJSON_IsString(d = cJSON_GetObjectItemCaseSensitive(doc,
	    "destination")) && cJSON_SetValuestring(d, c->tenant) != NULL)
		t = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	if (t == NULL) {
		say(why, whylen, "out of memory");
		return -1;
	}
	free(c->maptext);
	c->maptext = t;
	return 0;
}

/* Reads the site's endpoint: its format is what is tried. */
static int
site(struct ctx *c, char *why, size_t whylen)
{
	enum config_status	rc;
	char			w[256];

	if ((rc = config_endpoint_get(c->cfg, c->o->endpoint, &c->site)) !=
	    CONFIG_OK) {
		say(why, whylen, "endpoint %s: %s", c->o->endpoint,
		    config_strerror(rc));
		return -1;
	}
	if (c->site.kind != CONFIG_KIND_MAPPED) {
		if (c->o->sample != NULL || c->o->undo != NULL) {
			say(why, whylen, "endpoint %s: a Tornado endpoint"
			    " takes no sample", c->o->endpoint);
			return -1;
		}
		return 0;
	}
	if (c->o->sample == NULL) {
		say(why, whylen, "endpoint %s: a mapped endpoint needs a"
		    " sample event", c->o->endpoint);
		return -1;
	}
	if ((rc = config_endpoint_mapping(c->cfg, c->o->endpoint,
	    &c->maptext)) != CONFIG_OK) {
		say(why, whylen, "endpoint %s: its mapping: %s",
		    c->o->endpoint, config_strerror(rc));
		return -1;
	}
	if ((c->m = mapping_parse(c->maptext, strlen(c->maptext), w,
	    sizeof(w))) == NULL) {
		say(why, whylen, "endpoint %s: its mapping: %s",
		    c->o->endpoint, w);
		return -1;
	}
	return 0;
}

int
disorder_run(struct config *cfg, struct store *st,
    const struct disorder_opts *o, struct disorder_report *rep, char *why,
    size_t whylen)
{
	struct ctx	 c;
	unsigned char	 rnd[24];
	char		 w[512];
	size_t		 n;
	int		 rc = -1;

	memset(rep, 0, sizeof(*rep));
	memset(&c, 0, sizeof(c));
	why[0] = '\0';
	c.o = o;
	c.cfg = cfg;
	c.st = st;
	c.rep = rep;
	if (o->at_once < 2 || o->at_once > HTTP_BATCH_MAX) {
		say(why, whylen, "at once: 2 to %d", HTTP_BATCH_MAX);
		return -1;
	}
	if (site(&c, why, whylen) != 0)
		goto out;
	randombytes_buf(rnd, 4);
	sodium_bin2hex(c.tag, sizeof(c.tag), rnd, 4);
	(void)snprintf(c.tenant, sizeof(c.tenant), "disorder-%s", c.tag);
	(void)snprintf(c.org, sizeof(c.org), "disorder-%s-org", c.tag);
	(void)snprintf(rep->tenant, sizeof(rep->tenant), "%s", c.tenant);
	if (snprintf(c.url, sizeof(c.url), "%s/hooks/%s", o->base,
	    c.tenant) >= (int)sizeof(c.url) || snprintf(c.org_url,
	    sizeof(c.org_url), "%s/hooks/%s", o->base, c.org) >=
	    (int)sizeof(c.org_url)) {
		say(why, whylen, "the base URL is too long");
		goto out;
	}
	/* A secret of the run's own; Standard Webhooks' in its form. */
	randombytes_buf(rnd, sizeof(rnd));
	if (c.site.auth == CONFIG_AUTH_SCHEME) {
		if (c.m == NULL || mapping_scheme(c.m) == NULL ||
		    scheme_make_secret(mapping_scheme(c.m), c.secret,
		    sizeof(c.secret), c.signer, sizeof(c.signer)) != 0) {
			say(why, whylen, "the endpoint's mapping declares no"
			    " signature");
			goto out;
		}
	} else if (c.site.auth == CONFIG_AUTH_STANDARD) {
		memcpy(c.secret, "whsec_", 6);
		sodium_bin2base64(c.secret + 6, sizeof(c.secret) - 6, rnd,
		    sizeof(rnd), sodium_base64_VARIANT_ORIGINAL);
	} else
		sodium_bin2hex(c.secret, sizeof(c.secret), rnd, sizeof(rnd));
	/* Whole seconds, an hour ago: inside any provider's window. */
	c.t0 = (util_now() - 3600) * 1000;
	if ((c.http = http_new()) == NULL) {
		say(why, whylen, "out of memory");
		goto out;
	}
	if ((c.m != NULL && own_mapping(&c, why, whylen) != 0) ||
	    setup(&c, why, whylen) != 0)
		goto out;
	rc = c.m != NULL ? run_mapped(&c, why, whylen) :
	    run_tornado(&c, why, whylen);
	w[0] = '\0';
	cleanup(&c, w, sizeof(w));
	/* What stays is said, whether the cases ran or not. */
	if (rep->left && rc == 0)
		say(why, whylen, "%s", w);
	else if (rep->left) {
		n = strlen(why);
		say(why + n, whylen - n, "; %s", w);
	}
out:
	http_free(c.http);
	mapping_free(c.m);
	free(c.maptext);
	sodium_memzero(c.secret, sizeof(c.secret));
	sodium_memzero(c.signer, sizeof(c.signer));
	return rc;
}
