/*
 * intake/decide.c: the acceptance rules over what was read (see
 * intake/decide.h).
 */
#include <stdio.h>
#include <string.h>

#include "intake/decide.h"

/* A completion and a non-completion contradict; two failures do not. */
static int
contradicts(enum obs_status recorded, enum obs_status observed)
{
	return (recorded == OBS_ST_COMPLETED) != (observed == OBS_ST_COMPLETED);
}

/* Non-zero when the receipt of p is deduplicated by its delivery id. */
static int
has_delivery(const struct accept_prep *p)
{
	return p->rcpt.endpoint != NULL && p->rcpt.endpoint[0] != '\0' &&
	    p->rcpt.delivery_id != NULL && p->rcpt.delivery_id[0] != '\0';
}

static int
same_delivery(const struct accept_prep *a, const struct accept_prep *b)
{
	return has_delivery(a) && has_delivery(b) &&
	    strcmp(a->rcpt.endpoint, b->rcpt.endpoint) == 0 &&
	    strcmp(a->rcpt.delivery_id, b->rcpt.delivery_id) == 0;
}

static int
is_job(const struct accept_prep *p)
{
	return p->obs->event == OBS_EV_JOB;
}

static int
same_job(const struct accept_prep *a, const struct accept_prep *b)
{
	return is_job(a) && is_job(b) &&
	    strcmp(a->job.tenant, b->job.tenant) == 0 &&
	    strcmp(a->job.job_id, b->job.job_id) == 0;
}

static int
is_subject(const struct accept_prep *p)
{
	return p->obs->event == OBS_EV_SUBJECT;
}

/* A subject's events carry it as their job (intake/accept.h). */
static int
same_subject(const struct accept_prep *a, const struct accept_prep *b)
{
	return is_subject(a) && is_subject(b) &&
	    strcmp(a->job.tenant, b->job.tenant) == 0 &&
	    strcmp(a->job.job_id, b->job.job_id) == 0;
}

/*
 * What member i sees, the members before it applied over what was read:
 * the last earlier receipt of its delivery id, the last state an earlier
 * member wrote for its job, the earliest claim of its action id.
 */
static void
seen_by(size_t i, const struct accept_prep *const *p,
    const struct store_found *found, const struct decide_out *out,
    struct store_found *r)
{
	size_t	k;

	*r = found[i];
	for (k = 0; k < i; k++) {
		if ((out[k].writes & DECIDE_RECEIPT) &&
		    same_delivery(p[k], p[i])) {
			r->seen = 1;
			memset(&r->prior, 0, sizeof(r->prior));
			(void)snprintf(r->prior.result, sizeof(r->prior.result),
			    "%s", hb_result_name(out[k].res.result));
			memcpy(r->prior.action, out[k].res.action,
			    sizeof(r->prior.action));
		}
		if ((out[k].writes & DECIDE_JOB) && same_job(p[k], p[i]))
			r->job = out[k].next;
		if ((out[k].writes & DECIDE_SUBJECT) &&
		    same_subject(p[k], p[i]))
			r->subject = out[k].subject;
		if (!r->claimed && (out[k].writes & DECIDE_CLAIM) &&
		    strcmp(p[k]->action, p[i]->action) == 0) {
			r->claimed = 1;
			(void)snprintf(r->owner, sizeof(r->owner), "%s",
			    p[k]->job.job_id);
		}
	}
}

/* An earlier delivery with this delivery id: answered as it was. */
static void
again(const struct store_found *r, struct decide_out *o)
{
	enum hb_result	first;

	memcpy(o->res.action, r->prior.action, sizeof(o->res.action));
	/*
	 * Where the first answer refused it (409), a retry, or another body
	 * reusing the delivery id, must not turn a refusal into an
	 * acknowledgement.
	 */
	if (hb_result_parse(r->prior.result, &first) == 0 &&
	    !hb_result_is_ack(first)) {
		o->res.detail = "delivery id refused before";
		o->res.result = first;
	} else {
		o->res.detail = "delivery id received before";
		o->res.result = HB_DUPLICATE;
	}
}

static void
conflict(struct decide_out *o, const char *kind, const char *recorded,
    const char *observed)
{
	o->writes |= DECIDE_CONFLICT;
	o->kind = kind;
	o->recorded = recorded;
	o->observed = observed;
}

/* A completed job's action: claimed when no job holds it yet. */
static void
claim(const struct accept_prep *p, const struct store_found *r,
    struct decide_out *o)
{
	if (!r->claimed) {
		o->writes |= DECIDE_CLAIM;
		o->res.result = HB_ACCEPTED;
	} else if (strcmp(r->owner, p->job.job_id) == 0)
		o->res.result = HB_DUPLICATE;
	else {
		o->res.result = HB_ACTION_CONFLICT;
		o->res.detail = "action id already accepted for another job";
		conflict(o, "action", "another job", p->job.job_id);
	}
}

/*
 * A job's observation against its recorded state
 * (hookbox(7), ACCEPTANCE RULES).
 */
static void
job(const struct accept_prep *p, const struct store_found *r,
    struct decide_out *o)
{
	const struct obs	*ob = p->obs;
	const struct store_job	*cur = &r->job;

	o->next = *cur;
	if (ob->status == OBS_ST_NONE) {
		/* Progress: the stage rank only moves forward. */
		if (cur->terminal != OBS_ST_NONE || ob->stage < cur->stage) {
			o->res.result = HB_STALE;
			return;
		}
		o->res.result = HB_RECORDED;
		if (ob->stage > cur->stage) {
			o->next.stage = ob->stage;
			o->writes |= DECIDE_JOB;
		}
		return;
	}
	if (cur->terminal == OBS_ST_NONE) {
		o->next.terminal = ob->status;
		if (ob->stage > o->next.stage)
			o->next.stage = ob->stage;
		o->writes |= DECIDE_JOB;
	} else if (contradicts(cur->terminal, ob->status)) {
		o->res.result = HB_CONFLICT;
		o->res.detail = "terminal state contradicts the recorded one";
		conflict(o, "terminal", obs_status_name(cur->terminal),
		    obs_status_name(ob->status));
		return;
	}
	/* Only completion qualifies the file for the job's step. */
	if (ob->status != OBS_ST_COMPLETED) {
		o->res.result = HB_RECORDED;
		return;
	}
	claim(p, r, o);
}

/* (version, occurrence) of a against b: -1, 0 or 1. */
static int
order(int64_t va, int64_t ta, int64_t vb, int64_t tb)
{
	if (va != vb)
		return va < vb ? -1 : 1;
	if (ta != tb)
		return ta < tb ? -1 : 1;
	return 0;
}

/* "do publish v3": an event, for a conflict's row. */
static const char *
event_text(char *buf, size_t len, int undo, const char *step,
    int64_t version)
{
	(void)snprintf(buf, len, "%s %s v%lld", undo ? "undo" : "do", step,
	    (long long)version);
	return buf;
}

/* A subject's event against its recorded state (intake/decide.h's table). */
static void
subject(const struct accept_prep *p, const struct store_found *r,
    struct decide_out *o)
{
	const struct obs		*ob = p->obs;
	const struct store_subject	*cur = &r->subject;
	int				 c;

	if (cur->seen) {
		c = order(ob->version, ob->occurred_ms, cur->version,
		    cur->occurred_ms);
		if (c < 0) {
			o->res.result = HB_STALE;
			o->res.detail = "older than the subject's recorded"
			    " event; nothing undone";
			return;
		}
		if (c == 0 && !ob->undo == !cur->undo &&
		    strcmp(ob->step, cur->step) == 0) {
			o->res.result = HB_DUPLICATE;
			o->res.detail = "the same event was received before";
			return;
		}
		if (c == 0) {
			o->res.result = HB_CONFLICT;
			o->res.detail = "contradicts the subject's event of the"
			    " same version and time";
			conflict(o, "version", event_text(o->events[0],
			    sizeof(o->events[0]), cur->undo, cur->step,
			    cur->version), event_text(o->events[1],
			    sizeof(o->events[1]), ob->undo, ob->step,
			    ob->version));
			return;
		}
	}
	o->writes |= DECIDE_SUBJECT;
	o->subject.seen = 1;
	o->subject.version = ob->version;
	o->subject.occurred_ms = ob->occurred_ms;
	o->subject.undo = ob->undo != 0;
	memcpy(o->subject.step, ob->step, sizeof(o->subject.step));
	claim(p, r, o);
	if (o->res.result == HB_DUPLICATE)
		o->res.detail = "this version's step was acted on before";
}

/*
 * A fan-out's later step (intake/prep.h, follows): its event is the
 * member's before it, decided there.  When that took effect, this
 * step's action is claimed as that one's was, and the event is accepted
 * when any of its actions is new; else this step is answered as that
 * one was, and nothing is written for it.
 */
static void
follow(size_t i, const struct accept_prep *const *p,
    const struct store_found *found, struct decide_out *out)
{
	struct decide_out	*lead;
	struct store_found	 r;
	size_t			 k = i;

	while (k > 0 && p[k]->follows)
		k--;
	lead = &out[k];
	if (!(lead->writes & DECIDE_SUBJECT)) {
		out[i].res.result = lead->res.result;
		out[i].res.detail = lead->res.detail;
		return;
	}
	seen_by(i, p, found, out, &r);
	claim(p[i], &r, &out[i]);
	if (out[i].res.result == HB_DUPLICATE)
		out[i].res.detail = "this version's step was acted on before";
	else if (out[i].res.result == HB_ACCEPTED &&
	    lead->res.result == HB_DUPLICATE) {
		lead->res.result = HB_ACCEPTED;
		lead->res.detail = NULL;
	}
}

void
decide_batch(size_t n, const struct accept_prep *const *p,
    const struct store_found *found, struct decide_out *out)
{
	struct store_found	r;
	struct decide_out	*o;
	size_t			 i;

	for (i = 0; i < n; i++) {
		o = &out[i];
		memset(o, 0, sizeof(*o));
		memcpy(o->res.action, p[i]->action, sizeof(o->res.action));
		if (p[i]->follows) {
			follow(i, p, found, out);
			continue;
		}
		seen_by(i, p, found, out, &r);
		if (r.seen) {
			/* Nothing is written: the first receipt stands. */
			again(&r, o);
			continue;
		}
		o->writes = DECIDE_RECEIPT;
		switch (p[i]->obs->event) {
		case OBS_EV_JOB:
			job(p[i], &r, o);
			break;
		case OBS_EV_BATCH:
			o->res.result = HB_RECORDED;
			break;
		case OBS_EV_UNKNOWN:
			o->res.result = HB_IGNORED;
			o->res.detail = "event type not understood; recorded";
			break;
		case OBS_EV_SUBJECT:
			subject(p[i], &r, o);
			break;
		}
	}
}
