/*
 * store/rows.h: the rows the acceptance transaction reads and records
 * (store/record.h), as types alone: a receipt, a job's and a subject's
 * recorded state, and what the state holds for one observation.  The
 * acceptance rules (intake/decide.h) decide over them without seeing
 * how they are read.
 *
 * Transactions: none; no database.
 */
#ifndef HB_STORE_ROWS_H
#define HB_STORE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "base/hb.h"
#include "provider/obs.h"

/* One received observation, for diagnostics. */
struct store_receipt {
	int64_t		 at;
	const char	*tenant;
	const char	*endpoint;	/* NULL for polls */
	const char	*source;	/* "job", "org", "poll", "event" */
	const char	*delivery_id;	/* NULL unless an org event */
	const char	*job_id;
	const char	*type;
	const char	*status;
	const char	*stage;
	const char	*body;		/* raw bytes, may be NULL */
	size_t		 bodylen;
	int		 versioned;	/* a subject's event: these two */
	int64_t		 version;
	int64_t		 occurred_ms;
};

/* What an earlier receipt of the same delivery id was answered. */
struct store_prior {
	char	result[32];
	char	action[HB_ACTION_MAX + 1];
};

/* The recorded state of one job; a job never seen is stage QUEUED, no terminal. */
struct store_job {
	enum obs_stage	stage;
	enum obs_status	terminal;
};

/*
 * The recorded state of one subject (hookbox(7), Versioned events): the
 * newest event that took effect, by (version, occurrence).  A subject
 * never seen has seen 0.
 */
struct store_subject {
	int	 seen;
	int64_t	 version;
	int64_t	 occurred_ms;
	int	 undo;			/* that event undid the subject */
	char	 step[HB_ID_MAX + 1];	/* the step it made */
};

/* What the state holds for one observation (see store_look_batch()). */
struct store_found {
	int			 seen;	/* its delivery id was received */
	struct store_prior	 prior;	/* ... and answered so */
	struct store_job	 job;	/* its job's recorded state */
	struct store_subject	 subject;	/* its subject's */
	int			 claimed;	/* its action id is accepted */
	char			 owner[HB_ID_MAX + 1];	/* ... for this job */
};

#endif
