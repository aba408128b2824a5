/*
 * base/util.h: small helpers every module uses: start-up, the one bounded
 * integer parser, the one date parser (for a provider's times and the
 * operator's), and the clock.  Text and identifier rules are base/text.h's.
 *
 * Transactions: none; no database.
 */
#ifndef HB_UTIL_H
#define HB_UTIL_H

#include "base/hb.h"

/*
 * Initialises libsodium and installs cJSON's allocation hooks (base/json.h).
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

/*
 * Gives back to the kernel every whole page of freed heap, in each heap
 * (malloc_trim(3)): for such a process once it has gone quiet, as
 * jemalloc's decay does, so that what a burst took does not stay
 * resident until the next one.  It costs a walk of the free lists; the
 * pages come back as they are next touched.
 */
HB_API void util_give_heap_back(void);

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
 * Times.  One calendar (proleptic Gregorian, UTC, no leap seconds) and one
 * reading of "YYYY-MM-DD..." for every caller: util_parse_datetime() is
 * the core, the others are the forms one caller takes on top of it.
 */

/* 10000-01-01T00:00:00Z in unix seconds: the first instant refused. */
#define UTIL_TIME_END_S		253402300800LL

/* What util_parse_datetime() and util_parse_epoch() found. */
enum util_time {
	UTIL_TIME_OK = 0,
	UTIL_TIME_INVALID,	/* not one of the forms taken */
	UTIL_TIME_RANGE		/* one, but before 1970 or from year 10000 */
};

/* The forms util_parse_datetime() takes besides "YYYY-MM-DDTHH:MM:SSZ". */
#define UTIL_DT_DATE	0x1	/* "YYYY-MM-DD" alone */
#define UTIL_DT_RFC3339	0x2	/* RFC 3339's date-time in full */

/*
 * A date-time into *ms, unix milliseconds.  Always taken, and alone
 * without flags: "YYYY-MM-DDTHH:MM:SSZ", exactly ('T' and 'Z' upper case,
 * nothing before or after), with the month 01-12, the day within its
 * month (2024-02-29 and 2000-02-29 yes, 2023-02-29 and 2100-02-29 no),
 * hours 00-23, minutes and seconds 00-59.  A leap second (:60) is refused:
 * without a table of them its instant is not known, and no provider is
 * seen to send one.  forms adds:
 *   UTIL_DT_DATE     "YYYY-MM-DD" alone: its midnight, UTC;
 *   UTIL_DT_RFC3339  RFC 3339's date-time (its section 5.6): 't' and 'z'
 *                    too; a fraction of a second after the seconds, '.'
 *                    and one digit at least, its first three kept as
 *                    milliseconds and the rest dropped (not rounded); an
 *                    offset "+HH:MM" or "-HH:MM" (00-23, 00-59) in place
 *                    of 'Z', taken off to give UTC;
 * Returns UTIL_TIME_OK with *ms set; UTIL_TIME_INVALID for any other text
 * (a field out of its bounds too); UTIL_TIME_RANGE for a date-time of a
 * form taken whose instant, its offset applied, is before
 * 1970-01-01T00:00:00Z or not before UTIL_TIME_END_S.  *ms is untouched
 * unless UTIL_TIME_OK.
 */
HB_API enum util_time util_parse_datetime(const char *s, unsigned forms,
    int64_t *ms) HB_MUST_CHECK;

/*
 * Epoch seconds as text, as some providers write a time: one digit at
 * least (leading zeros allowed), then optionally '.' and one digit at
 * least, the fraction's first three kept as milliseconds and the rest
 * dropped.  No sign, space or exponent.  Returns UTIL_TIME_OK with *ms
 * set (unix milliseconds), UTIL_TIME_INVALID, or UTIL_TIME_RANGE for
 * UTIL_TIME_END_S seconds or more, however many digits; *ms is untouched
 * unless UTIL_TIME_OK.
 */
HB_API enum util_time util_parse_epoch(const char *s, int64_t *ms)
    HB_MUST_CHECK;

/*
 * A point in time, as the operator writes one: UNIXTIME (whole seconds,
 * 0 to INT64_MAX / 1000, leading zeros allowed), YYYY-MM-DD (midnight
 * UTC), YYYY-MM-DDTHH:MM:SSZ (UTC; these two are util_parse_datetime()'s
 * with UTIL_DT_DATE, 1970 to 9999), or +DURATION from now, a whole number
 * and a unit, "+90s", "+90m", "+24h", "+30d" (no unit: seconds; at most
 * 23 digits), at most UTIL_DURATION_MAX seconds.  Returns 0 and sets *out
 * (unix seconds), or -1 (*out untouched; s NULL too).  Whether the time is
 * in the past is the caller's question.
 */
#define UTIL_DURATION_MAX	(100LL * 366 * 86400)	/* a century */
/* "90s", "90m", "24h", "30d" or "90" (seconds) into *secs; 0 or -1. */
HB_API int util_parse_duration(const char *s, int64_t *secs) HB_MUST_CHECK;
HB_API int util_parse_time(const char *s, int64_t now, int64_t *out)
    HB_MUST_CHECK;

/*
 * A time to list from (the tool's --since), into unix milliseconds: a
 * duration back from now_ms, N followed by s, m, h or d ("30m", "24h",
 * "7d"; N a whole number 0 to UTIL_SINCE_MAX of at most 14 characters,
 * as util_parse_num() reads it, so "-0" too; a unit is required), or a
 * UTC date, "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM:SSZ" (util_parse_datetime()
 * with UTIL_DT_DATE, 1970 to 9999).  Returns 0 and sets
 * *out, which is before 1970 for a duration longer than since then; or
 * -1 (*out untouched; s NULL too).  The message is the caller's.
 */
#define UTIL_SINCE_MAX	(INT64_MAX / 86400000 / 2)	/* no overflow in ms */
HB_API int util_parse_since(const char *s, int64_t now_ms, int64_t *out)
    HB_MUST_CHECK;

/* Seconds and milliseconds since the epoch. */
HB_API int64_t util_now(void);
HB_API int64_t util_now_ms(void);

/* Sleeps ms milliseconds (not below 0); a signal cuts it short. */
HB_API void util_sleep_ms(int64_t ms);

#endif
