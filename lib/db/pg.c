/*
 * db/pg.c: db/db.h's PostgreSQL backend, through libpq: statements prepared
 * by name on first use, text parameters (binary for blobs) and whole
 * results read row by row; every command that commits bounded by the
 * client (db/db.h says how, and why).
 */
#include <sys/socket.h>

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sodium.h>

#include "base/text.h"
#include "db/db_int.h"

/*
 * libpq is loaded when the first PostgreSQL location is read or opened,
 * not when a program starts: a SQLite site never maps it, nor the dozen
 * libraries it brings (TLS, Kerberos, LDAP), whose pages and start-up
 * allocations made up about 1.5 MB of the responder's worker and 5 MB of
 * its supervisor (bench/README.md).  Its functions are
 * called through pq, filled from the library's own symbols once, by
 * pq_load(); the soname is the one libpq-dev links against, so the ABI is
 * the one this file is compiled for.
 */
#define PQ_SONAME	"libpq.so.5"
#define PQ_FUNCS(X)							\
	X(PQcancel) X(PQclear) X(PQcmdStatus) X(PQcmdTuples)		\
	X(PQconnectdbParams) X(PQconninfoFree) X(PQconninfoParse)	\
	X(PQconsumeInput) X(PQenterPipelineMode) X(PQerrorMessage)	\
	X(PQexec) X(PQexecPrepared) X(PQexitPipelineMode) X(PQfinish)	\
	X(PQfreeCancel) X(PQfreemem) X(PQgetCancel) X(PQgetResult)	\
	X(PQgetisnull) X(PQgetlength) X(PQgetvalue) X(PQisBusy)		\
	X(PQnfields) X(PQntuples) X(PQpipelineSync) X(PQprepare)	\
	X(PQreset) X(PQresultErrorField) X(PQresultStatus)		\
	X(PQsendPrepare) X(PQsendQuery) X(PQsendQueryPrepared)		\
	X(PQsetNoticeReceiver) X(PQsocket) X(PQstatus)			\
	X(PQtransactionStatus) X(PQunescapeBytea)

#define PQ_FIELD(f)	__typeof__(f) *f;
static struct {
	PQ_FUNCS(PQ_FIELD)
} pq;
#undef PQ_FIELD

static pthread_once_t	pq_once = PTHREAD_ONCE_INIT;
static int		pq_loaded;
static char		pq_why[256];	/* why not */

/* POSIX has dlsym() answer a function as a data pointer. */
_Static_assert(sizeof(void *) == sizeof(pq.PQexec),
    "function and data pointers differ in size");

static int
pq_sym(void *lib, const char *name, void *fn)
{
	void	*p;

	if ((p = dlsym(lib, name)) == NULL) {
		(void)snprintf(pq_why, sizeof(pq_why), "%s has no %s",
		    PQ_SONAME, name);
		return -1;
	}
	memcpy(fn, &p, sizeof(p));
	return 0;
}

static void
pq_load(void)
{
	void		*lib;
	const char	*e;

	/* Never closed: OpenSSL, under libpq, keeps exit handlers. */
	if ((lib = dlopen(PQ_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		e = dlerror();
		(void)snprintf(pq_why, sizeof(pq_why), "PostgreSQL needs"
		    " libpq (Debian package libpq5): %s", e != NULL ? e :
		    PQ_SONAME);
		return;
	}
#define PQ_LOAD(f)	if (pq_sym(lib, #f, &pq.f) != 0) return;
	PQ_FUNCS(PQ_LOAD)
#undef PQ_LOAD
	pq_loaded = 1;
}

/* libpq loaded: 0, or -1 with why (len bytes) saying why not. */
static int
pq_ready(char *why, size_t len)
{
	(void)pthread_once(&pq_once, pq_load);
	if (pq_loaded)
		return 0;
	(void)snprintf(why, len, "%s", pq_why);
	return -1;
}

struct pg_stmt {
	struct db_stmt	  base;
	char		 *sql;		/* the text in PostgreSQL's terms */
	int		  prepared;
	int		  nparams;
	char		**vals;		/* owned copies; NULL for SQL NULL */
	int		 *lens;
	int		 *fmts;		/* 0 text, 1 binary (blobs) */
	Oid		 *types;	/* all 0: the server infers them */
	PGresult	 *res;		/* while stepping */
	int		  row, nrows;
	unsigned char	 *blob;		/* the last column read as bytea */
	size_t		  bloblen;
};

/* A command of a flight, in the order sent: a Parse, or an Execute. */
struct pg_sent {
	struct pg_stmt	*st;
	int		 prepare;
};

struct pg_db {
	struct db		 base;
	PGconn			*pg;
	const char		*session;	/* see db_session() */
	/*
	 * A transaction is open on the server, as its last answer on a
	 * good connection said: a lost connection says nothing any more,
	 * and must not be opened again under a transaction's feet.
	 */
	int			 tx;
	enum db_rc		 txfail;	/* what aborted it */
	enum db_constraint	 txcons;	/* ... and its constraint */
	int			 commit_ms;	/* a COMMIT's bound */
	int			 warned;	/* a WARNING came: pg_notice() */
	struct pg_sent		*q;		/* the flight: what was sent */
	size_t			 nq, qcap;
	char			 warning[128];	/* ... its message */
	char			 err[256];
};

/* The backend's own parts of what db/db.c hands it. */
static struct pg_db *
pg_db(struct db *db)
{
	return (struct pg_db *)db;
}

static struct pg_stmt *
pg_stmt(struct db_stmt *st)
{
	return (struct pg_stmt *)st;
}

/* A statement's connection. */
static struct pg_db *
pg_of(struct pg_stmt *st)
{
	return (struct pg_db *)st->base.db;
}

static struct pg_stmt *
pg_stmt_at(struct pg_db *db, size_t i)
{
	return (struct pg_stmt *)db_stmt_at(&db->base, i);
}

/* The class of a PostgreSQL error, from its SQLSTATE. */
static enum db_rc
pg_state_rc(const char *state)
{
	if (state == NULL || strlen(state) != 5)
		return DB_GONE;		/* no answer from the server */
	if (strcmp(state, "40001") == 0 ||	/* serialization_failure */
	    strcmp(state, "40P01") == 0 ||	/* deadlock_detected */
	    strcmp(state, "55P03") == 0 ||	/* lock_not_available */
	    strcmp(state, "57014") == 0)	/* query_canceled: a timeout */
		return DB_BUSY;
	if (strncmp(state, "23", 2) == 0)
		return DB_CONSTRAINT;
	if (strcmp(state, "25006") == 0)	/* read_only_sql_transaction */
		return DB_READONLY;
	if (strcmp(state, "42501") == 0)	/* insufficient_privilege */
		return DB_DENIED;
	if (strncmp(state, "08", 2) == 0 ||	/* connection_exception */
	    strcmp(state, "57P01") == 0 ||	/* admin_shutdown */
	    strcmp(state, "57P02") == 0 ||	/* crash_shutdown */
	    strcmp(state, "57P03") == 0 ||	/* cannot_connect_now */
	    strncmp(state, "58", 2) == 0)	/* system_error: I/O */
		return DB_GONE;
	if (strcmp(state, "53100") == 0)	/* disk_full */
		return DB_FULL;
	if (strcmp(state, "53200") == 0)	/* out_of_memory */
		return DB_NOMEM;
	return DB_ERROR;
}

/* Which constraint a class 23 SQLSTATE names. */
static enum db_constraint
pg_state_cons(const char *state)
{
	if (state == NULL)
		return DB_C_NONE;
	if (strcmp(state, "23505") == 0)	/* unique_violation */
		return DB_C_UNIQUE;
	if (strcmp(state, "23503") == 0 ||	/* foreign_key_violation */
	    strcmp(state, "23001") == 0)	/* restrict_violation */
		return DB_C_REFERENCE;
	return DB_C_CHECK;	/* check, not-null, exclusion, ... */
}

/*
 * After a command on a good connection: is a transaction open, and if it
 * was aborted, by what (rc, the failure that did it).
 */
static void
pg_track(struct pg_db *db, enum db_rc rc)
{
	PGTransactionStatusType	t;

	if (pq.PQstatus(db->pg) != CONNECTION_OK)
		return;
	t = pq.PQtransactionStatus(db->pg);
	db->tx = t == PQTRANS_INTRANS || t == PQTRANS_INERROR ||
	    t == PQTRANS_ACTIVE;
	if (!db->tx)
		db->txfail = DB_OK;
	else if (t == PQTRANS_INERROR && db->txfail == DB_OK && rc != DB_OK) {
		db->txfail = rc;
		db->txcons = db->base.cons;
	}
}

/* Records res's error (or the connection's) and says its class. */
static enum db_rc
pg_fail(struct pg_db *db, const PGresult *res)
{
	const char	*msg = NULL, *state = NULL;
	size_t		 len;

	if (res != NULL) {
		msg = pq.PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
		state = pq.PQresultErrorField(res, PG_DIAG_SQLSTATE);
	}
	if (msg == NULL)
		msg = pq.PQerrorMessage(db->pg);
	(void)snprintf(db->err, sizeof(db->err), "%s", msg);
	len = strlen(db->err);
	while (len > 0 && db->err[len - 1] == '\n')
		db->err[--len] = '\0';
	if (pq.PQstatus(db->pg) == CONNECTION_BAD)
		return db_fail(&db->base, DB_GONE, DB_C_NONE);
	(void)db_fail(&db->base, res == NULL ? DB_NOMEM : pg_state_rc(state),
	    pg_state_cons(state));
	/* in_failed_sql_transaction: the first failure says why. */
	if (state != NULL && strcmp(state, "25P02") == 0 &&
	    db->txfail != DB_OK)
		(void)db_fail(&db->base, db->txfail, db->txcons);
	pg_track(db, db->base.last);
	return db->base.last;
}

/*
 * A result's values are wiped before it is freed: a column may be a
 * secret (an endpoint's), and results are small.
 */
static void
pg_res_free(PGresult *res)
{
	int	r, c, nr, nc;

	if (res == NULL)
		return;
	nr = pq.PQntuples(res);
	nc = pq.PQnfields(res);
	for (r = 0; r < nr; r++)
		for (c = 0; c < nc; c++)
			sodium_memzero(pq.PQgetvalue(res, r, c),
			    (size_t)pq.PQgetlength(res, r, c));
	pq.PQclear(res);
}

/* So is a blob read from one. */
static void
pg_blob_free(struct pg_stmt *st)
{
	if (st->blob != NULL) {
		sodium_memzero(st->blob, st->bloblen);
		pq.PQfreemem(st->blob);
	}
	st->blob = NULL;
	st->bloblen = 0;
}

static void
pg_clear(struct pg_stmt *st)
{
	pg_res_free(st->res);
	st->res = NULL;
	pg_blob_free(st);
	st->row = st->nrows = 0;
}

/*
 * Empties parameter slot i.  A parameter may be a secret (an endpoint's,
 * bound by the admin tool): its copy is wiped before it is freed.
 */
static void
pg_unset(struct pg_stmt *st, int i)
{
	char	*v = st->vals[i];

	if (v != NULL) {
		sodium_memzero(v, st->fmts[i] ? (size_t)st->lens[i] :
		    strlen(v));
		free(v);
	}
	st->vals[i] = NULL;
	st->lens[i] = 0;
	st->fmts[i] = 0;
}

static void
pg_unbind(struct pg_stmt *st)
{
	int	i;

	for (i = 0; i < st->nparams; i++)
		pg_unset(st, i);
}

static void
pg_stmt_free(struct db_stmt *dst)
{
	struct pg_stmt	*st = pg_stmt(dst);

	pg_clear(st);
	pg_unbind(st);
	free(st->vals);
	free(st->lens);
	free(st->fmts);
	free(st->types);
	free(st->sql);
	memset(st, 0, sizeof(*st));
}

static void
pg_close(struct db *db)
{
	if (pg_db(db)->pg != NULL)
		pq.PQfinish(pg_db(db)->pg);
	free(pg_db(db)->q);
}

/*
 * Notices are not errors (a DROP ... IF EXISTS that had nothing to drop):
 * nothing of them reaches standard error, or the logs.  A WARNING is
 * remembered for the COMMIT it may come with (pg_result()), read from
 * the severity the server does not translate (servers before 9.6 send
 * none: then from the SQLSTATE's class 01, "warning"), never from the
 * words.  "There is no transaction in progress" (25P01) is no such
 * warning: nothing was to be committed.
 */
static void
pg_notice(void *arg, const PGresult *res)
{
	struct pg_db	*db = arg;
	const char	*sev, *state, *msg;

	sev = pq.PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
	state = pq.PQresultErrorField(res, PG_DIAG_SQLSTATE);
	if (sev != NULL ? strcmp(sev, "WARNING") != 0 :
	    state == NULL || strncmp(state, "01", 2) != 0)
		return;
	if (state != NULL && strcmp(state, "25P01") == 0)
		return;
	db->warned = 1;
	msg = pq.PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	(void)snprintf(db->warning, sizeof(db->warning), "%s",
	    msg != NULL ? msg : "");
}

/* Keywords db_open_pg() sets itself, over the conninfo's own. */
static const char *const pg_ours[] = {
	"connect_timeout", "keepalives", "keepalives_idle",
	"keepalives_interval", "keepalives_count", "tcp_user_timeout",
	"application_name", "options", NULL
};

static int
pg_is_ours(const char *key)
{
	const char *const	*k;

	for (k = pg_ours; *k != NULL; k++)
		if (strcmp(*k, key) == 0)
			return 1;
	return 0;
}

/* Wipes and frees a parsed conninfo: it may hold a password. */
static void
pg_info_free(PQconninfoOption *info)
{
	PQconninfoOption	*o;

	if (info == NULL)
		return;
	for (o = info; o->keyword != NULL; o++)
		if (o->val != NULL)
			sodium_memzero(o->val, strlen(o->val));
	pq.PQconninfoFree(info);
}

/*
 * Appends a value as libpq reads one: bare, or single-quoted with ' and
 * \ escaped when it is empty or holds a space, a quote or a backslash.
 */
static int
put_value(char *buf, size_t len, size_t *o, const char *v)
{
	const char	*p;

	if (*v != '\0' && strpbrk(v, " \t\n\v\f\r'\\") == NULL)
		return text_put(buf, len, o, v, strlen(v));
	if (text_put(buf, len, o, "'", 1) != 0)
		return -1;
	for (p = v; *p != '\0'; p++)
		if (((*p == '\'' || *p == '\\') && text_put(buf, len, o, "\\",
		    1) != 0) || text_put(buf, len, o, p, 1) != 0)
			return -1;
	return text_put(buf, len, o, "'", 1);
}

int
db_conninfo_redact(const char *conninfo, char *buf, size_t len)
{
	PQconninfoOption	*info, *o;
	char			*err = NULL;
	size_t			 off = 0;
	int			 n = 0, mask;

	if (len == 0)
		return -1;
	buf[0] = '\0';
	if (pq_ready(buf, len) != 0) {
		(void)snprintf(buf, len, "%s", DB_CONNINFO_UNREAD);
		return -1;
	}
	if ((info = pq.PQconninfoParse(conninfo, &err)) == NULL) {
		/* libpq's complaint may quote the password: not kept. */
		if (err != NULL) {
			sodium_memzero(err, strlen(err));
			pq.PQfreemem(err);
		}
		(void)snprintf(buf, len, "%s", DB_CONNINFO_MALFORMED);
		return -1;
	}
	for (o = info; o->keyword != NULL; o++) {
		if (o->val == NULL)
			continue;
		/*
		 * libpq's "*": a password.  A database named like a conninfo
		 * would be read as one, password and all, were it expanded
		 * (db_open_pg() refuses it).
		 */
		mask = strchr(o->dispchar, '*') != NULL ||
		    (strcmp(o->keyword, "dbname") == 0 &&
		    (strchr(o->val, '=') != NULL ||
		    strstr(o->val, "://") != NULL));
		if ((off > 0 && text_put(buf, len, &off, " ", 1) != 0) ||
		    text_put(buf, len, &off, o->keyword,
		    strlen(o->keyword)) != 0 ||
		    text_put(buf, len, &off, "=", 1) != 0 ||
		    (mask ? text_put(buf, len, &off, "***", 3) :
		    put_value(buf, len, &off, o->val)) != 0) {
			buf[0] = '\0';
			n = -1;
			break;
		}
		n += mask;
	}
	pg_info_free(info);
	return n;
}

/*
 * db_open() for a server: db_open_pg() with conf's bounds, and conf's
 * schemas, name and read-only transactions among the connection's
 * options, after the conninfo's own, so that they win there: a reader is
 * read-only by construction, whatever its role's grants would allow, and
 * finds its names in its schemas, on every connection opened again too.
 */
static enum db_rc
pg_open(const char *conninfo, const struct db_conf *conf,
    const struct db_text *text, size_t n, struct db **out, char *why,
    size_t len)
{
	PQconninfoOption	*info, *o;
	const char		*keys[64], *vals[64], *mine = "", *pw = NULL;
	char			*perr = NULL, *options = NULL;
	char			 ctimeout[32], utimeout[32];
	struct pg_db		*db = NULL;
	size_t			 olen;
	int			 k = 0, lock_ms, stmt_ms, n2;
	int			 connect_ms = conf->connect_ms;
	int			 statement_ms = conf->busy_ms;
	enum db_rc		 rc = DB_NOMEM;

	*out = NULL;
	if (pq_ready(why, len) != 0)
		return DB_ERROR;
	/*
	 * Parsed here first: libpq's own complaint about a malformed one
	 * quotes the token it choked on, which may be the password.
	 */
	if ((info = pq.PQconninfoParse(conninfo, &perr)) == NULL) {
		if (perr != NULL) {
			sodium_memzero(perr, strlen(perr));
			pq.PQfreemem(perr);
			(void)snprintf(why, len, "malformed PostgreSQL"
			    " conninfo");
			return DB_ERROR;
		}
		(void)snprintf(why, len, "out of memory");
		return DB_NOMEM;
	}
	for (o = info; o->keyword != NULL; o++) {
		if (o->val == NULL)
			continue;
		if (strcmp(o->keyword, "options") == 0)
			mine = o->val;
		else if (strcmp(o->keyword, "password") == 0)
			pw = o->val;
		/* A database named like a conninfo would be echoed whole. */
		else if (strcmp(o->keyword, "dbname") == 0 &&
		    (strchr(o->val, '=') != NULL ||
		    strstr(o->val, "://") != NULL)) {
			(void)snprintf(why, len, "malformed PostgreSQL"
			    " conninfo");
			pg_info_free(info);
			return DB_ERROR;
		}
		if (!pg_is_ours(o->keyword) &&
		    k < (int)(sizeof(keys) / sizeof(keys[0])) - 10) {
			keys[k] = o->keyword;
			vals[k++] = o->val;
		}
	}
	/*
	 * The busy budget: no lock is waited for longer (advisory locks
	 * too), and no statement runs longer; a budget of 0 fails at once
	 * on a lock, as SQLite does, with a backstop on the statement.
	 * JIT off: it compiles a plan whose estimated cost passes
	 * jit_above_cost, as a key set's look-up can on a table not yet
	 * analyzed (the planner takes a set for 100 rows, a new table for
	 * thousands), and compiling took 190 ms where the statement runs
	 * in a fraction of one, under a request's busy budget.  The
	 * conninfo's own options come after, and win.
	 */
	stmt_ms = statement_ms > 0 ? statement_ms : DB_PG_BACKSTOP_MS;
	lock_ms = statement_ms > 0 ? statement_ms : 1;
	olen = strlen(mine) + (conf->schemas != NULL ?
	    strlen(conf->schemas) : 0) + 160;
	if ((db = (struct pg_db *)db_new(&db_pg_ops, text, n)) == NULL ||
	    (options = malloc(olen)) == NULL)
		goto fail;
	db->commit_ms = stmt_ms;
	n2 = snprintf(options, olen, "-c lock_timeout=%d"
	    " -c statement_timeout=%d -c jit=off %s%s%s%s", lock_ms, stmt_ms,
	    mine,
	    conf->schemas != NULL ? " -c search_path=" : "",
	    conf->schemas != NULL ? conf->schemas : "",
	    conf->flags & DB_OPEN_READONLY ?
	    " -c default_transaction_read_only=on" : "");
	if (n2 < 0 || (size_t)n2 >= olen)
		goto fail;
	keys[k] = "options";
	vals[k++] = options;
	if (connect_ms > 0) {
		/* libpq counts whole seconds, at least 2. */
		(void)snprintf(ctimeout, sizeof(ctimeout), "%d",
		    connect_ms < 2000 ? 2 : (connect_ms + 999) / 1000);
		keys[k] = "connect_timeout";
		vals[k++] = ctimeout;
	}
	/*
	 * A server that vanishes without a word (no RST) would hold a
	 * call for TCP's retransmissions, many minutes: keepalives find
	 * it gone while a call waits for an answer, tcp_user_timeout while
	 * what was sent goes unacknowledged.
	 */
	keys[k] = "keepalives";
	vals[k++] = "1";
	keys[k] = "keepalives_idle";
	vals[k++] = "2";
	keys[k] = "keepalives_interval";
	vals[k++] = "1";
	keys[k] = "keepalives_count";
	vals[k++] = "3";
	(void)snprintf(utimeout, sizeof(utimeout), "%d",
	    (statement_ms > 1000 ? statement_ms : 1000) + 1000);
	keys[k] = "tcp_user_timeout";
	vals[k++] = utimeout;
	keys[k] = "application_name";
	vals[k++] = conf->app != NULL ? conf->app : "hookbox";
	keys[k] = vals[k] = NULL;
	db->pg = pq.PQconnectdbParams(keys, vals, 0);
	if (db->pg == NULL) {
		(void)snprintf(why, len, "out of memory");
		goto fail;
	}
	if (pq.PQstatus(db->pg) != CONNECTION_OK) {
		/* libpq's message names host and user, never the password. */
		(void)snprintf(why, len, "%s", pq.PQerrorMessage(db->pg));
		why[strcspn(why, "\n")] = '\0';
		/* ... and should it ever, it is not passed on. */
		if (pw != NULL && *pw != '\0' && strstr(why, pw) != NULL)
			(void)snprintf(why, len, "cannot connect to"
			    " PostgreSQL");
		rc = DB_GONE;
		goto fail;
	}
	/* It stays with the connection when it is opened again. */
	(void)pq.PQsetNoticeReceiver(db->pg, pg_notice, db);
	sodium_memzero(options, olen);
	free(options);
	pg_info_free(info);
	*out = &db->base;
	return DB_OK;
fail:
	if (rc == DB_NOMEM)
		(void)snprintf(why, len, "out of memory");
	if (options != NULL) {
		sodium_memzero(options, olen);
		free(options);
	}
	pg_info_free(info);
	db_close((struct db *)db);
	return rc;
}

enum db_rc
db_open_pg(const char *conninfo, int connect_ms, int statement_ms,
    const struct db_text *text, size_t n, struct db **out, char *why,
    size_t len)
{
	const struct db_conf	conf = {
		.busy_ms = statement_ms,
		.connect_ms = connect_ms
	};

	return pg_open(conninfo, &conf, text, n, out, why, len);
}

/*
 * Past text's first word when it is word (any case), after spaces, and
 * followed by the end, a space or ';'; NULL otherwise.
 */
static const char *
pg_word(const char *p, const char *word)
{
	size_t	n = strlen(word);

	while (isspace((unsigned char)*p))
		p++;
	if (strncasecmp(p, word, n) != 0)
		return NULL;
	p += n;
	if (*p != '\0' && *p != ';' && !isspace((unsigned char)*p))
		return NULL;
	return p;
}

static const char *const pg_commit[] = { "COMMIT", "END", NULL };
static const char *const pg_rollback[] = { "ROLLBACK", "ABORT", NULL };

/*
 * Non-zero when text ends the whole transaction with one of words
 * (optionally WORK or TRANSACTION): not ROLLBACK TO a savepoint, not
 * COMMIT PREPARED, not AND CHAIN.
 */
static int
pg_ends(const char *text, const char *const *words)
{
	const char	*p = NULL, *q;

	for (; *words != NULL && p == NULL; words++)
		p = pg_word(text, *words);
	if (p == NULL)
		return 0;
	if ((q = pg_word(p, "WORK")) != NULL ||
	    (q = pg_word(p, "TRANSACTION")) != NULL)
		p = q;
	while (isspace((unsigned char)*p))
		p++;
	return *p == '\0' || *p == ';';
}

/*
 * The outcome of a command.  A COMMIT of a transaction an earlier error
 * aborted is answered with success and the tag ROLLBACK: that is a
 * failure, of the earlier error's class when it is known.
 */
static enum db_rc
pg_result(struct pg_db *db, PGresult *res, const char *text)
{
	const char	*tag;

	if (res == NULL || (pq.PQresultStatus(res) != PGRES_COMMAND_OK &&
	    pq.PQresultStatus(res) != PGRES_TUPLES_OK))
		return pg_fail(db, res);
	tag = pq.PQcmdStatus(res);
	if ((pg_ends(text, pg_commit) && strcmp(tag, "COMMIT") != 0) ||
	    (strcmp(tag, "ROLLBACK") == 0 && pg_word(text, "ROLLBACK") ==
	    NULL && pg_word(text, "ABORT") == NULL)) {
		(void)snprintf(db->err, sizeof(db->err), "the transaction"
		    " was rolled back: an earlier statement failed");
		(void)db_fail(&db->base, db->txfail != DB_OK ? db->txfail :
		    DB_ERROR, db->txcons);
		pg_track(db, DB_OK);
		return db->base.last;
	}
	pg_track(db, DB_OK);
	return DB_OK;
}

/* A cancel request on its way (see pg_cancel()). */
struct pg_cancel {
	PGcancel	*cancel;
	int		 fd;	/* written to, then closed, once it is sent */
};

static void *
pg_cancel_run(void *arg)
{
	struct pg_cancel	*c = arg;
	char			 err[256];

	(void)pq.PQcancel(c->cancel, err, sizeof(err));
	(void)send(c->fd, "", 1, MSG_NOSIGNAL);
	(void)close(c->fd);
	pq.PQfreeCancel(c->cancel);
	free(c);
	return NULL;
}

/*
 * Asks the server to cancel the command in flight.  PQcancel() opens a
 * connection of its own and waits until the server has taken the
 * request; to a server gone without a word that could take minutes
 * (TCP's connection attempts), so it runs in a thread of its own, every
 * signal blocked, and the caller's wait stays bounded whatever it does.
 * Returns a descriptor that becomes readable once the request is sent
 * (or has failed), for the caller to close; -1 when there is none.
 */
static int
pg_cancel(struct pg_db *db)
{
	struct pg_cancel	*c;
	pthread_attr_t		 attr;
	pthread_t		 t;
	sigset_t		 all, old;
	int			 sv[2], started = 0;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return -1;
	if ((c->cancel = pq.PQgetCancel(db->pg)) == NULL ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		pq.PQfreeCancel(c->cancel);
		free(c);
		return -1;
	}
	c->fd = sv[1];
	(void)sigfillset(&all);
	if (pthread_attr_init(&attr) == 0) {
		if (pthread_attr_setdetachstate(&attr,
		    PTHREAD_CREATE_DETACHED) == 0 &&
		    pthread_sigmask(SIG_SETMASK, &all, &old) == 0) {
			started = pthread_create(&t, &attr, pg_cancel_run,
			    c) == 0;
			(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
		}
		(void)pthread_attr_destroy(&attr);
	}
	if (!started)
		(void)pg_cancel_run(c);	/* no thread: here, waited for */
	return sv[0];
}

/*
 * Drops the connection: the server is not waited for any more.  libpq
 * reads the end of it, and the connection is then lost (CONNECTION_BAD,
 * opened again later as any lost one).
 */
static void
pg_drop(struct pg_db *db)
{
	int	fd = pq.PQsocket(db->pg);

	if (fd >= 0)
		(void)shutdown(fd, SHUT_RDWR);
	(void)pq.PQconsumeInput(db->pg);
}

/* fd readable within ms (at most), EINTR aside: 1, else 0. */
static int
pg_wait(int fd, long long ms)
{
	struct pollfd	pfd;
	long long	end = db_mono_ms() + ms;
	int		n;

	do {
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		ms = end - db_mono_ms();
		if (ms < 0)
			ms = 0;
		n = poll(&pfd, 1, ms > INT_MAX ? INT_MAX : (int)ms);
	} while (n < 0 && errno == EINTR);
	return n > 0;
}

/*
 * Non-zero when text commits when it runs: a COMMIT, or any statement
 * outside a transaction, whose own commit waits for the synchronous
 * standbys just the same.
 */
static int
pg_commits(const struct pg_db *db, const char *text)
{
	return !db->tx || pg_ends(text, pg_commit);
}

/*
 * A client's bound on the wait for a command that commits (db/db.h says
 * how, and why): its deadline, and how far past it the wait has gone.
 */
struct pg_bound {
	long long	end;
	int		cfd;		/* see pg_cancel() */
	int		cancelled, dropped, gone;
};

static void
pg_bound_start(struct pg_db *db, struct pg_bound *b)
{
	memset(b, 0, sizeof(*b));
	b->cfd = -1;
	b->end = db_mono_ms() + db->commit_ms;
	db->warned = 0;
}

/*
 * The next result, as PQgetResult() returns it, waited for within b's
 * bound: past it the command is cancelled, and DB_PG_CANCEL_MS later
 * the connection dropped (then every result comes at once: an error).
 */
static PGresult *
pg_get(struct pg_db *db, struct pg_bound *b)
{
	for (;;) {
		if (b->gone || !pq.PQisBusy(db->pg))
			return pq.PQgetResult(db->pg);
		if (db_mono_ms() >= b->end) {
			if (b->cancelled) {
				pg_drop(db);
				b->dropped = b->gone = 1;
				continue;
			}
			/* Cancelled, it is waited for a while longer. */
			b->cfd = pg_cancel(db);
			b->cancelled = 1;
			b->end = db_mono_ms() + DB_PG_CANCEL_MS;
			continue;
		}
		(void)pg_wait(pq.PQsocket(db->pg), b->end - db_mono_ms());
		if (pq.PQconsumeInput(db->pg) == 0)
			b->gone = 1;
	}
}

/*
 * After the answers to a command that commits, rc its outcome: a WARNING
 * with success makes it DB_BUSY (db/db.h), a drop says so, and a cancel on
 * its way is seen taken.
 */
static enum db_rc
pg_bound_end(struct pg_db *db, struct pg_bound *b, enum db_rc rc)
{
	if (rc == DB_OK && db->warned) {
		(void)snprintf(db->err, sizeof(db->err), "commit not"
		    " acknowledged: committed here, perhaps not on a"
		    " synchronous standby (the server warned: %s)",
		    db->warning);
		rc = db->base.last = DB_BUSY;
	}
	if (b->dropped)
		(void)snprintf(db->err, sizeof(db->err), "no answer to a"
		    " commit within %d ms, nor %d ms after its cancel: the"
		    " connection is dropped, the outcome unknown",
		    db->commit_ms, DB_PG_CANCEL_MS);
	/*
	 * An answer came before the cancel reached the server: the
	 * cancel could still fall on the next command, unless the server
	 * has taken it (then it falls between commands, and is ignored).
	 * Not within the grace: the connection is dropped, the outcome
	 * kept; the next call connects again.
	 */
	if (b->cfd >= 0) {
		if (pq.PQstatus(db->pg) == CONNECTION_OK &&
		    !pg_wait(b->cfd, b->end - db_mono_ms()))
			pg_drop(db);
		(void)close(b->cfd);
	}
	return rc;
}

/*
 * Runs a command that commits (pg_commits()), the text or the prepared
 * statement st, bounded by the client (db/db.h says how, and why).  Its
 * outcome as pg_result() says it, but that a WARNING that came with an
 * answer of success makes it DB_BUSY; *out is the result, as PQexec()
 * would return it (the first error, else the last), NULL when none came.
 */
static enum db_rc
pg_commit_run(struct pg_db *db, const char *text, struct pg_stmt *st,
    PGresult **out)
{
	PGresult	*res = NULL, *r;
	struct pg_bound	 b;
	char		 name[24];
	int		 sent;
	enum db_rc	 rc;

	*out = NULL;
	if (st != NULL) {
		(void)snprintf(name, sizeof(name), "hb%zu", st->base.i);
		sent = pq.PQsendQueryPrepared(db->pg, name, st->nparams,
		    (const char *const *)st->vals, st->lens, st->fmts, 0);
	} else
		sent = pq.PQsendQuery(db->pg, text);
	if (!sent)
		return pg_fail(db, NULL);
	db->base.trips++;
	pg_bound_start(db, &b);
	/* Lost, the rest comes at once: an error, then the end. */
	while ((r = pg_get(db, &b)) != NULL) {
		if (res != NULL && pq.PQresultStatus(res) == PGRES_FATAL_ERROR)
			pg_res_free(r);
		else {
			pg_res_free(res);
			res = r;
		}
	}
	rc = pg_bound_end(db, &b, pg_result(db, res, st != NULL ? st->sql :
	    text));
	*out = res;
	return rc;
}

/* Runs the session's text on a connection just made. */
static enum db_rc
pg_session(struct pg_db *db)
{
	PGresult	*res;
	enum db_rc	 rc;

	db->base.trips++;
	res = pq.PQexec(db->pg, db->session);
	rc = pg_result(db, res, db->session);
	pg_res_free(res);
	return rc;
}

/*
 * A lost PostgreSQL connection, opened again when no transaction could
 * be cut in half by it: its prepared statements are gone with it.
 */
static enum db_rc
pg_revive(struct pg_db *db)
{
	size_t	i;

	if (pq.PQstatus(db->pg) == CONNECTION_OK)
		return DB_OK;
	pq.PQreset(db->pg);
	for (i = 0; i < db->base.n; i++) {
		pg_clear(pg_stmt_at(db, i));
		pg_stmt_at(db, i)->prepared = 0;
	}
	if (pq.PQstatus(db->pg) != CONNECTION_OK)
		return pg_fail(db, NULL);
	if (db->session != NULL)
		return pg_session(db);
	return DB_OK;
}

/*
 * Before a command.  A connection lost outside a transaction is opened
 * again.  One lost inside a transaction stays lost (DB_GONE, whatever
 * runs) until the caller rolls back: the work done so far is gone, and
 * what follows must not run without it, in autocommit.  That ROLLBACK
 * needs no server, which has rolled back already: *done says so.
 */
static enum db_rc
pg_ready(struct pg_db *db, const char *text, int *done)
{
	*done = 0;
	if (pq.PQstatus(db->pg) == CONNECTION_OK)
		return DB_OK;
	if (!db->tx)
		return pg_revive(db);
	if (pg_ends(text, pg_rollback)) {
		db->tx = 0;
		db->txfail = DB_OK;
		*done = 1;
		return DB_OK;
	}
	(void)snprintf(db->err, sizeof(db->err), "the connection was lost"
	    " inside a transaction, which is rolled back");
	return db->base.last = DB_GONE;
}

static const char *
pg_errmsg(const struct db *db)
{
	return ((const struct pg_db *)db)->err;
}

static enum db_rc
pg_exec(struct db *ddb, const char *text)
{
	struct pg_db	*db = pg_db(ddb);
	PGresult	*res;
	enum db_rc	 rc;
	int		 done;

	if ((rc = pg_ready(db, text, &done)) != DB_OK || done)
		return rc;
	if (pg_commits(db, text))
		rc = pg_commit_run(db, text, NULL, &res);
	else {
		db->base.trips++;
		res = pq.PQexec(db->pg, text);
		rc = pg_result(db, res, text);
	}
	pg_res_free(res);
	return rc;
}

static enum db_rc
pg_session_set(struct db *ddb, const char *text)
{
	struct pg_db	*db = pg_db(ddb);

	db->session = text;
	return pg_session(db);
}

static int
pg_in_tx(struct db *ddb)
{
	struct pg_db		*db = pg_db(ddb);
	PGTransactionStatusType	 t;

	/* A lost connection's transaction is open until rolled back. */
	if (pq.PQstatus(db->pg) != CONNECTION_OK)
		return db->tx;
	t = pq.PQtransactionStatus(db->pg);
	return t == PQTRANS_INTRANS || t == PQTRANS_INERROR ||
	    t == PQTRANS_ACTIVE;
}

/*
 * text with ?N written $N, outside quotes; *nparams is the highest N.
 * NULL when out of memory.
 */
static char *
pg_text(const char *text, int *nparams)
{
	char		*out, *o;
	const char	*p;
	char		 quote = 0;
	long		 v;

	*nparams = 0;
	if ((out = strdup(text)) == NULL)
		return NULL;
	for (p = text, o = out; *p != '\0'; p++) {
		*o++ = *p;
		if (quote != 0) {
			if (*p == quote)
				quote = 0;
			continue;
		}
		if (*p == '\'' || *p == '"') {
			quote = *p;
			continue;
		}
		if (*p != '?' || p[1] < '0' || p[1] > '9')
			continue;
		o[-1] = '$';
		v = strtol(p + 1, NULL, 10);
		if (v > *nparams && v < 1000)
			*nparams = (int)v;
	}
	*o = '\0';
	return out;
}

/* The statement's text in PostgreSQL's terms, and its parameter slots. */
static enum db_rc
pg_params(struct pg_stmt *st)
{
	const struct db_text	*t = &pg_of(st)->base.text[st->base.i];
	size_t			 n;

	if (st->sql != NULL)
		return DB_OK;
	if ((st->sql = pg_text(t->pg != NULL ? t->pg : t->sqlite,
	    &st->nparams)) == NULL)
		return DB_NOMEM;
	n = (size_t)st->nparams + 1;
	st->vals = calloc(n, sizeof(*st->vals));
	st->lens = calloc(n, sizeof(*st->lens));
	st->fmts = calloc(n, sizeof(*st->fmts));
	st->types = calloc(n, sizeof(*st->types));
	if (st->vals == NULL || st->lens == NULL || st->fmts == NULL ||
	    st->types == NULL) {
		free(st->sql);
		st->sql = NULL;
		st->nparams = 0;
		return DB_NOMEM;
	}
	return DB_OK;
}

/* Prepares the statement on the server, by name, on its first run. */
static enum db_rc
pg_prepare(struct pg_stmt *st)
{
	PGresult	*res;
	char		 name[24];
	enum db_rc	 rc = DB_OK;

	(void)snprintf(name, sizeof(name), "hb%zu", st->base.i);
	pg_of(st)->base.trips++;
	res = pq.PQprepare(pg_of(st)->pg, name, st->sql, st->nparams, st->types);
	if (res == NULL || pq.PQresultStatus(res) != PGRES_COMMAND_OK)
		rc = pg_fail(pg_of(st), res);
	pg_res_free(res);
	if (rc == DB_OK)
		st->prepared = 1;
	return rc;
}

/*
 * A statement is prepared on the server on its first db_step(), so that
 * a lock or a lost connection met then is reported there, with its class.
 */
static enum db_rc
pg_stmt_ready(struct db_stmt *dst)
{
	struct pg_stmt	*st = pg_stmt(dst);

	pg_clear(st);
	pg_unbind(st);
	return pg_of(st)->base.last = pg_params(st);
}

/* Slot idx of a PostgreSQL statement, emptied; NULL when out of range. */
static char **
pg_slot(struct pg_stmt *st, int idx)
{
	if (idx < 1 || idx > st->nparams)
		return NULL;
	pg_unset(st, idx - 1);
	return &st->vals[idx - 1];
}

static enum db_rc
pg_bind_int64(struct db_stmt *dst, int idx, int64_t v)
{
	char	**slot, buf[24];

	if ((slot = pg_slot(pg_stmt(dst), idx)) == NULL)
		return DB_ERROR;
	(void)snprintf(buf, sizeof(buf), "%lld", (long long)v);
	return (*slot = strdup(buf)) == NULL ? DB_NOMEM : DB_OK;
}

static enum db_rc
pg_bind_text(struct db_stmt *dst, int idx, const char *s)
{
	char	**slot;

	if ((slot = pg_slot(pg_stmt(dst), idx)) == NULL)
		return DB_ERROR;
	return (*slot = strdup(s)) == NULL ? DB_NOMEM : DB_OK;
}

static enum db_rc
pg_bind_blob(struct db_stmt *dst, int idx, const void *b, size_t len)
{
	struct pg_stmt	 *st = pg_stmt(dst);
	char		**slot;

	if ((slot = pg_slot(st, idx)) == NULL || len > INT32_MAX)
		return DB_ERROR;
	if ((*slot = malloc(len > 0 ? len : 1)) == NULL)
		return DB_NOMEM;
	if (len > 0)
		memcpy(*slot, b, len);
	st->lens[idx - 1] = (int)len;
	st->fmts[idx - 1] = 1;
	return DB_OK;
}

static enum db_rc
pg_bind_null(struct db_stmt *dst, int idx)
{
	return pg_slot(pg_stmt(dst), idx) == NULL ? DB_ERROR : DB_OK;
}

static enum db_rc
pg_run(struct pg_stmt *st)
{
	struct pg_db	*db = pg_of(st);
	char		 name[24];
	const char	*n;
	enum db_rc	 rc;
	int		 done;

	if ((rc = pg_ready(db, st->sql, &done)) != DB_OK)
		return rc;
	if (done) {
		st->nrows = 0;
		st->row = -1;
		return DB_OK;
	}
	if (!st->prepared && (rc = pg_prepare(st)) != DB_OK)
		return rc;
	if (pg_commits(db, st->sql))
		rc = pg_commit_run(db, NULL, st, &st->res);
	else {
		(void)snprintf(name, sizeof(name), "hb%zu", st->base.i);
		db->base.trips++;
		st->res = pq.PQexecPrepared(db->pg, name, st->nparams,
		    (const char *const *)st->vals, st->lens, st->fmts, 0);
		rc = pg_result(db, st->res, st->sql);
	}
	if (rc != DB_OK) {
		pg_clear(st);
		return rc;
	}
	st->nrows = pq.PQntuples(st->res);
	st->row = -1;
	n = pq.PQcmdTuples(st->res);
	st->base.changes = n[0] != '\0' ? strtoll(n, NULL, 10) : 0;
	return DB_OK;
}

/* Appends a command to the flight; -1 when out of memory. */
static int
pg_queue(struct pg_db *db, struct pg_stmt *st, int prepare)
{
	struct pg_sent	*q;
	size_t		 cap;

	if (db->nq == db->qcap) {
		cap = db->qcap > 0 ? 2 * db->qcap : 32;
		if ((q = reallocarray(db->q, cap, sizeof(*q))) == NULL)
			return -1;
		db->q = q;
		db->qcap = cap;
	}
	db->q[db->nq].st = st;
	db->q[db->nq].prepare = prepare;
	db->nq++;
	return 0;
}

/*
 * Sends a statement in the flight (pipeline mode, entered by the first):
 * prepared first, in the same flight, if the connection has not yet.
 * Nothing is waited for here.
 */
static enum db_rc
pg_send(struct db_stmt *dst)
{
	struct pg_stmt	*st = pg_stmt(dst);
	struct pg_db	*db = pg_of(st);
	char		 name[24];
	enum db_rc	 rc;
	int		 done;

	pg_clear(st);
	if (db->nq == 0) {
		if ((rc = pg_ready(db, st->sql, &done)) != DB_OK)
			return rc;
		if (done || pq.PQenterPipelineMode(db->pg) == 0)
			return pg_fail(db, NULL);
	}
	(void)snprintf(name, sizeof(name), "hb%zu", st->base.i);
	if (!st->prepared) {
		if (pg_queue(db, st, 1) != 0)
			return db->base.last = DB_NOMEM;
		if (pq.PQsendPrepare(db->pg, name, st->sql, st->nparams,
		    st->types) == 0)
			return pg_fail(db, NULL);
		st->prepared = 1;	/* unless its answer says otherwise */
	}
	if (pg_queue(db, st, 0) != 0)
		return db->base.last = DB_NOMEM;
	if (pq.PQsendQueryPrepared(db->pg, name, st->nparams,
	    (const char *const *)st->vals, st->lens, st->fmts, 0) == 0)
		return pg_fail(db, NULL);
	return DB_OK;
}

/* An answer of the flight for e, kept by its statement: see pg_run(). */
static enum db_rc
pg_answer(struct pg_db *db, const struct pg_sent *e, PGresult *r)
{
	struct pg_stmt	*st = e->st;
	const char	*n;
	enum db_rc	 rc;

	if (pq.PQresultStatus(r) == PGRES_PIPELINE_ABORTED) {
		if (e->prepare)
			st->prepared = 0;	/* skipped: never made */
		pg_res_free(r);
		return DB_ERROR;	/* the first failure says why */
	}
	if (e->prepare) {
		rc = pq.PQresultStatus(r) == PGRES_COMMAND_OK ? DB_OK :
		    pg_fail(db, r);
		if (rc != DB_OK)
			st->prepared = 0;
		pg_res_free(r);
		return rc;
	}
	if ((rc = pg_result(db, r, st->sql)) != DB_OK) {
		pg_res_free(r);
		return rc;
	}
	pg_clear(st);
	st->res = r;
	st->nrows = pq.PQntuples(r);
	st->row = -1;
	n = pq.PQcmdTuples(r);
	st->base.changes = n[0] != '\0' ? strtoll(n, NULL, 10) : 0;
	return DB_OK;
}

/*
 * Lands the flight: a Sync, then every answer in the order sent, each
 * command's result followed by a NULL, and the Sync's own.  A COMMIT
 * (commit), or a flight begun outside a transaction (its statements
 * commit), is waited for within a COMMIT's bound.  The first failure
 * wins: the server skips what follows it (PGRES_PIPELINE_ABORTED).
 */
static enum db_rc
pg_land(struct db *ddb, struct db_stmt *commit, size_t *failed)
{
	struct pg_db	*db = pg_db(ddb);
	struct pg_bound	 b;
	PGresult	*r;
	enum db_rc	 rc, first = DB_OK;
	enum db_constraint cons = DB_C_NONE;	/* first's */
	size_t		 i, k = 0, nq;
	int		 bounded = commit != NULL || !db->tx, synced = 0;

	*failed = 0;
	if (db->nq == 0)
		return DB_OK;
	if (commit != NULL && pg_send(commit) != DB_OK)
		first = db->base.last;
	pg_bound_start(db, &b);
	if (pq.PQpipelineSync(db->pg) == 0 && first == DB_OK)
		first = pg_fail(db, NULL);
	db->base.trips++;
	nq = db->nq;
	for (i = 0; i < nq && !synced; i++) {
		/* A NULL ends each command's results. */
		while ((r = bounded ? pg_get(db, &b) : pq.PQgetResult(db->pg)) ==
		    NULL && pq.PQstatus(db->pg) == CONNECTION_OK)
			continue;
		if (r == NULL || pq.PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
			synced = r != NULL;
			pg_res_free(r);
			if (first == DB_OK) {
				first = pg_fail(db, NULL);
				*failed = k;
			}
			break;
		}
		rc = pg_answer(db, &db->q[i], r);
		if (rc != DB_OK && first == DB_OK) {
			first = rc;
			cons = db->base.cons;
			*failed = k;
		}
		if (!db->q[i].prepare)
			k++;
	}
	/* The Sync's answer, unless the connection is lost. */
	while (!synced && pq.PQstatus(db->pg) == CONNECTION_OK) {
		if ((r = bounded ? pg_get(db, &b) : pq.PQgetResult(db->pg)) ==
		    NULL)
			continue;
		synced = pq.PQresultStatus(r) == PGRES_PIPELINE_SYNC;
		pg_res_free(r);
	}
	for (; i < nq; i++)
		if (db->q[i].prepare)
			db->q[i].st->prepared = 0;
	db->nq = 0;
	if (pq.PQstatus(db->pg) == CONNECTION_OK)
		(void)pq.PQexitPipelineMode(db->pg);
	pg_track(db, first);
	if (commit == NULL)
		db->warned = 0;		/* only a COMMIT's warning counts */
	if (bounded)
		first = pg_bound_end(db, &b, first);
	if (first != DB_OK)
		(void)db_fail(&db->base, first, cons);
	return first;
}

static enum db_rc
pg_step(struct db_stmt *dst)
{
	struct pg_stmt	*st = pg_stmt(dst);
	enum db_rc	 rc;

	if (st->res == NULL && (rc = pg_run(st)) != DB_OK)
		return rc;
	pg_blob_free(st);
	if (++st->row < st->nrows)
		return DB_ROW;
	pg_clear(st);
	return DB_DONE;
}

static void
pg_reset(struct db_stmt *st)
{
	pg_clear(pg_stmt(st));
}

static int
pg_col_null(struct db_stmt *dst, int col)
{
	struct pg_stmt	*st = pg_stmt(dst);

	return st->res == NULL || pq.PQgetisnull(st->res, st->row, col);
}

static int64_t
pg_col_int64(struct db_stmt *dst, int col)
{
	struct pg_stmt	*st = pg_stmt(dst);

	if (pg_col_null(dst, col))
		return 0;
	return strtoll(pq.PQgetvalue(st->res, st->row, col), NULL, 10);
}

static const char *
pg_col_text(struct db_stmt *dst, int col)
{
	struct pg_stmt	*st = pg_stmt(dst);

	if (pg_col_null(dst, col))
		return "";
	return pq.PQgetvalue(st->res, st->row, col);
}

static const void *
pg_col_blob(struct db_stmt *dst, int col, size_t *len)
{
	struct pg_stmt	*st = pg_stmt(dst);

	if (pg_col_null(dst, col))
		return "";
	pg_blob_free(st);
	/* Text results carry bytea as "\x" and hex. */
	st->blob = pq.PQunescapeBytea((const unsigned char *)pq.PQgetvalue(st->res,
	    st->row, col), len);
	if (st->blob == NULL) {
		*len = 0;
		return NULL;
	}
	st->bloblen = *len;
	return st->blob;
}

/*
 * Writers work at once: a transaction serialised with others on a key
 * takes its advisory lock, which it holds until it ends, in the same
 * round trip as its BEGIN.
 */
static enum db_rc
pg_begin(struct db *db, enum db_begin kind, int64_t lock)
{
	char	text[80];

	(void)kind;
	if (lock == 0)
		return pg_exec(db, "BEGIN");
	(void)snprintf(text, sizeof(text), "BEGIN;"
	    " SELECT pg_advisory_xact_lock(%lld)", (long long)lock);
	return pg_exec(db, text);
}

const struct db_ops db_pg_ops = {
	.kind = DB_POSTGRES,
	.name = "postgresql",
	.caps = DB_CAP_SERVER | DB_CAP_ROW_LOCKS,
	.aborts_tx = 1,
	.db_size = sizeof(struct pg_db),
	.stmt_size = sizeof(struct pg_stmt),
	.open = pg_open,
	.begin = pg_begin,
	.stmt_free = pg_stmt_free,
	.close = pg_close,
	.session = pg_session_set,
	.errmsg = pg_errmsg,
	.exec = pg_exec,
	.in_tx = pg_in_tx,
	.ready = pg_stmt_ready,
	.bind_int64 = pg_bind_int64,
	.bind_text = pg_bind_text,
	.bind_blob = pg_bind_blob,
	.bind_null = pg_bind_null,
	.step = pg_step,
	.reset = pg_reset,
	.col_null = pg_col_null,
	.col_int64 = pg_col_int64,
	.col_text = pg_col_text,
	.col_blob = pg_col_blob,
	.send = pg_send,
	.land = pg_land,
};
