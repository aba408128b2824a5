/*
 * util.h: small helpers every module uses: start-up, the one bounded
 * integer parser, identifier validation and the clock.
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
 * sixth of the responder's profile.
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

/* Non-zero when the len bytes at s are well-formed UTF-8 (no overlongs,
 * no surrogates, nothing past U+10FFFF). */
HB_API int util_valid_utf8(const char *s, size_t len);

/*
 * The identifier rules, one per kind, used everywhere an identifier enters
 * (the tool, a payload, a status answer) and again wherever one is read
 * back from a database before it goes into a header, URL, log or action id:
 *
 * util_valid_name(): hookbox's own names, chosen by the operator (tenant,
 * endpoint, destination, attempt, step): 1..HB_ID_MAX bytes of
 * [A-Za-z0-9._-], starting with a letter or digit.  So a name is safe in
 * a URL path, a header, a metric label and a file name, and ':' stays the
 * action id's separator: tenant:attempt:step has exactly one reading.
 *
 * util_valid_id(): ids chosen by others (provider job ids, delivery ids):
 * 1..max bytes of valid UTF-8 with no control character (C0, DEL, C1) and
 * no invisible format or bidirectional character (U+200B-U+200F,
 * U+2028-U+202E, U+2060-U+206F, U+061C, U+FEFF), so that what a log or a
 * terminal shows is what was stored.
 */
HB_API int util_valid_name(const char *s);
HB_API int util_valid_id(const char *s, size_t max);

/* Non-zero when s is tenant:attempt:step, three valid names. */
HB_API int util_valid_action(const char *s);

/*
 * Non-zero when s can go into an HTTP header or request line: at most
 * max bytes (may be empty), valid UTF-8, and none of the characters
 * util_valid_id() refuses (no CR, LF, NUL, tab, DEL, C1, bidi).  For URLs
 * and keys we send.
 */
HB_API int util_valid_line(const char *s, size_t max);

/*
 * Copies s (at most n bytes; n may be (size_t)-1 for "up to the NUL")
 * into buf for a log line: printable ASCII other than '"' and '\\' as is,
 * every other byte as \xNN, cut with "..." when buf is short.  Always
 * NUL-terminates (len > 0).  Returns buf.
 */
HB_API char *util_escape(const char *s, size_t n, char *buf, size_t len);

/* Non-zero when s is valid UTF-8 text of at most max bytes (may be empty). */
HB_API int util_valid_text(const char *s, size_t max);

/* Seconds and milliseconds since the epoch. */
HB_API int64_t util_now(void);
HB_API int64_t util_now_ms(void);

/* ASCII case-insensitive equality of two NUL-terminated strings. */
HB_API int util_eqi(const char *, const char *);

/*
 * Copies a URL into buf (len bytes) with its credentials masked: a
 * user:password@ (or user@) becomes ***@, and the value of every query
 * parameter whose name contains token, key, secret, pass, sig or auth
 * (ASCII case-insensitive) becomes ***.  Everything else is copied as
 * is.  Returns 0, or -1 when buf is too short (buf then holds "").
 * A buffer of strlen(url) + 4 * (number of '&' + 2) bytes always does.
 */
HB_API int util_url_redact(const char *url, char *buf, size_t len)
    HB_MUST_CHECK;

#endif
