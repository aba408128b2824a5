/*
 * store/metrics.c: the metrics table and the per-destination gauges.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/util.h"
#include "store/flight.h"
#include "store/metrics.h"
#include "store/record.h"
#include "store/store_int.h"

static enum store_status
put(struct store *s, const struct metrics_row *r)
{
	struct db_stmt	*st;

	if ((st = store_stmt(s, metrics_keeps_max(r->name) ?
	    STORE_Q_METRIC_MAX : STORE_Q_METRIC_ADD)) == NULL)
		return store_last(s);
	/* "" is a label value here, not NULL (as db_bind_opt() has it). */
	if (db_bind_text(st, 1, r->name) != DB_OK ||
	    db_bind_text(st, 2, r->l1) != DB_OK ||
	    db_bind_text(st, 3, r->l2) != DB_OK ||
	    db_bind_int64(st, 4, r->value) != DB_OK) {
		db_reset(st);
		return store_last(s);
	}
	return store_send(st);
}

/*
 * The minutes past the chart's window, once a minute: m's latest minute
 * moved since the last prune.  The rows are text of one width, so that
 * "older" is "sorts before".
 */
static enum store_status
prune_minutes(struct store *s, const struct metrics_set *m)
{
	struct db_stmt	*st;
	char		 cut[METRICS_MINUTE_DIGITS + 1];
	long long	 latest = 0, v;
	int		 i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->rows[i].name, "minute") == 0 &&
		    util_parse_num(m->rows[i].l1, 0, LLONG_MAX, &v) ==
		    UTIL_NUM_OK && v > latest)
			latest = v;
	if (latest <= s->minute_pruned || snprintf(cut, sizeof(cut), "%0*lld",
	    METRICS_MINUTE_DIGITS, latest - METRICS_MINUTES) >=
	    (int)sizeof(cut))
		return STORE_OK;
	s->minute_pruned = latest;
	if ((st = store_stmt(s, STORE_Q_MINUTE_PRUNE)) == NULL)
		return store_last(s);
	if (db_bind_text(st, 1, cut) != DB_OK) {
		db_reset(st);
		return store_last(s);
	}
	return store_send(st);
}

/* Orders rows by their key (name, l1, l2). */
static int
by_key(const void *a, const void *b)
{
	const struct metrics_row	*x = *(const struct metrics_row *const *)a;
	const struct metrics_row	*y = *(const struct metrics_row *const *)b;
	int				 c;

	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	if ((c = strcmp(x->l1, y->l1)) != 0)
		return c;
	return strcmp(x->l2, y->l2);
}

/*
 * On a server, the rows whose family keeps its larger value (most) or
 * adds, in one statement, a JSON array in their key's order: every
 * writer then takes the rows' locks in that one order, and two hosts'
 * batches counting the same rows wait for one another instead of
 * deadlocking.  Nothing when there is no such row.
 */
static enum store_status
put_set(struct store *s, struct metrics_row *const *v, int n, int most)
{
	struct json_out	 o;
	struct db_stmt	*st;
	enum db_rc	 rc;
	char		 digits[24];
	int		 i, rows = 0;

	memset(&o, 0, sizeof(o));
	o.len = 3;
	for (i = 0; i < n; i++)
		o.len += 6 * (strlen(v[i]->name) + strlen(v[i]->l1) +
		    strlen(v[i]->l2)) + 64;
	if ((o.buf = malloc(o.len)) == NULL)
		return STORE_NOMEM;
	o.ok = 1;
	json_out_raw(&o, "[");
	for (i = 0; i < n; i++) {
		if (v[i]->value == 0 || !metrics_keeps_max(v[i]->name) != !most)
			continue;
		(void)snprintf(digits, sizeof(digits), "%lld",
		    (long long)v[i]->value);
		json_out_raw(&o, rows++ > 0 ? ",{\"name\":" : "{\"name\":");
		json_out_str(&o, v[i]->name);
		json_out_raw(&o, ",\"l1\":");
		json_out_str(&o, v[i]->l1);
		json_out_raw(&o, ",\"l2\":");
		json_out_str(&o, v[i]->l2);
		json_out_raw(&o, ",\"value\":");
		json_out_raw(&o, digits);
		json_out_raw(&o, "}");
	}
	json_out_raw(&o, "]");
	if (!o.ok || rows == 0) {	/* !o.ok cannot be: o.len is enough */
		free(o.buf);
		return o.ok ? STORE_OK : STORE_ERROR;
	}
	o.buf[o.off] = '\0';
	if ((st = store_stmt(s, most ? STORE_Q_METRICS_MAX :
	    STORE_Q_METRICS_ADD)) == NULL) {
		free(o.buf);
		return store_last(s);
	}
	rc = db_bind_text(st, 1, o.buf);
	free(o.buf);
	if (rc != DB_OK) {
		db_reset(st);
		return store_last(s);
	}
	return store_send(st);
}

void
store_metrics_send(struct store *s, const struct metrics_set *m)
{
	struct metrics_row	**v;
	enum store_status	  rc;
	int			  i;

	/* A failure is the flight's: it says how it went when it lands. */
	rc = prune_minutes(s, m);
	if (!store_sets(s) || m->n < 1 ||
	    (v = calloc((size_t)m->n, sizeof(*v))) == NULL) {
		for (i = 0; i < m->n && rc == STORE_OK; i++)
			if (m->rows[i].value != 0)
				rc = put(s, &m->rows[i]);
		return;
	}
	for (i = 0; i < m->n; i++)
		v[i] = &m->rows[i];
	qsort(v, (size_t)m->n, sizeof(*v), by_key);
	if (rc == STORE_OK && (rc = put_set(s, v, m->n, 0)) == STORE_OK)
		(void)put_set(s, v, m->n, 1);
	free(v);
}

enum store_status
store_metrics_forget(struct store *s, const char *endpoints,
    const char *destinations, int64_t *n)
{
	struct db_stmt	*st;
	enum db_rc	 rc;

	*n = 0;
	/* NULL would read as no names at all: every series would go. */
	if (endpoints == NULL || destinations == NULL)
		return STORE_ERROR;
	if ((st = store_stmt(s, STORE_Q_METRIC_FORGET)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, endpoints) != DB_OK ||
	    db_bind_opt(st, 2, destinations) != DB_OK) {
		db_reset(st);
		return STORE_NOMEM;
	}
	if ((rc = db_step_done(st)) == DB_DONE)
		*n = db_changes(st);
	return store_status_of(rc);
}

enum store_status
store_metrics_drop(struct store *s, const char *labels, int64_t *n)
{
	struct db_stmt	*st;
	enum db_rc	 rc;

	*n = 0;
	if (labels == NULL)
		return STORE_ERROR;
	if ((st = store_stmt(s, STORE_Q_METRIC_DROP)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, labels) != DB_OK) {
		db_reset(st);
		return STORE_NOMEM;
	}
	if ((rc = db_step_done(st)) == DB_DONE)
		*n = db_changes(st);
	return store_status_of(rc);
}

/* A time stamp's row, name (a literal) at now_ms, sent. */
static enum store_status
stamp(struct store *s, const char *name, int64_t now_ms)
{
	struct metrics_row	r;

	memset(&r, 0, sizeof(r));
	(void)snprintf(r.name, sizeof(r.name), "%s", name);
	r.value = now_ms;
	return put(s, &r);
}

enum store_status
store_metrics_beat(struct store *s, int64_t now_ms)
{
	enum store_status	rc;

	if ((rc = stamp(s, "heartbeat_ms", now_ms)) != STORE_OK)
		return rc;
	return store_land(s, NULL);
}

enum store_status
store_metrics_probe(struct store *s, int64_t now_ms)
{
	enum store_status	rc;

	if ((rc = store_begin(s)) == STORE_OK && (rc = stamp(s, "probe_ms",
	    now_ms)) == STORE_OK && (rc = store_commit(s)) == STORE_OK)
		return STORE_OK;
	store_rollback(s);
	return rc;
}

enum store_status
store_metrics_read(struct store *s, struct metrics_set *out)
{
	struct db_stmt	*st;
	const char	*name, *l1, *l2;
	enum db_rc	 rc;

	if ((st = store_stmt(s, STORE_Q_METRIC_LIST)) == NULL)
		return store_last(s);
	while ((rc = db_step(st)) == DB_ROW) {
		name = db_col_text(st, 0);
		l1 = db_col_text(st, 1);
		l2 = db_col_text(st, 2);
		if (name == NULL || l1 == NULL || l2 == NULL)
			continue;
		if (metrics_keeps_max(name))
			(void)metrics_set_max(out, name, l1, l2,
			    db_col_int64(st, 3));
		else
			(void)metrics_set_add(out, name, l1, l2,
			    db_col_int64(st, 3));
	}
	db_reset(st);
	return store_status_of(rc);
}

static int
by_dest(const void *a, const void *b)
{
	return strcmp(((const struct store_dest_gauge *)a)->destination,
	    ((const struct store_dest_gauge *)b)->destination);
}

enum store_status
store_dest_gauges(struct store *s, struct store_dest_gauge *g, int max,
    int *n)
{
	struct db_stmt		*st;
	struct store_dest_gauge	*d;
	enum store_state	 state;
	const char		*dest;
	int64_t			 oldest;
	enum db_rc		 rc;
	int			 i;

	*n = 0;
	if ((st = store_stmt(s, STORE_Q_DEST_GAUGES)) == NULL)
		return store_last(s);
	while ((rc = db_step(st)) == DB_ROW) {
		dest = db_col_text(st, 0);
		if (dest == NULL || strlen(dest) > HB_ID_MAX ||
		    store_state_parse(db_col_text(st, 1),
		    &state) != 0)
			continue;
		for (i = 0; i < *n && strcmp(g[i].destination, dest) != 0; i++)
			continue;
		if (i == *n) {
			if (*n == max)
				continue;
			d = &g[(*n)++];
			memset(d, 0, sizeof(*d));
			memcpy(d->destination, dest, strlen(dest) + 1);
		}
		d = &g[i];
		d->n[state] += db_col_int64(st, 2);
		oldest = db_col_int64(st, 3);
		if ((state == STORE_PENDING || state == STORE_LEASED) &&
		    oldest > 0 && (d->oldest_ms == 0 || oldest < d->oldest_ms))
			d->oldest_ms = oldest;
	}
	db_reset(st);
	if (*n > 1)
		qsort(g, (size_t)*n, sizeof(*g), by_dest);
	return store_status_of(rc);
}

enum store_status
store_dest_errors(struct store *s, struct store_dest_gauge *g, int n)
{
	struct db_stmt	*st;
	const char	*dest, *err;
	enum db_rc	 rc;
	int		 i;

	if ((st = store_stmt(s, STORE_Q_DEST_ERRORS)) == NULL)
		return store_last(s);
	while ((rc = db_step(st)) == DB_ROW) {
		if ((dest = db_col_text(st, 0)) == NULL ||
		    (err = db_col_text(st, 2)) == NULL)
			continue;
		for (i = 0; i < n && strcmp(g[i].destination, dest) != 0; i++)
			continue;
		if (i == n)
			continue;
		g[i].error_ms = db_col_int64(st, 1);
		(void)snprintf(g[i].error, sizeof(g[i].error), "%s", err);
	}
	db_reset(st);
	return store_status_of(rc);
}
