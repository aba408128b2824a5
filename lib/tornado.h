/*
 * tornado.h: the Tornado provider's formats, parsed into struct obs.
 *
 * Each parser takes the raw body (not NUL-terminated; at most len bytes
 * are read), validates it against one table of fields per payload kind,
 * and fills *out only from validated values.  Unknown fields are ignored;
 * unknown event types parse successfully as OBS_EV_UNKNOWN so that they
 * can be recorded and acknowledged.  On error, why receives a short
 * sentence naming the field (never the field's value).
 */
#ifndef HB_TORNADO_H
#define HB_TORNADO_H

#include "obs.h"

enum tornado_err {
	TORNADO_OK = 0,
	TORNADO_NOT_JSON,	/* not a JSON document */
	TORNADO_INVALID,	/* JSON, but wrong types or missing fields */
	TORNADO_NOMEM
};

HB_API const char *tornado_strerror(enum tornado_err);

/* A per-job callback (the job's webhook_url), current or legacy. */
HB_API enum tornado_err tornado_parse_callback(const char *body, size_t len,
    struct obs *out, char *why, size_t whylen) HB_MUST_CHECK;

/* An organization event: {"delivery_id","type","created_at","data":{..}}. */
HB_API enum tornado_err tornado_parse_event(const char *body, size_t len,
    struct obs *out, char *why, size_t whylen) HB_MUST_CHECK;

/* A status API answer (GET {base}/jobs/{id}). */
HB_API enum tornado_err tornado_parse_status(const char *body, size_t len,
    struct obs *out, char *why, size_t whylen) HB_MUST_CHECK;

#endif
