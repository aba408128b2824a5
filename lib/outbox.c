/*
 * outbox.c: claim, send, record; recover and reconcile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "auth.h"
#include "http.h"
#include "outbox.h"
#include "util.h"

#define EXPIRE_BATCH	50
#define RECONCILE_BATCH	10
#define BATCH_MAX	EXPIRE_BATCH

struct outbox {
	struct store		*st;
	struct config		*cfg;
	struct http		*http;
	struct outbox_opts	 opts;
	char			 owner[HB_ID_MAX + 1];
	char			 cursor[HB_ID_MAX + 1];	/* last tenant served */
	struct store_row	 rows[BATCH_MAX];	/* one step's collection */
};

struct outbox *
outbox_new(struct store *st, struct config *cfg, const struct outbox_opts *o)
{
	struct outbox	*ob;

	if ((ob = calloc(1, sizeof(*ob))) == NULL)
		return NULL;
	if ((ob->http = http_new()) == NULL) {
		free(ob);
		return NULL;
	}
	ob->st = st;
	ob->cfg = cfg;
	if (o != NULL)
		ob->opts = *o;
	if (ob->opts.backoff_base_ms <= 0)
		ob->opts.backoff_base_ms = OUTBOX_BACKOFF_BASE_MS;
	if (ob->opts.backoff_max_ms <= 0)
		ob->opts.backoff_max_ms = OUTBOX_BACKOFF_MAX_MS;
	if (ob->opts.lease_margin_ms <= 0)
		ob->opts.lease_margin_ms = OUTBOX_LEASE_MARGIN_MS;
	if (ob->opts.recheck_ms <= 0)
		ob->opts.recheck_ms = OUTBOX_RECHECK_MS;
	(void)snprintf(ob->owner, sizeof(ob->owner), "%s",
	    o != NULL && o->owner != NULL ? o->owner : "hookbox");
	ob->opts.owner = ob->owner;
	return ob;
}

void
outbox_free(struct outbox *ob)
{
	if (ob == NULL)
		return;
	http_free(ob->http);
	free(ob);
}

int64_t
outbox_backoff(const struct outbox_opts *o, int attempt,
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

static enum outbox_status
status_of(enum store_status s)
{
	return s == STORE_OK ? OUTBOX_WORKED : s == STORE_BUSY ? OUTBOX_BUSY :
	    OUTBOX_ERROR;
}

/*
 * How long to wait before asking a status URL about an unknown outcome:
 * asked too soon, a destination still processing the request would say
 * "not found" and the action would be sent twice.
 */
static int64_t
unknown_delay(const struct outbox *ob, int64_t timeout_ms)
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
 * decides nothing: the row is looked at again after OUTBOX_TRANSIENT_MS.
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
	return util_valid_action(r->action) && util_valid_name(r->tenant) &&
	    util_valid_name(r->destination);
}

/* A collected row's destination; CONFIG_NOTFOUND when !row_valid(r). */
static enum config_status
row_destination(struct outbox *ob, const struct store_row *r,
    struct config_destination *d)
{
	if (!row_valid(r))
		return CONFIG_NOTFOUND;
	return config_destination_get(ob->cfg, r->tenant, r->destination, d);
}

static enum store_status
expire_one(struct outbox *ob, const struct store_row *r)
{
	struct config_destination	 d;
	enum config_status		 cs;
	enum store_outcome		 out;
	int64_t				 now, at;
	const char			*note;
	int				 changed;

	cs = row_destination(ob, r, &d);
	now = util_now_ms();
	if (cs != CONFIG_OK && cs != CONFIG_NOTFOUND) {
		fprintf(stderr, "hookbox: %s: expired lease left for later:"
		    " configuration: %s\n", r->action, config_strerror(cs));
		return store_outbox_defer(ob->st, r, now,
		    now + OUTBOX_TRANSIENT_MS, &changed);
	}
	if (cs == CONFIG_OK && d.idempotent && r->attempts < d.max_attempts) {
		out = STORE_OUT_RETRY;
		at = now + outbox_backoff(&ob->opts, r->attempts, -1);
		note = "lease expired: outcome unknown; resending";
	} else if (cs == CONFIG_OK && d.idempotent) {
		out = STORE_OUT_DEAD;
		at = now;
		note = "lease expired: outcome unknown; no attempts left";
	} else {
		out = STORE_OUT_UNKNOWN;
		at = now + ob->opts.recheck_ms;
		note = "lease expired: outcome unknown";
	}
	return store_outbox_expire(ob->st, r, out, now, at, note, &changed);
}

static enum store_status
expire_due(struct outbox *ob)
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
reconcile_one(struct outbox *ob, const struct store_row *r)
{
	struct config_destination	 d;
	struct http_result		 res;
	struct http_header		 h[1];
	enum config_status		 cs;
	enum store_checked		 c;
	enum store_status		 rc;
	int64_t				 now, until;
	int				 claimed, changed;
	const char			*note;

	cs = row_destination(ob, r, &d);
	now = util_now_ms();
	if (cs != CONFIG_OK && cs != CONFIG_NOTFOUND) {
		fprintf(stderr, "hookbox: %s: reconciliation left for later:"
		    " configuration: %s\n", r->action, config_strerror(cs));
		return store_outbox_recheck(ob->st, r->action, now,
		    now + OUTBOX_TRANSIENT_MS,
		    "outcome unknown: configuration unreadable, check soon",
		    &changed);
	}
	if (cs == CONFIG_NOTFOUND || d.status_url[0] == '\0')
		/* Nothing to ask: an operator decides.  Look again later. */
		return store_outbox_recheck(ob->st, r->action, now,
		    now + OUTBOX_OPERATOR_RECHECK_MS,
		    "outcome unknown: waiting for an operator", &changed);

	/* The claim must outlive the request, as a delivery's lease does. */
	until = now + d.timeout_ms + ob->opts.lease_margin_ms;
	if ((rc = store_outbox_check(ob->st, r->action, ob->owner, now, until,
	    &claimed)) != STORE_OK || !claimed)
		return rc;
	h[0].name = "Idempotency-Key";
	h[0].value = r->action;
	(void)http_request(ob->http, "GET", d.status_url, h, 1, NULL, 0,
	    d.timeout_ms, 0, 0, &res);
	if (res.status == 200) {
		c = STORE_CHECKED_DELIVERED;
		note = "reconciled: the destination has it";
	} else if (res.status == 404 && r->attempts >= d.max_attempts) {
		c = STORE_CHECKED_DEAD;
		note = "reconciled: the destination does not have it;"
		    " no attempts left";
	} else if (res.status == 404) {
		c = STORE_CHECKED_RESEND;
		note = "reconciled: the destination does not have it";
	} else {
		c = STORE_CHECKED_AGAIN;
		note = "outcome unknown: status URL inconclusive";
	}
	http_result_clear(&res);
	now = util_now_ms();
	rc = store_outbox_checked(ob->st, r->action, ob->owner, until, c, now,
	    now + ob->opts.recheck_ms, note, &changed);
	if (rc == STORE_OK && !changed)
		fprintf(stderr, "hookbox: %s: status check overtaken (%s);"
		    " not applied\n", r->action, note);
	return rc;
}

static enum store_status
reconcile_due(struct outbox *ob)
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
outbox_decide(const struct http_result *r, int idempotent, int attempt,
    int max_attempts)
{
	enum store_outcome	out;

	if (r->status >= 200 && r->status < 300)
		return STORE_OUT_DELIVERED;
	if (r->status == 408 || r->status == 429 || r->status >= 500)
		out = STORE_OUT_RETRY;
	else if (r->status > 0)
		/* Other 4xx; 1xx and 3xx are not answers we follow. */
		return STORE_OUT_DEAD;
	else if (!r->sent || idempotent)
		/* No answer.  Never sent, or sent with a key: again. */
		out = STORE_OUT_RETRY;
	else
		/* Maybe received, and a resend could act twice: ask. */
		return STORE_OUT_UNKNOWN;
	return attempt >= max_attempts ? STORE_OUT_DEAD : out;
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
 * Sends one leased row; fills the result.  A destination that does not
 * deduplicate gets a fresh connection, so that libcurl never resends the
 * request on its own.
 */
static void
send_one(struct outbox *ob, const struct store_lease *l,
    const struct config_destination *d, struct http_result *res)
{
	struct config_secrets	 sec;
	struct http_header	 h[5];
	char			 ts[24], sig[AUTH_HEADER_MAX];
	size_t			 n = 0;
	int64_t			 now = util_now();

	h[n].name = "Content-Type";
	h[n++].value = "application/json";
	h[n].name = "Idempotency-Key";
	h[n++].value = l->action;
	if (config_destination_secret(ob->cfg, d->tenant, d->name, &sec) !=
	    CONFIG_OK) {
		/* Unsigned would be refused downstream: try again later. */
		not_sent(res, "cannot read the destination's secret");
		return;
	}
	if (sec.n > 0) {
		if (auth_sign_stdwebhooks(sec.s[0].key, sec.s[0].keylen,
		    l->action, now, (const unsigned char *)l->payload,
		    strlen(l->payload), sig, sizeof(sig)) != 0) {
			config_secrets_clear(&sec);
			not_sent(res, "the destination's secret does not decode");
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
	config_secrets_clear(&sec);
	(void)http_request(ob->http, "POST", d->url, h, n, l->payload,
	    strlen(l->payload), d->timeout_ms, 0,
	    d->idempotent ? 0 : HTTP_FRESH, res);
	sodium_memzero(sig, sizeof(sig));
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
 * Records how an attempt ended at `ended` (when its answer came).  The
 * outcome is known only here, so a busy database is waited out for as
 * long as the lease lasts.  If the lease was lost meanwhile (recovered as
 * expired) and the destination did take the action, the row is settled
 * as delivered all the same.
 */
static enum store_status
record(struct outbox *ob, const struct store_lease *l, enum store_outcome out,
    int64_t ended, int64_t next_at, const struct http_result *res,
    const char *err)
{
	enum store_status	rc;
	int			lost, changed;

	do {
		rc = store_outbox_finish(ob->st, l, ob->owner, out, ended,
		    next_at, res->status,
		    out == STORE_OUT_DELIVERED ? NULL : err, &lost);
	} while (rc == STORE_BUSY && util_now_ms() < l->lease_until);
	if (rc != STORE_OK || !lost)
		return rc;
	fprintf(stderr, "hookbox: %s: lease lost before the outcome was"
	    " recorded\n", l->action);
	if (out == STORE_OUT_DELIVERED)
		rc = store_outbox_move(ob->st, l->action, STORE_MOVE_DELIVERED,
		    util_now_ms(), 0, "delivered; recorded after the lease"
		    " expired", &changed);
	return rc;
}

/*
 * Picks the next due row, reads its destination (once, with no state.db
 * transaction open), then claims it with a lease that outlives the
 * request; a row another worker claimed meanwhile is picked again.
 * A configuration that cannot be read now claims nothing: no attempt is
 * spent on it.  *l is cleared when nothing is claimed.
 */
static enum outbox_status
claim(struct outbox *ob, struct config_destination *d,
    enum config_status *cs, int *bad_row, struct store_lease *l)
{
	struct store_row	r;
	enum store_status	rc;
	int64_t			now, lease_ms;
	int			tries, found, claimed;

	for (tries = 0; tries < 3; tries++) {
		now = util_now_ms();
		if ((rc = store_outbox_pick(ob->st, now, ob->cursor, &r,
		    &found)) != STORE_OK)
			return status_of(rc);
		if (!found)
			return OUTBOX_IDLE;
		memcpy(ob->cursor, r.tenant, sizeof(ob->cursor));
		/*
		 * state.db is written by the responder too: what it holds
		 * is checked again before it goes into a header
		 * (Idempotency-Key, webhook-id) or a config.db look-up.
		 */
		*bad_row = !row_valid(&r);
		*cs = row_destination(ob, &r, d);
		if (*cs != CONFIG_OK && *cs != CONFIG_NOTFOUND &&
		    *cs != CONFIG_INVALID)
			return OUTBOX_BUSY;
		lease_ms = ob->opts.lease_margin_ms +
		    (*cs == CONFIG_OK ? d->timeout_ms : 0);
		if ((rc = store_outbox_claim(ob->st, &r, ob->owner, now,
		    now + lease_ms, l, &claimed)) != STORE_OK)
			return status_of(rc);
		if (claimed)
			return OUTBOX_WORKED;
	}
	/* Others keep taking what we pick: our turn comes next step. */
	return OUTBOX_WORKED;
}

static enum outbox_status
deliver(struct outbox *ob)
{
	struct config_destination	 d;
	struct store_lease		 l;
	struct http_result		 res;
	enum store_outcome		 out;
	enum store_status		 rc;
	enum config_status		 cs = CONFIG_ERROR;
	enum outbox_status		 os;
	char				 err[320];
	int				 bad_row = 0;
	int64_t				 ended, next_at;

	memset(&res, 0, sizeof(res));
	res.retry_after_ms = -1;
	memset(&d, 0, sizeof(d));
	memset(&l, 0, sizeof(l));
	if ((os = claim(ob, &d, &cs, &bad_row, &l)) != OUTBOX_WORKED ||
	    l.payload == NULL)
		return os;

	if (bad_row) {
		out = STORE_OUT_DEAD;
		(void)snprintf(err, sizeof(err), "the row holds an invalid"
		    " identifier: not sent");
	} else if (cs == CONFIG_NOTFOUND) {
		out = STORE_OUT_DEAD;
		(void)snprintf(err, sizeof(err), "no such destination");
	} else if (cs == CONFIG_INVALID) {
		/* A row an operator must fix: retried, as before. */
		out = STORE_OUT_RETRY;
		(void)snprintf(err, sizeof(err), "configuration: %s",
		    config_strerror(cs));
	} else {
		send_one(ob, &l, &d, &res);
		out = outbox_decide(&res, d.idempotent, l.attempt,
		    d.max_attempts);
		if (res.status > 0)
			(void)snprintf(err, sizeof(err), "HTTP %ld", res.status);
		else
			(void)snprintf(err, sizeof(err), "%s%s", res.error,
			    out == STORE_OUT_UNKNOWN ?
			    " (may have been received)" : "");
	}
	/*
	 * Every delay counts from the answer, and the attempt's recorded
	 * end is that same moment: a retry is never due before Retry-After
	 * has passed since the answer arrived, by the row's own record too.
	 */
	ended = answered_ms();
	next_at = ended;
	if (out == STORE_OUT_RETRY)
		next_at += outbox_backoff(&ob->opts, l.attempt,
		    res.retry_after_ms);
	else if (out == STORE_OUT_UNKNOWN)
		/* The destination may still be working on it: ask later. */
		next_at += unknown_delay(ob, d.timeout_ms);
	rc = record(ob, &l, out, ended, next_at, &res, err);
	http_result_clear(&res);
	store_lease_clear(&l);
	return status_of(rc);
}

enum outbox_status
outbox_step(struct outbox *ob)
{
	enum store_status	rc;

	if ((rc = expire_due(ob)) != STORE_OK ||
	    (rc = reconcile_due(ob)) != STORE_OK)
		return status_of(rc);
	return deliver(ob);
}

int64_t
outbox_idle_ms(struct outbox *ob, int64_t max_ms)
{
	int64_t	in_ms;

	if (store_outbox_next(ob->st, util_now_ms(), &in_ms) != STORE_OK ||
	    in_ms < 0 || in_ms > max_ms)
		return max_ms;
	return in_ms;
}
