/*
 * db/db.c: the part of db/db.h that is the same for every backend: the result
 * codes' names, which location names which backend, the connection and
 * its statements as db/db.h shows them, and what is built on a statement
 * (optional values, copies, JSON rows).  Every call that reaches a
 * server or a file goes through the connection's table of operations
 * (db/db_int.h) to its backend: db/sqlite.c or db/pg.c.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cJSON.h>

#include "base/json.h"
#include "db/db_int.h"

const char *
db_rc_name(enum db_rc rc)
{
	static const char *const names[] = {
		[DB_OK] = "ok", [DB_ROW] = "row", [DB_DONE] = "done",
		[DB_BUSY] = "busy", [DB_CONSTRAINT] = "constraint",
		[DB_READONLY] = "readonly", [DB_DENIED] = "denied",
		[DB_GONE] = "gone", [DB_FULL] = "full", [DB_NOMEM] = "nomem",
		[DB_IOERR] = "ioerr", [DB_ERROR] = "error",
	};

	return (size_t)rc < sizeof(names) / sizeof(names[0]) ?
	    names[rc] : "error";
}

/*
 * A key=value conninfo starts with one of libpq's keywords and '=': a
 * relative path with a '=' in it (run=1) is a directory, not a server.
 */
int
db_is_postgres(const char *loc)
{
	static const char *const kw[] = {
		"host", "hostaddr", "port", "dbname", "user", "password",
		"passfile", "service", "sslmode", "sslrootcert", "sslcert",
		"sslkey", "application_name", "options", "connect_timeout",
		"target_session_attrs", "channel_binding", "gssencmode",
		"keepalives", "client_encoding", NULL
	};
	const char *const	*k;
	const char		*p = loc;
	size_t			 n;

	if (strncmp(loc, "postgresql://", 13) == 0 ||
	    strncmp(loc, "postgres://", 11) == 0)
		return 1;
	if (loc[0] == '/' || loc[0] == '.')
		return 0;
	while (*p == ' ' || *p == '\t')
		p++;
	for (k = kw; *k != NULL; k++) {
		n = strlen(*k);
		if (strncmp(p, *k, n) != 0)
			continue;
		p += n;
		while (*p == ' ' || *p == '\t')
			p++;
		return *p == '=';
	}
	return 0;
}

/* The backend that serves loc. */
static const struct db_ops *
backend_of(const char *loc)
{
	return db_is_postgres(loc) ? &db_pg_ops : &db_sqlite_ops;
}

unsigned
db_location_caps(const char *loc)
{
	return backend_of(loc)->caps;
}

const char *
db_location_name(const char *loc)
{
	return backend_of(loc)->name;
}

enum db_rc
db_open(const char *loc, const struct db_conf *conf,
    const struct db_text *text, size_t n, struct db **out, char *why,
    size_t len)
{
	if (len > 0)
		why[0] = '\0';
	return backend_of(loc)->open(loc, conf, text, n, out, why, len);
}

struct db *
db_new(const struct db_ops *ops, const struct db_text *text, size_t n)
{
	struct db	*db;
	size_t		 i;

	if ((db = calloc(1, ops->db_size)) == NULL)
		return NULL;
	if ((db->st = calloc(n > 0 ? n : 1, ops->stmt_size)) == NULL) {
		free(db);
		return NULL;
	}
	db->ops = ops;
	db->text = text;
	db->n = n;
	for (i = 0; i < n; i++) {
		db_stmt_at(db, i)->db = db;
		db_stmt_at(db, i)->i = i;
	}
	return db;
}

struct db_stmt *
db_stmt_at(struct db *db, size_t i)
{
	return (struct db_stmt *)(void *)(db->st + i * db->ops->stmt_size);
}

long long
db_mono_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
db_close(struct db *db)
{
	size_t	i;

	if (db == NULL)
		return;
	for (i = 0; i < db->n; i++)
		db->ops->stmt_free(db_stmt_at(db, i));
	free(db->st);
	db->ops->close(db);
	free(db);
}

enum db_kind
db_kind(const struct db *db)
{
	return db->ops->kind;
}

unsigned
db_caps(const struct db *db)
{
	return db->ops->caps;
}

enum db_rc
db_last(const struct db *db)
{
	return db->last;
}

enum db_constraint
db_constraint(const struct db *db)
{
	return db->last == DB_CONSTRAINT ? db->cons : DB_C_NONE;
}

enum db_rc
db_fail(struct db *db, enum db_rc rc, enum db_constraint cons)
{
	db->last = rc;
	db->cons = rc == DB_CONSTRAINT ? cons : DB_C_NONE;
	return rc;
}

const char *
db_text_for(const struct db *db, const struct db_text *t)
{
	return db->ops->kind == DB_POSTGRES && t->pg != NULL ? t->pg :
	    t->sqlite;
}

const char *
db_errmsg(const struct db *db)
{
	return db->ops->errmsg(db);
}

int
db_same_file(const struct db *db, struct stat *sb)
{
	return db->ops->same_file == NULL || db->ops->same_file(db, sb);
}

void
db_busy(struct db *db, int ms)
{
	if (db->ops->busy != NULL)
		db->ops->busy(db, ms);
}

int
db_readonly(struct db *db)
{
	return db->ops->readonly != NULL && db->ops->readonly(db);
}

enum db_rc
db_checkpoint(struct db *db, int pages)
{
	return db->ops->checkpoint != NULL ? db->ops->checkpoint(db, pages) :
	    DB_OK;
}

size_t
db_shrink(struct db *db)
{
	return db->ops->shrink != NULL ? db->ops->shrink(db) : 0;
}

enum db_rc
db_session(struct db *db, const char *text)
{
	if (db->ops->session == NULL)
		return db_exec(db, text);
	return db->ops->session(db, text);
}

/* Non-zero when text's first word is word (any case). */
static int
first_word(const char *text, const char *word)
{
	size_t	n = strlen(word);

	while (isspace((unsigned char)*text))
		text++;
	return strncasecmp(text, word, n) == 0 &&
	    !isalnum((unsigned char)text[n]) && text[n] != '_';
}

enum db_rc
db_send(struct db_stmt *st)
{
	struct db	*db = st->db;
	enum db_rc	 rc;

	if (db->sent == 0) {		/* a new flight */
		db->frc = DB_OK;
		db->failed = 0;
	}
	if (db->frc != DB_OK) {
		db->sent++;
		return db->frc;
	}
	st->held = 0;
	if (db->ops->send != NULL)
		rc = db->ops->send(st);
	else if ((rc = db->ops->step(st)) == DB_ROW || rc == DB_DONE) {
		st->held = rc;
		rc = DB_OK;
	}
	if (rc != DB_OK) {
		db->frc = db->last = rc;
		db->failed = db->sent;
	}
	db->sent++;
	return rc;
}

/* Lands the flight, commit (NULL: none) riding it: see db_land(). */
static enum db_rc
land(struct db *db, struct db_stmt *commit)
{
	enum db_rc	rc = DB_OK;
	size_t		f, n = db->sent;

	if (n == 0)
		return db->frc;
	if (db->ops->land != NULL) {
		/* A COMMIT does not ride a flight that failed already. */
		rc = db->ops->land(db, db->frc == DB_OK ? commit : NULL, &f);
		if (rc != DB_OK && (db->frc == DB_OK || f < db->failed)) {
			db->frc = rc;
			db->failed = f;
		}
	}
	db->sent = 0;
	if (db->frc == DB_OK)
		db->failed = n + (commit != NULL && db->ops->land != NULL);
	else
		db->last = db->frc;
	return db->frc;
}

enum db_rc
db_land(struct db *db, size_t *failed)
{
	enum db_rc	rc = land(db, NULL);

	if (failed != NULL)
		*failed = db->failed;
	return rc;
}

size_t
db_sent(const struct db *db)
{
	return db->sent;
}

uint64_t
db_round_trips(const struct db *db)
{
	return db->trips;
}

/*
 * Before a call that needs the server: the flight landed, text the
 * call's.  A failed flight fails the call unless it rolls back.
 */
static enum db_rc
landed(struct db *db, const char *text)
{
	if (land(db, NULL) == DB_OK || first_word(text, "ROLLBACK"))
		return DB_OK;
	return db->frc;
}

enum db_rc
db_exec(struct db *db, const char *text)
{
	enum db_rc	rc;

	if (db->sent > 0 && (rc = landed(db, text)) != DB_OK)
		return rc;
	return db->ops->exec(db, text);
}

enum db_rc
db_exec_text(struct db *db, const struct db_text *t)
{
	const char	*text = db_text_for(db, t);

	return *text == '\0' ? DB_OK : db_exec(db, text);
}

enum db_rc
db_begin(struct db *db, enum db_begin kind, int64_t lock)
{
	enum db_rc	rc;

	if (db->sent > 0 && (rc = landed(db, "BEGIN")) != DB_OK)
		return rc;
	return db->ops->begin(db, kind, lock);
}

enum db_rc
db_step_alone(struct db_stmt *st)
{
	struct db		*db = st->db;
	enum db_constraint	 cons;
	enum db_rc		 rc, last;

	if (!db->ops->aborts_tx || !db_in_tx(db))
		return db_step_done(st);
	if ((rc = db_exec(db, "SAVEPOINT db_step_alone")) != DB_OK) {
		db_reset(st);
		return rc;
	}
	if ((rc = db_step_done(st)) == DB_DONE)
		return (rc = db_exec(db, "RELEASE SAVEPOINT db_step_alone")) ==
		    DB_OK ? DB_DONE : rc;
	/* The statement's own failure is told, not the savepoint's. */
	last = db->last;
	cons = db->cons;
	if (db_exec(db, "ROLLBACK TO SAVEPOINT db_step_alone;"
	    " RELEASE SAVEPOINT db_step_alone") != DB_OK)
		return DB_ERROR;
	(void)db_fail(db, last, cons);
	return rc;
}

int
db_in_tx(struct db *db)
{
	return db->ops->in_tx(db);
}

struct db_stmt *
db_stmt(struct db *db, size_t i)
{
	struct db_stmt	*st;
	enum db_rc	 rc;

	if (i >= db->n) {
		db->last = DB_ERROR;
		return NULL;
	}
	st = db_stmt_at(db, i);
	st->held = 0;
	if ((rc = db->ops->ready(st)) != DB_OK) {
		db->last = rc;
		return NULL;
	}
	st->changes = 0;
	return st;
}

enum db_rc
db_bind_int64(struct db_stmt *st, int idx, int64_t v)
{
	return st->db->ops->bind_int64(st, idx, v);
}

enum db_rc
db_bind_text(struct db_stmt *st, int idx, const char *s)
{
	if (s == NULL)
		return db_bind_null(st, idx);
	return st->db->ops->bind_text(st, idx, s);
}

enum db_rc
db_bind_blob(struct db_stmt *st, int idx, const void *b, size_t len)
{
	return st->db->ops->bind_blob(st, idx, b, len);
}

enum db_rc
db_bind_null(struct db_stmt *st, int idx)
{
	return st->db->ops->bind_null(st, idx);
}

/* The text a statement runs, as its backend says it. */
static const char *
stmt_text(const struct db_stmt *st)
{
	return db_text_for(st->db, &st->db->text[st->i]);
}

enum db_rc
db_step(struct db_stmt *st)
{
	struct db	*db = st->db;
	struct db_stmt	*rides;
	const char	*text;
	enum db_rc	 rc;

	if (st->held != 0) {
		rc = st->held;
		st->held = 0;
		return rc;
	}
	if (db->sent > 0) {
		text = stmt_text(st);
		rides = db->ops->land != NULL ? st : NULL;
		if (first_word(text, "COMMIT") || first_word(text, "END")) {
			/* It rides the flight, or does not run. */
			if ((rc = land(db, rides)) != DB_OK)
				return rc;
		} else if ((rc = landed(db, text)) != DB_OK)
			return rc;
	}
	return db->ops->step(st);
}

void
db_reset(struct db_stmt *st)
{
	st->held = 0;
	st->db->ops->reset(st);
}

int
db_col_null(struct db_stmt *st, int col)
{
	return st->db->ops->col_null(st, col);
}

int64_t
db_col_int64(struct db_stmt *st, int col)
{
	return st->db->ops->col_int64(st, col);
}

const char *
db_col_text(struct db_stmt *st, int col)
{
	return st->db->ops->col_text(st, col);
}

const void *
db_col_blob(struct db_stmt *st, int col, size_t *len)
{
	*len = 0;
	return st->db->ops->col_blob(st, col, len);
}

int64_t
db_changes(struct db_stmt *st)
{
	return st->changes;
}

enum db_rc
db_bind_opt(struct db_stmt *st, int idx, const char *s)
{
	if (s == NULL || *s == '\0')
		return db_bind_null(st, idx);
	return db_bind_text(st, idx, s);
}

int
db_col_copy(struct db_stmt *st, int col, char *buf, size_t len)
{
	const char	*v;
	size_t		 n;

	buf[0] = '\0';
	v = db_col_text(st, col);
	if ((n = strlen(v)) >= len)
		return -1;
	memcpy(buf, v, n + 1);
	return 0;
}

enum db_rc
db_step_done(struct db_stmt *st)
{
	enum db_rc	rc;

	if ((rc = db_step(st)) == DB_ROW) {
		db_reset(st);
		rc = DB_DONE;
	}
	return rc;
}

enum db_rc
db_json_rows(struct db_stmt *st, cJSON **out)
{
	cJSON		*arr, *obj = NULL;
	enum db_rc	 rc;

	*out = NULL;
	if ((arr = cJSON_CreateArray()) == NULL) {
		db_reset(st);
		return DB_NOMEM;
	}
	while ((rc = db_step(st)) == DB_ROW) {
		/* The server itself wrote the row as a JSON object. */
		switch (db_col_null(st, 0) ? JSON_SYNTAX :
		    json_parse(db_col_text(st, 0), &obj)) {
		case JSON_OK:
			cJSON_AddItemToArray(arr, obj);
			continue;
		case JSON_NOMEM:
			rc = DB_NOMEM;
			break;
		default:
			rc = DB_ERROR;
			break;
		}
		db_reset(st);
		break;
	}
	if (rc != DB_DONE) {
		cJSON_Delete(arr);
		return rc;
	}
	*out = arr;
	return DB_OK;
}
