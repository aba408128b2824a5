/*
 * store_accept.c: the acceptance transaction's statements (see store_accept.h).
 */
#include <string.h>

#include "fault.h"
#include "store_accept.h"
#include "store_int.h"


enum store_status
store_receipt_add(struct store *s, const struct store_receipt *r,
    int64_t *id, int *seen, struct store_prior *prior)
{
	sqlite3_stmt	*st;
	int		 rc;

	*id = 0;
	*seen = 0;
	if ((st = sql_stmt(&s->sql, STORE_Q_RECEIPT_ADD)) == NULL)
		return store_last(s);
	if (sqlite3_bind_int64(st, 1, r->at) != SQLITE_OK ||
	    sql_bind_text(st, 2, r->tenant) != SQLITE_OK ||
	    sql_bind_text(st, 3, r->endpoint) != SQLITE_OK ||
	    sql_bind_text(st, 4, r->source) != SQLITE_OK ||
	    sql_bind_text(st, 5, r->delivery_id) != SQLITE_OK ||
	    sql_bind_text(st, 6, r->job_id) != SQLITE_OK ||
	    sql_bind_text(st, 7, r->type) != SQLITE_OK ||
	    sql_bind_text(st, 8, r->status) != SQLITE_OK ||
	    sql_bind_text(st, 9, r->stage) != SQLITE_OK ||
	    (r->body != NULL ? sqlite3_bind_blob(st, 10, r->body,
	    (int)r->bodylen, SQLITE_STATIC) : sqlite3_bind_null(st, 10)) !=
	    SQLITE_OK)
		return STORE_NOMEM;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		rc = sqlite3_step(st);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return store_status_of(rc);
	if (*id != 0)
		return STORE_OK;

	/* Nothing inserted: this delivery id was received before. */
	*seen = 1;
	memset(prior, 0, sizeof(*prior));
	if ((st = sql_stmt(&s->sql, STORE_Q_RECEIPT_PRIOR)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, r->endpoint) != SQLITE_OK ||
	    sql_bind_text(st, 2, r->delivery_id) != SQLITE_OK)
		return STORE_NOMEM;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		(void)sql_col_copy(st, 0, prior->result, sizeof(prior->result));
		(void)sql_col_copy(st, 1, prior->action, sizeof(prior->action));
		rc = SQLITE_DONE;
	}
	sqlite3_reset(st);
	return store_status_of(rc);
}

enum store_status
store_receipt_finish(struct store *s, int64_t id, const char *result,
    const char *action)
{
	sqlite3_stmt	*st;

	if ((st = sql_stmt(&s->sql, STORE_Q_RECEIPT_FINISH)) == NULL)
		return store_last(s);
	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK ||
	    sql_bind_text(st, 2, result) != SQLITE_OK ||
	    sql_bind_text(st, 3, action) != SQLITE_OK)
		return STORE_NOMEM;
	return store_status_of(sql_step_done(st));
}

enum store_status
store_job_get(struct store *s, const char *tenant, const char *job_id,
    struct store_job *j)
{
	sqlite3_stmt		*st;
	const char		*term;
	int			 rc;
	enum store_status	 status = STORE_OK;

	j->stage = OBS_STAGE_QUEUED;
	j->terminal = OBS_ST_NONE;
	if ((st = sql_stmt(&s->sql, STORE_Q_JOB_GET)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, tenant) != SQLITE_OK ||
	    sql_bind_text(st, 2, job_id) != SQLITE_OK)
		return STORE_NOMEM;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		j->stage = (enum obs_stage)sqlite3_column_int(st, 0);
		term = (const char *)sqlite3_column_text(st, 1);
		if (term == NULL || obs_status_parse(term, &j->terminal) != 0 ||
		    j->stage > OBS_STAGE_COMPLETED)
			status = STORE_ERROR;
	} else if (rc != SQLITE_DONE)
		status = store_status_of(rc);
	sqlite3_reset(st);
	return status;
}

enum store_status
store_job_put(struct store *s, const char *tenant, const char *job_id,
    const struct store_job *j, const struct obs *o, int64_t now)
{
	sqlite3_stmt	*st;

	if ((st = sql_stmt(&s->sql, STORE_Q_JOB_PUT)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, tenant) != SQLITE_OK ||
	    sql_bind_text(st, 2, job_id) != SQLITE_OK ||
	    sqlite3_bind_int(st, 3, (int)j->stage) != SQLITE_OK ||
	    sql_bind_text(st, 4, obs_status_name(j->terminal)) != SQLITE_OK ||
	    sql_bind_text(st, 5, o->file_key) != SQLITE_OK ||
	    sql_bind_text(st, 6, o->file_url) != SQLITE_OK ||
	    sql_bind_text(st, 7, o->error) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 8, now) != SQLITE_OK)
		return STORE_NOMEM;
	return store_status_of(sql_step_done(st));
}

enum store_status
store_action_claim(struct store *s, const struct store_action *a,
    enum store_claim *out)
{
	sqlite3_stmt	*st;
	const char	*owner;
	int		 rc;

	if ((st = sql_stmt(&s->sql, STORE_Q_CLAIM)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, a->id) != SQLITE_OK ||
	    sql_bind_text(st, 2, a->tenant) != SQLITE_OK ||
	    sql_bind_text(st, 3, a->attempt) != SQLITE_OK ||
	    sql_bind_text(st, 4, a->step) != SQLITE_OK ||
	    sql_bind_text(st, 5, a->job_id) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 6, a->now) != SQLITE_OK)
		return STORE_NOMEM;
	if ((rc = sql_step_done(st)) != SQLITE_DONE)
		return store_status_of(rc);
	if (sqlite3_changes(s->sql.db) == 1) {
		*out = STORE_CLAIMED;
		return STORE_OK;
	}

	if ((st = sql_stmt(&s->sql, STORE_Q_CLAIM_OWNER)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, a->id) != SQLITE_OK)
		return STORE_NOMEM;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		owner = (const char *)sqlite3_column_text(st, 0);
		*out = owner != NULL && strcmp(owner, a->job_id) == 0 ?
		    STORE_CLAIMED_BEFORE : STORE_CLAIMED_OTHER;
		rc = SQLITE_DONE;
	} else if (rc == SQLITE_DONE)
		rc = SQLITE_CORRUPT;	/* conflicted, yet not there */
	sqlite3_reset(st);
	return store_status_of(rc);
}

enum store_status
store_outbox_add(struct store *s, const struct store_action *a)
{
	sqlite3_stmt	*st;

	if (fault_fire(FAULT_OUTBOX_INSERT))
		return STORE_IO;
	if ((st = sql_stmt(&s->sql, STORE_Q_OUTBOX_ADD)) == NULL)
		return store_last(s);
	if (sql_bind_text(st, 1, a->id) != SQLITE_OK ||
	    sql_bind_text(st, 2, a->tenant) != SQLITE_OK ||
	    sql_bind_text(st, 3, a->destination) != SQLITE_OK ||
	    sql_bind_text(st, 4, a->payload) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 5, a->now) != SQLITE_OK)
		return STORE_NOMEM;
	return store_status_of(sql_step_done(st));
}

enum store_status
store_conflict_add(struct store *s, const char *tenant, const char *job_id,
    const char *action_id, const char *kind, const char *recorded,
    const char *observed, int64_t now)
{
	sqlite3_stmt	*st;

	if ((st = sql_stmt(&s->sql, STORE_Q_CONFLICT_ADD)) == NULL)
		return store_last(s);
	if (sqlite3_bind_int64(st, 1, now) != SQLITE_OK ||
	    sql_bind_text(st, 2, tenant) != SQLITE_OK ||
	    sql_bind_text(st, 3, job_id) != SQLITE_OK ||
	    sql_bind_text(st, 4, action_id) != SQLITE_OK ||
	    sql_bind_text(st, 5, kind) != SQLITE_OK ||
	    sql_bind_text(st, 6, recorded) != SQLITE_OK ||
	    sql_bind_text(st, 7, observed) != SQLITE_OK)
		return STORE_NOMEM;
	return store_status_of(sql_step_done(st));
}

enum store_status
store_savepoint(struct store *s)
{
	return store_run(s, STORE_Q_SAVEPOINT);
}

enum store_status
store_release(struct store *s)
{
	return store_run(s, STORE_Q_RELEASE);
}

enum store_status
store_rollback_to(struct store *s)
{
	enum store_status	rc;

	/*
	 * After an I/O error, a full disk or running out of memory, SQLite
	 * may have rolled the whole transaction back on its own.
	 */
	if (!store_in_tx(s))
		return STORE_IO;
	if ((rc = store_run(s, STORE_Q_ROLLBACK_TO)) == STORE_OK)
		rc = store_run(s, STORE_Q_RELEASE);
	return rc;
}

int
store_in_tx(struct store *s)
{
	return s->in_tx && !sqlite3_get_autocommit(s->sql.db);
}
