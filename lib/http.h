/*
 * http.h: outgoing HTTP requests (libcurl), for the dispatcher and the
 * status poller.  One struct http per process or thread: it keeps a curl
 * handle so that connections are reused.  http_global_init() must run
 * once, before any other thread exists.
 *
 * Transactions: none; no database.
 */
#ifndef HB_HTTP_H
#define HB_HTTP_H

#include "hb.h"

struct http;

struct http_header {
	const char	*name;
	const char	*value;
};

/* What came back.  body is owned: http_result_clear() frees it. */
struct http_result {
	long	 status;	/* HTTP status; 0 when there was no response */
	int	 sent;		/* 0 only when the request surely never left
				   (could not resolve or connect) */
	int	 timed_out;
	int64_t	 retry_after_ms;	/* from Retry-After, -1 when absent */
	char	 error[256];	/* "" or what went wrong; never a header value */
	char	*body;		/* at most body_cap bytes, NUL-terminated */
	size_t	 bodylen;
};

HB_API int http_global_init(void) HB_MUST_CHECK;
HB_API struct http *http_new(void);
HB_API void http_free(struct http *);
HB_API void http_result_clear(struct http_result *);

/* http_request() flags. */
#define HTTP_FRESH	0x01	/* a new connection, closed afterwards */

/*
 * Sends one request (method "GET" or "POST"; body NULL for none) to an
 * http or https URL, with at most timeout_ms for all of it and no
 * redirects followed.  Keeps the first body_cap bytes of the answer.
 * Returns 0 when an answer (any status) came back, -1 otherwise; *out
 * is filled either way.
 *
 * HTTP_FRESH is for requests that must not be sent twice: on a reused
 * connection that the server has closed, libcurl silently resends the
 * request on a new one, and the server may have acted on the first.
 */
HB_API int http_request(struct http *, const char *method, const char *url,
    const struct http_header *hdrs, size_t nhdrs, const char *body,
    size_t bodylen, long timeout_ms, size_t body_cap, int flags,
    struct http_result *out);

/* URL-escapes s into out; -1 when it does not fit. */
HB_API int http_escape(struct http *, const char *s, char *out, size_t len)
    HB_MUST_CHECK;

#endif
