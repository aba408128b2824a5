/*
 * config/config.c: config.db, the trusted configuration: its schema and all of
 * its SQL, in SQLite's words and PostgreSQL's where they differ (its
 * schema there is db/pg_schema.c's), opening it, and the reads.  The admin
 * writes, which run these statements by their enum, are in
 * config/admin.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "base/text.h"
#include "base/util.h"
#include "config/config_int.h"
#include "db/pg_schema.h"
#include "provider/mapping.h"

/*
 * The schema's version, PRAGMA user_version (PostgreSQL's one row of
 * hookbox_config.schema_version).  2 made room for endpoints of kind
 * mapped, 3 for their authentication by a declared scheme (auth
 * 'scheme'), 4 for registrars (config/registrar.h); a file of an older
 * version is opened by no one (CONFIG_OLD) until config_upgrade() has
 * upgraded it.
 */
#define CONFIG_VERSION	CONFIG_SCHEMA_VERSION
_Static_assert(CONFIG_VERSION == PG_SCHEMA_CONFIG_VERSION,
    "config.db and hookbox_config are of one version");

#define HEADER_CHARS	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
			"0123456789-_"

/*
 * Added to files that lack them by the first writer to open them.  The
 * schema's version stays 1: the previous release still reads and writes
 * such a file (its statements name their columns; its adds take the
 * column's default), and this one reads a file that lacks the column.
 */
#define DEST_ALLOW_COL_LITE \
	"ALTER TABLE destinations ADD COLUMN allow_internal INTEGER NOT NULL" \
	" DEFAULT 0"
#define DEST_ALLOW_COL_PG \
	"ALTER TABLE hookbox_config.destinations ADD COLUMN IF NOT EXISTS" \
	" allow_internal bigint NOT NULL DEFAULT 0"
#define JOBS_ACTION_INDEX \
	"CREATE INDEX IF NOT EXISTS jobs_action ON jobs(tenant, attempt, step," \
	" job_id)"

/*
 * The configuration's version (config/cache.h): one row, bumped in the
 * writing transaction by every change to the tables a reader's snapshot
 * holds, by triggers, so that every writer bumps it: this tool, the
 * previous release's, plain SQL.  SQLite has only row triggers: a
 * statement that changes n rows bumps it n times, and one that changes
 * none leaves it.  Jobs and destinations are read afresh by every look-up
 * and have none: a job import does not make every reader load its
 * snapshot again.  It starts at a random number below 2^48, so that a
 * file made again or restored from another is not taken for the one a
 * snapshot was read from because its count is the same.  Made with a new
 * file, and added to an older one by its first writer (add_version()):
 * the schema's version stays 1, for the previous release.
 */
#define VERSION_BUMP_LITE(t, ev) \
	"CREATE TRIGGER IF NOT EXISTS " t "_version_" ev " AFTER " ev " ON " \
	t " BEGIN UPDATE config_version SET version = version + 1; END;"
#define VERSION_BUMPS_LITE(t) \
	VERSION_BUMP_LITE(t, "insert") VERSION_BUMP_LITE(t, "update") \
	VERSION_BUMP_LITE(t, "delete")
#define VERSION_TABLE_LITE \
	"CREATE TABLE IF NOT EXISTS config_version(" \
	" one INTEGER PRIMARY KEY CHECK(one = 1)," \
	" version INTEGER NOT NULL);" \
	"INSERT OR IGNORE INTO config_version(one, version)" \
	" VALUES (1, abs(random() % 281474976710656));" \
	VERSION_BUMPS_LITE("tenants") VERSION_BUMPS_LITE("endpoints") \
	VERSION_BUMPS_LITE("secrets")
/* The triggers' names, for the readers' look at them (CONFIG_Q_VERSIONED). */
#define VERSION_NAMES_LITE(t) \
	"'" t "_version_insert', '" t "_version_update', '" t "_version_delete'"

/*
 * The endpoints, made by a new file and by the upgrades from version 1
 * (which had no mapping, and allowed only the tornado kinds) and 2
 * (which had no auth 'scheme'): a mapping for kind mapped, and for it
 * alone.  db/pg_schema.c says the same to PostgreSQL.
 */
#define ENDPOINTS_TABLE_LITE(t) \
	"CREATE TABLE " t "(" \
	" name TEXT PRIMARY KEY," \
	" tenant TEXT NOT NULL REFERENCES tenants(id)," \
	" kind TEXT NOT NULL," \
	" auth TEXT NOT NULL CHECK(auth IN ('hmac','key','standard'," \
	" 'scheme'))," \
	" key_header TEXT," \
	" tolerance_s INTEGER NOT NULL DEFAULT 300 CHECK(tolerance_s > 0)," \
	" created_at INTEGER NOT NULL," \
	" mapping TEXT," \
	" CONSTRAINT endpoints_kind_check CHECK(kind IN" \
	" ('tornado-job','tornado-org','mapped'))," \
	" CONSTRAINT endpoints_mapping_check CHECK((kind = 'mapped') =" \
	" (mapping IS NOT NULL)));"

/*
 * Version 1 to 2, in the writer's transaction, its connection's foreign
 * keys off (a CHECK is not altered in SQLite: the table is made again, as
 * https://sqlite.org/lang_altertable.html says, and the secrets that
 * refer to it by name refer to the new one).  Its rows are copied, not
 * changed: nothing a snapshot holds changes, and the version is not
 * bumped.  Dropped with the old table, its version triggers are made
 * again (with the version's table, for a file that had none).
 */
#define MIGRATE_V2_LITE \
	ENDPOINTS_TABLE_LITE("endpoints_v2") \
	"INSERT INTO endpoints_v2(name, tenant, kind, auth, key_header," \
	" tolerance_s, created_at) SELECT name, tenant, kind, auth," \
	" key_header, tolerance_s, created_at FROM endpoints;" \
	"DROP TABLE endpoints;" \
	"ALTER TABLE endpoints_v2 RENAME TO endpoints;" \
	VERSION_TABLE_LITE \
	"PRAGMA user_version=2;"

/*
 * Version 2 to 3: the table made again under its own name, its rows
 * copied, so that its text is a new file's (a table renamed to its name
 * is written "endpoints", quoted).  The old one is renamed aside first,
 * the secrets' reference to "endpoints" left as it is
 * (legacy_alter_table), so that it names the new one.
 */
#define MIGRATE_V3_LITE \
	"PRAGMA legacy_alter_table=ON;" \
	"ALTER TABLE endpoints RENAME TO endpoints_v2;" \
	ENDPOINTS_TABLE_LITE("endpoints") \
	"INSERT INTO endpoints(name, tenant, kind, auth, key_header," \
	" tolerance_s, created_at, mapping) SELECT name, tenant, kind, auth," \
	" key_header, tolerance_s, created_at, mapping FROM endpoints_v2;" \
	"DROP TABLE endpoints_v2;" \
	"PRAGMA legacy_alter_table=OFF;" \
	VERSION_TABLE_LITE \
	"PRAGMA user_version=3;"

/*
 * The registrars (config/registrar.h): a user, and one of the tenants
 * whose jobs it may register; a removed tenant takes its rows along.
 * db/pg_schema.c says the same to PostgreSQL.
 */
#define REGISTRARS_TABLE_LITE \
	"CREATE TABLE registrars(" \
	" name TEXT NOT NULL," \
	" tenant TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE," \
	" created_at INTEGER NOT NULL," \
	" PRIMARY KEY(name, tenant));"

/* Version 3 to 4: the registrars. */
#define MIGRATE_V4_LITE \
	REGISTRARS_TABLE_LITE \
	"PRAGMA user_version=4;"

/*
 * Version 4 to 5: a destination's delivery policy (hookbox(1), OUTAGES
 * AND LIMITS): how long its actions are retried, its circuit, its
 * limits, and max_attempts that may be NULL (none: the horizon alone).
 * SQLite cannot drop a NOT NULL: the table is made again, under its own
 * name (the jobs' reference to it left as it is, legacy_alter_table), its
 * rows copied with their max_attempts, which keep their meaning.  A file
 * made before allow_internal has it added first (migrate()).
 */
#define DEST_POLICY_COLS \
	" retry_for_s INTEGER NOT NULL DEFAULT " \
	HB_STR(HB_RETRY_FOR_S_DEFAULT) " CHECK(retry_for_s > 0)," \
	" max_in_flight INTEGER CHECK(max_in_flight > 0)," \
	" rate INTEGER CHECK(rate > 0)," \
	" circuit_failures INTEGER NOT NULL DEFAULT " \
	HB_STR(HB_CIRCUIT_FAILURES_DEFAULT) \
	" CHECK(circuit_failures >= 0)," \
	" cooldown_s INTEGER NOT NULL DEFAULT " \
	HB_STR(HB_COOLDOWN_S_DEFAULT) " CHECK(cooldown_s > 0),"
#define DESTINATIONS_TABLE_LITE \
	"CREATE TABLE destinations(" \
	" tenant TEXT NOT NULL REFERENCES tenants(id)," \
	" name TEXT NOT NULL," \
	" url TEXT NOT NULL," \
	" idempotent INTEGER NOT NULL DEFAULT 0," \
	" status_url TEXT," \
	" secret BLOB," \
	" timeout_ms INTEGER NOT NULL CHECK(timeout_ms > 0)," \
	" max_attempts INTEGER CHECK(max_attempts > 0)," \
	" created_at INTEGER NOT NULL," \
	" allow_internal INTEGER NOT NULL DEFAULT 0," \
	DEST_POLICY_COLS \
	" PRIMARY KEY(tenant, name));"
#define MIGRATE_V5_LITE \
	"PRAGMA legacy_alter_table=ON;" \
	"ALTER TABLE destinations RENAME TO destinations_v4;" \
	DESTINATIONS_TABLE_LITE \
	"INSERT INTO destinations(tenant, name, url, idempotent, status_url," \
	" secret, timeout_ms, max_attempts, created_at, allow_internal)" \
	" SELECT tenant, name, url, idempotent, status_url, secret," \
	" timeout_ms, max_attempts, created_at, allow_internal" \
	" FROM destinations_v4;" \
	"DROP TABLE destinations_v4;" \
	"PRAGMA legacy_alter_table=OFF;" \
	"PRAGMA user_version=5;"

const char config_schema[] =
	"PRAGMA journal_mode=DELETE;"
	"BEGIN;"
	"CREATE TABLE tenants("
	" id TEXT PRIMARY KEY,"
	" active INTEGER NOT NULL DEFAULT 1,"
	" status_base TEXT,"
	" api_key BLOB,"
	" created_at INTEGER NOT NULL);"
	ENDPOINTS_TABLE_LITE("endpoints")
	"CREATE TABLE secrets("
	" id INTEGER PRIMARY KEY,"
	" endpoint TEXT NOT NULL REFERENCES endpoints(name) ON DELETE CASCADE,"
	" secret BLOB NOT NULL,"
	" expires_at INTEGER,"
	" created_at INTEGER NOT NULL);"
	"CREATE INDEX secrets_endpoint ON secrets(endpoint);"
	DESTINATIONS_TABLE_LITE
	"CREATE TABLE jobs("
	" tenant TEXT NOT NULL REFERENCES tenants(id),"
	" job_id TEXT NOT NULL,"
	" attempt TEXT NOT NULL,"
	" step TEXT NOT NULL,"
	" destination TEXT NOT NULL,"
	" source_url TEXT,"
	" output TEXT,"
	" created_at INTEGER NOT NULL,"
	" PRIMARY KEY(tenant, job_id),"
	" FOREIGN KEY(tenant, destination) REFERENCES destinations(tenant, name));"
	JOBS_ACTION_INDEX ";"
	REGISTRARS_TABLE_LITE
	VERSION_TABLE_LITE
	"PRAGMA user_version=" HB_STR(CONFIG_VERSION) ";"
	"COMMIT;";

#define TENANT_ADD	"INSERT INTO tenants(id, active, status_base," \
	" api_key, created_at) VALUES (?1, ?2, ?3, ?4, ?5)"
#define ENDPOINT_ADD	"INSERT INTO endpoints(name, tenant, kind, auth," \
	" key_header, tolerance_s, created_at, mapping)" \
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
#define DEST_ADD	"INSERT INTO destinations(tenant, name, url," \
	" idempotent, status_url, allow_internal, secret, timeout_ms," \
	" max_attempts, created_at, retry_for_s, max_in_flight, rate," \
	" circuit_failures, cooldown_s)" \
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13," \
	" ?14, ?15)"
/* ai: the column allow_internal, or what stands for it in an older file. */
#define DEST_POLICY_JSON \
	" 'retry_for_s', retry_for_s, 'max_in_flight', max_in_flight," \
	" 'rate', rate, 'circuit_failures', circuit_failures," \
	" 'cooldown_s', cooldown_s,"
#define DEST_GET(ai)	"SELECT tenant, name, url, idempotent, status_url," \
	" timeout_ms, max_attempts, " ai ", retry_for_s, max_in_flight," \
	" rate, circuit_failures, cooldown_s FROM destinations" \
	" WHERE tenant = ?1 AND name = ?2"
#define DEST_LIST_LITE(ai) \
	"SELECT json_object('tenant', tenant, 'name', name," \
	" 'url', url, 'idempotent', json(iif(idempotent, 'true', 'false'))," \
	" 'status_url', status_url," \
	" 'signed', json(iif(secret IS NULL, 'false', 'true'))," \
	" 'allow_internal', json(" ai ")," \
	" 'timeout_ms', timeout_ms, 'max_attempts', max_attempts," \
	DEST_POLICY_JSON \
	" 'created_at', created_at * 1000) FROM destinations" \
	" WHERE (?1 IS NULL OR tenant = ?1) AND created_at * 1000 >= ?2" \
	" ORDER BY tenant, name LIMIT ?3"
#define DEST_LIST_PG(ai) \
	"SELECT json_build_object('tenant', tenant, 'name', name," \
	" 'url', url, 'idempotent', idempotent <> 0," \
	" 'status_url', status_url, 'signed', secret IS NOT NULL," \
	" 'allow_internal', " ai "," \
	" 'timeout_ms', timeout_ms, 'max_attempts', max_attempts," \
	DEST_POLICY_JSON \
	" 'created_at', created_at * 1000) FROM destinations" \
	" WHERE (?1::text IS NULL OR tenant = ?1)" \
	" AND created_at * 1000 >= ?2" \
	" ORDER BY tenant COLLATE \"C\", name COLLATE \"C\"" \
	" LIMIT NULLIF(?3::bigint, -1)"
#define JOB_ADD		"INSERT INTO jobs(tenant, job_id, attempt, step," \
	" destination, source_url, output, created_at)" \
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"

/*
 * The texts PostgreSQL runs where the dialects differ: booleans are
 * written from the integer columns, a NULL parameter needs its type, "no
 * limit" is LIMIT NULL, and text is ordered byte by byte as SQLite's
 * BINARY collation does, whatever the database's locale.
 */
const struct db_text config_text[CONFIG_Q__N] = {
	[CONFIG_Q_TENANT_GET] = { "SELECT id, active, status_base FROM tenants"
	    " WHERE id = ?1" },
	/* Column 6, the mapping: config_row_endpoint() checks it is there
	   for kind mapped alone; config/map.c and the cache read it. */
	[CONFIG_Q_ENDPOINT_GET] =
	    { "SELECT name, tenant, kind, auth, key_header,"
	    " tolerance_s, mapping FROM endpoints WHERE name = ?1" },
	[CONFIG_Q_JOB_GET] =
	    { "SELECT tenant, job_id, attempt, step, destination,"
	    " source_url, output FROM jobs WHERE tenant = ?1 AND job_id = ?2" },
	[CONFIG_Q_DEST_GET] = { DEST_GET("allow_internal") },
	/* At most CONFIG_SECRETS_MAX + 1 rows. */
	[CONFIG_Q_SECRETS] = { "SELECT secret, id FROM secrets"
	    " WHERE endpoint = ?1 AND (expires_at IS NULL OR expires_at > ?2)"
	    " ORDER BY id DESC LIMIT 9" },
	[CONFIG_Q_SECRET_COUNT] =
	    { "SELECT count(*) FROM secrets WHERE endpoint = ?1"
	    " AND (expires_at IS NULL OR expires_at > ?2)" },
	[CONFIG_Q_DEST_SECRET] = { "SELECT secret FROM destinations"
	    " WHERE tenant = ?1 AND name = ?2 AND secret IS NOT NULL" },
	[CONFIG_Q_TENANT_KEY] = { "SELECT api_key FROM tenants"
	    " WHERE id = ?1 AND api_key IS NOT NULL" },
	/*
	 * A row whose key is taken fails its add alone (config_write()):
	 * the caller's CONFIG_EXISTS, the transaction around it kept.
	 */
	[CONFIG_Q_TENANT_ADD] = { TENANT_ADD },
	[CONFIG_Q_ENDPOINT_ADD] = { ENDPOINT_ADD },
	[CONFIG_Q_SECRET_ADD] =
	    { "INSERT INTO secrets(endpoint, secret, expires_at,"
	    " created_at) VALUES (?1, ?2, ?3, ?4)" },
	[CONFIG_Q_DEST_ADD] = { DEST_ADD },
	[CONFIG_Q_JOB_ADD] = { JOB_ADD },
	[CONFIG_Q_TENANT_DEL] = { "DELETE FROM tenants WHERE id = ?1" },
	[CONFIG_Q_ENDPOINT_DEL] = { "DELETE FROM endpoints WHERE name = ?1" },
	[CONFIG_Q_DEST_DEL] = { "DELETE FROM destinations WHERE tenant = ?1"
	    " AND name = ?2" },
	[CONFIG_Q_JOB_DEL] =
	    { "DELETE FROM jobs WHERE tenant = ?1 AND job_id = ?2" },
	/*
	 * The lists: ?1 a tenant or NULL for all, ?2 the earliest creation
	 * in unix ms, ?3 the most rows (-1: all).  Their times are unix ms,
	 * like every time the tool prints as JSON.
	 */
	[CONFIG_Q_TENANT_LIST] = { "SELECT json_object('id', id, 'active',"
	    " json(iif(active, 'true', 'false')),"
	    " 'status_base', status_base,"
	    " 'api_key', json(iif(api_key IS NULL, 'false', 'true')),"
	    " 'created_at', created_at * 1000) FROM tenants"
	    " WHERE (?1 IS NULL OR id = ?1) AND created_at * 1000 >= ?2"
	    " ORDER BY id LIMIT ?3",
	    "SELECT json_build_object('id', id, 'active', active <> 0,"
	    " 'status_base', status_base, 'api_key', api_key IS NOT NULL,"
	    " 'created_at', created_at * 1000) FROM tenants"
	    " WHERE (?1::text IS NULL OR id = ?1) AND created_at * 1000 >= ?2"
	    " ORDER BY id COLLATE \"C\" LIMIT NULLIF(?3::bigint, -1)" },
	[CONFIG_Q_ENDPOINT_LIST] =
	    { "SELECT json_object('name', name, 'tenant',"
	    " tenant, 'kind', kind, 'auth', auth, 'key_header', key_header,"
	    " 'tolerance_s', tolerance_s, 'secrets', (SELECT count(*) FROM"
	    " secrets s WHERE s.endpoint = e.name AND (s.expires_at IS NULL"
	    " OR s.expires_at > unixepoch())), 'created_at', created_at * 1000,"
	    " 'mapping', mapping) FROM endpoints e"
	    " WHERE (?1 IS NULL OR tenant = ?1) AND created_at * 1000 >= ?2"
	    " ORDER BY name LIMIT ?3",
	    "SELECT json_build_object('name', name, 'tenant',"
	    " tenant, 'kind', kind, 'auth', auth, 'key_header', key_header,"
	    " 'tolerance_s', tolerance_s, 'secrets', (SELECT count(*) FROM"
	    " secrets s WHERE s.endpoint = e.name AND (s.expires_at IS NULL"
	    " OR s.expires_at > floor(extract(epoch FROM now()))::bigint)),"
	    " 'created_at', created_at * 1000, 'mapping', mapping)"
	    " FROM endpoints e"
	    " WHERE (?1::text IS NULL OR tenant = ?1)"
	    " AND created_at * 1000 >= ?2"
	    " ORDER BY name COLLATE \"C\" LIMIT NULLIF(?3::bigint, -1)" },
	[CONFIG_Q_DEST_LIST] = {
	    DEST_LIST_LITE("iif(allow_internal, 'true', 'false')"),
	    DEST_LIST_PG("allow_internal <> 0") },
	/* ?4: a registrar, whose tenants' alone (config/registrar.h). */
	[CONFIG_Q_JOB_LIST] =
	    { "SELECT json_object('tenant', tenant, 'job_id', job_id,"
	    " 'attempt', attempt, 'step', step, 'destination', destination,"
	    " 'source_url', source_url, 'output', output, 'created_at',"
	    " created_at * 1000) FROM jobs"
	    " WHERE (?1 IS NULL OR tenant = ?1) AND created_at * 1000 >= ?2"
	    " AND (?4 IS NULL OR tenant IN (SELECT tenant FROM registrars"
	    " WHERE name = ?4))"
	    " ORDER BY tenant, job_id LIMIT ?3",
	    "SELECT json_build_object('tenant', tenant, 'job_id', job_id,"
	    " 'attempt', attempt, 'step', step, 'destination', destination,"
	    " 'source_url', source_url, 'output', output, 'created_at',"
	    " created_at * 1000) FROM jobs"
	    " WHERE (?1::text IS NULL OR tenant = ?1)"
	    " AND created_at * 1000 >= ?2"
	    " AND (?4::text IS NULL OR tenant IN (SELECT tenant FROM registrars"
	    " WHERE name = ?4))"
	    " ORDER BY tenant COLLATE \"C\", job_id COLLATE \"C\""
	    " LIMIT NULLIF(?3::bigint, -1)" },
	[CONFIG_Q_POLLABLE] = { "SELECT j.tenant, j.job_id, j.attempt, j.step,"
	    " j.destination, j.source_url, j.output, t.status_base"
	    " FROM jobs j JOIN tenants t ON t.id = j.tenant"
	    " WHERE t.active AND t.status_base IS NOT NULL"
	    " ORDER BY j.created_at, j.tenant, j.job_id",
	    "SELECT j.tenant, j.job_id, j.attempt, j.step,"
	    " j.destination, j.source_url, j.output, t.status_base"
	    " FROM jobs j JOIN tenants t ON t.id = j.tenant"
	    " WHERE t.active <> 0 AND t.status_base IS NOT NULL"
	    " ORDER BY j.created_at, j.tenant COLLATE \"C\","
	    " j.job_id COLLATE \"C\"" },
	[CONFIG_Q_TENANT_SET] = { "UPDATE tenants SET active = ?2,"
	    " status_base = ?3 WHERE id = ?1" },
	[CONFIG_Q_TENANT_SET_KEY] = { "UPDATE tenants SET api_key = ?2"
	    " WHERE id = ?1" },
	[CONFIG_Q_ENDPOINT_SET] = { "UPDATE endpoints SET key_header = ?2,"
	    " tolerance_s = ?3 WHERE name = ?1" },
	[CONFIG_Q_DEST_SET] = { "UPDATE destinations SET url = ?3,"
	    " idempotent = ?4, status_url = ?5, allow_internal = ?6,"
	    " timeout_ms = ?7, max_attempts = ?8, retry_for_s = ?9,"
	    " max_in_flight = ?10, rate = ?11, circuit_failures = ?12,"
	    " cooldown_s = ?13 WHERE tenant = ?1 AND name = ?2" },
	[CONFIG_Q_DEST_SET_SECRET] = { "UPDATE destinations SET secret = ?3"
	    " WHERE tenant = ?1 AND name = ?2" },
	[CONFIG_Q_SECRET_LIST] = { "SELECT id, created_at, expires_at"
	    " FROM secrets WHERE endpoint = ?1 ORDER BY id" },
	[CONFIG_Q_SECRET_DEL] =
	    { "DELETE FROM secrets WHERE endpoint = ?1 AND id = ?2" },
	/* Retiring never lengthens a secret's life. */
	[CONFIG_Q_SECRET_RETIRE] = { "UPDATE secrets SET expires_at = ?2"
	    " WHERE endpoint = ?1 AND (expires_at IS NULL OR expires_at > ?2)" },
	[CONFIG_Q_TENANT_REFERRER] =
	    { "SELECT 'endpoint', name FROM endpoints WHERE tenant = ?1"
	    " UNION ALL SELECT 'destination', name FROM destinations"
	    " WHERE tenant = ?1"
	    " UNION ALL SELECT 'job', job_id FROM jobs WHERE tenant = ?1"
	    " LIMIT 1" },
	[CONFIG_Q_DEST_REFERRER] = { "SELECT 'job', job_id FROM jobs"
	    " WHERE tenant = ?1 AND destination = ?2 ORDER BY job_id LIMIT 1",
	    "SELECT 'job', job_id FROM jobs WHERE tenant = ?1"
	    " AND destination = ?2 ORDER BY job_id COLLATE \"C\" LIMIT 1" },
	[CONFIG_Q_JOB_OF_ACTION] = { "SELECT job_id FROM jobs WHERE tenant = ?1"
	    " AND attempt = ?2 AND step = ?3 ORDER BY job_id LIMIT 1",
	    "SELECT job_id FROM jobs WHERE tenant = ?1 AND attempt = ?2"
	    " AND step = ?3 ORDER BY job_id COLLATE \"C\" LIMIT 1" },
	[CONFIG_Q_VERSION] = { "PRAGMA user_version",
	    "SELECT version FROM hookbox_config.schema_version" },
	/* Is the schema there (config_create())? */
	[CONFIG_Q_SCHEMA] = { "SELECT count(*) FROM sqlite_master"
	    " WHERE type = 'table' AND name = 'tenants'",
	    "SELECT count(*) FROM pg_namespace"
	    " WHERE nspname = 'hookbox_config'" },
	/* A reader's: PostgreSQL's snapshot is the transaction's. */
	[CONFIG_Q_SNAPSHOT] = { "BEGIN",
	    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" },
	/*
	 * A writer's: one at a time on SQLite.  PostgreSQL's admins may run
	 * together: serializable, a check then a write (the count of an
	 * endpoint's secrets, a job's action) that another admin's commit
	 * would make wrong fails instead (CONFIG_BUSY, a retry).
	 */
	[CONFIG_Q_BEGIN] = { "BEGIN IMMEDIATE",
	    "BEGIN ISOLATION LEVEL SERIALIZABLE" },
	[CONFIG_Q_DEST_ALLOW_COL] = { "SELECT count(*)"
	    " FROM pragma_table_info('destinations')"
	    " WHERE name = 'allow_internal'",
	    "SELECT count(*) FROM pg_attribute"
	    " WHERE attrelid = to_regclass('hookbox_config.destinations')"
	    " AND attname = 'allow_internal' AND NOT attisdropped" },
	[CONFIG_Q_DEST_GET_OLD] = { DEST_GET("0") },
	[CONFIG_Q_DEST_LIST_OLD] = { DEST_LIST_LITE("'false'"),
	    DEST_LIST_PG("false") },
	/*
	 * 1 when the version is there and kept: its table, and a trigger on
	 * each table a snapshot holds (enabled, on PostgreSQL).
	 */
	[CONFIG_Q_VERSIONED] = { "SELECT (SELECT count(*) FROM sqlite_master"
	    " WHERE type = 'table' AND name = 'config_version') +"
	    " (SELECT count(*) FROM sqlite_master WHERE type = 'trigger'"
	    " AND name IN (" VERSION_NAMES_LITE("tenants") ", "
	    VERSION_NAMES_LITE("endpoints") ", " VERSION_NAMES_LITE("secrets")
	    ")) = 10",
	    "SELECT ((SELECT count(*) FROM pg_class"
	    " WHERE oid = to_regclass('hookbox_config.config_version')) +"
	    " (SELECT count(*) FROM pg_trigger"
	    " WHERE tgname = 'config_version_bump' AND tgenabled <> 'D'"
	    " AND tgrelid IN (to_regclass('hookbox_config.tenants'),"
	    " to_regclass('hookbox_config.endpoints'),"
	    " to_regclass('hookbox_config.secrets'))) = 4)::int" },
	[CONFIG_Q_REGISTRAR_ADD] = { "INSERT INTO registrars(name, tenant,"
	    " created_at) VALUES (?1, ?2, ?3)" },
	[CONFIG_Q_REGISTRAR_DEL] = { "DELETE FROM registrars WHERE name = ?1"
	    " AND (?2 IS NULL OR tenant = ?2)",
	    "DELETE FROM registrars WHERE name = ?1"
	    " AND (?2::text IS NULL OR tenant = ?2)" },
	[CONFIG_Q_REGISTRAR_HAS] = { "SELECT count(*) FROM registrars"
	    " WHERE name = ?1 AND (?2 IS NULL OR tenant = ?2)",
	    "SELECT count(*) FROM registrars"
	    " WHERE name = ?1 AND (?2::text IS NULL OR tenant = ?2)" },
	/* The lists' parameters (above); ?1 a tenant. */
	[CONFIG_Q_REGISTRAR_LIST] = { "SELECT json_object('name', name,"
	    " 'tenant', tenant, 'created_at', created_at * 1000)"
	    " FROM registrars"
	    " WHERE (?1 IS NULL OR tenant = ?1) AND created_at * 1000 >= ?2"
	    " ORDER BY name, tenant LIMIT ?3",
	    "SELECT json_build_object('name', name,"
	    " 'tenant', tenant, 'created_at', created_at * 1000)"
	    " FROM registrars"
	    " WHERE (?1::text IS NULL OR tenant = ?1)"
	    " AND created_at * 1000 >= ?2"
	    " ORDER BY name COLLATE \"C\", tenant COLLATE \"C\""
	    " LIMIT NULLIF(?3::bigint, -1)" },
	[CONFIG_Q_CACHE_VERSION] = { "SELECT version FROM config_version" },
	/* The columns of CONFIG_Q_ENDPOINT_GET and CONFIG_Q_TENANT_GET. */
	[CONFIG_Q_CACHE_ENDPOINTS] = { "SELECT name, tenant, kind, auth,"
	    " key_header, tolerance_s, mapping FROM endpoints" },
	/* Each endpoint's together, newest first. */
	[CONFIG_Q_CACHE_SECRETS] = { "SELECT endpoint, secret, expires_at, id"
	    " FROM secrets ORDER BY endpoint, id DESC" },
	[CONFIG_Q_CACHE_SECRETS_OF] = { "SELECT endpoint, secret, expires_at,"
	    " id FROM secrets WHERE endpoint = ?1 ORDER BY id DESC" },
	[CONFIG_Q_CACHE_TENANTS] = { "SELECT id, active, status_base"
	    " FROM tenants" },
	/*
	 * A request's one statement: the version, and the job's columns
	 * (those of CONFIG_Q_JOB_GET) or NULLs when there is no such job.
	 * One statement is one snapshot: the job is as of that version.
	 */
	[CONFIG_Q_CACHE_JOB] = { "SELECT v.version, j.tenant, j.job_id,"
	    " j.attempt, j.step, j.destination, j.source_url, j.output"
	    " FROM config_version v LEFT JOIN jobs j"
	    " ON j.tenant = ?1 AND j.job_id = ?2" },
	/*
	 * A batch's (config_cache_jobs()): [[tenant, job], ...].  On
	 * PostgreSQL each key's job is read through the jobs' key, as
	 * store/store.c's look-ups are (LOOK_BY_KEY there says why).
	 */
	[CONFIG_Q_CACHE_JOBS] = { "SELECT v.version, k.t, k.j, j.tenant,"
	    " j.job_id, j.attempt, j.step, j.destination, j.source_url, j.output"
	    " FROM (SELECT json_extract(value, '$[0]') AS t,"
	    " json_extract(value, '$[1]') AS j FROM json_each(?1)) k"
	    " CROSS JOIN config_version v"
	    " LEFT JOIN jobs j ON j.tenant = k.t AND j.job_id = k.j",
	    "SELECT (SELECT version FROM config_version), k.t, k.j, j.tenant,"
	    " j.job_id, j.attempt, j.step, j.destination, j.source_url, j.output"
	    " FROM (SELECT k->>0 AS t, k->>1 AS j"
	    " FROM json_array_elements(?1::json) k) k LEFT JOIN LATERAL"
	    " (SELECT tenant, job_id, attempt, step, destination, source_url,"
	    " output FROM jobs WHERE tenant = k.t AND job_id = k.j LIMIT 1) j"
	    " ON true" },
	/* config/map.c's. */
	[CONFIG_Q_ENDPOINT_SET_MAPPING] = { "UPDATE endpoints SET mapping = ?2,"
	    " auth = ?3, key_header = CASE WHEN ?3 = 'scheme' THEN NULL ELSE"
	    " key_header END WHERE name = ?1 AND kind = 'mapped'" },
	[CONFIG_Q_MAPPED_OF_TENANT] = { "SELECT name, mapping FROM endpoints"
	    " WHERE tenant = ?1 AND kind = 'mapped' ORDER BY name",
	    "SELECT name, mapping FROM endpoints WHERE tenant = ?1"
	    " AND kind = 'mapped' ORDER BY name COLLATE \"C\"" },
};

const char *const config_kind_names[CONFIG_KIND_N] = {
	[CONFIG_KIND_JOB] = "tornado-job", [CONFIG_KIND_ORG] = "tornado-org",
	[CONFIG_KIND_MAPPED] = "mapped",
};
const char *const config_auth_names[CONFIG_AUTH_N] = {
	[CONFIG_AUTH_HMAC] = "hmac", [CONFIG_AUTH_KEY] = "key",
	[CONFIG_AUTH_STANDARD] = "standard", [CONFIG_AUTH_SCHEME] = "scheme",
};

const char *
config_strerror(enum config_status s)
{
	switch (s) {
	case CONFIG_OK:
		return "ok";
	case CONFIG_NOTFOUND:
		return "not found";
	case CONFIG_EXISTS:
		return "already exists";
	case CONFIG_INVALID:
		return "invalid value";
	case CONFIG_REFUSED:
		return "refused: still referenced, or refers to nothing";
	case CONFIG_BUSY:
		return "configuration database is busy or cannot be reached";
	case CONFIG_ERROR:
		return "configuration database error";
	case CONFIG_NOMEM:
		return "out of memory";
	case CONFIG_STALE:
		return "configuration changed since the snapshot";
	case CONFIG_OLD:
		return "configuration database of an older hookbox: run"
		    " `hookbox init` to upgrade it";
	case CONFIG_DENIED:
		return "permission denied to this user or role (a read-only"
		    " file or directory, or a missing grant)";
	}
	return "unknown error";
}

int
config_name_parse(const char *s, const char *const *names, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

enum config_status
config_status_of(const struct config *c, enum db_rc rc)
{
	switch (rc) {
	case DB_OK:
	case DB_DONE:
	case DB_ROW:
		return CONFIG_OK;
	case DB_BUSY:
	case DB_GONE:		/* a server out of reach: worth a retry */
		return CONFIG_BUSY;
	case DB_NOMEM:
		return CONFIG_NOMEM;
	case DB_CONSTRAINT:
		switch (c != NULL ? db_constraint(c->db) : DB_C_CHECK) {
		case DB_C_UNIQUE:
			return CONFIG_EXISTS;
		case DB_C_REFERENCE:
			return CONFIG_REFUSED;
		default:
			return CONFIG_INVALID;
		}
	case DB_DENIED:
		return CONFIG_DENIED;
	default:		/* a read-only database is no one's to write */
		return CONFIG_ERROR;
	}
}

enum config_status
config_last(const struct config *c)
{
	return config_status_of(c, db_last(c->db));
}

/*
 * What a handle narrowed to a registrar may prepare (config/registrar.h):
 * a job's look-up, add, list and removal, the reads they make, and the
 * transactions around them.
 */
static int
scope_allows(enum config_q q)
{
	switch (q) {
	case CONFIG_Q_JOB_GET:
	case CONFIG_Q_JOB_ADD:
	case CONFIG_Q_JOB_DEL:
	case CONFIG_Q_JOB_LIST:
	case CONFIG_Q_JOB_OF_ACTION:
	case CONFIG_Q_TENANT_GET:
	case CONFIG_Q_DEST_GET:
	case CONFIG_Q_DEST_GET_OLD:
	case CONFIG_Q_DEST_ALLOW_COL:
	case CONFIG_Q_REGISTRAR_HAS:
	case CONFIG_Q_VERSION:
	case CONFIG_Q_SNAPSHOT:
	case CONFIG_Q_BEGIN:
		return 1;
	default:
		return 0;
	}
}

struct db_stmt *
config_stmt(struct config *c, enum config_q q, enum config_status *rc)
{
	struct db_stmt	*st;

	*rc = CONFIG_OK;
	if (c->scoped && !scope_allows(q)) {
		*rc = CONFIG_DENIED;
		return NULL;
	}
	if ((st = db_stmt(c->db, q)) == NULL)
		*rc = config_last(c);
	return st;
}

enum config_status
config_write(struct config *c, struct db_stmt *st)
{
	enum db_rc	rc;

	return (rc = db_step_alone(st)) == DB_DONE ? CONFIG_OK :
	    config_status_of(c, rc);
}

/* A reader's page cache, in KiB (SQLite's default is 2000). */
#define CONFIG_READ_CACHE_KIB	256

/*
 * How config.db is opened: a server's connection finds the names in its
 * schemas, and a reader's transactions cannot write there (db/db.h); a
 * reader of a file looks up a few rows per request, and the kernel's
 * page cache holds the file already: a small cache of its own keeps a
 * process with several connections small.
 */
void
config_conf(struct db_conf *conf, int writable, int busy_ms)
{
	memset(conf, 0, sizeof(*conf));
	conf->flags = writable ? DB_OPEN_READWRITE : DB_OPEN_READONLY;
	conf->busy_ms = conf->connect_ms = busy_ms;
	conf->schemas = "hookbox_config,hookbox_state";
	conf->cache_kib = writable ? 0 : CONFIG_READ_CACHE_KIB;
}

enum config_status
config_scalar(struct config *c, enum config_q q, int64_t *v)
{
	struct db_stmt		*st;
	enum config_status	 rc;
	enum db_rc		 drc;

	if ((st = config_stmt(c, q, &rc)) == NULL)
		return rc;
	if ((drc = db_step(st)) != DB_ROW)
		return drc == DB_DONE ? CONFIG_ERROR : config_status_of(c, drc);
	*v = db_col_int64(st, 0);
	db_reset(st);
	return CONFIG_OK;
}

enum config_status
config_dest_q(struct config *c, enum config_q q, enum config_q old,
    enum config_q *out)
{
	enum config_status	rc;
	int64_t			n;

	*out = q;
	if (c->allow_col)
		return CONFIG_OK;
	if ((rc = config_scalar(c, CONFIG_Q_DEST_ALLOW_COL, &n)) != CONFIG_OK)
		return rc;
	c->allow_col = n > 0;
	if (!c->allow_col)
		*out = old;
	return CONFIG_OK;
}

/*
 * A writer's additions to a schema made before them (add_allow_col(),
 * add_version()), and config_upgrade(), are made one at a time where
 * writers work at once (db_begin()): any fixed keys.
 */
#define ADD_LOCK	INT64_C(7312455311853453102)
#define UPGRADE_LOCK	INT64_C(7312455311853453103)

/* The additions in each dialect ("": nothing to do there). */
static const struct db_text	allow_col_text = {
	DEST_ALLOW_COL_LITE, DEST_ALLOW_COL_PG
};
static const struct db_text	version_text = {
	VERSION_TABLE_LITE, pg_schema_config_version
};
/* A server's index is made with its schema. */
static const struct db_text	jobs_index_text = { JOBS_ACTION_INDEX, "" };
static const struct db_text	migrate_v2_text = {
	MIGRATE_V2_LITE, pg_schema_config_v2
};
static const struct db_text	migrate_v3_text = {
	MIGRATE_V3_LITE, pg_schema_config_v3
};
static const struct db_text	migrate_v4_text = {
	MIGRATE_V4_LITE, pg_schema_config_v4
};
static const struct db_text	migrate_v5_text = {
	MIGRATE_V5_LITE, pg_schema_config_v5
};

/*
 * A writer adds destinations.allow_internal to a database made before
 * it, in a transaction of its own that looks again under the lock
 * (another writer may have added it meanwhile).
 */
static enum config_status
add_allow_col(struct config *c)
{
	enum config_q		q;
	enum config_status	rc;

	if ((rc = config_dest_q(c, CONFIG_Q_DEST_GET, CONFIG_Q_DEST_GET_OLD,
	    &q)) != CONFIG_OK || c->allow_col)
		return rc;
	if ((rc = config_status_of(c, db_begin(c->db, DB_BEGIN_WRITE,
	    ADD_LOCK))) != CONFIG_OK)
		goto out;
	if ((rc = config_dest_q(c, CONFIG_Q_DEST_GET, CONFIG_Q_DEST_GET_OLD,
	    &q)) != CONFIG_OK)
		goto out;
	if (!c->allow_col && (rc = config_status_of(c, db_exec_text(c->db,
	    &allow_col_text))) != CONFIG_OK)
		goto out;
	rc = config_status_of(c, db_exec(c->db, "COMMIT"));
out:
	if (rc != CONFIG_OK && db_in_tx(c->db))
		(void)db_exec(c->db, "ROLLBACK");
	c->allow_col = rc == CONFIG_OK;
	return rc;
}

int
config_versioned(struct config *c, enum config_status *rc)
{
	int64_t	n;

	if ((*rc = config_scalar(c, CONFIG_Q_VERSIONED, &n)) != CONFIG_OK)
		return -1;
	return n == 1;
}

/*
 * A writer adds the version, its table and triggers, to a file made
 * before them, as add_allow_col() adds its column: in a transaction of
 * its own that looks again under the lock, the schema's version kept at
 * 1.  The previous release still reads such a file, and its writes bump
 * the version too: the triggers are the file's, not the program's.  On
 * PostgreSQL the serving roles are granted the new table as they were
 * granted the tenants.
 */
static enum config_status
add_version(struct config *c)
{
	enum config_status	rc = CONFIG_OK;
	int			n;

	if ((n = config_versioned(c, &rc)) != 0)
		return n > 0 ? CONFIG_OK : rc;
	if ((rc = config_status_of(c, db_begin(c->db, DB_BEGIN_WRITE,
	    ADD_LOCK))) != CONFIG_OK)
		goto out;
	if ((n = config_versioned(c, &rc)) < 0)
		goto out;
	if (n == 0 && (rc = config_status_of(c, db_exec_text(c->db,
	    &version_text))) != CONFIG_OK)
		goto out;
	rc = config_status_of(c, db_exec(c->db, "COMMIT"));
out:
	if (rc != CONFIG_OK && db_in_tx(c->db))
		(void)db_exec(c->db, "ROLLBACK");
	return rc;
}

/*
 * Opens path's database as config_open() does, up to its version, into
 * *out (freed with config_close(), NULL on failure) and *v; flags are
 * added to the connection's (DB_OPEN_FKEYS).
 */
static enum config_status
connect_db(const char *path, int writable, int flags, int busy_ms,
    struct config **out, int64_t *v)
{
	struct config		*c;
	struct db_conf		 conf;
	enum config_status	 rc = CONFIG_OK;
	enum db_rc		 drc;
	char			 why[256];

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return CONFIG_NOMEM;
	c->writable = writable;
	config_conf(&conf, writable, busy_ms);
	conf.flags |= flags;
	if ((drc = db_open(path, &conf, config_text, CONFIG_Q__N, &c->db, why,
	    sizeof(why))) != DB_OK) {
		rc = config_status_of(NULL, drc);
		goto out;
	}
	rc = config_scalar(c, CONFIG_Q_VERSION, v);
out:
	if (rc != CONFIG_OK)
		config_close(c);
	else
		*out = c;
	return rc;
}

enum config_status
config_open(const char *path, enum config_mode mode, int busy_ms,
    struct config **out)
{
	struct config		*c;
	enum config_status	 rc;
	int64_t			 v = 0;

	*out = NULL;
	/* A writer's foreign keys are enforced. */
	if ((rc = connect_db(path, mode == CONFIG_WRITE, mode == CONFIG_WRITE ?
	    DB_OPEN_FKEYS : 0, busy_ms, &c, &v)) != CONFIG_OK)
		return rc;
	/* An older schema is upgraded by config_upgrade() alone. */
	if (v != CONFIG_VERSION)
		rc = v >= 1 && v < CONFIG_VERSION ? CONFIG_OLD : CONFIG_ERROR;
	/*
	 * The tool's look-up of a job by its action (one job per tenant,
	 * attempt and step, checked at every add and import line).  Files
	 * made before it get it here; once there this takes no lock.
	 */
	if (rc == CONFIG_OK && c->writable)
		rc = config_status_of(c, db_exec_text(c->db,
		    &jobs_index_text));
	/* What a destination allows: the tool may write it from now on. */
	if (rc == CONFIG_OK && c->writable)
		rc = add_allow_col(c);
	/* The version every write bumps, for the readers' snapshots. */
	if (rc == CONFIG_OK && c->writable)
		rc = add_version(c);
	if (rc != CONFIG_OK)
		config_close(c);
	else
		*out = c;
	return rc;
}

/*
 * The upgrade itself, on a writer's connection whose schema was of
 * version *from, its foreign keys off (a table is made again): in a
 * transaction of its own that reads the version again under the lock
 * (another upgrade may have run meanwhile).
 */
static enum config_status
migrate(struct config *c, int64_t *from)
{
	enum config_status	rc;
	enum config_q		q;

	if ((rc = config_status_of(c, db_begin(c->db, DB_BEGIN_WRITE,
	    UPGRADE_LOCK))) != CONFIG_OK)
		goto out;
	if ((rc = config_scalar(c, CONFIG_Q_VERSION, from)) != CONFIG_OK)
		goto out;
	if (*from < 1 || *from > CONFIG_VERSION)
		rc = CONFIG_ERROR;
	if (rc == CONFIG_OK && *from == 1)
		rc = config_status_of(c, db_exec_text(c->db,
		    &migrate_v2_text));
	if (rc == CONFIG_OK && *from <= 2)
		rc = config_status_of(c, db_exec_text(c->db,
		    &migrate_v3_text));
	if (rc == CONFIG_OK && *from <= 3)
		rc = config_status_of(c, db_exec_text(c->db,
		    &migrate_v4_text));
	/* Version 5 copies allow_internal: a file made before has it added. */
	if (rc == CONFIG_OK && *from <= 4)
		rc = config_dest_q(c, CONFIG_Q_DEST_GET, CONFIG_Q_DEST_GET_OLD,
		    &q);
	if (rc == CONFIG_OK && *from <= 4 && !c->allow_col)
		rc = config_status_of(c, db_exec_text(c->db, &allow_col_text));
	if (rc == CONFIG_OK && *from <= 4)
		rc = config_status_of(c, db_exec_text(c->db,
		    &migrate_v5_text));
	if (rc == CONFIG_OK)
		rc = config_status_of(c, db_exec(c->db, "COMMIT"));
out:
	if (rc != CONFIG_OK && db_in_tx(c->db))
		(void)db_exec(c->db, "ROLLBACK");
	return rc;
}

enum config_status
config_upgrade(const char *path, int busy_ms, int *from)
{
	struct config		*c;
	enum config_status	 rc;
	int64_t			 v = 0;

	*from = 0;
	if ((rc = connect_db(path, 1, 0, busy_ms, &c, &v)) != CONFIG_OK)
		return rc;
	if (v < 1 || v > CONFIG_VERSION)
		rc = CONFIG_ERROR;
	else if (v != CONFIG_VERSION)
		rc = migrate(c, &v);
	config_close(c);
	if (rc != CONFIG_OK)
		return rc;
	*from = (int)v;
	/* What every writer adds to a file made before it, added now. */
	if ((rc = config_open(path, CONFIG_WRITE, busy_ms, &c)) == CONFIG_OK)
		config_close(c);
	return rc;
}

enum config_status
config_snapshot(struct config *c)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	if (c->in_snapshot)
		return CONFIG_OK;
	if ((st = config_stmt(c, CONFIG_Q_SNAPSHOT, &rc)) == NULL)
		return rc;
	if ((rc = config_status_of(c, db_step_done(st))) == CONFIG_OK)
		c->in_snapshot = 1;
	return rc;
}

void
config_release(struct config *c)
{
	if (c == NULL || !c->in_snapshot)
		return;
	/* A read transaction: COMMIT only drops the shared lock. */
	if (db_in_tx(c->db) && db_exec(c->db, "COMMIT") != DB_OK)
		(void)db_exec(c->db, "ROLLBACK");
	c->in_snapshot = 0;
}

int
config_same_file(const struct config *c)
{
	return db_same_file(c->db, NULL);
}

void
config_close(struct config *c)
{
	if (c == NULL)
		return;
	db_close(c->db);
	free(c);
}

/* Binds up to two text keys and steps once: CONFIG_OK means a row. */
static enum config_status
lookup(struct config *c, enum config_q q, const char *k1, const char *k2,
    struct db_stmt **out)
{
	struct db_stmt		*st;
	enum config_status	 status;
	enum db_rc		 rc;

	*out = NULL;
	if ((st = config_stmt(c, q, &status)) == NULL)
		return status;
	if (db_bind_opt(st, 1, k1) != DB_OK ||
	    (k2 != NULL && db_bind_opt(st, 2, k2) != DB_OK))
		return CONFIG_NOMEM;
	if ((rc = db_step(st)) == DB_DONE)
		return CONFIG_NOTFOUND;
	if (rc != DB_ROW)
		return config_status_of(c, rc);
	*out = st;
	return CONFIG_OK;
}

/*
 * Copies columns col.. into buffers; a value that does not fit is an
 * error.
 */
static enum config_status
copy_cols(struct db_stmt *st, int col, char *const *bufs, const size_t *lens,
    size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (bufs[i] != NULL && db_col_copy(st, col + (int)i, bufs[i],
		    lens[i]) != 0)
			return CONFIG_ERROR;
	return CONFIG_OK;
}

/* The validators (config/config_int.h), applied by the admin writes and again
   by every read. */

/* "" or an http(s) URL that can go into a request line. */
static int
valid_url(const char *u, int required)
{
	if (u[0] == '\0')
		return !required;
	return text_valid_line(u, HB_TEXT_MAX) &&
	    (strncasecmp(u, "http://", 7) == 0 ||
	    strncasecmp(u, "https://", 8) == 0);
}

const char *
config_tenant_invalid(const struct config_tenant *t)
{
	if (!text_valid_name(t->id))
		return "tenant id";
	if (!valid_url(t->status_base, 0))
		return "status base URL (http or https)";
	return NULL;
}

const char *
config_endpoint_invalid(const struct config_endpoint *e)
{
	if (!text_valid_name(e->name))
		return "endpoint name";
	if (!text_valid_name(e->tenant))
		return "tenant id";
	if ((unsigned)e->kind > CONFIG_KIND_MAPPED)
		return "kind (tornado-job, tornado-org or mapped)";
	if ((unsigned)e->auth > CONFIG_AUTH_SCHEME)
		return "auth (hmac, key, standard or scheme)";
	/* key: the header with the key; hmac: the signature header. */
	if ((e->auth == CONFIG_AUTH_KEY && e->key_header[0] == '\0') ||
	    strlen(e->key_header) > HB_ID_MAX ||
	    strspn(e->key_header, HEADER_CHARS) != strlen(e->key_header))
		return "header name (letters, digits, '-' and '_')";
	if (e->tolerance <= 0 || e->tolerance > 86400)
		return "tolerance (1..86400 seconds)";
	return NULL;
}

const char *
config_destination_invalid(const struct config_destination *d)
{
	if (!text_valid_name(d->tenant))
		return "tenant id";
	if (!text_valid_name(d->name))
		return "destination name";
	if (!valid_url(d->url, 1))
		return "destination URL (http or https)";
	if (!valid_url(d->status_url, 0))
		return "status URL (http or https)";
	if (d->timeout_ms <= 0 || d->max_attempts < 0)
		return "timeout and max attempts (must be positive)";
	if (d->retry_for_s <= 0 || d->max_in_flight < 0 || d->rate < 0 ||
	    d->circuit_failures < 0 || d->cooldown_s <= 0)
		return "retry horizon, limits and circuit (out of range)";
	return NULL;
}

const char *
config_job_invalid(const struct config_job *j)
{
	if (!text_valid_name(j->tenant))
		return "tenant id";
	if (!text_valid_id(j->job_id, HB_ID_MAX))
		return "job id";
	if (!text_valid_name(j->attempt))
		return "attempt";
	if (!text_valid_name(j->step))
		return "step";
	if (!text_valid_name(j->destination))
		return "destination";
	if (!text_valid(j->source_url, HB_TEXT_MAX))
		return "source URL";
	if (!text_valid(j->output, HB_TEXT_MAX))
		return "output settings";
	return NULL;
}

int
config_valid_api_key(const unsigned char *k, size_t len)
{
	size_t	i;

	if (len > CONFIG_SECRET_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (k[i] < 0x21 || k[i] > 0x7e)
			return 0;
	return 1;
}

enum config_status
config_row_tenant(struct db_stmt *st, struct config_tenant *t)
{
	memset(t, 0, sizeof(*t));
	if (db_col_copy(st, 0, t->id, sizeof(t->id)) != 0 ||
	    db_col_copy(st, 2, t->status_base, sizeof(t->status_base)) != 0)
		return CONFIG_ERROR;
	t->active = (int)db_col_int64(st, 1);
	return config_tenant_invalid(t) != NULL ? CONFIG_INVALID : CONFIG_OK;
}

enum config_status
config_row_endpoint(struct db_stmt *st, struct config_endpoint *e)
{
	const char	*kind, *auth;
	int		 k, a;

	memset(e, 0, sizeof(*e));
	kind = db_col_text(st, 2);
	auth = db_col_text(st, 3);
	if (db_col_copy(st, 0, e->name, sizeof(e->name)) != 0 ||
	    db_col_copy(st, 1, e->tenant, sizeof(e->tenant)) != 0 ||
	    db_col_copy(st, 4, e->key_header, sizeof(e->key_header)) != 0 ||
	    kind == NULL || (k = config_name_parse(kind, config_kind_names,
	    CONFIG_KIND_N)) < 0 ||
	    auth == NULL || (a = config_name_parse(auth, config_auth_names,
	    CONFIG_AUTH_N)) < 0)
		return CONFIG_ERROR;
	e->kind = (enum config_kind)k;
	e->auth = (enum config_auth)a;
	e->tolerance = db_col_int64(st, 5);
	/* A mapping for kind mapped, and for it alone. */
	if ((e->kind == CONFIG_KIND_MAPPED) == db_col_null(st, 6))
		return CONFIG_INVALID;
	return config_endpoint_invalid(e) != NULL ? CONFIG_INVALID : CONFIG_OK;
}

enum config_status
config_row_job(struct db_stmt *st, int col, struct config_job *j)
{
	char *const	bufs[] = { j->tenant, j->job_id, j->attempt, j->step,
	    j->destination, j->source_url, j->output };
	const size_t	lens[] = { sizeof(j->tenant), sizeof(j->job_id),
	    sizeof(j->attempt), sizeof(j->step), sizeof(j->destination),
	    sizeof(j->source_url), sizeof(j->output) };

	if (copy_cols(st, col, bufs, lens, 7) != CONFIG_OK)
		return CONFIG_ERROR;
	return config_job_invalid(j) != NULL ? CONFIG_INVALID : CONFIG_OK;
}

enum config_status
config_tenant_get(struct config *c, const char *id, struct config_tenant *t)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	if ((rc = lookup(c, CONFIG_Q_TENANT_GET, id, NULL, &st)) != CONFIG_OK)
		return rc;
	rc = config_row_tenant(st, t);
	db_reset(st);
	return rc;
}

enum config_status
config_endpoint_get(struct config *c, const char *name,
    struct config_endpoint *e)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	if ((rc = lookup(c, CONFIG_Q_ENDPOINT_GET, name, NULL, &st)) !=
	    CONFIG_OK)
		return rc;
	rc = config_row_endpoint(st, e);
	db_reset(st);
	return rc;
}

enum config_status
config_job_get(struct config *c, const char *tenant, const char *job_id,
    struct config_job *j)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	if ((rc = lookup(c, CONFIG_Q_JOB_GET, tenant, job_id, &st)) !=
	    CONFIG_OK)
		return rc;
	rc = config_row_job(st, 0, j);
	db_reset(st);
	return rc;
}

enum config_status
config_destination_get(struct config *c, const char *tenant,
    const char *name, struct config_destination *d)
{
	struct db_stmt		*st;
	enum config_status	 rc;
	enum config_q		 q;
	char *const		 bufs[] = { d->tenant, d->name, d->url, NULL,
	    d->status_url };
	const size_t		 lens[] = { sizeof(d->tenant), sizeof(d->name),
	    sizeof(d->url), 0, sizeof(d->status_url) };

	if ((rc = config_dest_q(c, CONFIG_Q_DEST_GET, CONFIG_Q_DEST_GET_OLD,
	    &q)) != CONFIG_OK ||
	    (rc = lookup(c, q, tenant, name, &st)) != CONFIG_OK)
		return rc;
	rc = copy_cols(st, 0, bufs, lens, 5);
	d->idempotent = (int)db_col_int64(st, 3);
	d->timeout_ms = (int)db_col_int64(st, 5);
	d->max_attempts = (int)db_col_int64(st, 6);	/* NULL: 0 */
	d->allow_internal = db_col_int64(st, 7) != 0;
	d->retry_for_s = db_col_int64(st, 8);
	d->max_in_flight = (int)db_col_int64(st, 9);
	d->rate = (int)db_col_int64(st, 10);
	d->circuit_failures = (int)db_col_int64(st, 11);
	d->cooldown_s = db_col_int64(st, 12);
	db_reset(st);
	if (rc == CONFIG_OK && config_destination_invalid(d) != NULL)
		rc = CONFIG_INVALID;
	return rc;
}

void
config_secrets_clear(struct config_secrets *s)
{
	if (s == NULL)
		return;
	if (s->buf != NULL) {
		sodium_memzero(s->buf, s->buflen);
		free(s->buf);
	}
	memset(s, 0, sizeof(*s));
}

/*
 * Collects the blob column 0 of every row into one wiped-on-clear buffer,
 * and with ids its id from column 1.  The statement has been bound by
 * the caller.
 */
static enum config_status
collect_secrets(struct config *c, struct db_stmt *st, int ids,
    struct config_secrets *out)
{
	unsigned char	 tmp[CONFIG_SECRETS_MAX * CONFIG_SECRET_MAX];
	size_t		 used = 0, len, i;
	const void	*v;
	enum db_rc	 rc;
	enum config_status status = CONFIG_OK;

	memset(out, 0, sizeof(*out));
	/*
	 * More secrets than the limit, or one of a size no write allows, is
	 * a config.db that was not written by the tool: refused, never cut.
	 */
	while ((rc = db_step(st)) == DB_ROW) {
		v = db_col_blob(st, 0, &len);
		if (out->n == CONFIG_SECRETS_MAX || v == NULL || len == 0 ||
		    len > CONFIG_SECRET_MAX) {
			status = CONFIG_INVALID;
			break;
		}
		memcpy(tmp + used, v, len);
		if (ids)
			out->id[out->n] = db_col_int64(st, 1);
		out->s[out->n].keylen = len;
		out->s[out->n].key = (const unsigned char *)(uintptr_t)used;
		out->n++;
		used += len;
	}
	if (status == CONFIG_OK && rc != DB_DONE)
		status = config_status_of(c, rc);
	db_reset(st);
	if (status == CONFIG_OK && used > 0) {
		if ((out->buf = malloc(used)) == NULL)
			status = CONFIG_NOMEM;
		else {
			memcpy(out->buf, tmp, used);
			out->buflen = used;
			for (i = 0; i < out->n; i++)
				out->s[i].key = out->buf +
				    (uintptr_t)out->s[i].key;
		}
	}
	sodium_memzero(tmp, used);
	if (status != CONFIG_OK)
		config_secrets_clear(out);
	return status;
}

enum config_status
config_endpoint_secrets(struct config *c, const char *endpoint, int64_t now,
    struct config_secrets *out)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	memset(out, 0, sizeof(*out));
	if ((st = config_stmt(c, CONFIG_Q_SECRETS, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, endpoint) != DB_OK ||
	    db_bind_int64(st, 2, now) != DB_OK)
		return CONFIG_NOMEM;
	return collect_secrets(c, st, 1, out);
}

static enum config_status
secret_by_key(struct config *c, enum config_q q, const char *k1, const char *k2,
    struct config_secrets *out)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	memset(out, 0, sizeof(*out));
	if ((st = config_stmt(c, q, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, k1) != DB_OK ||
	    (k2 != NULL && db_bind_opt(st, 2, k2) != DB_OK))
		return CONFIG_NOMEM;
	return collect_secrets(c, st, 0, out);
}

enum config_status
config_destination_secret(struct config *c, const char *tenant,
    const char *name, struct config_secrets *out)
{
	return secret_by_key(c, CONFIG_Q_DEST_SECRET, tenant, name, out);
}

enum config_status
config_tenant_api_key(struct config *c, const char *tenant,
    struct config_secrets *out)
{
	enum config_status	rc;

	rc = secret_by_key(c, CONFIG_Q_TENANT_KEY, tenant, NULL, out);
	if (rc == CONFIG_OK && out->n > 0 &&
	    !config_valid_api_key(out->s[0].key, out->s[0].keylen)) {
		config_secrets_clear(out);
		rc = CONFIG_INVALID;
	}
	return rc;
}

enum config_status
config_pollable_jobs(struct config *c,
    int (*fn)(void *, const struct config_job *, const char *), void *arg)
{
	struct config_job	 j;
	char			 base[HB_TEXT_MAX + 1];
	struct db_stmt		*st;
	enum config_status	 status = CONFIG_OK;
	enum db_rc		 rc;
	char *const		 bufs[] = { j.tenant, j.job_id, j.attempt,
	    j.step, j.destination, j.source_url, j.output, base };
	const size_t		 lens[] = { sizeof(j.tenant), sizeof(j.job_id),
	    sizeof(j.attempt), sizeof(j.step), sizeof(j.destination),
	    sizeof(j.source_url), sizeof(j.output), sizeof(base) };

	if ((st = config_stmt(c, CONFIG_Q_POLLABLE, &status)) == NULL)
		return status;
	while ((rc = db_step(st)) == DB_ROW) {
		memset(&j, 0, sizeof(j));
		/* A row that breaks its rule is skipped, never asked about. */
		if (copy_cols(st, 0, bufs, lens, 8) != CONFIG_OK ||
		    config_job_invalid(&j) != NULL || !valid_url(base, 1))
			continue;
		if (fn(arg, &j, base) != 0) {
			db_reset(st);
			rc = DB_DONE;
			break;
		}
	}
	if (rc != DB_DONE)
		status = config_status_of(c, rc);
	db_reset(st);
	return status;
}

/* What mapping_parse() says when it ran out of memory (provider/mapping.h). */
#define PARSE_NOMEM	"out of memory"

/* mapping_parse(), its failure as a status (see config/config_int.h). */
struct mapping *
config_mapping_parse(const char *text, size_t len, enum config_status *rc,
    char *why, size_t whylen)
{
	struct mapping	*m;
	char		 buf[256];

	*rc = CONFIG_OK;
	if (len > MAPPING_TEXT_MAX) {
		(void)snprintf(why, whylen, "longer than %d bytes",
		    MAPPING_TEXT_MAX);
		*rc = CONFIG_INVALID;
		return NULL;
	}
	if ((m = mapping_parse(text, len, buf, sizeof(buf))) == NULL) {
		*rc = strcmp(buf, PARSE_NOMEM) == 0 ? CONFIG_NOMEM :
		    CONFIG_INVALID;
		(void)snprintf(why, whylen, "%s", buf);
	}
	return m;
}

/* Which mapped endpoint names a destination (see config/config_int.h). */
enum config_status
config_dest_mapped_by(struct config *c, const char *tenant, const char *dest,
    char *name, size_t len)
{
	struct mapping		*m;
	struct db_stmt		*st;
	enum config_status	 rc;
	enum db_rc		 drc;
	const char		*t, *d;
	char			 why[256];
	size_t			 i;
	int			 hit;

	if ((st = config_stmt(c, CONFIG_Q_MAPPED_OF_TENANT, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, tenant) != DB_OK)
		return CONFIG_NOMEM;
	while ((drc = db_step(st)) == DB_ROW) {
		t = db_col_text(st, 1);
		if ((m = config_mapping_parse(t, strlen(t), &rc, why,
		    sizeof(why))) == NULL) {
			if (rc == CONFIG_NOMEM)
				break;
			continue;
		}
		for (i = 0, hit = 0; !hit &&
		    (d = mapping_destination_at(m, i)) != NULL; i++)
			hit = strcmp(d, dest) == 0;
		mapping_free(m);
		if (hit) {
			rc = db_col_copy(st, 0, name, len) != 0 ?
			    CONFIG_ERROR : CONFIG_OK;
			break;
		}
	}
	if (drc == DB_ROW) {
		db_reset(st);
		return rc;
	}
	return drc == DB_DONE ? CONFIG_NOTFOUND : config_status_of(c, drc);
}
