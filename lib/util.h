/*
 * util.h: small helpers every module uses: start-up, the one bounded
 * integer parser, identifier validation and the clock.
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
 * strtonum(3) in the OpenBSD style: parses a whole decimal string into
 * [min, max].  On error returns 0 and sets *errstr to "invalid",
 * "too small" or "too large" (static storage); on success *errstr = NULL.
 */
HB_API long long util_strtonum(const char *s, long long min, long long max,
    const char **errstr);

/* Non-zero when the len bytes at s are well-formed UTF-8 (no overlongs,
 * no surrogates, nothing past U+10FFFF). */
HB_API int util_valid_utf8(const char *s, size_t len);

/*
 * Non-zero when s is a usable identifier: 1..max bytes, valid UTF-8, no
 * control characters (C0, DEL).  Identifiers name tenants, endpoints,
 * jobs, attempts, steps and deliveries.
 */
HB_API int util_valid_id(const char *s, size_t max);

/*
 * Non-zero when s can go into an HTTP header or request line: at most
 * max bytes (may be empty), valid UTF-8, no control characters (no CR,
 * LF, NUL, tab or DEL).  For URLs and keys we send.
 */
HB_API int util_valid_line(const char *s, size_t max);

/* Non-zero when s is valid UTF-8 text of at most max bytes (may be empty). */
HB_API int util_valid_text(const char *s, size_t max);

/* Seconds and milliseconds since the epoch. */
HB_API int64_t util_now(void);
HB_API int64_t util_now_ms(void);

/* ASCII case-insensitive equality of two NUL-terminated strings. */
HB_API int util_eqi(const char *, const char *);

#endif
