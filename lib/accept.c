/*
 * accept.c: qualification, ordering and the acceptance transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "accept.h"
#include "decide.h"
#include "fault.h"
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

/*
 * Claims a completed job's action and adds its outbox row.  *moved when
 * the id turned out to be held already: the state is not as read.
 */
static enum store_status
claim(struct store *st, const struct accept_prep *p, int *moved)
{
	const struct config_job	*job = &p->job;
	struct store_action	 a;
	enum store_status	 rc;
	char			*payload;
	int			 claimed;

	memset(&a, 0, sizeof(a));
	a.id = p->action;
	a.tenant = job->tenant;
	a.attempt = job->attempt;
	a.step = job->step;
	a.job_id = job->job_id;
	a.destination = job->destination;
	a.now = p->now_ms;
	if ((rc = store_action_claim(st, &a, &claimed)) != STORE_OK)
		return rc;
	if (!claimed) {
		*moved = 1;
		return STORE_OK;
	}
	/* Built only for a new action: a duplicate costs none. */
	if ((payload = action_payload(p->action, job, p->obs, p->now_ms)) ==
	    NULL)
		return STORE_NOMEM;
	a.payload = payload;
	rc = store_outbox_add(st, &a);
	cJSON_free(payload);
	return rc;
}

/*
 * Writes what was decided for one observation.  *moved when the state
 * was not as read (another host wrote the delivery id or the action id
 * meanwhile): the caller decides again.
 */
static enum store_status
write_one(struct store *st, const struct accept_prep *p,
    const struct decide_out *o, int *moved)
{
	const struct config_job	*job = &p->job;
	enum store_status	 rc;
	int			 inserted;

	*moved = 0;
	if ((o->writes & DECIDE_RECEIPT) && ((rc = store_receipt_put(st,
	    &p->rcpt, hb_result_name(o->res.result), o->res.action,
	    &inserted)) != STORE_OK || !inserted))
		return *moved = rc == STORE_OK, rc;
	if ((o->writes & DECIDE_JOB) && (rc = store_job_put(st, job->tenant,
	    job->job_id, &o->next, p->obs, p->now_ms)) != STORE_OK)
		return rc;
	if ((o->writes & DECIDE_CLAIM) && ((rc = claim(st, p, moved)) !=
	    STORE_OK || *moved))
		return rc;
	if ((o->writes & DECIDE_CONFLICT) && (rc = store_conflict_add(st,
	    job->tenant, job->job_id, o->res.action, o->kind, o->recorded,
	    o->observed, p->now_ms)) != STORE_OK)
		return rc;
	return STORE_OK;
}

/* Orders members by their job, (tenant, job id). */
static int
by_job(const void *a, const void *b)
{
	const struct config_job	*x = &(*(const struct accept_prep *const *)
	    a)->job;
	const struct config_job	*y = &(*(const struct accept_prep *const *)
	    b)->job;
	int			 c;

	if ((c = strcmp(x->tenant, y->tenant)) != 0)
		return c;
	return strcmp(x->job_id, y->job_id);
}

/*
 * Takes the locks of the members' jobs (store_job_lock()) in one order,
 * (tenant, job), before anything is read: two hosts' batches that share
 * jobs then wait for one another instead of deadlocking.  A lock not had
 * within the busy budget (held by a stuck transaction elsewhere) fails
 * its job's members alone, "try again", each lock in a savepoint of its
 * own: on PostgreSQL an error aborts the transaction up to the last
 * savepoint.  The waits together stay within the budget: once it is
 * spent, a lock held elsewhere is not waited for.  Nothing on SQLite,
 * whose BEGIN IMMEDIATE took the one lock there is.  Returns STORE_OK,
 * or why the whole transaction is lost.
 */
static enum store_status
lock_jobs(struct store *st, size_t n, const struct accept_prep *const *p,
    struct accept_res *const *res, int *done)
{
	const struct accept_prep	**v;
	enum store_status		  ss = STORE_OK;
	size_t				  m = 0, i, j, k;
	int64_t				  start = util_now_ms();

	if (!store_job_locks(st))
		return STORE_OK;
	if ((v = calloc(n, sizeof(*v))) == NULL)
		return STORE_NOMEM;
	for (i = 0; i < n; i++)
		if (!done[i] && p[i]->obs->event == OBS_EV_JOB)
			v[m++] = p[i];
	if (m > 1)
		qsort(v, m, sizeof(v[0]), by_job);
	for (i = 0; i < m; i = j) {
		for (j = i + 1; j < m && by_job(&v[i], &v[j]) == 0; j++)
			continue;
		if ((ss = store_savepoint(st)) != STORE_OK)
			break;
		if ((ss = store_job_lock(st, v[i]->job.tenant, v[i]->job.job_id,
		    util_now_ms() - start < store_busy_ms(st))) == STORE_OK) {
			if ((ss = store_release(st)) != STORE_OK)
				break;
			continue;
		}
		if (store_rollback_to(st) != STORE_OK || !store_in_tx(st))
			break;
		for (k = 0; k < n; k++)
			if (!done[k] && p[k]->obs->event == OBS_EV_JOB &&
			    by_job(&p[k], &v[i]) == 0) {
				(void)failed(res[k], ss);
				done[k] = 1;
			}
		ss = STORE_OK;
	}
	free(v);
	return ss;
}

/* How many times a batch is looked up again when the state moved. */
#define ACCEPT_MOVED_MAX	3

/*
 * One pass: in a savepoint, looks up what the members not done need,
 * decides them and writes.  On a member's failure, *culprit is its index
 * (the savepoint rolled back, the transaction standing); when the state
 * moved under it, *moved.
 */
static enum store_status
pass(struct store *st, size_t n, const struct accept_prep *const *p,
    struct accept_res *const *res, const int *done, size_t *culprit,
    int *moved)
{
	const struct accept_prep	**live = NULL;
	struct store_look		 *look = NULL;
	struct store_found		 *found = NULL;
	struct decide_out		 *out = NULL;
	enum store_status		  ss = STORE_OK, rs;
	size_t				 *idx = NULL, m = 0, i;

	*culprit = n;
	*moved = 0;
	if ((live = calloc(n, sizeof(*live))) == NULL ||
	    (look = calloc(n, sizeof(*look))) == NULL ||
	    (found = calloc(n, sizeof(*found))) == NULL ||
	    (out = calloc(n, sizeof(*out))) == NULL ||
	    (idx = calloc(n, sizeof(*idx))) == NULL) {
		ss = STORE_NOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (done[i])
			continue;
		idx[m] = i;
		live[m] = p[i];
		look[m].endpoint = p[i]->rcpt.endpoint;
		look[m].delivery_id = p[i]->rcpt.delivery_id;
		if (p[i]->obs->event == OBS_EV_JOB) {
			look[m].tenant = p[i]->job.tenant;
			look[m].job_id = p[i]->job.job_id;
			look[m].action = p[i]->action;
		}
		m++;
	}
	if (m == 0 || (ss = store_savepoint(st)) != STORE_OK)
		goto out;
	if ((ss = store_look_batch(st, look, m)) != STORE_OK)
		goto fail;
	(void)fault_fire(FAULT_LOOKED);
	for (i = 0; i < m; i++)
		found[i] = look[i].found;
	decide_batch(m, live, found, out);
	for (i = 0; i < m; i++)
		if ((ss = write_one(st, live[i], &out[i], moved)) != STORE_OK ||
		    *moved) {
			*culprit = idx[i];
			goto fail;
		}
	if ((ss = store_release(st)) != STORE_OK)
		goto fail;
	for (i = 0; i < m; i++)
		*res[idx[i]] = out[i].res;
	goto out;
fail:
	if ((rs = store_rollback_to(st)) != STORE_OK) {
		*culprit = n;	/* everything is lost, not one member */
		if (ss == STORE_OK)
			ss = rs;
	}
out:
	free(idx);
	free(out);
	free(found);
	free(look);
	free(live);
	return ss;
}

enum store_status
accept_batch(struct store *st, size_t n, const struct accept_prep *const *p,
    struct accept_res *const *res, const int *skip)
{
	enum store_status	 ss;
	size_t			 culprit, i;
	int			*done, moved, moves = 0;

	if ((done = calloc(n > 0 ? n : 1, sizeof(*done))) == NULL) {
		ss = STORE_NOMEM;
		goto fail;
	}
	for (i = 0; i < n; i++)
		done[i] = skip != NULL && skip[i];
	if ((ss = lock_jobs(st, n, p, res, done)) != STORE_OK)
		goto fail;
	for (;;) {
		ss = pass(st, n, p, res, done, &culprit, &moved);
		if (ss == STORE_OK && !moved)
			break;
		if (culprit == n)
			goto fail;
		if (moved && ++moves <= ACCEPT_MOVED_MAX)
			continue;
		/* That member alone is answered "try again". */
		(void)failed(res[culprit], moved ? STORE_BUSY : ss);
		done[culprit] = 1;
	}
	free(done);
	return STORE_OK;
fail:
	for (i = 0; i < n; i++)
		if (skip == NULL || !skip[i])
			(void)failed(res[i], ss);
	free(done);
	return ss;
}

enum hb_result
accept_observation(struct store *st, struct config *cfg,
    const struct accept_req *req, struct accept_res *res)
{
	const struct accept_prep	*pp;
	struct accept_prep		 p;
	enum store_status		 ss;

	if (accept_prepare(cfg, req, &p, res) != 0)
		return res->result;
	pp = &p;
	if ((ss = store_begin(st)) != STORE_OK)
		(void)failed(res, ss);
	else if (accept_batch(st, 1, &pp, &res, NULL) != STORE_OK)
		store_rollback(st);
	else if ((ss = store_commit(st)) != STORE_OK) {
		store_rollback(st);
		(void)failed(res, ss);
	}
	return res->result;
}

/* Appends the literal s; -1 when it does not fit with the final NUL. */
static int
put_raw(char *buf, size_t len, size_t *off, const char *s)
{
	return text_put(buf, len, off, s, strlen(s));
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
	    json_put_string(buf, len, &off, hb_result_name(res->result)) != 0 ||
	    (res->action[0] != '\0' &&
	    (put_raw(buf, len, &off, ",\"action\":") != 0 ||
	    json_put_string(buf, len, &off, res->action) != 0)) ||
	    (res->detail != NULL &&
	    (put_raw(buf, len, &off, ",\"detail\":") != 0 ||
	    json_put_string(buf, len, &off, res->detail) != 0)) ||
	    put_raw(buf, len, &off, "}") != 0) {
		buf[0] = '\0';
		return -1;
	}
	buf[off] = '\0';
	return 0;
}
