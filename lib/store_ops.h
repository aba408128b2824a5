/*
 * store_ops.h: state.db for the operator's read-outs and prune (the
 * hookbox tool) and the poller's memory (lib/poller.c).
 *
 * Transactions: self-contained: each function is one statement or its
 * own transaction.
 */
#ifndef HB_STORE_OPS_H
#define HB_STORE_OPS_H

#include "store.h"

/* ---- the poller's memory ---- */

/* When the poller last asked about a job (0: never). */
HB_API enum store_status store_poll_last(struct store *, const char *tenant,
    const char *job_id, int64_t *at) HB_MUST_CHECK;
/* Notes that the poller asked about a job now (its own transaction). */
HB_API enum store_status store_poll_mark(struct store *, const char *tenant,
    const char *job_id, int64_t now) HB_MUST_CHECK;

/* ---- operator read-outs: JSON arrays, freed with cJSON_Delete() ---- */

struct cJSON;

/* Outbox rows in one state, oldest first, at most limit. */
HB_API enum store_status store_outbox_list(struct store *,
    enum store_state, int limit, struct cJSON **out) HB_MUST_CHECK;
/* The attempts of one action, oldest first. */
HB_API enum store_status store_attempts_list(struct store *,
    const char *action, struct cJSON **out) HB_MUST_CHECK;
/* Open conflicts (all of them with all set). */
HB_API enum store_status store_conflicts_list(struct store *, int all,
    struct cJSON **out) HB_MUST_CHECK;
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

#endif
