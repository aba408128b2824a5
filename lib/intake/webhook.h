/*
 * intake/webhook.h: one webhook request, from raw bytes to an answer.
 *
 * The request path every transport shares (FastCGI threads or
 * processes, CGI): resolve the endpoint, authenticate the raw body with
 * the endpoint's scheme and secrets, parse it with the endpoint's format,
 * and prepare the observation (accept_prepare()) for the writer
 * (group_submit()).  It knows nothing of FastCGI: headers come through a
 * look-up callback, and the caller maps the result to an HTTP status.
 *
 * Nothing is written to state.db unless the request authenticated.
 *
 * The configuration comes from the shared snapshot (config/cache.h), and
 * no answer is given from it until config.db's version, read after the
 * request arrived, is the snapshot's: in the statement that looks up the
 * request's job (on SQLite, under webhook_receive(), its batch's one read of
 * every member's job), or, for an answer that needs no job (an unknown
 * endpoint, a bad signature, a body refused, an event without a job), in
 * a read of the version that the requests waiting at the time share.  A
 * changed version starts the request again from the new snapshot.
 *
 * Transactions: self-contained: config.db is read through the cache,
 * whose calls each end their own reads; state.db is not touched.  The
 * caller hands what it prepared to the writer (intake/group.h), whose COMMIT
 * holds it.
 */
#ifndef HB_WEBHOOK_H
#define HB_WEBHOOK_H

#include "config/cache.h"
#include "intake/accept.h"
#include "intake/group.h"

#define WEBHOOK_HMAC_HEADER	"X-Tornado-Signature"

struct webhook_req {
	const char	*endpoint;	/* the {endpoint} of /hooks/{endpoint} */
	/*
	 * Returns the value of an HTTP request header by its name as
	 * written in HTTP ("X-Tornado-Signature"), or NULL.  The string
	 * must live until webhook_prepare() returns.
	 */
	const char	*(*header)(const void *arg, const char *name);
	const void	*arg;
	const char	*body;		/* exactly the bytes received */
	size_t		 bodylen;
	/* The request's query string (NULL: none): a scheme that signs
	   the URL the provider called signs its query too. */
	const char	*query;
	/* The body is a form (application/x-www-form-urlencoded): only an
	   endpoint whose mapping reads forms takes it. */
	int		 form;
	int64_t		 now_ms;
};

/* A request made ready for the writer: its observation, prepared. */
struct webhook_obs {
	struct config_endpoint	ep;
	struct obs		obs;
	struct accept_prep	prep;	/* points into ep, obs and the request */
	int64_t			secret;	/* the id of the endpoint's secret
					   it was signed with; 0 before */
};

/*
 * Resolves, authenticates, parses and prepares one request from the
 * configuration as it is when the request arrived.  Returns 0 when
 * h->prep is ready for group_submit() (while req and *h live), or -1
 * with the final answer in res: HB_UNKNOWN_ENDPOINT (no such endpoint),
 * HB_UNAUTHORIZED, HB_MALFORMED (the body failed its format),
 * accept_prepare()'s own, and HB_UNAVAILABLE when config.db's version
 * cannot be read.  Nothing is written to state.db either way.  res's
 * detail never contains a secret, a signature or a key.
 */
HB_API int webhook_prepare(struct config_cache *, const struct webhook_req *,
    struct webhook_obs *h, struct accept_res *res) HB_MUST_CHECK;

/*
 * webhook_prepare(), then group_submit() on g, which must have been made
 * with the same cache (group_opts's configs): on SQLite the request's
 * job is looked up with its batch's, in one read of config.db for the
 * batch, which also confirms the snapshot; one that is no longer current
 * starts the request again from the new one.  Returns 0 with the
 * writer's answer in res (counted by the group), or -1 with an answer
 * given before the writer was reached.
 */
HB_API int webhook_receive(struct config_cache *, struct group *g,
    const struct webhook_req *, struct webhook_obs *h, struct accept_res *res)
    HB_MUST_CHECK;

#endif
