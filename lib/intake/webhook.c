/*
 * intake/webhook.c: endpoint resolution, authentication and parsing of one
 * webhook.
 */
#include <string.h>

#include "base/text.h"
#include "base/util.h"
#include "intake/webhook.h"
#include "provider/mapping.h"
#include "provider/scheme.h"
#include "provider/tornado.h"

/* *matched: the index in sec of the secret the request was signed with. */
static enum auth_status
authenticate(const struct config_endpoint *ep,
    const struct config_secrets *sec, const struct webhook_req *req,
    size_t *matched)
{
	const unsigned char	*body = (const unsigned char *)req->body;
	const char		*v;
	struct scheme_req	 sr;
	int64_t			 now = req->now_ms / 1000;

	switch (ep->auth) {
	case CONFIG_AUTH_HMAC:
		/* The header name is configurable: Mux-Signature has the shape. */
		v = req->header(req->arg, ep->key_header[0] != '\0' ?
		    ep->key_header : WEBHOOK_HMAC_HEADER);
		return auth_verify_tsig(v, body, req->bodylen, sec->s, sec->n,
		    now, ep->tolerance, matched);
	case CONFIG_AUTH_STANDARD:
		return auth_verify_stdwebhooks(
		    req->header(req->arg, "webhook-id"),
		    req->header(req->arg, "webhook-timestamp"),
		    req->header(req->arg, "webhook-signature"),
		    body, req->bodylen, sec->s, sec->n, now, ep->tolerance,
		    matched);
	case CONFIG_AUTH_KEY:
		v = req->header(req->arg, ep->key_header);
		return auth_verify_key(v, v != NULL ? strlen(v) : 0, sec->s,
		    sec->n, now, matched);
	case CONFIG_AUTH_SCHEME:
		if (ep->mapping == NULL || mapping_scheme(ep->mapping) == NULL)
			return AUTH_ERROR;
		sr.header = req->header;
		sr.arg = req->arg;
		sr.body = body;
		sr.bodylen = req->bodylen;
		sr.query = req->query;
		sr.now_ms = req->now_ms;
		return scheme_verify(mapping_scheme(ep->mapping), &sr, sec->s,
		    sec->n, ep->tolerance, matched);
	}
	return AUTH_ERROR;
}

/*
 * What accept_prepare_from() reads through: the held snapshot, and for
 * the job the cache's one statement, which also says whether the
 * snapshot is current.
 */
struct webhook_cfg {
	struct config_cache	*cache;
	struct config_snap	*snap;
	enum config_status	 job;	/* the job look-up's status */
	int			 confirmed;	/* by the job look-up */
	int64_t			 defer;	/* the job left to the batch at
					   this version; -1: looked up here */
};

static enum config_status
snap_tenant(void *arg, const char *id, struct config_tenant *t)
{
	const struct webhook_cfg	*hc = arg;

	return config_snap_tenant(hc->snap, id, t);
}

static enum config_status
snap_job(void *arg, const char *tenant, const char *job_id,
    struct config_job *j)
{
	struct webhook_cfg	*hc = arg;

	hc->job = config_cache_job(hc->cache, hc->snap, tenant, job_id, j);
	hc->confirmed = hc->job == CONFIG_OK || hc->job == CONFIG_NOTFOUND;
	return hc->job;
}

static int
config_failed(struct accept_res *res, enum config_status cs)
{
	memset(res, 0, sizeof(*res));
	res->detail = config_strerror(cs);
	res->result = cs == CONFIG_NOMEM ? HB_NOMEM : HB_UNAVAILABLE;
	return -1;
}

/* provider/mapping.h's look-up of a header, over the request's. */
struct hdr {
	const struct webhook_req	*req;
};

static const char *
hdr_value(void *arg, const char *name)
{
	const struct hdr	*h = arg;

	return h->req->header(h->req->arg, name);
}

/*
 * A mapped endpoint's request (provider/mapping.h) as an observation: a
 * subject's event, or one whose type the mapping ignores (recorded, "ignored").
 * -1 with res filled when the body does not hold the mapped fields.
 */
static int
mapped(const struct config_endpoint *ep, const struct webhook_req *req,
    struct obs *o, struct mapping_event *ev, struct accept_res *res)
{
	struct hdr		hd = { req };
	enum mapping_err	me;

	me = mapping_eval(ep->mapping, req->body, req->bodylen, hdr_value, &hd,
	    ev, res->why, sizeof(res->why));
	if (me == MAPPING_NOMEM) {
		res->result = HB_NOMEM;
		return -1;
	}
	if (me != MAPPING_OK) {
		res->detail = res->why;
		res->result = HB_MALFORMED;
		return -1;
	}
	memset(o, 0, sizeof(*o));
	o->source = OBS_SRC_EVENT;
	o->event = ev->effect == MAPPING_IGNORE ? OBS_EV_UNKNOWN :
	    OBS_EV_SUBJECT;
	o->undo = ev->effect == MAPPING_UNDO;
	o->version = ev->version;
	o->occurred_ms = ev->occurred_ms;
	memcpy(o->type, ev->type, sizeof(o->type));
	memcpy(o->job_id, ev->subject, sizeof(o->job_id));
	memcpy(o->delivery_id, ev->event_id, sizeof(o->delivery_id));
	memcpy(o->step, ev->step, sizeof(o->step));
	return 0;
}

/*
 * The body (and for a mapped endpoint the headers) read with the
 * endpoint's format into o; for a mapped endpoint, the event in *ev, and
 * areq's destination, fan-out (pointing into *ev) and subjects'
 * namespace set.  -1 with res filled: malformed, or out of memory.
 */
static int
parse(const struct config_endpoint *ep, const struct webhook_req *req,
    struct obs *o, struct mapping_event *ev, struct accept_req *areq,
    struct accept_res *res)
{
	enum tornado_err	te;
	int			 form;

	form = ep->kind == CONFIG_KIND_MAPPED && mapping_reads_form(ep->mapping);
	if (req->form != form) {
		res->detail = form ? "body: JSON, where this endpoint reads a"
		    " form" : "body: a form, where this endpoint reads JSON";
		res->result = HB_MALFORMED;
		return -1;
	}
	if (ep->kind == CONFIG_KIND_MAPPED) {
		if (mapped(ep, req, o, ev, res) != 0)
			return -1;
		/* Each step to its own destination: the first here. */
		areq->destination = ev->nsteps > 0 ?
		    ev->steps[0].destination : mapping_destination(ep->mapping);
		if (ev->nsteps > 1) {
			areq->more = &ev->steps[1];
			areq->nmore = ev->nsteps - 1;
		}
		areq->carry = !mapping_carries_body(ep->mapping) ? 0 :
		    mapping_reads_form(ep->mapping) ? ACCEPT_CARRY_TEXT : 1;
		if ((areq->space = mapping_namespace(ep->mapping)) == NULL)
			areq->space = ep->name;
		return 0;
	}
	te = ep->kind == CONFIG_KIND_ORG ?
	    tornado_parse_event(req->body, req->bodylen, o, res->why,
	    sizeof(res->why)) :
	    tornado_parse_callback(req->body, req->bodylen, o, res->why,
	    sizeof(res->why));
	if (te == TORNADO_OK)
		return 0;
	if (te == TORNADO_NOMEM)
		res->result = HB_NOMEM;
	else {
		res->detail = res->why;
		res->result = HB_MALFORMED;
	}
	return -1;
}

/* Everything webhook_prepare() does, from one snapshot. */
static int
prepare(struct webhook_cfg *hc, const struct webhook_req *req,
    struct webhook_obs *h, struct accept_res *res)
{
	const struct accept_config	 ac = { snap_tenant,
					    hc->defer >= 0 ? NULL : snap_job, hc };
	struct config_endpoint		*ep = &h->ep;
	struct config_secrets		 sec;
	struct accept_req		 areq;
	struct mapping_event		 ev;
	enum config_status		 cs;
	enum auth_status		 as;
	size_t				 matched = 0;

	memset(res, 0, sizeof(*res));
	if ((cs = config_snap_endpoint(hc->snap, req->endpoint, ep)) ==
	    CONFIG_NOTFOUND) {
		res->detail = "no such endpoint";
		res->result = HB_UNKNOWN_ENDPOINT;
		return -1;
	}
	if (cs != CONFIG_OK)
		return config_failed(res, cs);

	/* Authenticate the raw bytes before anything parses them. */
	if ((cs = config_snap_secrets(hc->snap, ep->name, req->now_ms / 1000,
	    &sec)) != CONFIG_OK)
		return config_failed(res, cs);
	as = authenticate(ep, &sec, req, &matched);
	if (as == AUTH_OK)
		h->secret = sec.id[matched];
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

	memset(&areq, 0, sizeof(areq));
	if (parse(ep, req, &h->obs, &ev, &areq, res) != 0)
		return -1;
	areq.tenant = ep->tenant;
	areq.endpoint = ep->name;
	areq.obs = &h->obs;
	areq.body = req->body;
	areq.bodylen = req->bodylen;
	areq.now_ms = req->now_ms;
	if (accept_prepare_from(&ac, &areq, &h->prep, res) != 0)
		return -1;
	h->prep.secret = h->secret;
	/* The batch's look-up of the job confirms the snapshot. */
	h->prep.version = hc->defer;
	if (h->prep.job_wanted)
		hc->confirmed = 1;
	return 0;
}

/*
 * The snapshots one request may start from: a change while it is
 * answered starts it again, and more changes than this in that time are
 * a configuration being rewritten: 503, to be tried again.
 */
#define WEBHOOK_TRIES	4

/*
 * webhook_prepare(), and with defer the job left to the batch's look-up
 * where the cache allows it (config_cache_defers()).
 */
static int
prepare_from_cache(struct config_cache *cc, const struct webhook_req *req,
    struct webhook_obs *h, struct accept_res *res, int defer)
{
	struct webhook_cfg		hc;
	enum config_status	cs;
	int			rc, tries;

	memset(h, 0, sizeof(*h));
	/* A name nothing can configure needs no configuration read. */
	if (!text_valid_name(req->endpoint)) {
		memset(res, 0, sizeof(*res));
		res->detail = "no such endpoint";
		res->result = HB_UNKNOWN_ENDPOINT;
		return -1;
	}
	memset(&hc, 0, sizeof(hc));
	hc.cache = cc;
	for (tries = 1; ; tries++) {
		memset(h, 0, sizeof(*h));
		if ((hc.snap = config_cache_hold(cc, req->endpoint, &cs)) ==
		    NULL)
			return config_failed(res, cs);
		hc.job = CONFIG_OK;
		hc.confirmed = 0;
		hc.defer = defer ? config_cache_defers(cc, hc.snap) : -1;
		rc = prepare(&hc, req, h, res);
		/*
		 * The job's statement read the version, or the batch's will;
		 * any other answer from the snapshot (but its own 503s) is
		 * confirmed by a read of the version alone.
		 */
		if ((cs = hc.job) == CONFIG_OK && !hc.confirmed && (rc == 0 ||
		    (res->result != HB_UNAVAILABLE && res->result != HB_NOMEM)))
			cs = config_cache_check(cc, hc.snap);
		config_cache_drop(cc, hc.snap);
		if (cs == CONFIG_OK || cs == CONFIG_NOTFOUND)
			return rc;
		if (cs != CONFIG_STALE)
			return config_failed(res, cs);
		if (tries == WEBHOOK_TRIES)
			return config_failed(res, CONFIG_BUSY);
	}
}

int
webhook_prepare(struct config_cache *cc, const struct webhook_req *req,
    struct webhook_obs *h, struct accept_res *res)
{
	return prepare_from_cache(cc, req, h, res, 0);
}

int
webhook_receive(struct config_cache *cc, struct group *g,
    const struct webhook_req *req, struct webhook_obs *h,
    struct accept_res *res)
{
	int	tries;

	for (tries = 1; ; tries++) {
		if (prepare_from_cache(cc, req, h, res, 1) != 0)
			return -1;
		/*
		 * The writer's answer is in res; a "try again" for a change
		 * since the snapshot was read starts over from the new one.
		 */
		if (group_submit(g, &h->prep, res) != HB_UNAVAILABLE ||
		    !h->prep.config_stale)
			return 0;
		if (tries == WEBHOOK_TRIES)
			return config_failed(res, CONFIG_BUSY);
	}
}
