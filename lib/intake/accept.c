/*
 * intake/accept.c: qualification, ordering and the acceptance transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "base/fault.h"
#include "base/json.h"
#include "base/text.h"
#include "base/util.h"
#include "intake/accept.h"
#include "intake/decide.h"
#include "store/flight.h"
#include "store/outbox.h"

static const char *const source_names[] = {
	[OBS_SRC_JOB] = "job", [OBS_SRC_ORG] = "org", [OBS_SRC_POLL] = "poll",
	[OBS_SRC_EVENT] = "event",
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
 * A subject's action: what the downstream needs to compare versions as
 * hookbox did (hookbox(7), The action payload), and unless its mapping
 * says otherwise the provider's body as "data", as received (a JSON
 * object json_parse_strict() took: no NUL in it; a form, printable
 * ASCII, as a JSON string).  NULL when out of memory.
 */
static char *
subject_payload(const struct accept_prep *p)
{
	const struct config_job	*job = &p->job;
	const struct obs	*o = p->obs;
	cJSON			*doc;
	char			*s = NULL, *data = NULL, space[HB_ID_MAX + 1];

	if (p->carry && (data = strndup(p->rcpt.body, p->rcpt.bodylen)) ==
	    NULL)
		return NULL;

	/* job_id is namespace/subject (subject_job()); a name has no '/'. */
	(void)snprintf(space, sizeof(space), "%.*s",
	    (int)strcspn(job->job_id, "/"), job->job_id);

	if ((doc = cJSON_CreateObject()) == NULL) {
		free(data);
		return NULL;
	}
	if (cJSON_AddStringToObject(doc, "action", p->action) != NULL &&
	    cJSON_AddStringToObject(doc, "tenant", job->tenant) != NULL &&
	    cJSON_AddStringToObject(doc, "namespace", space) != NULL &&
	    cJSON_AddStringToObject(doc, "subject", o->job_id) != NULL &&
	    json_add_int(doc, "version", o->version) != NULL &&
	    cJSON_AddStringToObject(doc, "step", job->step) != NULL &&
	    cJSON_AddStringToObject(doc, "effect", o->undo ? "undo" : "do") !=
	    NULL &&
	    cJSON_AddStringToObject(doc, "type", o->type) != NULL &&
	    cJSON_AddStringToObject(doc, "event_id", o->delivery_id) != NULL &&
	    json_add_int(doc, "occurred_at_ms", o->occurred_ms) != NULL &&
	    json_add_int(doc, "accepted_at_ms", p->now_ms) != NULL &&
	    (data == NULL || (p->carry == ACCEPT_CARRY_TEXT ?
	    cJSON_AddStringToObject(doc, "data", data) :
	    cJSON_AddRawToObject(doc, "data", data)) != NULL))
		s = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	free(data);
	return s;
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
action_payload(const struct accept_prep *p)
{
	const struct config_job	*job = &p->job;
	const struct obs	*o = p->obs;
	const char		*action = p->action;
	int64_t			 now = p->now_ms;
	cJSON			*doc, *file, *out = NULL;
	char			*s = NULL;

	if (o->event == OBS_EV_SUBJECT)
		return subject_payload(p);
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
	    json_add_int(doc, "accepted_at_ms", now) == NULL)
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

/*
 * A subject's event as a job (intake/prep.h, struct accept_prep): the
 * subject qualified by its namespace, its action tenant:namespace/subject:
 * version:step.  -1 with res filled when it does not fit an action id.
 */
static int
subject_job(const struct accept_req *req, struct accept_prep *p,
    struct accept_res *res)
{
	const struct obs		*o = req->obs;
	const struct mapping_step	*m;
	struct config_job		*j = &p->job;
	size_t				 k;

	(void)snprintf(j->tenant, sizeof(j->tenant), "%s", req->tenant);
	(void)snprintf(j->step, sizeof(j->step), "%s", o->step);
	(void)snprintf(j->destination, sizeof(j->destination), "%s",
	    req->destination);
	if (snprintf(j->job_id, sizeof(j->job_id), "%s/%s", req->space,
	    o->job_id) >= (int)sizeof(j->job_id) ||
	    snprintf(j->attempt, sizeof(j->attempt), "%s:%lld", j->job_id,
	    (long long)o->version) >= (int)sizeof(j->attempt) ||
	    snprintf(p->action, sizeof(p->action), "%s:%s:%s", j->tenant,
	    j->attempt, j->step) >= (int)sizeof(p->action)) {
		p->action[0] = '\0';
		res->detail = "namespace, subject and version too long for an"
		    " action id";
		res->result = HB_MALFORMED;
		return -1;
	}
	/*
	 * A fan-out's other steps: names, as the first's, so that each
	 * action id fits as its does (HB_ACTION_MAX).
	 */
	if (req->nmore > MAPPING_FANOUT_MAX - 1) {
		res->detail = "more steps than an event makes";
		res->result = HB_MALFORMED;
		return -1;
	}
	for (k = 0; k < req->nmore; k++) {
		m = &req->more[k];
		if (!text_valid_name(m->name) ||
		    !text_valid_name(m->destination)) {
			res->detail = "identifier empty, too long or not UTF-8";
			res->result = HB_MALFORMED;
			return -1;
		}
		p->more[k] = *m;
	}
	p->nmore = req->nmore;
	return 0;
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
	    ((o->event == OBS_EV_JOB || o->event == OBS_EV_SUBJECT) &&
	    !text_valid_id(o->job_id, HB_ID_MAX)) ||
	    (o->event == OBS_EV_SUBJECT && (!text_valid_name(o->step) ||
	    req->destination == NULL || !text_valid_name(req->destination) ||
	    req->space == NULL || !text_valid_name(req->space) ||
	    o->version < 0 || o->delivery_id[0] == '\0')) ||
	    (o->delivery_id[0] != '\0' &&
	    !text_valid_id(o->delivery_id, HB_ID_MAX)) ||
	    (unsigned)o->source > OBS_SRC_EVENT ||
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

	if (o->event == OBS_EV_JOB && ac->job == NULL) {
		(void)snprintf(p->job.tenant, sizeof(p->job.tenant), "%s",
		    req->tenant);
		(void)snprintf(p->job.job_id, sizeof(p->job.job_id), "%s",
		    o->job_id);
		p->job_wanted = 1;
	} else if (o->event == OBS_EV_JOB && accept_job_found(p,
	    ac->job(ac->arg, req->tenant, o->job_id, &p->job), res) != 0)
		return -1;

	if (o->event == OBS_EV_SUBJECT && subject_job(req, p, res) != 0)
		return -1;

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
	if (o->event == OBS_EV_SUBJECT) {
		p->carry = req->body != NULL ? req->carry : 0;
		p->rcpt.status = NULL;
		p->rcpt.stage = NULL;
		p->rcpt.versioned = 1;
		p->rcpt.version = o->version;
		p->rcpt.occurred_ms = o->occurred_ms;
	}
	return 0;

config_failed:
	res->result = config_failure(cs);
	return -1;
}

int
accept_job_found(struct accept_prep *p, enum config_status cs,
    struct accept_res *res)
{
	memset(res, 0, sizeof(*res));
	p->job_wanted = 0;
	if (cs == CONFIG_STALE)
		p->config_stale = 1;
	if (cs == CONFIG_NOTFOUND) {
		res->detail = "job not registered to this tenant";
		res->result = HB_UNKNOWN_JOB;
		return -1;
	}
	if (cs != CONFIG_OK) {
		res->detail = config_strerror(cs);
		res->result = config_failure(cs);
		return -1;
	}
	if (snprintf(p->action, sizeof(p->action), "%s:%s:%s",
	    p->job.tenant, p->job.attempt, p->job.step) >=
	    (int)sizeof(p->action)) {
		p->action[0] = '\0';
		res->detail = "action id too long";
		res->result = HB_MALFORMED;
		return -1;
	}
	return 0;
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
 * What was decided for one observation, as the store writes it: *w, with
 * *a its new action and *payload a's payload (NULL when none), which the
 * caller frees with cJSON_free().
 */
static enum store_status
to_put(const struct accept_prep *p, const struct decide_out *o,
    struct store_put *w, struct store_action *a, char **payload)
{
	const struct config_job	*job = &p->job;

	memset(w, 0, sizeof(*w));
	memset(a, 0, sizeof(*a));
	*payload = NULL;
	w->tenant = job->tenant;
	w->key = job->job_id;
	w->obs = p->obs;
	w->now = p->now_ms;
	if (o->writes & DECIDE_RECEIPT) {
		w->rcpt = &p->rcpt;
		w->result = hb_result_name(o->res.result);
		w->action = o->res.action;
	}
	if (o->writes & DECIDE_JOB)
		w->job = &o->next;
	if (o->writes & DECIDE_SUBJECT)
		w->subject = &o->subject;
	if (o->writes & DECIDE_CONFLICT) {
		w->kind = o->kind;
		w->recorded = o->recorded;
		w->observed = o->observed;
		w->conflict_action = o->res.action;
	}
	if (!(o->writes & DECIDE_CLAIM))
		return STORE_OK;
	/* Built only for a new action: a duplicate costs none. */
	a->id = p->action;
	a->tenant = job->tenant;
	a->attempt = job->attempt;
	a->step = job->step;
	a->job_id = job->job_id;
	a->destination = job->destination;
	a->now = p->now_ms;
	if ((*payload = action_payload(p)) == NULL)
		return STORE_NOMEM;
	a->payload = *payload;
	w->claim = a;
	return STORE_OK;
}

/* Non-zero when p holds its job's (or subject's) lock on PostgreSQL. */
static int
locking(const struct accept_prep *p)
{
	return p->obs->event == OBS_EV_JOB || p->obs->event == OBS_EV_SUBJECT;
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
 * A batch's jobs, one member standing for each, in one order (tenant,
 * job): two hosts' batches that share jobs then wait for one another
 * instead of deadlocking.  at is the flight index of their lock.
 */
struct locks {
	const struct accept_prep	**v;
	const char			**tenant, **job_id;
	size_t				  m;
	size_t				  at;
};

static void
locks_free(struct locks *lk)
{
	free(lk->job_id);
	free(lk->tenant);
	free(lk->v);
}

/* The jobs of the members not done; -1 when out of memory. */
static int
locks_list(struct locks *lk, size_t n, const struct accept_prep *const *p,
    const int *done)
{
	size_t	i, m = 0, k = n > 0 ? n : 1;

	memset(lk, 0, sizeof(*lk));
	if ((lk->v = calloc(k, sizeof(*lk->v))) == NULL ||
	    (lk->tenant = calloc(k, sizeof(*lk->tenant))) == NULL ||
	    (lk->job_id = calloc(k, sizeof(*lk->job_id))) == NULL)
		return -1;
	for (i = 0; i < n; i++)
		if (!done[i] && locking(p[i]))
			lk->v[m++] = p[i];
	if (m > 1)
		qsort(lk->v, m, sizeof(lk->v[0]), by_job);
	for (i = 0; i < m; i++)
		if (lk->m == 0 || by_job(&lk->v[lk->m - 1], &lk->v[i]) != 0)
			lk->v[lk->m++] = lk->v[i];
	for (i = 0; i < lk->m; i++) {
		lk->tenant[i] = lk->v[i]->job.tenant;
		lk->job_id[i] = lk->v[i]->job.job_id;
	}
	return 0;
}

/* Fails the members of job j, "try again". */
static void
locks_fail(const struct locks *lk, size_t j, size_t n,
    const struct accept_prep *const *p, struct accept_res *const *res,
    int *done, enum store_status ss)
{
	size_t	k;

	for (k = 0; k < n; k++)
		if (!done[k] && locking(p[k]) &&
		    by_job(&p[k], &lk->v[j]) == 0) {
			(void)failed(res[k], ss);
			done[k] = 1;
		}
}

/*
 * Sends the jobs' locks into the flight, in one statement
 * (store_jobs_lock()) in a savepoint of its own: they land with the
 * batch's look-ups (pass()).  Nothing on SQLite, whose BEGIN IMMEDIATE
 * took the one lock there is.
 */
static enum store_status
locks_send(struct store *st, struct locks *lk)
{
	enum store_status	ss;

	if (lk->m == 0)
		return STORE_OK;
	if ((ss = store_savepoint(st)) != STORE_OK)
		return ss;
	lk->at = store_sent(st);
	if ((ss = store_jobs_lock(st, lk->tenant, lk->job_id, lk->m)) !=
	    STORE_OK)
		return ss;
	return store_release(st);
}

/*
 * After the locks failed in the flight (their savepoint rolled back),
 * one of them not had within the busy budget, which their wait spent:
 * each is tried again without waiting, landed, in its own savepoint.
 * The members of a job held elsewhere fail alone.  Returns STORE_OK, or
 * why the whole transaction is lost.
 */
static enum store_status
locks_rest(struct store *st, const struct locks *lk, size_t n,
    const struct accept_prep *const *p, struct accept_res *const *res,
    int *done)
{
	enum store_status	ss;
	size_t			j;

	for (j = 0; j < lk->m; j++) {
		if ((ss = store_savepoint(st)) != STORE_OK)
			return ss;
		if ((ss = store_job_lock(st, lk->tenant[j], lk->job_id[j],
		    0)) == STORE_OK)
			ss = store_land(st, NULL);
		if (ss == STORE_OK) {
			if ((ss = store_release(st)) != STORE_OK)
				return ss;
			continue;
		}
		if (store_rollback_to(st) != STORE_OK || !store_in_tx(st))
			return ss;
		locks_fail(lk, j, n, p, res, done, ss);
	}
	return STORE_OK;
}

/* How many times a batch is looked up again when the state moved. */
#define ACCEPT_MOVED_MAX	3

/*
 * The writes of one pass, and what they need while they are sent: the
 * store's rows, the actions, their payloads, and for each member the
 * index in the flight of its first statement.
 */
struct writes {
	struct store_put	*w;
	struct store_action	*a;
	char			**payload;
	size_t			*first;
};

static void
writes_free(struct writes *wr, size_t n)
{
	size_t	i;

	if (wr->payload != NULL)
		for (i = 0; i < n; i++)
			cJSON_free(wr->payload[i]);
	free(wr->first);
	free(wr->payload);
	free(wr->a);
	free(wr->w);
}

/*
 * Sends the m members' writes: one statement per table (store_put_set())
 * unless rows, else a statement per row, wr->first[i] where member i's
 * start.  Returns what failed before the flight lands, with *at the
 * member (m when none is to blame), *tried the members sent.
 */
static enum store_status
writes_send(struct store *st, struct writes *wr,
    const struct accept_prep *const *live, const struct decide_out *out,
    size_t m, int rows, size_t *at, size_t *tried)
{
	enum store_status	ss = STORE_OK;
	size_t			i, f;

	*at = m;
	*tried = 0;
	for (i = 0; i < m; i++)
		if ((ss = to_put(live[i], &out[i], &wr->w[i], &wr->a[i],
		    &wr->payload[i])) != STORE_OK) {
			*at = i;
			return ss;
		}
	if (!rows) {
		if ((ss = store_put_set(st, wr->w, m, &f)) != STORE_OK)
			*at = f < m ? f : m;
		return ss;
	}
	for (i = 0; i < m; i++) {
		wr->first[i] = store_sent(st);
		*tried = i + 1;
		if ((ss = store_put_one(st, &wr->w[i])) != STORE_OK) {
			*at = i;
			return ss;
		}
	}
	return STORE_OK;
}

/*
 * f made a member that follows lead (intake/prep.h): its k-th other
 * step, with that step's destination and action.
 */
static void
follower(struct accept_prep *f, const struct accept_prep *lead, size_t k)
{
	*f = *lead;
	f->nmore = 0;
	f->follows = 1;
	(void)snprintf(f->job.step, sizeof(f->job.step), "%s",
	    lead->more[k].name);
	(void)snprintf(f->job.destination, sizeof(f->job.destination), "%s",
	    lead->more[k].destination);
	/* accept_prepare() saw that it fits. */
	(void)snprintf(f->action, sizeof(f->action), "%s:%s:%s",
	    f->job.tenant, f->job.attempt, f->job.step);
}

/* A follower's step, named in its observation's answer. */
static void
res_follow(struct accept_res *res, const struct accept_prep *f)
{
	(void)snprintf(res->more[res->nmore++], sizeof(res->more[0]), "%s",
	    f->job.step);
}

/*
 * One pass: in a savepoint, looks up what the members not done need
 * (one flight, with the BEGIN and the locks sent before it), decides
 * them, and sends the writes (a second flight): one statement per table,
 * or with rows a statement per row.  On a member's failure, *culprit is
 * its index (the savepoint rolled back, the transaction standing); when
 * the state moved under it (a key another host wrote), *moved.  When a
 * table's statement failed on the server, which says not for which
 * member, *unsure (the savepoint rolled back, the transaction standing):
 * the caller passes again a row at a time.  *lost is the index in the
 * first flight of the statement that failed it, else SIZE_MAX.
 */
static enum store_status
pass(struct store *st, size_t n, const struct accept_prep *const *p,
    struct accept_res *const *res, const int *done, int rows,
    size_t *culprit, int *moved, int *unsure, size_t *lost)
{
	const struct accept_prep	**live = NULL;
	struct accept_prep		 *fol = NULL;
	struct store_look		 *look = NULL;
	struct store_found		 *found = NULL;
	struct decide_out		 *out = NULL;
	struct writes			  wr;
	enum store_status		  ss = STORE_OK, rs;
	size_t				 *idx = NULL, m = 0, i, j, k, f, at,
					  tried, rel = SIZE_MAX, nf = 0;

	*culprit = n;
	*moved = 0;
	*unsure = 0;
	*lost = SIZE_MAX;
	memset(&wr, 0, sizeof(wr));
	/* A fan-out's other steps are members of their own (follower()). */
	for (i = 0; i < n; i++)
		if (!done[i])
			nf += p[i]->nmore;
	if ((live = calloc(n + nf, sizeof(*live))) == NULL ||
	    (nf > 0 && (fol = calloc(nf, sizeof(*fol))) == NULL) ||
	    (look = calloc(n + nf, sizeof(*look))) == NULL ||
	    (found = calloc(n + nf, sizeof(*found))) == NULL ||
	    (out = calloc(n + nf, sizeof(*out))) == NULL ||
	    (idx = calloc(n + nf, sizeof(*idx))) == NULL ||
	    (wr.w = calloc(n + nf, sizeof(*wr.w))) == NULL ||
	    (wr.a = calloc(n + nf, sizeof(*wr.a))) == NULL ||
	    (wr.payload = calloc(n + nf, sizeof(*wr.payload))) == NULL ||
	    (wr.first = calloc(n + nf, sizeof(*wr.first))) == NULL) {
		ss = STORE_NOMEM;
		goto out;
	}
	for (i = 0, nf = 0; i < n; i++) {
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
		} else if (p[i]->obs->event == OBS_EV_SUBJECT) {
			look[m].tenant = p[i]->job.tenant;
			look[m].subject = p[i]->job.job_id;
			look[m].action = p[i]->action;
		}
		m++;
		/* Its followers need their actions alone looked up. */
		for (k = 0; k < p[i]->nmore; k++, m++) {
			follower(&fol[nf], p[i], k);
			idx[m] = i;
			live[m] = &fol[nf];
			look[m].action = fol[nf++].action;
		}
	}
	if (m == 0)
		goto out;
	if ((ss = store_savepoint(st)) != STORE_OK ||
	    (ss = store_look_batch(st, look, m)) != STORE_OK) {
		(void)store_land(st, lost);
		goto fail;
	}
	(void)fault_fire(FAULT_LOOKED);
	for (i = 0; i < m; i++)
		found[i] = look[i].found;
	decide_batch(m, live, found, out);
	rows = rows || !store_sets(st);
	if ((ss = writes_send(st, &wr, live, out, m, rows, &at, &tried)) ==
	    STORE_OK) {
		rel = store_sent(st);
		ss = store_release(st);	/* a failure: with the flight's */
	}
	if ((rs = store_land(st, &f)) != STORE_OK) {
		/*
		 * The member whose statement failed, the last to start at or
		 * before it (one with nothing to write starts where the next
		 * does), or none: the release.  A table's statement names
		 * none.
		 */
		for (j = 0; rows && j < tried && wr.first[j] <= f; j++)
			continue;
		*culprit = j > 0 && f < rel ? j - 1 : m;
		*unsure = !rows && f < rel;
		ss = rs;
	} else if (ss != STORE_OK)
		*culprit = at;		/* a failure outside the flight */
	else {
		for (i = 0; i < m; i++)
			if (!live[i]->follows)
				*res[idx[i]] = out[i].res;
			else
				res_follow(res[idx[i]], live[i]);
		goto out;
	}
	if (*culprit < m) {
		*moved = rs != STORE_OK && store_moved(st);
		*culprit = idx[*culprit];
		if (*moved)
			ss = STORE_OK;
	} else
		*culprit = n;
fail:
	if ((rs = store_rollback_to(st)) != STORE_OK) {
		*culprit = n;	/* everything is lost, not one member */
		*unsure = 0;
		if (ss == STORE_OK)
			ss = rs;
	}
out:
	writes_free(&wr, m);
	free(idx);
	free(out);
	free(found);
	free(look);
	free(fol);
	free(live);
	return ss;
}

enum store_status
accept_batch(struct store *st, size_t n, const struct accept_prep *const *p,
    struct accept_res *const *res, const int *skip)
{
	struct locks		 lk;
	enum store_status	 ss;
	size_t			 culprit, lost, i;
	int			*done, moved, unsure, rows = 0, moves = 0;

	memset(&lk, 0, sizeof(lk));
	if ((done = calloc(n > 0 ? n : 1, sizeof(*done))) == NULL) {
		ss = STORE_NOMEM;
		goto fail;
	}
	for (i = 0; i < n; i++)
		done[i] = skip != NULL && skip[i];
	if (store_job_locks(st)) {
		if (locks_list(&lk, n, p, done) != 0) {
			ss = STORE_NOMEM;
			goto fail;
		}
		if ((ss = locks_send(st, &lk)) != STORE_OK)
			goto fail;
	}
	for (;;) {
		ss = pass(st, n, p, res, done, rows, &culprit, &moved, &unsure,
		    &lost);
		if (unsure) {
			/*
			 * A table's statement failed: find whose, a row at a
			 * time, and stay so for the batch (what fails one
			 * member may fail the next: a full disk).
			 */
			rows = 1;
			continue;
		}
		if (ss != STORE_OK && culprit == n && lk.m > 0 &&
		    lost == lk.at) {
			/* The locks: pass() rolled back to their savepoint. */
			if (ss != STORE_BUSY || !store_in_tx(st))
				goto fail;
			if ((ss = locks_rest(st, &lk, n, p, res, done)) !=
			    STORE_OK)
				goto fail;
			lk.m = 0;
			continue;
		}
		lk.m = 0;	/* held from here on */
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
	locks_free(&lk);
	free(done);
	return STORE_OK;
fail:
	for (i = 0; i < n; i++)
		if (skip == NULL || !skip[i])
			(void)failed(res[i], ss);
	locks_free(&lk);
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
 * A fan-out's "actions": the first, then each other step's in its place
 * (a step is the action id's last part).  -1 when it does not fit.
 */
static int
put_actions(char *buf, size_t len, size_t *off, const struct accept_res *res)
{
	char	id[HB_ACTION_MAX + 1];
	size_t	k;
	int	head = (int)(strrchr(res->action, ':') - res->action) + 1;

	if (put_raw(buf, len, off, ",\"actions\":[") != 0 ||
	    json_put_string(buf, len, off, res->action) != 0)
		return -1;
	for (k = 0; k < res->nmore; k++) {
		(void)snprintf(id, sizeof(id), "%.*s%s", head, res->action,
		    res->more[k]);
		if (put_raw(buf, len, off, ",") != 0 ||
		    json_put_string(buf, len, off, id) != 0)
			return -1;
	}
	return put_raw(buf, len, off, "]");
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
	    (res->nmore > 0 && strchr(res->action, ':') != NULL &&
	    put_actions(buf, len, &off, res) != 0) ||
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
