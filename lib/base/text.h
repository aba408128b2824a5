/*
 * base/text.h: the rules for text: identifiers and names as they enter (the
 * tool, a payload, a status answer) and again wherever one is read back
 * before it goes into a header, URL, log or action id; free text made safe
 * for a terminal; bytes escaped for a log.
 *
 * Transactions: none; no database.
 */
#ifndef HB_TEXT_H
#define HB_TEXT_H

#include <stddef.h>

#include "base/hb.h"

/* Non-zero when the len bytes at s are well-formed UTF-8 (no overlongs,
 * no surrogates, nothing past U+10FFFF). */
HB_API int text_valid_utf8(const char *s, size_t len);

/*
 * The identifier rules, one per kind, used everywhere an identifier enters
 * (the tool, a payload, a status answer) and again wherever one is read
 * back from a database before it goes into a header, URL, log or action id:
 *
 * text_valid_name(): hookbox's own names, chosen by the operator (tenant,
 * endpoint, destination, attempt, step): 1..HB_ID_MAX bytes of
 * [A-Za-z0-9._-], starting with a letter or digit.  So a name is safe in
 * a URL path, a header, a metric label and a file name, and ':' stays the
 * action id's separator: tenant:attempt:step has exactly one reading.
 *
 * text_valid_id(): ids chosen by others (provider job ids, delivery ids):
 * 1..max bytes of valid UTF-8 with no control character (C0, DEL, C1) and
 * no invisible format or bidirectional character (U+200B-U+200F,
 * U+2028-U+202E, U+2060-U+206F, U+061C, U+FEFF), so that what a log or a
 * terminal shows is what was stored.
 */
HB_API int text_valid_name(const char *s);
HB_API int text_valid_id(const char *s, size_t max);

/*
 * Non-zero when s is an HTTP header name (RFC 9110's token): 1 to
 * HB_ID_MAX of the characters A-Z a-z 0-9 and !#$%&'*+-.^_`|~.
 */
HB_API int text_valid_header(const char *s);

/*
 * A header name s in lower case, the one spelling it is matched by, into
 * dst (room for HB_ID_MAX + 1 bytes; dst may be s).  0, or -1 when s is
 * not a header name (text_valid_header()).
 */
HB_API int text_header_lower(char *dst, const char *s);

/*
 * Writes a reason, printf-style, into why (whylen bytes, cut to fit);
 * does nothing when why is NULL or whylen 0.  The parsers' one way to
 * say why they refused.
 */
HB_API void text_say(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Non-zero when s is an action id: tenant:attempt:step, three valid
 * names; or a subject's, tenant:subject:version:step, with the subject a
 * valid id (which may hold ':'; namespace/subject since subjects have
 * namespaces), the version 1 to 16 digits, and subject:version at most
 * HB_ID_MAX bytes.
 */
HB_API int text_valid_action(const char *s);

/*
 * Non-zero when s can go into an HTTP header or request line: at most
 * max bytes (may be empty), valid UTF-8, and none of the characters
 * text_valid_id() refuses (no CR, LF, NUL, tab, DEL, C1, bidi).  For URLs
 * and keys we send.
 */
HB_API int text_valid_line(const char *s, size_t max);

/*
 * Writes each character text_valid_line() refuses (C0 and C1 controls,
 * DEL, bidirectional and invisible format characters) as one space, in
 * place: free text from a provider keeps its words and loses nothing a
 * terminal or a log would act on.  s must be valid UTF-8; it only
 * shortens.
 */
HB_API void text_blank_hidden(char *s);

/*
 * Copies s (at most n bytes; n may be (size_t)-1 for "up to the NUL")
 * into buf for a log line: printable ASCII other than '"' and '\\' as is,
 * every other byte as \xNN, cut with "..." when buf is short.  Always
 * NUL-terminates (len > 0).  Returns buf.
 */
HB_API char *text_escape(const char *s, size_t n, char *buf, size_t len);

/* Non-zero when s is valid UTF-8 text of at most max bytes (may be empty). */
HB_API int text_valid(const char *s, size_t max);

/*
 * Non-zero when the len bytes at s hold a byte no HTTP header value may:
 * a control character other than HTAB, or DEL.
 */
HB_API int text_has_ctl(const char *s, size_t len);

/*
 * A plain decimal integer, as a signature's time is written: 1 or more
 * ASCII digits (len bytes at s) and nothing else, no sign, no space, at
 * most INT64_MAX, into *out.  Returns 0, or -1 (*out untouched).
 */
HB_API int text_decimal(const char *s, size_t len, int64_t *out);

/* ASCII case-insensitive equality of two NUL-terminated strings. */
HB_API int text_eqi(const char *, const char *);

/*
 * Appends n bytes of s to buf (len bytes) at offset *o, NUL-terminated,
 * and moves *o past them.  Returns 0, or -1 when they do not fit (buf
 * and *o unchanged).
 */
HB_API int text_put(char *buf, size_t len, size_t *o, const char *s,
    size_t n) HB_MUST_CHECK;

/*
 * Copies a URL into buf (len bytes) with its credentials masked: a
 * user:password@ (or user@) becomes ***@, and the value of every query
 * parameter whose name contains token, key, secret, pass, sig or auth
 * (ASCII case-insensitive) becomes ***.  Everything else is copied as
 * is.  Returns 0, or -1 when buf is too short (buf then holds "").
 * A buffer of strlen(url) + 4 * (number of '&' + 2) bytes always does.
 */
HB_API int text_url_redact(const char *url, char *buf, size_t len)
    HB_MUST_CHECK;

#endif
