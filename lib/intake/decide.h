/*
 * intake/decide.h: the acceptance rules (hookbox(7), ACCEPTANCE RULES), once,
 * as a pure function over what was read and the observations themselves.
 *
 * Acceptance runs in phases: read what the observations need from the
 * state (store/record.h), decide here, then write what was decided, and
 * commit.  Every backend and every path (one observation, a batch of
 * them) runs the same decide_batch(): the rules are not written twice.
 *
 * Transactions: none; no database.  The caller reads inside the same
 * transaction (or under the same job locks) that its writes go into.
 */
#ifndef HB_DECIDE_H
#define HB_DECIDE_H

#include "intake/prep.h"

/* What to write for one observation: a mask of these. */
enum decide_write {
	DECIDE_RECEIPT = 1 << 0,	/* its receipt, with its result */
	DECIDE_JOB = 1 << 1,		/* its job's state becomes next */
	DECIDE_CLAIM = 1 << 2,		/* the action: accepted and outbox */
	DECIDE_CONFLICT = 1 << 3,	/* a conflict, recorded or seen again */
	DECIDE_SUBJECT = 1 << 4		/* its subject's state becomes subject */
};

struct decide_out {
	struct accept_res	 res;		/* the answer, once committed */
	unsigned		 writes;	/* enum decide_write */
	struct store_job	 next;		/* with DECIDE_JOB */
	struct store_subject	 subject;	/* with DECIDE_SUBJECT */
	/*
	 * With DECIDE_CONFLICT: static storage, the job id, or the two
	 * buffers below.
	 */
	const char		*kind;	/* "terminal", "action" or "version" */
	const char		*recorded;
	const char		*observed;
	char			 events[2][HB_ID_MAX + 32];
};

/*
 * A subject's event (OBS_EV_SUBJECT) against its subject's recorded
 * state, by (version, occurrence), hookbox(7), Versioned events:
 *
 *   recorded	incoming (version, occurrence)	result
 *   none	any				takes effect
 *   (V, T)	older: (v < V, or v = V, t < T)	stale, nothing changes
 *   (V, T)	the same, same effect and step	duplicate (another event id)
 *   (V, T)	the same, another effect or step	conflict, recorded
 *   (V, T)	newer				takes effect
 *
 * An event that takes effect becomes the subject's state and claims its
 * action, tenant:subject:version:step: accepted, or a duplicate where
 * that action was claimed before (the step of one version acts once).
 * An undo is an event as any other: it takes effect with its own step
 * (unpublish), and an approval older than it is stale.
 *
 * A fan-out's later steps (members that follow the one before them) are
 * that event: when it took effect each claims its own action, accepted
 * or a duplicate as above; else each is answered as it was.
 */

/*
 * Decides n prepared observations (p[i], with what the state held for it
 * found[i]: store_look_batch()) in the order given, which is the order
 * they arrived in: each sees what the ones before it decided (a job's
 * state, an action claimed, a delivery id received), as if each had been
 * committed alone.  found[i]'s receipt counts only when p[i] has both an
 * endpoint and a delivery id, its job and action only for a job event.
 * Fills out[0..n-1].
 */
HB_API void decide_batch(size_t n, const struct accept_prep *const *p,
    const struct store_found *found, struct decide_out *out);

#endif
