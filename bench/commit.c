/*
 * bench/commit.c: one SQLite commit per transaction on a given file
 * system, the floor under every accepted callback.  Opens (creates) DB in
 * WAL mode with synchronous=FULL, as the responder does, and runs COUNT
 * transactions of one single-row INSERT each.  Prints commits per second.
 * Bench only; built by bench/http.sh.
 *
 *     commit DB COUNT
 */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <sqlite3.h>

static double
commit_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
commit_exec(sqlite3 *db, const char *sql)
{
	char	*msg = NULL;
	int	 rc;

	rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK)
		warnx("%s: %s", sql, msg != NULL ? msg : sqlite3_errstr(rc));
	sqlite3_free(msg);
	return rc;
}

int
main(int argc, char *argv[])
{
	sqlite3		*db = NULL;
	sqlite3_stmt	*ins = NULL;
	char		*end;
	double		 t0, t1;
	long		 n, i;
	int		 rc = 1;

	if (argc != 3)
		errx(2, "usage: commit DB COUNT");
	errno = 0;
	n = strtol(argv[2], &end, 10);
	if (errno != 0 || *end != '\0' || n < 1 || n > 10000000)
		errx(2, "COUNT: 1 to 10000000");
	if (sqlite3_open(argv[1], &db) != SQLITE_OK) {
		warnx("%s: %s", argv[1], sqlite3_errmsg(db));
		goto out;
	}
	if (commit_exec(db, "PRAGMA journal_mode=WAL") != SQLITE_OK ||
	    commit_exec(db, "PRAGMA synchronous=FULL") != SQLITE_OK ||
	    commit_exec(db, "CREATE TABLE IF NOT EXISTS t(id INTEGER "
	    "PRIMARY KEY, body TEXT NOT NULL)") != SQLITE_OK)
		goto out;
	if (sqlite3_prepare_v2(db, "INSERT INTO t(body) VALUES (?1)", -1,
	    &ins, NULL) != SQLITE_OK) {
		warnx("prepare: %s", sqlite3_errmsg(db));
		goto out;
	}
	t0 = commit_now();
	for (i = 0; i < n; i++) {
		if (commit_exec(db, "BEGIN IMMEDIATE") != SQLITE_OK)
			goto out;
		if (sqlite3_bind_text(ins, 1, "{\"result\":\"accepted\"}", -1,
		    SQLITE_STATIC) != SQLITE_OK ||
		    sqlite3_step(ins) != SQLITE_DONE ||
		    sqlite3_reset(ins) != SQLITE_OK) {
			warnx("insert: %s", sqlite3_errmsg(db));
			goto out;
		}
		if (commit_exec(db, "COMMIT") != SQLITE_OK)
			goto out;
	}
	t1 = commit_now();
	printf("%.1f\n", (double)n / (t1 - t0));
	rc = 0;
out:
	sqlite3_finalize(ins);
	sqlite3_close(db);
	return rc;
}
