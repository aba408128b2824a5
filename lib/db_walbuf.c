/*
 * db_walbuf.c: a SQLite VFS over the default one that writes a
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
 * (DB_OPEN_WAL_GATHER, store.c's choice): at NORMAL a commit is published
 * without an xSync, and its frames must be in the file by then.  Every
 * other file, and every other call, goes to the default VFS as it is.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "db_int.h"

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

const char *
db_walbuf_vfs(void)
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
