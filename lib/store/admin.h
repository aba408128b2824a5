/*
 * store/admin.h: state.db for the operator's read-outs of attempts and
 * conflicts, a conflict's resolution, an action's state and prune (the
 * hookbox tool), and the poller's memory (lib/delivery/poller.c).  The outbox's
 * own list and moves are in store/outbox.h.
 *
 * Transactions: self-contained: each function is one statement or its
 * own transaction.
 */
#ifndef HB_STORE_ADMIN_H
#define HB_STORE_ADMIN_H

#include "store/store.h"

/* ---- the poller's memory ---- */

/* When the poller last asked about a job (0: never). */
HB_API enum store_status store_poll_last(struct store *, const char *tenant,
    const char *job_id, int64_t *at) HB_MUST_CHECK;
/* Notes that the poller asked about a job now (its own transaction). */
HB_API enum store_status store_poll_mark(struct store *, const char *tenant,
    const char *job_id, int64_t now) HB_MUST_CHECK;

/*
 * ---- operator read-outs: JSON arrays, freed with cJSON_Delete(), as
 * the filter (store/store.h; NULL: none) shows them, times in unix ms; the
 * outbox's own is store_outbox_list() (store/outbox.h) ----
 */

struct cJSON;

/* The attempts of one action, oldest first. */
HB_API enum store_status store_attempts_list(struct store *,
    const char *action, const struct store_list_filter *,
    struct cJSON **out) HB_MUST_CHECK;
/* Open conflicts (all of them with all set), oldest first. */
HB_API enum store_status store_conflicts_list(struct store *, int all,
    const struct store_list_filter *, struct cJSON **out) HB_MUST_CHECK;
/* Marks an open conflict resolved with a note; *changed 0 if none. */
HB_API enum store_status store_conflict_resolve(struct store *, int64_t id,
    const char *note, int64_t now, int *changed) HB_MUST_CHECK;

/*
 * Deletes receipts received before receipts_before, and delivered
 * actions (outbox row, attempts, accepted tombstone) accepted before
 * actions_before.  Undelivered actions are never touched.
 */
struct store_pruned {
	int64_t	receipts, actions;
};
HB_API enum store_status store_prune(struct store *, int64_t receipts_before,
    int64_t actions_before, struct store_pruned *) HB_MUST_CHECK;

/* ---- an action's and a conflict's state, and jobs that ended ---- */

/* An action's outbox state; *found 0 when it has no outbox row. */
HB_API enum store_status store_action_state(struct store *,
    const char *action, enum store_state *state, int *found) HB_MUST_CHECK;
/* Whether conflict id exists (*found) and is resolved (*resolved). */
HB_API enum store_status store_conflict_state(struct store *, int64_t id,
    int *found, int *resolved) HB_MUST_CHECK;

/* A job, by its key. */
struct store_job_ref {
	char	tenant[HB_ID_MAX + 1];
	char	job_id[HB_ID_MAX + 1];
};

/*
 * Jobs whose state ended (completed or failed) before `before` (unix ms),
 * in key order: at most max into refs; *n receives the count.  A read.
 */
HB_API enum store_status store_jobs_ended(struct store *, int64_t before,
    struct store_job_ref *refs, int max, int *n) HB_MUST_CHECK;
/*
 * Forgets refs[0 .. n): each job's job_state row, only while it still
 * ended before `before`, and its polls row, in one transaction.  Adds the
 * job_state and polls rows removed to *jobs and *polls.
 */
HB_API enum store_status store_jobs_forget(struct store *,
    const struct store_job_ref *refs, int n, int64_t before, int64_t *jobs,
    int64_t *polls) HB_MUST_CHECK;

#endif
