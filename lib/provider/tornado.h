/*
 * provider/tornado.h: the Tornado provider's formats, parsed into struct obs.
 *
 * Each parser takes the raw body (not NUL-terminated; at most len bytes
 * are read), parses it with base/json.h's strict rules, validates it against
 * one table of fields per payload kind, and fills *out only from
 * validated values.  Unknown fields are ignored; unknown event types
 * parse successfully as OBS_EV_UNKNOWN so that they can be recorded and
 * acknowledged.  On error, why receives a short sentence naming the field
 * (never the field's value).
 *
 * Malformed, whatever the field (hookbox-fcgi(8), HTTP CONTRACT):
 *  - a raw byte below 0x20 inside a string, or one between tokens that is
 *    not JSON white space (TORNADO_NOT_JSON);
 *  - the escape \u0000 in any string, a key named twice in any object at
 *    any depth (TORNADO_INVALID).
 * Decoded control characters (C0 and DEL, e.g. from \u001b, \r, \n) are
 * refused in identifiers (type, job_id, status, stage, batch_id,
 * delivery_id, id) and in file locations (key, url); in free text (error,
 * reason) each becomes a space.  So every string of a parsed obs passes
 * text_valid_line().
 *
 * TORNADO_NOMEM means an allocation failed: nothing about the body was
 * decided, and it must be answered as "try again", never as malformed.
 *
 * Transactions: none; parsing only.
 */
#ifndef HB_TORNADO_H
#define HB_TORNADO_H

#include "provider/obs.h"

enum tornado_err {
	TORNADO_OK = 0,
	TORNADO_NOT_JSON,	/* not a JSON document (RFC 8259) */
	TORNADO_INVALID,	/* JSON, but wrong types or missing fields */
	TORNADO_NOMEM		/* out of memory; try again */
};

HB_API const char *tornado_strerror(enum tornado_err);

/* A per-job callback (the job's webhook_url), current or legacy. */
HB_API enum tornado_err tornado_parse_callback(const char *body, size_t len,
    struct obs *out, char *why, size_t whylen) HB_MUST_CHECK;

/* An organization event: {"delivery_id","type","created_at","data":{..}}. */
HB_API enum tornado_err tornado_parse_event(const char *body, size_t len,
    struct obs *out, char *why, size_t whylen) HB_MUST_CHECK;

/* A poll's answer: the provider's job document (GET {base}/jobs/{id}). */
HB_API enum tornado_err tornado_parse_poll(const char *body, size_t len,
    struct obs *out, char *why, size_t whylen) HB_MUST_CHECK;

#endif
