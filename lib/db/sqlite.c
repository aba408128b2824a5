/*
 * db/sqlite.c: db/db.h's SQLite backend, SQLite called directly: a file
 * opened with its flags, statements prepared on first use and kept, a
 * busy handler that is fair between writers.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>
#include <sqlite3.h>

#include "db/db_int.h"

/* db/db.h's flags that are not SQLite's. */
#define LITE_OURS	(DB_OPEN_WAL_GATHER | DB_OPEN_FKEYS)

_Static_assert((LITE_OURS & (SQLITE_OPEN_READONLY |
    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW |
    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_URI)) == 0,
    "DB_OPEN_WAL_GATHER and DB_OPEN_FKEYS are no SQLite flags");
_Static_assert(DB_OPEN_READONLY == SQLITE_OPEN_READONLY &&
    DB_OPEN_READWRITE == SQLITE_OPEN_READWRITE &&
    DB_OPEN_CREATE == SQLITE_OPEN_CREATE, "db/db.h's flags are SQLite's");

struct lite_stmt {
	struct db_stmt	 st;
	sqlite3_stmt	*lite;
};

struct lite_db {
	struct db	 db;
	sqlite3		*lite;
	char		*path;		/* the file opened */
	dev_t		 dev;		/* ... and its device and inode */
	ino_t		 ino;
	int		 busy_ms;	/* see db_busy() */
	long long	 busy_since;	/* ms, first busy call */
	int		 writer;	/* opened DB_OPEN_READWRITE */
};

static struct lite_db *
lite_db(struct db *db)
{
	return (struct lite_db *)db;
}

static const struct lite_db *
lite_cdb(const struct db *db)
{
	return (const struct lite_db *)db;
}

static sqlite3_stmt *
lite_stmt(const struct db_stmt *st)
{
	return ((const struct lite_stmt *)st)->lite;
}

/* The class of a SQLite result code, extended or primary. */
static enum db_rc
lite_rc(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
		return DB_OK;
	case SQLITE_ROW:
		return DB_ROW;
	case SQLITE_DONE:
		return DB_DONE;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return DB_BUSY;
	case SQLITE_CONSTRAINT:
		return DB_CONSTRAINT;
	case SQLITE_READONLY:
		return DB_READONLY;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return DB_DENIED;
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
		return DB_IOERR;
	case SQLITE_FULL:
		return DB_FULL;
	case SQLITE_NOMEM:
		return DB_NOMEM;
	default:
		return DB_ERROR;
	}
}

/* Which constraint an extended SQLITE_CONSTRAINT_* code names. */
static enum db_constraint
lite_cons(int rc)
{
	switch (rc) {
	case SQLITE_CONSTRAINT_PRIMARYKEY:
	case SQLITE_CONSTRAINT_UNIQUE:
	case SQLITE_CONSTRAINT_ROWID:
		return DB_C_UNIQUE;
	case SQLITE_CONSTRAINT_FOREIGNKEY:
		return DB_C_REFERENCE;
	default:	/* CHECK, NOTNULL, DATATYPE, a trigger's RAISE() */
		return DB_C_CHECK;
	}
}

/*
 * Records the failure of a call on db's connection and says its class.
 * SQLite opens a file it may not write read-only without a word: a write
 * that finds it so, on a connection opened to write, is this user's lack
 * of permission (DB_DENIED), not a read-only connection's refusal.
 */
static enum db_rc
lite_fail(struct db *db, int code)
{
	enum db_rc	rc = lite_rc(code);

	if (rc == DB_READONLY && lite_db(db)->writer)
		rc = DB_DENIED;
	return db_fail(db, rc, rc == DB_CONSTRAINT ? lite_cons(code) :
	    DB_C_NONE);
}

static void
lite_stmt_free(struct db_stmt *st)
{
	struct lite_stmt	*ls = (struct lite_stmt *)st;

	if (ls->lite != NULL)
		sqlite3_finalize(ls->lite);
	memset(ls, 0, sizeof(*ls));
}

static void
lite_close(struct db *db)
{
	struct lite_db	*l = lite_db(db);

	sqlite3_close(l->lite);
	free(l->path);
}

/*
 * The files SQLite keeps beside a database, its rollback journal, its WAL
 * and the WAL's index, hold pages it writes into the database: a hot
 * journal is played back into it at the next open, by whoever opens it
 * to write.  In a directory another user may write (the data directory
 * is the service user's to add files to), such a file could be one that
 * user planted for root's tool to replay into root's config.db, or a
 * link to a file root would then write.  So SQLite opens them through
 * this guard, which takes one only when it is a plain file with one name,
 * reached without a symbolic link, owned by the database file's owner or
 * by this process's user (it made it); else the open fails (EACCES), and
 * so does the statement that needed it.  It judges the file it opened, by
 * its descriptor: nothing can be put in its place after the look.
 */
static int	(*real_open)(const char *, int, int);

const char *const db_companion_sfx[DB_COMPANIONS] = {
	"-journal", "-wal", "-shm"
};

int
db_companion_ok(const struct stat *sb, uid_t db_owner)
{
	return S_ISREG(sb->st_mode) && sb->st_nlink == 1 &&
	    (sb->st_uid == db_owner || sb->st_uid == geteuid());
}

/* For a companion's name, the length of its database's; else 0. */
static size_t
beside(const char *path)
{
	size_t	n = strlen(path), i, k;

	for (i = 0; i < DB_COMPANIONS; i++) {
		k = strlen(db_companion_sfx[i]);
		if (n > k && strcmp(path + n - k, db_companion_sfx[i]) == 0)
			return n - k;
	}
	return 0;
}

static int
guard_open(const char *path, int flags, int mode)
{
	struct stat	sb, db;
	char		main_path[PATH_MAX];
	size_t		n;
	int		fd, ok;

	if ((n = beside(path)) == 0)
		return real_open(path, flags, mode);
	if ((fd = real_open(path, flags | O_NOFOLLOW, mode)) < 0)
		return fd;
	ok = n < sizeof(main_path) && fstat(fd, &sb) == 0;
	if (ok) {
		memcpy(main_path, path, n);
		main_path[n] = '\0';
		/* No database to own it: this process's alone. */
		ok = db_companion_ok(&sb, stat(main_path, &db) == 0 ?
		    db.st_uid : geteuid());
	}
	if (!ok) {
		(void)close(fd);
		errno = EACCES;
		return -1;
	}
	return fd;
}

/*
 * Before SQLite initialises: no memory statistics.  They take a mutex
 * that every connection of the process shares on every allocation, and
 * the threaded responder's connections would queue on it.  The guard
 * goes into the unix VFS's table of system calls, which every unix VFS
 * (the WAL gatherer's too) shares.
 */
/*
 * Registers, once, the VFS that gathers a transaction's WAL frames into
 * one write (below), and returns its name; NULL when it cannot be.
 */
static const char *walbuf_vfs_name(void);

/* The VFS of DB_OPEN_WAL_GATHER, or NULL: SQLite's default. */
static const char	*gather_vfs;

/* Non-zero once the guard stands: no file is opened without it. */
static int		 guarded;

static void
lite_configure(void)
{
	sqlite3_vfs	*vfs;

	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if ((vfs = sqlite3_vfs_find(NULL)) != NULL && vfs->iVersion >= 3 &&
	    (real_open = (int (*)(const char *, int, int))
	    vfs->xGetSystemCall(vfs, "open")) != NULL &&
	    vfs->xSetSystemCall(vfs, "open",
	    (sqlite3_syscall_ptr)guard_open) == SQLITE_OK)
		guarded = 1;
	gather_vfs = walbuf_vfs_name();
}

enum db_rc
db_open_sqlite(const char *path, int flags, const struct db_text *text,
    size_t n, struct db **out)
{
	static pthread_once_t	 once = PTHREAD_ONCE_INIT;
	struct stat		 sb;
	struct db		*db;
	struct lite_db		*l;
	int			 rc;

	*out = NULL;
	(void)pthread_once(&once, lite_configure);
	if (!guarded)
		return DB_ERROR;
	if ((db = db_new(&db_sqlite_ops, text, n)) == NULL ||
	    (lite_db(db)->path = strdup(path)) == NULL) {
		db_close(db);
		return DB_NOMEM;
	}
	l = lite_db(db);
	l->writer = (flags & DB_OPEN_READWRITE) != 0;
	/* One thread at a time uses a connection: no mutex of its own. */
	rc = sqlite3_open_v2(path, &l->lite, (flags & ~LITE_OURS) |
	    SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
	    flags & DB_OPEN_WAL_GATHER ? gather_vfs : NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_extended_result_codes(l->lite, 1);
	/*
	 * A file another user writes (the service user's state.db, opened
	 * by root's tool) may hold any schema: nothing in it runs a
	 * function with side effects, and no statement reaches past SQL
	 * into its pages.
	 */
	if (rc == SQLITE_OK)
		rc = sqlite3_db_config(l->lite, SQLITE_DBCONFIG_DEFENSIVE, 1,
		    NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_db_config(l->lite, SQLITE_DBCONFIG_TRUSTED_SCHEMA,
		    0, NULL);
	/* Per connection; set either way, whatever SQLite was built with. */
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(l->lite, flags & DB_OPEN_FKEYS ?
		    "PRAGMA foreign_keys=ON" : "PRAGMA foreign_keys=OFF", NULL,
		    NULL, NULL);
	/*
	 * The file SQLite opened is the one stat sees now, unless it was
	 * replaced and put back between the two: then the next
	 * db_same_file() says so.
	 */
	if (rc == SQLITE_OK && stat(path, &sb) != 0)
		rc = SQLITE_CANTOPEN;
	if (rc != SQLITE_OK) {
		db_close(db);
		return lite_rc(rc);
	}
	l->dev = sb.st_dev;
	l->ino = sb.st_ino;
	*out = db;
	return DB_OK;
}

static int
lite_same_file(const struct db *db, struct stat *out)
{
	const struct lite_db	*l = lite_cdb(db);
	struct stat		 sb, *p = out != NULL ? out : &sb;

	return stat(l->path, p) == 0 && p->st_dev == l->dev &&
	    p->st_ino == l->ino && S_ISREG(p->st_mode);
}

static int
busy_cb(void *arg, int count)
{
	struct lite_db	*l = arg;
	struct timespec	 ts;

	if (count == 0)
		l->busy_since = db_mono_ms();
	else if (db_mono_ms() - l->busy_since >= l->busy_ms)
		return 0;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(250 + randombytes_uniform(1000)) * 1000;
	nanosleep(&ts, NULL);
	return 1;
}

static void
lite_busy(struct db *db, int ms)
{
	struct lite_db	*l = lite_db(db);

	l->busy_ms = ms;
	sqlite3_busy_handler(l->lite, ms > 0 ? busy_cb : NULL, l);
}

static int
lite_readonly(struct db *db)
{
	return sqlite3_db_readonly(lite_db(db)->lite, "main") == 1;
}

static enum db_rc
lite_checkpoint(struct db *db, int pages)
{
	sqlite3		*lite = lite_db(db)->lite;
	enum db_rc	 rc;
	int		 code;

	if (pages > 0)
		code = sqlite3_wal_autocheckpoint(lite, pages);
	else
		code = sqlite3_wal_checkpoint_v2(lite, NULL,
		    SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	rc = lite_rc(code);
	if (rc != DB_OK)
		rc = lite_fail(db, code);
	return rc;
}

static const char *
lite_errmsg(const struct db *db)
{
	return sqlite3_errmsg(lite_cdb(db)->lite);
}

static enum db_rc
lite_exec(struct db *db, const char *text)
{
	int	code;

	if ((code = sqlite3_exec(lite_db(db)->lite, text, NULL, NULL,
	    NULL)) != SQLITE_OK)
		return lite_fail(db, code);
	return DB_OK;
}

static int
lite_in_tx(struct db *db)
{
	return !sqlite3_get_autocommit(lite_db(db)->lite);
}

/* The bytes db's page cache holds. */
static size_t
lite_cache_used(sqlite3 *lite)
{
	int	cur = 0, hi = 0;

	return sqlite3_db_status(lite, SQLITE_DBSTATUS_CACHE_USED, &cur, &hi,
	    0) == SQLITE_OK && cur > 0 ? (size_t)cur : 0;
}

static size_t
lite_shrink(struct db *db)
{
	sqlite3	*lite = lite_db(db)->lite;
	size_t	 before, after;

	if (lite_in_tx(db))
		return 0;
	before = lite_cache_used(lite);
	(void)sqlite3_db_release_memory(lite);
	after = lite_cache_used(lite);
	return before > after ? before - after : 0;
}

/* Prepared on first use, kept; reset and unbound after. */
static enum db_rc
lite_ready(struct db_stmt *st)
{
	struct lite_stmt	*ls = (struct lite_stmt *)st;

	if (ls->lite != NULL) {
		sqlite3_reset(ls->lite);
		sqlite3_clear_bindings(ls->lite);
		return DB_OK;
	}
	return lite_rc(sqlite3_prepare_v3(lite_db(st->db)->lite,
	    st->db->text[st->i].sqlite, -1, SQLITE_PREPARE_PERSISTENT,
	    &ls->lite, NULL));
}

static enum db_rc
lite_bind_int64(struct db_stmt *st, int idx, int64_t v)
{
	return lite_rc(sqlite3_bind_int64(lite_stmt(st), idx, v));
}

static enum db_rc
lite_bind_text(struct db_stmt *st, int idx, const char *s)
{
	return lite_rc(sqlite3_bind_text(lite_stmt(st), idx, s, -1,
	    SQLITE_TRANSIENT));
}

static enum db_rc
lite_bind_blob(struct db_stmt *st, int idx, const void *b, size_t len)
{
	return lite_rc(sqlite3_bind_blob64(lite_stmt(st), idx, b, len,
	    SQLITE_TRANSIENT));
}

static enum db_rc
lite_bind_null(struct db_stmt *st, int idx)
{
	return lite_rc(sqlite3_bind_null(lite_stmt(st), idx));
}

static enum db_rc
lite_step(struct db_stmt *st)
{
	enum db_rc	rc;
	int		code;

	rc = lite_rc(code = sqlite3_step(lite_stmt(st)));
	if (rc == DB_DONE)
		st->changes = sqlite3_changes64(lite_db(st->db)->lite);
	if (rc != DB_ROW) {
		sqlite3_reset(lite_stmt(st));
		if (rc != DB_DONE)
			rc = lite_fail(st->db, code);
	}
	return rc;
}

static void
lite_reset(struct db_stmt *st)
{
	sqlite3_reset(lite_stmt(st));
}

static int
lite_col_null(struct db_stmt *st, int col)
{
	return sqlite3_column_type(lite_stmt(st), col) == SQLITE_NULL;
}

static int64_t
lite_col_int64(struct db_stmt *st, int col)
{
	return sqlite3_column_int64(lite_stmt(st), col);
}

static const char *
lite_col_text(struct db_stmt *st, int col)
{
	const unsigned char	*s = sqlite3_column_text(lite_stmt(st), col);

	return s != NULL ? (const char *)s : "";
}

static const void *
lite_col_blob(struct db_stmt *st, int col, size_t *len)
{
	const void	*b = sqlite3_column_blob(lite_stmt(st), col);

	*len = (size_t)sqlite3_column_bytes(lite_stmt(st), col);
	return b != NULL ? b : "";
}

/*
 * db_open() for a file: its busy handler and page cache come with it (a
 * server has neither to set).
 */
static enum db_rc
lite_open(const char *path, const struct db_conf *conf,
    const struct db_text *text, size_t n, struct db **out, char *why,
    size_t len)
{
	enum db_rc	rc;
	char		sql[48];

	/* Its class says all a file's failure to open can. */
	if ((rc = db_open_sqlite(path, conf->flags, text, n, out)) != DB_OK)
		return rc;
	lite_busy(*out, conf->busy_ms);
	if (conf->cache_kib > 0 &&
	    (snprintf(sql, sizeof(sql), "PRAGMA cache_size=-%d",
	    conf->cache_kib) >= (int)sizeof(sql) ||
	    (rc = lite_exec(*out, sql)) != DB_OK)) {
		(void)snprintf(why, len, "%s: %s", path, lite_errmsg(*out));
		db_close(*out);
		*out = NULL;
		return rc != DB_OK ? rc : DB_ERROR;
	}
	return DB_OK;
}

/*
 * A writer takes the file's one write lock at once, so that nothing it
 * reads can be outdated by another writer; the file's lock serialises
 * everything a lock key would.
 */
static enum db_rc
lite_begin(struct db *db, enum db_begin kind, int64_t lock)
{
	(void)lock;
	return lite_exec(db, kind == DB_BEGIN_WRITE ? "BEGIN IMMEDIATE" :
	    "BEGIN");
}

const struct db_ops db_sqlite_ops = {
	.kind = DB_SQLITE,
	.name = "sqlite",
	.caps = DB_CAP_FILE,
	.aborts_tx = 0,
	.db_size = sizeof(struct lite_db),
	.stmt_size = sizeof(struct lite_stmt),
	.open = lite_open,
	.begin = lite_begin,
	.stmt_free = lite_stmt_free,
	.close = lite_close,
	.same_file = lite_same_file,
	.busy = lite_busy,
	.readonly = lite_readonly,
	.checkpoint = lite_checkpoint,
	.shrink = lite_shrink,
	.errmsg = lite_errmsg,
	.exec = lite_exec,
	.in_tx = lite_in_tx,
	.ready = lite_ready,
	.bind_int64 = lite_bind_int64,
	.bind_text = lite_bind_text,
	.bind_blob = lite_bind_blob,
	.bind_null = lite_bind_null,
	.step = lite_step,
	.reset = lite_reset,
	.col_null = lite_col_null,
	.col_int64 = lite_col_int64,
	.col_text = lite_col_text,
	.col_blob = lite_col_blob,
};

/* ---- the WAL gatherer (DB_OPEN_WAL_GATHER) ---- */

/*
 * The WAL gatherer: a SQLite VFS over the default one that writes a
 * transaction's WAL frames with one system call instead of two a frame.
 *
 * SQLite writes each frame of the write-ahead log with two writes, its
 * 24-byte header and then its page: a batch that commits 40 pages makes
 * 80 calls.  A transaction's frames follow each other in the file, and at
 * synchronous=FULL the log is synced (xSync) before the commit is made
 * visible to any other connection: only then is the WAL index, which
 * says which frames exist, updated.  So the writes are kept here, in
 * order, while each one continues the last, and written at once: before
 * xSync, before any other call on the file (a read, its size, a
 * truncation, a lock, a close), when a write does not continue them (a
 * frame written again in place), or when the buffer is full.  A write
 * that fails is reported by the call that made it, xSync among them:
 * SQLite then publishes nothing, and the transaction fails.
 *
 * Only the WAL is buffered, and only for connections at synchronous=FULL
 * (DB_OPEN_WAL_GATHER, store/store.c's choice): at NORMAL a commit is published
 * without an xSync, and its frames must be in the file by then.  Every
 * other file, and every other call, goes to the default VFS as it is.
 */
/*
 * The most bytes kept: the most the default VFS writes with one call (it
 * masks a larger write's length with 0x1ffff, and writes the rest with
 * more calls), 31 frames of 4 KiB pages and their headers.
 */
#define WALBUF_MAX	0x1ffff

struct walbuf {
	sqlite3_file	 base;		/* its methods: walbuf_methods */
	sqlite3_file	*real;		/* the default VFS's file, after us */
	unsigned char	*buf;		/* WALBUF_MAX bytes, once written */
	sqlite3_int64	 off;		/* where buf[0] goes in the file */
	size_t		 len;		/* bytes kept */
};

/* Each struct walbuf is followed by the real file, suitably aligned. */
#define WALBUF_SIZE	((sizeof(struct walbuf) + 15) & ~(size_t)15)

static sqlite3_vfs	 walbuf_vfs;
static sqlite3_vfs	*walbuf_real;

static sqlite3_file *
real(sqlite3_file *f)
{
	return ((struct walbuf *)f)->real;
}

/* Writes what is kept; the bytes are let go whatever the outcome. */
static int
flush(sqlite3_file *f)
{
	struct walbuf	*w = (struct walbuf *)f;
	size_t		 len = w->len;

	if (len == 0)
		return SQLITE_OK;
	w->len = 0;
	return w->real->pMethods->xWrite(w->real, w->buf, (int)len, w->off);
}

static int
wb_close(sqlite3_file *f)
{
	struct walbuf	*w = (struct walbuf *)f;
	int		 rc, rc2;

	rc = flush(f);
	rc2 = w->real->pMethods->xClose(w->real);
	free(w->buf);
	w->buf = NULL;
	return rc != SQLITE_OK ? rc : rc2;
}

static int
wb_read(sqlite3_file *f, void *p, int amt, sqlite3_int64 off)
{
	int	rc;

	if ((rc = flush(f)) != SQLITE_OK)
		return rc;
	return real(f)->pMethods->xRead(real(f), p, amt, off);
}

static int
wb_write(sqlite3_file *f, const void *p, int amt, sqlite3_int64 off)
{
	struct walbuf	*w = (struct walbuf *)f;
	size_t		 n = (size_t)amt;
	int		 rc;

	if (amt <= 0)
		return w->real->pMethods->xWrite(w->real, p, amt, off);
	if (w->len > 0 && off == w->off + (sqlite3_int64)w->len &&
	    w->len + n <= WALBUF_MAX) {
		memcpy(w->buf + w->len, p, n);
		w->len += n;
		return SQLITE_OK;
	}
	if ((rc = flush(f)) != SQLITE_OK)
		return rc;
	if (n > WALBUF_MAX ||
	    (w->buf == NULL && (w->buf = malloc(WALBUF_MAX)) == NULL))
		return w->real->pMethods->xWrite(w->real, p, amt, off);
	memcpy(w->buf, p, n);
	w->off = off;
	w->len = n;
	return SQLITE_OK;
}

static int
wb_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	int	rc;

	if ((rc = flush(f)) != SQLITE_OK)
		return rc;
	return real(f)->pMethods->xTruncate(real(f), size);
}

static int
wb_sync(sqlite3_file *f, int flags)
{
	int	rc;

	if ((rc = flush(f)) != SQLITE_OK)
		return rc;
	return real(f)->pMethods->xSync(real(f), flags);
}

static int
wb_size(sqlite3_file *f, sqlite3_int64 *size)
{
	int	rc;

	if ((rc = flush(f)) != SQLITE_OK)
		return rc;
	return real(f)->pMethods->xFileSize(real(f), size);
}

static int
wb_lock(sqlite3_file *f, int level)
{
	int	rc;

	if ((rc = flush(f)) != SQLITE_OK)
		return rc;
	return real(f)->pMethods->xLock(real(f), level);
}

static int
wb_unlock(sqlite3_file *f, int level)
{
	int	rc;

	if ((rc = flush(f)) != SQLITE_OK)
		return rc;
	return real(f)->pMethods->xUnlock(real(f), level);
}

static int
wb_reserved(sqlite3_file *f, int *out)
{
	int	rc;

	if ((rc = flush(f)) != SQLITE_OK)
		return rc;
	return real(f)->pMethods->xCheckReservedLock(real(f), out);
}

static int
wb_control(sqlite3_file *f, int op, void *arg)
{
	int	rc;

	if ((rc = flush(f)) != SQLITE_OK)
		return rc;
	return real(f)->pMethods->xFileControl(real(f), op, arg);
}

static int
wb_sector(sqlite3_file *f)
{
	return real(f)->pMethods->xSectorSize(real(f));
}

static int
wb_device(sqlite3_file *f)
{
	return real(f)->pMethods->xDeviceCharacteristics(real(f));
}

/* The WAL itself maps no shared memory: asked anyway, as the real file. */
static int
wb_shm_map(sqlite3_file *f, int page, int size, int extend,
    void volatile **pp)
{
	if (real(f)->pMethods->iVersion < 2)
		return SQLITE_IOERR_SHMMAP;
	return real(f)->pMethods->xShmMap(real(f), page, size, extend, pp);
}

static int
wb_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	if (real(f)->pMethods->iVersion < 2)
		return SQLITE_IOERR_SHMLOCK;
	return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
}

static void
wb_shm_barrier(sqlite3_file *f)
{
	if (real(f)->pMethods->iVersion >= 2)
		real(f)->pMethods->xShmBarrier(real(f));
}

static int
wb_shm_unmap(sqlite3_file *f, int del)
{
	if (real(f)->pMethods->iVersion < 2)
		return SQLITE_OK;
	return real(f)->pMethods->xShmUnmap(real(f), del);
}

static int
wb_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp)
{
	int	rc;

	*pp = NULL;
	if (real(f)->pMethods->iVersion < 3)
		return SQLITE_OK;
	if ((rc = flush(f)) != SQLITE_OK)
		return rc;
	return real(f)->pMethods->xFetch(real(f), off, amt, pp);
}

static int
wb_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	if (real(f)->pMethods->iVersion < 3)
		return SQLITE_OK;
	return real(f)->pMethods->xUnfetch(real(f), off, p);
}

static const sqlite3_io_methods walbuf_methods = {
	3,
	wb_close, wb_read, wb_write, wb_truncate, wb_sync, wb_size,
	wb_lock, wb_unlock, wb_reserved, wb_control, wb_sector, wb_device,
	wb_shm_map, wb_shm_lock, wb_shm_barrier, wb_shm_unmap,
	wb_fetch, wb_unfetch
};

static int
wb_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags,
    int *out)
{
	struct walbuf	*w = (struct walbuf *)f;
	int		 rc;

	(void)vfs;
	/* Anything but a WAL is the default VFS's own, in the same memory. */
	if (!(flags & SQLITE_OPEN_WAL))
		return walbuf_real->xOpen(walbuf_real, name, f, flags, out);
	memset(w, 0, sizeof(*w));
	w->real = (sqlite3_file *)((unsigned char *)f + WALBUF_SIZE);
	memset(w->real, 0, (size_t)walbuf_real->szOsFile);
	rc = walbuf_real->xOpen(walbuf_real, name, w->real, flags, out);
	if (rc != SQLITE_OK) {
		if (w->real->pMethods != NULL)
			(void)w->real->pMethods->xClose(w->real);
		w->base.pMethods = NULL;
		return rc;
	}
	w->base.pMethods = &walbuf_methods;
	return SQLITE_OK;
}

static const char *
walbuf_vfs_name(void)
{
	if (walbuf_real == NULL) {
		if ((walbuf_real = sqlite3_vfs_find(NULL)) == NULL)
			return NULL;
		/* The default's own methods, but for the file and its size. */
		walbuf_vfs = *walbuf_real;
		walbuf_vfs.pNext = NULL;
		walbuf_vfs.zName = "hookbox-walbuf";
		walbuf_vfs.szOsFile = (int)WALBUF_SIZE + walbuf_real->szOsFile;
		walbuf_vfs.xOpen = wb_open;
		if (sqlite3_vfs_register(&walbuf_vfs, 0) != SQLITE_OK) {
			walbuf_real = NULL;
			return NULL;
		}
	}
	return walbuf_vfs.zName;
}
