/*
 * store.c: state.db on SQLite.  All of its SQL is here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"
#include "sql.h"
#include "store.h"
#include "util.h"

struct store {
	struct sql	sql;
	int		in_tx;
};

/*
 * Schema migrations: migrations[i] takes user_version i to i + 1.  Append
 * only; never edit a released step.
 */
static const char *const migrations[] = {
	/* 0 -> 1 */
	"CREATE TABLE receipts("
	" id INTEGER PRIMARY KEY,"
	" received_at INTEGER NOT NULL,"
	" tenant TEXT NOT NULL,"
	" endpoint TEXT,"
	" source TEXT NOT NULL,"
	" delivery_id TEXT,"
	" job_id TEXT,"
	" type TEXT,"
	" status TEXT,"
	" stage TEXT,"
	" result TEXT NOT NULL,"
	" action_id TEXT,"
	" body BLOB);"
	"CREATE UNIQUE INDEX receipts_delivery ON receipts(endpoint, delivery_id)"
	" WHERE delivery_id IS NOT NULL;"
	"CREATE INDEX receipts_time ON receipts(received_at);"
	"CREATE TABLE job_state("
	" tenant TEXT NOT NULL,"
	" job_id TEXT NOT NULL,"
	" stage INTEGER NOT NULL,"
	" terminal TEXT NOT NULL CHECK(terminal IN"
	"  ('none','completed','failed','skipped','warning')),"
	" file_key TEXT,"
	" file_url TEXT,"
	" error TEXT,"
	" updated_at INTEGER NOT NULL,"
	" PRIMARY KEY(tenant, job_id)) WITHOUT ROWID;"
	"CREATE TABLE accepted("
	" action_id TEXT PRIMARY KEY,"
	" tenant TEXT NOT NULL,"
	" attempt TEXT NOT NULL,"
	" step TEXT NOT NULL,"
	" job_id TEXT NOT NULL,"
	" accepted_at INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE TABLE outbox("
	" action_id TEXT PRIMARY KEY REFERENCES accepted(action_id),"
	" tenant TEXT NOT NULL,"
	" destination TEXT NOT NULL,"
	" payload TEXT NOT NULL,"
	" state TEXT NOT NULL DEFAULT 'pending' CHECK(state IN"
	"  ('pending','leased','delivered','dead','unknown')),"
	" attempts INTEGER NOT NULL DEFAULT 0,"
	" next_at INTEGER NOT NULL,"
	" lease_owner TEXT,"
	" lease_until INTEGER,"
	" created_at INTEGER NOT NULL,"
	" updated_at INTEGER NOT NULL,"
	" last_status INTEGER,"
	" last_error TEXT);"
	"CREATE INDEX outbox_due ON outbox(state, next_at);"
	"CREATE TABLE attempts("
	" id INTEGER PRIMARY KEY,"
	" action_id TEXT NOT NULL,"
	" n INTEGER NOT NULL,"
	" owner TEXT,"
	" started_at INTEGER NOT NULL,"
	" ended_at INTEGER,"
	" http_status INTEGER,"
	" error TEXT);"
	"CREATE INDEX attempts_action ON attempts(action_id);"
	"CREATE TABLE conflicts("
	" id INTEGER PRIMARY KEY,"
	" created_at INTEGER NOT NULL,"
	" tenant TEXT NOT NULL,"
	" job_id TEXT NOT NULL,"
	" action_id TEXT,"
	" kind TEXT NOT NULL CHECK(kind IN ('terminal','action')),"
	" recorded TEXT NOT NULL,"
	" observed TEXT NOT NULL,"
	" seen INTEGER NOT NULL DEFAULT 1,"
	" resolved_at INTEGER,"
	" resolution TEXT);"
	"CREATE UNIQUE INDEX conflicts_open ON conflicts(tenant, job_id, kind,"
	" observed) WHERE resolved_at IS NULL;",
};

#define SCHEMA_VERSION ((int)(sizeof(migrations) / sizeof(migrations[0])))

enum q {
	Q_BEGIN,
	Q_COMMIT,
	Q_ROLLBACK,
	Q_RECEIPT_ADD,
	Q_RECEIPT_PRIOR,
	Q_RECEIPT_FINISH,
	Q_JOB_GET,
	Q_JOB_PUT,
	Q_CLAIM,
	Q_CLAIM_OWNER,
	Q_OUTBOX_ADD,
	Q_CONFLICT_ADD,
	Q_COUNT_OUTBOX,
	Q_COUNT_CONFLICTS,
	Q_OLDEST_PENDING,
	Q_RECEIPT_COUNTS,
	Q__N
};

static const char *const sqltext[Q__N] = {
	[Q_BEGIN] = "BEGIN IMMEDIATE",
	[Q_COMMIT] = "COMMIT",
	[Q_ROLLBACK] = "ROLLBACK",
	[Q_RECEIPT_ADD] = "INSERT INTO receipts(received_at, tenant, endpoint,"
	    " source, delivery_id, job_id, type, status, stage, result, body)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'pending', ?10)"
	    " ON CONFLICT(endpoint, delivery_id) WHERE delivery_id IS NOT NULL"
	    " DO NOTHING RETURNING id",
	[Q_RECEIPT_PRIOR] = "SELECT result, action_id FROM receipts"
	    " WHERE endpoint = ?1 AND delivery_id = ?2",
	[Q_RECEIPT_FINISH] = "UPDATE receipts SET result = ?2, action_id = ?3"
	    " WHERE id = ?1",
	[Q_JOB_GET] = "SELECT stage, terminal FROM job_state"
	    " WHERE tenant = ?1 AND job_id = ?2",
	[Q_JOB_PUT] = "INSERT INTO job_state(tenant, job_id, stage, terminal,"
	    " file_key, file_url, error, updated_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
	    " ON CONFLICT(tenant, job_id) DO UPDATE SET stage = excluded.stage,"
	    " terminal = excluded.terminal,"
	    " file_key = coalesce(excluded.file_key, file_key),"
	    " file_url = coalesce(excluded.file_url, file_url),"
	    " error = coalesce(excluded.error, error),"
	    " updated_at = excluded.updated_at",
	[Q_CLAIM] = "INSERT INTO accepted(action_id, tenant, attempt, step,"
	    " job_id, accepted_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
	    " ON CONFLICT(action_id) DO NOTHING",
	[Q_CLAIM_OWNER] = "SELECT job_id FROM accepted WHERE action_id = ?1",
	[Q_OUTBOX_ADD] = "INSERT INTO outbox(action_id, tenant, destination,"
	    " payload, state, next_at, created_at, updated_at)"
	    " VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?5, ?5)",
	[Q_CONFLICT_ADD] = "INSERT INTO conflicts(created_at, tenant, job_id,"
	    " action_id, kind, recorded, observed)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
	    " ON CONFLICT(tenant, job_id, kind, observed)"
	    " WHERE resolved_at IS NULL DO UPDATE SET seen = seen + 1",
	[Q_COUNT_OUTBOX] = "SELECT state, count(*) FROM outbox GROUP BY state",
	[Q_COUNT_CONFLICTS] = "SELECT count(*) FROM conflicts"
	    " WHERE resolved_at IS NULL",
	[Q_OLDEST_PENDING] = "SELECT min(created_at) FROM outbox"
	    " WHERE state IN ('pending','leased')",
	[Q_RECEIPT_COUNTS] = "SELECT result, count(*) FROM receipts"
	    " GROUP BY result ORDER BY result",
};

const char *
store_strerror(enum store_status s)
{
	switch (s) {
	case STORE_OK:
		return "ok";
	case STORE_BUSY:
		return "state database is busy";
	case STORE_IO:
		return "state database cannot be written (I/O error, disk "
		    "full or read-only)";
	case STORE_NOMEM:
		return "out of memory";
	case STORE_ERROR:
		return "state database error";
	}
	return "unknown error";
}

static enum store_status
status_of(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return STORE_OK;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return STORE_BUSY;
	case SQLITE_IOERR:
	case SQLITE_FULL:
	case SQLITE_READONLY:
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
		return STORE_IO;
	case SQLITE_NOMEM:
		return STORE_NOMEM;
	default:
		return STORE_ERROR;
	}
}

/* The status of the connection's last error, for a failed prepare. */
static enum store_status
last(struct store *s)
{
	return status_of(sqlite3_errcode(s->sql.db));
}

static enum store_status
migrate(struct store *s)
{
	sqlite3_stmt		*st = NULL;
	enum store_status	 rc;
	int			 v, i;
	char			 pragma[48];

	if (sqlite3_prepare_v2(s->sql.db, "PRAGMA user_version", -1, &st,
	    NULL) != SQLITE_OK)
		return last(s);
	/* The common case, current already, needs no write lock. */
	if (sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_int(st, 0) == SCHEMA_VERSION) {
		sqlite3_finalize(st);
		return STORE_OK;
	}
	sqlite3_reset(st);
	if ((rc = status_of(sql_exec(&s->sql, "BEGIN IMMEDIATE"))) != STORE_OK)
		goto out;
	/* Read again under the lock: another process may have migrated. */
	if (sqlite3_step(st) != SQLITE_ROW) {
		rc = last(s);
		goto out;
	}
	v = sqlite3_column_int(st, 0);
	sqlite3_reset(st);
	if (v > SCHEMA_VERSION || v < 0) {
		rc = STORE_ERROR;	/* written by a newer hookbox */
		goto out;
	}
	for (i = v; i < SCHEMA_VERSION; i++)
		if ((rc = status_of(sql_exec(&s->sql, migrations[i]))) !=
		    STORE_OK)
			goto out;
	if (v != SCHEMA_VERSION) {
		if (snprintf(pragma, sizeof(pragma), "PRAGMA user_version=%d",
		    SCHEMA_VERSION) >= (int)sizeof(pragma)) {
			rc = STORE_ERROR;
			goto out;
		}
		if ((rc = status_of(sql_exec(&s->sql, pragma))) != STORE_OK)
			goto out;
	}
	rc = status_of(sql_exec(&s->sql, "COMMIT"));
out:
	sqlite3_finalize(st);
	if (rc != STORE_OK && !sqlite3_get_autocommit(s->sql.db))
		(void)sql_exec(&s->sql, "ROLLBACK");
	return rc;
}

enum store_status
store_open(const char *path, const struct store_opts *opts,
    struct store **out)
{
	static const struct store_opts	 defaults = {
		STORE_BUSY_MS_DEFAULT, 0, 0
	};
	struct store			*s;
	enum store_status		 rc;
	int				 fd;

	*out = NULL;
	if (opts == NULL)
		opts = &defaults;
	if (opts->create) {
		/* Create it ourselves so that its mode is never wider. */
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return errno == ENOMEM ? STORE_NOMEM : STORE_IO;
		close(fd);
	}
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return STORE_NOMEM;
	if ((rc = status_of(sql_open(&s->sql, path, SQLITE_OPEN_READWRITE,
	    sqltext, Q__N))) != STORE_OK)
		goto out;
	sql_busy(&s->sql, opts->busy_ms);
	/* WAL is persistent in the file; synchronous is per connection. */
	if ((rc = status_of(sql_exec(&s->sql, "PRAGMA journal_mode=WAL"))) !=
	    STORE_OK)
		goto out;
	if ((rc = status_of(sql_exec(&s->sql, opts->sync_normal ?
	    "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL"))) !=
	    STORE_OK)
		goto out;
	rc = migrate(s);
out:
	if (rc != STORE_OK)
		store_close(s);
	else
		*out = s;
	return rc;
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	sql_close(&s->sql);
	free(s);
}

const char *
store_errmsg(struct store *s)
{
	return s != NULL && s->sql.db != NULL ? sqlite3_errmsg(s->sql.db) :
	    "no database";
}

static enum store_status
run(struct store *s, enum q q)
{
	sqlite3_stmt	*st;

	if ((st = sql_stmt(&s->sql, q)) == NULL)
		return last(s);
	return status_of(sql_step_done(st));
}

enum store_status
store_begin(struct store *s)
{
	enum store_status	rc;

	if ((rc = run(s, Q_BEGIN)) == STORE_OK)
		s->in_tx = 1;
	return rc;
}

enum store_status
store_commit(struct store *s)
{
	enum store_status	rc;

	if (fault_fire(FAULT_BEFORE_COMMIT))
		return STORE_IO;
	if ((rc = run(s, Q_COMMIT)) == STORE_OK)
		s->in_tx = 0;
	return rc;
}

void
store_rollback(struct store *s)
{
	/* A failed COMMIT may already have rolled back; autocommit tells. */
	if (s->in_tx && !sqlite3_get_autocommit(s->sql.db))
		(void)run(s, Q_ROLLBACK);
	s->in_tx = 0;
}

enum store_status
store_receipt_add(struct store *s, const struct store_receipt *r,
    int64_t *id, int *seen, struct store_prior *prior)
{
	sqlite3_stmt	*st;
	int		 rc;

	*id = 0;
	*seen = 0;
	if ((st = sql_stmt(&s->sql, Q_RECEIPT_ADD)) == NULL)
		return last(s);
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
		return status_of(rc);
	if (*id != 0)
		return STORE_OK;

	/* Nothing inserted: this delivery id was received before. */
	*seen = 1;
	memset(prior, 0, sizeof(*prior));
	if ((st = sql_stmt(&s->sql, Q_RECEIPT_PRIOR)) == NULL)
		return last(s);
	if (sql_bind_text(st, 1, r->endpoint) != SQLITE_OK ||
	    sql_bind_text(st, 2, r->delivery_id) != SQLITE_OK)
		return STORE_NOMEM;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		(void)sql_col_copy(st, 0, prior->result, sizeof(prior->result));
		(void)sql_col_copy(st, 1, prior->action, sizeof(prior->action));
		rc = SQLITE_DONE;
	}
	sqlite3_reset(st);
	return status_of(rc);
}

enum store_status
store_receipt_finish(struct store *s, int64_t id, const char *result,
    const char *action)
{
	sqlite3_stmt	*st;

	if ((st = sql_stmt(&s->sql, Q_RECEIPT_FINISH)) == NULL)
		return last(s);
	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK ||
	    sql_bind_text(st, 2, result) != SQLITE_OK ||
	    sql_bind_text(st, 3, action) != SQLITE_OK)
		return STORE_NOMEM;
	return status_of(sql_step_done(st));
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
	if ((st = sql_stmt(&s->sql, Q_JOB_GET)) == NULL)
		return last(s);
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
		status = status_of(rc);
	sqlite3_reset(st);
	return status;
}

enum store_status
store_job_put(struct store *s, const char *tenant, const char *job_id,
    const struct store_job *j, const struct obs *o, int64_t now)
{
	sqlite3_stmt	*st;

	if ((st = sql_stmt(&s->sql, Q_JOB_PUT)) == NULL)
		return last(s);
	if (sql_bind_text(st, 1, tenant) != SQLITE_OK ||
	    sql_bind_text(st, 2, job_id) != SQLITE_OK ||
	    sqlite3_bind_int(st, 3, (int)j->stage) != SQLITE_OK ||
	    sql_bind_text(st, 4, obs_status_name(j->terminal)) != SQLITE_OK ||
	    sql_bind_text(st, 5, o->file_key) != SQLITE_OK ||
	    sql_bind_text(st, 6, o->file_url) != SQLITE_OK ||
	    sql_bind_text(st, 7, o->error) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 8, now) != SQLITE_OK)
		return STORE_NOMEM;
	return status_of(sql_step_done(st));
}

enum store_status
store_action_claim(struct store *s, const struct store_action *a,
    enum store_claim *out)
{
	sqlite3_stmt	*st;
	const char	*owner;
	int		 rc;

	if ((st = sql_stmt(&s->sql, Q_CLAIM)) == NULL)
		return last(s);
	if (sql_bind_text(st, 1, a->id) != SQLITE_OK ||
	    sql_bind_text(st, 2, a->tenant) != SQLITE_OK ||
	    sql_bind_text(st, 3, a->attempt) != SQLITE_OK ||
	    sql_bind_text(st, 4, a->step) != SQLITE_OK ||
	    sql_bind_text(st, 5, a->job_id) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 6, a->now) != SQLITE_OK)
		return STORE_NOMEM;
	if ((rc = sql_step_done(st)) != SQLITE_DONE)
		return status_of(rc);
	if (sqlite3_changes(s->sql.db) == 1) {
		*out = STORE_CLAIMED;
		return STORE_OK;
	}

	if ((st = sql_stmt(&s->sql, Q_CLAIM_OWNER)) == NULL)
		return last(s);
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
	return status_of(rc);
}

enum store_status
store_outbox_add(struct store *s, const struct store_action *a)
{
	sqlite3_stmt	*st;

	if (fault_fire(FAULT_OUTBOX_INSERT))
		return STORE_IO;
	if ((st = sql_stmt(&s->sql, Q_OUTBOX_ADD)) == NULL)
		return last(s);
	if (sql_bind_text(st, 1, a->id) != SQLITE_OK ||
	    sql_bind_text(st, 2, a->tenant) != SQLITE_OK ||
	    sql_bind_text(st, 3, a->destination) != SQLITE_OK ||
	    sql_bind_text(st, 4, a->payload) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 5, a->now) != SQLITE_OK)
		return STORE_NOMEM;
	return status_of(sql_step_done(st));
}

enum store_status
store_conflict_add(struct store *s, const char *tenant, const char *job_id,
    const char *action_id, const char *kind, const char *recorded,
    const char *observed, int64_t now)
{
	sqlite3_stmt	*st;

	if ((st = sql_stmt(&s->sql, Q_CONFLICT_ADD)) == NULL)
		return last(s);
	if (sqlite3_bind_int64(st, 1, now) != SQLITE_OK ||
	    sql_bind_text(st, 2, tenant) != SQLITE_OK ||
	    sql_bind_text(st, 3, job_id) != SQLITE_OK ||
	    sql_bind_text(st, 4, action_id) != SQLITE_OK ||
	    sql_bind_text(st, 5, kind) != SQLITE_OK ||
	    sql_bind_text(st, 6, recorded) != SQLITE_OK ||
	    sql_bind_text(st, 7, observed) != SQLITE_OK)
		return STORE_NOMEM;
	return status_of(sql_step_done(st));
}

/* Steps a one-row, one-integer query. */
static enum store_status
scalar(struct store *s, enum q q, int64_t *out)
{
	sqlite3_stmt	*st;
	int		 rc;

	*out = 0;
	if ((st = sql_stmt(&s->sql, q)) == NULL)
		return last(s);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = SQLITE_DONE;
	}
	sqlite3_reset(st);
	return status_of(rc);
}

enum store_status
store_counts(struct store *s, struct store_counts *c)
{
	sqlite3_stmt		*st;
	const char		*state;
	int64_t			 n;
	int			 rc;
	enum store_status	 status;

	memset(c, 0, sizeof(*c));
	if ((st = sql_stmt(&s->sql, Q_COUNT_OUTBOX)) == NULL)
		return last(s);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		state = (const char *)sqlite3_column_text(st, 0);
		n = sqlite3_column_int64(st, 1);
		if (state == NULL)
			continue;
		if (strcmp(state, "pending") == 0)
			c->pending = n;
		else if (strcmp(state, "leased") == 0)
			c->leased = n;
		else if (strcmp(state, "delivered") == 0)
			c->delivered = n;
		else if (strcmp(state, "dead") == 0)
			c->dead = n;
		else if (strcmp(state, "unknown") == 0)
			c->unknown = n;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return status_of(rc);
	if ((status = scalar(s, Q_COUNT_CONFLICTS, &c->conflicts_open)) !=
	    STORE_OK)
		return status;
	return scalar(s, Q_OLDEST_PENDING, &c->oldest_pending_ms);
}

enum store_status
store_receipt_counts(struct store *s,
    int (*fn)(void *, const char *, int64_t), void *arg)
{
	sqlite3_stmt	*st;
	const char	*result;
	int		 rc;

	if ((st = sql_stmt(&s->sql, Q_RECEIPT_COUNTS)) == NULL)
		return last(s);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		result = (const char *)sqlite3_column_text(st, 0);
		if (result != NULL &&
		    fn(arg, result, sqlite3_column_int64(st, 1)) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_reset(st);
	return status_of(rc);
}

enum store_status
store_check_writable(struct store *s)
{
	enum store_status	rc;

	if (sqlite3_db_readonly(s->sql.db, "main") != 0)
		return STORE_IO;
	if ((rc = store_begin(s)) != STORE_OK)
		return rc;
	store_rollback(s);
	return STORE_OK;
}
