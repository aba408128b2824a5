/*
 * store.c: state.db on SQLite.  All of its SQL is here.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

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
	/* 1 -> 2: the dispatcher's round-robin claim. */
	"CREATE INDEX outbox_claim ON outbox(state, tenant, next_at);",
	/* 2 -> 3: when the poller last asked about each job. */
	"CREATE TABLE polls("
	" tenant TEXT NOT NULL,"
	" job_id TEXT NOT NULL,"
	" polled_at INTEGER NOT NULL,"
	" PRIMARY KEY(tenant, job_id)) WITHOUT ROWID;",
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
	Q_PICK_AFTER,
	Q_PICK_ANY,
	Q_LEASE,
	Q_ATTEMPT_START,
	Q_ATTEMPT_END,
	Q_FINISH,
	Q_EXPIRED,
	Q_EXPIRE_MOVE,
	Q_EXPIRE_ATTEMPTS,
	Q_EXPIRE_DEFER,
	Q_UNKNOWN_DUE,
	Q_CHECK_CLAIM,
	Q_CHECK_END,
	Q_RECHECK_DUE,
	Q_MOVE_REQUEUE,
	Q_MOVE_DELIVERED,
	Q_MOVE_RESEND,
	Q_MOVE_RECHECK,
	Q_NEXT_DUE,
	Q_LIST_STATE,
	Q_LIST_ATTEMPTS,
	Q_LIST_CONFLICTS,
	Q_RESOLVE,
	Q_PRUNE_RECEIPTS,
	Q_PRUNE_ATTEMPTS,
	Q_PRUNE_OUTBOX,
	Q_PRUNE_ACCEPTED,
	Q_POLL_LAST,
	Q_POLL_MARK,
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
	[Q_PICK_AFTER] = "SELECT action_id, tenant, destination, payload,"
	    " attempts FROM outbox WHERE state = 'pending' AND next_at <= ?1"
	    " AND tenant > ?2 ORDER BY tenant, next_at LIMIT 1",
	[Q_PICK_ANY] = "SELECT action_id, tenant, destination, payload,"
	    " attempts FROM outbox WHERE state = 'pending' AND next_at <= ?1"
	    " ORDER BY tenant, next_at LIMIT 1",
	[Q_LEASE] = "UPDATE outbox SET state = 'leased', lease_owner = ?2,"
	    " lease_until = ?3, attempts = attempts + 1, updated_at = ?4"
	    " WHERE action_id = ?1 AND state = 'pending'",
	[Q_ATTEMPT_START] = "INSERT INTO attempts(action_id, n, owner,"
	    " started_at) VALUES (?1, ?2, ?3, ?4)",
	[Q_ATTEMPT_END] = "UPDATE attempts SET ended_at = ?2,"
	    " http_status = ?3, error = ?4 WHERE id = ?1",
	[Q_FINISH] = "UPDATE outbox SET state = ?2, next_at = ?3,"
	    " lease_owner = NULL, lease_until = NULL, updated_at = ?4,"
	    " last_status = ?5, last_error = ?6"
	    " WHERE action_id = ?1 AND state = 'leased' AND lease_owner = ?7",
	/* Collected rows: (action, tenant, destination, attempts, lease
	   owner, lease expiry), bound with ?1 = now and ?2 = limit. */
	[Q_EXPIRED] = "SELECT action_id, tenant, destination, attempts,"
	    " lease_owner, lease_until FROM outbox"
	    " WHERE state = 'leased' AND lease_until < ?1"
	    " ORDER BY lease_until LIMIT ?2",
	/* The guard: the same lease as collected, and still expired. */
	[Q_EXPIRE_MOVE] = "UPDATE outbox SET state = ?2, next_at = ?4,"
	    " lease_owner = NULL, lease_until = NULL, updated_at = ?3,"
	    " last_error = ?7"
	    " WHERE action_id = ?1 AND state = 'leased' AND lease_owner IS ?5"
	    " AND lease_until = ?6 AND lease_until < ?3",
	[Q_EXPIRE_ATTEMPTS] = "UPDATE attempts SET ended_at = ?2,"
	    " error = 'lease expired: outcome unknown'"
	    " WHERE action_id = ?1 AND ended_at IS NULL",
	[Q_EXPIRE_DEFER] = "UPDATE outbox SET lease_until = ?4,"
	    " updated_at = ?5 WHERE action_id = ?1 AND state = 'leased'"
	    " AND lease_owner IS ?2 AND lease_until = ?3",
	[Q_UNKNOWN_DUE] = "SELECT action_id, tenant, destination, attempts,"
	    " lease_owner, lease_until FROM outbox"
	    " WHERE state = 'unknown' AND next_at <= ?1 ORDER BY next_at"
	    " LIMIT ?2",
	/* A check's claim: the row is not due again until it lapses. */
	[Q_CHECK_CLAIM] = "UPDATE outbox SET lease_owner = ?2,"
	    " lease_until = ?4, next_at = ?4, updated_at = ?3"
	    " WHERE action_id = ?1 AND state = 'unknown' AND next_at <= ?3",
	[Q_CHECK_END] = "UPDATE outbox SET state = ?4, next_at = ?6,"
	    " lease_owner = NULL, lease_until = NULL, updated_at = ?5,"
	    " last_error = ?7 WHERE action_id = ?1 AND state = 'unknown'"
	    " AND lease_owner = ?2 AND lease_until = ?3",
	[Q_RECHECK_DUE] = "UPDATE outbox SET next_at = ?3, updated_at = ?2,"
	    " last_error = ?4 WHERE action_id = ?1 AND state = 'unknown'"
	    " AND next_at <= ?2",
	/* Operator moves end any status check under way. */
	[Q_MOVE_REQUEUE] = "UPDATE outbox SET state = 'pending', next_at = ?2,"
	    " attempts = 0, lease_owner = NULL, lease_until = NULL,"
	    " updated_at = ?2, last_error = ?3"
	    " WHERE action_id = ?1 AND state IN ('dead', 'unknown')",
	[Q_MOVE_DELIVERED] = "UPDATE outbox SET state = 'delivered',"
	    " lease_owner = NULL, lease_until = NULL,"
	    " updated_at = ?2, last_error = ?3"
	    " WHERE action_id = ?1 AND state IN ('unknown', 'dead')",
	[Q_MOVE_RESEND] = "UPDATE outbox SET state = 'pending', next_at = ?2,"
	    " lease_owner = NULL, lease_until = NULL,"
	    " updated_at = ?2, last_error = ?3"
	    " WHERE action_id = ?1 AND state = 'unknown'",
	[Q_MOVE_RECHECK] = "UPDATE outbox SET next_at = ?4,"
	    " lease_owner = NULL, lease_until = NULL, updated_at = ?2,"
	    " last_error = ?3 WHERE action_id = ?1 AND state = 'unknown'",
	[Q_NEXT_DUE] = "SELECT min(t) FROM (SELECT min(next_at) AS t FROM"
	    " outbox WHERE state = 'pending' UNION ALL SELECT min(lease_until)"
	    " FROM outbox WHERE state = 'leased')",
	[Q_LIST_STATE] = "SELECT json_object('action', action_id, 'tenant',"
	    " tenant, 'destination', destination, 'state', state, 'attempts',"
	    " attempts, 'next_at', next_at, 'lease_owner', lease_owner,"
	    " 'lease_until', lease_until, 'created_at', created_at,"
	    " 'updated_at', updated_at, 'last_status', last_status,"
	    " 'last_error', last_error) FROM outbox WHERE state = ?1"
	    " ORDER BY created_at LIMIT ?2",
	[Q_LIST_ATTEMPTS] = "SELECT json_object('n', n, 'owner', owner,"
	    " 'started_at', started_at, 'ended_at', ended_at, 'http_status',"
	    " http_status, 'error', error) FROM attempts WHERE action_id = ?1"
	    " ORDER BY id",
	[Q_LIST_CONFLICTS] = "SELECT json_object('id', id, 'created_at',"
	    " created_at, 'tenant', tenant, 'job_id', job_id, 'action',"
	    " action_id, 'kind', kind, 'recorded', recorded, 'observed',"
	    " observed, 'seen', seen, 'resolved_at', resolved_at,"
	    " 'resolution', resolution) FROM conflicts"
	    " WHERE ?1 OR resolved_at IS NULL ORDER BY id",
	[Q_RESOLVE] = "UPDATE conflicts SET resolved_at = ?2, resolution = ?3"
	    " WHERE id = ?1 AND resolved_at IS NULL",
	[Q_PRUNE_RECEIPTS] = "DELETE FROM receipts WHERE received_at < ?1",
	[Q_PRUNE_ATTEMPTS] = "DELETE FROM attempts WHERE action_id IN"
	    " (SELECT o.action_id FROM outbox o JOIN accepted a USING"
	    " (action_id) WHERE o.state = 'delivered' AND a.accepted_at < ?1)",
	[Q_PRUNE_OUTBOX] = "DELETE FROM outbox WHERE state = 'delivered' AND"
	    " action_id IN (SELECT action_id FROM accepted"
	    " WHERE accepted_at < ?1)",
	[Q_PRUNE_ACCEPTED] = "DELETE FROM accepted WHERE accepted_at < ?1"
	    " AND NOT EXISTS (SELECT 1 FROM outbox o"
	    " WHERE o.action_id = accepted.action_id)",
	[Q_POLL_LAST] = "SELECT polled_at FROM polls WHERE tenant = ?1"
	    " AND job_id = ?2",
	[Q_POLL_MARK] = "INSERT INTO polls(tenant, job_id, polled_at)"
	    " VALUES (?1, ?2, ?3) ON CONFLICT(tenant, job_id)"
	    " DO UPDATE SET polled_at = excluded.polled_at",
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
	case STORE_GONE:
		return "state database file removed, replaced or made"
		    " read-only under the running process";
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

/* path (with suffix, when not NULL) may be written by us, or is absent. */
static int
writable(const char *path, const char *suffix)
{
	char	p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s%s", path, suffix != NULL ? suffix :
	    "") >= (int)sizeof(p))
		return 0;
	if (faccessat(AT_FDCWD, p, W_OK, AT_EACCESS) == 0)
		return 1;
	/* Absent: the open says so for the database; -wal, -shm may be. */
	return errno == ENOENT;
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
	/*
	 * A file we may not write is not opened at all: SQLite would open it
	 * read-only without a word, and, as its only connection, make a new
	 * -shm with the file's mode, which then stays read-only after the
	 * file is writable again.
	 */
	if (!writable(path, 0) || !writable(path, "-wal") ||
	    !writable(path, "-shm"))
		return STORE_GONE;
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

/*
 * A file removed (or renamed over) under a running process stays open
 * and writable through our descriptor: commits would succeed into a file
 * no one else will ever read.  A file made read-only stays writable
 * through a descriptor opened before.  Neither may be acknowledged into.
 */
enum store_status
store_check_file(struct store *s)
{
	/* SQLite opens a file it may not write read-only, without a word. */
	if (!sql_same_file(&s->sql) ||
	    sqlite3_db_readonly(s->sql.db, "main") != 0 ||
	    faccessat(AT_FDCWD, s->sql.path, W_OK, AT_EACCESS) != 0)
		return STORE_GONE;
	return STORE_OK;
}

enum store_status
store_begin(struct store *s)
{
	enum store_status	rc;

	if ((rc = store_check_file(s)) != STORE_OK)
		return rc;
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
	if (rc == STORE_OK)
		rc = store_check_file(s);
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

static const char *const state_names[STORE_STATE__N] = {
	[STORE_PENDING] = "pending",
	[STORE_LEASED] = "leased",
	[STORE_DELIVERED] = "delivered",
	[STORE_DEAD] = "dead",
	[STORE_UNKNOWN] = "unknown",
};

const char *
store_state_name(enum store_state st)
{
	return (unsigned)st < STORE_STATE__N ? state_names[st] : NULL;
}

int
store_state_parse(const char *s, enum store_state *out)
{
	unsigned	i;

	for (i = 0; s != NULL && i < STORE_STATE__N; i++)
		if (strcmp(s, state_names[i]) == 0) {
			*out = (enum store_state)i;
			return 0;
		}
	return -1;
}

int64_t
store_counts_age(const struct store_counts *c, int64_t now_ms)
{
	if (c->oldest_pending_ms <= 0 || now_ms <= c->oldest_pending_ms)
		return 0;
	return (now_ms - c->oldest_pending_ms) / 1000;
}

enum store_status
store_counts(struct store *s, struct store_counts *c)
{
	sqlite3_stmt		*st;
	enum store_state	 state;
	int			 rc;
	enum store_status	 status;

	memset(c, 0, sizeof(*c));
	if ((st = sql_stmt(&s->sql, Q_COUNT_OUTBOX)) == NULL)
		return last(s);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (store_state_parse((const char *)sqlite3_column_text(st, 0),
		    &state) == 0)
			c->outbox[state] = sqlite3_column_int64(st, 1);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return status_of(rc);
	if ((status = scalar(s, Q_COUNT_CONFLICTS, &c->conflicts_open)) !=
	    STORE_OK)
		return status;
	return scalar(s, Q_OLDEST_PENDING, &c->oldest_pending_ms);
}

enum store_status
store_receipt_counts(struct store *s, struct store_receipts *r)
{
	sqlite3_stmt	*st;
	enum hb_result	 res;
	int		 rc;

	memset(r, 0, sizeof(*r));
	if ((st = sql_stmt(&s->sql, Q_RECEIPT_COUNTS)) == NULL)
		return last(s);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (hb_result_parse((const char *)sqlite3_column_text(st, 0),
		    &res) == 0)
			r->n[res] += sqlite3_column_int64(st, 1);
	sqlite3_reset(st);
	return status_of(rc);
}

enum store_status
store_check_writable(struct store *s)
{
	enum store_status	rc;

	if ((rc = store_begin(s)) != STORE_OK)
		return rc;
	store_rollback(s);
	return STORE_OK;
}

void
store_lease_clear(struct store_lease *l)
{
	if (l == NULL)
		return;
	free(l->payload);
	memset(l, 0, sizeof(*l));
}

/* Steps a pick query: fills the lease from its row; *found 0 if none. */
static enum store_status
pick(struct store *s, enum q q, int64_t now, const char *cursor,
    struct store_lease *l, int *found)
{
	sqlite3_stmt		*st;
	const char		*payload;
	enum store_status	 status = STORE_OK;
	int			 rc;

	*found = 0;
	if ((st = sql_stmt(&s->sql, q)) == NULL)
		return last(s);
	if (sqlite3_bind_int64(st, 1, now) != SQLITE_OK ||
	    (cursor != NULL && sql_bind_text(st, 2, cursor) != SQLITE_OK))
		return STORE_NOMEM;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		payload = (const char *)sqlite3_column_text(st, 3);
		if (sql_col_copy(st, 0, l->action, sizeof(l->action)) != 0 ||
		    sql_col_copy(st, 1, l->tenant, sizeof(l->tenant)) != 0 ||
		    sql_col_copy(st, 2, l->destination,
		    sizeof(l->destination)) != 0 || payload == NULL)
			status = STORE_ERROR;
		else if ((l->payload = strdup(payload)) == NULL)
			status = STORE_NOMEM;
		l->attempt = sqlite3_column_int(st, 4) + 1;
		*found = status == STORE_OK;
	} else if (rc != SQLITE_DONE)
		status = status_of(rc);
	sqlite3_reset(st);
	return status;
}

enum store_status
store_outbox_claim(struct store *s, const char *owner, int64_t now,
    int64_t (*lease_ms)(void *, const char *, const char *), void *arg,
    char *cursor, struct store_lease *l, int *found)
{
	sqlite3_stmt		*st;
	enum store_status	 rc;

	memset(l, 0, sizeof(*l));
	*found = 0;
	if ((rc = store_begin(s)) != STORE_OK)
		return rc;
	/* The next tenant after the cursor, else from the start. */
	if (cursor[0] != '\0' &&
	    (rc = pick(s, Q_PICK_AFTER, now, cursor, l, found)) != STORE_OK)
		goto fail;
	if (!*found &&
	    (rc = pick(s, Q_PICK_ANY, now, NULL, l, found)) != STORE_OK)
		goto fail;
	if (!*found) {
		store_rollback(s);
		return STORE_OK;
	}
	if ((st = sql_stmt(&s->sql, Q_LEASE)) == NULL) {
		rc = last(s);
		goto fail;
	}
	l->lease_until = now + lease_ms(arg, l->tenant, l->destination);
	if (sql_bind_text(st, 1, l->action) != SQLITE_OK ||
	    sql_bind_text(st, 2, owner) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, l->lease_until) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, now) != SQLITE_OK) {
		rc = STORE_NOMEM;
		goto fail;
	}
	if ((rc = status_of(sql_step_done(st))) != STORE_OK)
		goto fail;
	if ((st = sql_stmt(&s->sql, Q_ATTEMPT_START)) == NULL) {
		rc = last(s);
		goto fail;
	}
	if (sql_bind_text(st, 1, l->action) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, l->attempt) != SQLITE_OK ||
	    sql_bind_text(st, 3, owner) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, now) != SQLITE_OK) {
		rc = STORE_NOMEM;
		goto fail;
	}
	if ((rc = status_of(sql_step_done(st))) != STORE_OK)
		goto fail;
	l->attempt_id = sqlite3_last_insert_rowid(s->sql.db);
	if ((rc = store_commit(s)) != STORE_OK)
		goto fail;
	memcpy(cursor, l->tenant, strlen(l->tenant) + 1);
	return STORE_OK;
fail:
	store_rollback(s);
	store_lease_clear(l);
	*found = 0;
	return rc;
}

static const char *const outcome_state[] = {
	[STORE_OUT_DELIVERED] = "delivered",
	[STORE_OUT_RETRY] = "pending",
	[STORE_OUT_DEAD] = "dead",
	[STORE_OUT_UNKNOWN] = "unknown",
};

static enum store_status
attempt_end(struct store *s, int64_t id, int64_t now, long status,
    const char *error)
{
	sqlite3_stmt	*st;

	if ((st = sql_stmt(&s->sql, Q_ATTEMPT_END)) == NULL)
		return last(s);
	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, now) != SQLITE_OK ||
	    (status > 0 ? sqlite3_bind_int64(st, 3, status) :
	    sqlite3_bind_null(st, 3)) != SQLITE_OK ||
	    sql_bind_text(st, 4, error) != SQLITE_OK)
		return STORE_NOMEM;
	return status_of(sql_step_done(st));
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
	if ((st = sql_stmt(&s->sql, Q_FINISH)) == NULL) {
		rc = last(s);
		goto fail;
	}
	if (sql_bind_text(st, 1, l->action) != SQLITE_OK ||
	    sql_bind_text(st, 2, outcome_state[out]) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, next_at) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, now) != SQLITE_OK ||
	    (http_status > 0 ? sqlite3_bind_int64(st, 5, http_status) :
	    sqlite3_bind_null(st, 5)) != SQLITE_OK ||
	    sql_bind_text(st, 6, error) != SQLITE_OK ||
	    sql_bind_text(st, 7, owner) != SQLITE_OK) {
		rc = STORE_NOMEM;
		goto fail;
	}
	if ((rc = status_of(sql_step_done(st))) != STORE_OK)
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
 * Runs a collecting statement (see Q_EXPIRED) bound with ?1 = now and
 * ?2 = max into rows; *n receives the count.  A row whose keys do not
 * fit is skipped.
 */
static enum store_status
collect_rows(struct store *s, enum q q, int64_t now, struct store_row *rows,
    int max, int *n)
{
	sqlite3_stmt		*st;
	struct store_row	*r;
	int			 rc = SQLITE_DONE;

	*n = 0;
	if (max <= 0)
		return STORE_OK;
	if ((st = sql_stmt(&s->sql, q)) == NULL)
		return last(s);
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
	return rc == SQLITE_ROW ? STORE_OK : status_of(rc);
}

enum store_status
store_outbox_expired(struct store *s, int64_t now, struct store_row *rows,
    int max, int *n)
{
	return collect_rows(s, Q_EXPIRED, now, rows, max, n);
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
	if ((st = sql_stmt(&s->sql, Q_EXPIRE_MOVE)) == NULL) {
		rc = last(s);
		goto fail;
	}
	if (sql_bind_text(st, 1, r->action) != SQLITE_OK ||
	    sql_bind_text(st, 2, outcome_state[out]) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, now) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, at) != SQLITE_OK ||
	    sql_bind_text(st, 5, r->owner) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 6, r->lease_until) != SQLITE_OK ||
	    sql_bind_text(st, 7, note) != SQLITE_OK) {
		rc = STORE_NOMEM;
		goto fail;
	}
	if ((rc = status_of(sql_step_done(st))) != STORE_OK)
		goto fail;
	if (sqlite3_changes(s->sql.db) == 0) {
		store_rollback(s);
		return STORE_OK;
	}
	if ((st = sql_stmt(&s->sql, Q_EXPIRE_ATTEMPTS)) == NULL) {
		rc = last(s);
		goto fail;
	}
	if (sql_bind_text(st, 1, r->action) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, now) != SQLITE_OK) {
		rc = STORE_NOMEM;
		goto fail;
	}
	if ((rc = status_of(sql_step_done(st))) != STORE_OK ||
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

	if ((rc = status_of(sql_step_done(st))) == STORE_OK)
		*changed = sqlite3_changes(s->sql.db) > 0;
	return rc;
}

enum store_status
store_outbox_defer(struct store *s, const struct store_row *r, int64_t now,
    int64_t at, int *changed)
{
	sqlite3_stmt	*st;

	*changed = 0;
	if ((st = sql_stmt(&s->sql, Q_EXPIRE_DEFER)) == NULL)
		return last(s);
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
	return collect_rows(s, Q_UNKNOWN_DUE, now, rows, max, n);
}

enum store_status
store_outbox_check(struct store *s, const char *action, const char *owner,
    int64_t now, int64_t until, int *claimed)
{
	sqlite3_stmt	*st;

	*claimed = 0;
	if ((st = sql_stmt(&s->sql, Q_CHECK_CLAIM)) == NULL)
		return last(s);
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
	static const char *const	 state[] = {
		[STORE_CHECKED_DELIVERED] = "delivered",
		[STORE_CHECKED_RESEND] = "pending",
		[STORE_CHECKED_DEAD] = "dead",
		[STORE_CHECKED_AGAIN] = "unknown",
	};
	sqlite3_stmt			*st;

	*changed = 0;
	if ((unsigned)c > STORE_CHECKED_AGAIN)
		return STORE_ERROR;
	if ((st = sql_stmt(&s->sql, Q_CHECK_END)) == NULL)
		return last(s);
	if (sql_bind_text(st, 1, action) != SQLITE_OK ||
	    sql_bind_text(st, 2, owner) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, until) != SQLITE_OK ||
	    sql_bind_text(st, 4, state[c]) != SQLITE_OK ||
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
	if ((st = sql_stmt(&s->sql, Q_RECHECK_DUE)) == NULL)
		return last(s);
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
	static const enum q	 qs[] = {
		[STORE_MOVE_REQUEUE] = Q_MOVE_REQUEUE,
		[STORE_MOVE_DELIVERED] = Q_MOVE_DELIVERED,
		[STORE_MOVE_RESEND] = Q_MOVE_RESEND,
		[STORE_MOVE_RECHECK] = Q_MOVE_RECHECK,
	};
	sqlite3_stmt		*st;
	enum store_status	 rc;

	*changed = 0;
	if ((unsigned)m > STORE_MOVE_RECHECK)
		return STORE_ERROR;
	if ((st = sql_stmt(&s->sql, qs[m])) == NULL)
		return last(s);
	if (sql_bind_text(st, 1, action) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, now) != SQLITE_OK ||
	    sql_bind_text(st, 3, note) != SQLITE_OK ||
	    (m == STORE_MOVE_RECHECK &&
	    sqlite3_bind_int64(st, 4, at) != SQLITE_OK))
		return STORE_NOMEM;
	if ((rc = status_of(sql_step_done(st))) == STORE_OK)
		*changed = sqlite3_changes(s->sql.db) > 0;
	return rc;
}

enum store_status
store_outbox_next(struct store *s, int64_t now, int64_t *in_ms)
{
	sqlite3_stmt	*st;
	int		 rc;

	*in_ms = -1;
	if ((st = sql_stmt(&s->sql, Q_NEXT_DUE)) == NULL)
		return last(s);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) != SQLITE_NULL) {
			*in_ms = sqlite3_column_int64(st, 0) - now;
			if (*in_ms < 0)
				*in_ms = 0;
		}
		rc = SQLITE_DONE;
	}
	sqlite3_reset(st);
	return status_of(rc);
}

/* The JSON objects a bound statement selects, as an array. */
static enum store_status
json_rows(sqlite3_stmt *st, cJSON **out)
{
	return status_of(sql_json_rows(st, out));
}

enum store_status
store_outbox_list(struct store *s, enum store_state state, int limit,
    cJSON **out)
{
	sqlite3_stmt	*st;

	*out = NULL;
	if (store_state_name(state) == NULL)
		return STORE_ERROR;
	if ((st = sql_stmt(&s->sql, Q_LIST_STATE)) == NULL)
		return last(s);
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
	if ((st = sql_stmt(&s->sql, Q_LIST_ATTEMPTS)) == NULL)
		return last(s);
	if (sql_bind_text(st, 1, action) != SQLITE_OK)
		return STORE_NOMEM;
	return json_rows(st, out);
}

enum store_status
store_conflicts_list(struct store *s, int all, cJSON **out)
{
	sqlite3_stmt	*st;

	*out = NULL;
	if ((st = sql_stmt(&s->sql, Q_LIST_CONFLICTS)) == NULL)
		return last(s);
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
	if ((st = sql_stmt(&s->sql, Q_RESOLVE)) == NULL)
		return last(s);
	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, now) != SQLITE_OK ||
	    sql_bind_text(st, 3, note) != SQLITE_OK)
		return STORE_NOMEM;
	if ((rc = status_of(sql_step_done(st))) == STORE_OK)
		*changed = sqlite3_changes(s->sql.db) > 0;
	return rc;
}

/* Runs one bound-at-?1 DELETE; adds the rows it removed to *n. */
static enum store_status
prune_one(struct store *s, enum q q, int64_t before, int64_t *n)
{
	sqlite3_stmt		*st;
	enum store_status	 rc;

	if ((st = sql_stmt(&s->sql, q)) == NULL)
		return last(s);
	if (sqlite3_bind_int64(st, 1, before) != SQLITE_OK)
		return STORE_NOMEM;
	if ((rc = status_of(sql_step_done(st))) == STORE_OK && n != NULL)
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
	if ((rc = prune_one(s, Q_PRUNE_RECEIPTS, receipts_before,
	    &p->receipts)) != STORE_OK ||
	    (rc = prune_one(s, Q_PRUNE_ATTEMPTS, actions_before, NULL)) !=
	    STORE_OK ||
	    (rc = prune_one(s, Q_PRUNE_OUTBOX, actions_before, NULL)) !=
	    STORE_OK ||
	    (rc = prune_one(s, Q_PRUNE_ACCEPTED, actions_before,
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
	if ((st = sql_stmt(&s->sql, Q_POLL_LAST)) == NULL)
		return last(s);
	if (sql_bind_text(st, 1, tenant) != SQLITE_OK ||
	    sql_bind_text(st, 2, job_id) != SQLITE_OK)
		return STORE_NOMEM;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*at = sqlite3_column_int64(st, 0);
		rc = SQLITE_DONE;
	}
	sqlite3_reset(st);
	return status_of(rc);
}

enum store_status
store_poll_mark(struct store *s, const char *tenant, const char *job_id,
    int64_t now)
{
	sqlite3_stmt	*st;

	if ((st = sql_stmt(&s->sql, Q_POLL_MARK)) == NULL)
		return last(s);
	if (sql_bind_text(st, 1, tenant) != SQLITE_OK ||
	    sql_bind_text(st, 2, job_id) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, now) != SQLITE_OK)
		return STORE_NOMEM;
	return status_of(sql_step_done(st));
}
