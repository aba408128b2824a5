/*
 * provider/mapping.h: a provider's event format, declared as configuration
 * rather than compiled in (hookbox(1), MAPPED ENDPOINTS).
 *
 * A mapping says where in a request each field of a versioned event is
 * (a JSON pointer into the body, RFC 6901, or a header name) and what
 * each event type means: the step it qualifies for, the step its undo
 * makes (unpublish, delete), or nothing.  It is written by the operator
 * as a small JSON file, validated once when the endpoint is added (every
 * error names the member and says what is wrong), stored in config.db in
 * a canonical form, and evaluated for every request to the endpoint.
 *
 * The mapping file:
 *
 *   {
 *     "destination": "cms",			(the tenant's destination)
 *     "namespace": "dam",			(optional, see below)
 *     "event_id":  {"header": "webhook-id"},	(or a pointer: "/id")
 *     "subject":   "/data/asset_id",
 *     "version":   "/data/version",		(optional, see below)
 *     "type":      "/type",
 *     "occurred":  "/data/updated_at",
 *     "steps":  {"publish":   ["asset.approved", "asset.replaced"],
 *                "purge":     {"types": ["asset.replaced"],
 *                              "destination": "cdn"}},
 *     "undo":   {"unpublish": ["asset.unpublished", "asset.deleted"]},
 *     "ignore": ["asset.viewed"],
 *     "carry":  true,				(optional, see below)
 *     "body":   "json",			(optional: "form")
 *     "signature": {...}			(optional, see below)
 *   }
 *
 * A field is a JSON pointer (a string, "" or starting with "/", UTF-8
 * with no control character; "~0" and "~1" the only escapes; an array
 * index is decimal without leading zeros, "-" refers to nothing), or
 * {"header": NAME} with NAME an HTTP header name (1 to HB_ID_MAX token
 * characters, matched case-insensitively, kept in lower case).  A field
 * that leads nowhere or to null, or a header the request lacks, is
 * missing.  A version is a JSON integer, or a string of 1 to 16 decimal
 * digits, 0 to 2^53 - 1; missing or anything else is malformed: an event
 * whose order cannot be known is refused, never guessed.  Without
 * "version" in the mapping (a provider that numbers nothing), the
 * occurrence time in milliseconds is the version.  An occurrence is an
 * RFC 3339 date-time (with "Z" or an offset, 'T' and 'Z' in either case,
 * fraction to milliseconds kept, no leap second) or epoch seconds (a
 * JSON number, to the nearest millisecond, or a string of digits with a
 * fraction if any, cut to milliseconds), from 1970 to the end of 9999.
 * An event id, a subject and a type are strings that pass
 * text_valid_id() (HB_ID_MAX bytes, UTF-8, no control characters); an
 * event id and a subject may also be JSON integers, 0 to 2^53 - 1, read
 * as their decimal text.
 * Types are compared byte for byte.  A type named in none of the lists
 * is ignored as one in "ignore" is; a type named in two places is a
 * mapping error, as are more than MAPPING_TYPES_MAX types in all (a type
 * counted once per step that names it).  Step names pass
 * text_valid_name(); "steps" names one at least, each step one type at
 * least, and no step is in both "steps" and "undo".
 *
 * A step is a list of types, or an object {"types": [...],
 * "destination": NAME} whose actions go to a destination of their own
 * (text_valid_name()), not the mapping's.  A type named by several steps
 * of one list (at most MAPPING_FANOUT_MAX) fans out: the event takes
 * effect once, for its subject, and makes an action for each of those
 * steps, in the order the mapping names them.  A type named in two lists,
 * or twice in one step, is an error.
 *
 * "namespace" names (text_valid_name()) the subjects' namespace: an
 * endpoint's subjects are its own unless mappings name one namespace
 * (intake/prep.h, struct accept_req); without it the endpoint's name is
 * the namespace.
 *
 * "carry" (true or false, true when absent) says whether the provider's
 * body travels with the mapping's actions, whole and as received (the
 * payload's "data"), so that the downstream has the event's own fields
 * (output URLs, playback ids) without asking the provider again.
 *
 * "signature" declares how the provider signs its requests
 * (provider/scheme.h), for a provider none of the built-in
 * authentications fits; it is written last in the canonical text.
 *
 * Malformed bodies are refused with the strictness of provider/tornado.h: the
 * body is parsed with json_parse_strict(), must be a JSON object, and
 * why names the field, never its value.
 *
 * Transactions: none; no database.  A struct mapping is read-only once
 * made: any number of threads may evaluate one at once.
 */
#ifndef HB_MAPPING_H
#define HB_MAPPING_H

#include <stddef.h>
#include <stdint.h>

#include "base/hb.h"

#define MAPPING_TEXT_MAX	(16 * 1024)	/* bytes of a mapping file */
#define MAPPING_TYPES_MAX	64	/* types named in one mapping */
#define MAPPING_FANOUT_MAX	8	/* steps one type makes */

struct mapping;
struct scheme;

enum mapping_effect {
	MAPPING_IGNORE = 0,	/* recorded, no action, nothing changes */
	MAPPING_DO,		/* takes effect for its step */
	MAPPING_UNDO		/* undoes the subject's state: its own step */
};

enum mapping_err {
	MAPPING_OK = 0,
	MAPPING_NOT_JSON,	/* the body is not a JSON document */
	MAPPING_INVALID,	/* JSON, but a field is missing or wrong */
	MAPPING_NOMEM		/* out of memory: try again */
};

/* A step an event makes, and where its action goes. */
struct mapping_step {
	char	name[HB_ID_MAX + 1];
	char	destination[HB_ID_MAX + 1];
};

/* One event, as the mapping read it. */
struct mapping_event {
	char			event_id[HB_ID_MAX + 1];
	char			subject[HB_ID_MAX + 1];
	char			type[HB_ID_MAX + 1];
	int64_t			version;
	int64_t			occurred_ms;	/* since the epoch, UTC */
	enum mapping_effect	effect;
	char			step[HB_ID_MAX + 1];	/* "" when ignored */
	/*
	 * Every step it makes (steps[0] is step's), each with its
	 * destination: 0 when ignored, 1 unless its type fans out.
	 */
	struct mapping_step	steps[MAPPING_FANOUT_MAX];
	size_t			nsteps;
};

/*
 * Looks up a request header by name (case-insensitive); NULL when the
 * request has none.  The responder's, over its FastCGI parameters.
 */
typedef const char *(*mapping_header_fn)(void *arg, const char *name);

/*
 * Parses and validates a mapping file's text (len bytes, at most
 * MAPPING_TEXT_MAX).  Returns a new mapping (mapping_free()), or NULL
 * with why filled: a sentence naming the member and what is wrong
 * ("steps.publish[1]: not a string"), or "out of memory".
 */
HB_API struct mapping *mapping_parse(const char *text, size_t len,
    char *why, size_t whylen);

HB_API void mapping_free(struct mapping *);

/*
 * The mapping in its canonical form: compact JSON, members in the order
 * of the file above, the lists as given.  mapping_parse() of it gives the
 * same mapping.  Allocated (free()); NULL when out of memory.
 */
HB_API char *mapping_text(const struct mapping *);

/*
 * The destination its actions go to, but for a step's that names its
 * own.  Valid while the mapping is.
 */
HB_API const char *mapping_destination(const struct mapping *);

/*
 * Every destination its actions may go to, by index: 0 the mapping's,
 * then each step's own in the order given (one may be named twice);
 * NULL past the last.  Valid while the mapping is.
 */
HB_API const char *mapping_destination_at(const struct mapping *,
    size_t i);

/*
 * The subjects' namespace the mapping names; NULL when it names none (the
 * endpoint's name is then the namespace).  Valid while the mapping is.
 */
HB_API const char *mapping_namespace(const struct mapping *);

/*
 * Non-zero when the provider's body travels with the mapping's actions,
 * whole and as received (the default); 0 for "carry": false.
 */
HB_API int mapping_carries_body(const struct mapping *);

/*
 * Non-zero when the mapping reads forms ("body": "form": a provider that
 * posts application/x-www-form-urlencoded, provider/form.h), whose fields
 * its pointers name ("/CallSid"); 0 for JSON bodies (the default).
 */
HB_API int mapping_reads_form(const struct mapping *);

/*
 * Non-zero when the mapping reads each event's id; 0 when its provider
 * names none, and an event is identified by its type, subject and
 * version (mapping_eval()).
 */
HB_API int mapping_reads_event_id(const struct mapping *);

/*
 * The signature scheme the mapping declares (its "signature" member,
 * provider/scheme.h); NULL when it declares none and the endpoint's
 * authentication is one of the built-in ones.  Valid while the mapping is.
 */
HB_API const struct scheme *mapping_scheme(const struct mapping *);

/*
 * Every field a mapping reads decides an event's identity or its order
 * (its event id, subject, version, type and occurrence), so a field may
 * come from a header only when the endpoint's authentication signs that
 * header: else a signed request replayed within the tolerance with
 * another value there would be taken as another event.  The name of the
 * first field taken from a header that is none of signed (a NULL-ended
 * list of header names, compared case-insensitively; NULL for none), with
 * *header that header's name (valid while the mapping is); NULL when
 * every header it reads is signed.
 */
HB_API const char *mapping_unsigned_field(const struct mapping *,
    const char *const *signed_headers, const char **header);

/*
 * Reads one event from a request: its body (len bytes, not
 * NUL-terminated) and its headers through hdr (may be NULL when the
 * mapping names no header).  On MAPPING_OK *out holds the event; else why
 * holds a short sentence naming the field ("version: not an integer").
 */
HB_API enum mapping_err mapping_eval(const struct mapping *,
    const char *body, size_t len, mapping_header_fn hdr, void *arg,
    struct mapping_event *out, char *why, size_t whylen) HB_MUST_CHECK;

/* A request header, as mapping_restamp() gives one. */
struct mapping_header {
	char	name[HB_ID_MAX + 1];	/* lower case */
	char	value[HB_ID_MAX + 1];
};

#define MAPPING_HEADERS_MAX	5	/* one per field at most */

/*
 * A sample request made into another event, for the disorder tester
 * (`hookbox disorder`): body (len bytes) with the event id, subject, type
 * (unless ev->type is "": the sample's stays), version and occurrence of
 * *ev written where the mapping reads them, so that mapping_eval() of
 * the result reads *ev back.  A field in the body
 * must be in the sample already, a string or a number, and keeps its
 * kind: a number stays one (the occurrence in epoch seconds), a string
 * of digits too, and any other occurrence string is written in RFC 3339
 * (UTC, with milliseconds).  A field read from a header goes to
 * hdrs[] (room for MAPPING_HEADERS_MAX), *nhdrs of them.  Returns the
 * new body, compact JSON, allocated (free()); NULL with why filled: the
 * field named when the sample lacks it or holds another kind of value,
 * the body's fault when it is not a JSON object, or "out of memory".
 */
HB_API char *mapping_restamp(const struct mapping *, const char *body,
    size_t len, const struct mapping_event *ev, struct mapping_header *hdrs,
    size_t *nhdrs, char *why, size_t whylen);

/* "ignore", "do", "undo".  Static storage. */
HB_API const char *mapping_effect_name(enum mapping_effect);

#endif
