/*
 * store/admin.c: the operator's read-outs and prune, and the poller's memory
 * (see store/admin.h).
 */
#include <string.h>

#include <cJSON.h>

#include "store/admin.h"
#include "store/store_int.h"


/* The JSON objects a bound statement selects, as an array. */
static enum store_status
json_rows(struct db_stmt *st, cJSON **out)
{
	return store_status_of(db_json_rows(st, out));
}

enum store_status
store_conflict_resolve(struct store *s, int64_t id, const char *note,
    int64_t now, int *changed)
{
	struct db_stmt		*st;
	enum store_status	 rc;

	*changed = 0;
	if ((st = store_stmt(s, STORE_Q_RESOLVE)) == NULL)
		return store_last(s);
	if (db_bind_int64(st, 1, id) != DB_OK ||
	    db_bind_int64(st, 2, now) != DB_OK ||
	    db_bind_opt(st, 3, note) != DB_OK)
		return STORE_NOMEM;
	if ((rc = store_status_of(db_step_done(st))) == STORE_OK)
		*changed = db_changes(st) > 0;
	return rc;
}

/* Runs one bound-at-?1 DELETE; adds the rows it removed to *n. */
static enum store_status
prune_one(struct store *s, enum store_q q, int64_t before, int64_t *n)
{
	struct db_stmt		*st;
	enum store_status	 rc;

	if ((st = store_stmt(s, q)) == NULL)
		return store_last(s);
	if (db_bind_int64(st, 1, before) != DB_OK)
		return STORE_NOMEM;
	if ((rc = store_status_of(db_step_done(st))) == STORE_OK && n != NULL)
		*n += db_changes(st);
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
	struct db_stmt	*st;
	enum db_rc	 rc;

	*at = 0;
	if ((st = store_stmt(s, STORE_Q_POLL_LAST)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, tenant) != DB_OK ||
	    db_bind_opt(st, 2, job_id) != DB_OK)
		return STORE_NOMEM;
	if ((rc = db_step(st)) == DB_ROW) {
		*at = db_col_int64(st, 0);
		rc = DB_DONE;
	}
	db_reset(st);
	return store_status_of(rc);
}

enum store_status
store_poll_mark(struct store *s, const char *tenant, const char *job_id,
    int64_t now)
{
	struct db_stmt	*st;

	if ((st = store_stmt(s, STORE_Q_POLL_MARK)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, tenant) != DB_OK ||
	    db_bind_opt(st, 2, job_id) != DB_OK ||
	    db_bind_int64(st, 3, now) != DB_OK)
		return STORE_NOMEM;
	return store_status_of(db_step_done(st));
}

/* ---- filters, unknown rows, and jobs that ended ---- */

enum store_status
store_attempts_list(struct store *s, const char *action,
    const struct store_list_filter *f, cJSON **out)
{
	struct db_stmt	*st;

	*out = NULL;
	f = store_filter(f);
	if ((st = store_stmt(s, STORE_Q_LIST_ATTEMPTS)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, action) != DB_OK ||
	    db_bind_int64(st, 2, store_filter_limit(f)) != DB_OK ||
	    db_bind_int64(st, 3, f->since) != DB_OK)
		return STORE_NOMEM;
	return json_rows(st, out);
}

enum store_status
store_conflicts_list(struct store *s, int all,
    const struct store_list_filter *f, cJSON **out)
{
	struct db_stmt	*st;

	*out = NULL;
	f = store_filter(f);
	if ((st = store_stmt(s, STORE_Q_LIST_CONFLICTS)) == NULL)
		return store_last(s);
	if (db_bind_int64(st, 1, all ? 1 : 0) != DB_OK ||
	    db_bind_int64(st, 2, store_filter_limit(f)) != DB_OK ||
	    db_bind_opt(st, 3, f->tenant) != DB_OK ||
	    db_bind_int64(st, 4, f->since) != DB_OK)
		return STORE_NOMEM;
	return json_rows(st, out);
}

enum store_status
store_action_state(struct store *s, const char *action,
    enum store_state *state, int *found)
{
	struct db_stmt	*st;
	enum db_rc	 rc;

	*found = 0;
	if ((st = store_stmt(s, STORE_Q_ACTION_STATE)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, action) != DB_OK)
		return STORE_NOMEM;
	if ((rc = db_step(st)) == DB_ROW) {
		rc = DB_DONE;
		if (store_state_parse(db_col_text(st, 0),
		    state) != 0)
			rc = DB_ERROR;
		else
			*found = 1;
	}
	db_reset(st);
	return store_status_of(rc);
}

enum store_status
store_conflict_state(struct store *s, int64_t id, int *found, int *resolved)
{
	struct db_stmt	*st;
	enum db_rc	 rc;

	*found = *resolved = 0;
	if ((st = store_stmt(s, STORE_Q_CONFLICT_STATE)) == NULL)
		return store_last(s);
	if (db_bind_int64(st, 1, id) != DB_OK)
		return STORE_NOMEM;
	if ((rc = db_step(st)) == DB_ROW) {
		*found = 1;
		*resolved = (int)db_col_int64(st, 0) != 0;
		rc = DB_DONE;
	}
	db_reset(st);
	return store_status_of(rc);
}

enum store_status
store_jobs_ended(struct store *s, int64_t before, struct store_job_ref *refs,
    int max, int *n)
{
	struct db_stmt	*st;
	enum db_rc	 rc;

	*n = 0;
	if ((st = store_stmt(s, STORE_Q_JOBS_TERMINAL)) == NULL)
		return store_last(s);
	if (db_bind_int64(st, 1, before) != DB_OK ||
	    db_bind_int64(st, 2, max) != DB_OK)
		return STORE_NOMEM;
	while ((rc = db_step(st)) == DB_ROW && *n < max) {
		if (db_col_copy(st, 0, refs[*n].tenant,
		    sizeof(refs[*n].tenant)) != 0 ||
		    db_col_copy(st, 1, refs[*n].job_id,
		    sizeof(refs[*n].job_id)) != 0) {
			rc = DB_ERROR;
			break;
		}
		(*n)++;
	}
	db_reset(st);
	if (rc != DB_DONE && rc != DB_ROW)
		*n = 0;
	return store_status_of(rc);
}

/* Runs one (tenant, job) DELETE, ?3 = before; adds its rows to *count. */
static enum store_status
forget_one(struct store *s, enum store_q q, const struct store_job_ref *r,
    int64_t before, int64_t *count)
{
	struct db_stmt		*st;
	enum store_status	 rc;

	if ((st = store_stmt(s, q)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, r->tenant) != DB_OK ||
	    db_bind_opt(st, 2, r->job_id) != DB_OK ||
	    (q == STORE_Q_FORGET_JOB &&
	    db_bind_int64(st, 3, before) != DB_OK))
		return STORE_NOMEM;
	if ((rc = store_status_of(db_step_done(st))) == STORE_OK)
		*count += db_changes(st);
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
