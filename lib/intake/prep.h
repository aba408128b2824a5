/*
 * intake/prep.h: an observation as acceptance takes it (struct
 * accept_req), ready for state.db (struct accept_prep), and its answer
 * (struct accept_res): the types alone, which the acceptance routine
 * (intake/accept.h) fills and the rules (intake/decide.h) decide over.
 *
 * Transactions: none; no database.
 */
#ifndef HB_PREP_H
#define HB_PREP_H

#include <stddef.h>
#include <stdint.h>

#include "base/hb.h"
#include "config/rows.h"
#include "provider/mapping.h"
#include "provider/obs.h"
#include "store/rows.h"

#define ACCEPT_CARRY_TEXT	2	/* accept_req's carry: as a string */

struct accept_req {
	const char		*tenant;
	const char		*endpoint;	/* NULL for polls and observe */
	const struct obs	*obs;
	/*
	 * A subject's event (OBS_EV_SUBJECT): where its actions go, and its
	 * subjects' namespace (a name: the mapping's, or the endpoint's).
	 * Subjects of two namespaces are two subjects: neither orders nor
	 * deduplicates the other's events.
	 */
	const char		*destination;
	const char		*space;
	/*
	 * A fan-out (provider/mapping.h): the steps it makes besides
	 * obs->step, each with its destination.
	 */
	const struct mapping_step *more;
	size_t			 nmore;
	/*
	 * The body travels with the action as its payload's "data": 1 as
	 * it is (a JSON object), ACCEPT_CARRY_TEXT as a JSON string (a
	 * form); 0: not.
	 */
	int			 carry;
	const char		*body;		/* raw body for the receipt, or NULL */
	size_t			 bodylen;
	int64_t			 now_ms;
};

struct accept_res {
	enum hb_result	 result;
	/*
	 * The action concerned ("" when none): tenant:attempt:step, or for
	 * a subject's event tenant:namespace/subject:version:step.
	 */
	char		 action[HB_ACTION_MAX + 1];
	/*
	 * A fan-out's: the steps of its other actions, whose ids are
	 * action's with each in place of its step.
	 */
	char		 more[MAPPING_FANOUT_MAX - 1][HB_ID_MAX + 1];
	size_t		 nmore;
	/*
	 * Why, for results that are not self-explanatory: static storage,
	 * or the why buffer below.  Never a secret or a signature.
	 */
	const char	*detail;
	char		 why[128];
};

/*
 * An observation ready for state.db: what accept_prepare() read from
 * config.db.  It borrows the request's strings: the accept_req and what
 * it points to must outlive it.  It owns nothing.
 */
struct accept_prep {
	const struct obs	*obs;
	int64_t			 now_ms;
	/*
	 * Job events: the job.  A subject's event: "namespace/subject" as
	 * the job id, "namespace/subject:version" as the attempt, its step
	 * and destination.
	 */
	struct config_job	 job;
	char			 action[HB_ACTION_MAX + 1];
	/* A subject's event: rcpt's body is its action's "data" too. */
	int			 carry;
	/*
	 * A fan-out's other steps (accept_req's more), each an action of
	 * its own; and in a batch, made of those, a member that follows
	 * the one before it: the same event, decided with it, one of its
	 * steps.
	 */
	struct mapping_step	 more[MAPPING_FANOUT_MAX - 1];
	size_t			 nmore;
	int			 follows;
	struct store_receipt	 rcpt;
	/*
	 * A job event prepared without its job (an accept_config with no
	 * job look-up): job.tenant and job.job_id are set, the rest of the
	 * job and the action are accept_job_found()'s, and version is the
	 * configuration's the request was read from, for the look-up to
	 * confirm (config_cache_jobs()).  config_stale: it did not, and
	 * the request starts again.
	 */
	int			 job_wanted;
	int64_t			 version;
	int			 config_stale;
	/*
	 * The id of the endpoint's secret the request was signed with (0:
	 * none): its last use rides the batch's COMMIT with the request's
	 * count (base/metrics.h, secret_used_ms).
	 */
	int64_t			 secret;
};

#endif
