/*
 * intake/accept.h: the one acceptance routine shared by the responder, the
 * poller and the command line.
 *
 * Given an authenticated, parsed observation for a tenant, it resolves
 * the job in config.db, decides what the observation means for the job's
 * recorded state (hookbox(7), ACCEPTANCE RULES) and commits, in one
 * state.db transaction, the receipt, the job-state change, the accepted
 * row and, only when that row was new, the outbox row.  It returns only
 * after COMMIT succeeded, or after everything was rolled back.
 *
 * It comes in two halves so that many observations can share one COMMIT
 * (intake/group.h): accept_prepare() reads config.db and builds what will be
 * written, with no state.db transaction open; accept_batch() looks up, decides
 * (intake/decide.h) and writes many at once inside the caller's transaction.
 * accept_observation() is the two in one transaction of its own.
 * accept_prepare_from() is the first half reading through functions of the
 * caller's (the responder's snapshot).
 *
 * Transactions: accept_observation() is self-contained: it opens its own
 * state.db transaction and ends it (COMMIT, or ROLLBACK) before it
 * returns.  accept_batch() is caller-owned: it runs between store_begin()
 * and store_commit(), inside a savepoint of its own.  The config.db reads
 * join the caller's config_snapshot() when one is open.
 */
#ifndef HB_ACCEPT_H
#define HB_ACCEPT_H

#include "config/config.h"
#include "intake/prep.h"
#include "store/record.h"

/*
 * Runs one observation through acceptance.  Results:
 *  HB_ACCEPTED		the action was new: accepted and outbox rows committed
 *  HB_DUPLICATE	the action (or this delivery id) was accepted before
 *  HB_RECORDED		state recorded, no action (progress, failure, batch)
 *  HB_STALE		older than the recorded state; only the receipt written
 *  HB_CONFLICT		contradicting terminal state: conflict recorded
 *  HB_IGNORED		unknown event type: receipt recorded
 *  HB_ACTION_CONFLICT	the action id belongs to another job: conflict recorded
 *  HB_MALFORMED	bad identifiers; nothing written
 *  HB_UNKNOWN_ENDPOINT	no such tenant, or inactive; nothing written
 *  HB_UNKNOWN_JOB	job not registered to this tenant; nothing written
 *  HB_UNAVAILABLE	busy, I/O error, disk full, read-only; nothing written
 *  HB_NOMEM		out of memory; nothing written
 * res is always filled; the return value equals res->result.
 */
HB_API enum hb_result accept_observation(struct store *, struct config *,
    const struct accept_req *, struct accept_res *res) HB_MUST_CHECK;

/*
 * The config.db half: validates the identifiers and resolves the tenant
 * and the job.  Returns 0 when *p is ready for accept_batch(), or -1 when
 * res already holds the final answer (HB_MALFORMED, HB_UNKNOWN_ENDPOINT,
 * HB_UNKNOWN_JOB, HB_UNAVAILABLE, HB_NOMEM): nothing is to be written.
 */
HB_API int accept_prepare(struct config *, const struct accept_req *,
    struct accept_prep *p, struct accept_res *res) HB_MUST_CHECK;

/*
 * Where accept_prepare_from() finds the tenant and the job: each returns a
 * config/config.h status, its out struct filled on CONFIG_OK.  accept_prepare()
 * reads them from config.db; the responder from its snapshot and its one
 * statement (intake/webhook.c, config/cache.h).
 */
struct accept_config {
	enum config_status	(*tenant)(void *arg, const char *id,
				    struct config_tenant *);
	/* NULL: the job is looked up later (accept_prep's job_wanted). */
	enum config_status	(*job)(void *arg, const char *tenant,
				    const char *job_id, struct config_job *);
	void			*arg;
};

/* accept_prepare(), reading through ac. */
HB_API int accept_prepare_from(const struct accept_config *ac,
    const struct accept_req *, struct accept_prep *p,
    struct accept_res *res) HB_MUST_CHECK;

/*
 * The job look-up's outcome cs for p: CONFIG_OK with p->job filled (the
 * action is made from it), CONFIG_NOTFOUND, CONFIG_STALE (sets
 * p->config_stale), or a failure.  Returns 0 when *p is ready for
 * accept_batch(), or -1 with the final answer in res (HB_UNKNOWN_JOB,
 * HB_MALFORMED for an action id too long, HB_UNAVAILABLE, HB_NOMEM).
 */
HB_API int accept_job_found(struct accept_prep *p, enum config_status cs,
    struct accept_res *res) HB_MUST_CHECK;

/*
 * The state.db half, for n prepared observations p[i] at once (a batch),
 * inside the caller's transaction; each answer goes to *res[i].  First,
 * on PostgreSQL, it takes the jobs' locks (a lock not had within the
 * busy budget fails its job's members alone, "try again").  Then, in a
 * savepoint, it looks up what the observations need (store_look_batch()),
 * decides them in their order (decide_batch()) and writes what was
 * decided.  On PostgreSQL the locks and the look-ups ride one flight
 * (store/flight.h) with the caller's BEGIN, and the writes a second: a
 * batch costs two round trips here, whatever its size, and the caller's
 * COMMIT a third.  A member whose writing fails is answered alone,
 * HB_UNAVAILABLE or HB_NOMEM: the batch is rolled back to the savepoint
 * and run again without it.  Where another host wrote a delivery id or
 * an action id the look-up did not see (its insert refused by the key),
 * the batch is looked up and decided again (a few times, then that
 * member alone is "try again").  skip[i] non-zero (skip may be NULL):
 * p[i] is left out and *res[i] untouched.
 *
 * Returns STORE_OK, every answer valid once the caller's COMMIT succeeds;
 * or a failure, every answer HB_UNAVAILABLE or HB_NOMEM and nothing
 * written; store_in_tx() then says whether the caller's transaction (and
 * what else was written in it) still stands.
 */
HB_API enum store_status accept_batch(struct store *, size_t n,
    const struct accept_prep *const *p, struct accept_res *const *res,
    const int *skip) HB_MUST_CHECK;

/*
 * Writes the JSON answer for a result into buf: {"result":..} with
 * "action" when there is one, "actions" (every action id, that one
 * first) for a fan-out, and "detail" when there is one, on one line
 * (control characters escaped).  The same document is the HTTP body and
 * the command line's output.  It allocates nothing, so it answers even
 * when memory ran out.  Returns 0, or -1 when buf is too small (buf is
 * then "" if len > 0): ACCEPT_JSON_ONE suffices for an answer without
 * "actions", ACCEPT_JSON_MAX for any.
 */
#define ACCEPT_JSON_ONE	1024
#define ACCEPT_JSON_MAX	(ACCEPT_JSON_ONE + \
	2 * MAPPING_FANOUT_MAX * (HB_ACTION_MAX + 4))
HB_API int accept_res_json(const struct accept_res *, char *buf, size_t len)
    HB_MUST_CHECK;

#endif
