/*
 * db/pg_schema.h: hookbox's tables on PostgreSQL, in two schemas:
 *
 *   hookbox_config  the operator's configuration (config.db's tables):
 *                   the serving roles may only read it;
 *   hookbox_state   what happened (state.db's tables): the serving roles
 *                   read and write its rows, never its shape.
 *
 * The tables are those of lib/config/config.c and lib/store/store.c, column for
 * column, with PostgreSQL's types (bigint for SQLite's INTEGER, bytea for
 * BLOB).  Not installed: the admin tool's `init` runs them.
 *
 * Transactions: each text is one transaction of its own (BEGIN ...
 * COMMIT, or the one a text of several statements runs in), for
 * db_exec().
 */
#ifndef HB_DB_PG_SCHEMA_H
#define HB_DB_PG_SCHEMA_H

#include <stddef.h>

/*
 * The configuration's schema version, hookbox_config.schema_version's
 * one row: config/config.c's CONFIG_VERSION, SQLite's PRAGMA user_version.
 */
#define PG_SCHEMA_CONFIG_VERSION	5

/*
 * Each creates one schema and its tables; an error if it exists.  The
 * configuration's is the admin tool's (config_create()), the state's the
 * store's (store_open() with create).
 */
extern const char pg_schema_config[];
extern const char pg_schema_state[];

/*
 * Upgrades the configuration's schema from version 1 (the previous
 * release's) to 2, inside the caller's transaction (no BEGIN, no
 * COMMIT), as its owner: an endpoint of kind mapped, and its mapping.
 */
extern const char pg_schema_config_v2[];
extern const char pg_schema_config_v3[];
extern const char pg_schema_config_v4[];
extern const char pg_schema_config_v5[];

/*
 * Migrations of schema hookbox_state made by an earlier release:
 * pg_schema_state_N takes version N - 1 to N, in a transaction of its
 * own.  Only the schema's owner may run them (`hookbox init`).
 */
extern const char pg_schema_state_2[];
extern const char pg_schema_state_3[];
extern const char pg_schema_state_4[];

/*
 * The configuration's version, its table, function and triggers, for a
 * schema made before them; inside the caller's transaction (no BEGIN, no
 * COMMIT), and harmless when they are there already.
 */
extern const char pg_schema_config_version[];

/*
 * Probes that change nothing: one reads the configuration; the other
 * reads it and writes the state's tables a request writes (INSERTs of no
 * row), as a serving role must.  Each fails as the first statement that
 * needs what the role lacks: the schemas, or a grant; or, the
 * configuration's schema being of another version, with a message that
 * says so (an older one: run `hookbox init` as its owner).
 */
extern const char pg_schema_probe_config[];
extern const char pg_schema_probe_serve[];

/*
 * The GRANT lines that let role serve (respond, dispatch, poll): USAGE on
 * both schemas, SELECT on hookbox_config's tables, SELECT, INSERT, UPDATE
 * and DELETE on hookbox_state's tables and their sequences.  Nothing on
 * the role itself (ALTER ROLE needs CREATEROLE, which the schemas' owner
 * need not have): every connection hookbox makes sets its own search_path.
 * role must be a name ([a-z_][a-z0-9_]*, at most 63 bytes).  Writes them to buf (len bytes); 0, or -1 for a bad role or
 * a buffer too short.
 */
int pg_schema_grants(const char *role, char *buf, size_t len);

/*
 * The same for the registrar service's role (config/registrar.h): read
 * the tenants' and destinations' columns a job's registration checks
 * (none that holds a secret), the registrars and the schema's versions;
 * read, add and remove jobs; nothing else.
 */
int pg_schema_registrar_grants(const char *role, char *buf, size_t len);

#endif /* HB_DB_PG_SCHEMA_H */
