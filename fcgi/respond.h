/*
 * respond.h: one HTTP request over any CGI-shaped transport.
 *
 * The request path (check method, type and length, read, hand to
 * webhook_prepare() and the writer, answer) is kept apart from the process
 * model in main.c, so that FastCGI threads and processes and plain CGI share
 * it.  It maps library results to HTTP status codes.
 */
#ifndef RESPOND_H
#define RESPOND_H

#include <stddef.h>
#include <stdint.h>

#include "run/settings.h"


/* What a transport offers: CGI variables, the body, the output. */
struct resp_io {
	/* A CGI variable ("CONTENT_LENGTH", "HTTP_X_...") or NULL. */
	const char	*(*param)(void *arg, const char *name);
	/* Reads up to len bytes; returns how many (fewer only at the end). */
	size_t		 (*read)(void *arg, char *buf, size_t len);
	/* Writes len bytes; returns 0, or -1 when the client is gone. */
	int		 (*write)(void *arg, const char *buf, size_t len);
	void		*arg;
};

/*
 * What the serving threads of a process share: the state.db writer
 * (lib/intake/group.h), the configuration's cache and its pool of config.db
 * connections (lib/config/cache.h, at most RESP_CONFIGS)
 * and the connection health and metrics use.  threads > 1 starts a writer
 * thread; 1 commits on the calling thread.  Returns 0, or -1 when out of
 * memory or a thread cannot be started (errno).  Opens no file yet.
 */
#define RESP_CONFIGS	4
struct resp_shared;
int respond_shared_new(const struct settings *, int threads,
    struct resp_shared **out);
/*
 * The most database connections one process with that many threads
 * opens: the config pool (at most RESP_CONFIGS), the writer, its
 * checkpointer when threaded on files (a server checkpoints by itself),
 * and health's.  Serving threads hold none of their own, so more threads
 * cost no connections past RESP_CONFIGS.  server: the location's
 * (struct settings).
 */
int respond_connections(int threads, int server);

/* Waits for the writer to answer what it holds, then frees.  NULL: no-op. */
void respond_shared_free(struct resp_shared *);

/*
 * For a process that has served requests and then none for a while: the
 * writer's page cache (group_quiet()) and then the freed heap
 * (util_give_heap_back()) go back to the kernel.  NULL: the heap alone.
 */
void respond_quiet(struct resp_shared *);

/*
 * One serving thread's long-lived state.  The data directory is the
 * operator's, fixed at start-up: a request cannot choose another one.
 * Handles are opened lazily and kept while their files stay where they
 * were opened.
 */
struct resp_server {
	struct settings		 set;	/* the data directory, busy, sync */
	size_t			 body_max;	/* bytes; 413 beyond */
	int			 retry_after;	/* seconds, on 503 */
	/*
	 * The caller's, shared by a process's threads.  Left NULL,
	 * respond() makes its own for one thread, and respond_close()
	 * frees it (own is then set).
	 */
	struct resp_shared	*shared;
	int			 own;
};

/* The longest request id taken from nginx ($request_id is 32). */
#define RESP_RID_MAX	64

/*
 * Serves one request.  Never exits; logs exactly one line to stderr
 * (base/log.h: event=request), whatever the outcome.
 */
void respond(struct resp_server *, const struct resp_io *);

/* Frees what respond() made for this server (not a caller's shared). */
void respond_close(struct resp_server *);

#endif
