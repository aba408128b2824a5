/*
 * hook.c: endpoint resolution, authentication and parsing of one webhook.
 */
#include <string.h>

#include "hook.h"
#include "text.h"
#include "tornado.h"
#include "util.h"

static enum auth_status
authenticate(const struct config_endpoint *ep,
    const struct config_secrets *sec, const struct hook_req *req)
{
	const unsigned char	*body = (const unsigned char *)req->body;
	const char		*v;
	int64_t			 now = req->now_ms / 1000;

	switch (ep->auth) {
	case CONFIG_AUTH_HMAC:
		/* The header name is configurable: Mux-Signature has the shape. */
		v = req->header(req->arg, ep->key_header[0] != '\0' ?
		    ep->key_header : HOOK_HMAC_HEADER);
		return auth_verify_tsig(v, body, req->bodylen, sec->s, sec->n,
		    now, ep->tolerance);
	case CONFIG_AUTH_STANDARD:
		return auth_verify_stdwebhooks(
		    req->header(req->arg, "webhook-id"),
		    req->header(req->arg, "webhook-timestamp"),
		    req->header(req->arg, "webhook-signature"),
		    body, req->bodylen, sec->s, sec->n, now, ep->tolerance);
	case CONFIG_AUTH_KEY:
		v = req->header(req->arg, ep->key_header);
		return auth_verify_key(v, v != NULL ? strlen(v) : 0, sec->s,
		    sec->n, now);
	}
	return AUTH_ERROR;
}

/* Everything hook_prepare() does, inside its config.db snapshot. */
static int
prepare(struct config *cfg, const struct hook_req *req, struct hook_obs *h,
    struct accept_res *res)
{
	struct config_endpoint	*ep = &h->ep;
	struct config_secrets	 sec;
	struct accept_req	 areq;
	enum config_status	 cs;
	enum auth_status	 as;
	enum tornado_err	 te;

	memset(res, 0, sizeof(*res));
	if (!text_valid_name(req->endpoint) ||
	    (cs = config_endpoint_get(cfg, req->endpoint, ep)) ==
	    CONFIG_NOTFOUND) {
		res->detail = "no such endpoint";
		res->result = HB_UNKNOWN_ENDPOINT;
		return -1;
	}
	if (cs != CONFIG_OK)
		goto config_failed;

	/* Authenticate the raw bytes before anything parses them. */
	if ((cs = config_endpoint_secrets(cfg, ep->name, req->now_ms / 1000,
	    &sec)) != CONFIG_OK)
		goto config_failed;
	as = authenticate(ep, &sec, req);
	config_secrets_clear(&sec);
	if (as == AUTH_ERROR) {
		res->result = HB_NOMEM;
		return -1;
	}
	if (as != AUTH_OK) {
		res->detail = auth_strerror(as);
		res->result = HB_UNAUTHORIZED;
		return -1;
	}

	te = ep->kind == CONFIG_KIND_ORG ?
	    tornado_parse_event(req->body, req->bodylen, &h->obs, res->why,
	    sizeof(res->why)) :
	    tornado_parse_callback(req->body, req->bodylen, &h->obs, res->why,
	    sizeof(res->why));
	if (te != TORNADO_OK) {
		if (te == TORNADO_NOMEM)
			res->result = HB_NOMEM;
		else {
			res->detail = res->why;
			res->result = HB_MALFORMED;
		}
		return -1;
	}

	memset(&areq, 0, sizeof(areq));
	areq.tenant = ep->tenant;
	areq.endpoint = ep->name;
	areq.obs = &h->obs;
	areq.body = req->body;
	areq.bodylen = req->bodylen;
	areq.now_ms = req->now_ms;
	return accept_prepare(cfg, &areq, &h->prep, res);

config_failed:
	res->detail = config_strerror(cs);
	res->result = cs == CONFIG_NOMEM ? HB_NOMEM : HB_UNAVAILABLE;
	return -1;
}

int
hook_prepare(struct config *cfg, const struct hook_req *req,
    struct hook_obs *h, struct accept_res *res)
{
	enum config_status	cs;
	int			rc;

	memset(h, 0, sizeof(*h));
	/* One read of config.db for the endpoint, secrets, tenant and job. */
	if ((cs = config_snapshot(cfg)) != CONFIG_OK) {
		memset(res, 0, sizeof(*res));
		res->detail = config_strerror(cs);
		res->result = cs == CONFIG_NOMEM ? HB_NOMEM : HB_UNAVAILABLE;
		return -1;
	}
	rc = prepare(cfg, req, h, res);
	config_release(cfg);
	return rc;
}
