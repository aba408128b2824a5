/*
 * respond.h: one HTTP request over any CGI-shaped transport.
 *
 * The request path (check method, type and length, read, hand to
 * hook_prepare() and the writer, answer) is kept apart from the process model in main.c,
 * so that FastCGI threads and processes and plain CGI share it.  It maps
 * library results to HTTP status codes.
 */
#ifndef RESPOND_H
#define RESPOND_H

#include <stddef.h>
#include <stdint.h>

#include "settings.h"

struct config_pool;
struct group;
struct store;

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
 * One serving thread's long-lived state.  The data directory is the
 * operator's, fixed at start-up: a request cannot choose another one.
 * Handles are opened lazily and kept while their files stay where they
 * were opened.
 */
struct resp_server {
	struct settings	 set;		/* the data directory, busy, sync */
	size_t		 body_max;	/* bytes; 413 beyond */
	int		 retry_after;	/* seconds, on 503 */
	/*
	 * What the threads of a process share (the caller's): the state.db
	 * writer and the config.db connections.  Left NULL, respond()
	 * makes its own, a writer that commits on the calling thread and a
	 * pool of one, and respond_close() frees them (own is then set).
	 */
	struct group		*group;
	struct config_pool	*configs;
	int			 own;
	struct store		*st;	/* health and metrics only */
};

/* Serves one request.  Never exits; logs at most one line to stderr. */
void respond(struct resp_server *, const struct resp_io *);

/* Closes the server's database handles. */
void respond_close(struct resp_server *);

#endif
