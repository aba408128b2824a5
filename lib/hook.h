/*
 * hook.h: one webhook request, from raw bytes to an answer.
 *
 * The request path every transport shares (FastCGI threads or
 * processes, CGI): resolve the endpoint, authenticate the raw body with
 * the endpoint's scheme and secrets, parse it with the endpoint's format,
 * prepare the observation (accept_prepare()) and hand it to the group's
 * writer (group_accept()).  It knows
 * nothing of FastCGI: headers come through a look-up callback, and the
 * caller maps the result to an HTTP status.
 *
 * Nothing is written to state.db unless the request authenticated.
 *
 * Transactions: self-contained: one config.db snapshot per request, ended
 * before the observation is handed to the group's writer (group.h); the
 * state.db transaction that holds it is committed, or rolled back, before
 * hook_handle() returns.
 */
#ifndef HB_HOOK_H
#define HB_HOOK_H

#include "group.h"

#define HOOK_HMAC_HEADER	"X-Tornado-Signature"

struct hook_req {
	const char	*endpoint;	/* the {endpoint} of /hooks/{endpoint} */
	/*
	 * Returns the value of an HTTP request header by its name as
	 * written in HTTP ("X-Tornado-Signature"), or NULL.  The string
	 * must live until hook_handle() returns.
	 */
	const char	*(*header)(const void *arg, const char *name);
	const void	*arg;
	const char	*body;		/* exactly the bytes received */
	size_t		 bodylen;
	int64_t		 now_ms;
};

/*
 * Handles one request.  res is always filled; its detail never contains
 * a secret, a signature or a key.  Results beyond accept_observation()'s:
 * HB_UNKNOWN_ENDPOINT (no such endpoint), HB_UNAUTHORIZED (nothing
 * written), HB_MALFORMED (the body failed its format; nothing written).
 */
HB_API enum hb_result hook_handle(struct group *, struct config *,
    const struct hook_req *, struct accept_res *res) HB_MUST_CHECK;

#endif
