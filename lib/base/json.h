/*
 * base/json.h: the library's one door to cJSON.  Private to lib/ (not
 * installed, not exported).
 *
 * cJSON answers NULL both for bad input and for a failed allocation.
 * json_init() installs allocation hooks that note a failure in a
 * thread-local flag, so that every parse here tells the two apart: out of
 * memory is a reason to answer 503 and have the sender try again, bad
 * input is not.  The hooks are process-global (cJSON_InitHooks), so
 * util_init() installs them once at start-up, before any thread starts or
 * any cJSON value exists.  In the test build (-DHB_FAULT) every cJSON
 * allocation also passes the fault point FAULT_ALLOC.
 *
 * json_parse_strict() is for bytes from outside (provider bodies): on top
 * of cJSON's grammar it refuses what cJSON lets through and what would
 * let two readers of the same bytes disagree.  json_parse() is for
 * documents hookbox wrote itself.
 *
 * Neither holds a lock or a transaction; both are safe to call from any
 * thread once json_init() has run.
 *
 * Transactions: none; no database.
 */
#ifndef HB_JSON_H
#define HB_JSON_H

#include "base/hb.h"

struct cJSON;

enum json_status {
	JSON_OK = 0,
	JSON_SYNTAX,	/* not one JSON value, or more after it */
	JSON_CONTROL,	/* a raw byte below 0x20 in a string, or between
			   tokens one that is not JSON white space */
	JSON_NUL,	/* a string holds the escape \u0000 */
	JSON_DUPKEY,	/* an object names the same key twice */
	JSON_NOMEM	/* an allocation failed: nothing was decided */
};

/* A sentence for logs and why-buffers; static storage. */
const char *json_strerror(enum json_status);

/* Installs cJSON's allocation hooks.  Once, at start-up; idempotent. */
void json_init(void);

/*
 * Parses len bytes at b (not NUL-terminated; no byte past len is read)
 * into *out (freed with cJSON_Delete(); NULL unless JSON_OK).  Strict:
 *  - cJSON's grammar, and only RFC 8259's white space (space, tab, LF,
 *    CR) around tokens: cJSON skips any byte up to 0x20 there.  (XXX
 *    cJSON also takes numbers with leading zeros or a trailing '.', a
 *    leading UTF-8 BOM, and strings that are not UTF-8; the field tables
 *    check UTF-8 in every string hookbox reads, numbers are only typed.)
 *  - no raw byte below 0x20 inside a string (cJSON copies them, and a
 *    raw NUL silently cuts the decoded value);
 *  - no escape \u0000 (it decodes to a NUL that cuts the value);
 *  - no object, at any depth, that names one key twice (compared as
 *    decoded, case-sensitively): cJSON reads the first, other readers of
 *    the stored body may read the last.
 * On JSON_DUPKEY the repeated key is copied into dup (when dup is not
 * NULL) if it is plain (ASCII letters, digits, '_', '-', '.') and fits,
 * else dup is "": a caller may name a plain key without ever echoing
 * bytes chosen by the sender.
 */
enum json_status json_parse_strict(const char *b, size_t len,
    struct cJSON **out, char *dup, size_t duplen) HB_MUST_CHECK;

/* What a provider's body is, read by json_parse_body(). */
enum json_body {
	JSON_BODY_OK = 0,
	JSON_BODY_NOT_JSON,	/* JSON_SYNTAX, JSON_CONTROL */
	JSON_BODY_INVALID,	/* JSON_NUL, JSON_DUPKEY, or no object */
	JSON_BODY_NOMEM		/* nothing was decided: try again */
};

/*
 * A provider's body, which must be one JSON object: json_parse_strict() of len
 * bytes at b, *out the object (cJSON_Delete()) on JSON_BODY_OK, else NULL with
 * why (when not NULL) "body: <reason>", or for a key named twice "<key>:
 * <reason>" when the key is plain.  Never a value of the body's.  The one
 * reading of bodies that provider/tornado.c and provider/mapping.c share.
 */
enum json_body json_parse_body(const char *b, size_t len, struct cJSON **out,
    char *why, size_t whylen) HB_MUST_CHECK;

/*
 * Parses the NUL-terminated document s that hookbox wrote itself (a
 * stored row, configured output settings) into *out (freed with
 * cJSON_Delete(); NULL unless JSON_OK).  Returns JSON_OK, JSON_SYNTAX or
 * JSON_NOMEM.
 */
enum json_status json_parse(const char *s, struct cJSON **out)
    HB_MUST_CHECK;

/*
 * Adds the integer v to object obj under name, written as its digits:
 * cJSON prints a number it holds as a double with fifteen significant
 * digits, and a version of sixteen (up to 2^53 - 1) would reach the
 * reader as another.  Returns the member, or NULL when out of memory.
 */
struct cJSON *json_add_int(struct cJSON *obj, const char *name, int64_t v);

/*
 * Appends s to buf (len bytes) at *off as a JSON string, quotes included,
 * allocating nothing.  Control characters and DEL are escaped as \u00XX,
 * so that a document is one clean line; other bytes are copied (s is
 * valid UTF-8).  Returns 0, or -1 when it does not fit with room for a
 * final NUL (buf then holds part of it).  6 * strlen(s) + 3 bytes always
 * do.
 */
int json_put_string(char *buf, size_t len, size_t *off, const char *s);

/*
 * A document being written into a buffer sized for it beforehand: ok
 * drops to 0, for good, when something did not fit.
 */
struct json_out {
	char	*buf;
	size_t	 len;
	size_t	 off;
	int	 ok;
};

/* Appends s as it is (JSON the caller wrote), or as a JSON string. */
void json_out_raw(struct json_out *, const char *s);
void json_out_str(struct json_out *, const char *s);

#endif
