/*
 * provider/obs.h: one normalized observation of a provider job, whatever route
 * it came by (per-job callback, organization event, status poll).
 *
 * The provider parsers (provider/tornado.h) fill it from validated input; the
 * acceptance routine (intake/accept.h) only ever sees this form.  Every string
 * is NUL-terminated, bounded by its buffer, valid UTF-8 and free of
 * control characters (C0, DEL): it may go into a log line as it is.
 *
 * Transactions: none; no database.
 */
#ifndef HB_OBS_H
#define HB_OBS_H

#include "base/hb.h"

enum obs_source {
	OBS_SRC_JOB = 0,	/* the job's own webhook_url callback */
	OBS_SRC_ORG,		/* an organization webhook event */
	OBS_SRC_POLL,		/* a poll's answer (the provider's job
				   API) */
	OBS_SRC_EVENT		/* a declared provider's event
				   (provider/mapping.h) */
};

enum obs_event {
	OBS_EV_JOB = 0,		/* a job's progress or terminal state */
	OBS_EV_BATCH,		/* batch summary: recorded, never acted on */
	OBS_EV_UNKNOWN,		/* authenticated but not understood: recorded */
	OBS_EV_SUBJECT		/* a versioned event of a subject
				   (provider/mapping.h) */
};

/* Terminal states; OBS_ST_NONE means "still running" (progress). */
enum obs_status {
	OBS_ST_NONE = 0,
	OBS_ST_COMPLETED,
	OBS_ST_FAILED,
	OBS_ST_SKIPPED,
	OBS_ST_WARNING		/* polled only: ended without a file */
};

/*
 * Stage ranks: the order a job moves through.  Per job the recorded rank
 * only ever grows.
 */
enum obs_stage {
	OBS_STAGE_QUEUED = 0,
	OBS_STAGE_DOWNLOADING,
	OBS_STAGE_DOWNLOAD_COMPLETE,
	OBS_STAGE_MUXING,
	OBS_STAGE_MUX_COMPLETE,
	OBS_STAGE_UPLOADING,
	OBS_STAGE_COMPLETED
};

struct obs {
	enum obs_source	 source;
	enum obs_event	 event;
	enum obs_status	 status;
	enum obs_stage	 stage;
	char		 type[HB_ID_MAX + 1];	/* as sent, for receipts */
	char		 job_id[HB_ID_MAX + 1];	/* empty for batch/unknown */
	char		 delivery_id[HB_ID_MAX + 1];	/* org events only */
	char		 file_key[HB_TEXT_MAX + 1];
	char		 file_url[HB_TEXT_MAX + 1];
	char		 error[HB_TEXT_MAX + 1];	/* error or skip reason */
	/*
	 * OBS_EV_SUBJECT (hookbox(7), Versioned events): job_id holds the
	 * subject, delivery_id the event id, type the event type; the event
	 * takes effect for step, or (undo) undoes the subject's state and
	 * makes step's action.  Ordered by (version, occurred_ms).
	 */
	int64_t		 version;
	int64_t		 occurred_ms;
	int		 undo;
	char		 step[HB_ID_MAX + 1];
};

/* "completed", "failed", ... or "none".  Static storage. */
HB_API const char *obs_status_name(enum obs_status);

/* "queued", "downloading", ... "completed".  Static storage. */
HB_API const char *obs_stage_name(enum obs_stage);

/* Parses a stage name (case-insensitive); returns 0 and sets *out, or -1. */
HB_API int obs_stage_parse(const char *, enum obs_stage *out);

/* Parses a status name as stored ("completed", ...); 0 or -1. */
HB_API int obs_status_parse(const char *, enum obs_status *out);

#endif
