/*
 * store_outbox.c: the dispatcher's leases, attempts, recovery and moves (see
 * store_outbox.h).
 */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "store_metrics.h"
#include "store_outbox.h"


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
		status = store_status_of(s, rc);
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
		status = store_status_of(s, rc);
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

/*
 * Leases one row of a claim inside the caller's transaction, and records
 * its attempt's start.
 */
static enum store_status
lease_one(struct store *s, struct store_claim_row *c, const char *owner,
    int64_t now)
{
	const struct store_row	*r = &c->row;
	struct store_lease	*l = &c->lease;
	struct db_stmt		*st;
	const char		*payload;
	enum store_status	 rc = STORE_OK;
	enum db_rc		 step;

	if ((st = store_stmt(s, STORE_Q_LEASE)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, r->action) != DB_OK ||
	    db_bind_opt(st, 2, owner) != DB_OK ||
	    db_bind_int64(st, 3, c->lease_until) != DB_OK ||
	    db_bind_int64(st, 4, now) != DB_OK ||
	    db_bind_int64(st, 5, r->attempts) != DB_OK)
		return STORE_NOMEM;
	if ((step = db_step(st)) == DB_ROW) {
		payload = db_col_text(st, 0);
		if (payload == NULL)
			rc = STORE_ERROR;
		else if ((l->payload = strdup(payload)) == NULL)
			rc = STORE_NOMEM;
		step = db_step(st);
	} else if (step == DB_DONE) {
		/* Another worker took it, or an operator moved it. */
		db_reset(st);
		return STORE_OK;
	}
	db_reset(st);
	if (rc == STORE_OK && step != DB_DONE)
		rc = store_status_of(s, step);
	if (rc != STORE_OK)
		return rc;
	memcpy(l->action, r->action, sizeof(l->action));
	memcpy(l->tenant, r->tenant, sizeof(l->tenant));
	memcpy(l->destination, r->destination, sizeof(l->destination));
	l->attempt = r->attempts + 1;
	l->lease_until = c->lease_until;
	if ((st = store_stmt(s, STORE_Q_ATTEMPT_START)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, l->action) != DB_OK ||
	    db_bind_int64(st, 2, l->attempt) != DB_OK ||
	    db_bind_opt(st, 3, owner) != DB_OK ||
	    db_bind_int64(st, 4, now) != DB_OK)
		return STORE_NOMEM;
	if ((step = db_step(st)) != DB_ROW)
		return step == DB_DONE ? STORE_ERROR : store_status_of(s, step);
	l->attempt_id = db_col_int64(st, 0);
	if ((step = db_step(st)) != DB_DONE) {
		db_reset(st);
		return step == DB_ROW ? STORE_ERROR : store_status_of(s, step);
	}
	c->claimed = 1;
	return STORE_OK;
}

enum store_status
store_outbox_claim(struct store *s, struct store_claim_row *c, int n,
    const char *owner, int64_t now)
{
	enum store_status	rc;
	int			i, any = 0;

	for (i = 0; i < n; i++) {
		c[i].claimed = 0;
		memset(&c[i].lease, 0, sizeof(c[i].lease));
	}
	if (n <= 0)
		return STORE_OK;
	if ((rc = store_begin(s)) != STORE_OK)
		return rc;
	for (i = 0; i < n; i++) {
		if ((rc = lease_one(s, &c[i], owner, now)) != STORE_OK)
			goto fail;
		any |= c[i].claimed;
	}
	if (!any) {
		/* Others took them all: nothing to commit. */
		store_rollback(s);
		return STORE_OK;
	}
	if ((rc = store_commit(s)) != STORE_OK)
		goto fail;
	return STORE_OK;
fail:
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

static enum store_status
attempt_end(struct store *s, int64_t id, int64_t now, long status,
    const char *error)
{
	struct db_stmt	*st;

	if ((st = store_stmt(s, STORE_Q_ATTEMPT_END)) == NULL)
		return store_last(s);
	if (db_bind_int64(st, 1, id) != DB_OK ||
	    db_bind_int64(st, 2, now) != DB_OK ||
	    (status > 0 ? db_bind_int64(st, 3, status) :
	    db_bind_null(st, 3)) != DB_OK ||
	    db_bind_opt(st, 4, error) != DB_OK)
		return STORE_NOMEM;
	return store_status_of(s, db_step_done(st));
}

/* One attempt's end, inside the caller's transaction. */
static enum store_status
finish_one(struct store *s, struct store_finish *f, const char *owner)
{
	const struct store_lease	*l = f->lease;
	struct db_stmt			*st;
	enum store_status		 rc;

	if ((rc = attempt_end(s, l->attempt_id, f->ended, f->http_status,
	    f->error)) != STORE_OK)
		return rc;
	if ((st = store_stmt(s, STORE_Q_FINISH)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, l->action) != DB_OK ||
	    db_bind_opt(st, 2, store_state_name(outcome_state[f->out])) !=
	    DB_OK ||
	    db_bind_int64(st, 3, f->next_at) != DB_OK ||
	    db_bind_int64(st, 4, f->ended) != DB_OK ||
	    (f->http_status > 0 ? db_bind_int64(st, 5, f->http_status) :
	    db_bind_null(st, 5)) != DB_OK ||
	    db_bind_opt(st, 6, f->error) != DB_OK ||
	    db_bind_opt(st, 7, owner) != DB_OK ||
	    db_bind_int64(st, 8, l->attempt) != DB_OK)
		return STORE_NOMEM;
	if ((rc = store_status_of(s, db_step_done(st))) != STORE_OK)
		return rc;
	if (db_changes(st) > 0)
		return STORE_OK;
	f->lost = 1;
	if (f->out != STORE_OUT_DELIVERED)
		return STORE_OK;
	/* Recovery could not know: the destination has it. */
	if ((st = store_stmt(s, STORE_Q_MOVE_DELIVERED)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, l->action) != DB_OK ||
	    db_bind_int64(st, 2, f->ended) != DB_OK ||
	    db_bind_opt(st, 3, "delivered; recorded after the lease"
	    " expired") != DB_OK)
		return STORE_NOMEM;
	return store_status_of(s, db_step_done(st));
}

enum store_status
store_outbox_finish(struct store *s, struct store_finish *f, int n,
    const char *owner)
{
	return store_outbox_finish_counted(s, f, n, owner, NULL);
}

enum store_status
store_outbox_finish_counted(struct store *s, struct store_finish *f, int n,
    const char *owner, const struct metrics_set *m)
{
	enum store_status	rc;
	int			i;

	for (i = 0; i < n; i++) {
		f[i].lost = 0;
		if ((unsigned)f[i].out > STORE_OUT_UNKNOWN ||
		    f[i].lease == NULL)
			return STORE_ERROR;
	}
	if (n <= 0)
		return STORE_OK;
	if ((rc = store_begin(s)) != STORE_OK)
		return rc;
	for (i = 0; i < n; i++)
		if ((rc = finish_one(s, &f[i], owner)) != STORE_OK)
			goto fail;
	if (m != NULL && (rc = store_metrics_add(s, m)) != STORE_OK)
		goto fail;
	if ((rc = store_commit(s)) != STORE_OK)
		goto fail;
	return STORE_OK;
fail:
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
		(*n)++;
	}
	db_reset(st);
	return rc == DB_ROW ? STORE_OK : store_status_of(s, rc);
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
	if ((rc = store_status_of(s, db_step_done(st))) != STORE_OK)
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
	if ((rc = store_status_of(s, db_step_done(st))) != STORE_OK ||
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
guarded(struct store *s, struct db_stmt *st, int *changed)
{
	enum store_status	rc;

	if ((rc = store_status_of(s, db_step_done(st))) == STORE_OK)
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
	return guarded(s, st, changed);
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
	return guarded(s, st, claimed);
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
	return guarded(s, st, changed);
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
	return guarded(s, st, changed);
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
	if ((rc = store_status_of(s, db_step_done(st))) == STORE_OK)
		*changed = db_changes(st) > 0;
	return rc;
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
	return store_status_of(s, rc);
}
