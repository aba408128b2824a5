/*
 * store/outbox.c: the outbox: an accepted action's row, the dispatcher's
 * leases, attempts, recovery and moves, the operator's list (see
 * store/outbox.h).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "base/fault.h"
#include "store/flight.h"
#include "store/metrics.h"
#include "store/outbox.h"
#include "store/record.h"
#include "store/store_int.h"


enum store_status
store_outbox_add(struct store *s, const struct store_action *a)
{
	struct db_stmt	*st;

	if (fault_fire(FAULT_OUTBOX_INSERT))
		return STORE_IO;
	if ((st = store_stmt(s, STORE_Q_OUTBOX_ADD)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, a->id) != DB_OK ||
	    db_bind_opt(st, 2, a->tenant) != DB_OK ||
	    db_bind_opt(st, 3, a->destination) != DB_OK ||
	    db_bind_opt(st, 4, a->payload) != DB_OK ||
	    db_bind_int64(st, 5, a->now) != DB_OK)
		return STORE_NOMEM;
	return store_send(st);
}

enum store_status
store_outbox_list(struct store *s, enum store_state state,
    const struct store_list_filter *f, cJSON **out)
{
	struct db_stmt	*st;

	*out = NULL;
	f = store_filter(f);
	if (state != STORE_STATE__N && store_state_name(state) == NULL)
		return STORE_ERROR;
	if ((st = store_stmt(s, state == STORE_STATE__N ? STORE_Q_LIST_ALL :
	    STORE_Q_LIST_STATE)) == NULL)
		return store_last(s);
	/* NULL for STORE_STATE__N: every state. */
	if (db_bind_opt(st, 1, store_state_name(state)) != DB_OK ||
	    db_bind_int64(st, 2, store_filter_limit(f)) != DB_OK ||
	    db_bind_opt(st, 3, f->destination) != DB_OK ||
	    db_bind_opt(st, 4, f->tenant) != DB_OK ||
	    db_bind_int64(st, 5, f->since) != DB_OK)
		return STORE_NOMEM;
	return store_status_of(db_json_rows(st, out));
}

void
store_lease_clear(struct store_lease *l)
{
	if (l == NULL)
		return;
	free(l->payload);
	memset(l, 0, sizeof(*l));
}

/* Copies a picked row's columns (action, tenant, destination, attempts). */
static enum store_status
pick_row(struct db_stmt *st, struct store_row *r)
{
	memset(r, 0, sizeof(*r));
	if (db_col_copy(st, 0, r->action, sizeof(r->action)) != 0 ||
	    db_col_copy(st, 1, r->tenant, sizeof(r->tenant)) != 0 ||
	    db_col_copy(st, 2, r->destination, sizeof(r->destination)) != 0)
		return STORE_ERROR;
	r->attempts = (int)db_col_int64(st, 3);
	return STORE_OK;
}

/* The first tenant after `after` with a due row into t; *found 0 if none. */
static enum store_status
next_tenant(struct store *s, int64_t now, const char *after, char *t,
    size_t tlen, int *found)
{
	struct store_row	 r;
	struct db_stmt		*st;
	enum store_status	 status = STORE_OK;
	enum db_rc		 rc;

	*found = 0;
	if ((st = store_stmt(s, STORE_Q_PICK_AFTER)) == NULL)
		return store_last(s);
	/* Bound as is: "" (every tenant is after it) is not NULL here. */
	if (db_bind_int64(st, 1, now) != DB_OK ||
	    db_bind_text(st, 2, after) != DB_OK)
		return STORE_NOMEM;
	if ((rc = db_step(st)) == DB_ROW) {
		if ((status = pick_row(st, &r)) == STORE_OK &&
		    strlen(r.tenant) < tlen) {
			memcpy(t, r.tenant, strlen(r.tenant) + 1);
			*found = 1;
		}
	} else if (rc != DB_DONE)
		status = store_status_of(rc);
	db_reset(st);
	return status;
}

/* Up to `want` of tenant t's due rows from the skip'th on, into rows. */
static enum store_status
tenant_rows(struct store *s, int64_t now, const char *t, int skip, int want,
    struct store_row *rows, int *got)
{
	struct db_stmt		*st;
	enum store_status	 status = STORE_OK;
	enum db_rc		 rc = DB_DONE;

	*got = 0;
	if ((st = store_stmt(s, STORE_Q_PICK_TENANT)) == NULL)
		return store_last(s);
	if (db_bind_int64(st, 1, now) != DB_OK ||
	    db_bind_opt(st, 2, t) != DB_OK ||
	    db_bind_int64(st, 3, want) != DB_OK ||
	    db_bind_int64(st, 4, skip) != DB_OK)
		return STORE_NOMEM;
	while (*got < want && (rc = db_step(st)) == DB_ROW) {
		if ((status = pick_row(st, &rows[*got])) != STORE_OK)
			break;
		(*got)++;
	}
	if (status == STORE_OK && rc != DB_ROW && rc != DB_DONE)
		status = store_status_of(rc);
	db_reset(st);
	return status;
}

/* A picked row's place in the batch: its tenant's turn k, tenant t. */
struct turn {
	int	k, t, i;
};

static int
turn_cmp(const void *a, const void *b)
{
	const struct turn	*x = a, *y = b;

	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

/*
 * The tenants with due rows, from the first after cursor, wrapping, at
 * most max: phase 0 takes those after cursor, phase 1 those from the
 * start up to cursor itself.
 */
static enum store_status
due_tenants(struct store *s, int64_t now, const char *cursor,
    char (*tenants)[HB_ID_MAX + 1], int max, int *nt)
{
	enum store_status	rc;
	const char		*after = cursor;
	int			phase = 0, found;

	*nt = 0;
	while (*nt < max) {
		if ((rc = next_tenant(s, now, after, tenants[*nt],
		    sizeof(tenants[0]), &found)) != STORE_OK)
			return rc;
		if (found && phase == 1 && strcmp(tenants[*nt], cursor) > 0)
			found = 0;	/* wrapped round to phase 0's */
		if (!found) {
			if (phase == 1 || cursor[0] == '\0')
				break;
			phase = 1;
			after = "";
			continue;
		}
		after = tenants[(*nt)++];
	}
	return STORE_OK;
}

enum store_status
store_outbox_pick(struct store *s, int64_t now, const char *cursor,
    struct store_row *rows, int max, int *n)
{
	char			(*tenants)[HB_ID_MAX + 1] = NULL;
	struct store_row	*got = NULL;
	struct turn		*turns = NULL;
	int			*taken = NULL, *more = NULL;
	enum store_status	 rc = STORE_NOMEM;
	int			 nt, total = 0, nmore, share, want, k, t, i;

	*n = 0;
	if (max <= 0)
		return STORE_OK;
	if ((tenants = calloc((size_t)max, sizeof(*tenants))) == NULL ||
	    (got = calloc((size_t)max, sizeof(*got))) == NULL ||
	    (turns = calloc((size_t)max, sizeof(*turns))) == NULL ||
	    (taken = calloc((size_t)max, sizeof(*taken))) == NULL ||
	    (more = calloc((size_t)max, sizeof(*more))) == NULL)
		goto out;
	if ((rc = due_tenants(s, now, cursor, tenants, max, &nt)) != STORE_OK)
		goto out;
	for (t = 0; t < nt; t++)
		more[t] = 1;
	/*
	 * Rounds of equal shares (at least one row each, so every tenant
	 * found is in the batch), until the batch is full or no tenant has
	 * more: a tenant that gave less than its share has no more due.
	 */
	for (nmore = nt; total < max && nmore > 0; ) {
		share = (max - total) / nmore;
		if (share < 1)
			share = 1;
		for (t = 0; t < nt && total < max; t++) {
			if (!more[t])
				continue;
			want = share < max - total ? share : max - total;
			if ((rc = tenant_rows(s, now, tenants[t], taken[t], want,
			    got + total, &k)) != STORE_OK)
				goto out;
			for (i = 0; i < k; i++) {
				turns[total + i].k = taken[t] + i;
				turns[total + i].t = t;
				turns[total + i].i = total + i;
			}
			taken[t] += k;
			total += k;
			if (k < want) {
				more[t] = 0;
				nmore--;
			}
		}
	}
	/* Interleaved: every tenant's first row, then every second, ... */
	qsort(turns, (size_t)total, sizeof(*turns), turn_cmp);
	for (i = 0; i < total; i++)
		rows[i] = got[turns[i].i];
	*n = total;
	rc = STORE_OK;
out:
	free(more);
	free(taken);
	free(turns);
	free(got);
	free(tenants);
	return rc;
}

/* The JSON text of a, for a statement's ?1; NULL when out of memory. */
static char *
json_text(cJSON *a)
{
	char	*t = a != NULL ? cJSON_PrintUnformatted(a) : NULL;

	cJSON_Delete(a);
	return t;
}

/*
 * Appends [v...] to a: for each letter of fmt, s a string (NULL: null),
 * n an int64_t, m an int64_t that is null when not above 0.
 */
static int
json_row(cJSON *a, const char *fmt, ...)
{
	cJSON		*r, *v;
	va_list		 ap;
	const char	*str;
	int64_t		 i;

	if ((r = cJSON_CreateArray()) == NULL)
		return -1;
	cJSON_AddItemToArray(a, r);
	va_start(ap, fmt);
	for (; *fmt != '\0'; fmt++) {
		if (*fmt == 's')
			v = (str = va_arg(ap, const char *)) != NULL ?
			    cJSON_CreateString(str) : cJSON_CreateNull();
		else if ((i = va_arg(ap, int64_t)) <= 0 && *fmt == 'm')
			v = cJSON_CreateNull();
		else
			v = cJSON_CreateNumber((double)i);
		if (v == NULL) {
			va_end(ap);
			return -1;
		}
		cJSON_AddItemToArray(r, v);
	}
	va_end(ap);
	return 0;
}

/* Sends statement q with ?1 = keys and the rest; *out the statement. */
static enum store_status
send_set(struct store *s, enum store_q q, const char *keys,
    const char *owner, int64_t now, int nparams, struct db_stmt **out)
{
	struct db_stmt	*st;

	*out = NULL;
	if ((st = store_stmt(s, q)) == NULL)
		return store_last(s);
	if (db_bind_text(st, 1, keys) != DB_OK ||
	    (nparams > 1 && db_bind_opt(st, 2, owner) != DB_OK) ||
	    (nparams > 2 && db_bind_int64(st, 3, now) != DB_OK))
		return STORE_NOMEM;
	*out = st;
	return store_send(st);
}

/* c[i]'s row, not claimed yet, for action (NULL: none). */
static struct store_claim_row *
claim_of(struct store_claim_row *c, int n, const char *action)
{
	int	i;

	for (i = 0; i < n; i++)
		if (c[i].claimed == 0 && strcmp(c[i].row.action, action) == 0)
			return &c[i];
	return NULL;
}

/* Files the leases' rows (action, payload, lease until) in c. */
static enum store_status
read_leases(struct db_stmt *st, struct store_claim_row *c,
    int n, int *any)
{
	struct store_claim_row	*r;
	struct store_lease	*l;
	enum db_rc		 rc;

	while ((rc = db_step(st)) == DB_ROW) {
		if ((r = claim_of(c, n, db_col_text(st, 0))) == NULL)
			continue;
		l = &r->lease;
		if ((l->payload = strdup(db_col_text(st, 1))) == NULL) {
			db_reset(st);
			return STORE_NOMEM;
		}
		memcpy(l->action, r->row.action, sizeof(l->action));
		memcpy(l->tenant, r->row.tenant, sizeof(l->tenant));
		memcpy(l->destination, r->row.destination,
		    sizeof(l->destination));
		l->attempt = r->row.attempts + 1;
		l->lease_until = db_col_int64(st, 2);
		l->horizon_from = db_col_int64(st, 3);
		l->held_ms = db_col_int64(st, 4);
		r->claimed = 1;
		*any = 1;
	}
	return store_status_of(rc);
}

/* Files the attempts' ids and numbers (action, id, n) in c's leases. */
static enum store_status
read_attempts(struct db_stmt *st, struct store_claim_row *c,
    int n)
{
	enum db_rc	rc;
	int		i, got = 0, want = 0;

	while ((rc = db_step(st)) == DB_ROW)
		for (i = 0; i < n; i++)
			if (c[i].claimed && c[i].lease.attempt_id == 0 &&
			    strcmp(c[i].lease.action, db_col_text(st, 0)) ==
			    0) {
				c[i].lease.attempt_id = db_col_int64(st, 1);
				c[i].lease.n = (int)db_col_int64(st, 2);
				got++;
				break;
			}
	for (i = 0; i < n; i++)
		want += c[i].claimed;
	if (rc == DB_DONE && got != want)
		return STORE_ERROR;	/* a lease without its attempt */
	return store_status_of(rc);
}

/*
 * The circuit of each destination of d[0 .. n) ([[tenant, destination],
 * ...] each once), read and locked into *out (calloc'd, n of them, freed
 * by the caller) and *got.
 */
static enum store_status
gate_dests(struct store *s, const char (*d)[2][HB_ID_MAX + 1], int n,
    int64_t now, struct store_circuit **out, int *got)
{
	cJSON			*a;
	char			*keys;
	enum store_status	 rc;
	int			 i, j;

	*got = 0;
	if ((*out = calloc((size_t)n, sizeof(**out))) == NULL ||
	    (a = cJSON_CreateArray()) == NULL)
		return STORE_NOMEM;
	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++)
			if (strcmp(d[i][0], d[j][0]) == 0 &&
			    strcmp(d[i][1], d[j][1]) == 0)
				break;
		if (j == i && json_row(a, "ss", d[i][0], d[i][1]) != 0) {
			cJSON_Delete(a);
			return STORE_NOMEM;
		}
	}
	if ((keys = json_text(a)) == NULL)
		return STORE_NOMEM;
	rc = store_circuit_gate(s, keys, now, *out, n, got);
	cJSON_free(keys);
	return rc;
}

/*
 * Row c's start under its destination's rate, from g's next start: held
 * (0) when that is a second or more away, else 1 with c's start and
 * lease moved to it and g's next start 1/rate s on.
 */
static int
rate_slot(struct store_claim_row *c, struct store_circuit *g, int64_t now)
{
	int64_t	slot = g->rate_next_us > now * 1000 ? g->rate_next_us :
	    now * 1000;

	if (slot >= (now + 1000) * 1000)
		return 0;
	g->rate_next_us = slot + (1000000 + c->rate - 1) / c->rate;
	c->start_at = (slot + 999) / 1000;
	c->lease_until += c->start_at - now;
	return 1;
}

/*
 * Sends the new due times of the rows of c[0 .. n) their destinations
 * hold back (retimed), so that no pick reads them again before then.
 */
static enum store_status
retime(struct store *s, const struct store_claim_row *c, int n)
{
	struct db_stmt		*st;
	enum store_status	 rc;
	cJSON			*a;
	char			*keys;
	int			 i, any = 0;

	if ((a = cJSON_CreateArray()) == NULL)
		return STORE_NOMEM;
	for (i = 0; i < n; i++)
		if (c[i].retimed && (any = 1) && json_row(a, "sn",
		    c[i].row.action, c[i].start_at) != 0) {
			cJSON_Delete(a);
			return STORE_NOMEM;
		}
	if (!any) {
		cJSON_Delete(a);
		return STORE_OK;
	}
	if ((keys = json_text(a)) == NULL)
		return STORE_NOMEM;
	rc = send_set(s, STORE_Q_CIRCUIT_RETIME, keys, NULL, 0, 1, &st);
	cJSON_free(keys);
	return rc;
}

/*
 * Sorts the rows of c[0 .. n) by what their destinations' circuits
 * x[0 .. nx) let through now: a row whose destination is paused, held by
 * a Retry-After or open is retimed (its start_at the hold's end); one
 * beyond its in-flight cap or rate is held; the first row of a circuit
 * past its cool-down is its probe, and the circuit half open (sent);
 * under a rate, a row let through gets its start.  Each row's
 * destination's hold's start goes with it.
 */
static enum store_status
gate_rows(struct store *s, struct store_claim_row *c, int n,
    struct store_circuit *x, int nx, int64_t now)
{
	struct store_circuit	*g;
	enum store_status	 rc;
	int64_t			 until;
	int			*left, *moved;
	int			 i;

	if ((left = calloc((size_t)(nx > 0 ? nx : 1), sizeof(*left))) ==
	    NULL)
		return STORE_NOMEM;
	if ((moved = calloc((size_t)(nx > 0 ? nx : 1), sizeof(*moved))) ==
	    NULL) {
		free(left);
		return STORE_NOMEM;
	}
	for (i = 0; i < nx; i++)
		left[i] = -2;		/* not asked yet */
	for (i = 0; i < n; i++) {
		if ((g = store_circuit_find(x, nx, c[i].row.tenant,
		    c[i].row.destination)) == NULL)
			continue;	/* no circuit read: let through */
		if (left[g - x] == -2)
			left[g - x] = store_circuit_allows(g, now,
			    c[i].in_flight_max);
		c[i].held_since = g->held_since;
		c[i].start_at = now;
		if (left[g - x] == 0 &&
		    (until = store_circuit_held_until(g, now)) > 0) {
			c[i].retimed = 1;
			c[i].start_at = until;
			continue;
		}
		if (left[g - x] == 0 ||
		    (c[i].rate > 0 && !rate_slot(&c[i], g, now))) {
			c[i].held = 1;
			continue;
		}
		if (left[g - x] > 0)
			left[g - x]--;
		moved[g - x] |= c[i].rate > 0;
		if (g->state == STORE_CIRCUIT_CLOSED)
			continue;
		/* The probe: half open until its lease runs out. */
		c[i].probe = 1;
		g->state = STORE_CIRCUIT_HALF;
		g->retry_at = c[i].lease_until;
		moved[g - x] = 1;
	}
	rc = retime(s, c, n);
	for (i = 0; i < nx && rc == STORE_OK; i++)
		if (moved[i])
			rc = store_circuit_put(s, &x[i], now);
	free(moved);
	free(left);
	return rc;
}

enum store_status
store_outbox_claim(struct store *s, struct store_claim_row *c, int n,
    const char *owner, int64_t now)
{
	struct db_stmt		*lease = NULL, *att = NULL;
	struct store_circuit	*x = NULL;
	enum store_status	 rc;
	cJSON			*a;
	char			*keys = NULL;
	char			(*d)[2][HB_ID_MAX + 1] = NULL;
	int			 i, nx, any = 0;

	for (i = 0; i < n; i++) {
		c[i].claimed = c[i].held = c[i].probe = c[i].retimed = 0;
		c[i].held_since = 0;
		c[i].start_at = now;
		memset(&c[i].lease, 0, sizeof(c[i].lease));
	}
	if (n <= 0)
		return STORE_OK;
	if ((d = calloc((size_t)n, sizeof(*d))) == NULL)
		return STORE_NOMEM;
	for (i = 0; i < n; i++) {
		memcpy(d[i][0], c[i].row.tenant, sizeof(d[i][0]));
		memcpy(d[i][1], c[i].row.destination, sizeof(d[i][1]));
	}
	/*
	 * Two flights: BEGIN and the circuits, locked; then the leases of
	 * the rows they let through and the attempts, and the COMMIT.
	 */
	if ((rc = store_begin(s)) != STORE_OK ||
	    (rc = gate_dests(s, (const char (*)[2][HB_ID_MAX + 1])d, n, now,
	    &x, &nx)) != STORE_OK ||
	    (rc = gate_rows(s, c, n, x, nx, now)) != STORE_OK)
		goto fail;
	/* Each action once: a row that came twice is claimed once. */
	if ((a = cJSON_CreateArray()) == NULL) {
		rc = STORE_NOMEM;
		goto fail;
	}
	for (i = 0; i < n; i++)
		if (!c[i].held && !c[i].retimed &&
		    claim_of(c, i, c[i].row.action) == NULL &&
		    json_row(a, "snn", c[i].row.action,
		    (int64_t)c[i].row.attempts, c[i].lease_until) != 0) {
			cJSON_Delete(a);
			rc = STORE_NOMEM;
			goto fail;
		}
	if ((keys = json_text(a)) == NULL) {
		rc = STORE_NOMEM;
		goto fail;
	}
	if ((rc = send_set(s, STORE_Q_LEASE, keys, owner, now, 3,
	    &lease)) == STORE_OK)
		rc = send_set(s, STORE_Q_ATTEMPT_START, keys, owner, now, 3,
		    &att);
	if (rc != STORE_OK || (rc = store_land(s, NULL)) != STORE_OK ||
	    (rc = read_leases(lease, c, n, &any)) != STORE_OK ||
	    (rc = read_attempts(att, c, n)) != STORE_OK)
		goto fail;
	cJSON_free(keys);
	keys = NULL;
	/*
	 * A probe others took is none of ours; its circuit stays as it was
	 * (the move rolls back if nothing is claimed, and another probe
	 * goes after its lease otherwise).
	 */
	for (i = 0; i < n; i++) {
		if (c[i].probe && !c[i].claimed)
			c[i].probe = 0;
		any |= c[i].retimed;
	}
	if (!any) {
		/* Others took them all, or none was let through. */
		store_rollback(s);
		free(x);
		free(d);
		return STORE_OK;
	}
	if ((rc = store_commit(s)) != STORE_OK)
		goto fail;
	free(x);
	free(d);
	return STORE_OK;
fail:
	free(x);
	free(d);
	cJSON_free(keys);
	if (lease != NULL)
		db_reset(lease);
	if (att != NULL)
		db_reset(att);
	store_rollback(s);
	for (i = 0; i < n; i++) {
		store_lease_clear(&c[i].lease);
		c[i].claimed = 0;
	}
	return rc;
}

/* Where each outcome leaves its row. */
static const enum store_state outcome_state[] = {
	[STORE_OUT_DELIVERED] = STORE_DELIVERED,
	[STORE_OUT_RETRY] = STORE_PENDING,
	[STORE_OUT_DEAD] = STORE_DEAD,
	[STORE_OUT_UNKNOWN] = STORE_UNKNOWN,
};

/*
 * The finish's three key sets (see STORE_Q_ATTEMPT_END, _FINISH and
 * _FINISH_LATE); -1 when out of memory.
 */
static int
finish_keys(const struct store_finish *f, int n, char **ends, char **moves,
    char **late)
{
	const struct store_lease	*l;
	cJSON				*e, *m, *d;
	int				 i, bad = 0;

	e = cJSON_CreateArray();
	m = cJSON_CreateArray();
	d = cJSON_CreateArray();
	for (i = 0; i < n && e != NULL && m != NULL && d != NULL && !bad;
	    i++) {
		l = f[i].lease;
		bad = json_row(e, "nnms", l->attempt_id, f[i].ended,
		    (int64_t)f[i].http_status, f[i].error) != 0 ||
		    json_row(m, "snsnnms", l->action, (int64_t)l->attempt,
		    store_state_name(outcome_state[f[i].out]), f[i].next_at,
		    f[i].ended, (int64_t)f[i].http_status, f[i].error) != 0 ||
		    (f[i].out == STORE_OUT_DELIVERED && json_row(d, "sn",
		    l->action, f[i].ended) != 0);
	}
	if (bad) {
		cJSON_Delete(e);
		cJSON_Delete(m);
		cJSON_Delete(d);
		e = m = d = NULL;
	}
	*ends = json_text(e);
	*moves = json_text(m);
	*late = json_text(d);
	if (*ends == NULL || *moves == NULL || *late == NULL) {
		cJSON_free(*ends);
		cJSON_free(*moves);
		cJSON_free(*late);
		return -1;
	}
	return 0;
}

/*
 * Moves the circuits of d[0 .. nd) by their reports, x[0 .. nx) as read
 * and locked: sends each one's row, and its release when its hold ended.
 */
static enum store_status
move_circuits(struct store *s, struct store_finish_dest *d, int nd,
    struct store_circuit *x, int nx)
{
	struct store_circuit	*g, before;
	enum store_status	 rc;
	int64_t			 held;
	int			 i;

	for (i = 0; i < nd; i++) {
		if ((g = store_circuit_find(x, nx, d[i].tenant,
		    d[i].destination)) == NULL)
			continue;
		before = *g;
		d[i].was = g->state;
		held = store_circuit_step(g, &d[i].report);
		d[i].released = held != 0;
		d[i].now = *g;
		if (held != 0 && (rc = store_circuit_release(s, g, held,
		    d[i].report.now)) != STORE_OK)
			return rc;
		/* A healthy destination's row stays as it was: not written. */
		if (!store_circuit_same(&before, g) &&
		    (rc = store_circuit_put(s, g, d[i].report.now)) !=
		    STORE_OK)
			return rc;
	}
	return STORE_OK;
}

enum store_status
store_outbox_finish(struct store *s, struct store_finish *f, int n,
    const char *owner, const struct metrics_set *m,
    struct store_finish_dest *d, int nd)
{
	struct db_stmt		*st = NULL, *moved = NULL;
	struct store_circuit	*x = NULL;
	enum store_status	 rc;
	enum db_rc		 step;
	char			*ends = NULL, *moves = NULL, *late = NULL;
	char			(*k)[2][HB_ID_MAX + 1] = NULL;
	int			 i, nx = 0;

	for (i = 0; i < n; i++) {
		f[i].lost = 0;
		if ((unsigned)f[i].out > STORE_OUT_UNKNOWN ||
		    f[i].lease == NULL)
			return STORE_ERROR;
	}
	if (n <= 0)
		return STORE_OK;
	if (finish_keys(f, n, &ends, &moves, &late) != 0)
		return STORE_NOMEM;
	if (nd > 0 && (k = calloc((size_t)nd, sizeof(*k))) == NULL) {
		rc = STORE_NOMEM;
		goto fail;
	}
	for (i = 0; i < nd; i++) {
		memcpy(k[i][0], d[i].tenant, sizeof(k[i][0]));
		memcpy(k[i][1], d[i].destination, sizeof(k[i][1]));
	}
	/*
	 * One flight: BEGIN, the attempts' ends, the counts, the rows'
	 * moves, the late deliveries and the circuits, locked; then their
	 * moves and the COMMIT.  A failure of any is the whole outcome's:
	 * nothing is recorded, and the leases expire as if the worker had
	 * died.
	 */
	if ((rc = store_begin(s)) != STORE_OK ||
	    (rc = send_set(s, STORE_Q_ATTEMPT_END, ends, owner, 0, 1,
	    &st)) != STORE_OK)
		goto fail;
	if (m != NULL)
		store_metrics_send(s, m);
	if ((rc = send_set(s, STORE_Q_FINISH, moves, owner, 0, 2,
	    &moved)) != STORE_OK ||
	    (rc = send_set(s, STORE_Q_FINISH_LATE, late, owner, 0, 1,
	    &st)) != STORE_OK)
		goto fail;
	if (nd > 0)
		rc = gate_dests(s, (const char (*)[2][HB_ID_MAX + 1])k, nd,
		    d[0].report.now, &x, &nx);
	else
		rc = store_land(s, NULL);
	if (rc != STORE_OK)
		goto fail;
	for (i = 0; i < n; i++)
		f[i].lost = 1;
	while ((step = db_step(moved)) == DB_ROW)
		for (i = 0; i < n; i++)
			if (f[i].lost && strcmp(f[i].lease->action,
			    db_col_text(moved, 0)) == 0) {
				f[i].lost = 0;
				break;
			}
	if ((rc = store_status_of(step)) != STORE_OK ||
	    (rc = move_circuits(s, d, nd, x, nx)) != STORE_OK ||
	    (rc = store_commit(s)) != STORE_OK)
		goto fail;
	free(x);
	free(k);
	cJSON_free(ends);
	cJSON_free(moves);
	cJSON_free(late);
	return STORE_OK;
fail:
	if (moved != NULL)
		db_reset(moved);
	free(x);
	free(k);
	cJSON_free(ends);
	cJSON_free(moves);
	cJSON_free(late);
	store_rollback(s);
	for (i = 0; i < n; i++)
		f[i].lost = 0;
	return rc;
}

/*
 * Runs a collecting statement (see STORE_Q_EXPIRED) bound with ?1 = now and
 * ?2 = max into rows; *n receives the count.  A row whose keys do not
 * fit is skipped.
 */
static enum store_status
collect_rows(struct store *s, enum store_q q, int64_t now,
    struct store_row *rows, int max, int *n)
{
	struct db_stmt		*st;
	struct store_row	*r;
	enum db_rc		 rc = DB_DONE;

	*n = 0;
	if (max <= 0)
		return STORE_OK;
	if ((st = store_stmt(s, q)) == NULL)
		return store_last(s);
	if (db_bind_int64(st, 1, now) != DB_OK ||
	    db_bind_int64(st, 2, max) != DB_OK)
		return STORE_NOMEM;
	while (*n < max && (rc = db_step(st)) == DB_ROW) {
		r = &rows[*n];
		if (db_col_copy(st, 0, r->action, sizeof(r->action)) != 0 ||
		    db_col_copy(st, 1, r->tenant, sizeof(r->tenant)) != 0 ||
		    db_col_copy(st, 2, r->destination,
		    sizeof(r->destination)) != 0 ||
		    db_col_copy(st, 4, r->owner, sizeof(r->owner)) != 0)
			continue;
		r->attempts = (int)db_col_int64(st, 3);
		r->lease_until = db_col_int64(st, 5);
		r->horizon_from = db_col_int64(st, 6);
		r->held_ms = db_col_int64(st, 7);
		r->held_since = db_col_int64(st, 8);
		(*n)++;
	}
	db_reset(st);
	return rc == DB_ROW ? STORE_OK : store_status_of(rc);
}

enum store_status
store_outbox_expired(struct store *s, int64_t now, struct store_row *rows,
    int max, int *n)
{
	return collect_rows(s, STORE_Q_EXPIRED, now, rows, max, n);
}

enum store_status
store_outbox_expire(struct store *s, const struct store_row *r,
    enum store_outcome out, int64_t now, int64_t at, const char *note,
    int *changed)
{
	struct db_stmt		*st;
	enum store_status	 rc;

	*changed = 0;
	if ((unsigned)out > STORE_OUT_UNKNOWN || out == STORE_OUT_DELIVERED)
		return STORE_ERROR;
	if ((rc = store_begin(s)) != STORE_OK)
		return rc;
	if ((st = store_stmt(s, STORE_Q_EXPIRE_MOVE)) == NULL) {
		rc = store_last(s);
		goto fail;
	}
	if (db_bind_opt(st, 1, r->action) != DB_OK ||
	    db_bind_opt(st, 2, store_state_name(outcome_state[out])) != DB_OK ||
	    db_bind_int64(st, 3, now) != DB_OK ||
	    db_bind_int64(st, 4, at) != DB_OK ||
	    db_bind_opt(st, 5, r->owner) != DB_OK ||
	    db_bind_int64(st, 6, r->lease_until) != DB_OK ||
	    db_bind_opt(st, 7, note) != DB_OK) {
		rc = STORE_NOMEM;
		goto fail;
	}
	if ((rc = store_status_of(db_step_done(st))) != STORE_OK)
		goto fail;
	if (db_changes(st) == 0) {
		store_rollback(s);
		return STORE_OK;
	}
	if ((st = store_stmt(s, STORE_Q_EXPIRE_ATTEMPTS)) == NULL) {
		rc = store_last(s);
		goto fail;
	}
	if (db_bind_opt(st, 1, r->action) != DB_OK ||
	    db_bind_int64(st, 2, now) != DB_OK) {
		rc = STORE_NOMEM;
		goto fail;
	}
	if ((rc = store_status_of(db_step_done(st))) != STORE_OK ||
	    (rc = store_commit(s)) != STORE_OK)
		goto fail;
	*changed = 1;
	return STORE_OK;
fail:
	store_rollback(s);
	return rc;
}

/* Steps a guarded UPDATE; *changed says whether it matched a row. */
static enum store_status
guarded(struct db_stmt *st, int *changed)
{
	enum store_status	rc;

	if ((rc = store_status_of(db_step_done(st))) == STORE_OK)
		*changed = db_changes(st) > 0;
	return rc;
}

enum store_status
store_outbox_defer(struct store *s, const struct store_row *r, int64_t now,
    int64_t at, int *changed)
{
	struct db_stmt	*st;

	*changed = 0;
	if ((st = store_stmt(s, STORE_Q_EXPIRE_DEFER)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, r->action) != DB_OK ||
	    db_bind_opt(st, 2, r->owner) != DB_OK ||
	    db_bind_int64(st, 3, r->lease_until) != DB_OK ||
	    db_bind_int64(st, 4, at) != DB_OK ||
	    db_bind_int64(st, 5, now) != DB_OK)
		return STORE_NOMEM;
	return guarded(st, changed);
}

enum store_status
store_outbox_unknown(struct store *s, int64_t now, struct store_row *rows,
    int max, int *n)
{
	return collect_rows(s, STORE_Q_UNKNOWN_DUE, now, rows, max, n);
}

enum store_status
store_outbox_check(struct store *s, const char *action, const char *owner,
    int64_t now, int64_t until, int *claimed)
{
	struct db_stmt	*st;

	*claimed = 0;
	if ((st = store_stmt(s, STORE_Q_CHECK_CLAIM)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, action) != DB_OK ||
	    db_bind_opt(st, 2, owner) != DB_OK ||
	    db_bind_int64(st, 3, now) != DB_OK ||
	    db_bind_int64(st, 4, until) != DB_OK)
		return STORE_NOMEM;
	return guarded(st, claimed);
}

enum store_status
store_outbox_checked(struct store *s, const char *action, const char *owner,
    int64_t until, enum store_checked c, int64_t now, int64_t at,
    const char *note, int *changed)
{
	static const enum store_state	 state[] = {
		[STORE_CHECKED_DELIVERED] = STORE_DELIVERED,
		[STORE_CHECKED_RESEND] = STORE_PENDING,
		[STORE_CHECKED_DEAD] = STORE_DEAD,
		[STORE_CHECKED_AGAIN] = STORE_UNKNOWN,
	};
	struct db_stmt			*st;

	*changed = 0;
	if ((unsigned)c > STORE_CHECKED_AGAIN)
		return STORE_ERROR;
	if ((st = store_stmt(s, STORE_Q_CHECK_END)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, action) != DB_OK ||
	    db_bind_opt(st, 2, owner) != DB_OK ||
	    db_bind_int64(st, 3, until) != DB_OK ||
	    db_bind_opt(st, 4, store_state_name(state[c])) != DB_OK ||
	    db_bind_int64(st, 5, now) != DB_OK ||
	    db_bind_int64(st, 6, c == STORE_CHECKED_AGAIN ? at : now) !=
	    DB_OK ||
	    db_bind_opt(st, 7, note) != DB_OK)
		return STORE_NOMEM;
	return guarded(st, changed);
}

enum store_status
store_outbox_recheck(struct store *s, const char *action, int64_t now,
    int64_t at, const char *note, int *changed)
{
	struct db_stmt	*st;

	*changed = 0;
	if ((st = store_stmt(s, STORE_Q_RECHECK_DUE)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, action) != DB_OK ||
	    db_bind_int64(st, 2, now) != DB_OK ||
	    db_bind_int64(st, 3, at) != DB_OK ||
	    db_bind_opt(st, 4, note) != DB_OK)
		return STORE_NOMEM;
	return guarded(st, changed);
}

enum store_status
store_outbox_move(struct store *s, const char *action, enum store_move m,
    int64_t now, int64_t at, const char *note, int *changed)
{
	static const enum store_q	 qs[] = {
		[STORE_MOVE_REQUEUE] = STORE_Q_MOVE_REQUEUE,
		[STORE_MOVE_DELIVERED] = STORE_Q_MOVE_DELIVERED,
		[STORE_MOVE_RESEND] = STORE_Q_MOVE_RESEND,
		[STORE_MOVE_RECHECK] = STORE_Q_MOVE_RECHECK,
	};
	struct db_stmt		*st;
	enum store_status	 rc;

	*changed = 0;
	if ((unsigned)m > STORE_MOVE_RECHECK)
		return STORE_ERROR;
	if ((st = store_stmt(s, qs[m])) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, action) != DB_OK ||
	    db_bind_int64(st, 2, now) != DB_OK ||
	    db_bind_opt(st, 3, note) != DB_OK ||
	    (m == STORE_MOVE_RECHECK &&
	    db_bind_int64(st, 4, at) != DB_OK))
		return STORE_NOMEM;
	if ((rc = store_status_of(db_step_done(st))) == STORE_OK)
		*changed = db_changes(st) > 0;
	return rc;
}

enum store_status
store_outbox_requeue(struct store *s, const struct store_requeue_filter *f,
    int dry_run, int64_t now, const char *note, cJSON **out)
{
	struct db_stmt	*st;

	*out = NULL;
	if (f->state != STORE_DEAD && f->state != STORE_UNKNOWN)
		return STORE_ERROR;
	if ((st = store_stmt(s, dry_run ? STORE_Q_REQUEUE_LIST :
	    STORE_Q_REQUEUE_SET)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, store_state_name(f->state)) != DB_OK ||
	    db_bind_opt(st, 2, f->tenant) != DB_OK ||
	    db_bind_opt(st, 3, f->destination) != DB_OK ||
	    db_bind_int64(st, 4, f->since) != DB_OK ||
	    db_bind_int64(st, 5, f->until > 0 ? f->until : INT64_MAX) !=
	    DB_OK ||
	    (!dry_run && (db_bind_int64(st, 6, now) != DB_OK ||
	    db_bind_opt(st, 7, note) != DB_OK)))
		return STORE_NOMEM;
	return store_status_of(db_json_rows(st, out));
}

enum store_status
store_outbox_next(struct store *s, int64_t now, int64_t *in_ms)
{
	struct db_stmt	*st;
	enum db_rc	 rc;

	*in_ms = -1;
	if ((st = store_stmt(s, STORE_Q_NEXT_DUE)) == NULL)
		return store_last(s);
	if ((rc = db_step(st)) == DB_ROW) {
		if (!db_col_null(st, 0)) {
			*in_ms = db_col_int64(st, 0) - now;
			if (*in_ms < 0)
				*in_ms = 0;
		}
		rc = DB_DONE;
	}
	db_reset(st);
	return store_status_of(rc);
}
