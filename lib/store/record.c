/*
 * store/record.c: the acceptance transaction's statements (see store/record.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "base/json.h"
#include "base/text.h"
#include "store/flight.h"
#include "store/outbox.h"
#include "store/record.h"
#include "store/store_int.h"


enum store_status
store_receipt_put(struct store *s, const struct store_receipt *r,
    const char *result, const char *action)
{
	struct db_stmt	*st;

	if ((st = store_stmt(s, STORE_Q_RECEIPT_PUT)) == NULL)
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
	    db_bind_opt(st, 10, result) != DB_OK ||
	    db_bind_opt(st, 11, action) != DB_OK ||
	    (r->body != NULL ? db_bind_blob(st, 12, r->body, r->bodylen) :
	    db_bind_null(st, 12)) != DB_OK ||
	    (r->versioned ? db_bind_int64(st, 13, r->version) :
	    db_bind_null(st, 13)) != DB_OK ||
	    (r->versioned ? db_bind_int64(st, 14, r->occurred_ms) :
	    db_bind_null(st, 14)) != DB_OK)
		return STORE_NOMEM;
	return store_send(st);
}

/* Non-empty: a key to look up. */
static int
key(const char *k)
{
	return k != NULL && k[0] != '\0';
}

enum look { LOOK_RECEIPTS, LOOK_JOBS, LOOK_SUBJECTS, LOOK_ACTIONS, LOOK__N };

/* Observation i's key for what, in a and b (b NULL: one string); 0: none. */
static int
look_key(const struct store_look *l, enum look what, const char **a,
    const char **b)
{
	*b = NULL;
	switch (what) {
	case LOOK_RECEIPTS:
		*a = l->endpoint;
		*b = l->delivery_id;
		return key(*a) && key(*b);
	case LOOK_JOBS:
		*a = l->tenant;
		*b = l->job_id;
		return key(*a) && key(*b);
	case LOOK_SUBJECTS:
		*a = l->tenant;
		*b = l->subject;
		return key(*a) && key(*b);
	case LOOK_ACTIONS:
		*a = l->action;
		return key(*a);
	case LOOK__N:
		break;
	}
	return 0;
}

/*
 * The keys the observations have for what, once each, as a JSON array
 * (["a", ...] or [["a", "b"], ...]), in *out (freed by the caller; NULL
 * when there is none).  Written by hand, not with cJSON: a look-up costs
 * no allocation but this one.
 */
static enum store_status
look_keys(const struct store_look *look, size_t n, enum look what,
    char **out)
{
	const char	*a, *b, *pa, *pb;
	size_t		 len = 2, off = 0, i, k;
	char		*buf;
	int		 any = 0;

	*out = NULL;
	for (i = 0; i < n; i++)
		if (look_key(&look[i], what, &a, &b))
			len += 6 * (strlen(a) + (b != NULL ? strlen(b) : 0)) +
			    12;
	if (len == 2)
		return STORE_OK;
	if ((buf = malloc(len + 1)) == NULL)
		return STORE_NOMEM;
	buf[off++] = '[';
	for (i = 0; i < n; i++) {
		if (!look_key(&look[i], what, &a, &b))
			continue;
		for (k = 0; k < i; k++)
			if (look_key(&look[k], what, &pa, &pb) &&
			    strcmp(pa, a) == 0 &&
			    (b == NULL || strcmp(pb, b) == 0))
				break;
		if (k < i)
			continue;	/* that key is there already */
		if ((any && text_put(buf, len, &off, ",", 1) != 0) ||
		    (b != NULL && text_put(buf, len, &off, "[", 1) != 0) ||
		    json_put_string(buf, len, &off, a) != 0 ||
		    (b != NULL && (text_put(buf, len, &off, ",", 1) != 0 ||
		    json_put_string(buf, len, &off, b) != 0 ||
		    text_put(buf, len, &off, "]", 1) != 0))) {
			free(buf);
			return STORE_ERROR;	/* cannot be: len is enough */
		}
		any = 1;
	}
	buf[off++] = ']';
	buf[off] = '\0';
	*out = buf;
	return STORE_OK;
}

/* Sends one look-up, *out its statement (NULL: no key to look up). */
static enum store_status
look_send(struct store *s, enum look what, const struct store_look *look,
    size_t n, struct db_stmt **out)
{
	static const enum store_q	 q[LOOK__N] = { STORE_Q_LOOK_RECEIPTS,
	    STORE_Q_LOOK_JOBS, STORE_Q_LOOK_SUBJECTS, STORE_Q_LOOK_ACTIONS };
	struct db_stmt			*st;
	char				*keys;
	enum store_status		 ss;
	enum db_rc			 rc;

	*out = NULL;
	if ((ss = look_keys(look, n, what, &keys)) != STORE_OK ||
	    keys == NULL)
		return ss;
	if ((st = store_stmt(s, q[what])) == NULL) {
		free(keys);
		return store_last(s);
	}
	rc = db_bind_text(st, 1, keys);
	free(keys);
	if (rc != DB_OK)
		return STORE_NOMEM;
	*out = st;
	return store_send(st);
}

/* Files the rows of one look-up, landed, in look. */
static enum store_status
look_read(struct db_stmt *st, enum look what,
    struct store_look *look, size_t n)
{
	struct store_found		*f;
	const char			*a, *b, *ka, *kb, *term, *effect;
	enum db_rc			 rc;
	size_t				 i;

	while ((rc = db_step(st)) == DB_ROW) {
		a = db_col_text(st, 0);
		b = db_col_text(st, 1);
		for (i = 0; i < n; i++) {
			if (!look_key(&look[i], what, &ka, &kb) ||
			    strcmp(ka, a) != 0 ||
			    (kb != NULL && strcmp(kb, b) != 0))
				continue;
			f = &look[i].found;
			switch (what) {
			case LOOK_RECEIPTS:
				f->seen = 1;
				(void)db_col_copy(st, 2, f->prior.result,
				    sizeof(f->prior.result));
				(void)db_col_copy(st, 3, f->prior.action,
				    sizeof(f->prior.action));
				break;
			case LOOK_JOBS:
				f->job.stage = (enum obs_stage)(int)
				    db_col_int64(st, 2);
				term = db_col_text(st, 3);
				if (obs_status_parse(term, &f->job.terminal) !=
				    0 || (unsigned)f->job.stage >
				    OBS_STAGE_COMPLETED) {
					db_reset(st);
					return STORE_ERROR;
				}
				break;
			case LOOK_SUBJECTS:
				effect = db_col_text(st, 4);
				f->subject.seen = 1;
				f->subject.version = db_col_int64(st, 2);
				f->subject.occurred_ms = db_col_int64(st, 3);
				f->subject.undo = effect != NULL &&
				    strcmp(effect, "undo") == 0;
				(void)db_col_copy(st, 5, f->subject.step,
				    sizeof(f->subject.step));
				break;
			case LOOK_ACTIONS:
				f->claimed = 1;
				(void)db_col_copy(st, 1, f->owner,
				    sizeof(f->owner));
				break;
			case LOOK__N:
				break;
			}
		}
	}
	return rc == DB_DONE ? STORE_OK : store_status_of(rc);
}

enum store_status
store_look_batch(struct store *s, struct store_look *look, size_t n)
{
	struct db_stmt		*st[LOOK__N] = { NULL };
	enum store_status	 rc = STORE_OK, ls;
	size_t			 i;
	int			 k;

	for (i = 0; i < n; i++) {
		memset(&look[i].found, 0, sizeof(look[i].found));
		look[i].found.job.stage = OBS_STAGE_QUEUED;
		look[i].found.job.terminal = OBS_ST_NONE;
	}
	/* One flight: with what the caller sent before them. */
	for (k = 0; k < LOOK__N && rc == STORE_OK; k++)
		rc = look_send(s, (enum look)k, look, n, &st[k]);
	if ((ls = store_land(s, NULL)) != STORE_OK && rc == STORE_OK)
		rc = ls;
	for (k = 0; k < LOOK__N && rc == STORE_OK; k++)
		if (st[k] != NULL)
			rc = look_read(st[k], (enum look)k, look, n);
	if (rc != STORE_OK)
		for (k = 0; k < LOOK__N; k++)
			if (st[k] != NULL)
				db_reset(st[k]);
	return rc;
}

int
store_job_locks(struct store *s)
{
	return (db_caps(s->db) & DB_CAP_ROW_LOCKS) != 0;
}

int
store_busy_ms(const struct store *s)
{
	return s->busy_ms;
}

enum store_status
store_job_lock(struct store *s, const char *tenant, const char *job_id,
    int wait)
{
	struct db_stmt	*st;
	enum db_rc	 rc;

	if (!store_job_locks(s) || !store_in_tx(s))
		return STORE_OK;
	if ((st = store_stmt(s, wait ? STORE_Q_JOB_LOCK :
	    STORE_Q_JOB_TRYLOCK)) == NULL)
		return store_last(s);
	if (db_bind_text(st, 1, tenant) != DB_OK ||
	    db_bind_text(st, 2, job_id) != DB_OK)
		return STORE_NOMEM;
	if (wait)
		return store_send(st);
	if ((rc = db_step(st)) != DB_ROW)
		return rc == DB_DONE ? STORE_ERROR : store_status_of(rc);
	rc = db_col_int64(st, 0) == 1 ? DB_OK : DB_BUSY;
	db_reset(st);
	return rc == DB_OK ? STORE_OK : STORE_BUSY;
}

enum store_status
store_jobs_lock(struct store *s, const char *const *tenant,
    const char *const *job_id, size_t n)
{
	struct store_look	*look;
	struct db_stmt		*st;
	enum store_status	 ss;
	enum db_rc		 rc;
	char			*keys;
	size_t			 i;

	if (!store_job_locks(s) || !store_in_tx(s) || n == 0)
		return STORE_OK;
	if ((look = calloc(n, sizeof(*look))) == NULL)
		return STORE_NOMEM;
	for (i = 0; i < n; i++) {
		look[i].tenant = tenant[i];
		look[i].job_id = job_id[i];
	}
	ss = look_keys(look, n, LOOK_JOBS, &keys);
	free(look);
	if (ss != STORE_OK || keys == NULL)
		return ss;
	if ((st = store_stmt(s, STORE_Q_JOBS_LOCK)) == NULL) {
		free(keys);
		return store_last(s);
	}
	rc = db_bind_text(st, 1, keys);
	free(keys);
	if (rc != DB_OK)
		return STORE_NOMEM;
	return store_send(st);
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
		status = store_status_of(rc);
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
	return store_send(st);
}

enum store_status
store_subject_put(struct store *s, const char *tenant, const char *subject,
    const struct store_subject *sj, const struct obs *o, int64_t now)
{
	struct db_stmt	*st;

	if ((st = store_stmt(s, STORE_Q_SUBJECT_PUT)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, tenant) != DB_OK ||
	    db_bind_opt(st, 2, subject) != DB_OK ||
	    db_bind_int64(st, 3, sj->version) != DB_OK ||
	    db_bind_int64(st, 4, sj->occurred_ms) != DB_OK ||
	    db_bind_opt(st, 5, sj->undo ? "undo" : "do") != DB_OK ||
	    db_bind_opt(st, 6, sj->step) != DB_OK ||
	    db_bind_opt(st, 7, o->type) != DB_OK ||
	    db_bind_int64(st, 8, now) != DB_OK)
		return STORE_NOMEM;
	return store_send(st);
}

enum store_status
store_action_claim(struct store *s, const struct store_action *a)
{
	struct db_stmt	*st;

	if ((st = store_stmt(s, STORE_Q_CLAIM)) == NULL)
		return store_last(s);
	if (db_bind_opt(st, 1, a->id) != DB_OK ||
	    db_bind_opt(st, 2, a->tenant) != DB_OK ||
	    db_bind_opt(st, 3, a->attempt) != DB_OK ||
	    db_bind_opt(st, 4, a->step) != DB_OK ||
	    db_bind_opt(st, 5, a->job_id) != DB_OK ||
	    db_bind_int64(st, 6, a->now) != DB_OK)
		return STORE_NOMEM;
	return store_send(st);
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
	return store_send(st);
}

enum store_status
store_put_one(struct store *s, const struct store_put *w)
{
	enum store_status	rc;

	if (w->rcpt != NULL && (rc = store_receipt_put(s, w->rcpt, w->result,
	    w->action)) != STORE_OK)
		return rc;
	if (w->job != NULL && (rc = store_job_put(s, w->tenant, w->key,
	    w->job, w->obs, w->now)) != STORE_OK)
		return rc;
	if (w->subject != NULL && (rc = store_subject_put(s, w->tenant,
	    w->key, w->subject, w->obs, w->now)) != STORE_OK)
		return rc;
	if (w->claim != NULL && ((rc = store_action_claim(s, w->claim)) !=
	    STORE_OK || (rc = store_outbox_add(s, w->claim)) != STORE_OK))
		return rc;
	if (w->kind != NULL && (rc = store_conflict_add(s, w->tenant, w->key,
	    w->conflict_action, w->kind, w->recorded, w->observed,
	    w->now)) != STORE_OK)
		return rc;
	return STORE_OK;
}

int
store_sets(const struct store *s)
{
	return (db_caps(s->db) & DB_CAP_SERVER) != 0;
}

/*
 * A set's rows, a JSON array of objects whose members are the table's
 * columns (json_populate_recordset()).  Written into a buffer that grows
 * until the array fits: the writers below are called again from the
 * start, so that no row needs its size worked out beforehand.  A text
 * column is null for NULL and "", as db_bind_opt() binds them.
 */
static void
col_str(struct json_out *o, const char *name, const char *v)
{
	json_out_raw(o, ",\"");
	json_out_raw(o, name);
	json_out_raw(o, "\":");
	if (v != NULL && v[0] != '\0')
		json_out_str(o, v);
	else
		json_out_raw(o, "null");
}

static void
col_int(struct json_out *o, const char *name, int64_t v)
{
	char	digits[24];

	(void)snprintf(digits, sizeof(digits), "%lld", (long long)v);
	json_out_raw(o, ",\"");
	json_out_raw(o, name);
	json_out_raw(o, "\":");
	json_out_raw(o, digits);
}

/* bytea's input form, "\x" and hex, as a JSON string. */
static void
col_bytes(struct json_out *o, const char *name, const char *b, size_t len)
{
	static const char	hex[] = "0123456789abcdef";
	size_t			i;

	json_out_raw(o, ",\"");
	json_out_raw(o, name);
	if (b == NULL) {
		json_out_raw(o, "\":null");
		return;
	}
	json_out_raw(o, "\":\"\\\\x");
	if (!o->ok || o->len - o->off <= 2 * len + 1) {
		o->ok = 0;
		return;
	}
	for (i = 0; i < len; i++) {
		o->buf[o->off++] = hex[(unsigned char)b[i] >> 4];
		o->buf[o->off++] = hex[(unsigned char)b[i] & 0xf];
	}
	json_out_raw(o, "\"");
}

/* Non-zero when w writes the same job's (or subject's) row as v. */
static int
same_row(const struct store_put *w, const struct store_put *v, int subject)
{
	if ((subject ? w->subject == NULL || v->subject == NULL :
	    w->job == NULL || v->job == NULL))
		return 0;
	return strcmp(w->tenant, v->tenant) == 0 && strcmp(w->key, v->key) == 0;
}

/* The last of what w[0..n-1]'s writes of w[k]'s job say, NULL if none. */
static const char *
job_detail(const struct store_put *w, size_t n, size_t k, int which)
{
	const char	*v, *got = NULL;
	size_t		 i;

	for (i = 0; i < n; i++) {
		if (i != k && !same_row(&w[i], &w[k], 0))
			continue;
		v = which == 0 ? w[i].obs->file_key : which == 1 ?
		    w[i].obs->file_url : w[i].obs->error;
		if (v != NULL && v[0] != '\0')	/* "" binds NULL */
			got = v;
	}
	return got;
}

enum set { SET_RECEIPTS, SET_JOBS, SET_SUBJECTS, SET_CLAIMS, SET_OUTBOX,
    SET__N };

/*
 * Writes what's rows of w[0..n-1] into o; returns how many.  A job's (or
 * subject's) state is written by the last of its writers, with what the
 * earlier ones said that the later did not (store_job_put()'s coalesce).
 */
static size_t
set_rows(struct json_out *o, enum set what, const struct store_put *w,
    size_t n)
{
	const struct store_put	*v;
	size_t			 i, k, rows = 0;

	json_out_raw(o, "[");
	for (i = 0; i < n; i++) {
		v = &w[i];
		switch (what) {
		case SET_RECEIPTS:
			if (v->rcpt == NULL)
				continue;
			break;
		case SET_JOBS:
		case SET_SUBJECTS:
			for (k = i + 1; k < n &&
			    !same_row(&w[k], v, what == SET_SUBJECTS); k++)
				continue;
			if ((what == SET_JOBS ? v->job : (const void *)
			    v->subject) == NULL || k < n)
				continue;	/* none, or not the last */
			break;
		case SET_CLAIMS:
		case SET_OUTBOX:
			if (v->claim == NULL)
				continue;
			break;
		case SET__N:
			continue;
		}
		/*
		 * "_", a member no column has, first: every column's then
		 * follows a comma.
		 */
		json_out_raw(o, rows++ > 0 ? ",{\"_\":0" : "{\"_\":0");
		switch (what) {
		case SET_RECEIPTS:
			col_int(o, "received_at", v->rcpt->at);
			col_str(o, "tenant", v->rcpt->tenant);
			col_str(o, "endpoint", v->rcpt->endpoint);
			col_str(o, "source", v->rcpt->source);
			col_str(o, "delivery_id", v->rcpt->delivery_id);
			col_str(o, "job_id", v->rcpt->job_id);
			col_str(o, "type", v->rcpt->type);
			col_str(o, "status", v->rcpt->status);
			col_str(o, "stage", v->rcpt->stage);
			col_str(o, "result", v->result);
			col_str(o, "action_id", v->action);
			col_bytes(o, "body", v->rcpt->body, v->rcpt->bodylen);
			if (v->rcpt->versioned) {
				col_int(o, "version", v->rcpt->version);
				col_int(o, "occurred_at", v->rcpt->occurred_ms);
			}
			break;
		case SET_JOBS:
			col_str(o, "tenant", v->tenant);
			col_str(o, "job_id", v->key);
			col_int(o, "stage", (int)v->job->stage);
			col_str(o, "terminal", obs_status_name(v->job->terminal));
			col_str(o, "file_key", job_detail(w, n, i, 0));
			col_str(o, "file_url", job_detail(w, n, i, 1));
			col_str(o, "error", job_detail(w, n, i, 2));
			col_int(o, "updated_at", v->now);
			break;
		case SET_SUBJECTS:
			col_str(o, "tenant", v->tenant);
			col_str(o, "subject", v->key);
			col_int(o, "version", v->subject->version);
			col_int(o, "occurred_at", v->subject->occurred_ms);
			col_str(o, "effect", v->subject->undo ? "undo" : "do");
			col_str(o, "step", v->subject->step);
			col_str(o, "type", v->obs->type);
			col_int(o, "updated_at", v->now);
			break;
		case SET_CLAIMS:
			col_str(o, "action_id", v->claim->id);
			col_str(o, "tenant", v->claim->tenant);
			col_str(o, "attempt", v->claim->attempt);
			col_str(o, "step", v->claim->step);
			col_str(o, "job_id", v->claim->job_id);
			col_int(o, "accepted_at", v->claim->now);
			break;
		case SET_OUTBOX:
			col_str(o, "action_id", v->claim->id);
			col_str(o, "tenant", v->claim->tenant);
			col_str(o, "destination", v->claim->destination);
			col_str(o, "payload", v->claim->payload);
			col_int(o, "created_at", v->claim->now);
			break;
		case SET__N:
			break;
		}
		json_out_raw(o, "}");
	}
	json_out_raw(o, "]");
	return rows;
}

/*
 * A set's text, at most about this many bytes, a member's rows more when
 * they alone are: the set doubles its bodies (hex), and the server holds
 * the whole text while it runs, so a batch of large bodies is sent in
 * several statements.
 */
#define SET_BYTES_MAX	(1024 * 1024)

/* About what w's row of what takes in a set's text. */
static size_t
set_bytes(const struct store_put *w, enum set what)
{
	size_t	n = 1024;

	if (what == SET_RECEIPTS && w->rcpt != NULL && w->rcpt->body != NULL)
		n += 2 * w->rcpt->bodylen;
	if (what == SET_OUTBOX && w->claim != NULL &&
	    w->claim->payload != NULL)
		n += 6 * strlen(w->claim->payload);
	return n;
}

/* Sends one statement of what for w[0..n-1]; nothing when none has a row. */
static enum store_status
set_chunk(struct store *s, enum set what, const struct store_put *w,
    size_t n)
{
	static const enum store_q	 q[SET__N] = { STORE_Q_RECEIPTS_SET,
	    STORE_Q_JOBS_SET, STORE_Q_SUBJECTS_SET, STORE_Q_CLAIMS_SET,
	    STORE_Q_OUTBOX_SET };
	struct json_out			 o;
	struct db_stmt			*st;
	enum db_rc			 rc;
	size_t				 rows;
	char				*grown;

	memset(&o, 0, sizeof(o));
	o.len = 4096;
	for (;;) {
		if ((grown = realloc(o.buf, o.len)) == NULL) {
			free(o.buf);
			return STORE_NOMEM;
		}
		o.buf = grown;
		o.off = 0;
		o.ok = 1;
		rows = set_rows(&o, what, w, n);
		if (o.ok)
			break;
		if (o.len > SIZE_MAX / 2) {
			free(o.buf);
			return STORE_NOMEM;
		}
		o.len *= 2;
	}
	o.buf[o.off] = '\0';
	if (rows == 0) {
		free(o.buf);
		return STORE_OK;
	}
	if ((st = store_stmt(s, q[what])) == NULL) {
		free(o.buf);
		return store_last(s);
	}
	rc = db_bind_text(st, 1, o.buf);
	free(o.buf);
	if (rc != DB_OK)
		return STORE_NOMEM;
	return store_send(st);
}

/*
 * One table's rows, in statements of at most SET_BYTES_MAX: a job's (or
 * subject's) writes in two of them are two rows, the later statement's
 * over the earlier's, as two batches' would be.
 */
static enum store_status
set_send(struct store *s, enum set what, const struct store_put *w,
    size_t n)
{
	enum store_status	rc;
	size_t			start, end, bytes, b;

	for (start = 0; start < n; start = end) {
		for (end = start, bytes = 0; end < n; end++) {
			b = set_bytes(&w[end], what);
			if (end > start && bytes + b > SET_BYTES_MAX)
				break;
			bytes += b;
		}
		if ((rc = set_chunk(s, what, w + start, end - start)) !=
		    STORE_OK)
			return rc;
	}
	return STORE_OK;
}

enum store_status
store_put_set(struct store *s, const struct store_put *w, size_t n,
    size_t *failed)
{
	enum store_status	rc;
	size_t			i;
	int			k;

	*failed = SIZE_MAX;
	for (i = 0; i < n; i++)
		if (w[i].claim != NULL && fault_fire(FAULT_OUTBOX_INSERT)) {
			*failed = i;
			return STORE_IO;
		}
	for (k = 0; k < SET__N; k++)
		if ((rc = set_send(s, (enum set)k, w, n)) != STORE_OK)
			return rc;
	for (i = 0; i < n; i++)
		if (w[i].kind != NULL && (rc = store_conflict_add(s,
		    w[i].tenant, w[i].key, w[i].conflict_action, w[i].kind,
		    w[i].recorded, w[i].observed, w[i].now)) != STORE_OK) {
			*failed = i;
			return rc;
		}
	return STORE_OK;
}
