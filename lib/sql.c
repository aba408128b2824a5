/*
 * sql.c: statement cache and small binding helpers.
 */
#include <sys/stat.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>
#include <sodium.h>

#include "json.h"
#include "sql.h"

/*
 * Before SQLite initialises: no memory statistics.  They take a mutex
 * that every connection of the process shares on every allocation, and
 * the threaded responder's connections would queue on it.
 */
static void
sql_configure(void)
{
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int
sql_open(struct sql *s, const char *path, int flags, const char *const *text,
    size_t n)
{
	static pthread_once_t	once = PTHREAD_ONCE_INIT;
	struct stat		sb;
	int			rc;

	(void)pthread_once(&once, sql_configure);
	memset(s, 0, sizeof(*s));
	if ((s->st = calloc(n, sizeof(*s->st))) == NULL ||
	    (s->path = strdup(path)) == NULL) {
		sql_close(s);
		return SQLITE_NOMEM;
	}
	s->text = text;
	s->n = n;
	/* One thread at a time uses a connection: no mutex of its own. */
	rc = sqlite3_open_v2(path, &s->db, flags | SQLITE_OPEN_NOFOLLOW |
	    SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_extended_result_codes(s->db, 1);
	/*
	 * The file SQLite opened is the one stat sees now, unless it was
	 * replaced and put back between the two: then the next
	 * sql_same_file() says so.
	 */
	if (rc == SQLITE_OK && stat(path, &sb) != 0)
		rc = SQLITE_CANTOPEN;
	if (rc != SQLITE_OK) {
		sql_close(s);
		return rc;
	}
	s->dev = sb.st_dev;
	s->ino = sb.st_ino;
	return SQLITE_OK;
}

int
sql_same_file(const struct sql *s)
{
	struct stat	sb;

	return s->path != NULL && stat(s->path, &sb) == 0 &&
	    sb.st_dev == s->dev && sb.st_ino == s->ino && S_ISREG(sb.st_mode);
}

static long long
mono_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
busy_cb(void *arg, int count)
{
	struct sql	*s = arg;
	struct timespec	 ts;

	if (count == 0)
		s->busy_since = mono_ms();
	else if (mono_ms() - s->busy_since >= s->busy_ms)
		return 0;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(250 + randombytes_uniform(1000)) * 1000;
	nanosleep(&ts, NULL);
	return 1;
}

void
sql_busy(struct sql *s, int ms)
{
	s->busy_ms = ms;
	sqlite3_busy_handler(s->db, ms > 0 ? busy_cb : NULL, s);
}

void
sql_close(struct sql *s)
{
	size_t	i;

	if (s->st != NULL)
		for (i = 0; i < s->n; i++)
			sqlite3_finalize(s->st[i]);
	free(s->st);
	s->st = NULL;
	free(s->path);
	s->path = NULL;
	sqlite3_close(s->db);
	s->db = NULL;
}

sqlite3_stmt *
sql_stmt(struct sql *s, size_t i)
{
	if (i >= s->n)
		return NULL;
	if (s->st[i] == NULL) {
		if (sqlite3_prepare_v3(s->db, s->text[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) != SQLITE_OK)
			return NULL;
	} else {
		sqlite3_reset(s->st[i]);
		sqlite3_clear_bindings(s->st[i]);
	}
	return s->st[i];
}

int
sql_exec(struct sql *s, const char *text)
{
	return sqlite3_exec(s->db, text, NULL, NULL, NULL);
}

int
sql_bind_text(sqlite3_stmt *st, int idx, const char *s)
{
	if (s == NULL || *s == '\0')
		return sqlite3_bind_null(st, idx);
	return sqlite3_bind_text(st, idx, s, -1, SQLITE_TRANSIENT);
}

int
sql_col_copy(sqlite3_stmt *st, int col, char *buf, size_t len)
{
	const unsigned char	*v;
	size_t			 n;

	buf[0] = '\0';
	if ((v = sqlite3_column_text(st, col)) == NULL)
		return 0;
	n = (size_t)sqlite3_column_bytes(st, col);
	if (n >= len)
		return -1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return 0;
}

int
sql_step_done(sqlite3_stmt *st)
{
	int	rc;

	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? SQLITE_DONE : rc;
}

int
sql_json_rows(sqlite3_stmt *st, cJSON **out)
{
	cJSON		*arr, *obj;
	const char	*row;
	int		 rc;

	*out = NULL;
	if ((arr = cJSON_CreateArray()) == NULL) {
		sqlite3_reset(st);
		return SQLITE_NOMEM;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* SQLite itself wrote the row with json_object(). */
		if ((row = (const char *)sqlite3_column_text(st, 0)) == NULL) {
			rc = sqlite3_errcode(sqlite3_db_handle(st)) ==
			    SQLITE_NOMEM ? SQLITE_NOMEM : SQLITE_CORRUPT;
			break;
		}
		switch (json_parse(row, &obj)) {
		case JSON_OK:
			break;
		case JSON_NOMEM:
			rc = SQLITE_NOMEM;
			goto out;
		default:
			rc = SQLITE_CORRUPT;
			goto out;
		}
		cJSON_AddItemToArray(arr, obj);
	}
out:
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		cJSON_Delete(arr);
		return rc;
	}
	*out = arr;
	return SQLITE_OK;
}
