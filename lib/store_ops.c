/*
 * store_ops.c: the operator's read-outs and prune, and the poller's memory (see
 * store_ops.h).
 */
#include <string.h>

#include <cJSON.h>

#include "store_int.h"
#include "store_ops.h"


/* The JSON objects a bound statement selects, as an array. */
static enum store_status
json_rows(sqlite3_stmt *st, cJSON **out)
{
	return store_status_of(sql_json_rows(st, out));
}

enum store_status
store_outbox_list(struct store *s, enum store_state state, int limit,
    cJSON **out)
{
	struct store_list_filter	f;

	memset(&f, 0, sizeof(f));
	f.limit = limit;
	return store_outbox_list_where(s, state, &f, out);
}

enum store_status
store_attempts_list(struct store *s, const char *action, cJSON **out)
{
	return store_attempts_list_where(s, action, NULL, out);
}

enum store_status
store_conflicts_list(struct store *s, int all, cJSON **out)
{
	return store_conflicts_list_where(s, all, NULL, out);
}

enum store_status
store_conflict_resolve(struct store *s, int64_t id, const char *note,
    int64_t now, int *changed)
{
	sqlite3_stmt		*st;
	enum store_status	 rc;

	*changed = 0;
	if ((st = sql_stmt(&s->sql, STORE_Q_RESOLVE)) == NULL)
		return store_last(s);
	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, now) != SQLITE_OK ||
	    sql_bind_text(st, 3, note) != SQLITE_OK)
		return STORE_NOMEM;
	if ((rc = store_status_of(sql_step_done(st))) == STORE_OK)
		*changed = sqlite3_changes(s->sql.db) > 0;
	return rc;
}

/* Runs one bound-at-?1 DELETE; adds the rows it removed to *n. */
static enum store_status
prune_one(struct store *s, enum store_q q, int64_t before, int64_t *n)
{
	sqlite3_stmt		*st;
	enum store_status	 rc;

	if ((st = sql_stmt(&s->sql, q)) == NULL)
		return store_last(s);
	if (sqlite3_bind_int64(st, 1, before) != SQLITE_OK)
		return STORE_NOMEM;
	if ((rc = store_status_of(sql_step_done(st))) == STORE_OK && n != NULL)
		*n += sqlite3_changes(s->sql.db);
	return rc;
}

enum store_status
store_prune(struct store *s, int64_t receipts_before, int64_t actions_before,
    struct store_pruned *p)
{
	enum store_status	rc;

	memset(p, 0, sizeof(*p));
	if ((rc = store_begin(s)) != STORE_OK)
		return rc;
	if ((rc = prune_one(s, STORE_Q_PRUNE_RECEIPTS, receipts_before,
	    &p->receipts)) != STORE_OK ||
	    (rc = prune_one(s, STORE_Q_PRUNE_ATTEMPTS, actions_before, NULL)) !=
	    STORE_OK ||
	    (rc = prune_one(s, STORE_Q_PRUNE_OUTBOX, actions_before, NULL)) !=
	    STORE_OK ||
	    (rc = prune_one(s, STORE_Q_PRUNE_ACCEPTED, actions_before,
	    &p->actions)) != STORE_OK ||
	    (rc = store_commit(s)) != STORE_OK) {
		store_rollback(s);
		memset(p, 0, sizeof(*p));
	}
	return rc;
}

enum store_status
store_poll_last(struct store *s, const char *tenant, const char *job_id,
    int64_t *at)
{
	sqlite3_stmt	*st;
	int		 rc;

	*at = 0;
	if ((st = sql_stmt(&s->sql, STORE_Q_POLL_LAST)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, tenant) != SQLITE_OK ||
	    sql_bind_text(st, 2, job_id) != SQLITE_OK)
		return STORE_NOMEM;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*at = sqlite3_column_int64(st, 0);
		rc = SQLITE_DONE;
	}
	sqlite3_reset(st);
	return store_status_of(rc);
}

enum store_status
store_poll_mark(struct store *s, const char *tenant, const char *job_id,
    int64_t now)
{
	sqlite3_stmt	*st;

	if ((st = sql_stmt(&s->sql, STORE_Q_POLL_MARK)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, tenant) != SQLITE_OK ||
	    sql_bind_text(st, 2, job_id) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, now) != SQLITE_OK)
		return STORE_NOMEM;
	return store_status_of(sql_step_done(st));
}

/* ---- filters, unknown rows, and jobs that ended ---- */

static const struct store_list_filter	no_filter;

/* A filter's row limit as SQLite's LIMIT takes it (-1: none). */
static int
limit_of(const struct store_list_filter *f)
{
	return f->limit > 0 ? f->limit : -1;
}

enum store_status
store_outbox_list_where(struct store *s, enum store_state state,
    const struct store_list_filter *f, cJSON **out)
{
	sqlite3_stmt	*st;

	*out = NULL;
	if (f == NULL)
		f = &no_filter;
	if (store_state_name(state) == NULL)
		return STORE_ERROR;
	if ((st = sql_stmt(&s->sql, STORE_Q_LIST_STATE)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, store_state_name(state)) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, limit_of(f)) != SQLITE_OK ||
	    sql_bind_text(st, 3, f->destination) != SQLITE_OK ||
	    sql_bind_text(st, 4, f->tenant) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 5, f->since) != SQLITE_OK)
		return STORE_NOMEM;
	return json_rows(st, out);
}

enum store_status
store_attempts_list_where(struct store *s, const char *action,
    const struct store_list_filter *f, cJSON **out)
{
	sqlite3_stmt	*st;

	*out = NULL;
	if (f == NULL)
		f = &no_filter;
	if ((st = sql_stmt(&s->sql, STORE_Q_LIST_ATTEMPTS)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, action) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, limit_of(f)) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, f->since) != SQLITE_OK)
		return STORE_NOMEM;
	return json_rows(st, out);
}

enum store_status
store_conflicts_list_where(struct store *s, int all,
    const struct store_list_filter *f, cJSON **out)
{
	sqlite3_stmt	*st;

	*out = NULL;
	if (f == NULL)
		f = &no_filter;
	if ((st = sql_stmt(&s->sql, STORE_Q_LIST_CONFLICTS)) == NULL)
		return store_last(s);
	if (sqlite3_bind_int(st, 1, all ? 1 : 0) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, limit_of(f)) != SQLITE_OK ||
	    sql_bind_text(st, 3, f->tenant) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, f->since) != SQLITE_OK)
		return STORE_NOMEM;
	return json_rows(st, out);
}

enum store_status
store_action_state(struct store *s, const char *action,
    enum store_state *state, int *found)
{
	sqlite3_stmt	*st;
	int		 rc;

	*found = 0;
	if ((st = sql_stmt(&s->sql, STORE_Q_ACTION_STATE)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, action) != SQLITE_OK)
		return STORE_NOMEM;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		rc = SQLITE_DONE;
		if (sqlite3_column_text(st, 0) == NULL ||
		    store_state_parse((const char *)sqlite3_column_text(st, 0),
		    state) != 0)
			rc = SQLITE_CORRUPT;
		else
			*found = 1;
	}
	sqlite3_reset(st);
	return store_status_of(rc);
}

enum store_status
store_conflict_state(struct store *s, int64_t id, int *found, int *resolved)
{
	sqlite3_stmt	*st;
	int		 rc;

	*found = *resolved = 0;
	if ((st = sql_stmt(&s->sql, STORE_Q_CONFLICT_STATE)) == NULL)
		return store_last(s);
	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK)
		return STORE_NOMEM;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*found = 1;
		*resolved = sqlite3_column_int(st, 0) != 0;
		rc = SQLITE_DONE;
	}
	sqlite3_reset(st);
	return store_status_of(rc);
}

enum store_status
store_jobs_ended(struct store *s, int64_t before, struct store_job_ref *refs,
    int max, int *n)
{
	sqlite3_stmt	*st;
	int		 rc;

	*n = 0;
	if ((st = sql_stmt(&s->sql, STORE_Q_JOBS_TERMINAL)) == NULL)
		return store_last(s);
	if (sqlite3_bind_int64(st, 1, before) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, max) != SQLITE_OK)
		return STORE_NOMEM;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n < max) {
		if (sql_col_copy(st, 0, refs[*n].tenant,
		    sizeof(refs[*n].tenant)) != 0 ||
		    sql_col_copy(st, 1, refs[*n].job_id,
		    sizeof(refs[*n].job_id)) != 0) {
			rc = SQLITE_CORRUPT;
			break;
		}
		(*n)++;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		*n = 0;
	return store_status_of(rc);
}

/* Runs one (tenant, job) DELETE, ?3 = before; adds its rows to *count. */
static enum store_status
forget_one(struct store *s, enum store_q q, const struct store_job_ref *r,
    int64_t before, int64_t *count)
{
	sqlite3_stmt		*st;
	enum store_status	 rc;

	if ((st = sql_stmt(&s->sql, q)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, r->tenant) != SQLITE_OK ||
	    sql_bind_text(st, 2, r->job_id) != SQLITE_OK ||
	    (q == STORE_Q_FORGET_JOB &&
	    sqlite3_bind_int64(st, 3, before) != SQLITE_OK))
		return STORE_NOMEM;
	if ((rc = store_status_of(sql_step_done(st))) == STORE_OK)
		*count += sqlite3_changes(s->sql.db);
	return rc;
}

enum store_status
store_jobs_forget(struct store *s, const struct store_job_ref *refs, int n,
    int64_t before, int64_t *jobs, int64_t *polls)
{
	enum store_status	rc;
	int64_t			j = 0, p = 0, was;
	int			i;

	if ((rc = store_begin(s)) != STORE_OK)
		return rc;
	for (i = 0; i < n; i++) {
		was = j;
		if ((rc = forget_one(s, STORE_Q_FORGET_JOB, &refs[i], before,
		    &j)) != STORE_OK)
			break;
		/* A job that moved on since it was read keeps its poll row. */
		if (j > was && (rc = forget_one(s, STORE_Q_FORGET_POLL,
		    &refs[i], before, &p)) != STORE_OK)
			break;
	}
	if (rc != STORE_OK || (rc = store_commit(s)) != STORE_OK) {
		store_rollback(s);
		return rc;
	}
	*jobs += j;
	*polls += p;
	return STORE_OK;
}
