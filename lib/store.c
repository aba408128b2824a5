/*
 * store.c: state.db on SQLite: opening and migrating it, its transactions,
 * the status mapping and the responder's read-outs.  All of state.db's SQL
 * is here; the other store_*.c files run it by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"
#include "store_int.h"
#include "util.h"


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
	/*
	 * 3 -> 4: counters that survive a restart (metrics.h), and the
	 * per-destination gauges' index: it serves the undelivered states
	 * alone, however many delivered rows there are.
	 */
	"CREATE TABLE metrics("
	" name TEXT NOT NULL,"
	" l1 TEXT NOT NULL,"
	" l2 TEXT NOT NULL,"
	" value INTEGER NOT NULL,"
	" PRIMARY KEY(name, l1, l2)) WITHOUT ROWID;"
	"CREATE INDEX outbox_dest ON outbox(state, destination, created_at);",
};

#define SCHEMA_VERSION ((int)(sizeof(migrations) / sizeof(migrations[0])))


static const char *const sqltext[STORE_Q__N] = {
	[STORE_Q_BEGIN] = "BEGIN IMMEDIATE",
	[STORE_Q_COMMIT] = "COMMIT",
	[STORE_Q_ROLLBACK] = "ROLLBACK",
	[STORE_Q_SAVEPOINT] = "SAVEPOINT obs",
	[STORE_Q_RELEASE] = "RELEASE obs",
	[STORE_Q_ROLLBACK_TO] = "ROLLBACK TO obs",
	[STORE_Q_RECEIPT_ADD] = "INSERT INTO receipts(received_at, tenant, endpoint,"
	    " source, delivery_id, job_id, type, status, stage, result, body)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'pending', ?10)"
	    " ON CONFLICT(endpoint, delivery_id) WHERE delivery_id IS NOT NULL"
	    " DO NOTHING RETURNING id",
	[STORE_Q_RECEIPT_PRIOR] = "SELECT result, action_id FROM receipts"
	    " WHERE endpoint = ?1 AND delivery_id = ?2",
	[STORE_Q_RECEIPT_FINISH] = "UPDATE receipts SET result = ?2, action_id = ?3"
	    " WHERE id = ?1",
	[STORE_Q_JOB_GET] = "SELECT stage, terminal FROM job_state"
	    " WHERE tenant = ?1 AND job_id = ?2",
	[STORE_Q_JOB_PUT] = "INSERT INTO job_state(tenant, job_id, stage, terminal,"
	    " file_key, file_url, error, updated_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
	    " ON CONFLICT(tenant, job_id) DO UPDATE SET stage = excluded.stage,"
	    " terminal = excluded.terminal,"
	    " file_key = coalesce(excluded.file_key, file_key),"
	    " file_url = coalesce(excluded.file_url, file_url),"
	    " error = coalesce(excluded.error, error),"
	    " updated_at = excluded.updated_at",
	[STORE_Q_CLAIM] = "INSERT INTO accepted(action_id, tenant, attempt, step,"
	    " job_id, accepted_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
	    " ON CONFLICT(action_id) DO NOTHING",
	[STORE_Q_CLAIM_OWNER] = "SELECT job_id FROM accepted WHERE action_id = ?1",
	[STORE_Q_OUTBOX_ADD] = "INSERT INTO outbox(action_id, tenant, destination,"
	    " payload, state, next_at, created_at, updated_at)"
	    " VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?5, ?5)",
	[STORE_Q_CONFLICT_ADD] = "INSERT INTO conflicts(created_at, tenant, job_id,"
	    " action_id, kind, recorded, observed)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
	    " ON CONFLICT(tenant, job_id, kind, observed)"
	    " WHERE resolved_at IS NULL DO UPDATE SET seen = seen + 1",
	[STORE_Q_COUNT_OUTBOX] = "SELECT state, count(*) FROM outbox GROUP BY state",
	[STORE_Q_COUNT_CONFLICTS] = "SELECT count(*) FROM conflicts"
	    " WHERE resolved_at IS NULL",
	[STORE_Q_OLDEST_PENDING] = "SELECT min(created_at) FROM outbox"
	    " WHERE state IN ('pending','leased')",
	[STORE_Q_RECEIPT_COUNTS] = "SELECT result, count(*) FROM receipts"
	    " GROUP BY result ORDER BY result",
	/* The first tenant after ?2 with a due row (index outbox_claim). */
	[STORE_Q_PICK_AFTER] = "SELECT action_id, tenant, destination,"
	    " attempts FROM outbox WHERE state = 'pending' AND next_at <= ?1"
	    " AND tenant > ?2 ORDER BY tenant, next_at LIMIT 1",
	/* One tenant's due rows, oldest first, ?3 of them from the ?4th. */
	[STORE_Q_PICK_TENANT] = "SELECT action_id, tenant, destination,"
	    " attempts FROM outbox WHERE state = 'pending' AND tenant = ?2"
	    " AND next_at <= ?1 ORDER BY next_at LIMIT ?3 OFFSET ?4",
	/* Guarded: only the row as picked, still pending and due. */
	[STORE_Q_LEASE] = "UPDATE outbox SET state = 'leased', lease_owner = ?2,"
	    " lease_until = ?3, attempts = attempts + 1, updated_at = ?4"
	    " WHERE action_id = ?1 AND state = 'pending' AND next_at <= ?4"
	    " AND attempts = ?5 RETURNING payload",
	[STORE_Q_ATTEMPT_START] = "INSERT INTO attempts(action_id, n, owner,"
	    " started_at) VALUES (?1, ?2, ?3, ?4)",
	[STORE_Q_ATTEMPT_END] = "UPDATE attempts SET ended_at = ?2,"
	    " http_status = ?3, error = ?4 WHERE id = ?1",
	[STORE_Q_FINISH] = "UPDATE outbox SET state = ?2, next_at = ?3,"
	    " lease_owner = NULL, lease_until = NULL, updated_at = ?4,"
	    " last_status = ?5, last_error = ?6"
	    " WHERE action_id = ?1 AND state = 'leased' AND lease_owner = ?7"
	    " AND attempts = ?8",	/* this attempt's lease, no later */
	/* Collected rows: (action, tenant, destination, attempts, lease
	   owner, lease expiry), bound with ?1 = now and ?2 = limit. */
	[STORE_Q_EXPIRED] = "SELECT action_id, tenant, destination, attempts,"
	    " lease_owner, lease_until FROM outbox"
	    " WHERE state = 'leased' AND lease_until < ?1"
	    " ORDER BY lease_until LIMIT ?2",
	/* The guard: the same lease as collected, and still expired. */
	[STORE_Q_EXPIRE_MOVE] = "UPDATE outbox SET state = ?2, next_at = ?4,"
	    " lease_owner = NULL, lease_until = NULL, updated_at = ?3,"
	    " last_error = ?7"
	    " WHERE action_id = ?1 AND state = 'leased' AND lease_owner IS ?5"
	    " AND lease_until = ?6 AND lease_until < ?3",
	[STORE_Q_EXPIRE_ATTEMPTS] = "UPDATE attempts SET ended_at = ?2,"
	    " error = 'lease expired: outcome unknown'"
	    " WHERE action_id = ?1 AND ended_at IS NULL",
	[STORE_Q_EXPIRE_DEFER] = "UPDATE outbox SET lease_until = ?4,"
	    " updated_at = ?5 WHERE action_id = ?1 AND state = 'leased'"
	    " AND lease_owner IS ?2 AND lease_until = ?3",
	[STORE_Q_UNKNOWN_DUE] = "SELECT action_id, tenant, destination, attempts,"
	    " lease_owner, lease_until FROM outbox"
	    " WHERE state = 'unknown' AND next_at <= ?1 ORDER BY next_at"
	    " LIMIT ?2",
	/* A check's claim: the row is not due again until it lapses. */
	[STORE_Q_CHECK_CLAIM] = "UPDATE outbox SET lease_owner = ?2,"
	    " lease_until = ?4, next_at = ?4, updated_at = ?3"
	    " WHERE action_id = ?1 AND state = 'unknown' AND next_at <= ?3",
	[STORE_Q_CHECK_END] = "UPDATE outbox SET state = ?4, next_at = ?6,"
	    " lease_owner = NULL, lease_until = NULL, updated_at = ?5,"
	    " last_error = ?7 WHERE action_id = ?1 AND state = 'unknown'"
	    " AND lease_owner = ?2 AND lease_until = ?3",
	[STORE_Q_RECHECK_DUE] = "UPDATE outbox SET next_at = ?3, updated_at = ?2,"
	    " last_error = ?4 WHERE action_id = ?1 AND state = 'unknown'"
	    " AND next_at <= ?2",
	/* Operator moves end any status check under way. */
	[STORE_Q_MOVE_REQUEUE] = "UPDATE outbox SET state = 'pending', next_at = ?2,"
	    " attempts = 0, lease_owner = NULL, lease_until = NULL,"
	    " updated_at = ?2, last_error = ?3"
	    " WHERE action_id = ?1 AND state IN ('dead', 'unknown')",
	[STORE_Q_MOVE_DELIVERED] = "UPDATE outbox SET state = 'delivered',"
	    " lease_owner = NULL, lease_until = NULL,"
	    " updated_at = ?2, last_error = ?3"
	    " WHERE action_id = ?1 AND state IN ('unknown', 'dead')",
	[STORE_Q_MOVE_RESEND] = "UPDATE outbox SET state = 'pending', next_at = ?2,"
	    " lease_owner = NULL, lease_until = NULL,"
	    " updated_at = ?2, last_error = ?3"
	    " WHERE action_id = ?1 AND state = 'unknown'",
	[STORE_Q_MOVE_RECHECK] = "UPDATE outbox SET next_at = ?4,"
	    " lease_owner = NULL, lease_until = NULL, updated_at = ?2,"
	    " last_error = ?3 WHERE action_id = ?1 AND state = 'unknown'",
	[STORE_Q_NEXT_DUE] = "SELECT min(t) FROM (SELECT min(next_at) AS t FROM"
	    " outbox WHERE state = 'pending' UNION ALL SELECT min(lease_until)"
	    " FROM outbox WHERE state = 'leased')",
	/* The read-outs: ?2 the most rows (-1: all), times in unix ms. */
	[STORE_Q_LIST_STATE] = "SELECT json_object('action', action_id, 'tenant',"
	    " tenant, 'destination', destination, 'state', state, 'attempts',"
	    " attempts, 'next_at', next_at, 'lease_owner', lease_owner,"
	    " 'lease_until', lease_until, 'created_at', created_at,"
	    " 'updated_at', updated_at, 'last_status', last_status,"
	    " 'last_error', last_error) FROM outbox WHERE state = ?1"
	    " AND (?3 IS NULL OR destination = ?3) AND (?4 IS NULL OR"
	    " tenant = ?4) AND created_at >= ?5 ORDER BY created_at LIMIT ?2",
	[STORE_Q_LIST_ATTEMPTS] = "SELECT json_object('n', n, 'owner', owner,"
	    " 'started_at', started_at, 'ended_at', ended_at, 'http_status',"
	    " http_status, 'error', error) FROM attempts WHERE action_id = ?1"
	    " AND started_at >= ?3 ORDER BY id LIMIT ?2",
	[STORE_Q_LIST_CONFLICTS] = "SELECT json_object('id', id, 'created_at',"
	    " created_at, 'tenant', tenant, 'job_id', job_id, 'action',"
	    " action_id, 'kind', kind, 'recorded', recorded, 'observed',"
	    " observed, 'seen', seen, 'resolved_at', resolved_at,"
	    " 'resolution', resolution) FROM conflicts"
	    " WHERE (?1 OR resolved_at IS NULL) AND (?3 IS NULL OR tenant = ?3)"
	    " AND created_at >= ?4 ORDER BY id LIMIT ?2",
	[STORE_Q_RESOLVE] = "UPDATE conflicts SET resolved_at = ?2, resolution = ?3"
	    " WHERE id = ?1 AND resolved_at IS NULL",
	[STORE_Q_ACTION_STATE] = "SELECT state FROM outbox WHERE action_id = ?1",
	[STORE_Q_CONFLICT_STATE] = "SELECT resolved_at IS NOT NULL FROM conflicts"
	    " WHERE id = ?1",
	[STORE_Q_PRUNE_RECEIPTS] = "DELETE FROM receipts WHERE received_at < ?1",
	[STORE_Q_PRUNE_ATTEMPTS] = "DELETE FROM attempts WHERE action_id IN"
	    " (SELECT o.action_id FROM outbox o JOIN accepted a USING"
	    " (action_id) WHERE o.state = 'delivered' AND a.accepted_at < ?1)",
	[STORE_Q_PRUNE_OUTBOX] = "DELETE FROM outbox WHERE state = 'delivered' AND"
	    " action_id IN (SELECT action_id FROM accepted"
	    " WHERE accepted_at < ?1)",
	[STORE_Q_PRUNE_ACCEPTED] = "DELETE FROM accepted WHERE accepted_at < ?1"
	    " AND NOT EXISTS (SELECT 1 FROM outbox o"
	    " WHERE o.action_id = accepted.action_id)",
	/* Jobs that ended (completed or failed) before ?1, ?2 of them. */
	[STORE_Q_JOBS_TERMINAL] = "SELECT tenant, job_id FROM job_state"
	    " WHERE terminal IN ('completed','failed') AND updated_at < ?1"
	    " ORDER BY tenant, job_id LIMIT ?2",
	/* Guarded: only while still ended before ?3. */
	[STORE_Q_FORGET_JOB] = "DELETE FROM job_state WHERE tenant = ?1"
	    " AND job_id = ?2 AND terminal IN ('completed','failed')"
	    " AND updated_at < ?3",
	[STORE_Q_FORGET_POLL] = "DELETE FROM polls WHERE tenant = ?1"
	    " AND job_id = ?2",
	[STORE_Q_POLL_LAST] = "SELECT polled_at FROM polls WHERE tenant = ?1"
	    " AND job_id = ?2",
	[STORE_Q_METRIC_ADD] = "INSERT INTO metrics(name, l1, l2, value)"
	    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT(name, l1, l2)"
	    " DO UPDATE SET value = value + excluded.value",
	[STORE_Q_METRIC_MAX] = "INSERT INTO metrics(name, l1, l2, value)"
	    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT(name, l1, l2)"
	    " DO UPDATE SET value = max(value, excluded.value)",
	[STORE_Q_METRIC_LIST] = "SELECT name, l1, l2, value FROM metrics",
	/*
	 * The series of endpoints (?1) and destinations (?2, JSON arrays
	 * of the names configured now) that are no longer configured.
	 */
	[STORE_Q_METRIC_FORGET] = "DELETE FROM metrics WHERE (name ="
	    " 'requests' AND l1 NOT IN ('unknown', '_health', '_metrics')"
	    " AND l1 NOT IN (SELECT value FROM json_each(?1))) OR (name IN"
	    " ('deliveries', 'delivery_le', 'delivery_sum_us',"
	    " 'delivery_count') AND l1 NOT IN (SELECT value FROM"
	    " json_each(?2)))",
	/* Index outbox_dest: the undelivered rows only. */
	[STORE_Q_DEST_GAUGES] = "SELECT destination, state, count(*),"
	    " min(created_at) FROM outbox"
	    " WHERE state IN ('pending','leased','dead','unknown')"
	    " GROUP BY state, destination",
	[STORE_Q_POLL_MARK] = "INSERT INTO polls(tenant, job_id, polled_at)"
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

enum store_status
store_status_of(int rc)
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
enum store_status
store_last(struct store *s)
{
	return store_status_of(sqlite3_errcode(s->sql.db));
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
		return store_last(s);
	/* The common case, current already, needs no write lock. */
	if (sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_int(st, 0) == SCHEMA_VERSION) {
		sqlite3_finalize(st);
		return STORE_OK;
	}
	sqlite3_reset(st);
	if ((rc = store_status_of(sql_exec(&s->sql, "BEGIN IMMEDIATE"))) != STORE_OK)
		goto out;
	/* Read again under the lock: another process may have migrated. */
	if (sqlite3_step(st) != SQLITE_ROW) {
		rc = store_last(s);
		goto out;
	}
	v = sqlite3_column_int(st, 0);
	sqlite3_reset(st);
	if (v > SCHEMA_VERSION || v < 0) {
		rc = STORE_ERROR;	/* written by a newer hookbox */
		goto out;
	}
	for (i = v; i < SCHEMA_VERSION; i++)
		if ((rc = store_status_of(sql_exec(&s->sql, migrations[i]))) !=
		    STORE_OK)
			goto out;
	if (v != SCHEMA_VERSION) {
		if (snprintf(pragma, sizeof(pragma), "PRAGMA user_version=%d",
		    SCHEMA_VERSION) >= (int)sizeof(pragma)) {
			rc = STORE_ERROR;
			goto out;
		}
		if ((rc = store_status_of(sql_exec(&s->sql, pragma))) != STORE_OK)
			goto out;
	}
	rc = store_status_of(sql_exec(&s->sql, "COMMIT"));
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
		STORE_BUSY_MS_DEFAULT, 0, 0, 0
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
	if (!writable(path, NULL) || !writable(path, "-wal") ||
	    !writable(path, "-shm"))
		return STORE_GONE;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return STORE_NOMEM;
	if ((rc = store_status_of(sql_open(&s->sql, path, SQLITE_OPEN_READWRITE,
	    sqltext, STORE_Q__N))) != STORE_OK)
		goto out;
	sql_busy(&s->sql, opts->busy_ms);
	/* WAL is persistent in the file; synchronous is per connection. */
	if ((rc = store_status_of(sql_exec(&s->sql, "PRAGMA journal_mode=WAL"))) !=
	    STORE_OK)
		goto out;
	if ((rc = store_status_of(sql_exec(&s->sql, opts->sync_normal ?
	    "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL"))) !=
	    STORE_OK)
		goto out;
	if (opts->checkpoint_pages > 0)
		(void)sqlite3_wal_autocheckpoint(s->sql.db,
		    opts->checkpoint_pages);
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

enum store_status
store_run(struct store *s, enum store_q q)
{
	sqlite3_stmt	*st;

	if ((st = sql_stmt(&s->sql, q)) == NULL)
		return store_last(s);
	return store_status_of(sql_step_done(st));
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
	    !writable(s->sql.path, NULL))
		return STORE_GONE;
	return STORE_OK;
}

enum store_status
store_checkpoint(struct store *s)
{
	return store_status_of(sqlite3_wal_checkpoint_v2(s->sql.db, NULL,
	    SQLITE_CHECKPOINT_PASSIVE, NULL, NULL));
}

enum store_status
store_begin(struct store *s)
{
	enum store_status	rc;

	if ((rc = store_check_file(s)) != STORE_OK)
		return rc;
	if ((rc = store_run(s, STORE_Q_BEGIN)) == STORE_OK)
		s->in_tx = 1;
	return rc;
}

enum store_status
store_commit(struct store *s)
{
	enum store_status	rc;

	if (fault_fire(FAULT_BEFORE_COMMIT))
		return STORE_IO;
	if ((rc = store_run(s, STORE_Q_COMMIT)) == STORE_OK)
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
		(void)store_run(s, STORE_Q_ROLLBACK);
	s->in_tx = 0;
}

/* Steps a one-row, one-integer query. */
enum store_status
store_scalar(struct store *s, enum store_q q, int64_t *out)
{
	sqlite3_stmt	*st;
	int		 rc;

	*out = 0;
	if ((st = sql_stmt(&s->sql, q)) == NULL)
		return store_last(s);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = SQLITE_DONE;
	}
	sqlite3_reset(st);
	return store_status_of(rc);
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
	if ((st = sql_stmt(&s->sql, STORE_Q_COUNT_OUTBOX)) == NULL)
		return store_last(s);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (store_state_parse((const char *)sqlite3_column_text(st, 0),
		    &state) == 0)
			c->outbox[state] = sqlite3_column_int64(st, 1);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_status_of(rc);
	if ((status = store_scalar(s, STORE_Q_COUNT_CONFLICTS, &c->conflicts_open)) !=
	    STORE_OK)
		return status;
	return store_scalar(s, STORE_Q_OLDEST_PENDING, &c->oldest_pending_ms);
}

enum store_status
store_receipt_counts(struct store *s, struct store_receipts *r)
{
	sqlite3_stmt	*st;
	enum hb_result	 res;
	int		 rc;

	memset(r, 0, sizeof(*r));
	if ((st = sql_stmt(&s->sql, STORE_Q_RECEIPT_COUNTS)) == NULL)
		return store_last(s);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (hb_result_parse((const char *)sqlite3_column_text(st, 0),
		    &res) == 0)
			r->n[res] += sqlite3_column_int64(st, 1);
	sqlite3_reset(st);
	return store_status_of(rc);
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
