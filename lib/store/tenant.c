/*
 * store/tenant.c: one tenant's rows as a whole (store/tenant.h).
 */
#include <string.h>

#include "store/store_int.h"
#include "store/tenant.h"

/* The statement q with the tenant bound as ?1 (and key as ?2); NULL with
   *rc set when it cannot be had. */
static struct db_stmt *
bound(struct store *s, enum store_q q, const char *tenant, const char *key,
    enum store_status *rc)
{
	struct db_stmt	*st;

	if ((st = store_stmt(s, q)) == NULL) {
		*rc = store_last(s);
		return NULL;
	}
	if (db_bind_opt(st, 1, tenant) != DB_OK ||
	    (key != NULL && db_bind_opt(st, 2, key) != DB_OK)) {
		db_reset(st);
		*rc = STORE_NOMEM;
		return NULL;
	}
	return st;
}

enum store_status
store_tenant_tally(struct store *s, const char *tenant,
    struct store_tally *t)
{
	struct db_stmt		*st;
	enum store_status	 rc;
	enum db_rc		 r;

	memset(t, 0, sizeof(*t));
	if ((st = bound(s, STORE_Q_TENANT_TALLY, tenant, NULL, &rc)) == NULL)
		return rc;
	if ((r = db_step(st)) == DB_ROW) {
		t->actions = db_col_int64(st, 0);
		t->receipts = db_col_int64(st, 1);
		t->conflicts = db_col_int64(st, 2);
		r = DB_DONE;
	}
	db_reset(st);
	return store_status_of(r);
}

enum store_status
store_subject_get(struct store *s, const char *tenant, const char *subject,
    struct store_subject *out, int *found)
{
	struct db_stmt		*st;
	enum store_status	 rc;
	enum db_rc		 r;

	memset(out, 0, sizeof(*out));
	*found = 0;
	if ((st = bound(s, STORE_Q_SUBJECT_GET, tenant, subject, &rc)) ==
	    NULL)
		return rc;
	if ((r = db_step(st)) == DB_ROW) {
		out->seen = 1;
		out->version = db_col_int64(st, 0);
		out->occurred_ms = db_col_int64(st, 1);
		out->undo = strcmp(db_col_text(st, 2), "undo") == 0;
		r = db_col_copy(st, 3, out->step, sizeof(out->step)) == 0 ?
		    DB_DONE : DB_ERROR;
		*found = r == DB_DONE;
	}
	db_reset(st);
	return store_status_of(r);
}

enum store_status
store_tenant_forget(struct store *s, const char *tenant, int *leased,
    int64_t *removed)
{
	/* The attempts first: they are found through the outbox. */
	static const enum store_q	 q[] = {
		STORE_Q_FORGET_ATTEMPTS, STORE_Q_FORGET_OUTBOX,
		STORE_Q_FORGET_ACCEPTED, STORE_Q_FORGET_RECEIPTS,
		STORE_Q_FORGET_JOBS, STORE_Q_FORGET_SUBJECTS,
		STORE_Q_FORGET_CONFLICTS, STORE_Q_FORGET_POLLS
	};
	struct db_stmt		*st;
	enum store_status	 rc;
	int64_t			 n = 0;
	size_t			 i;
	enum db_rc		 r;

	*leased = 0;
	*removed = 0;
	if ((rc = store_begin(s)) != STORE_OK)
		return rc;
	if ((st = bound(s, STORE_Q_TENANT_LEASED, tenant, NULL, &rc)) == NULL)
		goto fail;
	if ((r = db_step(st)) == DB_ROW) {
		*leased = db_col_int64(st, 0) > 0;
		db_reset(st);
		r = DB_DONE;
	}
	if ((rc = store_status_of(r)) != STORE_OK || *leased)
		goto fail;
	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		if ((st = bound(s, q[i], tenant, NULL, &rc)) == NULL ||
		    (rc = store_status_of(db_step_done(st))) != STORE_OK)
			goto fail;
		n += db_changes(st);
	}
	if ((rc = store_commit(s)) != STORE_OK)
		goto fail;
	*removed = n;
	return STORE_OK;
fail:
	store_rollback(s);
	return rc;
}
