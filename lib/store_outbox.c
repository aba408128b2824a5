/*
 * store_outbox.c: the dispatcher's leases, attempts, recovery and moves (see
 * store_outbox.h).
 */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "store_outbox.h"


void
store_lease_clear(struct store_lease *l)
{
	if (l == NULL)
		return;
	free(l->payload);
	memset(l, 0, sizeof(*l));
}

/* Steps a pick query: fills the row; *found 0 if none. */
static enum store_status
pick(struct store *s, enum store_q q, int64_t now, const char *cursor,
    struct store_row *r, int *found)
{
	sqlite3_stmt		*st;
	enum store_status	 status = STORE_OK;
	int			 rc;

	*found = 0;
	if ((st = sql_stmt(&s->sql, q)) == NULL)
		return store_last(s);
	if (sqlite3_bind_int64(st, 1, now) != SQLITE_OK ||
	    (cursor != NULL && sql_bind_text(st, 2, cursor) != SQLITE_OK))
		return STORE_NOMEM;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sql_col_copy(st, 0, r->action, sizeof(r->action)) != 0 ||
		    sql_col_copy(st, 1, r->tenant, sizeof(r->tenant)) != 0 ||
		    sql_col_copy(st, 2, r->destination,
		    sizeof(r->destination)) != 0)
			status = STORE_ERROR;
		r->attempts = sqlite3_column_int(st, 3);
		*found = status == STORE_OK;
	} else if (rc != SQLITE_DONE)
		status = store_status_of(rc);
	sqlite3_reset(st);
	return status;
}

enum store_status
store_outbox_pick(struct store *s, int64_t now, const char *cursor,
    struct store_row *r, int *found)
{
	enum store_status	rc;

	memset(r, 0, sizeof(*r));
	/* The next tenant after the cursor, else from the start. */
	if (cursor[0] != '\0' && (rc = pick(s, STORE_Q_PICK_AFTER, now,
	    cursor, r, found)) != STORE_OK)
		return rc;
	if (cursor[0] != '\0' && *found)
		return STORE_OK;
	return pick(s, STORE_Q_PICK_ANY, now, NULL, r, found);
}

enum store_status
store_outbox_claim(struct store *s, const struct store_row *r,
    const char *owner, int64_t now, int64_t lease_until,
    struct store_lease *l, int *claimed)
{
	sqlite3_stmt		*st;
	const char		*payload;
	enum store_status	 rc;
	int			 step;

	memset(l, 0, sizeof(*l));
	*claimed = 0;
	if ((rc = store_begin(s)) != STORE_OK)
		return rc;
	if ((st = sql_stmt(&s->sql, STORE_Q_LEASE)) == NULL) {
		rc = store_last(s);
		goto fail;
	}
	if (sql_bind_text(st, 1, r->action) != SQLITE_OK ||
	    sql_bind_text(st, 2, owner) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, lease_until) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, now) != SQLITE_OK ||
	    sqlite3_bind_int(st, 5, r->attempts) != SQLITE_OK) {
		rc = STORE_NOMEM;
		goto fail;
	}
	if ((step = sqlite3_step(st)) == SQLITE_ROW) {
		payload = (const char *)sqlite3_column_text(st, 0);
		if (payload == NULL)
			rc = STORE_ERROR;
		else if ((l->payload = strdup(payload)) == NULL)
			rc = STORE_NOMEM;
		step = sqlite3_step(st);
	} else if (step == SQLITE_DONE) {
		/* Another worker took it, or an operator moved it. */
		sqlite3_reset(st);
		store_rollback(s);
		return STORE_OK;
	}
	sqlite3_reset(st);
	if (rc == STORE_OK && step != SQLITE_DONE)
		rc = store_status_of(step);
	if (rc != STORE_OK)
		goto fail;
	memcpy(l->action, r->action, sizeof(l->action));
	memcpy(l->tenant, r->tenant, sizeof(l->tenant));
	memcpy(l->destination, r->destination, sizeof(l->destination));
	l->attempt = r->attempts + 1;
	l->lease_until = lease_until;
	if ((st = sql_stmt(&s->sql, STORE_Q_ATTEMPT_START)) == NULL) {
		rc = store_last(s);
		goto fail;
	}
	if (sql_bind_text(st, 1, l->action) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, l->attempt) != SQLITE_OK ||
	    sql_bind_text(st, 3, owner) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, now) != SQLITE_OK) {
		rc = STORE_NOMEM;
		goto fail;
	}
	if ((rc = store_status_of(sql_step_done(st))) != STORE_OK)
		goto fail;
	l->attempt_id = sqlite3_last_insert_rowid(s->sql.db);
	if ((rc = store_commit(s)) != STORE_OK)
		goto fail;
	*claimed = 1;
	return STORE_OK;
fail:
	store_rollback(s);
	store_lease_clear(l);
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
	sqlite3_stmt	*st;

	if ((st = sql_stmt(&s->sql, STORE_Q_ATTEMPT_END)) == NULL)
		return store_last(s);
	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, now) != SQLITE_OK ||
	    (status > 0 ? sqlite3_bind_int64(st, 3, status) :
	    sqlite3_bind_null(st, 3)) != SQLITE_OK ||
	    sql_bind_text(st, 4, error) != SQLITE_OK)
		return STORE_NOMEM;
	return store_status_of(sql_step_done(st));
}

enum store_status
store_outbox_finish(struct store *s, const struct store_lease *l,
    const char *owner, enum store_outcome out, int64_t now, int64_t next_at,
    long http_status, const char *error, int *lost)
{
	sqlite3_stmt		*st;
	enum store_status	 rc;

	*lost = 0;
	if ((unsigned)out > STORE_OUT_UNKNOWN)
		return STORE_ERROR;
	if ((rc = store_begin(s)) != STORE_OK)
		return rc;
	if ((rc = attempt_end(s, l->attempt_id, now, http_status, error)) !=
	    STORE_OK)
		goto fail;
	if ((st = sql_stmt(&s->sql, STORE_Q_FINISH)) == NULL) {
		rc = store_last(s);
		goto fail;
	}
	if (sql_bind_text(st, 1, l->action) != SQLITE_OK ||
	    sql_bind_text(st, 2, store_state_name(outcome_state[out])) !=
	    SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, next_at) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, now) != SQLITE_OK ||
	    (http_status > 0 ? sqlite3_bind_int64(st, 5, http_status) :
	    sqlite3_bind_null(st, 5)) != SQLITE_OK ||
	    sql_bind_text(st, 6, error) != SQLITE_OK ||
	    sql_bind_text(st, 7, owner) != SQLITE_OK ||
	    sqlite3_bind_int(st, 8, l->attempt) != SQLITE_OK) {
		rc = STORE_NOMEM;
		goto fail;
	}
	if ((rc = store_status_of(sql_step_done(st))) != STORE_OK)
		goto fail;
	*lost = sqlite3_changes(s->sql.db) == 0;
	if ((rc = store_commit(s)) != STORE_OK)
		goto fail;
	return STORE_OK;
fail:
	store_rollback(s);
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
	sqlite3_stmt		*st;
	struct store_row	*r;
	int			 rc = SQLITE_DONE;

	*n = 0;
	if (max <= 0)
		return STORE_OK;
	if ((st = sql_stmt(&s->sql, q)) == NULL)
		return store_last(s);
	if (sqlite3_bind_int64(st, 1, now) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, max) != SQLITE_OK)
		return STORE_NOMEM;
	while (*n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = &rows[*n];
		if (sql_col_copy(st, 0, r->action, sizeof(r->action)) != 0 ||
		    sql_col_copy(st, 1, r->tenant, sizeof(r->tenant)) != 0 ||
		    sql_col_copy(st, 2, r->destination,
		    sizeof(r->destination)) != 0 ||
		    sql_col_copy(st, 4, r->owner, sizeof(r->owner)) != 0)
			continue;
		r->attempts = sqlite3_column_int(st, 3);
		r->lease_until = sqlite3_column_int64(st, 5);
		(*n)++;
	}
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? STORE_OK : store_status_of(rc);
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
	sqlite3_stmt		*st;
	enum store_status	 rc;

	*changed = 0;
	if ((unsigned)out > STORE_OUT_UNKNOWN || out == STORE_OUT_DELIVERED)
		return STORE_ERROR;
	if ((rc = store_begin(s)) != STORE_OK)
		return rc;
	if ((st = sql_stmt(&s->sql, STORE_Q_EXPIRE_MOVE)) == NULL) {
		rc = store_last(s);
		goto fail;
	}
	if (sql_bind_text(st, 1, r->action) != SQLITE_OK ||
	    sql_bind_text(st, 2, store_state_name(outcome_state[out])) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, now) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, at) != SQLITE_OK ||
	    sql_bind_text(st, 5, r->owner) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 6, r->lease_until) != SQLITE_OK ||
	    sql_bind_text(st, 7, note) != SQLITE_OK) {
		rc = STORE_NOMEM;
		goto fail;
	}
	if ((rc = store_status_of(sql_step_done(st))) != STORE_OK)
		goto fail;
	if (sqlite3_changes(s->sql.db) == 0) {
		store_rollback(s);
		return STORE_OK;
	}
	if ((st = sql_stmt(&s->sql, STORE_Q_EXPIRE_ATTEMPTS)) == NULL) {
		rc = store_last(s);
		goto fail;
	}
	if (sql_bind_text(st, 1, r->action) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, now) != SQLITE_OK) {
		rc = STORE_NOMEM;
		goto fail;
	}
	if ((rc = store_status_of(sql_step_done(st))) != STORE_OK ||
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
guarded(struct store *s, sqlite3_stmt *st, int *changed)
{
	enum store_status	rc;

	if ((rc = store_status_of(sql_step_done(st))) == STORE_OK)
		*changed = sqlite3_changes(s->sql.db) > 0;
	return rc;
}

enum store_status
store_outbox_defer(struct store *s, const struct store_row *r, int64_t now,
    int64_t at, int *changed)
{
	sqlite3_stmt	*st;

	*changed = 0;
	if ((st = sql_stmt(&s->sql, STORE_Q_EXPIRE_DEFER)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, r->action) != SQLITE_OK ||
	    sql_bind_text(st, 2, r->owner) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, r->lease_until) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, at) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 5, now) != SQLITE_OK)
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
	sqlite3_stmt	*st;

	*claimed = 0;
	if ((st = sql_stmt(&s->sql, STORE_Q_CHECK_CLAIM)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, action) != SQLITE_OK ||
	    sql_bind_text(st, 2, owner) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, now) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, until) != SQLITE_OK)
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
	sqlite3_stmt			*st;

	*changed = 0;
	if ((unsigned)c > STORE_CHECKED_AGAIN)
		return STORE_ERROR;
	if ((st = sql_stmt(&s->sql, STORE_Q_CHECK_END)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, action) != SQLITE_OK ||
	    sql_bind_text(st, 2, owner) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, until) != SQLITE_OK ||
	    sql_bind_text(st, 4, store_state_name(state[c])) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 5, now) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 6, c == STORE_CHECKED_AGAIN ? at : now) !=
	    SQLITE_OK ||
	    sql_bind_text(st, 7, note) != SQLITE_OK)
		return STORE_NOMEM;
	return guarded(s, st, changed);
}

enum store_status
store_outbox_recheck(struct store *s, const char *action, int64_t now,
    int64_t at, const char *note, int *changed)
{
	sqlite3_stmt	*st;

	*changed = 0;
	if ((st = sql_stmt(&s->sql, STORE_Q_RECHECK_DUE)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, action) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, now) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, at) != SQLITE_OK ||
	    sql_bind_text(st, 4, note) != SQLITE_OK)
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
	sqlite3_stmt		*st;
	enum store_status	 rc;

	*changed = 0;
	if ((unsigned)m > STORE_MOVE_RECHECK)
		return STORE_ERROR;
	if ((st = sql_stmt(&s->sql, qs[m])) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, action) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, now) != SQLITE_OK ||
	    sql_bind_text(st, 3, note) != SQLITE_OK ||
	    (m == STORE_MOVE_RECHECK &&
	    sqlite3_bind_int64(st, 4, at) != SQLITE_OK))
		return STORE_NOMEM;
	if ((rc = store_status_of(sql_step_done(st))) == STORE_OK)
		*changed = sqlite3_changes(s->sql.db) > 0;
	return rc;
}

enum store_status
store_outbox_next(struct store *s, int64_t now, int64_t *in_ms)
{
	sqlite3_stmt	*st;
	int		 rc;

	*in_ms = -1;
	if ((st = sql_stmt(&s->sql, STORE_Q_NEXT_DUE)) == NULL)
		return store_last(s);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) != SQLITE_NULL) {
			*in_ms = sqlite3_column_int64(st, 0) - now;
			if (*in_ms < 0)
				*in_ms = 0;
		}
		rc = SQLITE_DONE;
	}
	sqlite3_reset(st);
	return store_status_of(rc);
}
