/*
 * store/store.c: the state database, state.db on SQLite or schema hookbox_state
 * on PostgreSQL (db/db.h): opening and migrating it, its transactions, the
 * status mapping and the responder's read-outs.  All of its SQL is here,
 * one text per backend where the two dialects differ; the other
 * store_*.c files run it by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fault.h"
#include "base/util.h"
#include "db/pg_schema.h"
#include "store/flight.h"
#include "store/store_int.h"


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
	 * 3 -> 4: counters that survive a restart (base/metrics.h), and the
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
	/*
	 * 4 -> 5: versioned subjects (hookbox(7), DATA MODEL and
	 * Versioned events): each one's newest event that took effect,
	 * the version and occurrence of each receipt, and conflicts
	 * between two events of one version.
	 * SQLite cannot change a CHECK: conflicts is made again.
	 */
	"CREATE TABLE subjects("
	" tenant TEXT NOT NULL,"
	" subject TEXT NOT NULL,"
	" version INTEGER NOT NULL,"
	" occurred_at INTEGER NOT NULL,"
	" effect TEXT NOT NULL CHECK(effect IN ('do','undo')),"
	" step TEXT NOT NULL,"
	" type TEXT NOT NULL,"
	" updated_at INTEGER NOT NULL,"
	" PRIMARY KEY(tenant, subject)) WITHOUT ROWID;"
	"ALTER TABLE receipts ADD COLUMN version INTEGER;"
	"ALTER TABLE receipts ADD COLUMN occurred_at INTEGER;"
	"CREATE TABLE conflicts_5("
	" id INTEGER PRIMARY KEY,"
	" created_at INTEGER NOT NULL,"
	" tenant TEXT NOT NULL,"
	" job_id TEXT NOT NULL,"
	" action_id TEXT,"
	" kind TEXT NOT NULL CHECK(kind IN ('terminal','action','version')),"
	" recorded TEXT NOT NULL,"
	" observed TEXT NOT NULL,"
	" seen INTEGER NOT NULL DEFAULT 1,"
	" resolved_at INTEGER,"
	" resolution TEXT);"
	"INSERT INTO conflicts_5 SELECT id, created_at, tenant, job_id,"
	" action_id, kind, recorded, observed, seen, resolved_at, resolution"
	" FROM conflicts;"
	"DROP TABLE conflicts;"
	"ALTER TABLE conflicts_5 RENAME TO conflicts;"
	"CREATE UNIQUE INDEX conflicts_open ON conflicts(tenant, job_id, kind,"
	" observed) WHERE resolved_at IS NULL;",
	/*
	 * 5 -> 6: subjects in namespaces (hookbox(7), Versioned events),
	 * namespace/subject.  A state recorded before has none, /subject:
	 * every namespace of its tenant starts from it.
	 */
	"UPDATE subjects SET subject = '/' || subject;",
	/*
	 * 6 -> 7: destinations' circuits and pauses (store/circuit.h), and
	 * each outbox row's retry horizon: when it began (NULL: created_at;
	 * a requeue starts it again) and the time its destination held it
	 * since, which the horizon does not count.
	 */
	"CREATE TABLE circuits("
	" tenant TEXT NOT NULL,"
	" destination TEXT NOT NULL,"
	" state TEXT NOT NULL DEFAULT 'closed'"
	"  CHECK(state IN ('closed','open','half')),"
	" failures INTEGER NOT NULL DEFAULT 0,"
	" opened_at INTEGER,"
	" retry_at INTEGER,"
	" cooldown_ms INTEGER,"
	" paused_at INTEGER,"
	" hold_until INTEGER,"
	" held_since INTEGER,"
	" rate_next_us INTEGER,"
	" updated_at INTEGER NOT NULL,"
	" PRIMARY KEY(tenant, destination)) WITHOUT ROWID;"
	"ALTER TABLE outbox ADD COLUMN horizon_from INTEGER;"
	"ALTER TABLE outbox ADD COLUMN held_ms INTEGER NOT NULL DEFAULT 0;",
};

#define SCHEMA_VERSION ((int)(sizeof(migrations) / sizeof(migrations[0])))


/*
 * What a write of a job's (or subject's) state does to the row there:
 * the one row's (STORE_Q_JOB_PUT, STORE_Q_SUBJECT_PUT) and a batch's
 * (STORE_Q_JOBS_SET, STORE_Q_SUBJECTS_SET) the same.  A job's keeps
 * what the new state does not say.
 */
#define JOB_STATE_MERGE_PG \
	" ON CONFLICT(tenant, job_id) DO UPDATE SET stage = excluded.stage," \
	" terminal = excluded.terminal," \
	" file_key = coalesce(excluded.file_key, job_state.file_key)," \
	" file_url = coalesce(excluded.file_url, job_state.file_url)," \
	" error = coalesce(excluded.error, job_state.error)," \
	" updated_at = excluded.updated_at"
#define SUBJECT_MERGE \
	" ON CONFLICT(tenant, subject) DO UPDATE SET" \
	" version = excluded.version, occurred_at = excluded.occurred_at," \
	" effect = excluded.effect, step = excluded.step," \
	" type = excluded.type, updated_at = excluded.updated_at"

/*
 * An operator's requeue: pending and due now (at), its attempts and its
 * horizon started again, any status check ended, note as its last error;
 * a requeue by filter's rows (store_outbox_requeue()).
 */
#define REQUEUE_SET(at, note) "UPDATE outbox SET state = 'pending'," \
	" next_at = " at ", attempts = 0, horizon_from = " at ", held_ms = 0," \
	" lease_owner = NULL, lease_until = NULL, updated_at = " at "," \
	" last_error = " note
#define REQUEUE_WHERE_LITE " WHERE state = ?1 AND (?2 IS NULL OR" \
	" tenant = ?2) AND (?3 IS NULL OR destination = ?3)" \
	" AND updated_at >= ?4 AND updated_at < ?5"
#define REQUEUE_WHERE_PG " WHERE state = ?1 AND (?2::text IS NULL OR" \
	" tenant = ?2) AND (?3::text IS NULL OR destination = ?3)" \
	" AND updated_at >= ?4 AND updated_at < ?5"
/* A circuit's row, as store/circuit.c reads it. */
#define CIRCUIT_COLS "c.tenant, c.destination, c.state, c.failures," \
	" c.opened_at, c.retry_at, c.cooldown_ms, c.paused_at, c.hold_until," \
	" c.held_since, c.rate_next_us"
/* A collected row's retry horizon, and its destination's hold's start. */
#define HORIZON_COLS ", coalesce(horizon_from, created_at), held_ms," \
	" (SELECT c.held_since FROM circuits c WHERE c.tenant = outbox.tenant" \
	" AND c.destination = outbox.destination)"

/*
 * Closes a look-up of one key's row on PostgreSQL: a key names one row at
 * most, and the LIMIT keeps the look-up a subquery run per key (a nested
 * loop over the key's index), which the planner would otherwise fold
 * into a join.
 */
#define LOOK_BY_KEY	" LIMIT 1"

const struct db_text store_text[STORE_Q__N] = {
	[STORE_Q_BEGIN] = { "BEGIN IMMEDIATE",
	    "BEGIN" },
	[STORE_Q_COMMIT] = { "COMMIT" },
	[STORE_Q_ROLLBACK] = { "ROLLBACK" },
	[STORE_Q_SAVEPOINT] = { "SAVEPOINT obs" },
	[STORE_Q_RELEASE] = { "RELEASE obs" },
	[STORE_Q_ROLLBACK_TO] = { "ROLLBACK TO obs" },
	[STORE_Q_RECEIPT_PUT] = { "INSERT INTO receipts(received_at, tenant, endpoint,"
	    " source, delivery_id, job_id, type, status, stage, result,"
	    " action_id, body, version, occurred_at) VALUES (?1, ?2, ?3, ?4,"
	    " ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)" },
	/*
	 * A batch's look-ups (store_look_batch()), each key set one JSON
	 * array: [[endpoint, delivery id], ...], [[tenant, job], ...],
	 * [action, ...].  On PostgreSQL each key reads its one row through
	 * the table's key (LOOK_BY_KEY): a plain join of the set, which the
	 * planner takes for 100 rows, is hashed over a scan of the whole
	 * table once it has some thousands of rows.
	 */
	[STORE_Q_LOOK_RECEIPTS] = { "SELECT r.endpoint, r.delivery_id, r.result,"
	    " r.action_id FROM (SELECT json_extract(value, '$[0]') AS e,"
	    " json_extract(value, '$[1]') AS d FROM json_each(?1)) k"
	    " JOIN receipts r ON r.endpoint = k.e AND r.delivery_id = k.d"
	    " WHERE r.delivery_id IS NOT NULL",
	    "SELECT r.endpoint, r.delivery_id, r.result, r.action_id"
	    " FROM json_array_elements(?1::json) k CROSS JOIN LATERAL"
	    " (SELECT endpoint, delivery_id, result, action_id FROM receipts"
	    " WHERE endpoint = k->>0 AND delivery_id = k->>1"
	    LOOK_BY_KEY ") r" },
	[STORE_Q_LOOK_JOBS] = { "SELECT s.tenant, s.job_id, s.stage, s.terminal"
	    " FROM (SELECT json_extract(value, '$[0]') AS t,"
	    " json_extract(value, '$[1]') AS j FROM json_each(?1)) k"
	    " JOIN job_state s ON s.tenant = k.t AND s.job_id = k.j",
	    "SELECT s.tenant, s.job_id, s.stage, s.terminal"
	    " FROM json_array_elements(?1::json) k CROSS JOIN LATERAL"
	    " (SELECT tenant, job_id, stage, terminal FROM job_state"
	    " WHERE tenant = k->>0 AND job_id = k->>1" LOOK_BY_KEY ") s" },
	/*
	 * A subject is namespace/subject; a state from before namespaces,
	 * /subject (migration 5 -> 6), is every namespace's until it has
	 * one of its own.
	 */
	[STORE_Q_LOOK_SUBJECTS] = { "SELECT k.t, k.j, s.version,"
	    " s.occurred_at, s.effect, s.step"
	    " FROM (SELECT json_extract(value, '$[0]') AS t,"
	    " json_extract(value, '$[1]') AS j FROM json_each(?1)) k"
	    " JOIN subjects s ON s.tenant = k.t AND s.subject = coalesce("
	    "(SELECT q.subject FROM subjects q WHERE q.tenant = k.t"
	    " AND q.subject = k.j), '/' || substr(k.j, instr(k.j, '/') + 1))",
	    "SELECT k.t, k.j, s.version, s.occurred_at, s.effect,"
	    " s.step FROM (SELECT k->>0 AS t, k->>1 AS j"
	    " FROM json_array_elements(?1::json) k) k CROSS JOIN LATERAL"
	    " (SELECT version, occurred_at, effect, step FROM subjects"
	    " WHERE tenant = k.t AND subject = coalesce("
	    "(SELECT q.subject FROM subjects q WHERE q.tenant = k.t"
	    " AND q.subject = k.j), '/' || substr(k.j, strpos(k.j, '/') + 1))"
	    LOOK_BY_KEY ") s" },
	[STORE_Q_LOOK_ACTIONS] = { "SELECT a.action_id, a.job_id"
	    " FROM json_each(?1) k JOIN accepted a ON a.action_id = k.value",
	    "SELECT a.action_id, a.job_id"
	    " FROM json_array_elements_text(?1::json) k(v) CROSS JOIN LATERAL"
	    " (SELECT action_id, job_id FROM accepted WHERE action_id = k.v"
	    LOOK_BY_KEY ") a" },
	[STORE_Q_JOB_GET] = { "SELECT stage, terminal FROM job_state"
	    " WHERE tenant = ?1 AND job_id = ?2" },
	[STORE_Q_JOB_PUT] = { "INSERT INTO job_state(tenant, job_id, stage, terminal,"
	    " file_key, file_url, error, updated_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
	    " ON CONFLICT(tenant, job_id) DO UPDATE SET stage = excluded.stage,"
	    " terminal = excluded.terminal,"
	    " file_key = coalesce(excluded.file_key, file_key),"
	    " file_url = coalesce(excluded.file_url, file_url),"
	    " error = coalesce(excluded.error, error),"
	    " updated_at = excluded.updated_at",
	    "INSERT INTO job_state(tenant, job_id, stage,"
	    " terminal, file_key, file_url, error, updated_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
	    JOB_STATE_MERGE_PG },
	[STORE_Q_CLAIM] = { "INSERT INTO accepted(action_id, tenant, attempt, step,"
	    " job_id, accepted_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)" },
	[STORE_Q_OUTBOX_ADD] = { "INSERT INTO outbox(action_id, tenant, destination,"
	    " payload, state, next_at, created_at, updated_at)"
	    " VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?5, ?5)" },
	[STORE_Q_SUBJECT_PUT] = { "INSERT INTO subjects(tenant, subject, version,"
	    " occurred_at, effect, step, type, updated_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
	    SUBJECT_MERGE },
	[STORE_Q_CONFLICT_ADD] = { "INSERT INTO conflicts(created_at, tenant, job_id,"
	    " action_id, kind, recorded, observed)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
	    " ON CONFLICT(tenant, job_id, kind, observed)"
	    " WHERE resolved_at IS NULL DO UPDATE SET seen = seen + 1",
	    "INSERT INTO conflicts(created_at, tenant,"
	    " job_id, action_id, kind, recorded, observed)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
	    " ON CONFLICT(tenant, job_id, kind, observed)"
	    " WHERE resolved_at IS NULL"
	    " DO UPDATE SET seen = conflicts.seen + 1" },
	/*
	 * A batch's writes, one statement a table (store_put_set()), on a
	 * server only: each set a JSON array of rows whose members are the
	 * table's columns.
	 */
	[STORE_Q_RECEIPTS_SET] = { "SELECT 1", "INSERT INTO receipts(received_at,"
	    " tenant, endpoint, source, delivery_id, job_id, type, status, stage,"
	    " result, action_id, body, version, occurred_at)"
	    " SELECT received_at, tenant, endpoint, source, delivery_id, job_id,"
	    " type, status, stage, result, action_id, body, version, occurred_at"
	    " FROM json_populate_recordset(NULL::receipts, ?1::json)" },
	[STORE_Q_JOBS_SET] = { "SELECT 1", "INSERT INTO job_state(tenant, job_id,"
	    " stage, terminal, file_key, file_url, error, updated_at)"
	    " SELECT tenant, job_id, stage, terminal, file_key, file_url, error,"
	    " updated_at FROM json_populate_recordset(NULL::job_state, ?1::json)"
	    JOB_STATE_MERGE_PG },
	[STORE_Q_SUBJECTS_SET] = { "SELECT 1", "INSERT INTO subjects(tenant, subject,"
	    " version, occurred_at, effect, step, type, updated_at)"
	    " SELECT tenant, subject, version, occurred_at, effect, step, type,"
	    " updated_at FROM json_populate_recordset(NULL::subjects, ?1::json)"
	    SUBJECT_MERGE },
	[STORE_Q_CLAIMS_SET] = { "SELECT 1", "INSERT INTO accepted(action_id, tenant,"
	    " attempt, step, job_id, accepted_at) SELECT action_id, tenant,"
	    " attempt, step, job_id, accepted_at"
	    " FROM json_populate_recordset(NULL::accepted, ?1::json)" },
	[STORE_Q_OUTBOX_SET] = { "SELECT 1", "INSERT INTO outbox(action_id, tenant,"
	    " destination, payload, state, next_at, created_at, updated_at)"
	    " SELECT action_id, tenant, destination, payload, 'pending',"
	    " created_at, created_at, created_at"
	    " FROM json_populate_recordset(NULL::outbox, ?1::json)" },
	[STORE_Q_COUNT_OUTBOX] = { "SELECT state, count(*) FROM outbox"
	    " GROUP BY state" },
	[STORE_Q_COUNT_CONFLICTS] = { "SELECT count(*) FROM conflicts"
	    " WHERE resolved_at IS NULL" },
	[STORE_Q_OLDEST_PENDING] = { "SELECT min(created_at) FROM outbox"
	    " WHERE state IN ('pending','leased')" },
	[STORE_Q_RECEIPT_COUNTS] = { "SELECT result, count(*) FROM receipts"
	    " GROUP BY result ORDER BY result" },
	/* The first tenant after ?2 with a due row (index outbox_claim). */
	[STORE_Q_PICK_AFTER] = { "SELECT action_id, tenant, destination,"
	    " attempts FROM outbox WHERE state = 'pending' AND next_at <= ?1"
	    " AND tenant > ?2 ORDER BY tenant, next_at LIMIT 1",
	    "SELECT action_id, tenant, destination,"
	    " attempts FROM outbox WHERE state = 'pending' AND next_at <= ?1"
	    " AND tenant COLLATE \"C\" > ?2::text"
	    " ORDER BY tenant COLLATE \"C\", next_at LIMIT 1" },
	/* One tenant's due rows, oldest first, ?3 of them from the ?4th. */
	[STORE_Q_PICK_TENANT] = { "SELECT action_id, tenant, destination,"
	    " attempts FROM outbox WHERE state = 'pending' AND tenant = ?2"
	    " AND next_at <= ?1 ORDER BY next_at LIMIT ?3 OFFSET ?4" },
	/* Guarded: only the row as picked, still pending and due. */
	/*
	 * A claim, set-based (store_outbox_claim()): ?1 the picked rows as
	 * [[action, attempts seen, lease until], ...], each action once;
	 * ?2 the owner, ?3 now.  The lease, then the attempts' starts.  On
	 * SQLite a unary + keeps an index on the other terms from being
	 * chosen over the key: every row due (or leased) scanned against
	 * every key of the batch, instead of each key found once.
	 */
	[STORE_Q_LEASE] = { "UPDATE outbox SET state = 'leased',"
	    " lease_owner = ?2, lease_until = k.u, attempts = attempts + 1,"
	    " updated_at = ?3 FROM (SELECT json_extract(value, '$[0]') AS a,"
	    " json_extract(value, '$[1]') AS n, json_extract(value, '$[2]')"
	    " AS u FROM json_each(?1)) AS k WHERE outbox.action_id = k.a"
	    " AND +outbox.state = 'pending' AND +outbox.next_at <= ?3"
	    " AND outbox.attempts = k.n"
	    " RETURNING action_id, payload, lease_until,"
	    " coalesce(horizon_from, created_at), held_ms",
	    "WITH k AS (SELECT k->>0 AS a, (k->>1)::int AS n,"
	    " (k->>2)::bigint AS u FROM json_array_elements(?1::json) k),"
	    " t AS (SELECT o.action_id, k.u FROM outbox o JOIN k"
	    " ON o.action_id = k.a AND o.attempts = k.n"
	    " WHERE o.state = 'pending' AND o.next_at <= ?3"
	    " FOR UPDATE OF o SKIP LOCKED)"
	    " UPDATE outbox o SET state = 'leased', lease_owner = ?2,"
	    " lease_until = t.u, attempts = o.attempts + 1, updated_at = ?3"
	    " FROM t WHERE o.action_id = t.action_id"
	    " RETURNING o.action_id, o.payload, o.lease_until,"
	    " coalesce(o.horizon_from, o.created_at), o.held_ms" },
	/*
	 * In the order picked: the attempts' ids say the tenants' turns.
	 * n goes on from the action's last attempt, across a requeue, which
	 * sets outbox.attempts (the backoff's and max_attempts' count) back
	 * to 0; without one the two are equal.
	 */
	[STORE_Q_ATTEMPT_START] = { "INSERT INTO attempts(action_id, n, owner,"
	    " started_at) SELECT o.action_id, coalesce((SELECT max(a.n) FROM"
	    " attempts a WHERE a.action_id = o.action_id), 0) + 1,"
	    " CAST(?2 AS TEXT),"
	    " CAST(?3 AS BIGINT) FROM json_each(?1) k JOIN outbox o"
	    " ON o.action_id = json_extract(k.value, '$[0]')"
	    " WHERE o.state = 'leased' AND o.lease_owner = ?2"
	    " AND o.updated_at = ?3 ORDER BY k.key"
	    " RETURNING action_id, id, n",
	    "INSERT INTO attempts(action_id, n, owner, started_at)"
	    " SELECT o.action_id, coalesce((SELECT max(a.n) FROM attempts a"
	    " WHERE a.action_id = o.action_id), 0) + 1, CAST(?2 AS TEXT),"
	    " CAST(?3 AS BIGINT) FROM json_array_elements(?1::json)"
	    " WITH ORDINALITY k(v, i) JOIN outbox o ON o.action_id = k.v->>0"
	    " WHERE o.state = 'leased' AND o.lease_owner = ?2"
	    " AND o.updated_at = ?3 ORDER BY k.i"
	    " RETURNING action_id, id, n" },
	/*
	 * A record, set-based (store_outbox_finish()): ?1 the attempts'
	 * ends as [[attempt id, ended, status, error], ...].
	 */
	[STORE_Q_ATTEMPT_END] = { "UPDATE attempts SET ended_at = k.e,"
	    " http_status = k.s, error = k.r FROM (SELECT"
	    " json_extract(value, '$[0]') AS i, json_extract(value, '$[1]')"
	    " AS e, json_extract(value, '$[2]') AS s,"
	    " json_extract(value, '$[3]') AS r FROM json_each(?1)) AS k"
	    " WHERE attempts.id = k.i",
	    "UPDATE attempts a SET ended_at = k.e, http_status = k.s,"
	    " error = k.r FROM (SELECT (k->>0)::bigint AS i,"
	    " (k->>1)::bigint AS e, (k->>2)::int AS s, k->>3 AS r"
	    " FROM json_array_elements(?1::json) k) k WHERE a.id = k.i" },
	/*
	 * ?1 the rows' moves as [[action, attempt, state, next_at, ended,
	 * status, error], ...], ?2 the owner: each only if the owner holds
	 * this attempt's lease, no later one; the rows moved come back.
	 */
	[STORE_Q_FINISH] = { "UPDATE outbox SET state = k.st, next_at = k.nx,"
	    " lease_owner = NULL, lease_until = NULL, updated_at = k.e,"
	    " last_status = k.s, last_error = k.r FROM (SELECT"
	    " json_extract(value, '$[0]') AS a, json_extract(value, '$[1]')"
	    " AS n, json_extract(value, '$[2]') AS st,"
	    " json_extract(value, '$[3]') AS nx, json_extract(value, '$[4]')"
	    " AS e, json_extract(value, '$[5]') AS s,"
	    " json_extract(value, '$[6]') AS r FROM json_each(?1)) AS k"
	    " WHERE outbox.action_id = k.a AND +outbox.state = 'leased'"
	    " AND outbox.lease_owner = ?2 AND outbox.attempts = k.n"
	    " RETURNING action_id",
	    "UPDATE outbox o SET state = k.st, next_at = k.nx,"
	    " lease_owner = NULL, lease_until = NULL, updated_at = k.e,"
	    " last_status = k.s, last_error = k.r FROM (SELECT k->>0 AS a,"
	    " (k->>1)::int AS n, k->>2 AS st, (k->>3)::bigint AS nx,"
	    " (k->>4)::bigint AS e, (k->>5)::int AS s, k->>6 AS r"
	    " FROM json_array_elements(?1::json) k) k"
	    " WHERE o.action_id = k.a AND o.state = 'leased'"
	    " AND o.lease_owner = ?2 AND o.attempts = k.n"
	    " RETURNING o.action_id" },
	/*
	 * After STORE_Q_FINISH, ?1 [[action, ended], ...] of the attempts
	 * that delivered: a row recovery left unknown or dead (its lease
	 * had expired) is settled as delivered all the same.  The rows the
	 * finish moved are delivered already.
	 */
	[STORE_Q_FINISH_LATE] = { "UPDATE outbox SET state = 'delivered',"
	    " lease_owner = NULL, lease_until = NULL, updated_at = k.e,"
	    " last_error = 'delivered; recorded after the lease expired'"
	    " FROM (SELECT json_extract(value, '$[0]') AS a,"
	    " json_extract(value, '$[1]') AS e FROM json_each(?1)) AS k"
	    " WHERE outbox.action_id = k.a"
	    " AND +outbox.state IN ('unknown', 'dead')",
	    "UPDATE outbox o SET state = 'delivered', lease_owner = NULL,"
	    " lease_until = NULL, updated_at = k.e,"
	    " last_error = 'delivered; recorded after the lease expired'"
	    " FROM (SELECT k->>0 AS a, (k->>1)::bigint AS e"
	    " FROM json_array_elements(?1::json) k) k"
	    " WHERE o.action_id = k.a AND o.state IN ('unknown', 'dead')" },
	/* Collected rows: (action, tenant, destination, attempts, lease
	   owner, lease expiry, horizon's start, time held, its destination's
	   hold's start), bound with ?1 = now and ?2 = limit. */
	[STORE_Q_EXPIRED] = { "SELECT action_id, tenant, destination, attempts,"
	    " lease_owner, lease_until" HORIZON_COLS " FROM outbox"
	    " WHERE state = 'leased' AND lease_until < ?1"
	    " ORDER BY lease_until LIMIT ?2" },
	/* The guard: the same lease as collected, and still expired. */
	[STORE_Q_EXPIRE_MOVE] = { "UPDATE outbox SET state = ?2, next_at = ?4,"
	    " lease_owner = NULL, lease_until = NULL, updated_at = ?3,"
	    " last_error = ?7"
	    " WHERE action_id = ?1 AND state = 'leased' AND lease_owner IS ?5"
	    " AND lease_until = ?6 AND lease_until < ?3",
	    "UPDATE outbox SET state = ?2, next_at = ?4,"
	    " lease_owner = NULL, lease_until = NULL, updated_at = ?3,"
	    " last_error = ?7"
	    " WHERE action_id = ?1 AND state = 'leased'"
	    " AND lease_owner IS NOT DISTINCT FROM ?5::text"
	    " AND lease_until = ?6 AND lease_until < ?3" },
	[STORE_Q_EXPIRE_ATTEMPTS] = { "UPDATE attempts SET ended_at = ?2,"
	    " error = 'lease expired: outcome unknown'"
	    " WHERE action_id = ?1 AND ended_at IS NULL" },
	[STORE_Q_EXPIRE_DEFER] = { "UPDATE outbox SET lease_until = ?4,"
	    " updated_at = ?5 WHERE action_id = ?1 AND state = 'leased'"
	    " AND lease_owner IS ?2 AND lease_until = ?3",
	    "UPDATE outbox SET lease_until = ?4,"
	    " updated_at = ?5 WHERE action_id = ?1 AND state = 'leased'"
	    " AND lease_owner IS NOT DISTINCT FROM ?2::text"
	    " AND lease_until = ?3" },
	[STORE_Q_UNKNOWN_DUE] = { "SELECT action_id, tenant, destination, attempts,"
	    " lease_owner, lease_until" HORIZON_COLS " FROM outbox"
	    " WHERE state = 'unknown' AND next_at <= ?1 ORDER BY next_at"
	    " LIMIT ?2" },
	/* A check's claim: the row is not due again until it lapses. */
	[STORE_Q_CHECK_CLAIM] = { "UPDATE outbox SET lease_owner = ?2,"
	    " lease_until = ?4, next_at = ?4, updated_at = ?3"
	    " WHERE action_id = ?1 AND state = 'unknown' AND next_at <= ?3" },
	[STORE_Q_CHECK_END] = { "UPDATE outbox SET state = ?4, next_at = ?6,"
	    " lease_owner = NULL, lease_until = NULL, updated_at = ?5,"
	    " last_error = ?7 WHERE action_id = ?1 AND state = 'unknown'"
	    " AND lease_owner = ?2 AND lease_until = ?3" },
	[STORE_Q_RECHECK_DUE] = { "UPDATE outbox SET next_at = ?3, updated_at = ?2,"
	    " last_error = ?4 WHERE action_id = ?1 AND state = 'unknown'"
	    " AND next_at <= ?2" },
	/* Operator moves end any status check under way. */
	[STORE_Q_MOVE_REQUEUE] = { REQUEUE_SET("?2", "?3")
	    " WHERE action_id = ?1 AND state IN ('dead', 'unknown')" },
	/*
	 * A requeue by filter (store_outbox_requeue()): ?1 the state, ?2 a
	 * tenant, ?3 a destination (NULL: any), moved to that state in
	 * [?4, ?5); the list in the order moved, and the move itself, each
	 * action id as a JSON string.
	 */
	[STORE_Q_REQUEUE_LIST] = { "SELECT json_quote(action_id) FROM outbox"
	    REQUEUE_WHERE_LITE " ORDER BY updated_at, action_id",
	    "SELECT to_json(action_id) FROM outbox" REQUEUE_WHERE_PG
	    " ORDER BY updated_at, action_id COLLATE \"C\"" },
	[STORE_Q_REQUEUE_SET] = { REQUEUE_SET("?6", "?7") REQUEUE_WHERE_LITE
	    " RETURNING json_quote(action_id)",
	    REQUEUE_SET("?6::bigint", "?7") REQUEUE_WHERE_PG
	    " RETURNING to_json(action_id)" },
	[STORE_Q_MOVE_DELIVERED] = { "UPDATE outbox SET state = 'delivered',"
	    " lease_owner = NULL, lease_until = NULL,"
	    " updated_at = ?2, last_error = ?3"
	    " WHERE action_id = ?1 AND state IN ('unknown', 'dead')" },
	[STORE_Q_MOVE_RESEND] = { "UPDATE outbox SET state = 'pending', next_at = ?2,"
	    " lease_owner = NULL, lease_until = NULL,"
	    " updated_at = ?2, last_error = ?3"
	    " WHERE action_id = ?1 AND state = 'unknown'" },
	[STORE_Q_MOVE_RECHECK] = { "UPDATE outbox SET next_at = ?4,"
	    " lease_owner = NULL, lease_until = NULL, updated_at = ?2,"
	    " last_error = ?3 WHERE action_id = ?1 AND state = 'unknown'" },
	[STORE_Q_NEXT_DUE] = { "SELECT min(t) FROM (SELECT min(next_at) AS t FROM"
	    " outbox WHERE state = 'pending' UNION ALL SELECT min(lease_until)"
	    " FROM outbox WHERE state = 'leased')",
	    "SELECT min(t) FROM (SELECT min(next_at) AS t FROM"
	    " outbox WHERE state = 'pending' UNION ALL SELECT min(lease_until)"
	    " FROM outbox WHERE state = 'leased') AS due" },
	/* The circuits (store/circuit.h), ?1 [[tenant, destination], ...]. */
	[STORE_Q_CIRCUIT_MAKE] = { "INSERT INTO circuits(tenant, destination,"
	    " updated_at) SELECT json_extract(value, '$[0]'),"
	    " json_extract(value, '$[1]'), ?2 FROM json_each(?1) WHERE true"
	    " ON CONFLICT DO NOTHING",
	    "INSERT INTO circuits(tenant, destination, updated_at)"
	    " SELECT k->>0, k->>1, ?2 FROM json_array_elements(?1::json) k"
	    " ON CONFLICT DO NOTHING" },
	[STORE_Q_CIRCUIT_GATE] = { "SELECT " CIRCUIT_COLS " FROM circuits c"
	    " JOIN (SELECT json_extract(value, '$[0]') AS t,"
	    " json_extract(value, '$[1]') AS d FROM json_each(?1)) AS k"
	    " ON c.tenant = k.t AND c.destination = k.d"
	    " ORDER BY c.tenant, c.destination",
	    "SELECT " CIRCUIT_COLS " FROM circuits c"
	    " JOIN (SELECT k->>0 AS t, k->>1 AS d"
	    " FROM json_array_elements(?1::json) k) AS k"
	    " ON c.tenant = k.t AND c.destination = k.d"
	    " ORDER BY c.tenant COLLATE \"C\", c.destination COLLATE \"C\""
	    " FOR UPDATE OF c" },
	/* A statement of its own: on PostgreSQL, counted once locked. */
	[STORE_Q_CIRCUIT_LEASED] = { "SELECT o.tenant, o.destination, count(*)"
	    " FROM outbox o JOIN (SELECT json_extract(value, '$[0]') AS t,"
	    " json_extract(value, '$[1]') AS d FROM json_each(?1)) AS k"
	    " ON o.tenant = k.t AND o.destination = k.d"
	    " WHERE o.state = 'leased' GROUP BY o.tenant, o.destination",
	    "SELECT o.tenant, o.destination, count(*)"
	    " FROM outbox o JOIN (SELECT k->>0 AS t, k->>1 AS d"
	    " FROM json_array_elements(?1::json) k) AS k"
	    " ON o.tenant = k.t AND o.destination = k.d"
	    " WHERE o.state = 'leased' GROUP BY o.tenant, o.destination" },
	/*
	 * Rows picked that their destination holds back, ?1 [[action, until],
	 * ...]: not due before then, so that no pick reads them again.
	 */
	[STORE_Q_CIRCUIT_RETIME] = { "UPDATE outbox SET next_at = k.u FROM (SELECT"
	    " json_extract(value, '$[0]') AS a, json_extract(value, '$[1]')"
	    " AS u FROM json_each(?1)) AS k WHERE outbox.action_id = k.a"
	    " AND +outbox.state = 'pending' AND +outbox.next_at < k.u",
	    "UPDATE outbox o SET next_at = k.u FROM (SELECT k->>0 AS a,"
	    " (k->>1)::bigint AS u FROM json_array_elements(?1::json) k) k"
	    " WHERE o.action_id = k.a AND o.state = 'pending'"
	    " AND o.next_at < k.u" },
	[STORE_Q_CIRCUIT_PUT] = { "UPDATE circuits SET state = ?3, failures = ?4,"
	    " opened_at = ?5, retry_at = ?6, cooldown_ms = ?7, paused_at = ?8,"
	    " hold_until = ?9, held_since = ?10, updated_at = ?11,"
	    " rate_next_us = ?12"
	    " WHERE tenant = ?1 AND destination = ?2" },
	[STORE_Q_CIRCUIT_RELEASE] = { "UPDATE outbox SET held_ms = held_ms +"
	    " (?4 - max(?3, coalesce(horizon_from, created_at))),"
	    " next_at = CASE WHEN state = 'pending' AND next_at > ?4 THEN ?4"
	    " ELSE next_at END"
	    " WHERE state IN ('pending', 'leased', 'unknown')"
	    " AND destination = ?2 AND tenant = ?1"
	    " AND coalesce(horizon_from, created_at) < ?4",
	    "UPDATE outbox SET held_ms = held_ms +"
	    " (?4::bigint - GREATEST(?3::bigint,"
	    " coalesce(horizon_from, created_at))),"
	    " next_at = CASE WHEN state = 'pending' AND next_at > ?4::bigint"
	    " THEN ?4::bigint ELSE next_at END"
	    " WHERE state IN ('pending', 'leased', 'unknown')"
	    " AND destination = ?2 AND tenant = ?1"
	    " AND coalesce(horizon_from, created_at) < ?4::bigint" },
	[STORE_Q_CIRCUIT_LIST] = { "SELECT " CIRCUIT_COLS ", (SELECT count(*)"
	    " FROM outbox o WHERE o.state = 'leased' AND o.tenant = c.tenant"
	    " AND o.destination = c.destination) FROM circuits c"
	    " ORDER BY c.tenant, c.destination",
	    "SELECT " CIRCUIT_COLS ", (SELECT count(*)"
	    " FROM outbox o WHERE o.state = 'leased' AND o.tenant = c.tenant"
	    " AND o.destination = c.destination) FROM circuits c"
	    " ORDER BY c.tenant COLLATE \"C\", c.destination COLLATE \"C\"" },
	/* The read-outs: ?2 the most rows (-1: all), times in unix ms. */
	[STORE_Q_LIST_STATE] = { "SELECT json_object('action', action_id, 'tenant',"
	    " tenant, 'destination', destination, 'state', state, 'attempts',"
	    " attempts, 'next_at', next_at, 'lease_owner', lease_owner,"
	    " 'lease_until', lease_until, 'created_at', created_at,"
	    " 'updated_at', updated_at, 'last_status', last_status,"
	    " 'last_error', last_error) FROM outbox WHERE state = ?1"
	    " AND (?3 IS NULL OR destination = ?3) AND (?4 IS NULL OR"
	    " tenant = ?4) AND created_at >= ?5 ORDER BY created_at LIMIT ?2",
	    "SELECT json_build_object('action', action_id,"
	    " 'tenant', tenant, 'destination', destination, 'state', state,"
	    " 'attempts', attempts, 'next_at', next_at, 'lease_owner',"
	    " lease_owner, 'lease_until', lease_until, 'created_at',"
	    " created_at, 'updated_at', updated_at, 'last_status',"
	    " last_status, 'last_error', last_error) FROM outbox"
	    " WHERE state = ?1 AND (?3::text IS NULL OR destination = ?3)"
	    " AND (?4::text IS NULL OR tenant = ?4) AND created_at >= ?5"
	    " ORDER BY created_at LIMIT nullif(?2::bigint, -1)" },
	/* STORE_Q_LIST_STATE's in every state: ?1 is NULL. */
	[STORE_Q_LIST_ALL] = { "SELECT json_object('action', action_id,"
	    " 'tenant', tenant, 'destination', destination, 'state', state,"
	    " 'attempts',"
	    " attempts, 'next_at', next_at, 'lease_owner', lease_owner,"
	    " 'lease_until', lease_until, 'created_at', created_at,"
	    " 'updated_at', updated_at, 'last_status', last_status,"
	    " 'last_error', last_error) FROM outbox WHERE ?1 IS NULL"
	    " AND (?3 IS NULL OR destination = ?3) AND (?4 IS NULL OR"
	    " tenant = ?4) AND created_at >= ?5 ORDER BY created_at LIMIT ?2",
	    "SELECT json_build_object('action', action_id,"
	    " 'tenant', tenant, 'destination', destination, 'state', state,"
	    " 'attempts', attempts, 'next_at', next_at, 'lease_owner',"
	    " lease_owner, 'lease_until', lease_until, 'created_at',"
	    " created_at, 'updated_at', updated_at, 'last_status',"
	    " last_status, 'last_error', last_error) FROM outbox"
	    " WHERE ?1::text IS NULL AND (?3::text IS NULL OR destination = ?3)"
	    " AND (?4::text IS NULL OR tenant = ?4) AND created_at >= ?5"
	    " ORDER BY created_at LIMIT nullif(?2::bigint, -1)" },
	[STORE_Q_LIST_ATTEMPTS] = { "SELECT json_object('n', n, 'owner', owner,"
	    " 'started_at', started_at, 'ended_at', ended_at, 'http_status',"
	    " http_status, 'error', error) FROM attempts WHERE action_id = ?1"
	    " AND started_at >= ?3 ORDER BY id LIMIT ?2",
	    "SELECT json_build_object('n', n, 'owner',"
	    " owner, 'started_at', started_at, 'ended_at', ended_at,"
	    " 'http_status', http_status, 'error', error) FROM attempts"
	    " WHERE action_id = ?1 AND started_at >= ?3 ORDER BY id"
	    " LIMIT nullif(?2::bigint, -1)" },
	[STORE_Q_LIST_CONFLICTS] = { "SELECT json_object('id', id, 'created_at',"
	    " created_at, 'tenant', tenant, 'job_id', job_id, 'action',"
	    " action_id, 'kind', kind, 'recorded', recorded, 'observed',"
	    " observed, 'seen', seen, 'resolved_at', resolved_at,"
	    " 'resolution', resolution) FROM conflicts"
	    " WHERE (?1 OR resolved_at IS NULL) AND (?3 IS NULL OR tenant = ?3)"
	    " AND created_at >= ?4 ORDER BY id LIMIT ?2",
	    "SELECT json_build_object('id', id,"
	    " 'created_at', created_at, 'tenant', tenant, 'job_id', job_id,"
	    " 'action', action_id, 'kind', kind, 'recorded', recorded,"
	    " 'observed', observed, 'seen', seen, 'resolved_at', resolved_at,"
	    " 'resolution', resolution) FROM conflicts"
	    " WHERE (?1::int <> 0 OR resolved_at IS NULL)"
	    " AND (?3::text IS NULL OR tenant = ?3) AND created_at >= ?4"
	    " ORDER BY id LIMIT nullif(?2::bigint, -1)" },
	[STORE_Q_RESOLVE] = { "UPDATE conflicts SET resolved_at = ?2, resolution = ?3"
	    " WHERE id = ?1 AND resolved_at IS NULL" },
	[STORE_Q_ACTION_STATE] = { "SELECT state FROM outbox WHERE action_id = ?1" },
	[STORE_Q_CONFLICT_STATE] = { "SELECT resolved_at IS NOT NULL FROM conflicts"
	    " WHERE id = ?1",
	    "SELECT (resolved_at IS NOT NULL)::int"
	    " FROM conflicts WHERE id = ?1" },
	[STORE_Q_PRUNE_RECEIPTS] = { "DELETE FROM receipts WHERE received_at < ?1" },
	[STORE_Q_PRUNE_ATTEMPTS] = { "DELETE FROM attempts WHERE action_id IN"
	    " (SELECT o.action_id FROM outbox o JOIN accepted a USING"
	    " (action_id) WHERE o.state = 'delivered' AND a.accepted_at < ?1)" },
	[STORE_Q_PRUNE_OUTBOX] = { "DELETE FROM outbox WHERE state = 'delivered' AND"
	    " action_id IN (SELECT action_id FROM accepted"
	    " WHERE accepted_at < ?1)" },
	[STORE_Q_PRUNE_ACCEPTED] = { "DELETE FROM accepted WHERE accepted_at < ?1"
	    " AND NOT EXISTS (SELECT 1 FROM outbox o"
	    " WHERE o.action_id = accepted.action_id)" },
	/* Jobs that ended (completed or failed) before ?1, ?2 of them. */
	[STORE_Q_JOBS_TERMINAL] = { "SELECT tenant, job_id FROM job_state"
	    " WHERE terminal IN ('completed','failed') AND updated_at < ?1"
	    " ORDER BY tenant, job_id LIMIT ?2" },
	/* Guarded: only while still ended before ?3. */
	[STORE_Q_FORGET_JOB] = { "DELETE FROM job_state WHERE tenant = ?1"
	    " AND job_id = ?2 AND terminal IN ('completed','failed')"
	    " AND updated_at < ?3" },
	[STORE_Q_FORGET_POLL] = { "DELETE FROM polls WHERE tenant = ?1"
	    " AND job_id = ?2" },
	[STORE_Q_POLL_LAST] = { "SELECT polled_at FROM polls WHERE tenant = ?1"
	    " AND job_id = ?2" },
	/* One tenant's rows (store/tenant.h). */
	[STORE_Q_TENANT_TALLY] = { "SELECT"
	    " (SELECT count(*) FROM outbox WHERE tenant = ?1),"
	    " (SELECT count(*) FROM receipts WHERE tenant = ?1),"
	    " (SELECT count(*) FROM conflicts WHERE tenant = ?1"
	    " AND resolved_at IS NULL)" },
	/*
	 * Inside the removal's transaction: on PostgreSQL the tenant's rows
	 * are locked first, so that no dispatcher leases one between this
	 * count and the DELETEs (its claim skips locked rows); SQLite's
	 * BEGIN IMMEDIATE has already shut every other writer out.
	 */
	[STORE_Q_TENANT_LEASED] = { "SELECT count(*) FROM outbox"
	    " WHERE tenant = ?1 AND state = 'leased'",
	    "SELECT count(*) FILTER (WHERE state = 'leased')"
	    " FROM (SELECT state FROM outbox WHERE tenant = ?1 FOR UPDATE) t" },
	[STORE_Q_SUBJECT_GET] = { "SELECT version, occurred_at, effect, step"
	    " FROM subjects WHERE tenant = ?1 AND subject = coalesce("
	    "(SELECT subject FROM subjects WHERE tenant = ?1 AND subject = ?2),"
	    " '/' || substr(?2, instr(?2, '/') + 1))",
	    "SELECT version, occurred_at, effect, step"
	    " FROM subjects WHERE tenant = ?1 AND subject = coalesce("
	    "(SELECT subject FROM subjects WHERE tenant = ?1 AND subject = ?2),"
	    " '/' || substr(?2, strpos(?2, '/') + 1))" },
	[STORE_Q_FORGET_ATTEMPTS] = { "DELETE FROM attempts WHERE action_id IN"
	    " (SELECT action_id FROM outbox WHERE tenant = ?1)" },
	[STORE_Q_FORGET_OUTBOX] = { "DELETE FROM outbox WHERE tenant = ?1" },
	[STORE_Q_FORGET_ACCEPTED] = { "DELETE FROM accepted WHERE tenant = ?1" },
	[STORE_Q_FORGET_RECEIPTS] = { "DELETE FROM receipts WHERE tenant = ?1" },
	[STORE_Q_FORGET_JOBS] = { "DELETE FROM job_state WHERE tenant = ?1" },
	[STORE_Q_FORGET_SUBJECTS] = { "DELETE FROM subjects WHERE tenant = ?1" },
	[STORE_Q_FORGET_CONFLICTS] = { "DELETE FROM conflicts WHERE tenant = ?1" },
	[STORE_Q_FORGET_POLLS] = { "DELETE FROM polls WHERE tenant = ?1" },
	[STORE_Q_METRIC_ADD] = { "INSERT INTO metrics(name, l1, l2, value)"
	    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT(name, l1, l2)"
	    " DO UPDATE SET value = value + excluded.value",
	    "INSERT INTO metrics(name, l1, l2, value)"
	    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT(name, l1, l2)"
	    " DO UPDATE SET value = metrics.value + excluded.value" },
	/*
	 * A batch's counts on a server (store_metrics_send()), a JSON array
	 * of rows in their key's order, kept in that order: their locks are
	 * taken so.
	 */
	[STORE_Q_METRICS_ADD] = { "SELECT 1", "INSERT INTO metrics(name, l1, l2,"
	    " value) SELECT name, l1, l2, value FROM json_populate_recordset("
	    "NULL::metrics, ?1::json) WITH ORDINALITY AS r(name, l1, l2, value,"
	    " n) ORDER BY n ON CONFLICT(name, l1, l2)"
	    " DO UPDATE SET value = metrics.value + excluded.value" },
	[STORE_Q_METRICS_MAX] = { "SELECT 1", "INSERT INTO metrics(name, l1, l2,"
	    " value) SELECT name, l1, l2, value FROM json_populate_recordset("
	    "NULL::metrics, ?1::json) WITH ORDINALITY AS r(name, l1, l2, value,"
	    " n) ORDER BY n ON CONFLICT(name, l1, l2)"
	    " DO UPDATE SET value = greatest(metrics.value, excluded.value)" },
	[STORE_Q_METRIC_MAX] = { "INSERT INTO metrics(name, l1, l2, value)"
	    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT(name, l1, l2)"
	    " DO UPDATE SET value = max(value, excluded.value)",
	    "INSERT INTO metrics(name, l1, l2, value)"
	    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT(name, l1, l2)"
	    " DO UPDATE SET value = greatest(metrics.value, excluded.value)" },
	[STORE_Q_METRIC_LIST] = { "SELECT name, l1, l2, value FROM metrics" },
	/*
	 * The series of endpoints (?1: requests and their secrets' last
	 * use) and destinations (?2; JSON arrays of the names configured
	 * now) that are no longer configured.
	 */
	[STORE_Q_METRIC_FORGET] = { "DELETE FROM metrics WHERE (name IN"
	    " ('requests', 'secret_used_ms') AND l1 NOT IN ('unknown',"
	    " '_health', '_metrics', '_status') AND l1 NOT IN (SELECT value"
	    " FROM json_each(?1)))"
	    " OR (name IN ('deliveries', 'delivery_le', 'delivery_sum_us',"
	    " 'delivery_count', 'delivered_ms') AND l1 NOT IN (SELECT value"
	    " FROM json_each(?2)))",
	    "DELETE FROM metrics WHERE (name IN"
	    " ('requests', 'secret_used_ms') AND l1 NOT IN ('unknown',"
	    " '_health', '_metrics', '_status') AND l1 NOT IN (SELECT"
	    " json_array_elements_text(?1::json)))"
	    " OR (name IN ('deliveries', 'delivery_le', 'delivery_sum_us',"
	    " 'delivery_count', 'delivered_ms') AND l1 NOT IN (SELECT"
	    " json_array_elements_text(?2::json)))" },
	/*
	 * The series whose endpoint or destination (l1) is one of ?1 (a
	 * JSON array), but the chart's minutes, which name neither.
	 */
	[STORE_Q_METRIC_DROP] = { "DELETE FROM metrics WHERE name <> 'minute'"
	    " AND l1 IN (SELECT value FROM json_each(?1))",
	    "DELETE FROM metrics WHERE name <> 'minute' AND l1 IN (SELECT"
	    " json_array_elements_text(?1::json))" },
	/* The status page's minutes before ?1 (text that sorts as time). */
	[STORE_Q_MINUTE_PRUNE] = { "DELETE FROM metrics WHERE name = 'minute'"
	    " AND l1 < ?1", "DELETE FROM metrics WHERE name = 'minute'"
	    " AND l1 COLLATE \"C\" < ?1" },
	/*
	 * Each destination's latest error among its undelivered rows (the
	 * rows index outbox_dest reads): SQLite's bare column takes the
	 * max()'s row, PostgreSQL says so with DISTINCT ON.
	 */
	[STORE_Q_DEST_ERRORS] = { "SELECT destination, max(updated_at),"
	    " last_error FROM outbox WHERE state IN"
	    " ('pending','leased','dead','unknown') AND last_error IS NOT NULL"
	    " GROUP BY destination",
	    "SELECT DISTINCT ON (destination) destination, updated_at,"
	    " last_error FROM outbox WHERE state IN"
	    " ('pending','leased','dead','unknown') AND last_error IS NOT NULL"
	    " ORDER BY destination, updated_at DESC" },
	/* Index outbox_dest: the undelivered rows only. */
	[STORE_Q_DEST_GAUGES] = { "SELECT destination, state, count(*),"
	    " min(created_at) FROM outbox"
	    " WHERE state IN ('pending','leased','dead','unknown')"
	    " GROUP BY state, destination" },
	/*
	 * PostgreSQL only: serialises the acceptance of one job across
	 * connections (and hosts) until the transaction ends.
	 */
	[STORE_Q_JOB_LOCK] = { "SELECT 1", "SELECT pg_advisory_xact_lock("
	    "hashtextextended(?1::text || ':' || ?2::text, 0))" },
	/*
	 * A batch's, [[tenant, job], ...], one after the other in that
	 * order: a set-returning scan yields its rows in order, and each
	 * lock is taken as its row passes.
	 */
	[STORE_Q_JOBS_LOCK] = { "SELECT 1", "SELECT count(pg_advisory_xact_lock("
	    "hashtextextended((k->>0) || ':' || (k->>1), 0)))"
	    " FROM json_array_elements(?1::json) k" },
	[STORE_Q_JOB_TRYLOCK] = { "SELECT 1", "SELECT"
	    " pg_try_advisory_xact_lock(hashtextextended(?1::text || ':' ||"
	    " ?2::text, 0))::int" },
	[STORE_Q_VERSION] = { "PRAGMA user_version",
	    "SELECT version FROM hookbox_state.schema_version" },
	/*
	 * Could this transaction write: a server's may be a standby's, or
	 * its role's without the grant; a file's write lock, BEGIN
	 * IMMEDIATE's, and store_check_file() have said so already.
	 */
	[STORE_Q_WRITABLE] = { "SELECT 1, 1", "SELECT (current_setting("
	    "'transaction_read_only') = 'off')::int,"
	    " (has_table_privilege('receipts', 'INSERT, UPDATE')"
	    " AND has_table_privilege('job_state', 'INSERT, UPDATE')"
	    " AND has_table_privilege('accepted', 'INSERT')"
	    " AND has_table_privilege('outbox', 'INSERT, UPDATE')"
	    " AND has_table_privilege('conflicts', 'INSERT, UPDATE')"
	    " AND has_table_privilege('metrics', 'INSERT, UPDATE'))::int" },
	[STORE_Q_POLL_MARK] = { "INSERT INTO polls(tenant, job_id, polled_at)"
	    " VALUES (?1, ?2, ?3) ON CONFLICT(tenant, job_id)"
	    " DO UPDATE SET polled_at = excluded.polled_at" },
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
		    "full, read-only, or permission denied)";
	case STORE_NOMEM:
		return "out of memory";
	case STORE_ERROR:
		return "state database error";
	case STORE_GONE:
		return "state database file removed, replaced or made"
		    " read-only under the running process, or its connection"
		    " lost";
	}
	return "unknown error";
}

enum store_status
store_status_of(enum db_rc rc)
{
	switch (rc) {
	case DB_OK:
	case DB_DONE:
	case DB_ROW:
		return STORE_OK;
	case DB_BUSY:
		return STORE_BUSY;
	case DB_GONE:
		/* A lost connection is opened again by whoever holds it. */
		return STORE_GONE;
	case DB_IOERR:
	case DB_FULL:
	case DB_READONLY:
	case DB_DENIED:
		return STORE_IO;
	case DB_NOMEM:
		return STORE_NOMEM;
	default:
		return STORE_ERROR;
	}
}

/* The status of the connection's last error, for a failed prepare. */
enum store_status
store_last(struct store *s)
{
	enum store_status	rc;

	/* A failure not recorded (a bind's) is still a failure. */
	if ((rc = store_status_of(db_last(s->db))) == STORE_OK)
		rc = STORE_ERROR;
	return rc;
}

struct db_stmt *
store_stmt(struct store *s, enum store_q q)
{
	if (q <= STORE_Q_ROLLBACK_TO)
		s->tx_statements++;
	return db_stmt(s->db, q);
}

/* Steps a bound statement expected to return no row. */
static enum store_status
store_done(struct db_stmt *st)
{
	return store_status_of(db_step_done(st));
}

static const struct store_list_filter	no_filter;

const struct store_list_filter *
store_filter(const struct store_list_filter *f)
{
	return f != NULL ? f : &no_filter;
}

int64_t
store_filter_limit(const struct store_list_filter *f)
{
	return f->limit > 0 ? f->limit : -1;
}

enum store_status
store_send(struct db_stmt *st)
{
	return store_status_of(db_send(st));
}

enum store_status
store_send_q(struct store *s, enum store_q q)
{
	struct db_stmt	*st;

	if ((st = store_stmt(s, q)) == NULL)
		return store_last(s);
	return store_send(st);
}

/*
 * A file's schema, made and migrated by whoever opens it to write (the
 * file's owner): user_version, read again under the write lock, taken
 * from there to SCHEMA_VERSION by migrations[].
 */
static enum store_status
migrate(struct store *s)
{
	struct db_stmt		*st;
	enum store_status	 rc;
	enum db_rc		 step;
	int			 v, i;
	char			 pragma[48];

	if ((st = store_stmt(s, STORE_Q_VERSION)) == NULL)
		return store_last(s);
	/* The common case, current already, needs no write lock. */
	if (db_step(st) == DB_ROW && db_col_int64(st, 0) == SCHEMA_VERSION) {
		db_reset(st);
		return STORE_OK;
	}
	db_reset(st);
	if ((rc = store_status_of(db_begin(s->db, DB_BEGIN_WRITE, 0))) !=
	    STORE_OK)
		goto out;
	/* Read again under the lock: another process may have migrated. */
	if ((st = store_stmt(s, STORE_Q_VERSION)) == NULL ||
	    (step = db_step(st)) != DB_ROW) {
		rc = store_last(s);
		goto out;
	}
	v = (int)db_col_int64(st, 0);
	db_reset(st);
	if (v > SCHEMA_VERSION || v < 0) {
		rc = STORE_ERROR;	/* written by a newer hookbox */
		(void)snprintf(s->err, sizeof(s->err), "state schema version"
		    " %d is not %d: a newer hookbox wrote it; run that"
		    " release, or restore a backup", v, SCHEMA_VERSION);
		goto out;
	}
	for (i = v; i < SCHEMA_VERSION; i++)
		if ((rc = store_status_of(db_exec(s->db, migrations[i]))) !=
		    STORE_OK)
			goto out;
	if (v != SCHEMA_VERSION) {
		if (snprintf(pragma, sizeof(pragma), "PRAGMA user_version=%d",
		    SCHEMA_VERSION) >= (int)sizeof(pragma)) {
			rc = STORE_ERROR;
			goto out;
		}
		if ((rc = store_status_of(db_exec(s->db, pragma))) !=
		    STORE_OK)
			goto out;
	}
	if ((rc = store_status_of(db_exec(s->db, "COMMIT"))) == STORE_OK &&
	    v != SCHEMA_VERSION) {
		s->moved_from = v;
		s->moved_to = SCHEMA_VERSION;
	}
out:
	if (rc != STORE_OK && db_in_tx(s->db))
		(void)db_exec(s->db, "ROLLBACK");
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

/*
 * A file is made here, so that its mode is never wider, and checked
 * before SQLite opens it.  The directory may be writable by the service
 * user, who could have put a link or a FIFO there for root's `hookbox
 * init`: never follow one (SQLite's own opens refuse links too, and
 * never create), never wait on one.
 */
static enum store_status
file_make(struct store *s, const char *path, int create)
{
	struct stat	sb;
	int		fd, regular;

	if (create) {
		fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
		    O_NOCTTY | O_CLOEXEC, 0600);
		if (fd < 0 && errno != ELOOP && errno != ENXIO)
			return errno == ENOMEM ? STORE_NOMEM : STORE_IO;
		regular = fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
		if (fd >= 0)
			close(fd);
		if (!regular) {
			(void)snprintf(s->err, sizeof(s->err), "%s: refused",
			    fd < 0 && errno == ELOOP ? "a symbolic link" :
			    "not a regular file");
			return STORE_IO;
		}
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
	if ((s->path = strdup(path)) == NULL)
		return STORE_NOMEM;
	return STORE_OK;
}

/*
 * A file's journal: WAL is persistent in the file; synchronous is per
 * connection, and so is the size after which a COMMIT checkpoints.
 */
static enum store_status
file_journal(struct store *s, const struct store_opts *opts)
{
	enum store_status	rc;

	if ((rc = store_status_of(db_exec(s->db,
	    "PRAGMA journal_mode=WAL"))) != STORE_OK)
		return rc;
	if ((rc = store_status_of(db_exec(s->db, opts->sync_normal ?
	    "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL"))) !=
	    STORE_OK)
		return rc;
	if (opts->checkpoint_pages > 0)
		(void)db_checkpoint(s->db, opts->checkpoint_pages);
	return STORE_OK;
}

/*
 * PostgreSQL: schema hookbox_state, and its version in a one-row table
 * (SCHEMA_VERSION_PG) for later migrations.  Creators take a session lock
 * first, so that two processes initialising at once create it once.
 */
#define SCHEMA_VERSION_PG	4
#define SCHEMA_LOCK_PG		"7312455311853453101"	/* any fixed key */

/* pg_migrations[i] takes version i + 1 to i + 2 (db/pg_schema.h). */
static const char *const pg_migrations[SCHEMA_VERSION_PG - 1] = {
	pg_schema_state_2,
	pg_schema_state_3,
	pg_schema_state_4,
};

/*
 * Takes schema hookbox_state from version v to SCHEMA_VERSION_PG, under
 * the creators' lock, reading the version again under it: another
 * process may have migrated meanwhile.
 */
static enum store_status
server_migrate(struct store *s, int64_t v)
{
	struct db_stmt		*st;
	enum store_status	 rc;

	if ((rc = store_status_of(db_exec(s->db,
	    "SELECT pg_advisory_lock(" SCHEMA_LOCK_PG ")"))) != STORE_OK)
		return rc;
	if ((st = store_stmt(s, STORE_Q_VERSION)) == NULL)
		rc = store_last(s);
	else if (db_step(st) != DB_ROW) {
		db_reset(st);
		rc = STORE_ERROR;
	} else {
		v = db_col_int64(st, 0);
		db_reset(st);
	}
	if (rc == STORE_OK && v >= 1 && v < SCHEMA_VERSION_PG) {
		s->moved_from = (int)v;
		s->moved_to = SCHEMA_VERSION_PG;
	}
	for (; rc == STORE_OK && v >= 1 && v < SCHEMA_VERSION_PG; v++)
		if ((rc = store_status_of(db_exec(s->db,
		    pg_migrations[v - 1]))) != STORE_OK)
			(void)snprintf(s->err, sizeof(s->err), "migrating the"
			    " state schema to version %lld: %s",
			    (long long)v + 1, db_errmsg(s->db));
	/* A failed step leaves its transaction open, and aborted. */
	if (rc != STORE_OK && db_in_tx(s->db))
		(void)db_exec(s->db, "ROLLBACK");
	(void)db_exec(s->db, "SELECT pg_advisory_unlock(" SCHEMA_LOCK_PG ")");
	return rc;
}

/*
 * A server's schema: made by a creator (`hookbox init`, as the schema's
 * owner role) under a session lock, and migrated by one alone; any other
 * role finds it current, or is told to run init.
 */
static enum store_status
server_schema(struct store *s, int create)
{
	struct db_stmt		*st;
	enum store_status	 rc;
	enum db_rc		 step;
	int64_t			 v = 0;

	if (create && (rc = store_status_of(db_exec(s->db,
	    "SELECT pg_advisory_lock(" SCHEMA_LOCK_PG ")"))) != STORE_OK)
		return rc;
	if (create && (rc = store_status_of(db_exec(s->db,
	    "DO $$BEGIN IF to_regnamespace('hookbox_state') IS NULL THEN"
	    " RAISE EXCEPTION USING ERRCODE = 'P0002'; END IF; END$$"))) !=
	    STORE_OK) {
		/* Missing (or unreadable): create it, with its version. */
		rc = store_status_of(db_exec(s->db, pg_schema_state));
		if (rc != STORE_OK)
			(void)snprintf(s->err, sizeof(s->err), "%s",
			    db_errmsg(s->db));
		else
			s->moved_to = SCHEMA_VERSION_PG;
	} else
		rc = STORE_OK;
	if (create)
		(void)db_exec(s->db, "SELECT pg_advisory_unlock("
		    SCHEMA_LOCK_PG ")");
	if (rc != STORE_OK)
		return rc;
	if ((st = store_stmt(s, STORE_Q_VERSION)) == NULL)
		return store_last(s);
	if ((step = db_step(st)) == DB_ROW) {
		v = db_col_int64(st, 0);
		db_reset(st);
		step = DB_DONE;
	}
	if (step != DB_DONE) {
		(void)snprintf(s->err, sizeof(s->err), "state schema not"
		    " initialised (run hookbox init): %s", db_errmsg(s->db));
		return store_status_of(step) == STORE_GONE ? STORE_GONE :
		    STORE_ERROR;
	}
	if (v >= 1 && v < SCHEMA_VERSION_PG && create)
		return server_migrate(s, v);
	if (v >= 1 && v < SCHEMA_VERSION_PG) {
		(void)snprintf(s->err, sizeof(s->err), "state schema version"
		    " %lld is older than %d: run hookbox init as its owner to"
		    " migrate it", (long long)v, SCHEMA_VERSION_PG);
		return STORE_ERROR;
	}
	if (v < 1 || v > SCHEMA_VERSION_PG) {
		(void)snprintf(s->err, sizeof(s->err), "state schema version"
		    " %lld is not %d", (long long)v, SCHEMA_VERSION_PG);
		return STORE_ERROR;	/* written by a newer hookbox */
	}
	return STORE_OK;
}

int
store_schema_moved(const struct store *s, int *from, int *to)
{
	*from = s->moved_from;
	*to = s->moved_to;
	return s->moved_to != 0;
}

/* Why this thread's last store_open() failed. */
static _Thread_local char	open_err[256];

enum store_status
store_open(const char *path, const struct store_opts *opts,
    struct store **out)
{
	static const struct store_opts	 defaults = {
		.busy_ms = STORE_BUSY_MS_DEFAULT
	};
	struct store			*s;
	struct db_conf			 conf;
	enum store_status		 rc;
	unsigned			 caps = db_location_caps(path);

	*out = NULL;
	if (opts == NULL)
		opts = &defaults;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return STORE_NOMEM;
	s->busy_ms = opts->busy_ms;
	/*
	 * The same texts find both schemas on a server, whose name for the
	 * state's connections tells them apart in pg_stat_activity; at FULL
	 * a file's commit can be one write of its WAL frames (db/db.h).
	 */
	memset(&conf, 0, sizeof(conf));
	conf.flags = DB_OPEN_READWRITE |
	    (opts->sync_normal ? 0 : DB_OPEN_WAL_GATHER);
	conf.busy_ms = conf.connect_ms = opts->busy_ms;
	conf.schemas = "hookbox_state,hookbox_config";
	conf.app = "hookbox-state";
	conf.cache_kib = opts->cache_kib;
	if ((caps & DB_CAP_FILE) &&
	    (rc = file_make(s, path, opts->create)) != STORE_OK)
		goto out;
	if ((rc = store_status_of(db_open(path, &conf, store_text, STORE_Q__N,
	    &s->db, s->err, sizeof(s->err)))) != STORE_OK)
		goto out;
	s->err[0] = '\0';
	if ((caps & DB_CAP_FILE) && (rc = file_journal(s, opts)) != STORE_OK)
		goto out;
	/* A server's schema is made and migrated by its owner's role. */
	rc = caps & DB_CAP_SERVER ? server_schema(s, opts->create) :
	    migrate(s);
	if (rc == STORE_OK && (caps & DB_CAP_FILE) && opts->journal_in_memory)
		rc = store_status_of(db_exec(s->db,
		    "PRAGMA temp_store=MEMORY"));
out:
	if (rc != STORE_OK) {
		(void)snprintf(open_err, sizeof(open_err), "%s",
		    s->err[0] != '\0' ? s->err : (caps & DB_CAP_SERVER) &&
		    s->db != NULL ? db_errmsg(s->db) : store_strerror(rc));
		store_close(s);
	} else
		*out = s;
	return rc;
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	db_close(s->db);
	free(s->path);
	free(s);
}

const char *
store_errmsg(struct store *s)
{
	if (s == NULL)
		return open_err[0] != '\0' ? open_err : "no database";
	if (s->err[0] != '\0')
		return s->err;
	/* The server's or SQLite's words: never a conninfo's password. */
	return s->db != NULL ? db_errmsg(s->db) : "no database";
}

enum store_status
store_run(struct store *s, enum store_q q)
{
	struct db_stmt	*st;

	if ((st = store_stmt(s, q)) == NULL)
		return store_last(s);
	return store_done(st);
}

/*
 * A file removed (or renamed over) under a running process stays open
 * and writable through our descriptor: commits would succeed into a file
 * no one else will ever read.  A file made read-only stays writable
 * through a descriptor opened before.  Neither may be acknowledged into.
 * PostgreSQL has no file of ours: always STORE_OK.
 */
enum store_status
store_check_file(struct store *s)
{
	struct stat	sb;
	struct stat	*g = &s->granted;

	if (!(db_caps(s->db) & DB_CAP_FILE))
		return STORE_OK;
	/* SQLite opens a file it may not write read-only, without a word. */
	if (!db_same_file(s->db, &sb) || db_readonly(s->db))
		return STORE_GONE;
	/* A chmod, chown or ACL change moves the change time. */
	if (s->granted_ok && sb.st_mode == g->st_mode &&
	    sb.st_uid == g->st_uid && sb.st_gid == g->st_gid &&
	    sb.st_ctim.tv_sec == g->st_ctim.tv_sec &&
	    sb.st_ctim.tv_nsec == g->st_ctim.tv_nsec)
		return STORE_OK;
	if (!(s->granted_ok = writable(s->path, NULL)))
		return STORE_GONE;
	*g = sb;
	return STORE_OK;
}

int
store_own_checkpoints(const char *path)
{
	return (db_location_caps(path) & DB_CAP_FILE) != 0;
}

enum store_status
store_checkpoint(struct store *s)
{
	return store_status_of(db_checkpoint(s->db, 0));
}

size_t
store_shrink(struct store *s)
{
	return db_shrink(s->db);
}

enum store_status
store_begin(struct store *s)
{
	enum store_status	rc;

	if ((rc = store_check_file(s)) != STORE_OK)
		return rc;
	s->err[0] = '\0';
	/*
	 * A transaction left open, over (SQLite rolled it back itself) or
	 * cut off (a lost connection to a server, which stays lost until its
	 * ROLLBACK) ends here, so that this BEGIN runs on a connection
	 * opened again.
	 */
	if (s->in_tx)
		store_rollback(s);
	/* What an earlier transaction sent and never landed: its end. */
	(void)db_land(s->db, NULL);
	/* Sent: on PostgreSQL it rides the transaction's first flight. */
	if ((rc = store_send_q(s, STORE_Q_BEGIN)) == STORE_OK)
		s->in_tx = 1;
	else
		(void)db_land(s->db, NULL);	/* failed at once: over */
	return rc;
}

enum store_status
store_commit(struct store *s)
{
	enum store_status	rc;

	if (fault_fire(FAULT_BEFORE_COMMIT))
		return STORE_IO;
	s->committed = 0;
	if ((rc = store_run(s, STORE_Q_COMMIT)) == STORE_OK)
		s->in_tx = 0, s->committed = 1;
	if (rc == STORE_OK)
		rc = fault_fire(FAULT_AFTER_COMMIT) ||
		    !db_same_file(s->db, NULL) ? STORE_GONE : STORE_OK;
	return rc;
}

void
store_rollback(struct store *s)
{
	/* A failed COMMIT may already have rolled back; autocommit tells. */
	if (s->in_tx && db_in_tx(s->db))
		(void)store_run(s, STORE_Q_ROLLBACK);
	s->in_tx = 0;
}

/* Steps a one-row, one-integer query. */
static enum store_status
store_scalar(struct store *s, enum store_q q, int64_t *out)
{
	struct db_stmt	*st;
	enum db_rc	 rc;

	*out = 0;
	if ((st = store_stmt(s, q)) == NULL)
		return store_last(s);
	if ((rc = db_step(st)) == DB_ROW) {
		*out = db_col_int64(st, 0);
		db_reset(st);
		rc = DB_DONE;
	}
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
store_age(int64_t since_ms, int64_t now_ms)
{
	if (since_ms <= 0 || now_ms <= since_ms)
		return 0;
	return (now_ms - since_ms) / 1000;
}

int64_t
store_counts_age(const struct store_counts *c, int64_t now_ms)
{
	return store_age(c->oldest_pending_ms, now_ms);
}

enum store_status
store_counts(struct store *s, struct store_counts *c)
{
	struct db_stmt		*st;
	enum store_state	 state;
	enum db_rc		 rc;
	enum store_status	 status;

	memset(c, 0, sizeof(*c));
	if ((st = store_stmt(s, STORE_Q_COUNT_OUTBOX)) == NULL)
		return store_last(s);
	while ((rc = db_step(st)) == DB_ROW)
		if (store_state_parse(db_col_text(st, 0), &state) == 0)
			c->outbox[state] = db_col_int64(st, 1);
	if (rc != DB_DONE)
		return store_status_of(rc);
	if ((status = store_scalar(s, STORE_Q_COUNT_CONFLICTS,
	    &c->conflicts_open)) != STORE_OK)
		return status;
	return store_scalar(s, STORE_Q_OLDEST_PENDING, &c->oldest_pending_ms);
}

enum store_status
store_receipt_counts(struct store *s, struct store_receipts *r)
{
	struct db_stmt	*st;
	enum hb_result	 res;
	enum db_rc	 rc;

	memset(r, 0, sizeof(*r));
	if ((st = store_stmt(s, STORE_Q_RECEIPT_COUNTS)) == NULL)
		return store_last(s);
	while ((rc = db_step(st)) == DB_ROW)
		if (hb_result_parse(db_col_text(st, 0), &res) == 0)
			r->n[res] += db_col_int64(st, 1);
	return store_status_of(rc);
}

/* Asks, in a transaction, whether it could write (STORE_Q_WRITABLE). */
static enum store_status
writes_allowed(struct store *s)
{
	struct db_stmt	*st;
	enum db_rc	 rc;
	int		 rw = 0, granted = 0;

	if ((st = store_stmt(s, STORE_Q_WRITABLE)) == NULL)
		return store_last(s);
	if ((rc = db_step(st)) == DB_ROW) {
		rw = db_col_int64(st, 0) != 0;
		granted = db_col_int64(st, 1) != 0;
		db_reset(st);
		rc = DB_DONE;
	}
	if (rc != DB_DONE)
		return store_status_of(rc);
	if (!rw)
		(void)snprintf(s->err, sizeof(s->err), "the state database is"
		    " read-only (a standby?)");
	else if (!granted)
		(void)snprintf(s->err, sizeof(s->err), "the role may not"
		    " write the state tables (grants)");
	return rw && granted ? STORE_OK : STORE_IO;
}

enum store_status
store_check_writable(struct store *s)
{
	enum store_status	rc;

	if ((rc = store_begin(s)) != STORE_OK)
		return rc;
	rc = writes_allowed(s);
	store_rollback(s);
	return rc;
}
