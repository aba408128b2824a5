/*
 * base/hb.h: what every hookbox module shares: the export marker, the input
 * limits, and the result of handling one observation.
 *
 * The result enum is the library's answer for every row of the HTTP table
 * in hookbox-fcgi(8), HTTP CONTRACT.  The library knows nothing of HTTP:
 * the responder maps results to status codes, the command line to exit
 * codes.
 *
 * Transactions: none (names, limits and the result table only).
 */
#ifndef HB_H
#define HB_H

#include <stddef.h>
#include <stdint.h>

/* The release, for --version; the Makefile's HB_VERSION overrides it. */
#ifndef HB_VERSION
#define HB_VERSION	"0.10.0"
#endif

/* A macro's value as a string literal: HB_STR(300) is "300" (help texts). */
#define HB_STR_(x)	#x
#define HB_STR(x)	HB_STR_(x)

#define HB_API __attribute__((visibility("default")))
#define HB_MUST_CHECK __attribute__((warn_unused_result))

/*
 * Input limits.  Every identifier that reaches the database is checked
 * against these before it is used, and again when it is read back; see
 * text_valid_name() and text_valid_id().
 */
#define HB_ID_MAX	128	/* tenant, endpoint, job, attempt, step, ... */
#define HB_ACTION_MAX	(3 * HB_ID_MAX + 2)	/* tenant:attempt:step */
#define HB_TEXT_MAX	2048	/* URLs, keys, error texts */
#define HB_BODY_MAX_DEFAULT	(64 * 1024)
/*
 * A destination's delivery policy's defaults (hookbox(1), OUTAGES AND
 * LIMITS), the command line's and what an upgrade gives a destination
 * made before: its actions retried for three days, its circuit opened by
 * ten failures in a row and first probed after 30 seconds.
 */
#define HB_RETRY_FOR_S_DEFAULT		259200
#define HB_CIRCUIT_FAILURES_DEFAULT	10
#define HB_COOLDOWN_S_DEFAULT		30

enum hb_result {
	HB_ACCEPTED = 0,	/* a new pending action was committed */
	HB_DUPLICATE,		/* the same action was already accepted */
	HB_RECORDED,		/* stored; qualifies for no action */
	HB_STALE,		/* older than the recorded state; ignored */
	HB_CONFLICT,		/* contradicting terminal state recorded */
	HB_IGNORED,		/* unknown event type, recorded */
	HB_MALFORMED,		/* not JSON, wrong types, missing fields */
	HB_UNAUTHORIZED,	/* bad signature, key or timestamp */
	HB_UNKNOWN_ENDPOINT,	/* no such endpoint (or tenant) */
	HB_ACTION_CONFLICT,	/* action id maps to another job (recorded) */
	HB_UNKNOWN_JOB,		/* job not registered to this tenant */
	HB_UNAVAILABLE,		/* nothing committed: busy, I/O, disk full */
	HB_NOMEM,		/* out of memory; nothing committed */
	HB_RESULT__N
};

/* The "result" word of the JSON body ("accepted", ...).  Static storage. */
HB_API const char *hb_result_name(enum hb_result);

/*
 * The result whose name is s (the inverse of hb_result_name(); "unavailable"
 * is HB_UNAVAILABLE).  Returns 0, or -1 when s names none.
 */
HB_API int hb_result_parse(const char *s, enum hb_result *out);

/* A sentence for logs and the command line.  Static storage. */
HB_API const char *hb_result_strerror(enum hb_result);

/*
 * Non-zero when the result acknowledges the observation (the HTTP 200
 * rows): the provider must not send it again.
 */
HB_API int hb_result_is_ack(enum hb_result);

#endif
