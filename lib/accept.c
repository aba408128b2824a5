/*
 * accept.c: qualification, ordering and the acceptance transaction.
 */
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "accept.h"
#include "json.h"
#include "text.h"
#include "util.h"

static const char *const source_names[] = {
	[OBS_SRC_JOB] = "job", [OBS_SRC_ORG] = "org", [OBS_SRC_POLL] = "poll",
};

static enum hb_result
unavailable(enum store_status s)
{
	return s == STORE_NOMEM ? HB_NOMEM : HB_UNAVAILABLE;
}

static enum hb_result
config_failure(enum config_status s)
{
	return s == CONFIG_NOMEM ? HB_NOMEM : HB_UNAVAILABLE;
}

/* A completion and a non-completion contradict; two failures do not. */
static int
contradicts(enum obs_status recorded, enum obs_status observed)
{
	return (recorded == OBS_ST_COMPLETED) != (observed == OBS_ST_COMPLETED);
}

/*
 * The JSON document sent downstream for an action.  Returns a string to
 * free with cJSON_free(), or NULL when out of memory (cJSON's Create and
 * Add functions fail for nothing else), so that the caller rolls back
 * and answers "try again".  Output settings that are JSON travel as JSON,
 * others as a string; running out of memory while parsing them must not
 * turn the one into the other.
 */
static char *
action_payload(const char *action, const struct config_job *job,
    const struct obs *o, int64_t now)
{
	cJSON	*doc, *file, *out = NULL;
	char	*s = NULL;

	if ((doc = cJSON_CreateObject()) == NULL)
		return NULL;
	if (job->output[0] != '\0') {
		switch (json_parse(job->output, &out)) {
		case JSON_OK:
			break;
		case JSON_SYNTAX:
			if ((out = cJSON_CreateString(job->output)) == NULL)
				goto out;
			break;
		default:
			goto out;
		}
	}
	if (cJSON_AddStringToObject(doc, "action", action) == NULL ||
	    cJSON_AddStringToObject(doc, "tenant", job->tenant) == NULL ||
	    cJSON_AddStringToObject(doc, "attempt", job->attempt) == NULL ||
	    cJSON_AddStringToObject(doc, "step", job->step) == NULL ||
	    cJSON_AddStringToObject(doc, "job_id", job->job_id) == NULL ||
	    cJSON_AddStringToObject(doc, "observed_via",
	    source_names[o->source]) == NULL ||
	    (file = cJSON_AddObjectToObject(doc, "file")) == NULL ||
	    (o->file_key[0] != '\0' &&
	    cJSON_AddStringToObject(file, "key", o->file_key) == NULL) ||
	    (o->file_url[0] != '\0' &&
	    cJSON_AddStringToObject(file, "url", o->file_url) == NULL) ||
	    (job->source_url[0] != '\0' &&
	    cJSON_AddStringToObject(doc, "source_url", job->source_url) ==
	    NULL) ||
	    cJSON_AddNumberToObject(doc, "accepted_at_ms", (double)now) == NULL)
		goto out;
	if (out != NULL) {
		/* Adding copies the key: it can fail, leaving out ours. */
		if (!cJSON_AddItemToObject(doc, "output", out))
			goto out;
		out = NULL;
	}
	s = cJSON_PrintUnformatted(doc);
out:
	cJSON_Delete(out);
	cJSON_Delete(doc);
	return s;
}

/*
 * Claims the action for a completed job and, only when the claim is new,
 * adds its outbox row.  Inside the open transaction.
 */
static enum store_status
claim(struct store *st, const struct accept_prep *p, struct accept_res *res)
{
	const struct config_job	*job = &p->job;
	struct store_action	 a;
	enum store_claim	 c;
	enum store_status	 rc;
	char			*payload;

	memset(&a, 0, sizeof(a));
	a.id = res->action;
	a.tenant = job->tenant;
	a.attempt = job->attempt;
	a.step = job->step;
	a.job_id = job->job_id;
	a.destination = job->destination;
	a.now = p->now_ms;
	if ((rc = store_action_claim(st, &a, &c)) != STORE_OK)
		return rc;
	switch (c) {
	case STORE_CLAIMED:
		/* Built only for a new action: a duplicate costs none. */
		if ((payload = action_payload(res->action, job, p->obs,
		    p->now_ms)) == NULL)
			return STORE_NOMEM;
		a.payload = payload;
		rc = store_outbox_add(st, &a);
		cJSON_free(payload);
		res->result = HB_ACCEPTED;
		return rc;
	case STORE_CLAIMED_BEFORE:
		res->result = HB_DUPLICATE;
		return STORE_OK;
	case STORE_CLAIMED_OTHER:
		res->result = HB_ACTION_CONFLICT;
		res->detail = "action id already accepted for another job";
		return store_conflict_add(st, job->tenant, job->job_id,
		    res->action, "action", "another job", job->job_id,
		    p->now_ms);
	}
	return STORE_ERROR;
}

/*
 * Decides what a job observation means against the recorded state and
 * writes it.  Inside the open transaction.
 */
static enum store_status
apply(struct store *st, const struct accept_prep *p, struct accept_res *res)
{
	const struct config_job	*job = &p->job;
	const struct obs	*o = p->obs;
	struct store_job	 cur, next;
	enum store_status	 rc;

	if ((rc = store_job_get(st, job->tenant, job->job_id, &cur)) !=
	    STORE_OK)
		return rc;
	next = cur;

	if (o->status == OBS_ST_NONE) {
		/* Progress: the stage rank only moves forward. */
		if (cur.terminal != OBS_ST_NONE || o->stage < cur.stage) {
			res->result = HB_STALE;
			return STORE_OK;
		}
		res->result = HB_RECORDED;
		if (o->stage == cur.stage)
			return STORE_OK;
		next.stage = o->stage;
		return store_job_put(st, job->tenant, job->job_id, &next, o,
		    p->now_ms);
	}

	if (cur.terminal == OBS_ST_NONE) {
		next.terminal = o->status;
		if (o->stage > next.stage)
			next.stage = o->stage;
		if ((rc = store_job_put(st, job->tenant, job->job_id, &next,
		    o, p->now_ms)) != STORE_OK)
			return rc;
	} else if (contradicts(cur.terminal, o->status)) {
		res->result = HB_CONFLICT;
		res->detail = "terminal state contradicts the recorded one";
		return store_conflict_add(st, job->tenant, job->job_id,
		    res->action, "terminal", obs_status_name(cur.terminal),
		    obs_status_name(o->status), p->now_ms);
	}

	/* Only completion qualifies the file for the job's step. */
	if (o->status != OBS_ST_COMPLETED) {
		res->result = HB_RECORDED;
		return STORE_OK;
	}
	return claim(st, p, res);
}

static enum config_status
live_tenant(void *arg, const char *id, struct config_tenant *t)
{
	return config_tenant_get(arg, id, t);
}

static enum config_status
live_job(void *arg, const char *tenant, const char *job_id,
    struct config_job *j)
{
	return config_job_get(arg, tenant, job_id, j);
}

int
accept_prepare(struct config *cfg, const struct accept_req *req,
    struct accept_prep *p, struct accept_res *res)
{
	const struct accept_config	ac = { live_tenant, live_job, cfg };

	return accept_prepare_from(&ac, req, p, res);
}

int
accept_prepare_from(const struct accept_config *ac,
    const struct accept_req *req, struct accept_prep *p,
    struct accept_res *res)
{
	const struct obs	*o = req->obs;
	struct config_tenant	 tenant;
	enum config_status	 cs;

	memset(res, 0, sizeof(*res));
	memset(p, 0, sizeof(*p));

	/* Validate identifiers before anything is looked up or written. */
	if (!text_valid_name(req->tenant) ||
	    (o->event == OBS_EV_JOB && !text_valid_id(o->job_id, HB_ID_MAX)) ||
	    (o->delivery_id[0] != '\0' &&
	    !text_valid_id(o->delivery_id, HB_ID_MAX)) ||
	    (unsigned)o->source > OBS_SRC_POLL ||
	    (unsigned)o->stage > OBS_STAGE_COMPLETED) {
		res->detail = "identifier empty, too long or not UTF-8";
		res->result = HB_MALFORMED;
		return -1;
	}

	cs = ac->tenant(ac->arg, req->tenant, &tenant);
	if (cs == CONFIG_NOTFOUND || (cs == CONFIG_OK && !tenant.active)) {
		res->detail = "no such active tenant";
		res->result = HB_UNKNOWN_ENDPOINT;
		return -1;
	}
	if (cs != CONFIG_OK)
		goto config_failed;

	if (o->event == OBS_EV_JOB) {
		cs = ac->job(ac->arg, req->tenant, o->job_id, &p->job);
		if (cs == CONFIG_NOTFOUND) {
			res->detail = "job not registered to this tenant";
			res->result = HB_UNKNOWN_JOB;
			return -1;
		}
		if (cs != CONFIG_OK)
			goto config_failed;
		if (snprintf(p->action, sizeof(p->action), "%s:%s:%s",
		    p->job.tenant, p->job.attempt, p->job.step) >=
		    (int)sizeof(p->action)) {
			p->action[0] = '\0';
			res->detail = "action id too long";
			res->result = HB_MALFORMED;
			return -1;
		}
	}

	p->obs = o;
	p->now_ms = req->now_ms;
	p->rcpt.at = req->now_ms;
	p->rcpt.tenant = req->tenant;
	p->rcpt.endpoint = req->endpoint;
	p->rcpt.source = source_names[o->source];
	p->rcpt.delivery_id = o->delivery_id;
	p->rcpt.job_id = o->job_id;
	p->rcpt.type = o->type;
	p->rcpt.status = obs_status_name(o->status);
	p->rcpt.stage = obs_stage_name(o->stage);
	p->rcpt.body = req->body;
	p->rcpt.bodylen = req->bodylen;
	return 0;

config_failed:
	res->result = config_failure(cs);
	return -1;
}

/* The answer for a failure that rolled the observation back. */
static enum store_status
failed(struct accept_res *res, enum store_status ss)
{
	memset(res, 0, sizeof(*res));
	res->detail = store_strerror(ss);
	res->result = unavailable(ss);
	return ss;
}

enum store_status
accept_apply(struct store *st, const struct accept_prep *p,
    struct accept_res *res)
{
	struct store_prior	prior;
	enum hb_result		first;
	enum store_status	ss, rs;
	int64_t			rid;
	int			seen;

	memset(res, 0, sizeof(*res));
	memcpy(res->action, p->action, sizeof(res->action));
	if ((ss = store_savepoint(st)) != STORE_OK)
		return failed(res, ss);
	if ((ss = store_receipt_add(st, &p->rcpt, &rid, &seen, &prior)) !=
	    STORE_OK)
		goto fail;
	if (seen) {
		/*
		 * The same delivery again: nothing was written.  Answer as
		 * the first time where that answer refused it (409): a
		 * retry, or another body reusing the delivery id, must not
		 * turn a refusal into an acknowledgement.
		 */
		memcpy(res->action, prior.action, sizeof(res->action));
		if (hb_result_parse(prior.result, &first) == 0 &&
		    !hb_result_is_ack(first)) {
			res->detail = "delivery id refused before";
			res->result = first;
		} else {
			res->detail = "delivery id received before";
			res->result = HB_DUPLICATE;
		}
	} else {
		switch (p->obs->event) {
		case OBS_EV_JOB:
			ss = apply(st, p, res);
			break;
		case OBS_EV_BATCH:
			res->result = HB_RECORDED;
			break;
		case OBS_EV_UNKNOWN:
			res->result = HB_IGNORED;
			res->detail = "event type not understood; recorded";
			break;
		}
		if (ss != STORE_OK)
			goto fail;
		if ((ss = store_receipt_finish(st, rid,
		    hb_result_name(res->result), res->action)) != STORE_OK)
			goto fail;
	}
	if ((ss = store_release(st)) != STORE_OK)
		goto fail;
	return STORE_OK;
fail:
	if ((rs = store_rollback_to(st)) != STORE_OK && ss == STORE_OK)
		ss = rs;
	return failed(res, ss);
}

enum hb_result
accept_observation(struct store *st, struct config *cfg,
    const struct accept_req *req, struct accept_res *res)
{
	struct accept_prep	p;
	enum store_status	ss;

	if (accept_prepare(cfg, req, &p, res) != 0)
		return res->result;
	if ((ss = store_begin(st)) != STORE_OK)
		(void)failed(res, ss);
	else if (accept_apply(st, &p, res) != STORE_OK)
		store_rollback(st);
	else if ((ss = store_commit(st)) != STORE_OK) {
		store_rollback(st);
		(void)failed(res, ss);
	}
	return res->result;
}

/*
 * Appends s to buf at *off as a JSON string, quotes included.  Control
 * characters and DEL are escaped as \u00XX, so that the document is one
 * clean line; other bytes are copied (the inputs are valid UTF-8).
 * Returns 0, or -1 when it does not fit with room for the final NUL.
 */
static int
put_string(char *buf, size_t len, size_t *off, const char *s)
{
	static const char	 hex[] = "0123456789abcdef";
	const unsigned char	*p;
	char			 esc[7];
	size_t			 n;
	const char		*add;

	if (*off + 1 >= len)
		return -1;
	buf[(*off)++] = '"';
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		add = esc;
		if (*p == '"' || *p == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*p;
			n = 2;
		} else if (*p < 0x20 || *p == 0x7f) {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[*p >> 4];
			esc[5] = hex[*p & 0xf];
			n = 6;
		} else {
			add = (const char *)p;
			n = 1;
		}
		if (len - *off <= n)
			return -1;
		memcpy(buf + *off, add, n);
		*off += n;
	}
	if (len - *off <= 1)
		return -1;
	buf[(*off)++] = '"';
	return 0;
}

/* Appends the literal s; -1 when it does not fit with the final NUL. */
static int
put_raw(char *buf, size_t len, size_t *off, const char *s)
{
	size_t	n = strlen(s);

	if (len - *off <= n)
		return -1;
	memcpy(buf + *off, s, n);
	*off += n;
	return 0;
}

/*
 * Written by hand, not with cJSON: the answer must not need memory, so
 * that a request refused for want of it is still told so, and a 200 still
 * names its action.
 */
int
accept_res_json(const struct accept_res *res, char *buf, size_t len)
{
	size_t	off = 0;

	if (len == 0)
		return -1;
	if (put_raw(buf, len, &off, "{\"result\":") != 0 ||
	    put_string(buf, len, &off, hb_result_name(res->result)) != 0 ||
	    (res->action[0] != '\0' &&
	    (put_raw(buf, len, &off, ",\"action\":") != 0 ||
	    put_string(buf, len, &off, res->action) != 0)) ||
	    (res->detail != NULL &&
	    (put_raw(buf, len, &off, ",\"detail\":") != 0 ||
	    put_string(buf, len, &off, res->detail) != 0)) ||
	    put_raw(buf, len, &off, "}") != 0) {
		buf[0] = '\0';
		return -1;
	}
	buf[off] = '\0';
	return 0;
}
