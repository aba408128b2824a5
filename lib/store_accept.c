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
	struct db_stmt	*st;
	enum db_rc	 rc;

	*id = 0;
	*seen = 0;
	if ((st = store_stmt(s, STORE_Q_RECEIPT_ADD)) == NULL)
		return store_last(s);
	if (db_bind_int64(st, 1, r->at) != DB_OK ||
	    db_bind_opt(st, 2, r->tenant) != DB_OK ||
	    db_bind_opt(st, 3, r->endpoint) != DB_OK ||
	    db_bind_opt(st, 4, r->source) != DB_OK ||
	    db_bind_opt(st, 5, r->delivery_id) != DB_OK ||
	    db_bind_opt(st, 6, r->job_id) != DB_OK ||
	    db_bind_opt(st, 7, r->type) != DB_OK ||
	    db_bind_opt(st, 8, r->status) != DB_OK ||
	    db_bind_opt(st, 9, r->stage) != DB_OK ||
	    (r->body != NULL ? db_bind_blob(st, 10, r->body, r->bodylen) :
	    db_bind_null(st, 10)) !=
	    DB_OK)
		return STORE_NOMEM;
	rc = db_step(st);
	if (rc == DB_ROW) {
		*id = db_col_int64(st, 0);
		rc = db_step(st);
	}
	db_reset(st);
	if (rc != DB_DONE)
		return store_status_of(s, rc);
	if (*id != 0)
		return STORE_OK;

	/* Nothing inserted: this delivery id was received before. */
	*seen = 1;
	memset(prior, 0, sizeof(*prior));
	if ((st = store_stmt(s, STORE_Q_RECEIPT_PRIOR)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, r->endpoint) != DB_OK ||
	    db_bind_opt(st, 2, r->delivery_id) != DB_OK)
		return STORE_NOMEM;
	if ((rc = db_step(st)) == DB_ROW) {
		(void)db_col_copy(st, 0, prior->result, sizeof(prior->result));
		(void)db_col_copy(st, 1, prior->action, sizeof(prior->action));
		rc = DB_DONE;
	}
	db_reset(st);
	return store_status_of(s, rc);
}

enum store_status
store_receipt_finish(struct store *s, int64_t id, const char *result,
    const char *action)
{
	struct db_stmt	*st;

	if ((st = store_stmt(s, STORE_Q_RECEIPT_FINISH)) == NULL)
		return store_last(s);
	if (db_bind_int64(st, 1, id) != DB_OK ||
	    db_bind_opt(st, 2, result) != DB_OK ||
	    db_bind_opt(st, 3, action) != DB_OK)
		return STORE_NOMEM;
	return store_status_of(s, db_step_done(st));
}

int
store_job_locks(struct store *s)
{
	return s->pg;
}

enum store_status
store_job_lock(struct store *s, const char *tenant, const char *job_id,
    int wait)
{
	struct db_stmt	*st;
	enum db_rc	 rc;

	if (!s->pg || !store_in_tx(s))
		return STORE_OK;
	if ((st = store_stmt(s, wait ? STORE_Q_JOB_LOCK :
	    STORE_Q_JOB_TRYLOCK)) == NULL)
		return store_last(s);
	if (db_bind_text(st, 1, tenant) != DB_OK ||
	    db_bind_text(st, 2, job_id) != DB_OK)
		return STORE_NOMEM;
	if (wait)
		return store_done(s, st);
	if ((rc = db_step(st)) != DB_ROW)
		return rc == DB_DONE ? STORE_ERROR : store_status_of(s, rc);
	rc = db_col_int64(st, 0) == 1 ? DB_OK : DB_BUSY;
	db_reset(st);
	return rc == DB_OK ? STORE_OK : STORE_BUSY;
}

enum store_status
store_job_get(struct store *s, const char *tenant, const char *job_id,
    struct store_job *j)
{
	struct db_stmt		*st;
	const char		*term;
	enum db_rc		 rc;
	enum store_status	 status = STORE_OK;

	j->stage = OBS_STAGE_QUEUED;
	j->terminal = OBS_ST_NONE;
	if ((status = store_job_lock(s, tenant, job_id, 1)) != STORE_OK)
		return status;
	if ((st = store_stmt(s, STORE_Q_JOB_GET)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, tenant) != DB_OK ||
	    db_bind_opt(st, 2, job_id) != DB_OK)
		return STORE_NOMEM;
	if ((rc = db_step(st)) == DB_ROW) {
		j->stage = (enum obs_stage)(int)db_col_int64(st, 0);
		term = db_col_text(st, 1);
		if (term == NULL || obs_status_parse(term, &j->terminal) != 0 ||
		    j->stage > OBS_STAGE_COMPLETED)
			status = STORE_ERROR;
	} else if (rc != DB_DONE)
		status = store_status_of(s, rc);
	db_reset(st);
	return status;
}

enum store_status
store_job_put(struct store *s, const char *tenant, const char *job_id,
    const struct store_job *j, const struct obs *o, int64_t now)
{
	struct db_stmt	*st;

	if ((st = store_stmt(s, STORE_Q_JOB_PUT)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, tenant) != DB_OK ||
	    db_bind_opt(st, 2, job_id) != DB_OK ||
	    db_bind_int64(st, 3, (int)j->stage) != DB_OK ||
	    db_bind_opt(st, 4, obs_status_name(j->terminal)) != DB_OK ||
	    db_bind_opt(st, 5, o->file_key) != DB_OK ||
	    db_bind_opt(st, 6, o->file_url) != DB_OK ||
	    db_bind_opt(st, 7, o->error) != DB_OK ||
	    db_bind_int64(st, 8, now) != DB_OK)
		return STORE_NOMEM;
	return store_status_of(s, db_step_done(st));
}

enum store_status
store_action_claim(struct store *s, const struct store_action *a,
    enum store_claim *out)
{
	struct db_stmt	*st;
	const char	*owner;
	enum db_rc	 rc;

	if ((st = store_stmt(s, STORE_Q_CLAIM)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, a->id) != DB_OK ||
	    db_bind_opt(st, 2, a->tenant) != DB_OK ||
	    db_bind_opt(st, 3, a->attempt) != DB_OK ||
	    db_bind_opt(st, 4, a->step) != DB_OK ||
	    db_bind_opt(st, 5, a->job_id) != DB_OK ||
	    db_bind_int64(st, 6, a->now) != DB_OK)
		return STORE_NOMEM;
	if ((rc = db_step_done(st)) != DB_DONE)
		return store_status_of(s, rc);
	if (db_changes(st) == 1) {
		*out = STORE_CLAIMED;
		return STORE_OK;
	}

	if ((st = store_stmt(s, STORE_Q_CLAIM_OWNER)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, a->id) != DB_OK)
		return STORE_NOMEM;
	if ((rc = db_step(st)) == DB_ROW) {
		owner = db_col_text(st, 0);
		*out = owner != NULL && strcmp(owner, a->job_id) == 0 ?
		    STORE_CLAIMED_BEFORE : STORE_CLAIMED_OTHER;
		rc = DB_DONE;
	} else if (rc == DB_DONE)
		rc = DB_ERROR;	/* conflicted, yet not there */
	db_reset(st);
	return store_status_of(s, rc);
}

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
	return store_status_of(s, db_step_done(st));
}

enum store_status
store_conflict_add(struct store *s, const char *tenant, const char *job_id,
    const char *action_id, const char *kind, const char *recorded,
    const char *observed, int64_t now)
{
	struct db_stmt	*st;

	if ((st = store_stmt(s, STORE_Q_CONFLICT_ADD)) == NULL)
		return store_last(s);
	if (db_bind_int64(st, 1, now) != DB_OK ||
	    db_bind_opt(st, 2, tenant) != DB_OK ||
	    db_bind_opt(st, 3, job_id) != DB_OK ||
	    db_bind_opt(st, 4, action_id) != DB_OK ||
	    db_bind_opt(st, 5, kind) != DB_OK ||
	    db_bind_opt(st, 6, recorded) != DB_OK ||
	    db_bind_opt(st, 7, observed) != DB_OK)
		return STORE_NOMEM;
	return store_status_of(s, db_step_done(st));
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
	return s->in_tx && db_in_tx(s->db);
}

int
store_committed(const struct store *s)
{
	return s->committed;
}
