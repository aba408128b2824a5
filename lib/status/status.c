/*
 * status/status.c: the metrics text, the health decision and the operator's
 * view (status/status.h).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "base/metrics.h"
#include "base/text.h"
#include "base/util.h"
#include "intake/group.h"
#include "status/status.h"
#include "store/circuit.h"
#include "store/metrics.h"
#include "store/outbox.h"


void
status_outf(const struct status_out *o, const char *fmt, ...)
{
	char	line[512];
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(line))
		o->put(o->arg, line, (size_t)n);
}

/* HELP and TYPE of one metric. */
static void
family(const struct status_out *o, const char *name, const char *type,
    const char *help)
{
	status_outf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * The counters: state.db's table plus what this process counted and has
 * not committed yet, read while no COMMIT of ours is under way (so that
 * none is counted twice or missed).  Other processes' uncommitted counts
 * show once committed.
 */
static void
counters(struct store *st, struct metrics *m, const struct status_out *o)
{
	struct metrics_set	s;

	memset(&s, 0, sizeof(s));
	metrics_lock_commit(m);
	if (store_metrics_read(st, &s) != STORE_OK) {
		metrics_unlock_commit(m);
		status_outf(o, "# counters unavailable: state database busy\n");
		metrics_set_free(&s);
		return;
	}
	(void)metrics_unflushed(m, &s);
	metrics_unlock_commit(m);
	metrics_render(&s, o->put, o->arg);
	metrics_set_free(&s);
}

/* What to alert on per destination: backlog, its age, dead and unknown. */
/* A circuit's labels' values: checked, as state.db's names are. */
static const char *
label(const cJSON *row, const char *name)
{
	const cJSON	*x = cJSON_GetObjectItemCaseSensitive(row, name);

	return cJSON_IsString(x) && text_valid_name(x->valuestring) ?
	    x->valuestring : "invalid";
}

/* Each destination's circuit, pause and requests in flight. */
static void
circuits(struct store *st, const struct status_out *o)
{
	static const struct {
		const char	*name, *help;
	} fams[] = {
		{ "hookbox_destination_circuit_open", "1 while the"
		    " destination's circuit is open or half open: nothing but"
		    " a probe is sent to it." },
		{ "hookbox_destination_paused", "1 while an operator has"
		    " paused the destination." },
		{ "hookbox_destination_in_flight", "Its requests in flight"
		    " (leased rows), across dispatchers." },
	};
	const cJSON	*row, *x;
	const char	*c;
	cJSON		*a = NULL;
	size_t		 k;
	double		 v;

	if (store_circuit_list(st, util_now_ms(), 1, &a) != STORE_OK) {
		status_outf(o, "# circuits unavailable: state database busy\n");
		return;
	}
	for (k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
		family(o, fams[k].name, "gauge", fams[k].help);
		cJSON_ArrayForEach(row, a) {
			c = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(row, "circuit"));
			if (k == 0)
				v = c != NULL && strcmp(c, "closed") != 0;
			else if (k == 1)
				v = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
				    row, "paused"));
			else {
				x = cJSON_GetObjectItemCaseSensitive(row,
				    "in_flight");
				v = cJSON_IsNumber(x) ? x->valuedouble : 0;
			}
			status_outf(o, "%s{tenant=\"%s\",destination=\"%s\"}"
			    " %lld\n", fams[k].name, label(row, "tenant"),
			    label(row, "destination"), (long long)v);
		}
	}
	cJSON_Delete(a);
}

static void
destinations(struct store *st, const struct status_out *o)
{
	static const enum store_state	 states[] = { STORE_PENDING,
	    STORE_LEASED, STORE_DEAD, STORE_UNKNOWN };
	struct store_dest_gauge		*g;
	const char			*d;
	int64_t				 now = util_now_ms(), age;
	size_t				 k;
	int				 n, i;

	if ((g = calloc(STATUS_DESTS_MAX, sizeof(*g))) == NULL ||
	    store_dest_gauges(st, g, STATUS_DESTS_MAX, &n) != STORE_OK) {
		status_outf(o, "# destinations unavailable: %s\n", g == NULL ?
		    "out of memory" : "state database busy");
		free(g);
		return;
	}
	/* The names come from state.db: checked before they are labels. */
	family(o, "hookbox_destination_actions", "gauge",
	    "Undelivered outbox rows by destination and state.");
	for (i = 0; i < n; i++) {
		d = text_valid_name(g[i].destination) ? g[i].destination :
		    "invalid";
		for (k = 0; k < sizeof(states) / sizeof(states[0]); k++)
			status_outf(o, "hookbox_destination_actions{destination="
			    "\"%s\",state=\"%s\"} %lld\n", d,
			    store_state_name(states[k]),
			    (long long)g[i].n[states[k]]);
	}
	family(o, "hookbox_destination_backlog", "gauge",
	    "Pending and leased rows by destination.");
	for (i = 0; i < n; i++)
		status_outf(o, "hookbox_destination_backlog{destination=\"%s\"}"
		    " %lld\n", text_valid_name(g[i].destination) ?
		    g[i].destination : "invalid",
		    (long long)(g[i].n[STORE_PENDING] + g[i].n[STORE_LEASED]));
	family(o, "hookbox_destination_oldest_pending_age_seconds", "gauge",
	    "Age of the destination's oldest undelivered pending or leased"
	    " action.");
	for (i = 0; i < n; i++) {
		age = store_age(g[i].oldest_ms, now);
		status_outf(o, "hookbox_destination_oldest_pending_age_seconds"
		    "{destination=\"%s\"} %lld\n",
		    text_valid_name(g[i].destination) ? g[i].destination :
		    "invalid", (long long)age);
	}
	free(g);
}

enum store_status
status_metrics(struct store *st, struct group *grp, struct metrics *m,
    status_put_fn put, void *arg)
{
	struct status_out		o = { put, arg };
	struct store_counts	c;
	struct store_receipts	rc;
	struct group_stats	gs;
	enum store_status	rs;
	enum store_state	i;
	enum hb_result		r;

	if ((rs = store_counts(st, &c)) != STORE_OK)
		return rs;
	family(&o, "hookbox_build_info", "gauge", "The responder's version.");
	status_outf(&o, "hookbox_build_info{version=\"%s\"} 1\n", HB_VERSION);
	family(&o, "hookbox_outbox_actions", "gauge",
	    "Outbox rows by delivery state.");
	for (i = 0; i < STORE_STATE__N; i++)
		status_outf(&o, "hookbox_outbox_actions{state=\"%s\"} %lld\n",
		    store_state_name(i), (long long)c.outbox[i]);
	family(&o, "hookbox_conflicts_open", "gauge",
	    "Conflicts awaiting reconciliation.");
	status_outf(&o, "hookbox_conflicts_open %lld\n", (long long)c.conflicts_open);
	family(&o, "hookbox_oldest_pending_age_seconds", "gauge",
	    "Age of the oldest undelivered action.");
	status_outf(&o, "hookbox_oldest_pending_age_seconds %lld\n",
	    (long long)store_counts_age(&c, util_now_ms()));
	group_stats(grp, &gs);
	family(&o, "hookbox_commits_total", "counter", "Acceptance"
	    " transactions committed (or tried) by this process's writer"
	    " since it started.");
	status_outf(&o, "hookbox_commits_total %lld\n", (long long)gs.batches);
	family(&o, "hookbox_commit_failures_total", "counter",
	    "Of those, the ones that failed.");
	status_outf(&o, "hookbox_commit_failures_total %lld\n", (long long)gs.failed);
	family(&o, "hookbox_committed_observations_total", "counter",
	    "Observations those transactions held: divided by"
	    " hookbox_commits_total, the mean group size.");
	status_outf(&o, "hookbox_committed_observations_total %lld\n",
	    (long long)gs.observations);
	family(&o, "hookbox_db_round_trips_total", "counter", "Round trips"
	    " that writer made to the state database (PostgreSQL; 0 on"
	    " SQLite).");
	status_outf(&o, "hookbox_db_round_trips_total{db=\"state\"} %lld\n",
	    (long long)gs.round_trips);
	family(&o, "hookbox_db_transaction_statements_total", "counter",
	    "BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE and ROLLBACK TO"
	    " statements that writer sent to the state database.");
	status_outf(&o, "hookbox_db_transaction_statements_total{db=\"state\"}"
	    " %lld\n", (long long)gs.tx_statements);
	counters(st, m, &o);
	destinations(st, &o);
	circuits(st, &o);
	family(&o, "hookbox_receipts", "gauge",
	    "Notifications retained, by result.");
	if (store_receipt_counts(st, &rc) != STORE_OK) {
		status_outf(&o, "# receipts unavailable: state database busy\n");
		return STORE_OK;
	}
	for (r = 0; r < HB_RESULT__N; r++)
		if (rc.n[r] > 0)
			status_outf(&o, "hookbox_receipts{result=\"%s\"} %lld\n",
			    hb_result_name(r), (long long)rc.n[r]);
	return STORE_OK;
}

const char *
status_health(struct store *st, struct group *grp, int64_t now)
{
	struct group_stats	gs;
	enum store_status	rc;

	group_stats(grp, &gs);
	if (gs.last != STORE_OK && gs.last != STORE_BUSY &&
	    gs.last != STORE_GONE)
		return gs.last == STORE_NOMEM ? "the last commit ran out of"
		    " memory" : "the last commit failed (disk full, or an I/O"
		    " error); until one succeeds";
	/*
	 * Busy, or cut off: a lock held past the budget, or a COMMIT that
	 * waited for a synchronous standby that is away, which nothing but
	 * a COMMIT meets.  Until the next callback's commit mends it, a
	 * commit of health's own asks whether one would go through now.
	 */
	if ((gs.last == STORE_BUSY || gs.last == STORE_GONE) &&
	    (rc = store_metrics_probe(st, now)) != STORE_OK)
		return rc == STORE_BUSY ? "commits wait past the busy budget"
		    " (a lock held elsewhere, or a synchronous standby away)" :
		    store_strerror(rc);
	if ((gs.running_ms > 0 && now - gs.running_ms > STATUS_STALL_MS) ||
	    (gs.oldest_ms > 0 && now - gs.oldest_ms > STATUS_STALL_MS))
		return "callbacks have waited more than a second for a commit";
	if ((rc = store_check_writable(st)) != STORE_OK)
		return store_strerror(rc);
	return NULL;
}

/* ---- the operator's view ---- */

/* d's entry in v, added (by name order later) when there is room. */
static struct status_dest *
view_dest(struct status_view *v, const char *d)
{
	struct status_dest	*e;
	int			 i;

	for (i = 0; i < v->ndests; i++)
		if (strcmp(v->dests[i].g.destination, d) == 0)
			return &v->dests[i];
	if (v->ndests == STATUS_DESTS_MAX || strlen(d) > HB_ID_MAX)
		return NULL;
	e = &v->dests[v->ndests++];
	memset(e, 0, sizeof(*e));
	memcpy(e->g.destination, d, strlen(d) + 1);
	return e;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct status_dest *)a)->g.destination,
	    ((const struct status_dest *)b)->g.destination);
}

enum store_status
status_read(struct store *st, struct metrics *m, int64_t now_ms,
    struct status_view *v)
{
	struct store_dest_gauge		*g = NULL;
	struct store_list_filter	 f;
	struct status_dest		*e;
	const struct metrics_row	*r;
	enum store_status		 rc;
	int				 n, i;

	memset(v, 0, sizeof(*v));
	v->now_ms = now_ms;
	if ((v->dests = calloc(STATUS_DESTS_MAX, sizeof(*v->dests))) ==
	    NULL || (g = calloc(STATUS_DESTS_MAX, sizeof(*g))) == NULL) {
		free(g);
		return STORE_NOMEM;
	}
	if ((rc = store_counts(st, &v->counts)) != STORE_OK ||
	    (rc = store_dest_gauges(st, g, STATUS_DESTS_MAX, &n)) !=
	    STORE_OK || (rc = store_dest_errors(st, g, n)) != STORE_OK)
		goto fail;
	for (i = 0; i < n; i++)
		v->dests[i].g = g[i];
	v->ndests = n;
	memset(&f, 0, sizeof(f));
	f.limit = STATUS_DEAD_MAX;
	if ((rc = store_outbox_list(st, STORE_DEAD, &f, &v->dead)) !=
	    STORE_OK ||
	    (rc = store_outbox_list(st, STORE_UNKNOWN, &f, &v->unknown)) !=
	    STORE_OK ||
	    (rc = store_circuit_list(st, now_ms, 0, &v->circuits)) !=
	    STORE_OK)
		goto fail;
	if (m != NULL)
		metrics_lock_commit(m);
	rc = store_metrics_read(st, &v->counters);
	if (rc == STORE_OK && m != NULL &&
	    metrics_unflushed(m, &v->counters) != 0)
		rc = STORE_NOMEM;
	if (m != NULL)
		metrics_unlock_commit(m);
	if (rc != STORE_OK)
		goto fail;
	for (i = 0; i < v->counters.n; i++) {
		r = &v->counters.rows[i];
		if (strcmp(r->name, "heartbeat_ms") == 0)
			v->heartbeat_ms = r->value;
		else if (strcmp(r->name, "delivered_ms") == 0 &&
		    (e = view_dest(v, r->l1)) != NULL)
			e->delivered_ms = r->value;
	}
	qsort(v->dests, (size_t)v->ndests, sizeof(*v->dests), by_name);
	free(g);
	return STORE_OK;
fail:
	free(g);
	status_view_free(v);
	return rc;
}

void
status_view_free(struct status_view *v)
{
	free(v->dests);
	cJSON_Delete(v->dead);
	cJSON_Delete(v->unknown);
	cJSON_Delete(v->circuits);
	metrics_set_free(&v->counters);
	memset(v, 0, sizeof(*v));
}

void
status_hour(const struct status_view *v, const char *kind,
    struct status_hour *h)
{
	const struct metrics_row	*r;
	long long			 min;
	size_t				 k = strlen(kind);
	int				 i, w;

	memset(h, 0, sizeof(*h));
	h->first = v->now_ms / 60000 - (METRICS_MINUTES - 1);
	for (i = 0; i < v->counters.n; i++) {
		r = &v->counters.rows[i];
		if (strcmp(r->name, "minute") != 0 ||
		    strncmp(r->l2, kind, k) != 0 || r->l2[k] != ':' ||
		    util_parse_num(r->l1, 0, LLONG_MAX, &min) != UTIL_NUM_OK ||
		    min < h->first || min >= h->first + METRICS_MINUTES)
			continue;
		for (w = 0; w < h->nwords &&
		    strcmp(h->words[w], r->l2 + k + 1) != 0; w++)
			continue;
		if (w == h->nwords) {
			if (w == STATUS_WORDS_MAX)
				continue;
			h->words[h->nwords++] = r->l2 + k + 1;
		}
		h->counts[min - h->first][w] += r->value;
		h->total[w] += r->value;
	}
}

/* ms as unix seconds, or JSON null when 0 (never). */
static cJSON *
json_time(int64_t ms)
{
	return ms > 0 ? cJSON_CreateNumber((double)(ms / 1000)) :
	    cJSON_CreateNull();
}

/* The circuits (store/circuit.h's list), their times in unix seconds. */
static cJSON *
json_circuits(const cJSON *list)
{
	static const char *const times[] = { "opened_at", "probe_at",
	    "held_until", "paused_at" };
	cJSON	*a, *row, *t;
	size_t	 i;

	if ((a = cJSON_Duplicate(list, 1)) == NULL)
		return NULL;
	cJSON_ArrayForEach(row, a)
		for (i = 0; i < sizeof(times) / sizeof(times[0]); i++)
			if (cJSON_IsNumber(t = cJSON_GetObjectItemCaseSensitive(
			    row, times[i])))
				cJSON_SetNumberValue(t, (double)((int64_t)
				    t->valuedouble / 1000));
	return a;
}

/* The last hour's totals of kind, by word. */
static cJSON *
json_hour(const struct status_view *v, const char *kind)
{
	struct status_hour	*h;
	cJSON			*o;
	int			 w;

	if ((h = malloc(sizeof(*h))) == NULL ||
	    (o = cJSON_CreateObject()) == NULL) {
		free(h);
		return NULL;
	}
	status_hour(v, kind, h);
	for (w = 0; w < h->nwords; w++)
		(void)cJSON_AddNumberToObject(o, h->words[w],
		    (double)h->total[w]);
	free(h);
	return o;
}

static cJSON *
json_dest(const struct status_view *v, const struct status_dest *e)
{
	const struct store_dest_gauge	*g = &e->g;
	cJSON				*o;
	enum store_state		 i;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	(void)cJSON_AddStringToObject(o, "name", g->destination);
	for (i = 0; i < STORE_STATE__N; i++)
		if (i != STORE_DELIVERED)
			(void)cJSON_AddNumberToObject(o, store_state_name(i),
			    (double)g->n[i]);
	(void)cJSON_AddNumberToObject(o, "backlog",
	    (double)(g->n[STORE_PENDING] + g->n[STORE_LEASED]));
	(void)cJSON_AddNumberToObject(o, "oldest_pending_age_s",
	    (double)store_age(g->oldest_ms, v->now_ms));
	cJSON_AddItemToObject(o, "last_delivery_at",
	    json_time(e->delivered_ms));
	cJSON_AddItemToObject(o, "last_error_at", json_time(g->error_ms));
	if (g->error_ms > 0)
		(void)cJSON_AddStringToObject(o, "last_error", g->error);
	else
		(void)cJSON_AddNullToObject(o, "last_error");
	return o;
}

cJSON *
status_json(const struct status_view *v)
{
	cJSON			*o, *a, *x;
	enum store_state	 i;
	int			 k;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	if ((a = cJSON_AddObjectToObject(o, "outbox")) != NULL)
		for (i = 0; i < STORE_STATE__N; i++)
			(void)cJSON_AddNumberToObject(a, store_state_name(i),
			    (double)v->counts.outbox[i]);
	(void)cJSON_AddNumberToObject(o, "conflicts_open",
	    (double)v->counts.conflicts_open);
	(void)cJSON_AddNumberToObject(o, "oldest_pending_age_s",
	    (double)store_counts_age(&v->counts, v->now_ms));
	cJSON_AddItemToObject(o, "heartbeat_at", json_time(v->heartbeat_ms));
	if ((a = cJSON_AddArrayToObject(o, "destinations")) != NULL)
		for (k = 0; k < v->ndests; k++)
			if ((x = json_dest(v, &v->dests[k])) != NULL)
				cJSON_AddItemToArray(a, x);
	if ((x = cJSON_Duplicate(v->dead, 1)) != NULL)
		cJSON_AddItemToObject(o, "dead", x);
	if ((x = cJSON_Duplicate(v->unknown, 1)) != NULL)
		cJSON_AddItemToObject(o, "unknown", x);
	if ((x = json_circuits(v->circuits)) != NULL)
		cJSON_AddItemToObject(o, "circuits", x);
	if ((a = cJSON_AddObjectToObject(o, "last_hour")) != NULL) {
		if ((x = json_hour(v, "requests")) != NULL)
			cJSON_AddItemToObject(a, "requests", x);
		if ((x = json_hour(v, "deliveries")) != NULL)
			cJSON_AddItemToObject(a, "deliveries", x);
	}
	return o;
}
