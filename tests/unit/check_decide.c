/*
 * check_decide.c: tests of lib/intake/decide.c, the acceptance rules as a pure
 * function.  First a table of every recorded state against every kind of
 * observation (what it answers, what it writes, the job's next state),
 * then batches: what a member sees of the members before it.
 */
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "intake/decide.h"
#include "testutil.h"
#include "base/util.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

enum { NONE = OBS_ST_NONE, DONE = OBS_ST_COMPLETED, FAIL = OBS_ST_FAILED,
    SKIP = OBS_ST_SKIPPED, WARN = OBS_ST_WARNING };
enum { Q = OBS_STAGE_QUEUED, DL = OBS_STAGE_DOWNLOADING,
    MUX = OBS_STAGE_MUXING, UP = OBS_STAGE_UPLOADING,
    FIN = OBS_STAGE_COMPLETED };
/* Who holds the observation's action id already. */
enum { FREE, SAME, OTHER };

#define EV	OBS_EV_JOB
#define BAT	OBS_EV_BATCH
#define UNK	OBS_EV_UNKNOWN
#define REC	HB_RECORDED
#define ACC	HB_ACCEPTED
#define DUP	HB_DUPLICATE
#define STA	HB_STALE
#define CON	HB_CONFLICT
#define ACO	HB_ACTION_CONFLICT
#define IGN	HB_IGNORED

#define R	DECIDE_RECEIPT
#define J	DECIDE_JOB
#define C	DECIDE_CLAIM
#define X	DECIDE_CONFLICT

/* One observation of job j-1 (action acme:a:s) and what it must give. */
static const struct row {
	int		 rec_stage, rec_term;	/* recorded */
	int		 holder;		/* of the action id */
	int		 event, status, stage;	/* observed */
	enum hb_result	 result;
	unsigned	 writes;
	int		 next_stage, next_term;	/* with J */
	const char	*kind;			/* with X: "act", "term" */
} rows[] = {
	/* Never seen. */
	{ Q, NONE, FREE, EV, NONE, DL, REC, R | J, DL, NONE, 0 },
	{ Q, NONE, FREE, EV, NONE, Q, REC, R, 0, 0, 0 },
	{ Q, NONE, FREE, EV, DONE, FIN, ACC, R | J | C, FIN, DONE, 0 },
	{ Q, NONE, FREE, EV, DONE, Q, ACC, R | J | C, Q, DONE, 0 },
	{ Q, NONE, SAME, EV, DONE, FIN, DUP, R | J, FIN, DONE, 0 },
	{ Q, NONE, OTHER, EV, DONE, FIN, ACO, R | J | X, FIN, DONE, "act" },
	{ Q, NONE, FREE, EV, FAIL, DL, REC, R | J, DL, FAIL, 0 },
	{ Q, NONE, FREE, EV, SKIP, Q, REC, R | J, Q, SKIP, 0 },
	{ Q, NONE, FREE, EV, WARN, Q, REC, R | J, Q, WARN, 0 },
	{ Q, NONE, FREE, BAT, NONE, Q, REC, R, 0, 0, 0 },
	{ Q, NONE, FREE, UNK, NONE, Q, IGN, R, 0, 0, 0 },
	/* In progress, at MUX. */
	{ MUX, NONE, FREE, EV, NONE, DL, STA, R, 0, 0, 0 },
	{ MUX, NONE, FREE, EV, NONE, MUX, REC, R, 0, 0, 0 },
	{ MUX, NONE, FREE, EV, NONE, UP, REC, R | J, UP, NONE, 0 },
	{ MUX, NONE, FREE, EV, DONE, FIN, ACC, R | J | C, FIN, DONE, 0 },
	{ MUX, NONE, FREE, EV, DONE, Q, ACC, R | J | C, MUX, DONE, 0 },
	{ MUX, NONE, FREE, EV, FAIL, DL, REC, R | J, MUX, FAIL, 0 },
	/* Completed. */
	{ FIN, DONE, SAME, EV, NONE, UP, STA, R, 0, 0, 0 },
	{ FIN, DONE, SAME, EV, NONE, FIN, STA, R, 0, 0, 0 },
	{ FIN, DONE, SAME, EV, DONE, FIN, DUP, R, 0, 0, 0 },
	{ FIN, DONE, FREE, EV, DONE, FIN, ACC, R | C, 0, 0, 0 },
	{ FIN, DONE, OTHER, EV, DONE, FIN, ACO, R | X, 0, 0, "act" },
	{ FIN, DONE, SAME, EV, FAIL, DL, CON, R | X, 0, 0, "term" },
	{ FIN, DONE, SAME, EV, SKIP, Q, CON, R | X, 0, 0, "term" },
	{ FIN, DONE, SAME, EV, WARN, Q, CON, R | X, 0, 0, "term" },
	{ FIN, DONE, SAME, BAT, NONE, Q, REC, R, 0, 0, 0 },
	/* Failed (and the other ends without a file). */
	{ DL, FAIL, FREE, EV, NONE, UP, STA, R, 0, 0, 0 },
	{ DL, FAIL, FREE, EV, FAIL, DL, REC, R, 0, 0, 0 },
	{ DL, FAIL, FREE, EV, SKIP, DL, REC, R, 0, 0, 0 },
	{ DL, FAIL, FREE, EV, WARN, DL, REC, R, 0, 0, 0 },
	{ DL, FAIL, FREE, EV, DONE, FIN, CON, R | X, 0, 0, "term" },
	{ Q, SKIP, FREE, EV, DONE, FIN, CON, R | X, 0, 0, "term" },
	{ Q, WARN, FREE, EV, DONE, FIN, CON, R | X, 0, 0, "term" },
	{ Q, WARN, FREE, EV, FAIL, Q, REC, R, 0, 0, 0 },
};

struct member {
	struct obs		obs;
	struct accept_prep	prep;
};

/*
 * Subjects (hookbox(7), Versioned events): one event of subject a-1
 * against its recorded state, every row of intake/decide.h's table.  Steps:
 * publish and thumb are done, unpublish undoes.
 */
#define S	DECIDE_SUBJECT
#define DO	0
#define UNDO	1

static const struct vrow {
	int		 seen;			/* recorded */
	int64_t		 v, t;
	int		 undo;
	const char	*step;
	int		 holder;		/* of the action id */
	int64_t		 ev, et;		/* observed */
	int		 eundo;
	const char	*estep;
	enum hb_result	 result;
	unsigned	 writes;
} vrows[] = {
	/* Never seen: any event takes effect. */
	{ 0, 0, 0, DO, "", FREE, 1, 5, DO, "publish", ACC, R | S | C },
	{ 0, 0, 0, DO, "", FREE, 1, 5, UNDO, "unpublish", ACC, R | S | C },
	{ 0, 0, 0, DO, "", SAME, 1, 5, DO, "publish", DUP, R | S },
	/* Published at version 3, time 100. */
	{ 1, 3, 100, DO, "publish", SAME, 2, 200, DO, "publish", STA, R },
	{ 1, 3, 100, DO, "publish", SAME, 2, 50, UNDO, "unpublish", STA, R },
	{ 1, 3, 100, DO, "publish", SAME, 3, 50, DO, "publish", STA, R },
	{ 1, 3, 100, DO, "publish", SAME, 3, 50, UNDO, "unpublish", STA, R },
	{ 1, 3, 100, DO, "publish", SAME, 3, 100, DO, "publish", DUP, R },
	{ 1, 3, 100, DO, "publish", FREE, 3, 100, UNDO, "unpublish", CON,
	    R | X },
	{ 1, 3, 100, DO, "publish", FREE, 3, 100, DO, "thumb", CON, R | X },
	{ 1, 3, 100, DO, "publish", SAME, 3, 150, DO, "publish", DUP, R | S },
	{ 1, 3, 100, DO, "publish", FREE, 3, 150, UNDO, "unpublish", ACC,
	    R | S | C },
	{ 1, 3, 100, DO, "publish", FREE, 3, 150, DO, "thumb", ACC, R | S | C },
	{ 1, 3, 100, DO, "publish", FREE, 4, 10, DO, "publish", ACC, R | S | C },
	{ 1, 3, 100, DO, "publish", FREE, 4, 10, UNDO, "unpublish", ACC,
	    R | S | C },
	/* Unpublished at version 3, time 200. */
	{ 1, 3, 200, UNDO, "unpublish", SAME, 3, 100, DO, "publish", STA, R },
	{ 1, 3, 200, UNDO, "unpublish", SAME, 3, 200, UNDO, "unpublish", DUP,
	    R },
	{ 1, 3, 200, UNDO, "unpublish", FREE, 3, 200, DO, "publish", CON,
	    R | X },
	{ 1, 3, 200, UNDO, "unpublish", SAME, 3, 300, DO, "publish", DUP,
	    R | S },
	{ 1, 3, 200, UNDO, "unpublish", FREE, 4, 300, DO, "publish", ACC,
	    R | S | C },
	{ 1, 3, 200, UNDO, "unpublish", FREE, 2, 900, UNDO, "unpublish", STA,
	    R },
};

/* An event of subject for tenant acme, action acme:SUBJECT:V:STEP. */
static void
vmember(struct member *m, const char *subject, int64_t v, int64_t t,
    int undo, const char *step, const char *event_id)
{
	memset(m, 0, sizeof(*m));
	m->obs.event = OBS_EV_SUBJECT;
	m->obs.source = OBS_SRC_EVENT;
	m->obs.version = v;
	m->obs.occurred_ms = t;
	m->obs.undo = undo;
	(void)snprintf(m->obs.step, sizeof(m->obs.step), "%s", step);
	(void)snprintf(m->obs.job_id, sizeof(m->obs.job_id), "%s", subject);
	(void)snprintf(m->obs.delivery_id, sizeof(m->obs.delivery_id), "%s",
	    event_id);
	m->prep.obs = &m->obs;
	(void)snprintf(m->prep.job.tenant, sizeof(m->prep.job.tenant), "acme");
	(void)snprintf(m->prep.job.job_id, sizeof(m->prep.job.job_id), "%s",
	    subject);
	(void)snprintf(m->prep.job.attempt, sizeof(m->prep.job.attempt),
	    "%s:%lld", subject, (long long)v);
	(void)snprintf(m->prep.job.step, sizeof(m->prep.job.step), "%s", step);
	(void)snprintf(m->prep.action, sizeof(m->prep.action), "acme:%s:%s",
	    m->prep.job.attempt, step);
	m->prep.rcpt.tenant = "acme";
	m->prep.rcpt.endpoint = "cms";
	m->prep.rcpt.delivery_id = m->obs.delivery_id;
}

START_TEST(subject_table)
{
	const struct vrow		*w = &vrows[_i];
	struct member			 m;
	const struct accept_prep	*p[1];
	struct store_found		 r;
	struct decide_out		 o;
	char				 want[64];

	vmember(&m, "a-1", w->ev, w->et, w->eundo, w->estep, "e-1");
	p[0] = &m.prep;
	memset(&r, 0, sizeof(r));
	r.subject.seen = w->seen;
	r.subject.version = w->v;
	r.subject.occurred_ms = w->t;
	r.subject.undo = w->undo;
	(void)snprintf(r.subject.step, sizeof(r.subject.step), "%s", w->step);
	r.claimed = w->holder != FREE;
	(void)snprintf(r.owner, sizeof(r.owner), "%s",
	    w->holder == SAME ? "a-1" : "");
	decide_batch(1, p, &r, &o);
	ck_assert_msg(o.res.result == w->result, "row %d: %s, not %s", _i,
	    hb_result_name(o.res.result), hb_result_name(w->result));
	ck_assert_msg(o.writes == w->writes, "row %d: writes %#x, not %#x",
	    _i, o.writes, w->writes);
	if (w->writes & S) {
		ck_assert_int_eq(o.subject.seen, 1);
		ck_assert_int_eq(o.subject.version, w->ev);
		ck_assert_int_eq(o.subject.occurred_ms, w->et);
		ck_assert_int_eq(o.subject.undo, w->eundo);
		ck_assert_str_eq(o.subject.step, w->estep);
	}
	if (w->writes & X) {
		ck_assert_str_eq(o.kind, "version");
		(void)snprintf(want, sizeof(want), "%s %s v%lld",
		    w->undo ? "undo" : "do", w->step, (long long)w->v);
		ck_assert_str_eq(o.recorded, want);
		(void)snprintf(want, sizeof(want), "%s %s v%lld",
		    w->eundo ? "undo" : "do", w->estep, (long long)w->ev);
		ck_assert_str_eq(o.observed, want);
	} else
		ck_assert_ptr_null(o.kind);
	ck_assert_str_eq(o.res.action, m.prep.action);
	if (w->result != HB_ACCEPTED)
		ck_assert_ptr_nonnull(o.res.detail);
}
END_TEST

/*
 * One batch, one subject, events out of order: each member sees the
 * ones before it, as if each had been committed alone.
 */
START_TEST(batch_subject_disorder)
{
	static const struct {
		int64_t		 v, t;
		int		 undo;
		const char	*step, *id;
		enum hb_result	 result;
	} ev[] = {
		{ 2, 10, DO, "publish", "e-1", HB_ACCEPTED },
		{ 3, 20, DO, "publish", "e-2", HB_ACCEPTED },
		{ 2, 10, DO, "publish", "e-3", HB_STALE },	/* older */
		{ 3, 20, DO, "publish", "e-4", HB_DUPLICATE },	/* same event */
		{ 3, 30, UNDO, "unpublish", "e-5", HB_ACCEPTED },
		{ 3, 25, DO, "publish", "e-6", HB_STALE },	/* before undo */
		{ 3, 30, DO, "publish", "e-7", HB_CONFLICT },
		{ 1, 99, DO, "publish", "e-8", HB_ACCEPTED },	/* b-1 */
	};
	struct member			 m[NELEM(ev)];
	const struct accept_prep	*p[NELEM(ev)];
	struct store_found		 r[NELEM(ev)];
	struct decide_out		 o[NELEM(ev)];
	size_t				 i;

	for (i = 0; i < NELEM(ev); i++) {
		vmember(&m[i], i + 1 < NELEM(ev) ? "a-1" : "b-1", ev[i].v,
		    ev[i].t, ev[i].undo, ev[i].step, ev[i].id);
		p[i] = &m[i].prep;
	}
	memset(r, 0, sizeof(r));
	decide_batch(NELEM(ev), p, r, o);
	for (i = 0; i < NELEM(ev); i++)
		ck_assert_msg(o[i].res.result == ev[i].result,
		    "member %zu: %s, not %s", i,
		    hb_result_name(o[i].res.result),
		    hb_result_name(ev[i].result));
	/* The last state written is the undo's; b-1 has its own. */
	ck_assert_int_eq(o[4].writes & S, S);
	ck_assert_int_eq(o[4].subject.undo, 1);
	for (i = 5; i < 7; i++)
		ck_assert_int_eq(o[i].writes & (S | C), 0);
	ck_assert_int_eq(o[7].writes, R | S | C);
}
END_TEST

/*
 * A fan-out's members: each event's first step and, following it, its
 * purge.  A follower claims its own action only when its event took
 * effect, and is answered as its event was otherwise; it writes no
 * receipt and no subject state.  A follower's action claimed before (its
 * found) is a duplicate while its event's first is accepted; the event
 * is accepted when any of its actions is new.
 */
START_TEST(batch_fanout)
{
	static const struct {
		int64_t		 v, t;
		const char	*step, *id;
		int		 follows;
		int		 claimed;
		enum hb_result	 result;
		unsigned	 writes;
	} ev[] = {
		{ 2, 10, "publish", "e-1", 0, 0, HB_ACCEPTED, R | S | C },
		{ 2, 10, "purge", "e-1", 1, 0, HB_ACCEPTED, C },
		{ 2, 10, "publish", "e-2", 0, 0, HB_DUPLICATE, R },
		{ 2, 10, "purge", "e-2", 1, 0, HB_DUPLICATE, 0 },
		{ 1, 10, "publish", "e-3", 0, 0, HB_STALE, R },
		{ 1, 10, "purge", "e-3", 1, 0, HB_STALE, 0 },
		{ 2, 10, "publish", "e-1", 0, 0, HB_DUPLICATE, 0 },
		{ 2, 10, "purge", "e-1", 1, 0, HB_DUPLICATE, 0 },
		{ 3, 10, "publish", "e-4", 0, 0, HB_ACCEPTED, R | S | C },
		{ 3, 10, "purge", "e-4", 1, 1, HB_DUPLICATE, 0 },
		/* Its first step's claimed before, the other's new. */
		{ 4, 10, "publish", "e-5", 0, 1, HB_ACCEPTED, R | S },
		{ 4, 10, "purge", "e-5", 1, 0, HB_ACCEPTED, C },
	};
	struct member			 m[NELEM(ev)];
	const struct accept_prep	*p[NELEM(ev)];
	struct store_found		 r[NELEM(ev)];
	struct decide_out		 o[NELEM(ev)];
	size_t				 i;

	memset(r, 0, sizeof(r));
	for (i = 0; i < NELEM(ev); i++) {
		vmember(&m[i], "a-1", ev[i].v, ev[i].t, DO, ev[i].step,
		    ev[i].id);
		m[i].prep.follows = ev[i].follows;
		p[i] = &m[i].prep;
		r[i].claimed = ev[i].claimed;
		(void)snprintf(r[i].owner, sizeof(r[i].owner), "a-1");
	}
	decide_batch(NELEM(ev), p, r, o);
	for (i = 0; i < NELEM(ev); i++) {
		ck_assert_msg(o[i].res.result == ev[i].result,
		    "member %zu: %s, not %s", i,
		    hb_result_name(o[i].res.result),
		    hb_result_name(ev[i].result));
		ck_assert_msg(o[i].writes == ev[i].writes,
		    "member %zu: writes %#x, not %#x", i, o[i].writes,
		    ev[i].writes);
		ck_assert_str_eq(o[i].res.action, m[i].prep.action);
	}
	/* The subject's state is the first step's, not a follower's. */
	ck_assert_str_eq(o[8].subject.step, "publish");
}
END_TEST

/* A job observation of job_id for tenant acme, action acme:ATTEMPT:s. */
static void
member(struct member *m, const char *job_id, const char *attempt, int event,
    int status, int stage, const char *delivery)
{
	memset(m, 0, sizeof(*m));
	m->obs.event = (enum obs_event)event;
	m->obs.status = (enum obs_status)status;
	m->obs.stage = (enum obs_stage)stage;
	(void)snprintf(m->obs.job_id, sizeof(m->obs.job_id), "%s", job_id);
	if (delivery != NULL)
		(void)snprintf(m->obs.delivery_id, sizeof(m->obs.delivery_id),
		    "%s", delivery);
	m->prep.obs = &m->obs;
	(void)snprintf(m->prep.job.tenant, sizeof(m->prep.job.tenant), "acme");
	(void)snprintf(m->prep.job.job_id, sizeof(m->prep.job.job_id), "%s",
	    job_id);
	(void)snprintf(m->prep.job.attempt, sizeof(m->prep.job.attempt), "%s",
	    attempt);
	(void)snprintf(m->prep.job.step, sizeof(m->prep.job.step), "s");
	if (event == OBS_EV_JOB)
		(void)snprintf(m->prep.action, sizeof(m->prep.action),
		    "acme:%s:s", attempt);
	m->prep.rcpt.tenant = "acme";
	m->prep.rcpt.endpoint = "tornado";
	m->prep.rcpt.delivery_id = m->obs.delivery_id;
}

START_TEST(table)
{
	const struct row		*w = &rows[_i];
	struct member			 m;
	const struct accept_prep	*p[1];
	struct store_found		 r;
	struct decide_out		 o;
	int				 act;

	member(&m, "j-1", "a", w->event, w->status, w->stage, NULL);
	p[0] = &m.prep;
	memset(&r, 0, sizeof(r));
	r.job.stage = (enum obs_stage)w->rec_stage;
	r.job.terminal = (enum obs_status)w->rec_term;
	r.claimed = w->holder != FREE;
	(void)snprintf(r.owner, sizeof(r.owner), "%s",
	    w->holder == SAME ? "j-1" : w->holder == OTHER ? "j-2" : "");
	decide_batch(1, p, &r, &o);
	ck_assert_msg(o.res.result == w->result, "row %d: %s, not %s", _i,
	    hb_result_name(o.res.result), hb_result_name(w->result));
	ck_assert_msg(o.writes == w->writes, "row %d: writes %#x, not %#x",
	    _i, o.writes, w->writes);
	if (w->writes & J) {
		ck_assert_int_eq(o.next.stage, w->next_stage);
		ck_assert_int_eq(o.next.terminal, w->next_term);
	}
	if (w->writes & X) {
		act = strcmp(w->kind, "act") == 0;
		ck_assert_str_eq(o.kind, act ? "action" : "terminal");
		ck_assert_str_eq(o.observed, act ? "j-1" :
		    obs_status_name((enum obs_status)w->status));
		ck_assert_str_eq(o.recorded, act ? "another job" :
		    obs_status_name((enum obs_status)w->rec_term));
	} else
		ck_assert_ptr_null(o.kind);
	/* Every answer names the observation's action, or none. */
	ck_assert_str_eq(o.res.action, m.prep.action);
	if (w->result == HB_ACTION_CONFLICT || w->result == HB_CONFLICT ||
	    w->result == HB_IGNORED)
		ck_assert_ptr_nonnull(o.res.detail);
}
END_TEST

/* A delivery id received before: answered as it was, nothing written. */
START_TEST(delivery_seen)
{
	static const struct {
		const char	*prior;
		enum hb_result	 result;
	} cases[] = {
		{ "accepted", HB_DUPLICATE },
		{ "recorded", HB_DUPLICATE },
		{ "duplicate", HB_DUPLICATE },
		{ "action_conflict", HB_ACTION_CONFLICT },
		{ "pending", HB_DUPLICATE },	/* not a result: received */
		{ "", HB_DUPLICATE },
	};
	struct member			 m;
	const struct accept_prep	*p[1];
	struct store_found		 r;
	struct decide_out		 o;
	size_t				 i;

	member(&m, "j-1", "a", OBS_EV_JOB, DONE, FIN, "d-1");
	p[0] = &m.prep;
	for (i = 0; i < NELEM(cases); i++) {
		memset(&r, 0, sizeof(r));
		r.seen = 1;
		(void)snprintf(r.prior.result, sizeof(r.prior.result), "%s",
		    cases[i].prior);
		(void)snprintf(r.prior.action, sizeof(r.prior.action),
		    "acme:first:s");
		decide_batch(1, p, &r, &o);
		ck_assert_int_eq(o.res.result, cases[i].result);
		ck_assert_uint_eq(o.writes, 0);
		ck_assert_str_eq(o.res.action, "acme:first:s");
		ck_assert_ptr_nonnull(strstr(o.res.detail, "delivery id"));
	}
}
END_TEST

/* Decides the batch m[0..n) against nothing recorded. */
static void
fresh_batch(struct member *m, size_t n, struct decide_out *o)
{
	const struct accept_prep	*p[8];
	struct store_found		 r[8];
	size_t				 i;

	ck_assert_uint_le(n, NELEM(p));
	memset(r, 0, sizeof(r));
	for (i = 0; i < n; i++)
		p[i] = &m[i].prep;
	decide_batch(n, p, r, o);
}

/* Members of one job, in arrival order: each sees the one before. */
START_TEST(batch_one_job)
{
	struct member		m[5];
	struct decide_out	o[5];

	member(&m[0], "j-1", "a", OBS_EV_JOB, NONE, DL, NULL);
	member(&m[1], "j-1", "a", OBS_EV_JOB, DONE, FIN, NULL);
	member(&m[2], "j-1", "a", OBS_EV_JOB, DONE, FIN, NULL);
	member(&m[3], "j-1", "a", OBS_EV_JOB, NONE, UP, NULL);
	member(&m[4], "j-1", "a", OBS_EV_JOB, FAIL, DL, NULL);
	fresh_batch(m, 5, o);
	ck_assert_int_eq(o[0].res.result, HB_RECORDED);
	ck_assert_uint_eq(o[0].writes, R | J);
	ck_assert_int_eq(o[1].res.result, HB_ACCEPTED);
	ck_assert_uint_eq(o[1].writes, R | J | C);
	ck_assert_int_eq(o[1].next.stage, FIN);
	ck_assert_int_eq(o[2].res.result, HB_DUPLICATE);
	ck_assert_uint_eq(o[2].writes, R);
	ck_assert_int_eq(o[3].res.result, HB_STALE);
	ck_assert_uint_eq(o[3].writes, R);
	ck_assert_int_eq(o[4].res.result, HB_CONFLICT);
	ck_assert_uint_eq(o[4].writes, R | X);
	ck_assert_str_eq(o[4].recorded, "completed");
}
END_TEST

/* Other jobs are other states; a stale member changes nothing. */
START_TEST(batch_jobs_apart)
{
	struct member		m[4];
	struct decide_out	o[4];

	member(&m[0], "j-1", "a", OBS_EV_JOB, NONE, MUX, NULL);
	member(&m[1], "j-2", "b", OBS_EV_JOB, NONE, DL, NULL);
	member(&m[2], "j-1", "a", OBS_EV_JOB, NONE, DL, NULL);
	member(&m[3], "j-2", "b", OBS_EV_JOB, DONE, Q, NULL);
	fresh_batch(m, 4, o);
	ck_assert_int_eq(o[0].res.result, HB_RECORDED);
	ck_assert_int_eq(o[1].res.result, HB_RECORDED);
	ck_assert_int_eq(o[2].res.result, HB_STALE);
	ck_assert_int_eq(o[3].res.result, HB_ACCEPTED);
	/* j-2's stage from its own progress, not j-1's. */
	ck_assert_int_eq(o[3].next.stage, DL);
	ck_assert_str_eq(o[3].res.action, "acme:b:s");
}
END_TEST

/* Two jobs for one action: the first claims it, the second conflicts. */
START_TEST(batch_one_action_two_jobs)
{
	struct member		m[3];
	struct decide_out	o[3];

	member(&m[0], "j-1", "a", OBS_EV_JOB, DONE, FIN, NULL);
	member(&m[1], "j-2", "a", OBS_EV_JOB, DONE, FIN, NULL);
	member(&m[2], "j-1", "a", OBS_EV_JOB, DONE, FIN, NULL);
	fresh_batch(m, 3, o);
	ck_assert_int_eq(o[0].res.result, HB_ACCEPTED);
	ck_assert_int_eq(o[1].res.result, HB_ACTION_CONFLICT);
	ck_assert_uint_eq(o[1].writes, R | J | X);
	ck_assert_str_eq(o[1].observed, "j-2");
	ck_assert_int_eq(o[2].res.result, HB_DUPLICATE);
}
END_TEST

/*
 * One delivery id twice in a batch: the second is answered as the first
 * was, and writes nothing; a refusal stays a refusal.
 */
START_TEST(batch_delivery_twice)
{
	struct member		m[5];
	struct decide_out	o[5];

	member(&m[0], "j-1", "a", OBS_EV_JOB, DONE, FIN, "d-1");
	member(&m[1], "j-1", "a", OBS_EV_JOB, DONE, FIN, "d-1");
	member(&m[2], "j-2", "a", OBS_EV_JOB, DONE, FIN, "d-2");
	member(&m[3], "j-9", "z", OBS_EV_JOB, DONE, FIN, "d-2");
	member(&m[4], "j-3", "c", OBS_EV_JOB, DONE, FIN, "d-3");
	m[4].prep.rcpt.endpoint = "other";
	fresh_batch(m, 5, o);
	ck_assert_int_eq(o[0].res.result, HB_ACCEPTED);
	ck_assert_int_eq(o[1].res.result, HB_DUPLICATE);
	ck_assert_uint_eq(o[1].writes, 0);
	ck_assert_int_eq(o[2].res.result, HB_ACTION_CONFLICT);
	ck_assert_int_eq(o[3].res.result, HB_ACTION_CONFLICT);
	ck_assert_uint_eq(o[3].writes, 0);
	ck_assert_str_eq(o[3].res.action, "acme:a:s");
	ck_assert_str_eq(o[3].res.detail, "delivery id refused before");
	/* Another endpoint's delivery ids are its own. */
	ck_assert_int_eq(o[4].res.result, HB_ACCEPTED);
}
END_TEST

/* Without an endpoint (a poll) a delivery id deduplicates nothing. */
START_TEST(batch_no_endpoint)
{
	struct member		m[2];
	struct decide_out	o[2];

	member(&m[0], "j-1", "a", OBS_EV_JOB, NONE, DL, "d-1");
	member(&m[1], "j-1", "a", OBS_EV_JOB, NONE, MUX, "d-1");
	m[0].prep.rcpt.endpoint = m[1].prep.rcpt.endpoint = NULL;
	fresh_batch(m, 2, o);
	ck_assert_int_eq(o[0].res.result, HB_RECORDED);
	ck_assert_int_eq(o[1].res.result, HB_RECORDED);
	ck_assert_uint_eq(o[1].writes, R | J);
}
END_TEST

/* What was read for a member counts for the members after it too. */
START_TEST(batch_read_and_overlay)
{
	struct member			 m[3];
	const struct accept_prep	*p[3];
	struct store_found		 r[3];
	struct decide_out		 o[3];
	int				 i;

	member(&m[0], "j-1", "a", OBS_EV_JOB, NONE, UP, NULL);
	member(&m[1], "j-1", "a", OBS_EV_JOB, DONE, FIN, NULL);
	member(&m[2], "j-1", "a", OBS_EV_JOB, NONE, MUX, NULL);
	memset(r, 0, sizeof(r));
	for (i = 0; i < 3; i++) {
		p[i] = &m[i].prep;
		r[i].job.stage = OBS_STAGE_MUXING;
		r[i].claimed = 1;
		(void)snprintf(r[i].owner, sizeof(r[i].owner), "j-1");
	}
	decide_batch(3, p, r, o);
	ck_assert_int_eq(o[0].res.result, HB_RECORDED);
	ck_assert_int_eq(o[1].res.result, HB_DUPLICATE);
	ck_assert_uint_eq(o[1].writes, R | J);
	ck_assert_int_eq(o[1].next.stage, FIN);
	ck_assert_int_eq(o[2].res.result, HB_STALE);
}
END_TEST

static Suite *
decide_suite(void)
{
	Suite	*s = suite_create("decide");
	TCase	*tc = tcase_create("rules");

	tcase_add_loop_test(tc, table, 0, (int)NELEM(rows));
	tcase_add_loop_test(tc, subject_table, 0, (int)NELEM(vrows));
	tcase_add_test(tc, batch_subject_disorder);
	tcase_add_test(tc, batch_fanout);
	tcase_add_test(tc, delivery_seen);
	tcase_add_test(tc, batch_one_job);
	tcase_add_test(tc, batch_jobs_apart);
	tcase_add_test(tc, batch_one_action_two_jobs);
	tcase_add_test(tc, batch_delivery_twice);
	tcase_add_test(tc, batch_no_endpoint);
	tcase_add_test(tc, batch_read_and_overlay);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (util_init() != 0)
		return 1;
	return test_run(decide_suite);
}
