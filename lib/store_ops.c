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
	sqlite3_stmt	*st;

	*out = NULL;
	if (store_state_name(state) == NULL)
		return STORE_ERROR;
	if ((st = sql_stmt(&s->sql, STORE_Q_LIST_STATE)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, store_state_name(state)) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, limit) != SQLITE_OK)
		return STORE_NOMEM;
	return json_rows(st, out);
}

enum store_status
store_attempts_list(struct store *s, const char *action, cJSON **out)
{
	sqlite3_stmt	*st;

	*out = NULL;
	if ((st = sql_stmt(&s->sql, STORE_Q_LIST_ATTEMPTS)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, action) != SQLITE_OK)
		return STORE_NOMEM;
	return json_rows(st, out);
}

enum store_status
store_conflicts_list(struct store *s, int all, cJSON **out)
{
	sqlite3_stmt	*st;

	*out = NULL;
	if ((st = sql_stmt(&s->sql, STORE_Q_LIST_CONFLICTS)) == NULL)
		return store_last(s);
	if (sqlite3_bind_int(st, 1, all ? 1 : 0) != SQLITE_OK)
		return STORE_NOMEM;
	return json_rows(st, out);
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
