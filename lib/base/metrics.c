/*
 * base/metrics.c: in-memory counts, their flush protocol and the Prometheus
 * text they are shown in (see base/metrics.h).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"

/* The delivery histogram's upper bounds, in milliseconds and as "le". */
static const struct {
	int64_t		 ms;
	const char	*le;
} buckets[] = {
	{ 50, "0.05" }, { 100, "0.1" }, { 250, "0.25" }, { 500, "0.5" },
	{ 1000, "1" }, { 2500, "2.5" }, { 5000, "5" }, { 10000, "10" },
	{ INT64_MAX, "+Inf" },
};

/* ---- sets ---- */

static struct metrics_row *
find(struct metrics_set *s, const char *name, const char *l1, const char *l2)
{
	struct metrics_row	*r;
	int			 i, cap;

	for (i = 0; i < s->n; i++) {
		r = &s->rows[i];
		if (strcmp(r->name, name) == 0 && strcmp(r->l1, l1) == 0 &&
		    strcmp(r->l2, l2) == 0)
			return r;
	}
	if (s->n >= METRICS_ROWS_MAX)
		return NULL;
	if (s->n == s->cap) {
		cap = s->cap == 0 ? 16 : s->cap * 2;
		if ((r = reallocarray(s->rows, (size_t)cap, sizeof(*r))) ==
		    NULL)
			return NULL;
		s->rows = r;
		s->cap = cap;
	}
	r = &s->rows[s->n];
	memset(r, 0, sizeof(*r));
	if (snprintf(r->name, sizeof(r->name), "%s", name) >=
	    (int)sizeof(r->name) || snprintf(r->l1, sizeof(r->l1), "%s", l1) >=
	    (int)sizeof(r->l1) || snprintf(r->l2, sizeof(r->l2), "%s", l2) >=
	    (int)sizeof(r->l2))
		return NULL;	/* never a label cut into another one */
	s->n++;
	return r;
}

int
metrics_set_add(struct metrics_set *s, const char *name, const char *l1,
    const char *l2, int64_t delta)
{
	struct metrics_row	*r;

	if ((r = find(s, name, l1 != NULL ? l1 : "", l2 != NULL ? l2 : "")) ==
	    NULL)
		return -1;
	r->value += delta;
	return 0;
}

int
metrics_keeps_max(const char *name)
{
	size_t	n = strlen(name);

	return n > 3 && strcmp(name + n - 3, "_ms") == 0;
}

int
metrics_set_count(struct metrics_set *s, const char *name, const char *l1,
    const char *l2, int64_t now_ms)
{
	char	minute[METRICS_MINUTE_DIGITS + 1], what[METRICS_L2_MAX + 1];
	int	rc;

	rc = metrics_set_add(s, name, l1, l2, 1);
	if (l1 == NULL || l1[0] == '_')
		return rc;
	if (snprintf(minute, sizeof(minute), "%0*lld", METRICS_MINUTE_DIGITS,
	    (long long)(now_ms / 60000)) >= (int)sizeof(minute) ||
	    snprintf(what, sizeof(what), "%s:%s", name, l2 != NULL ? l2 : "")
	    >= (int)sizeof(what))
		return -1;
	return rc | metrics_set_add(s, "minute", minute, what, 1);
}

int
metrics_set_max(struct metrics_set *s, const char *name, const char *l1,
    const char *l2, int64_t value)
{
	struct metrics_row	*r;

	if ((r = find(s, name, l1 != NULL ? l1 : "", l2 != NULL ? l2 : "")) ==
	    NULL)
		return -1;
	if (value > r->value)
		r->value = value;
	return 0;
}

void
metrics_set_clear(struct metrics_set *s)
{
	s->n = 0;
}

void
metrics_set_free(struct metrics_set *s)
{
	if (s == NULL)
		return;
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

int
metrics_set_observe_delivery(struct metrics_set *s, const char *dest,
    int64_t ms)
{
	size_t	i;
	int	rc = 0;

	if (ms < 0)
		ms = 0;
	for (i = 0; i < sizeof(buckets) / sizeof(buckets[0]); i++)
		if (ms <= buckets[i].ms)
			rc |= metrics_set_add(s, "delivery_le", dest,
			    buckets[i].le, 1);
	rc |= metrics_set_add(s, "delivery_sum_us", dest, "", ms * 1000);
	rc |= metrics_set_add(s, "delivery_count", dest, "", 1);
	return rc;
}

/* ---- a process's counts ---- */

struct metrics {
	pthread_mutex_t		lock;		/* pending, flight */
	pthread_mutex_t		commit;
	struct metrics_set	pending;
	struct metrics_set	flight;
};

struct metrics *
metrics_new(void)
{
	struct metrics	*m;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->commit, NULL);
	return m;
}

void
metrics_free(struct metrics *m)
{
	if (m == NULL)
		return;
	metrics_set_free(&m->pending);
	metrics_set_free(&m->flight);
	pthread_mutex_destroy(&m->commit);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void
metrics_add(struct metrics *m, const char *name, const char *l1,
    const char *l2, int64_t delta)
{
	if (m == NULL)
		return;
	pthread_mutex_lock(&m->lock);
	(void)metrics_set_add(&m->pending, name, l1, l2, delta);
	pthread_mutex_unlock(&m->lock);
}

void
metrics_max(struct metrics *m, const char *name, const char *l1,
    const char *l2, int64_t value)
{
	if (m == NULL)
		return;
	pthread_mutex_lock(&m->lock);
	(void)metrics_set_max(&m->pending, name, l1, l2, value);
	pthread_mutex_unlock(&m->lock);
}

void
metrics_count(struct metrics *m, const char *name, const char *l1,
    const char *l2, int64_t now_ms)
{
	if (m == NULL)
		return;
	pthread_mutex_lock(&m->lock);
	(void)metrics_set_count(&m->pending, name, l1, l2, now_ms);
	pthread_mutex_unlock(&m->lock);
}

/* Adds every row of from to to; 0, or -1. */
static int
merge(struct metrics_set *to, const struct metrics_set *from)
{
	int	i, rc = 0;

	for (i = 0; i < from->n; i++)
		rc |= metrics_keeps_max(from->rows[i].name) ?
		    metrics_set_max(to, from->rows[i].name, from->rows[i].l1,
		    from->rows[i].l2, from->rows[i].value) :
		    metrics_set_add(to, from->rows[i].name, from->rows[i].l1,
		    from->rows[i].l2, from->rows[i].value);
	return rc;
}

int
metrics_take(struct metrics *m, struct metrics_set *out)
{
	int	rc;

	pthread_mutex_lock(&m->lock);
	if ((rc = merge(out, &m->pending)) == 0 &&
	    (rc = merge(&m->flight, &m->pending)) == 0)
		metrics_set_clear(&m->pending);
	else
		metrics_set_clear(&m->flight);	/* all still pending, once */
	pthread_mutex_unlock(&m->lock);
	return rc;
}

void
metrics_done(struct metrics *m, int ok)
{
	pthread_mutex_lock(&m->lock);
	if (!ok)
		(void)merge(&m->pending, &m->flight);
	metrics_set_clear(&m->flight);
	pthread_mutex_unlock(&m->lock);
}

void
metrics_lock_commit(struct metrics *m)
{
	pthread_mutex_lock(&m->commit);
}

void
metrics_unlock_commit(struct metrics *m)
{
	pthread_mutex_unlock(&m->commit);
}

int
metrics_unflushed(struct metrics *m, struct metrics_set *out)
{
	int	rc;

	pthread_mutex_lock(&m->lock);
	rc = merge(out, &m->pending) | merge(out, &m->flight);
	pthread_mutex_unlock(&m->lock);
	return rc;
}

/* ---- Prometheus text ---- */

enum fam {
	F_REQUESTS = 0,
	F_DELIVERIES,
	F_POLLS,
	F_HISTOGRAM,
	F_HEARTBEAT,
	F_SECRET,
	F__N
};

static const struct {
	const char	*metric, *type, *help, *k1, *k2;
} fams[F__N] = {
	[F_REQUESTS] = { "hookbox_requests_total", "counter",
	    "Requests answered, by endpoint (a configured name, or unknown)"
	    " and result.", "endpoint", "result" },
	[F_DELIVERIES] = { "hookbox_deliveries_total", "counter",
	    "Delivery attempts recorded, by destination and outcome.",
	    "destination", "outcome" },
	[F_POLLS] = { "hookbox_polls_total", "counter",
	    "Status API polls, by outcome.", NULL, "outcome" },
	[F_HISTOGRAM] = { "hookbox_delivery_duration_seconds", "histogram",
	    "Delivery attempts' duration, from sending to the answer.",
	    "destination", "le" },
	[F_HEARTBEAT] = { "hookbox_dispatcher_heartbeat_timestamp_seconds",
	    "gauge", "When a dispatcher last recorded that it was alive"
	    " (every 10 s while idle, every batch while working).", NULL,
	    NULL },
	[F_SECRET] = { "hookbox_endpoint_secret_last_used_timestamp_seconds",
	    "gauge", "When a request signed with the endpoint's secret (its"
	    " id, as endpoint secret list shows it) was last answered.",
	    "endpoint", "secret" },
};

/* A row's family and its place among the histogram's lines. */
static int
family(const struct metrics_row *r, int *sub)
{
	*sub = 0;
	if (strcmp(r->name, "requests") == 0)
		return F_REQUESTS;
	if (strcmp(r->name, "deliveries") == 0)
		return F_DELIVERIES;
	if (strcmp(r->name, "polls") == 0)
		return F_POLLS;
	if (strcmp(r->name, "heartbeat_ms") == 0)
		return F_HEARTBEAT;
	if (strcmp(r->name, "secret_used_ms") == 0)
		return F_SECRET;
	if (strcmp(r->name, "delivery_le") == 0)
		return F_HISTOGRAM;
	*sub = strcmp(r->name, "delivery_sum_us") == 0 ? 1 :
	    strcmp(r->name, "delivery_count") == 0 ? 2 : -1;
	return *sub < 0 ? -1 : F_HISTOGRAM;
}

static double
le_of(const char *s)
{
	char	*end;
	double	 v;

	if (strcmp(s, "+Inf") == 0)
		return INFINITY;
	v = strtod(s, &end);
	return *end == '\0' ? v : INFINITY;
}

static int
by_place(const void *a, const void *b)
{
	const struct metrics_row	*x = a, *y = b;
	int				 fx, fy, sx, sy, c;
	double				 lx, ly;

	fx = family(x, &sx);
	fy = family(y, &sy);
	if (fx != fy)
		return fx < fy ? -1 : 1;
	if ((c = strcmp(x->l1, y->l1)) != 0)
		return c;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	if (fx == F_HISTOGRAM && sx == 0) {
		lx = le_of(x->l2);
		ly = le_of(y->l2);
		if (lx != ly)
			return lx < ly ? -1 : 1;
	}
	return strcmp(x->l2, y->l2);
}

/* A label value as the text format wants it: \\, \" and \n escaped. */
static void
esc(const char *s, char *buf, size_t len)
{
	size_t	o = 0;

	for (; *s != '\0' && o + 3 < len; s++) {
		if (*s == '\\' || *s == '"' || *s == '\n') {
			buf[o++] = '\\';
			buf[o++] = *s == '\n' ? 'n' : *s;
		} else
			buf[o++] = *s;
	}
	buf[o] = '\0';
}

void
metrics_render(struct metrics_set *s,
    void (*out)(void *, const char *, size_t), void *arg)
{
	const struct metrics_row	*r;
	char				 line[1024], a[2 * HB_ID_MAX + 4];
	char				 b[2 * METRICS_L2_MAX + 4];
	const char			*suffix;
	int				 i, f, sub, last = -1, n;

	if (s->n > 1)
		qsort(s->rows, (size_t)s->n, sizeof(*s->rows), by_place);
	for (i = 0; i < s->n; i++) {
		r = &s->rows[i];
		if ((f = family(r, &sub)) < 0)
			continue;
		if (f != last) {
			n = snprintf(line, sizeof(line), "# HELP %s %s\n"
			    "# TYPE %s %s\n", fams[f].metric, fams[f].help,
			    fams[f].metric, fams[f].type);
			if (n > 0 && (size_t)n < sizeof(line))
				out(arg, line, (size_t)n);
			last = f;
		}
		esc(r->l1, a, sizeof(a));
		esc(r->l2, b, sizeof(b));
		switch (f) {
		case F_REQUESTS:
		case F_DELIVERIES:
			n = snprintf(line, sizeof(line), "%s{%s=\"%s\",%s=\"%s\"}"
			    " %lld\n", fams[f].metric, fams[f].k1, a,
			    fams[f].k2, b, (long long)r->value);
			break;
		case F_POLLS:
			n = snprintf(line, sizeof(line), "%s{%s=\"%s\"} %lld\n",
			    fams[f].metric, fams[f].k2, b,
			    (long long)r->value);
			break;
		case F_HISTOGRAM:
			suffix = sub == 0 ? "_bucket" : sub == 1 ? "_sum" :
			    "_count";
			if (sub == 0)
				n = snprintf(line, sizeof(line),
				    "%s%s{destination=\"%s\",le=\"%s\"} %lld\n",
				    fams[f].metric, suffix, a, b,
				    (long long)r->value);
			else if (sub == 1)
				n = snprintf(line, sizeof(line),
				    "%s%s{destination=\"%s\"} %.6f\n",
				    fams[f].metric, suffix, a,
				    (double)r->value / 1e6);
			else
				n = snprintf(line, sizeof(line),
				    "%s%s{destination=\"%s\"} %lld\n",
				    fams[f].metric, suffix, a,
				    (long long)r->value);
			break;
		case F_SECRET:
			n = snprintf(line, sizeof(line), "%s{%s=\"%s\",%s=\"%s\"}"
			    " %.3f\n", fams[f].metric, fams[f].k1, a,
			    fams[f].k2, b, (double)r->value / 1e3);
			break;
		default:
			n = snprintf(line, sizeof(line), "%s %.3f\n",
			    fams[f].metric, (double)r->value / 1e3);
			break;
		}
		if (n > 0 && (size_t)n < sizeof(line))
			out(arg, line, (size_t)n);
	}
}
