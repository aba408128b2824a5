/*
 * store/tenant.h: one tenant's rows in state.db taken as a whole, for a
 * tenant that exists only for a test: the delivery-disorder tester
 * (`hookbox disorder`) counts what its requests left and removes it after.
 *
 * Transactions: self-contained: each function is one statement or its
 * own transaction.
 */
#ifndef HB_STORE_TENANT_H
#define HB_STORE_TENANT_H

#include "store/record.h"
#include "store/store.h"

/* What a tenant has in state.db. */
struct store_tally {
	int64_t	actions;	/* outbox rows, in any state */
	int64_t	receipts;	/* one per delivery or event id */
	int64_t	conflicts;	/* open ones */
};

HB_API enum store_status store_tenant_tally(struct store *,
    const char *tenant, struct store_tally *) HB_MUST_CHECK;

/*
 * A subject's recorded state (hookbox(7), Versioned events): the newest
 * event that took effect.  *found 0 when the subject has none.
 */
HB_API enum store_status store_subject_get(struct store *,
    const char *tenant, const char *subject, struct store_subject *,
    int *found) HB_MUST_CHECK;

/*
 * Removes every row of the tenant from state.db (receipts, actions and
 * their attempts and tombstones, job and subject states, conflicts,
 * polls), in one transaction; *removed counts them.  While one of its
 * actions is leased (a delivery in flight) nothing is removed and
 * *leased is 1: the caller waits and tries again, so that no delivery
 * records its outcome into an action that is gone.
 */
HB_API enum store_status store_tenant_forget(struct store *,
    const char *tenant, int *leased, int64_t *removed) HB_MUST_CHECK;

#endif
