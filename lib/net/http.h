/*
 * net/http.h: outgoing HTTP requests (libcurl), for the dispatcher and the
 * poller: one at a time (http_request(), a struct http keeps a curl handle
 * so that connections are reused), or a batch in flight at once
 * (http_batch, libcurl's multi interface).  One struct http or
 * http_batch per process or thread.  http_global_init() must run once,
 * before any other thread exists.
 *
 * Transactions: none; no database.
 */
#ifndef HB_HTTP_H
#define HB_HTTP_H

#include "base/hb.h"

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
	int	 refused;	/* not sent: every address the host came to
				   was internal (net/addr.h), and the request
				   was not HTTP_INTERNAL */
	int64_t	 retry_after_ms;	/* from Retry-After, -1 when absent */
	char	 error[256];	/* "" or what went wrong; never a header value */
	char	*body;		/* at most body_cap bytes, NUL-terminated */
	size_t	 bodylen;
};

/*
 * Once per process, before any other call: libcurl's global state, and
 * the proxy every request goes through (a URL libcurl takes, copied;
 * NULL or "": none).  A proxy the environment names (http_proxy,
 * HTTPS_PROXY, ALL_PROXY, ...) is never used: one inherited by accident
 * would take every request, and the guard on internal addresses would
 * judge only the proxy's.  0, or -1 when out of memory or libcurl fails.
 */
HB_API int http_global_init(const char *proxy) HB_MUST_CHECK;
HB_API struct http *http_new(void);
HB_API void http_free(struct http *);
HB_API void http_result_clear(struct http_result *);

/* http_request() flags. */
#define HTTP_FRESH	0x01	/* a new connection, closed afterwards */
#define HTTP_INTERNAL	0x02	/* may go to an internal address */
#define HTTP_HANGUP	0x04	/* closes the connection once the request
				   is written, before a byte of the answer
				   is taken: a sender's timeout (hookbox
				   disorder); the result is status 0,
				   sent 1 */

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
 *
 * Without HTTP_INTERNAL a request never goes to an internal address
 * (link-local, a cloud metadata service: net/addr.h), however the URL spells
 * it and whatever its name resolves to: each address is judged before
 * libcurl connects to it, and the connection a request is about to go
 * on (new, kept alive or shared) once more before a byte of it is
 * written.  When no address is left, out->refused is set, sent is 0 and
 * error names the address.  Behind the proxy http_global_init() was
 * given, the address judged is the proxy's.
 */
HB_API int http_request(struct http *, const char *method, const char *url,
    const struct http_header *hdrs, size_t nhdrs, const char *body,
    size_t bodylen, long timeout_ms, size_t body_cap, int flags,
    struct http_result *out);

/*
 * A batch: up to HTTP_BATCH_MAX requests in flight at once, each with its
 * own timeout, every rule of http_request() kept (http and https only, no
 * redirects, the body cap, Retry-After, HTTP_FRESH, HTTP_INTERNAL).
 * Requests without HTTP_FRESH to one host share the batch's kept-alive
 * connections, which stay open between batches until http_batch_free();
 * with HTTP/1.1, a connection carries one request at a time, so requests
 * in flight together each open their own.
 */
struct http_batch;

/* One request of a batch: what http_request() takes. */
struct http_req {
	const char			*method;	/* "GET" or "POST" */
	const char			*url;
	const struct http_header	*hdrs;
	size_t				 nhdrs;
	const char			*body;		/* NULL for none */
	size_t				 bodylen;
	long				 timeout_ms;
	size_t				 body_cap;
	int				 flags;		/* HTTP_* */
};

#define HTTP_BATCH_MAX	64	/* requests in flight in one batch */

/* NULL when out of memory.  http_batch_free() ends what is in flight. */
HB_API struct http_batch *http_batch_new(void);
HB_API void http_batch_free(struct http_batch *);

/*
 * Starts a request.  What *req points to is copied (URL, headers, body)
 * and need not outlive the call; *out must live until http_batch_run()
 * reports the request done, and is filled then.  Returns the request's
 * slot (0 .. HTTP_BATCH_MAX - 1), which http_batch_run() reports; or -1
 * when the batch is full or the request cannot be set up: then *out is
 * filled at once (sent 0: nothing left) and nothing is in flight.
 */
HB_API int http_batch_add(struct http_batch *, const struct http_req *req,
    struct http_result *out) HB_MUST_CHECK;

/*
 * Moves the requests in flight along, for at most wait_ms, and returns as
 * soon as at least one has ended (or none is left): the ended ones' slots
 * go to done[] (room for HTTP_BATCH_MAX), their number to *ndone, and
 * their results are filled; their slots are free again.  Returns the
 * number still in flight.  Should libcurl itself fail, every request in
 * flight ends at once, as failed after it may have been sent.
 */
HB_API int http_batch_run(struct http_batch *, long wait_ms, int *done,
    int *ndone);

/*
 * The host of an http or https URL as libcurl's URL parser reads it, for
 * addr_kind_host(): an IPv4 address in any spelling libcurl takes
 * (2852039166, 0xa9fea9fe, 0251.0376.0251.0376, 169.254.43518) comes back
 * in dotted decimal, an IPv6 address in brackets without its zone, a
 * percent-encoded name decoded.  -1 when libcurl cannot parse the URL, or
 * the host does not fit in len bytes.
 */
HB_API int http_url_host(const char *url, char *host, size_t len)
    HB_MUST_CHECK;

/* URL-escapes s into out; -1 when it does not fit. */
HB_API int http_escape(struct http *, const char *s, char *out, size_t len)
    HB_MUST_CHECK;

#endif
