/*
 * delivery/poller.c: the poller (delivery/poller.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/util.h"
#include "delivery/poller.h"
#include "net/http.h"
#include "provider/tornado.h"
#include "store/admin.h"
#include "store/metrics.h"

/* An unfinished job, and when it was last asked about. */
struct candidate {
	char	tenant[HB_ID_MAX + 1];
	char	job_id[HB_ID_MAX + 1];
	int64_t	polled_at;
};

struct run {
	struct candidate	*c;	/* collected first, asked after */
	size_t			 n, cap;
	struct store		*st;
	struct config		*cfg;
	struct http		*http;
	int			 limit;
	long			 timeout_ms;
	void			(*report)(void *, const struct poll_report *);
	void			*arg;
	struct poll_stats	*stats;
	enum store_status	 status;
};

static void
tell(struct run *r, const struct config_job *j, const struct accept_res *res,
    const char *error)
{
	struct poll_report	rep;

	if (r->report == NULL)
		return;
	rep.tenant = j->tenant;
	rep.job_id = j->job_id;
	rep.res = res;
	rep.error = error;
	r->report(r->arg, &rep);
}

/* Asks about one job and accepts the answer. */
static void
ask(struct run *r, const struct config_job *j, const char *base)
{
	struct config_secrets	 key;
	struct http_header	 h[2];
	struct http_result	 res;
	struct accept_req	 req;
	struct accept_res	 ares;
	struct obs		 o;
	char			 id[3 * HB_ID_MAX + 1], url[HB_TEXT_MAX + 512];
	char			*k = NULL;
	size_t			 n = 0;
	int			 len;

	memset(&res, 0, sizeof(res));
	memset(&key, 0, sizeof(key));
	if (http_escape(r->http, j->job_id, id, sizeof(id)) != 0 ||
	    (len = snprintf(url, sizeof(url), "%s/jobs/%s", base, id)) < 0 ||
	    (size_t)len >= sizeof(url)) {
		r->stats->failed++;
		tell(r, j, NULL, "status URL too long");
		return;
	}
	if (config_tenant_api_key(r->cfg, j->tenant, &key) == CONFIG_OK &&
	    key.n > 0) {
		/* The key as a C string, wiped with the rest. */
		if ((k = calloc(1, key.s[0].keylen + 1)) == NULL) {
			config_secrets_clear(&key);
			r->stats->failed++;
			tell(r, j, NULL, "out of memory");
			return;
		}
		memcpy(k, key.s[0].key, key.s[0].keylen);
		h[n].name = "x-api-key";
		h[n++].value = k;
	}
	h[n].name = "Accept";
	h[n++].value = "application/json";
	r->stats->asked++;
	/*
	 * The provider's job API, the tenant's base URL, judged as a
	 * destination that allows no internal address is: the tenant's API
	 * key goes with the request, and a base written behind the tool's
	 * back (which refuses one) must not send it to a cloud metadata
	 * service.
	 */
	(void)http_request(r->http, "GET", url, h, n, NULL, 0, r->timeout_ms,
	    HB_BODY_MAX_DEFAULT, 0, &res);
	if (k != NULL) {
		sodium_memzero(k, key.s[0].keylen);
		free(k);
	}
	config_secrets_clear(&key);

	if (res.status != 200 || res.body == NULL) {
		r->stats->failed++;
		tell(r, j, NULL, res.status > 0 ? "status API answered an"
		    " error" : res.error[0] != '\0' ? res.error :
		    "no answer");
		goto out;
	}
	if (tornado_parse_poll(res.body, res.bodylen, &o, ares.why,
	    sizeof(ares.why)) != TORNADO_OK) {
		r->stats->failed++;
		tell(r, j, NULL, "status answer malformed");
		goto out;
	}
	if (strcmp(o.job_id, j->job_id) != 0) {
		r->stats->failed++;
		tell(r, j, NULL, "status answer is about another job");
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.tenant = j->tenant;
	req.obs = &o;
	req.body = res.body;
	req.bodylen = res.bodylen;
	req.now_ms = util_now_ms();
	if (accept_observation(r->st, r->cfg, &req, &ares) == HB_UNAVAILABLE)
		r->stats->unavailable++;
	else
		r->stats->answered++;
	tell(r, j, &ares, NULL);
out:
	http_result_clear(&res);
}

/*
 * Collects every unfinished job with the time it was last asked about;
 * config.db is not held open for reading while the network is slow
 * (admin writes would wait on it).
 */
static int
each(void *arg, const struct config_job *j, const char *base)
{
	struct run		*r = arg;
	struct candidate	*c;
	struct store_job	 sj;
	size_t			 cap;

	(void)base;
	if ((r->status = store_job_get(r->st, j->tenant, j->job_id, &sj)) !=
	    STORE_OK)
		return 1;
	if (sj.terminal != OBS_ST_NONE)
		return 0;	/* finished: nothing to ask */
	if (r->n == r->cap) {
		cap = r->cap == 0 ? 64 : r->cap * 2;
		if ((c = reallocarray(r->c, cap, sizeof(*c))) == NULL) {
			r->status = STORE_NOMEM;
			return 1;
		}
		r->c = c;
		r->cap = cap;
	}
	c = &r->c[r->n];
	memcpy(c->tenant, j->tenant, sizeof(c->tenant));
	memcpy(c->job_id, j->job_id, sizeof(c->job_id));
	if ((r->status = store_poll_last(r->st, j->tenant, j->job_id,
	    &c->polled_at)) != STORE_OK)
		return 1;
	r->n++;
	return 0;
}

/*
 * Least recently asked first, so that no job is starved by others; ties
 * (asked within one millisecond) in a fixed order.
 */
static int
by_polled_at(const void *a, const void *b)
{
	const struct candidate	*x = a, *y = b;
	int			 c;

	if (x->polled_at != y->polled_at)
		return x->polled_at < y->polled_at ? -1 : 1;
	if ((c = strcmp(x->tenant, y->tenant)) != 0)
		return c;
	return strcmp(x->job_id, y->job_id);
}

/*
 * polls{outcome} (base/metrics.h), in one transaction at the end of a run: a
 * poll runs from a timer, a few times a minute at most.  A failure loses
 * this run's counts, and is not the run's failure.
 */
static void
count(struct store *st, const struct poll_stats *ps)
{
	struct metrics_set	m;

	memset(&m, 0, sizeof(m));
	if (metrics_set_add(&m, "polls", "", "answered", ps->answered) != 0 ||
	    metrics_set_add(&m, "polls", "", "failed", ps->failed) != 0 ||
	    metrics_set_add(&m, "polls", "", "unavailable",
	    ps->unavailable) != 0)
		goto out;
	if (store_begin(st) != STORE_OK)
		goto out;
	store_metrics_send(st, &m);
	if (store_commit(st) != STORE_OK)
		store_rollback(st);
out:
	metrics_set_free(&m);
}

enum store_status
poller_run(struct store *st, struct config *cfg, struct http *http, int limit,
    long timeout_ms, void (*report)(void *, const struct poll_report *),
    void *arg, struct poll_stats *stats)
{
	struct config_tenant	 t;
	struct config_job	 j;
	struct run		 r;
	enum config_status	 cs;
	enum store_status	 rc;
	size_t			 i;

	memset(stats, 0, sizeof(*stats));
	memset(&r, 0, sizeof(r));
	r.st = st;
	r.cfg = cfg;
	r.http = http;
	r.limit = limit;
	r.timeout_ms = timeout_ms;
	r.report = report;
	r.arg = arg;
	r.stats = stats;
	r.status = STORE_OK;
	cs = config_pollable_jobs(cfg, each, &r);
	if ((rc = r.status) == STORE_OK && cs != CONFIG_OK)
		rc = cs == CONFIG_BUSY ? STORE_BUSY : cs == CONFIG_NOMEM ?
		    STORE_NOMEM : STORE_ERROR;
	if (rc == STORE_OK && r.n > 1)
		qsort(r.c, r.n, sizeof(*r.c), by_polled_at);
	for (i = 0; rc == STORE_OK && i < r.n && (int)i < limit; i++) {
		/* Read again: the registration may have changed meanwhile. */
		if (config_job_get(cfg, r.c[i].tenant, r.c[i].job_id, &j) !=
		    CONFIG_OK ||
		    config_tenant_get(cfg, r.c[i].tenant, &t) != CONFIG_OK ||
		    t.status_base[0] == '\0')
			continue;
		if ((rc = store_poll_mark(st, j.tenant, j.job_id,
		    util_now_ms())) != STORE_OK)
			break;
		ask(&r, &j, t.status_base);
	}
	free(r.c);
	if (stats->asked > 0)
		count(st, stats);
	return rc;
}
