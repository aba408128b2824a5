/*
 * delivery/dispatch.c: claim, send, record; recover and reconcile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/log.h"
#include "base/text.h"
#include "base/util.h"
#include "delivery/dispatch.h"
#include "net/http.h"
#include "provider/auth.h"
#include "store/metrics.h"

#define EXPIRE_BATCH	50
#define RECONCILE_BATCH	10
#define ROWS_MAX	(EXPIRE_BATCH > DISPATCH_BATCH ? EXPIRE_BATCH : \
			    DISPATCH_BATCH)

_Static_assert(DISPATCH_BATCH <= HTTP_BATCH_MAX,
    "a batch's requests are all in flight at once");

/*
 * A destination as read for one batch (once, however many of the batch's
 * rows go to it), with its signing secret.  cs is the first look-up that
 * did not succeed, or CONFIG_OK.
 */
struct dest {
	char				tenant[HB_ID_MAX + 1];
	char				name[HB_ID_MAX + 1];
	struct config_destination	d;
	struct config_secrets		sec;	/* wiped once requests are made */
	enum config_status		cs;
};

/* Where one claimed row of a batch stands. */
enum item_state {
	ITEM_IDLE = 0,		/* not claimed, or recorded: nothing to do */
	ITEM_WAITING,		/* claimed, to be sent at its start */
	ITEM_SENDING,		/* its request is in flight */
	ITEM_DONE		/* its outcome is known, not yet recorded */
};

/* One row of a batch, from its claim to its record. */
struct item {
	const struct dest	*dest;		/* NULL for a bad row */
	enum config_status	 cs;		/* its destination's look-up */
	int			 bad_row;
	enum item_state		 state;
	struct http_result	 res;
	enum store_outcome	 out;
	int			 failed;	/* as its circuit counts */
	int64_t			 hold_until;	/* its destination's, from
						   Retry-After; 0: none */
	int64_t			 started;	/* when it was sent; 0: never */
	int64_t			 ended;		/* when the answer came */
	int64_t			 next_at;
	char			 err[320];
};

struct dispatch {
	struct store		*st;
	struct config		*cfg;
	struct http		*http;		/* status checks */
	struct http_batch	*batch;		/* deliveries */
	struct dispatch_opts	 opts;
	char			 owner[HB_ID_MAX + 1];
	char			 cursor[HB_ID_MAX + 1];	/* last tenant served */
	struct store_row	 rows[ROWS_MAX];	/* one step's collection */
	/* One batch: claims[i] and items[i] are the same row. */
	struct store_claim_row	 claims[DISPATCH_BATCH];
	struct item		 items[DISPATCH_BATCH];
	struct dest		 dests[DISPATCH_BATCH];
	int			 ndests;
	int			 slot_item[HTTP_BATCH_MAX];
	struct store_finish	 fin[DISPATCH_BATCH];
	int			 fin_item[DISPATCH_BATCH];
	struct store_finish_dest fdest[DISPATCH_BATCH];
	struct dispatch_stats	 stats;
	/* Counts not yet in state.db: written with the next outcomes. */
	struct metrics_set	 counts;
	int64_t			 beat;		/* last heartbeat written */
};

struct dispatch *
dispatch_new(struct store *st, struct config *cfg,
    const struct dispatch_opts *o)
{
	struct dispatch	*ob;

	if ((ob = calloc(1, sizeof(*ob))) == NULL)
		return NULL;
	if ((ob->http = http_new()) == NULL ||
	    (ob->batch = http_batch_new()) == NULL) {
		http_free(ob->http);
		free(ob);
		return NULL;
	}
	ob->st = st;
	ob->cfg = cfg;
	if (o != NULL)
		ob->opts = *o;
	if (ob->opts.backoff_base_ms <= 0)
		ob->opts.backoff_base_ms = DISPATCH_BACKOFF_BASE_MS;
	if (ob->opts.backoff_max_ms <= 0)
		ob->opts.backoff_max_ms = DISPATCH_BACKOFF_MAX_MS;
	if (ob->opts.lease_margin_ms <= 0)
		ob->opts.lease_margin_ms = DISPATCH_LEASE_MARGIN_MS;
	if (ob->opts.recheck_ms <= 0)
		ob->opts.recheck_ms = DISPATCH_RECHECK_MS;
	(void)snprintf(ob->owner, sizeof(ob->owner), "%s",
	    o != NULL && o->owner != NULL ? o->owner : "hookbox");
	ob->opts.owner = ob->owner;
	return ob;
}

void
dispatch_free(struct dispatch *ob)
{
	if (ob == NULL)
		return;
	http_batch_free(ob->batch);
	http_free(ob->http);
	metrics_set_free(&ob->counts);
	free(ob);
}

int64_t
dispatch_backoff(const struct dispatch_opts *o, int attempt,
    int64_t retry_after_ms)
{
	int64_t		cap = o->backoff_base_ms, delay;
	int		i;

	for (i = 1; i < attempt && cap < o->backoff_max_ms; i++)
		cap *= 2;
	if (cap > o->backoff_max_ms)
		cap = o->backoff_max_ms;
	/* Full jitter: uniform in [0, cap]. */
	delay = (int64_t)(((uint64_t)randombytes_random() << 32 |
	    randombytes_random()) % (uint64_t)(cap + 1));
	if (retry_after_ms >= 0 && delay < retry_after_ms)
		delay = retry_after_ms;
	return delay;
}

/* "delivered", "retry", "dead", "unknown": static storage. */
static const char *
dispatch_outcome_name(enum store_outcome o)
{
	switch (o) {
	case STORE_OUT_DELIVERED:
		return "delivered";
	case STORE_OUT_RETRY:
		return "retry";
	case STORE_OUT_DEAD:
		return "dead";
	case STORE_OUT_UNKNOWN:
		return "unknown";
	}
	return "unknown";
}

void
dispatch_stats(const struct dispatch *ob, struct dispatch_stats *out)
{
	*out = ob->stats;
}

/* A row gone dead: one line of its own, for an operator to act on. */
static void
log_dead(const char *action, const char *tenant, const char *destination,
    int attempts, const char *why)
{
	struct log_line	l;

	log_begin(&l, LOG_LV_WARN, "dead");
	log_str(&l, "action", action);
	log_str(&l, "tenant", tenant);
	log_str(&l, "destination", destination);
	log_int(&l, "attempts", attempts);
	log_str(&l, "error", why);
	log_end(&l);
}

/* Put off for want of the configuration: said once per row. */
static void
log_later(const char *what, const char *action, enum config_status cs)
{
	struct log_line	l;

	log_begin(&l, LOG_LV_WARN, "left_for_later");
	log_str(&l, "what", what);
	log_str(&l, "action", action);
	log_str(&l, "error", config_strerror(cs));
	log_end(&l);
}

static enum dispatch_status
status_of(enum store_status s)
{
	return s == STORE_OK ? DISPATCH_WORKED : s == STORE_BUSY ?
	    DISPATCH_BUSY : DISPATCH_ERROR;
}

/*
 * How long to wait before asking a status URL about an unknown outcome:
 * asked too soon, a destination still processing the request would say
 * "not found" and the action would be sent twice.
 */
static int64_t
unknown_delay(const struct dispatch *ob, int64_t timeout_ms)
{
	return timeout_ms > ob->opts.recheck_ms ? timeout_ms :
	    ob->opts.recheck_ms;
}

/*
 * Recovery and reconciliation run in the same order: collect the rows
 * (a read), then for each read its destination with no state.db
 * transaction open, ask the network if need be, and apply a guarded
 * move that changes the row only if it is still as collected.  A
 * configuration that cannot be read now (config.db busy, an I/O error)
 * decides nothing: the row is looked at again after DISPATCH_TRANSIENT_MS.
 */

/* ---- expired leases ---- */

/*
 * A lease expired with its request possibly sent: that attempt counts
 * (attempts was incremented when it was claimed).  Resend only where the
 * destination deduplicates by Idempotency-Key, and only while attempts
 * remain: a row whose worker keeps dying goes dead like any other;
 * otherwise wait for reconciliation.  A destination that no longer
 * exists cannot be asked.
 */
/*
 * state.db is written by the responder too: a row's identifiers are
 * checked again before they go into a header, a look-up or a log line.
 * A row that fails is left to an operator, as if its destination were
 * gone.
 */
static int
row_valid(const struct store_row *r)
{
	return text_valid_action(r->action) && text_valid_name(r->tenant) &&
	    text_valid_name(r->destination);
}

/* A collected row's destination; CONFIG_NOTFOUND when !row_valid(r). */
static enum config_status
row_destination(struct dispatch *ob, const struct store_row *r,
    struct config_destination *d)
{
	if (!row_valid(r))
		return CONFIG_NOTFOUND;
	return config_destination_get(ob->cfg, r->tenant, r->destination, d);
}

/*
 * Whether a row's retries are spent at now: its destination's max attempts
 * made (when it has one), or its retry horizon passed.  The horizon runs
 * from the row's acceptance (or its last requeue), less the time its
 * destination held it: held_ms, and the hold under way since held_since
 * (0: none), each counted from the horizon's start.
 */
static int
spent(const struct config_destination *d, int attempts, int64_t from,
    int64_t held_ms, int64_t held_since, int64_t now)
{
	int64_t	ran = now - from - held_ms;

	if (d->max_attempts > 0 && attempts >= d->max_attempts)
		return 1;
	if (held_since > 0)
		ran -= now - (held_since > from ? held_since : from);
	return ran >= d->retry_for_s * 1000;
}

static int
row_spent(const struct config_destination *d, const struct store_row *r,
    int64_t now)
{
	return spent(d, r->attempts, r->horizon_from, r->held_ms,
	    r->held_since, now);
}

static enum store_status
expire_one(struct dispatch *ob, const struct store_row *r)
{
	struct config_destination	 d;
	enum config_status		 cs;
	enum store_outcome		 out;
	int64_t				 now, at;
	const char			*note;
	struct log_line			 l;
	enum store_status		 rc;
	int				 changed;

	cs = row_destination(ob, r, &d);
	now = util_now_ms();
	if (cs != CONFIG_OK && cs != CONFIG_NOTFOUND) {
		log_later("expired_lease", r->action, cs);
		return store_outbox_defer(ob->st, r, now,
		    now + DISPATCH_TRANSIENT_MS, &changed);
	}
	if (cs == CONFIG_OK && d.idempotent && !row_spent(&d, r, now)) {
		out = STORE_OUT_RETRY;
		at = now + dispatch_backoff(&ob->opts, r->attempts, -1);
		note = "lease expired: outcome unknown; resending";
	} else if (cs == CONFIG_OK && d.idempotent) {
		out = STORE_OUT_DEAD;
		at = now;
		note = "lease expired: outcome unknown; retries spent";
	} else {
		out = STORE_OUT_UNKNOWN;
		at = now + ob->opts.recheck_ms;
		note = "lease expired: outcome unknown";
	}
	rc = store_outbox_expire(ob->st, r, out, now, at, note, &changed);
	if (rc == STORE_OK && changed) {
		log_begin(&l, LOG_LV_WARN, "lease_expired");
		log_str(&l, "action", r->action);
		log_str(&l, "destination", r->destination);
		log_int(&l, "attempt", r->attempts);
		log_str(&l, "outcome", dispatch_outcome_name(out));
		log_end(&l);
		if (out == STORE_OUT_DEAD)
			log_dead(r->action, r->tenant, r->destination,
			    r->attempts, note);
	}
	return rc;
}

static enum store_status
expire_due(struct dispatch *ob)
{
	enum store_status	rc;
	int			i, n;

	if ((rc = store_outbox_expired(ob->st, util_now_ms(), ob->rows,
	    EXPIRE_BATCH, &n)) != STORE_OK)
		return rc;
	for (i = 0; i < n; i++)
		if ((rc = expire_one(ob, &ob->rows[i])) != STORE_OK)
			return rc;
	return STORE_OK;
}

/* ---- reconciliation through a status URL ---- */

/*
 * One due unknown row.  The status check is claimed first, so that only
 * one worker asks at a time and an answer is applied only while that
 * claim stands: a slow "not found" can never send the action again after
 * another worker has resent it.
 */
static enum store_status
reconcile_one(struct dispatch *ob, const struct store_row *r)
{
	struct config_destination	 d;
	struct http_result		 res;
	struct http_header		 h[1];
	enum config_status		 cs;
	enum store_checked		 c;
	enum store_status		 rc;
	int64_t				 now, until, next;
	struct log_line			 l;
	int				 claimed, changed;
	const char			*note;

	cs = row_destination(ob, r, &d);
	now = util_now_ms();
	if (cs != CONFIG_OK && cs != CONFIG_NOTFOUND) {
		log_later("reconciliation", r->action, cs);
		return store_outbox_recheck(ob->st, r->action, now,
		    now + DISPATCH_TRANSIENT_MS,
		    "outcome unknown: configuration unreadable, check soon",
		    &changed);
	}
	if (cs == CONFIG_NOTFOUND || d.status_url[0] == '\0')
		/* Nothing to ask: an operator decides.  Look again later. */
		return store_outbox_recheck(ob->st, r->action, now,
		    now + DISPATCH_OPERATOR_RECHECK_MS,
		    "outcome unknown: waiting for an operator", &changed);

	/* The claim must outlive the request, as a delivery's lease does. */
	until = now + d.timeout_ms + ob->opts.lease_margin_ms;
	if ((rc = store_outbox_check(ob->st, r->action, ob->owner, now, until,
	    &claimed)) != STORE_OK || !claimed)
		return rc;
	h[0].name = "Idempotency-Key";
	h[0].value = r->action;
	(void)http_request(ob->http, "GET", d.status_url, h, 1, NULL, 0,
	    d.timeout_ms, 0, d.allow_internal ? HTTP_INTERNAL : 0, &res);
	next = now = util_now_ms();
	next += ob->opts.recheck_ms;
	if (res.refused) {
		/* Not asked: asking again soon would be refused again. */
		c = STORE_CHECKED_AGAIN;
		note = "outcome unknown: status URL refused, an internal"
		    " address (--allow-internal); waiting for an operator";
		next = now + DISPATCH_OPERATOR_RECHECK_MS;
	} else if (res.status == 200) {
		c = STORE_CHECKED_DELIVERED;
		note = "reconciled: the destination has it";
	} else if (res.status == 404 && row_spent(&d, r, now)) {
		c = STORE_CHECKED_DEAD;
		note = "reconciled: the destination does not have it;"
		    " retries spent";
	} else if (res.status == 404) {
		c = STORE_CHECKED_RESEND;
		note = "reconciled: the destination does not have it";
	} else {
		c = STORE_CHECKED_AGAIN;
		note = "outcome unknown: status URL inconclusive";
	}
	http_result_clear(&res);
	rc = store_outbox_checked(ob->st, r->action, ob->owner, until, c, now,
	    next, note, &changed);
	if (rc != STORE_OK)
		return rc;
	log_begin(&l, changed ? LOG_LV_INFO : LOG_LV_WARN, "reconcile");
	log_str(&l, "action", r->action);
	log_str(&l, "destination", r->destination);
	log_str(&l, "outcome", c == STORE_CHECKED_DELIVERED ? "delivered" :
	    c == STORE_CHECKED_DEAD ? "dead" : c == STORE_CHECKED_RESEND ?
	    "resend" : "again");
	log_str(&l, "applied", changed ? "yes" : "no (overtaken)");
	log_str(&l, "note", note);
	log_end(&l);
	if (changed && c == STORE_CHECKED_DEAD)
		log_dead(r->action, r->tenant, r->destination, r->attempts,
		    note);
	return rc;
}

static enum store_status
reconcile_due(struct dispatch *ob)
{
	enum store_status	rc;
	int			i, n;

	if ((rc = store_outbox_unknown(ob->st, util_now_ms(), ob->rows,
	    RECONCILE_BATCH, &n)) != STORE_OK)
		return rc;
	for (i = 0; i < n; i++)
		if ((rc = reconcile_one(ob, &ob->rows[i])) != STORE_OK)
			return rc;
	return STORE_OK;
}

/* ---- delivery ---- */

enum store_outcome
dispatch_decide(const struct http_result *r, int idempotent, int last)
{
	enum store_outcome	out;

	if (r->status >= 200 && r->status < 300)
		return STORE_OUT_DELIVERED;
	if (r->status == 408 || r->status == 429 || r->status >= 500)
		out = STORE_OUT_RETRY;
	else if (r->status > 0)
		/* Other 4xx; 1xx and 3xx are not answers we follow. */
		return STORE_OUT_DEAD;
	else if (r->refused)
		/*
		 * Not sent: its host is an internal address.  Waiting will
		 * not move it; resending would only ask again and again.
		 */
		return STORE_OUT_DEAD;
	else if (!r->sent || idempotent)
		/* No answer.  Never sent, or sent with a key: again. */
		out = STORE_OUT_RETRY;
	else
		/* Maybe received, and a resend could act twice: ask. */
		return STORE_OUT_UNKNOWN;
	return last ? STORE_OUT_DEAD : out;
}

/* A result for a request that never left. */
static void
not_sent(struct http_result *res, const char *why)
{
	memset(res, 0, sizeof(*res));
	res->retry_after_ms = -1;
	(void)snprintf(res->error, sizeof(res->error), "%s", why);
}

/*
 * The moment an answer (or the lack of one) was in hand, for the
 * attempt's end and for any delay counted from it.  The clock reads whole
 * milliseconds rounded down; rounding up instead means that a delay
 * counted from here (Retry-After) never starts before the answer came.
 */
static int64_t
answered_ms(void)
{
	return util_now_ms() + 1;
}

/*
 * A batch: up to DISPATCH_BATCH due rows, picked fairly across tenants
 * (store_outbox_pick()), their destinations read once, in one config.db
 * snapshot with no state.db transaction open, then claimed in one
 * transaction, sent all at once (each with its destination's own
 * timeout) and recorded in one transaction when the last answer is in.
 * A row whose lease would run out before that is recorded earlier, with
 * whatever else has ended by then: by the time half the lease margin is
 * left of it.
 */

/* The batch's look-up of row r's destination, made on first use. */
static struct dest *
dest_of(struct dispatch *ob, const struct store_row *r)
{
	struct dest	*x;
	int		 i;

	for (i = 0; i < ob->ndests; i++) {
		x = &ob->dests[i];
		if (strcmp(x->tenant, r->tenant) == 0 &&
		    strcmp(x->name, r->destination) == 0)
			return x;
	}
	x = &ob->dests[ob->ndests++];
	memset(x, 0, sizeof(*x));
	memcpy(x->tenant, r->tenant, sizeof(x->tenant));
	memcpy(x->name, r->destination, sizeof(x->name));
	x->cs = config_destination_get(ob->cfg, r->tenant, r->destination,
	    &x->d);
	/* Unsigned would be refused downstream: the secret is needed too. */
	if (x->cs == CONFIG_OK)
		x->cs = config_destination_secret(ob->cfg, r->tenant,
		    r->destination, &x->sec);
	return x;
}

static void
dests_clear(struct dispatch *ob)
{
	int	i;

	for (i = 0; i < ob->ndests; i++)
		config_secrets_clear(&ob->dests[i].sec);
	ob->ndests = 0;
}

/*
 * Reads the destinations of the n picked rows and sets up their claims
 * (leases from now): claims[0 .. m) and items[0 .. m), m returned.  A
 * row whose destination cannot be read now (config.db busy, an I/O
 * error) is left out: nothing is claimed for it and no attempt spent.
 * A row with an invalid identifier, no destination or an invalid one is
 * claimed, and settled without being sent.
 */
static int
read_batch(struct dispatch *ob, int n)
{
	const struct store_row		*r;
	const struct config_destination	*d;
	struct item			*it;
	struct dest			*x;
	enum config_status		 cs;
	int64_t				 now;
	int				 i, m = 0;

	ob->ndests = 0;
	if ((cs = config_snapshot(ob->cfg)) != CONFIG_OK) {
		log_later("deliveries", NULL, cs);
		return 0;
	}
	for (i = 0; i < n; i++) {
		r = &ob->rows[i];
		it = &ob->items[m];
		memset(it, 0, sizeof(*it));
		it->res.retry_after_ms = -1;
		/*
		 * state.db is written by the responder too: what it holds
		 * is checked again before it goes into a header
		 * (Idempotency-Key, webhook-id) or a config.db look-up.
		 */
		it->bad_row = !row_valid(r);
		x = it->bad_row ? NULL : dest_of(ob, r);
		cs = x == NULL ? CONFIG_NOTFOUND : x->cs;
		if (cs != CONFIG_OK && cs != CONFIG_NOTFOUND &&
		    cs != CONFIG_INVALID)
			continue;
		it->dest = x;
		it->cs = cs;
		ob->claims[m].row = *r;
		m++;
	}
	config_release(ob->cfg);
	/* The lease must outlive the request: it starts now. */
	now = util_now_ms();
	for (i = 0; i < m; i++) {
		ob->claims[i].lease_until = now + ob->opts.lease_margin_ms;
		ob->claims[i].in_flight_max = ob->claims[i].rate = 0;
		if (ob->items[i].cs != CONFIG_OK)
			continue;
		d = &ob->items[i].dest->d;
		ob->claims[i].lease_until += d->timeout_ms;
		ob->claims[i].in_flight_max = d->max_in_flight;
		ob->claims[i].rate = d->rate;
	}
	return m;
}

/* Where item i's attempt leaves its row, from what is known of it. */
static void
conclude(struct dispatch *ob, int i)
{
	struct item			*it = &ob->items[i];
	const struct store_lease	*l = &ob->claims[i].lease;
	const struct http_result	*res = &it->res;
	char				 why[sizeof(res->error)];
	int				 timeout_ms = 0;

	if (it->bad_row) {
		it->out = STORE_OUT_DEAD;
		(void)snprintf(it->err, sizeof(it->err), "the row holds an"
		    " invalid identifier: not sent");
	} else if (it->cs == CONFIG_NOTFOUND) {
		it->out = STORE_OUT_DEAD;
		(void)snprintf(it->err, sizeof(it->err),
		    "no such destination");
	} else if (it->cs == CONFIG_INVALID) {
		/* A row an operator must fix: retried, as before. */
		it->out = STORE_OUT_RETRY;
		(void)snprintf(it->err, sizeof(it->err), "configuration: %s",
		    config_strerror(it->cs));
	} else {
		timeout_ms = it->dest->d.timeout_ms;
		it->out = dispatch_decide(res, it->dest->d.idempotent,
		    spent(&it->dest->d, l->attempt, l->horizon_from,
		    l->held_ms, ob->claims[i].held_since, util_now_ms()));
		/* What its circuit counts: the destination did not answer. */
		it->failed = !res->refused && (res->status == 0 ||
		    res->status == 408 || res->status >= 500);
		if (res->status > 0)
			(void)snprintf(it->err, sizeof(it->err), "HTTP %ld",
			    res->status);
		else if (res->refused) {
			memcpy(why, res->error, sizeof(why));
			why[sizeof(why) - 1] = '\0';
			/* The address and why: well within 200 bytes. */
			(void)snprintf(it->err, sizeof(it->err), "%.200s: not"
			    " sent; the destination does not allow internal"
			    " addresses (--allow-internal)", why);
		} else {
			/* A copy: the compiler cannot tell the two apart. */
			memcpy(why, res->error, sizeof(why));
			why[sizeof(why) - 1] = '\0';
			(void)snprintf(it->err, sizeof(it->err), "%s%s", why,
			    it->out == STORE_OUT_UNKNOWN ?
			    " (may have been received)" : "");
		}
	}
	/*
	 * Every delay counts from the answer, and the attempt's recorded
	 * end is that same moment: a retry is never due before Retry-After
	 * has passed since the answer arrived, by the row's own record too.
	 */
	it->ended = answered_ms();
	it->next_at = it->ended;
	if (it->out == STORE_OUT_RETRY)
		it->next_at += dispatch_backoff(&ob->opts, l->attempt,
		    res->retry_after_ms);
	else if (it->out == STORE_OUT_UNKNOWN)
		/* The destination may still be working on it: ask later. */
		it->next_at += unknown_delay(ob, timeout_ms);
	/* A 429 or 503 that says when: the whole destination waits. */
	it->hold_until = (res->status == 429 || res->status == 503) &&
	    res->retry_after_ms >= 0 ? it->ended + (res->retry_after_ms <
	    ob->opts.backoff_max_ms ? res->retry_after_ms :
	    ob->opts.backoff_max_ms) : 0;
	it->state = ITEM_DONE;
}

/*
 * Starts item i's request: its row claimed, its destination readable.
 * A destination that does not deduplicate gets a fresh connection, so
 * that libcurl never resends the request on its own; one that does
 * shares the batch's kept-alive connections.
 */
static void
start(struct dispatch *ob, int i)
{
	const struct store_lease	*l = &ob->claims[i].lease;
	struct item			*it = &ob->items[i];
	const struct dest		*x = it->dest;
	struct http_header		 h[5];
	struct http_req			 req;
	char				 ts[24], sig[AUTH_HEADER_MAX];
	size_t				 n = 0;
	int64_t				 now = util_now();
	int				 slot;

	h[n].name = "Content-Type";
	h[n++].value = "application/json";
	h[n].name = "Idempotency-Key";
	h[n++].value = l->action;
	if (x->sec.n > 0) {
		if (auth_sign_stdwebhooks(x->sec.s[0].key, x->sec.s[0].keylen,
		    l->action, now, (const unsigned char *)l->payload,
		    strlen(l->payload), sig, sizeof(sig)) != 0) {
			not_sent(&it->res,
			    "the destination's secret does not decode");
			conclude(ob, i);
			return;
		}
		(void)snprintf(ts, sizeof(ts), "%lld", (long long)now);
		h[n].name = "webhook-id";
		h[n++].value = l->action;
		h[n].name = "webhook-timestamp";
		h[n++].value = ts;
		h[n].name = "webhook-signature";
		h[n++].value = sig;
	}
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = x->d.url;
	req.hdrs = h;
	req.nhdrs = n;
	req.body = l->payload;
	req.bodylen = strlen(l->payload);
	req.timeout_ms = x->d.timeout_ms;
	req.flags = (x->d.idempotent ? 0 : HTTP_FRESH) |
	    (x->d.allow_internal ? HTTP_INTERNAL : 0);
	it->started = util_now_ms();
	slot = http_batch_add(ob->batch, &req, &it->res);
	sodium_memzero(sig, sizeof(sig));
	if (slot < 0) {
		/* Not sent (*res says why): retried like a refused connect. */
		conclude(ob, i);
		return;
	}
	ob->slot_item[slot] = i;
	it->state = ITEM_SENDING;
}

/*
 * One line per attempt, once its outcome is recorded (or failed to be:
 * recorded=no, the row is then left to lease expiry), and one more when
 * it left its row dead.  Counted in the stats as recorded.
 */
static void
log_attempt(struct dispatch *ob, const struct store_finish *f,
    const struct item *it, enum store_status rc)
{
	struct log_line	l;

	if (rc == STORE_OK && !f->lost) {
		switch (f->out) {
		case STORE_OUT_DELIVERED:
			ob->stats.delivered++;
			break;
		case STORE_OUT_RETRY:
			ob->stats.retried++;
			break;
		case STORE_OUT_DEAD:
			ob->stats.dead++;
			break;
		case STORE_OUT_UNKNOWN:
			ob->stats.unknown++;
			break;
		}
	}
	log_begin(&l, f->out == STORE_OUT_DELIVERED ? LOG_LV_INFO :
	    LOG_LV_WARN, "delivery");
	log_str(&l, "action", f->lease->action);
	log_str(&l, "tenant", f->lease->tenant);
	log_str(&l, "destination", f->lease->destination);
	/* As `hookbox attempts` numbers it. */
	log_int(&l, "attempt", f->lease->n);
	log_str(&l, "outcome", dispatch_outcome_name(f->out));
	log_int(&l, "status", f->http_status);
	log_int(&l, "duration_ms", it->started > 0 ? f->ended - it->started :
	    0);
	log_str(&l, "error", f->error);
	if (rc != STORE_OK)
		log_str(&l, "recorded", store_strerror(rc));
	else if (f->lost)
		log_str(&l, "lease", "lost before the outcome was recorded");
	log_end(&l);
	if (rc == STORE_OK && !f->lost && f->out == STORE_OUT_DEAD)
		log_dead(f->lease->action, f->lease->tenant,
		    f->lease->destination, f->lease->attempt, f->error);
}

/* A circuit that moved: one line, for an operator watching an outage. */
static void
log_circuit(const struct store_finish_dest *d)
{
	struct log_line	l;

	if (d->was == d->now.state && !d->released)
		return;
	log_begin(&l, d->now.state == STORE_CIRCUIT_CLOSED ? LOG_LV_INFO :
	    LOG_LV_WARN, "circuit");
	log_str(&l, "tenant", d->tenant);
	log_str(&l, "destination", d->destination);
	log_str(&l, "from", store_circuit_name(d->was));
	log_str(&l, "to", store_circuit_name(d->now.state));
	log_int(&l, "failures", d->now.failures);
	if (d->now.state != STORE_CIRCUIT_CLOSED)
		log_int(&l, "probe_in_ms", d->now.retry_at - d->report.now);
	log_end(&l);
}

/*
 * What the finished attempts fin[0 .. m) said of each destination, for
 * its circuit: into fdest, their number returned.  The batch read each
 * destination once (dest_of()): its place there is its report's key.
 */
static int
reports(struct dispatch *ob, int m, int64_t now)
{
	struct store_finish_dest	*d;
	const struct store_lease	*l;
	const struct item		*it;
	int				 at[DISPATCH_BATCH];
	int				 i, j, nd = 0;

	for (i = 0; i < DISPATCH_BATCH; i++)
		at[i] = -1;
	for (i = 0; i < m; i++) {
		it = &ob->items[ob->fin_item[i]];
		l = ob->fin[i].lease;
		if (it->dest == NULL || it->cs != CONFIG_OK)
			continue;
		if ((j = at[it->dest - ob->dests]) == -1)
			j = at[it->dest - ob->dests] = nd;
		d = &ob->fdest[j];
		if (j == nd) {
			memset(d, 0, sizeof(*d));
			memcpy(d->tenant, l->tenant, sizeof(d->tenant));
			memcpy(d->destination, l->destination,
			    sizeof(d->destination));
			d->report.threshold = it->dest->d.circuit_failures;
			d->report.cooldown_ms = it->dest->d.cooldown_s * 1000;
			d->report.cooldown_max_ms = d->report.cooldown_ms >
			    DISPATCH_COOLDOWN_MAX_MS ? d->report.cooldown_ms :
			    DISPATCH_COOLDOWN_MAX_MS;
			d->report.now = now;
			nd++;
		}
		d->report.ok += it->out == STORE_OUT_DELIVERED;
		d->report.failed += it->failed;
		if (it->hold_until > d->report.hold_until)
			d->report.hold_until = it->hold_until;
	}
	return nd;
}

/*
 * Records the outcomes known so far (every item DONE of items[0 .. n)),
 * in one transaction.  An outcome is known only here, so a busy database
 * is waited out for as long as one of their leases lasts.  A row whose
 * lease was lost meanwhile (recovered as expired) is settled as
 * delivered all the same if the destination took it (store/outbox.h).
 * Whatever happens the items are done with: an outcome not recorded is
 * left to lease expiry, as a worker that died would leave it.
 */
static enum store_status
record(struct dispatch *ob, int n)
{
	struct store_finish	*f;
	struct item		*it;
	enum store_status	 rc;
	const char		*dest;
	int64_t			 last = 0, now;
	int			 i, m = 0, nd;

	for (i = 0; i < n; i++) {
		it = &ob->items[i];
		if (it->state != ITEM_DONE)
			continue;
		f = &ob->fin[m];
		memset(f, 0, sizeof(*f));
		f->lease = &ob->claims[i].lease;
		f->out = it->out;
		f->ended = it->ended;
		f->next_at = it->next_at;
		f->http_status = it->res.status;
		f->error = it->out == STORE_OUT_DELIVERED ? NULL : it->err;
		if (f->lease->lease_until > last)
			last = f->lease->lease_until;
		ob->fin_item[m++] = i;
		it->state = ITEM_IDLE;
	}
	if (m == 0)
		return STORE_OK;
	/*
	 * Counted with the outcomes, in their transaction: attempts by
	 * outcome, the time each took, and that this dispatcher is alive.
	 * Counts that could not be written go with the next outcomes.
	 */
	for (i = 0; i < m; i++) {
		f = &ob->fin[i];
		it = &ob->items[ob->fin_item[i]];
		dest = text_valid_name(f->lease->destination) ?
		    f->lease->destination : "invalid";
		(void)metrics_set_count(&ob->counts, "deliveries", dest,
		    dispatch_outcome_name(f->out), f->ended);
		if (f->out == STORE_OUT_DELIVERED)
			(void)metrics_set_max(&ob->counts, "delivered_ms", dest,
			    "", f->ended);
		if (it->started > 0)
			(void)metrics_set_observe_delivery(&ob->counts, dest,
			    f->ended - it->started);
	}
	now = util_now_ms();
	(void)metrics_set_max(&ob->counts, "heartbeat_ms", "", "", now);
	nd = reports(ob, m, now);
	do {
		rc = store_outbox_finish(ob->st, ob->fin, m, ob->owner,
		    &ob->counts, ob->fdest, nd);
	} while (rc == STORE_BUSY && util_now_ms() < last);
	if (rc == STORE_OK) {
		metrics_set_clear(&ob->counts);
		ob->beat = now;
		for (i = 0; i < nd; i++)
			log_circuit(&ob->fdest[i]);
	}
	for (i = 0; i < m; i++)
		log_attempt(ob, &ob->fin[i], &ob->items[ob->fin_item[i]], rc);
	return rc;
}

/*
 * When the outcomes known so far must be recorded: half the lease margin
 * before the first of their leases runs out.  INT64_MAX when none is.
 */
static int64_t
record_by(const struct dispatch *ob, int n)
{
	int64_t	by = INT64_MAX, t;
	int	i;

	for (i = 0; i < n; i++) {
		if (ob->items[i].state != ITEM_DONE)
			continue;
		t = ob->claims[i].lease.lease_until -
		    ob->opts.lease_margin_ms / 2;
		if (t < by)
			by = t;
	}
	return by;
}

/*
 * Starts the waiting items of items[0 .. m) whose start has come; returns
 * the first start still to come (INT64_MAX: none), and adds the items
 * sent to *sending.  The secrets go once every item has been started.
 */
static int64_t
start_due(struct dispatch *ob, int m, int *sending)
{
	int64_t	now = util_now_ms(), next = INT64_MAX;
	int	i;

	for (i = 0; i < m; i++) {
		if (ob->items[i].state != ITEM_WAITING)
			continue;
		if (ob->claims[i].start_at > now) {
			if (ob->claims[i].start_at < next)
				next = ob->claims[i].start_at;
			continue;
		}
		start(ob, i);
		*sending += ob->items[i].state == ITEM_SENDING;
	}
	if (next == INT64_MAX)
		dests_clear(ob);	/* the secrets are no longer needed */
	return next;
}

static enum dispatch_status
deliver(struct dispatch *ob)
{
	struct item		*it;
	enum store_status	 rc, failed = STORE_OK;
	enum dispatch_status	 os = DISPATCH_WORKED;
	int			 done[HTTP_BATCH_MAX];
	int			 n, m = 0, i, sending = 0, ndone;
	int			 claimed = 0, held = 0;
	int64_t			 by, next, now, wait, in_ms;

	/*
	 * Nothing due (an index's first entry says so): no pick, which
	 * reads a tenant's rows until one is due, and a backlog held back
	 * by its destination is all rows not due.
	 */
	if ((rc = store_outbox_next(ob->st, util_now_ms(), &in_ms)) !=
	    STORE_OK)
		return status_of(rc);
	if (in_ms != 0)
		return DISPATCH_IDLE;
	if ((rc = store_outbox_pick(ob->st, util_now_ms(), ob->cursor,
	    ob->rows, DISPATCH_BATCH, &n)) != STORE_OK)
		return status_of(rc);
	if (n == 0)
		return DISPATCH_IDLE;
	memcpy(ob->cursor, ob->rows[n - 1].tenant, sizeof(ob->cursor));
	if ((m = read_batch(ob, n)) == 0) {
		/* Nothing readable now: no attempt spent; soon again. */
		os = DISPATCH_BUSY;
		goto out;
	}
	if ((rc = store_outbox_claim(ob->st, ob->claims, m, ob->owner,
	    util_now_ms())) != STORE_OK) {
		os = status_of(rc);
		goto out;
	}
	/* Rows others took meanwhile are skipped: ours come next step. */
	for (i = 0; i < m; i++) {
		it = &ob->items[i];
		claimed += ob->claims[i].claimed;
		held += ob->claims[i].held;
		if (!ob->claims[i].claimed)
			it->state = ITEM_IDLE;
		else if (!it->bad_row && it->cs == CONFIG_OK)
			it->state = ITEM_WAITING;
		else
			conclude(ob, i);
	}
	if (claimed == 0 && held > 0) {
		/* Due, but their destinations take no more now. */
		os = DISPATCH_HELD;
		goto out;
	}
	/*
	 * Each request goes at its start (now, but under a rate), and the
	 * outcomes known are recorded before a lease runs out.
	 */
	while ((next = start_due(ob, m, &sending)) != INT64_MAX ||
	    sending > 0) {
		by = record_by(ob, m);
		now = util_now_ms();
		if (by <= now) {
			if ((rc = record(ob, m)) != STORE_OK &&
			    failed == STORE_OK)
				failed = rc;
			continue;
		}
		wait = 1000;
		if (by - now < wait)
			wait = by - now;
		if (next != INT64_MAX && next - now < wait)
			wait = next - now > 0 ? next - now : 0;
		if (sending == 0) {
			util_sleep_ms(wait);	/* nothing in flight */
			continue;
		}
		sending = http_batch_run(ob->batch, (long)wait, done, &ndone);
		for (i = 0; i < ndone; i++)
			conclude(ob, ob->slot_item[done[i]]);
	}
	if ((rc = record(ob, m)) != STORE_OK && failed == STORE_OK)
		failed = rc;
	os = status_of(failed);
out:
	dests_clear(ob);
	for (i = 0; i < m; i++) {
		store_lease_clear(&ob->claims[i].lease);
		http_result_clear(&ob->items[i].res);
	}
	return os;
}

enum dispatch_status
dispatch_step(struct dispatch *ob)
{
	enum store_status	rc;
	enum dispatch_status	os;
	int64_t			now;

	if ((rc = expire_due(ob)) != STORE_OK ||
	    (rc = reconcile_due(ob)) != STORE_OK)
		return status_of(rc);
	os = deliver(ob);
	/*
	 * Idle, the heartbeat is a write of its own, at most every
	 * DISPATCH_HEARTBEAT_MS; working, it goes with the outcomes.
	 */
	now = util_now_ms();
	if (os == DISPATCH_IDLE && now - ob->beat >= DISPATCH_HEARTBEAT_MS) {
		ob->beat = now;
		if (store_metrics_beat(ob->st, now) != STORE_OK)
			ob->beat = now - DISPATCH_HEARTBEAT_MS + 1000;
	}
	return os;
}

int64_t
dispatch_idle_ms(struct dispatch *ob, int64_t max_ms)
{
	int64_t	in_ms;

	if (store_outbox_next(ob->st, util_now_ms(), &in_ms) != STORE_OK ||
	    in_ms < 0 || in_ms > max_ms)
		return max_ms;
	return in_ms;
}
