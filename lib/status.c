/*
 * status.c: the metrics text and the health decision (status.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "group.h"
#include "metrics.h"
#include "status.h"
#include "store_metrics.h"
#include "text.h"
#include "util.h"

#define DESTS_MAX	1000	/* destinations shown */

struct out {
	status_put_fn	 put;
	void		*arg;
};

static void outf(const struct out *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* One bounded line at a time; a longer one is not written. */
static void
outf(const struct out *o, const char *fmt, ...)
{
	char	line[256];
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
family(const struct out *o, const char *name, const char *type,
    const char *help)
{
	outf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * The counters: state.db's table plus what this process counted and has
 * not committed yet, read while no COMMIT of ours is under way (so that
 * none is counted twice or missed).  Other processes' uncommitted counts
 * show once committed.
 */
static void
counters(struct store *st, struct metrics *m, const struct out *o)
{
	struct metrics_set	s;

	memset(&s, 0, sizeof(s));
	metrics_lock_commit(m);
	if (store_metrics_read(st, &s) != STORE_OK) {
		metrics_unlock_commit(m);
		outf(o, "# counters unavailable: state database busy\n");
		metrics_set_free(&s);
		return;
	}
	(void)metrics_unflushed(m, &s);
	metrics_unlock_commit(m);
	metrics_render(&s, o->put, o->arg);
	metrics_set_free(&s);
}

/* What to alert on per destination: backlog, its age, dead and unknown. */
static void
destinations(struct store *st, const struct out *o)
{
	static const enum store_state	 states[] = { STORE_PENDING,
	    STORE_LEASED, STORE_DEAD, STORE_UNKNOWN };
	struct store_dest_gauge		*g;
	const char			*d;
	int64_t				 now = util_now_ms(), age;
	size_t				 k;
	int				 n, i;

	if ((g = calloc(DESTS_MAX, sizeof(*g))) == NULL ||
	    store_dest_gauges(st, g, DESTS_MAX, &n) != STORE_OK) {
		outf(o, "# destinations unavailable: %s\n", g == NULL ?
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
			outf(o, "hookbox_destination_actions{destination="
			    "\"%s\",state=\"%s\"} %lld\n", d,
			    store_state_name(states[k]),
			    (long long)g[i].n[states[k]]);
	}
	family(o, "hookbox_destination_backlog", "gauge",
	    "Pending and leased rows by destination.");
	for (i = 0; i < n; i++)
		outf(o, "hookbox_destination_backlog{destination=\"%s\"}"
		    " %lld\n", text_valid_name(g[i].destination) ?
		    g[i].destination : "invalid",
		    (long long)(g[i].n[STORE_PENDING] + g[i].n[STORE_LEASED]));
	family(o, "hookbox_destination_oldest_pending_age_seconds", "gauge",
	    "Age of the destination's oldest undelivered pending or leased"
	    " action.");
	for (i = 0; i < n; i++) {
		age = g[i].oldest_ms > 0 && now > g[i].oldest_ms ?
		    (now - g[i].oldest_ms) / 1000 : 0;
		outf(o, "hookbox_destination_oldest_pending_age_seconds"
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
	struct out		o = { put, arg };
	struct store_counts	c;
	struct store_receipts	rc;
	struct group_stats	gs;
	enum store_status	rs;
	enum store_state	i;
	enum hb_result		r;

	if ((rs = store_counts(st, &c)) != STORE_OK)
		return rs;
	family(&o, "hookbox_build_info", "gauge", "The responder's version.");
	outf(&o, "hookbox_build_info{version=\"%s\"} 1\n", HB_VERSION);
	family(&o, "hookbox_outbox_actions", "gauge",
	    "Outbox rows by delivery state.");
	for (i = 0; i < STORE_STATE__N; i++)
		outf(&o, "hookbox_outbox_actions{state=\"%s\"} %lld\n",
		    store_state_name(i), (long long)c.outbox[i]);
	family(&o, "hookbox_conflicts_open", "gauge",
	    "Conflicts awaiting reconciliation.");
	outf(&o, "hookbox_conflicts_open %lld\n", (long long)c.conflicts_open);
	family(&o, "hookbox_oldest_pending_age_seconds", "gauge",
	    "Age of the oldest undelivered action.");
	outf(&o, "hookbox_oldest_pending_age_seconds %lld\n",
	    (long long)store_counts_age(&c, util_now_ms()));
	group_stats(grp, &gs);
	family(&o, "hookbox_commits_total", "counter", "Acceptance"
	    " transactions committed (or tried) by this process's writer"
	    " since it started.");
	outf(&o, "hookbox_commits_total %lld\n", (long long)gs.batches);
	family(&o, "hookbox_commit_failures_total", "counter",
	    "Of those, the ones that failed.");
	outf(&o, "hookbox_commit_failures_total %lld\n", (long long)gs.failed);
	family(&o, "hookbox_committed_observations_total", "counter",
	    "Observations those transactions held: divided by"
	    " hookbox_commits_total, the mean group size.");
	outf(&o, "hookbox_committed_observations_total %lld\n",
	    (long long)gs.observations);
	family(&o, "hookbox_db_round_trips_total", "counter", "Round trips"
	    " that writer made to the state database (PostgreSQL; 0 on"
	    " SQLite).");
	outf(&o, "hookbox_db_round_trips_total{db=\"state\"} %lld\n",
	    (long long)gs.round_trips);
	counters(st, m, &o);
	destinations(st, &o);
	family(&o, "hookbox_receipts", "gauge",
	    "Notifications retained, by result.");
	if (store_receipt_counts(st, &rc) != STORE_OK) {
		outf(&o, "# receipts unavailable: state database busy\n");
		return STORE_OK;
	}
	for (r = 0; r < HB_RESULT__N; r++)
		if (rc.n[r] > 0)
			outf(&o, "hookbox_receipts{result=\"%s\"} %lld\n",
			    hb_result_name(r), (long long)rc.n[r]);
	return STORE_OK;
}

const char *
status_health(struct store *st, struct group *grp, int64_t now)
{
	struct group_stats	gs;
	enum store_status	rc;

	group_stats(grp, &gs);
	/* Busy and a lost connection are the next commit's to mend. */
	if (gs.last != STORE_OK && gs.last != STORE_BUSY &&
	    gs.last != STORE_GONE)
		return gs.last == STORE_NOMEM ? "the last commit ran out of"
		    " memory" : "the last commit failed (disk full, or an I/O"
		    " error); until one succeeds";
	if ((gs.running_ms > 0 && now - gs.running_ms > STATUS_STALL_MS) ||
	    (gs.oldest_ms > 0 && now - gs.oldest_ms > STATUS_STALL_MS))
		return "callbacks have waited more than a second for a commit";
	if ((rc = store_check_writable(st)) != STORE_OK)
		return store_strerror(rc);
	return NULL;
}
