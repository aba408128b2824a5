/*
 * util.h: small helpers every module uses: start-up, the one bounded
 * integer parser, times as the operator writes them, and the clock.
 * Text and identifier rules are text.h's.
 *
 * Transactions: none; no database.
 */
#ifndef HB_UTIL_H
#define HB_UTIL_H

#include "hb.h"

/*
 * Initialises libsodium and installs cJSON's allocation hooks (json.h).
 * Call once at start-up, before any thread starts and before any other
 * call into the library.  Returns 0, or -1.
 */
HB_API int util_init(void) HB_MUST_CHECK;

/*
 * For a long-running process that allocates and frees much the same
 * memory over and over (a request, a batch): keeps up to 8 MiB freed at
 * the top of each heap instead of glibc's default 128 KiB.  With the
 * default the top went back to the kernel and was taken again on every
 * request or delivery, each time an madvise(2) or brk(2) and a TLB flush:
 * measured, that made deliveries three to four times slower, and was a
 * sixth of the responder's profile.  And no more heaps than cores (at
 * most 8; glibc's default is 8 a core): the serving threads, each of
 * which may run a batch, would otherwise spread SQLite's pages over as
 * many heaps, each keeping what it freed (2 to 3 MB of the worker's RSS,
 * measured).
 */
HB_API void util_keep_heap(void);

/* What the one bounded integer parser found. */
enum util_num {
	UTIL_NUM_OK = 0,
	UTIL_NUM_INVALID,	/* not a whole decimal number, or min > max */
	UTIL_NUM_SMALL,		/* below min */
	UTIL_NUM_LARGE		/* above max (or past LLONG_MAX) */
};

/*
 * The one bounded integer parser: a whole decimal string ("-" allowed,
 * no sign "+", no space) into [min, max].  *out is set only on
 * UTIL_NUM_OK.
 */
HB_API enum util_num util_parse_num(const char *s, long long min,
    long long max, long long *out) HB_MUST_CHECK;

/*
 * strtonum(3) in the OpenBSD style, over util_parse_num(): returns the
 * value, or 0 with *errstr set to "invalid", "too small" or "too large"
 * (static storage, for messages only); on success *errstr = NULL.
 */
HB_API long long util_strtonum(const char *s, long long min, long long max,
    const char **errstr);

/*
 * A point in time, as the operator writes one: UNIXTIME (whole seconds),
 * YYYY-MM-DD (midnight UTC), YYYY-MM-DDTHH:MM:SSZ (UTC), or +DURATION from now, a
 * whole number and a unit, "+90s", "+90m", "+24h", "+30d" (no unit:
 * seconds), at most UTIL_DURATION_MAX seconds.  Returns 0 and sets *out (unix
 * seconds), or -1 (*out untouched).  Whether the time is in the past is
 * the caller's question.
 */
#define UTIL_DURATION_MAX	(100LL * 366 * 86400)	/* a century */
HB_API int util_parse_time(const char *s, int64_t now, int64_t *out)
    HB_MUST_CHECK;

/* Seconds and milliseconds since the epoch. */
HB_API int64_t util_now(void);
HB_API int64_t util_now_ms(void);

#endif
