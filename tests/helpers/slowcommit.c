/*
 * slowcommit.c: an LD_PRELOAD shim for tests/e2e/group.sh.  The first write
 * after each fsync() or fdatasync() (SQLite's pwrite64()) waits SLOW_MS
 * first: a COMMIT's first write to the WAL, so that a writer committing
 * batch after batch spends most of its time inside COMMIT with nothing
 * of the batch in the file yet, and a kill from outside lands there, by
 * design rather than by luck.  What the process does is not changed,
 * only when.
 *
 * Built without the sanitizers: it is loaded before their runtimes.
 */
#include <dlfcn.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>

#define SLOW_MS	20

typedef ssize_t	(*pwrite_fn)(int, const void *, size_t, off64_t);
typedef int	(*sync_fn)(int);

/* A sync happened since the last slowed write (at first: none yet). */
static int	armed = 1;

/* Looked up once; any thread may be first, hence the atomics. */
static void *
real(void **slot, const char *name)
{
	void	*f;

	if ((f = __atomic_load_n(slot, __ATOMIC_ACQUIRE)) == NULL &&
	    (f = dlsym(RTLD_NEXT, name)) != NULL)
		__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	return f;
}

static void
slow(void)
{
	struct timespec	ts = { 0, SLOW_MS * 1000L * 1000L };
	int		saved = errno;

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		continue;
	errno = saved;
}

ssize_t
pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	static void	*slot;
	pwrite_fn	 f;

	if ((f = (pwrite_fn)real(&slot, "pwrite64")) == NULL) {
		errno = ENOSYS;
		return -1;
	}
	if (__atomic_exchange_n(&armed, 0, __ATOMIC_ACQ_REL))
		slow();
	return f(fd, buf, n, off);
}

static int
synced(void **slot, const char *name, int fd)
{
	sync_fn	f;

	if ((f = (sync_fn)real(slot, name)) == NULL) {
		errno = ENOSYS;
		return -1;
	}
	__atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
	return f(fd);
}

int
fsync(int fd)
{
	static void	*slot;

	return synced(&slot, "fsync", fd);
}

int
fdatasync(int fd)
{
	static void	*slot;

	return synced(&slot, "fdatasync", fd);
}
