/*
 * check_mapping.c: tests of lib/provider/mapping.c: every error of a mapping
 * file, its canonical text, and the evaluation of requests against a mapping:
 * pointers and headers, the value rules of each field, the effects, and the
 * strictness of provider/tornado.h for the body.
 *
 * Every body and mapping file is handed over in an exact-size heap copy,
 * not NUL-terminated, so that the sanitizer build catches a read past
 * len.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <cJSON.h>

#include "base/fault.h"
#include "base/text.h"
#include "base/util.h"
#include "provider/mapping.h"
#include "testutil.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* Not a value of any field under test: proves a field was written. */
#define JUNK	0x5a

static char	 why[256];

static Suite	*mapping_suite(void);

/* The header's example, as an operator might lay it out. */
static const char example[] =
    "{\n"
    "  \"destination\": \"cms\",\n"
    "  \"event_id\":  {\"header\": \"Webhook-Id\"},\n"
    "  \"subject\":   \"/data/asset_id\",\n"
    "  \"version\":   \"/data/version\",\n"
    "  \"type\":      \"/type\",\n"
    "  \"occurred\":  \"/data/updated_at\",\n"
    "  \"steps\":  {\"publish\":   [\"asset.approved\", "
    "\"asset.replaced\"]},\n"
    "  \"undo\":   {\"unpublish\": [\"asset.unpublished\", "
    "\"asset.deleted\"]},\n"
    "  \"ignore\": [\"asset.viewed\"]\n"
    "}\n";

/* Its canonical text: compact, the header name in lower case. */
static const char canonical[] =
    "{\"destination\":\"cms\",\"event_id\":{\"header\":\"webhook-id\"},"
    "\"subject\":\"/data/asset_id\",\"version\":\"/data/version\","
    "\"type\":\"/type\",\"occurred\":\"/data/updated_at\","
    "\"steps\":{\"publish\":[\"asset.approved\",\"asset.replaced\"]},"
    "\"undo\":{\"unpublish\":[\"asset.unpublished\",\"asset.deleted\"]},"
    "\"ignore\":[\"asset.viewed\"]}";

/* Parses an exact-size copy of the len bytes at text. */
static struct mapping *
mparse_len(const char *text, size_t len)
{
	struct mapping	*m;
	char		*copy;

	copy = malloc(len > 0 ? len : 1);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, text, len);
	memset(why, JUNK, sizeof(why));
	why[sizeof(why) - 1] = '\0';
	m = mapping_parse(copy, len, why, sizeof(why));
	free(copy);
	return m;
}

static struct mapping *
mparse(const char *text)
{
	return mparse_len(text, strlen(text));
}

/* Parses text, failing the test when it is refused. */
static struct mapping *
mgood(const char *text)
{
	struct mapping	*m;

	m = mparse(text);
	ck_assert_msg(m != NULL, "%s: %s", text, why);
	return m;
}

/*
 * The example with member replaced by value (JSON text), added when the
 * example lacks it, or removed when value is NULL.  cJSON_free() it.
 */
static char *
with(const char *member, const char *value)
{
	cJSON	*doc, *v;
	char	*s;

	doc = cJSON_Parse(example);
	ck_assert_ptr_nonnull(doc);
	if (value == NULL)
		cJSON_DeleteItemFromObjectCaseSensitive(doc, member);
	else {
		v = cJSON_Parse(value);
		ck_assert_msg(v != NULL, "bad test value %s", value);
		if (cJSON_GetObjectItemCaseSensitive(doc, member) != NULL)
			ck_assert(cJSON_ReplaceItemInObjectCaseSensitive(doc,
			    member, v));
		else
			ck_assert(cJSON_AddItemToObject(doc, member, v));
	}
	s = cJSON_PrintUnformatted(doc);
	ck_assert_ptr_nonnull(s);
	cJSON_Delete(doc);
	return s;
}

/* n copies of c, NUL-terminated, in memory the caller frees. */
static char *
repeat(char c, size_t n)
{
	char	*s;

	s = malloc(n + 1);
	ck_assert_ptr_nonnull(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/*
 * Headers
 */

struct hdr {
	const char	*name;
	const char	*value;
};

/* A request's headers: a list ending with a NULL name, and a count. */
struct hdrs {
	const struct hdr	*h;
	int			 calls;
};

/* Case-insensitive, as the responder's look-up is. */
static const char *
hdr_get(void *arg, const char *name)
{
	struct hdrs	*hs = arg;
	size_t		 i;

	hs->calls++;
	for (i = 0; hs->h != NULL && hs->h[i].name != NULL; i++)
		if (text_eqi(hs->h[i].name, name))
			return hs->h[i].value;
	return NULL;
}

static const struct hdr	std_hdrs[] = {
	{ "Content-Type", "application/json" },
	{ "WEBHOOK-ID", "msg_2mJ9" },
	{ NULL, NULL }
};

/* Evaluates an exact-size copy of the len bytes at body. */
static enum mapping_err
eval_len(const struct mapping *m, const char *body, size_t len,
    const struct hdr *h, struct mapping_event *ev)
{
	struct hdrs		 hs = { h, 0 };
	enum mapping_err	 rc;
	char			*copy;

	copy = malloc(len > 0 ? len : 1);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, body, len);
	memset(why, JUNK, sizeof(why));
	why[sizeof(why) - 1] = '\0';
	memset(ev, JUNK, sizeof(*ev));
	rc = mapping_eval(m, copy, len, h != NULL ? hdr_get : NULL, &hs, ev,
	    why, sizeof(why));
	free(copy);
	return rc;
}

static enum mapping_err
eval(const struct mapping *m, const char *body, const struct hdr *h,
    struct mapping_event *ev)
{
	return eval_len(m, body, strlen(body), h, ev);
}

/* Asserts that a failed evaluation left the event all zeros. */
static void
ck_zero(const struct mapping_event *ev)
{
	struct mapping_event	zero;

	memset(&zero, 0, sizeof(zero));
	ck_assert_msg(memcmp(ev, &zero, sizeof(zero)) == 0,
	    "event written on failure");
}

/* An example body: subject, version, time and type in place. */
static char *
body_of(const char *type, const char *version, const char *occurred)
{
	char	*b;
	size_t	 len = 256 + strlen(type) + strlen(version) + strlen(occurred);
	int	 n;

	b = malloc(len);
	ck_assert_ptr_nonnull(b);
	n = snprintf(b, len, "{\"type\":\"%s\",\"data\":{\"asset_id\":"
	    "\"asset-7\",\"version\":%s,\"updated_at\":%s,\"title\":\"x\"}}",
	    type, version, occurred);
	ck_assert(n > 0 && (size_t)n < len);
	return b;
}

/*
 * The mapping file
 */

START_TEST(test_parse_example)
{
	struct mapping	*m;
	char		*t;

	m = mgood(example);
	ck_assert_str_eq(why, "");
	ck_assert_str_eq(mapping_destination(m), "cms");
	t = mapping_text(m);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(t, canonical);
	free(t);
	mapping_free(m);
	mapping_free(NULL);
}
END_TEST

START_TEST(test_effect_names)
{
	ck_assert_str_eq(mapping_effect_name(MAPPING_IGNORE), "ignore");
	ck_assert_str_eq(mapping_effect_name(MAPPING_DO), "do");
	ck_assert_str_eq(mapping_effect_name(MAPPING_UNDO), "undo");
	ck_assert_str_eq(mapping_effect_name((enum mapping_effect)7),
	    "unknown");
}
END_TEST

/* The example with one member changed, and the error it must give. */
static const struct badcase {
	const char	*member;
	const char	*value;		/* JSON; NULL: removed */
	const char	*why;
} badcases[] = {
	{ "destination", NULL, "destination: missing" },
	{ "subject", NULL, "subject: missing" },
	{ "type", NULL, "type: missing" },
	{ "occurred", NULL, "occurred: missing" },
	{ "steps", NULL, "steps: missing" },

	{ "destination", "5", "destination: not a string" },
	{ "destination", "null", "destination: not a string" },
	{ "destination", "\"\"", "destination: not a valid name" },
	{ "destination", "\"my cms\"", "destination: not a valid name" },
	{ "destination", "\"-cms\"", "destination: not a valid name" },
	{ "destination", "\"cms:1\"", "destination: not a valid name" },
	{ "destination", "\"c\\u00e9\"", "destination: not a valid name" },
	{ "namespace", "5", "namespace: not a string" },
	{ "namespace", "null", "namespace: not a string" },
	{ "namespace", "\"\"", "namespace: not a valid name" },
	{ "namespace", "\"cms/a\"", "namespace: not a valid name" },
	{ "namespace", "\"cms:1\"", "namespace: not a valid name" },
	{ "carry", "1", "carry: not true or false" },
	{ "carry", "null", "carry: not true or false" },
	{ "carry", "\"false\"", "carry: not true or false" },
	{ "carry", "[\"/data\"]", "carry: not true or false" },

	{ "version", "3", "version: not a JSON pointer or "
	    "{\"header\": NAME}" },
	{ "version", "null", "version: not a JSON pointer or "
	    "{\"header\": NAME}" },
	{ "subject", "true", "subject: not a JSON pointer or "
	    "{\"header\": NAME}" },
	{ "subject", "[\"/a\"]", "subject: not a JSON pointer or "
	    "{\"header\": NAME}" },
	{ "subject", "{}", "subject: not a JSON pointer or "
	    "{\"header\": NAME}" },
	{ "subject", "{\"Header\":\"x\"}", "subject: not a JSON pointer or "
	    "{\"header\": NAME}" },
	{ "subject", "{\"header\":\"x\",\"y\":1}", "subject: not a JSON "
	    "pointer or {\"header\": NAME}" },
	{ "subject", "\"data/asset_id\"", "subject: a JSON pointer is \"\" "
	    "or starts with \"/\"" },
	{ "subject", "\"#/data\"", "subject: a JSON pointer is \"\" "
	    "or starts with \"/\"" },
	{ "subject", "\"/a~2\"", "subject: \"~\" not followed by \"0\" or "
	    "\"1\" in the JSON pointer" },
	{ "subject", "\"/a~\"", "subject: \"~\" not followed by \"0\" or "
	    "\"1\" in the JSON pointer" },
	{ "subject", "\"/~/b\"", "subject: \"~\" not followed by \"0\" or "
	    "\"1\" in the JSON pointer" },
	{ "occurred", "\"/a\\u001b\"", "occurred: not UTF-8 or has control "
	    "characters" },
	{ "occurred", "\"/a\\nb\"", "occurred: not UTF-8 or has control "
	    "characters" },
	{ "occurred", "\"/a\\u202eb\"", "occurred: not UTF-8 or has control "
	    "characters" },
	{ "event_id", "{\"header\":5}", "event_id.header: not a string" },
	{ "event_id", "{\"header\":\"\"}", "event_id.header: not an HTTP "
	    "header name (1 to 128 token characters)" },
	{ "event_id", "{\"header\":\"webhook id\"}", "event_id.header: not "
	    "an HTTP header name (1 to 128 token characters)" },
	{ "event_id", "{\"header\":\"webhook:id\"}", "event_id.header: not "
	    "an HTTP header name (1 to 128 token characters)" },
	{ "event_id", "{\"header\":\"webhook-\\u00e9\"}", "event_id.header: "
	    "not an HTTP header name (1 to 128 token characters)" },
	{ "event_id", "{\"header\":\"a\\r\\nb\"}", "event_id.header: not an "
	    "HTTP header name (1 to 128 token characters)" },

	{ "steps", "[]", "steps: not an object" },
	{ "steps", "\"publish\"", "steps: not an object" },
	{ "steps", "{}", "steps: names no step" },
	{ "steps", "{\"my step\":[\"a\"]}", "steps: \"my step\" is not a "
	    "valid step name" },
	{ "steps", "{\"\":[\"a\"]}", "steps: \"\" is not a valid step name" },
	{ "steps", "{\"a:b\":[\"a\"]}", "steps: \"a:b\" is not a valid step "
	    "name" },
	{ "steps", "{\"publish\":\"a\"}", "steps.publish: not an array" },
	{ "steps", "{\"publish\":{\"a\":1}}", "steps.publish: \"a\": not a "
	    "member of a step (types, destination)" },
	{ "steps", "{\"p\":{\"destination\":\"d\"}}", "steps.p.types: "
	    "missing" },
	{ "steps", "{\"p\":{\"types\":\"a\"}}", "steps.p.types: not an "
	    "array" },
	{ "steps", "{\"p\":{\"types\":[]}}", "steps.p: names no type" },
	{ "steps", "{\"p\":{\"types\":[\"a\",1]}}", "steps.p.types[1]: not "
	    "a string" },
	{ "steps", "{\"p\":{\"types\":[\"a\"],\"destination\":\"a b\"}}",
	    "steps.p.destination: not a valid destination name" },
	{ "steps", "{\"p\":{\"types\":[\"a\"],\"destination\":1}}",
	    "steps.p.destination: not a valid destination name" },
	{ "steps", "{\"p\":{\"types\":[\"a\"],\"destination\":\"\"}}",
	    "steps.p.destination: not a valid destination name" },
	{ "steps", "{\"publish\":[]}", "steps.publish: names no type" },
	{ "steps", "{\"publish\":[\"a\",1]}", "steps.publish[1]: not a "
	    "string" },
	{ "steps", "{\"publish\":[\"a\",null]}", "steps.publish[1]: not a "
	    "string" },
	{ "steps", "{\"publish\":[\"a\",\"\"]}", "steps.publish[1]: not a "
	    "valid type (1 to 128 bytes of UTF-8, no control characters)" },
	{ "steps", "{\"publish\":[\"a\\u001b\"]}", "steps.publish[0]: not a "
	    "valid type (1 to 128 bytes of UTF-8, no control characters)" },
	{ "steps", "{\"publish\":[\"a\",\"a\"]}", "steps: \"a\" is named "
	    "twice" },
	{ "steps", "{\"p\":{\"types\":[\"a\",\"a\"],\"destination\":"
	    "\"d\"}}", "steps: \"a\" is named twice" },
	{ "undo", "{\"unpublish\":[\"asset.approved\"]}", "undo: "
	    "\"asset.approved\" is named twice" },
	{ "undo", "{\"publish\":[\"asset.gone\"]}", "undo: \"publish\" is "
	    "already a step" },
	{ "undo", "[]", "undo: not an object" },
	{ "undo", "{\"u\":[]}", "undo.u: names no type" },
	{ "undo", "{\"u\":[\"x\",[]]}", "undo.u[1]: not a string" },
	{ "ignore", "[\"asset.deleted\"]", "ignore: \"asset.deleted\" is "
	    "named twice" },
	{ "ignore", "[\"x\",\"x\"]", "ignore: \"x\" is named twice" },
	{ "ignore", "{}", "ignore: not an array" },
	{ "ignore", "\"asset.viewed\"", "ignore: not an array" },
	{ "ignore", "[\"x\",1]", "ignore[1]: not a string" },
	{ "ignore", "[\"\"]", "ignore[0]: not a valid type (1 to 128 bytes "
	    "of UTF-8, no control characters)" },

	{ "foo", "1", "\"foo\": not a member of a mapping" },
	{ "Subject", "\"/a\"", "\"Subject\": not a member of a mapping" },
	{ "steps ", "{}", "\"steps \": not a member of a mapping" },
	{ "a\"b\\c\u00e9", "1", "\"a\\x22b\\x5cc\\xc3\\xa9\": not a member "
	    "of a mapping" },
};

START_TEST(test_bad)
{
	const struct badcase	*c = &badcases[_i];
	struct mapping		*m;
	char			*text;

	text = with(c->member, c->value);
	m = mparse(text);
	ck_assert_msg(m == NULL, "%s: accepted", text);
	ck_assert_str_eq(why, c->why);
	cJSON_free(text);
}
END_TEST

/* Whole files that are no mapping. */
static const struct docase {
	const char	*text;
	size_t		 len;	/* 0: strlen */
	const char	*why;
} docases[] = {
	{ "", 0, "mapping: not JSON" },
	{ "{", 0, "mapping: not JSON" },
	{ "{\"destination\":\"cms\"} x", 0, "mapping: not JSON" },
	{ "[]", 0, "mapping: not a JSON object" },
	{ "\"cms\"", 0, "mapping: not a JSON object" },
	{ "null", 0, "mapping: not a JSON object" },
	{ "{\"destination\":\"cms\",\"destination\":\"x\"}", 0,
	    "\"destination\": named twice" },
	{ "{\"steps\":{\"p\":[\"a\"],\"p\":[\"b\"]}}", 0,
	    "\"p\": named twice" },
	{ "{\"steps\":{\"p q\":[\"a\"],\"p q\":[\"b\"]}}", 0,
	    "mapping: a key is named twice" },
	{ "{\"destination\":\"c\tms\"}", 0, "mapping: raw control byte "
	    "(below 0x20) in a string or between tokens" },
	{ "{\"destination\":\"cms\\u0000\"}", 0, "mapping: a string contains "
	    "\\u0000" },
	{ "{\"destination\":\"cms\"\0}", 22, "mapping: raw control byte "
	    "(below 0x20) in a string or between tokens" },
	{ "{}", 0, "destination: missing" },
};

START_TEST(test_bad_doc)
{
	const struct docase	*c = &docases[_i];

	ck_assert_ptr_null(mparse_len(c->text, c->len != 0 ? c->len :
	    strlen(c->text)));
	ck_assert_str_eq(why, c->why);
}
END_TEST

/* Member by member, the checks run in the order of the file. */
START_TEST(test_bad_order)
{
	ck_assert_ptr_null(mparse("{\"type\":5,\"subject\":5}"));
	ck_assert_str_eq(why, "destination: missing");
	ck_assert_ptr_null(mparse("{\"destination\":\"d\",\"type\":5,"
	    "\"subject\":5}"));
	ck_assert_str_eq(why, "subject: not a JSON pointer or {\"header\":"
	    " NAME}");
	ck_assert_ptr_null(mparse("{\"destination\":\"d\",\"type\":5}"));
	ck_assert_str_eq(why, "subject: missing");
	/* An unknown member is named before anything missing. */
	ck_assert_ptr_null(mparse("{\"destination\":\"d\",\"subjcet\":5}"));
	ck_assert_str_eq(why, "\"subjcet\": not a member of a mapping");
}
END_TEST

/* Identifiers at HB_ID_MAX are taken, one byte more refused. */
START_TEST(test_bad_lengths)
{
	struct mapping	*m;
	char		*name, *v, *text;
	size_t		 vlen = HB_ID_MAX + 64;

	v = malloc(vlen);
	ck_assert_ptr_nonnull(v);

	/* destination */
	name = repeat('d', HB_ID_MAX);
	(void)snprintf(v, vlen, "\"%s\"", name);
	text = with("destination", v);
	m = mgood(text);
	ck_assert_str_eq(mapping_destination(m), name);
	mapping_free(m);
	cJSON_free(text);
	(void)snprintf(v, vlen, "\"%sd\"", name);
	text = with("destination", v);
	ck_assert_ptr_null(mparse(text));
	ck_assert_str_eq(why, "destination: not a valid name");
	cJSON_free(text);

	/* a header name */
	(void)snprintf(v, vlen, "{\"header\":\"%s\"}", name);
	text = with("event_id", v);
	mapping_free(mgood(text));
	cJSON_free(text);
	(void)snprintf(v, vlen, "{\"header\":\"%sd\"}", name);
	text = with("event_id", v);
	ck_assert_ptr_null(mparse(text));
	ck_assert_str_eq(why, "event_id.header: not an HTTP header name "
	    "(1 to 128 token characters)");
	cJSON_free(text);

	/* a step name */
	(void)snprintf(v, vlen, "{\"%s\":[\"a\"]}", name);
	text = with("steps", v);
	mapping_free(mgood(text));
	cJSON_free(text);
	(void)snprintf(v, vlen, "{\"%sd\":[\"a\"]}", name);
	text = with("steps", v);
	ck_assert_ptr_null(mparse(text));
	ck_assert_ptr_nonnull(strstr(why, "is not a valid step name"));
	cJSON_free(text);

	/* a type */
	(void)snprintf(v, vlen, "[\"%s\"]", name);
	text = with("ignore", v);
	mapping_free(mgood(text));
	cJSON_free(text);
	(void)snprintf(v, vlen, "[\"%sd\"]", name);
	text = with("ignore", v);
	ck_assert_ptr_null(mparse(text));
	ck_assert_str_eq(why, "ignore[0]: not a valid type (1 to 128 bytes "
	    "of UTF-8, no control characters)");
	cJSON_free(text);

	free(name);
	free(v);
}
END_TEST

/*
 * A mapping with n types: steps of one type each, nsteps of them, the
 * others in ignore.
 */
static char *
many(size_t nsteps, size_t n, size_t pad)
{
	char	*s, *sp;
	size_t	 len = 512 + n * 32 + pad, off, i;
	int	 k;

	s = malloc(len);
	ck_assert_ptr_nonnull(s);
	sp = repeat(' ', pad);
	k = snprintf(s, len, "{\"destination\":\"d\",\"event_id\":\"/i\","
	    "\"subject\":\"/s\",\"type\":\"/t\",\"occurred\":\"/o\"%s,"
	    "\"steps\":{", sp);
	ck_assert(k > 0);
	off = (size_t)k;
	for (i = 0; i < nsteps; i++)
		off += (size_t)snprintf(s + off, len - off, "%s\"s%zu\":"
		    "[\"t%zu\"]", i > 0 ? "," : "", i, i);
	off += (size_t)snprintf(s + off, len - off, "},\"ignore\":[");
	for (i = nsteps; i < n; i++)
		off += (size_t)snprintf(s + off, len - off, "%s\"t%zu\"",
		    i > nsteps ? "," : "", i);
	off += (size_t)snprintf(s + off, len - off, "]}");
	ck_assert_uint_lt(off, len);
	free(sp);
	return s;
}

START_TEST(test_too_many_types)
{
	struct mapping	*m;
	char		*s, *t;

	s = many(1, MAPPING_TYPES_MAX, 0);
	m = mgood(s);
	t = mapping_text(m);
	ck_assert_ptr_nonnull(t);
	mapping_free(m);
	m = mgood(t);
	mapping_free(m);
	free(t);
	free(s);

	s = many(1, MAPPING_TYPES_MAX + 1, 0);
	ck_assert_ptr_null(mparse(s));
	ck_assert_str_eq(why, "ignore: more than 64 types in the mapping");
	free(s);

	/* As many steps as types, then one more. */
	s = many(MAPPING_TYPES_MAX, MAPPING_TYPES_MAX, 0);
	mapping_free(mgood(s));
	free(s);
	s = many(MAPPING_TYPES_MAX + 1, MAPPING_TYPES_MAX + 1, 0);
	ck_assert_ptr_null(mparse(s));
	ck_assert_str_eq(why, "steps: more than 64 types in the mapping");
	free(s);
}
END_TEST

/* MAPPING_TEXT_MAX bytes are read, one more refused before parsing. */
START_TEST(test_text_max)
{
	struct mapping	*m;
	char		*s;
	size_t		 len;

	s = many(2, 3, 0);
	len = strlen(s);
	free(s);
	s = many(2, 3, MAPPING_TEXT_MAX - len);
	ck_assert_uint_eq(strlen(s), MAPPING_TEXT_MAX);
	m = mgood(s);
	mapping_free(m);
	free(s);

	s = many(2, 3, MAPPING_TEXT_MAX - len + 1);
	ck_assert_ptr_null(mparse(s));
	ck_assert_str_eq(why, "mapping: longer than 16384 bytes");
	free(s);
}
END_TEST

/* A why shorter than the sentence is cut, NUL-terminated; NULL is fine. */
START_TEST(test_why_short)
{
	char	small[8];

	memset(small, JUNK, sizeof(small));
	ck_assert_ptr_null(mapping_parse("{}", 2, small, sizeof(small)));
	ck_assert_str_eq(small, "destina");
	ck_assert_ptr_null(mapping_parse("{}", 2, NULL, 0));
}
END_TEST

/*
 * The canonical text
 */

/* Mappings that must come back the same through their text. */
static const struct roundcase {
	const char	*text;
	const char	*want;	/* the canonical text */
} roundcases[] = {
	{ "{ \"destination\" : \"d\", \"occurred\":{\"header\":\"X-Time\"},"
	    "\"type\":\"/t\", \"subject\":\"\", \"event_id\":\"/\","
	    "\"ignore\":[], \"undo\":{}, \"steps\":{\"b\":[\"y\"],"
	    "\"a\":[\"x\"]}}",
	  "{\"destination\":\"d\",\"event_id\":\"/\",\"subject\":\"\","
	    "\"type\":\"/t\",\"occurred\":{\"header\":\"x-time\"},"
	    "\"steps\":{\"b\":[\"y\"],\"a\":[\"x\"]}}" },
	{ "{\"destination\":\"d\",\"event_id\":\"/a~1b/c~0d\","
	    "\"subject\":\"/q\\\"uote/back\\\\slash\",\"version\":"
	    "\"/caf\\u00e9/\\/x\",\"type\":\"/t\",\"occurred\":\"/o\","
	    "\"steps\":{\"s\":[\"\\u00e9v\\u00e9nement\",\"a\\\"b\"]},"
	    "\"ignore\":[\"z\",\"y\"]}",
	  "{\"destination\":\"d\",\"event_id\":\"/a~1b/c~0d\","
	    "\"subject\":\"/q\\\"uote/back\\\\slash\",\"version\":"
	    "\"/caf\xc3\xa9//x\",\"type\":\"/t\",\"occurred\":\"/o\","
	    "\"steps\":{\"s\":[\"\xc3\xa9v\xc3\xa9nement\",\"a\\\"b\"]},"
	    "\"ignore\":[\"z\",\"y\"]}" },
	{ "{\"destination\":\"d\",\"event_id\":\"/i\",\"subject\":\"/s\","
	    "\"type\":\"/t\",\"occurred\":\"/o\",\"steps\":{\"p\":[\"a\"]},"
	    "\"undo\":{\"u\":[\"b\"],\"v\":[\"c\",\"d\"]}}",
	  "{\"destination\":\"d\",\"event_id\":\"/i\",\"subject\":\"/s\","
	    "\"type\":\"/t\",\"occurred\":\"/o\",\"steps\":{\"p\":[\"a\"]},"
	    "\"undo\":{\"u\":[\"b\"],\"v\":[\"c\",\"d\"]}}" },
	{ "{\"namespace\":\"n-1\",\"destination\":\"d\",\"event_id\":\"/i\","
	    "\"subject\":\"/s\",\"type\":\"/t\",\"occurred\":\"/o\","
	    "\"steps\":{\"p\":[\"a\"]}}",
	  "{\"destination\":\"d\",\"namespace\":\"n-1\",\"event_id\":\"/i\","
	    "\"subject\":\"/s\",\"type\":\"/t\",\"occurred\":\"/o\","
	    "\"steps\":{\"p\":[\"a\"]}}" },
	/* "carry" written only when false, the default left out. */
	{ "{\"destination\":\"d\",\"carry\":false,\"event_id\":\"/i\","
	    "\"subject\":\"/s\",\"type\":\"/t\",\"occurred\":\"/o\","
	    "\"steps\":{\"p\":[\"a\"]}}",
	  "{\"destination\":\"d\",\"event_id\":\"/i\",\"subject\":\"/s\","
	    "\"type\":\"/t\",\"occurred\":\"/o\",\"steps\":{\"p\":[\"a\"]},"
	    "\"carry\":false}" },
	{ "{\"destination\":\"d\",\"carry\":true,\"event_id\":\"/i\","
	    "\"subject\":\"/s\",\"type\":\"/t\",\"occurred\":\"/o\","
	    "\"steps\":{\"p\":[\"a\"]}}",
	  "{\"destination\":\"d\",\"event_id\":\"/i\",\"subject\":\"/s\","
	    "\"type\":\"/t\",\"occurred\":\"/o\",\"steps\":{\"p\":[\"a\"]}}" },
	/* A fan-out: a type in two steps, one to a destination of its own. */
	{ "{\"destination\":\"d\",\"event_id\":\"/i\",\"subject\":\"/s\","
	    "\"type\":\"/t\",\"occurred\":\"/o\",\"steps\":{\"p\":[\"a\"],"
	    "\"q\":{\"destination\":\"cdn\",\"types\":[\"b\",\"a\"]},"
	    "\"r\":{\"types\":[\"a\"]}},\"undo\":{\"u\":[\"c\"],"
	    "\"v\":{\"types\":[\"c\"],\"destination\":\"cdn\"}}}",
	  "{\"destination\":\"d\",\"event_id\":\"/i\",\"subject\":\"/s\","
	    "\"type\":\"/t\",\"occurred\":\"/o\",\"steps\":{\"p\":[\"a\"],"
	    "\"q\":{\"types\":[\"b\",\"a\"],\"destination\":\"cdn\"},"
	    "\"r\":[\"a\"]},\"undo\":{\"u\":[\"c\"],"
	    "\"v\":{\"types\":[\"c\"],\"destination\":\"cdn\"}}}" },
	{ example, canonical },
};

START_TEST(test_roundtrip)
{
	const struct roundcase	*c = &roundcases[_i];
	struct mapping		*m, *m2;
	char			*t, *t2;

	m = mgood(c->text);
	t = mapping_text(m);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(t, c->want);
	m2 = mgood(t);
	t2 = mapping_text(m2);
	ck_assert_ptr_nonnull(t2);
	ck_assert_str_eq(t2, t);
	ck_assert_str_eq(mapping_destination(m2), mapping_destination(m));
	/* The namespace only when one is named: else the endpoint's. */
	if (strstr(c->text, "\"namespace\"") != NULL)
		ck_assert_str_eq(mapping_namespace(m2), "n-1");
	else
		ck_assert_ptr_null(mapping_namespace(m2));
	/* The body travels unless the text says false. */
	ck_assert_int_eq(mapping_carries_body(m2),
	    strstr(c->text, "\"carry\":false") == NULL);
	ck_assert_int_eq(mapping_carries_body(m2), mapping_carries_body(m));
	free(t2);
	free(t);
	mapping_free(m2);
	mapping_free(m);
}
END_TEST

/* A mapping back from its text reads requests as the original does. */
START_TEST(test_roundtrip_eval)
{
	static const char	*bodies[] = {
		"{\"type\":\"asset.approved\",\"data\":{\"asset_id\":\"a1\","
		    "\"version\":3,\"updated_at\":\"2024-05-01T10:00:00Z\"}}",
		"{\"type\":\"asset.deleted\",\"data\":{\"asset_id\":\"a1\","
		    "\"version\":\"4\",\"updated_at\":1714557600.5}}",
		"{\"type\":\"asset.viewed\",\"data\":{\"asset_id\":\"a1\","
		    "\"version\":5,\"updated_at\":\"1714557600\"}}",
		"{\"type\":\"asset.approved\",\"data\":{\"asset_id\":\"a1\"}}",
	};
	struct mapping		*m, *m2;
	struct mapping_event	 a, b;
	enum mapping_err	 ra, rb;
	char			*t, wa[sizeof(why)];
	size_t			 i;

	m = mgood(example);
	t = mapping_text(m);
	ck_assert_ptr_nonnull(t);
	m2 = mgood(t);
	for (i = 0; i < NELEM(bodies); i++) {
		ra = eval(m, bodies[i], std_hdrs, &a);
		memcpy(wa, why, sizeof(wa));
		rb = eval(m2, bodies[i], std_hdrs, &b);
		ck_assert_int_eq(ra, rb);
		ck_assert_str_eq(wa, why);
		ck_assert(memcmp(&a, &b, sizeof(a)) == 0);
	}
	ck_assert_int_eq(ra, MAPPING_INVALID);
	free(t);
	mapping_free(m2);
	mapping_free(m);
}
END_TEST

/*
 * Evaluation: the effects
 */

START_TEST(test_eval_do)
{
	struct mapping		*m;
	struct mapping_event	 ev;
	struct hdrs		 hs = { std_hdrs, 0 };
	char			*b;

	m = mgood(example);
	b = body_of("asset.approved", "17", "\"2024-05-01T10:00:00.250Z\"");
	ck_assert_msg(eval(m, b, std_hdrs, &ev) == MAPPING_OK, "%s", why);
	ck_assert_str_eq(why, "");
	ck_assert_str_eq(ev.event_id, "msg_2mJ9");
	ck_assert_str_eq(ev.subject, "asset-7");
	ck_assert_str_eq(ev.type, "asset.approved");
	ck_assert_int_eq(ev.version, 17);
	ck_assert_int_eq(ev.occurred_ms, 1714557600250LL);
	ck_assert_int_eq(ev.effect, MAPPING_DO);
	ck_assert_str_eq(ev.step, "publish");
	free(b);

	/* The second type of the step; the header asked for once. */
	b = body_of("asset.replaced", "18", "1714557601");
	ck_assert_int_eq(mapping_eval(m, b, strlen(b), hdr_get, &hs, &ev, why,
	    sizeof(why)), MAPPING_OK);
	ck_assert_int_eq(hs.calls, 1);
	ck_assert_int_eq(ev.effect, MAPPING_DO);
	ck_assert_str_eq(ev.step, "publish");
	ck_assert_int_eq(ev.version, 18);
	ck_assert_int_eq(ev.occurred_ms, 1714557601000LL);
	free(b);
	mapping_free(m);
}
END_TEST

/* The header's fan-out: the approval publishes and purges the CDN. */
static const char fanout[] =
    "{\"destination\":\"cms\",\"event_id\":{\"header\":\"Webhook-Id\"},"
    "\"subject\":\"/data/asset_id\",\"version\":\"/data/version\","
    "\"type\":\"/type\",\"occurred\":\"/data/updated_at\","
    "\"steps\":{\"publish\":[\"asset.approved\",\"asset.replaced\"],"
    "\"purge\":{\"types\":[\"asset.replaced\"],\"destination\":\"cdn\"},"
    "\"index\":{\"types\":[\"asset.replaced\"],\"destination\":\"search\"}},"
    "\"undo\":{\"unpublish\":[\"asset.deleted\"],"
    "\"forget\":{\"types\":[\"asset.deleted\"],\"destination\":\"cdn\"}}}";

/*
 * The steps an event of type makes under m, each "name>destination",
 * space-separated ("" for none), with its effect's name first.
 */
static const char *
steps_of(const struct mapping *m, const char *type)
{
	static char		 out[512];
	struct mapping_event	 ev;
	char			*b;
	size_t			 i, off;

	b = body_of(type, "17", "1714557601");
	ck_assert_msg(eval(m, b, std_hdrs, &ev) == MAPPING_OK, "%s", why);
	free(b);
	/* The first step is the event's step, as before fan-out. */
	ck_assert_str_eq(ev.step, ev.nsteps > 0 ? ev.steps[0].name : "");
	off = (size_t)snprintf(out, sizeof(out), "%s",
	    mapping_effect_name(ev.effect));
	for (i = 0; i < ev.nsteps; i++)
		off += (size_t)snprintf(out + off, sizeof(out) - off, " %s>%s",
		    ev.steps[i].name, ev.steps[i].destination);
	ck_assert_uint_lt(off, sizeof(out));
	return out;
}

START_TEST(test_eval_fanout)
{
	struct mapping	*m;

	m = mgood(fanout);
	/* Every destination it names: its own, then its steps'. */
	ck_assert_str_eq(mapping_destination_at(m, 0), "cms");
	ck_assert_str_eq(mapping_destination_at(m, 1), "cdn");
	ck_assert_str_eq(mapping_destination_at(m, 2), "search");
	ck_assert_str_eq(mapping_destination_at(m, 3), "cdn");
	ck_assert_ptr_null(mapping_destination_at(m, 4));
	/* One step, to the mapping's destination. */
	ck_assert_str_eq(steps_of(m, "asset.approved"), "do publish>cms");
	/* Three, in the order the mapping names them. */
	ck_assert_str_eq(steps_of(m, "asset.replaced"),
	    "do publish>cms purge>cdn index>search");
	/* An undo fans out too. */
	ck_assert_str_eq(steps_of(m, "asset.deleted"),
	    "undo unpublish>cms forget>cdn");
	/* An ignored type makes none. */
	ck_assert_str_eq(steps_of(m, "asset.viewed"), "ignore");
	mapping_free(m);
}
END_TEST

/* MAPPING_FANOUT_MAX steps of one type, and one more refused. */
START_TEST(test_fanout_max)
{
	char	steps[1024];
	char	*s;
	size_t	off, i, n;

	for (n = MAPPING_FANOUT_MAX; n <= MAPPING_FANOUT_MAX + 1; n++) {
		off = 0;
		steps[0] = '\0';
		for (i = 0; i < n; i++)
			off += (size_t)snprintf(steps + off, sizeof(steps) -
			    off, "%s\"s%zu\":[\"asset.approved\"]",
			    i > 0 ? "," : "{", i);
		(void)snprintf(steps + off, sizeof(steps) - off, "}");
		s = with("steps", steps);
		if (n == MAPPING_FANOUT_MAX)
			mapping_free(mgood(s));
		else {
			ck_assert_ptr_null(mparse(s));
			ck_assert_str_eq(why, "steps.s8[0]: \"asset.approved\""
			    " makes more than 8 steps");
		}
		cJSON_free(s);
	}
}
END_TEST

START_TEST(test_eval_undo)
{
	struct mapping		*m;
	struct mapping_event	 ev;
	char			*b;

	m = mgood(example);
	b = body_of("asset.deleted", "\"19\"", "\"2024-05-01T10:00:00Z\"");
	ck_assert_msg(eval(m, b, std_hdrs, &ev) == MAPPING_OK, "%s", why);
	ck_assert_int_eq(ev.effect, MAPPING_UNDO);
	ck_assert_str_eq(ev.step, "unpublish");
	ck_assert_str_eq(ev.type, "asset.deleted");
	ck_assert_int_eq(ev.version, 19);
	free(b);
	b = body_of("asset.unpublished", "20", "0");
	ck_assert_msg(eval(m, b, std_hdrs, &ev) == MAPPING_OK, "%s", why);
	ck_assert_int_eq(ev.effect, MAPPING_UNDO);
	ck_assert_str_eq(ev.step, "unpublish");
	ck_assert_int_eq(ev.occurred_ms, 0);
	free(b);
	mapping_free(m);
}
END_TEST

/* Listed in ignore, named nowhere, or named in another case: ignored. */
START_TEST(test_eval_ignore)
{
	static const char	*types[] = { "asset.viewed", "asset.created",
	    "Asset.Approved", "asset.approved ", "publish", "unpublish" };
	struct mapping		*m;
	struct mapping_event	 ev;
	char			*b;
	size_t			 i;

	m = mgood(example);
	for (i = 0; i < NELEM(types); i++) {
		b = body_of(types[i], "21", "\"2024-05-01T10:00:00Z\"");
		ck_assert_msg(eval(m, b, std_hdrs, &ev) == MAPPING_OK, "%s",
		    why);
		ck_assert_int_eq(ev.effect, MAPPING_IGNORE);
		ck_assert_str_eq(ev.step, "");
		ck_assert_str_eq(ev.type, types[i]);
		ck_assert_str_eq(ev.subject, "asset-7");
		ck_assert_int_eq(ev.version, 21);
		free(b);
	}
	mapping_free(m);
}
END_TEST

/* Without "version", the occurrence in milliseconds is the version. */
START_TEST(test_eval_no_version)
{
	struct mapping		*m;
	struct mapping_event	 ev;
	char			*text, *b;

	text = with("version", NULL);
	m = mgood(text);
	cJSON_free(text);
	b = body_of("asset.approved", "\"not looked at\"",
	    "\"2024-05-01T12:00:00.007+02:00\"");
	ck_assert_msg(eval(m, b, std_hdrs, &ev) == MAPPING_OK, "%s", why);
	ck_assert_int_eq(ev.occurred_ms, 1714557600007LL);
	ck_assert_int_eq(ev.version, ev.occurred_ms);
	free(b);
	ck_assert_int_eq(eval(m, "{\"type\":\"t\",\"data\":{\"asset_id\":"
	    "\"a\",\"updated_at\":0.001}}", std_hdrs, &ev), MAPPING_OK);
	ck_assert_int_eq(ev.version, 1);
	mapping_free(m);
}
END_TEST

/*
 * Without "event_id" (a provider that names no event), an event is its
 * type, subject and version: the same three, the same id; any of them
 * other, another id.  The canonical text names no event id.
 */
START_TEST(test_eval_no_event_id)
{
	struct mapping		*m;
	struct mapping_event	 a, b;
	char			*text, *t;
	static const char *const other[] = {
		"{\"type\":\"asset.replaced\",\"data\":{\"asset_id\":\"a\","
		"\"version\":7,\"updated_at\":1}}",
		"{\"type\":\"asset.approved\",\"data\":{\"asset_id\":\"b\","
		"\"version\":7,\"updated_at\":1}}",
		"{\"type\":\"asset.approved\",\"data\":{\"asset_id\":\"a\","
		"\"version\":8,\"updated_at\":1}}",
	};
	size_t			 i;

	text = with("event_id", NULL);
	m = mgood(text);
	cJSON_free(text);
	ck_assert_int_eq(mapping_reads_event_id(m), 0);
	t = mapping_text(m);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_null(strstr(t, "event_id"));
	free(t);
	ck_assert_msg(eval(m, "{\"type\":\"asset.approved\",\"data\":"
	    "{\"asset_id\":\"a\",\"version\":7,\"updated_at\":1}}", NULL,
	    &a) == MAPPING_OK, "%s", why);
	ck_assert_int_eq(strncmp(a.event_id, "hb-", 3), 0);
	ck_assert_uint_eq(strlen(a.event_id), 35);
	/* Another occurrence of the same event: the same id. */
	ck_assert_int_eq(eval(m, "{\"type\":\"asset.approved\",\"data\":"
	    "{\"asset_id\":\"a\",\"version\":7,\"updated_at\":2}}", NULL,
	    &b), MAPPING_OK);
	ck_assert_str_eq(a.event_id, b.event_id);
	for (i = 0; i < NELEM(other); i++) {
		ck_assert_int_eq(eval(m, other[i], NULL, &b), MAPPING_OK);
		ck_assert_str_ne(a.event_id, b.event_id);
	}
	mapping_free(m);
	m = mgood(example);
	ck_assert_int_eq(mapping_reads_event_id(m), 1);
	mapping_free(m);
}
END_TEST

/*
 * "occurred" in epoch milliseconds ({"pointer": P, "unit": "ms"}), and a
 * type that is one value for every event ({"value": T}): read, written
 * back canonical, restamped; the forms refused where they do not apply.
 */
static char	*restamp(const struct mapping *, const char *,
		    const struct mapping_event *, struct hdr *, size_t *);

/*
 * "body": "form": a form's fields named by pointers, with the strictness
 * of a JSON body; written back as a form when restamped; canonical.
 */
START_TEST(test_form_body)
{
	static const struct {
		const char	*body, *why;
	} bad[] = {
		{ "", "body: an empty form" },
		{ "a=1&&b=2", "body: an empty field in the form" },
		{ "a=1&", "body: an empty field in the form" },
		{ "a=1&a=2", "body: a field named twice: a" },
		{ "a=x y", "body: a form holds a byte that is not printable"
		  " ASCII" },
		{ "a=%4", "body: a form's name or value is empty, badly"
		  " %-encoded, not UTF-8 or holds a control character" },
		{ "a=%0A", "body: a form's name or value is empty, badly"
		  " %-encoded, not UTF-8 or holds a control character" },
		{ "%00b=1", "body: a form's name or value is empty, badly"
		  " %-encoded, not UTF-8 or holds a control character" },
		{ "a=1%00", "body: a form's name or value is empty, badly"
		  " %-encoded, not UTF-8 or holds a control character" },
		{ "a=%FF", "body: a form's name or value is empty, badly"
		  " %-encoded, not UTF-8 or holds a control character" },
		{ "=1", "body: a form's name or value is empty, badly"
		  " %-encoded, not UTF-8 or holds a control character" },
	};
	static const char	map[] = "{\"destination\":\"d\",\"body\":"
	    "\"form\",\"event_id\":\"/Id\",\"subject\":\"/Sid\",\"type\":"
	    "\"/Event\",\"occurred\":\"/At\",\"steps\":{\"go\":[\"done\"]}}";
	struct mapping		*m;
	struct mapping_event	 ev;
	struct hdr		 h[MAPPING_HEADERS_MAX + 1];
	char			*t, *b;
	size_t			 i, nh;

	m = mgood(map);
	ck_assert_int_eq(mapping_reads_form(m), 1);
	t = mapping_text(m);
	ck_assert_ptr_nonnull(strstr(t, ",\"body\":\"form\""));
	free(t);
	ck_assert_msg(eval(m, "Sid=CJ%2F1&Event=done&Id=e+1&At="
	    "2026-12-01T09%3A59%3A58.112Z&Extra=", NULL, &ev) == MAPPING_OK,
	    "%s", why);
	ck_assert_str_eq(ev.subject, "CJ/1");
	ck_assert_str_eq(ev.event_id, "e 1");
	ck_assert_int_eq(ev.occurred_ms, 1796119198112LL);
	ck_assert_int_eq(ev.effect, MAPPING_DO);
	for (i = 0; i < NELEM(bad); i++) {
		ck_assert_int_eq(eval(m, bad[i].body, NULL, &ev),
		    MAPPING_INVALID);
		ck_assert_str_eq(why, bad[i].why);
	}
	/* Restamped: a form again, every field kept, read back. */
	memset(&ev, 0, sizeof(ev));
	(void)snprintf(ev.event_id, sizeof(ev.event_id), "x&y=z");
	(void)snprintf(ev.subject, sizeof(ev.subject), "s 2");
	ev.occurred_ms = 1796119205123LL;
	b = restamp(m, "Sid=CJ1&Event=done&Id=e1&At=2026-12-01T09%3A59%3A58Z"
	    "&Extra=%C3%A9", &ev, h, &nh);
	ck_assert_msg(b != NULL, "%s", why);
	ck_assert_str_eq(b, "Sid=s+2&Event=done&Id=x%26y%3Dz&At="
	    "2026-12-01T10%3A00%3A05.123Z&Extra=%C3%A9");
	ck_assert_int_eq(eval(m, b, NULL, &ev), MAPPING_OK);
	ck_assert_str_eq(ev.event_id, "x&y=z");
	free(b);
	mapping_free(m);
	/* JSON is not a form's "body". */
	ck_assert_ptr_null(mparse("{\"destination\":\"d\",\"body\":\"xml\","
	    "\"event_id\":\"/i\",\"subject\":\"/s\",\"type\":\"/t\","
	    "\"occurred\":\"/o\",\"steps\":{\"go\":[\"t\"]}}"));
	ck_assert_str_eq(why, "body: not json or form");
}
END_TEST

START_TEST(test_eval_ms_and_value)
{
	static const struct {
		const char	*member, *value, *why;
	} bad[] = {
		{ "occurred", "{\"pointer\":\"/o\",\"unit\":\"us\"}",
		  "occurred.unit: not s or ms" },
		{ "occurred", "{\"value\":\"x\"}", "occurred: not a JSON"
		  " pointer or {\"header\": NAME}, with \"unit\" or not" },
		{ "subject", "{\"pointer\":\"/s\",\"unit\":\"ms\"}",
		  "subject: not a JSON pointer or {\"header\": NAME}" },
		{ "type", "{\"value\":\"\"}", "type.value: not a valid type"
		  " (1 to 128 bytes of UTF-8, no control characters)" },
		{ "type", "{\"value\":\"a\",\"pointer\":\"/t\"}", "type: not"
		  " a JSON pointer or {\"header\": NAME}, or {\"value\": TYPE}" },
		{ "type", "{\"pointer\":5}", "type.pointer: not a string" },
	};
	struct mapping		*m;
	struct mapping_event	 ev;
	struct hdr		 h[MAPPING_HEADERS_MAX + 1];
	char			*text, *t, *b;
	size_t			 i, nh;

	for (i = 0; i < NELEM(bad); i++) {
		text = with(bad[i].member, bad[i].value);
		ck_assert_ptr_null(mparse(text));
		ck_assert_str_eq(why, bad[i].why);
		cJSON_free(text);
	}
	text = with("occurred", "{\"pointer\":\"/data/updated_at\","
	    "\"unit\":\"ms\"}");
	m = mgood(text);
	cJSON_free(text);
	ck_assert_msg(eval(m, "{\"type\":\"asset.approved\",\"data\":"
	    "{\"asset_id\":\"a\",\"version\":7,\"updated_at\":"
	    "1796119205001}}", std_hdrs, &ev) == MAPPING_OK, "%s", why);
	ck_assert_int_eq(ev.occurred_ms, 1796119205001LL);
	ck_assert_int_eq(eval(m, "{\"type\":\"asset.approved\",\"data\":"
	    "{\"asset_id\":\"a\",\"version\":7,\"updated_at\":"
	    "\"1796119205002\"}}", std_hdrs, &ev), MAPPING_OK);
	ck_assert_int_eq(ev.occurred_ms, 1796119205002LL);
	ck_assert_int_eq(eval(m, "{\"type\":\"asset.approved\",\"data\":"
	    "{\"asset_id\":\"a\",\"version\":7,\"updated_at\":"
	    "1796119205.5}}", std_hdrs, &ev), MAPPING_INVALID);
	ck_assert_str_eq(why, "occurred: not epoch milliseconds");
	ck_assert_int_eq(eval(m, "{\"type\":\"asset.approved\",\"data\":"
	    "{\"asset_id\":\"a\",\"version\":7,\"updated_at\":"
	    "\"2026-01-01T00:00:00Z\"}}", std_hdrs, &ev), MAPPING_INVALID);
	t = mapping_text(m);
	ck_assert_ptr_nonnull(strstr(t, "\"occurred\":{\"pointer\":"
	    "\"/data/updated_at\",\"unit\":\"ms\"}"));
	free(t);
	/* Restamped in milliseconds, a number as a number. */
	memset(&ev, 0, sizeof(ev));
	(void)snprintf(ev.event_id, sizeof(ev.event_id), "e");
	(void)snprintf(ev.subject, sizeof(ev.subject), "s");
	ev.version = 9;
	ev.occurred_ms = 1796119205123LL;
	b = restamp(m, "{\"type\":\"asset.approved\",\"data\":"
	    "{\"asset_id\":\"a\",\"version\":7,\"updated_at\":1}}", &ev,
	    h, &nh);
	ck_assert_msg(b != NULL, "%s", why);
	ck_assert_ptr_nonnull(strstr(b, "\"updated_at\":1796119205123}"));
	free(b);
	mapping_free(m);

	text = with("type", "{\"value\":\"asset.approved\"}");
	m = mgood(text);
	cJSON_free(text);
	ck_assert_int_eq(eval(m, "{\"type\":\"asset.deleted\",\"data\":"
	    "{\"asset_id\":\"a\",\"version\":7,\"updated_at\":1}}",
	    std_hdrs, &ev), MAPPING_OK);
	ck_assert_str_eq(ev.type, "asset.approved");
	ck_assert_int_eq(ev.effect, MAPPING_DO);
	t = mapping_text(m);
	ck_assert_ptr_nonnull(strstr(t, "\"type\":{\"value\":"
	    "\"asset.approved\"}"));
	mapping_free(m);
	m = mgood(t);
	free(t);
	mapping_free(m);
}
END_TEST

/*
 * Evaluation: where fields are
 */

/* Pointers into nested objects and arrays, escapes, odd keys. */
static const char ptr_map[] =
    "{\"destination\":\"d\","
    "\"event_id\":\"/meta/ids/1\","
    "\"subject\":\"/a~1b/c~0d\","
    "\"version\":\"/list/0/v\","
    "\"type\":\"/\","
    "\"occurred\":\"/obj/0/~01\","
    "\"steps\":{\"go\":[\"T\"]}}";

START_TEST(test_eval_pointers)
{
	struct mapping		*m;
	struct mapping_event	 ev;

	m = mgood(ptr_map);
	ck_assert_msg(eval(m, "{\"meta\":{\"ids\":[\"first\",\"second\"]},"
	    "\"a/b\":{\"c~d\":\"subj\",\"c/d\":\"no\",\"c~0d\":\"no\"},"
	    "\"ab\":{\"c~d\":\"no\"},"
	    "\"list\":[{\"v\":9},{\"v\":10}],"
	    "\"\":\"T\","
	    "\"obj\":{\"0\":{\"~1\":\"1700000000\",\"/\":\"no\"}}}",
	    NULL, &ev) == MAPPING_OK, "%s", why);
	ck_assert_str_eq(ev.event_id, "second");
	ck_assert_str_eq(ev.subject, "subj");
	ck_assert_int_eq(ev.version, 9);
	ck_assert_str_eq(ev.type, "T");
	ck_assert_int_eq(ev.occurred_ms, 1700000000000LL);
	ck_assert_int_eq(ev.effect, MAPPING_DO);
	ck_assert_str_eq(ev.step, "go");
	mapping_free(m);
}
END_TEST

/* Pointers that lead nowhere: the field is missing, never guessed. */
static const struct missing {
	const char	*pointer;	/* the subject's */
	const char	*body;
} missings[] = {
	{ "/a/1", "{\"a\":[\"x\"]}" },		/* past the end */
	{ "/a/-", "{\"a\":[\"x\"]}" },		/* "-" is no item */
	{ "/a/01", "{\"a\":[\"x\",\"y\"]}" },	/* leading zero */
	{ "/a/+1", "{\"a\":[\"x\",\"y\"]}" },
	{ "/a/1.0", "{\"a\":[\"x\",\"y\"]}" },
	{ "/a/", "{\"a\":[\"x\"]}" },
	{ "/a/x", "{\"a\":[\"x\"]}" },
	{ "/a/99999999999", "{\"a\":[\"x\"]}" },
	{ "/a/b", "{\"a\":\"x\"}" },		/* through a string */
	{ "/a/b", "{\"a\":5}" },
	{ "/a/b", "{\"a\":null}" },
	{ "/a", "{\"a\":null}" },		/* null is absent */
	{ "/a", "{\"A\":\"x\"}" },		/* case-sensitive */
	{ "/a", "{\"b\":{\"a\":\"x\"}}" },	/* not searched for */
	{ "/a~1b", "{\"a\":{\"b\":\"x\"}}" },	/* ~1 is a key's '/' */
	{ "/a/b", "{\"a/b\":\"x\"}" },
	{ "/", "{\"a\":\"x\"}" },
};

START_TEST(test_eval_missing)
{
	const struct missing	*c = &missings[_i];
	struct mapping		*m;
	struct mapping_event	 ev;
	char			*text, v[64];

	(void)snprintf(v, sizeof(v), "\"%s\"", c->pointer);
	text = with("subject", v);
	m = mgood(text);
	cJSON_free(text);
	ck_assert_int_eq(eval(m, c->body, std_hdrs, &ev), MAPPING_INVALID);
	ck_assert_str_eq(why, "subject: missing");
	ck_zero(&ev);
	mapping_free(m);
}
END_TEST

/* Each field missing in turn, in the order of the file. */
START_TEST(test_eval_missing_each)
{
	static const struct {
		const char	*body;
		const char	*why;
	} cases[] = {
		{ "{\"type\":\"t\",\"data\":{\"version\":1,\"updated_at\":1}}",
		    "subject: missing" },
		{ "{\"type\":\"t\",\"data\":{\"asset_id\":\"a\","
		    "\"updated_at\":1}}", "version: missing" },
		{ "{\"data\":{\"asset_id\":\"a\",\"version\":1,"
		    "\"updated_at\":1}}", "type: missing" },
		{ "{\"type\":\"t\",\"data\":{\"asset_id\":\"a\","
		    "\"version\":1}}", "occurred: missing" },
		{ "{\"type\":\"t\",\"data\":{\"asset_id\":\"a\","
		    "\"version\":null,\"updated_at\":1}}", "version: missing" },
		{ "{\"type\":\"t\"}", "subject: missing" },
		{ "{}", "subject: missing" },
	};
	struct mapping		*m;
	struct mapping_event	 ev;
	size_t			 i;

	m = mgood(example);
	for (i = 0; i < NELEM(cases); i++) {
		ck_assert_int_eq(eval(m, cases[i].body, std_hdrs, &ev),
		    MAPPING_INVALID);
		ck_assert_str_eq(why, cases[i].why);
		ck_zero(&ev);
	}
	mapping_free(m);
}
END_TEST

/* Fields from headers: asked for by name, any case; absent is missing. */
START_TEST(test_eval_headers)
{
	static const struct hdr	h[] = {
		{ "x-event-id", "evt-1" }, { "X-Subject", "sub-1" },
		{ "X-VERSION", "0042" }, { "x-type", "asset.approved" },
		{ "X-Time", "2024-05-01T10:00:00Z" }, { NULL, NULL }
	};
	static const struct hdr	lack[] = {
		{ "x-event-id", "evt-1" }, { "X-Subject", "sub-1" },
		{ NULL, NULL }
	};
	static const struct hdr	empty[] = {
		{ "x-event-id", "" }, { NULL, NULL }
	};
	struct mapping		*m;
	struct mapping_event	 ev;

	m = mgood("{\"destination\":\"d\",\"event_id\":{\"header\":"
	    "\"X-Event-Id\"},\"subject\":{\"header\":\"x-subject\"},"
	    "\"version\":{\"header\":\"X-Version\"},\"type\":{\"header\":"
	    "\"X-TYPE\"},\"occurred\":{\"header\":\"x-time\"},"
	    "\"steps\":{\"publish\":[\"asset.approved\"]}}");
	ck_assert_msg(eval(m, "{}", h, &ev) == MAPPING_OK, "%s", why);
	ck_assert_str_eq(ev.event_id, "evt-1");
	ck_assert_str_eq(ev.subject, "sub-1");
	ck_assert_int_eq(ev.version, 42);
	ck_assert_str_eq(ev.type, "asset.approved");
	ck_assert_int_eq(ev.occurred_ms, 1714557600000LL);
	ck_assert_int_eq(ev.effect, MAPPING_DO);
	ck_assert_str_eq(ev.step, "publish");

	/* The body must still be a JSON object. */
	ck_assert_int_eq(eval(m, "[]", h, &ev), MAPPING_INVALID);
	ck_assert_str_eq(why, "body: not a JSON object");
	ck_assert_int_eq(eval(m, "", h, &ev), MAPPING_NOT_JSON);

	ck_assert_int_eq(eval(m, "{}", lack, &ev), MAPPING_INVALID);
	ck_assert_str_eq(why, "version: missing");
	ck_zero(&ev);
	ck_assert_int_eq(eval(m, "{}", empty, &ev), MAPPING_INVALID);
	ck_assert_str_eq(why, "event_id: empty");
	ck_zero(&ev);
	/* No look-up function: every header is missing. */
	ck_assert_int_eq(eval(m, "{}", NULL, &ev), MAPPING_INVALID);
	ck_assert_str_eq(why, "event_id: missing");
	ck_zero(&ev);
	mapping_free(m);

	/* The example's event id is its header's, whatever the body says. */
	m = mgood(example);
	ck_assert_int_eq(eval(m, "{\"type\":\"asset.approved\",\"webhook-id\":"
	    "\"body\",\"data\":{\"asset_id\":\"a\",\"version\":1,"
	    "\"updated_at\":1}}", NULL, &ev), MAPPING_INVALID);
	ck_assert_str_eq(why, "event_id: missing");
	mapping_free(m);
}
END_TEST

/* Header values are held to the same rules as the body's strings. */
START_TEST(test_eval_header_values)
{
	static const struct {
		const char	*value;
		const char	*why;	/* NULL: accepted */
	} cases[] = {
		{ "msg_1", NULL },
		{ "m\xc3\xa9ssage", NULL },
		{ "", "event_id: empty" },
		{ "a\x1b" "b", "event_id: too long, not UTF-8 or has control "
		    "characters" },
		{ "a\tb", "event_id: too long, not UTF-8 or has control "
		    "characters" },
		{ "a\xff", "event_id: too long, not UTF-8 or has control "
		    "characters" },
		{ "a\xe2\x80\xae" "b", "event_id: too long, not UTF-8 or has "
		    "control characters" },
	};
	struct hdr		 h[2] = { { "webhook-id", NULL }, { NULL, NULL } };
	struct mapping		*m;
	struct mapping_event	 ev;
	char			*b, *big;
	size_t			 i;

	m = mgood(example);
	b = body_of("asset.approved", "1", "1");
	for (i = 0; i < NELEM(cases); i++) {
		h[0].value = cases[i].value;
		if (cases[i].why == NULL) {
			ck_assert_msg(eval(m, b, h, &ev) == MAPPING_OK, "%s",
			    why);
			ck_assert_str_eq(ev.event_id, cases[i].value);
			continue;
		}
		ck_assert_int_eq(eval(m, b, h, &ev), MAPPING_INVALID);
		ck_assert_str_eq(why, cases[i].why);
		ck_zero(&ev);
	}
	big = repeat('h', HB_ID_MAX);
	h[0].value = big;
	ck_assert_int_eq(eval(m, b, h, &ev), MAPPING_OK);
	ck_assert_str_eq(ev.event_id, big);
	free(big);
	big = repeat('h', HB_ID_MAX + 1);
	h[0].value = big;
	ck_assert_int_eq(eval(m, b, h, &ev), MAPPING_INVALID);
	ck_assert_str_eq(why, "event_id: too long, not UTF-8 or has control "
	    "characters");
	free(big);
	free(b);
	mapping_free(m);
}
END_TEST

/*
 * Evaluation: the value rules
 */

/* Identifiers: strings, checked as text_valid_id() checks them. */
static const struct idcase {
	const char	*type;	/* JSON */
	const char	*why;	/* NULL: accepted */
} idcases[] = {
	{ "\"asset.created\"", NULL },
	{ "\"\\u00e9t\\u00e9\"", NULL },
	{ "\"a\\u0080\"", "type: too long, not UTF-8 or has control "
	    "characters" },
	{ "\"a\\u001bb\"", "type: too long, not UTF-8 or has control "
	    "characters" },
	{ "\"a\\nb\"", "type: too long, not UTF-8 or has control "
	    "characters" },
	{ "\"a\\u007f\"", "type: too long, not UTF-8 or has control "
	    "characters" },
	{ "\"a\\u202e\"", "type: too long, not UTF-8 or has control "
	    "characters" },
	{ "\"a\xff\"", "type: too long, not UTF-8 or has control "
	    "characters" },
	{ "\"\"", "type: empty" },
	{ "5", "type: not a string" },
	{ "true", "type: not a string" },
	{ "{}", "type: not a string" },
	{ "[\"a\"]", "type: not a string" },
};

START_TEST(test_eval_ids)
{
	const struct idcase	*c = &idcases[_i];
	struct mapping		*m;
	struct mapping_event	 ev;
	char			 b[256];

	m = mgood(example);
	(void)snprintf(b, sizeof(b), "{\"type\":%s,\"data\":{\"asset_id\":"
	    "\"a\",\"version\":1,\"updated_at\":1}}", c->type);
	if (c->why == NULL) {
		ck_assert_msg(eval(m, b, std_hdrs, &ev) == MAPPING_OK, "%s",
		    why);
		ck_assert_int_eq(ev.effect, MAPPING_IGNORE);
		ck_assert_int_ne(text_valid_id(ev.type, HB_ID_MAX), 0);
	} else {
		ck_assert_int_eq(eval(m, b, std_hdrs, &ev), MAPPING_INVALID);
		ck_assert_str_eq(why, c->why);
		ck_zero(&ev);
	}
	mapping_free(m);
}
END_TEST

/*
 * The subject and the event id may be JSON integers (GitHub numbers its
 * objects): read as their decimal text, 0 to 2^53 - 1 exactly; any other
 * number is refused, naming the field.
 */
static const struct numcase {
	const char	*json;
	const char	*text;	/* NULL: refused */
} numcases[] = {
	{ "0", "0" },
	{ "42", "42" },
	{ "1e3", "1000" },
	{ "9007199254740991", "9007199254740991" },
	{ "9007199254740992", NULL },
	{ "-1", NULL },
	{ "1.5", NULL },
	{ "1e300", NULL },
};

START_TEST(test_eval_numeric_ids)
{
	const struct numcase	*c = &numcases[_i];
	struct mapping		*m;
	struct mapping_event	 ev;
	char			 b[256];

	m = mgood(ptr_map);
	/* The subject at /a~1b/c~0d, the event id at /meta/ids/1. */
	(void)snprintf(b, sizeof(b), "{\"meta\":{\"ids\":[0,%s]},"
	    "\"a/b\":{\"c~d\":%s},\"list\":[{\"v\":1}],\"\":\"t\","
	    "\"obj\":{\"0\":{\"~1\":1}}}", c->json, c->json);
	if (c->text != NULL) {
		ck_assert_msg(eval(m, b, NULL, &ev) == MAPPING_OK, "%s", why);
		ck_assert_str_eq(ev.subject, c->text);
		ck_assert_str_eq(ev.event_id, c->text);
	} else {
		ck_assert_int_eq(eval(m, b, NULL, &ev), MAPPING_INVALID);
		ck_assert_str_eq(why, "event_id: a number, but not an integer"
		    " from 0 to 2^53 - 1");
		ck_zero(&ev);
	}
	mapping_free(m);
}
END_TEST

/* Neither a string nor a number: named, with what the field takes. */
START_TEST(test_eval_id_kinds)
{
	struct mapping		*m;
	struct mapping_event	 ev;

	m = mgood(example);
	ck_assert_int_eq(eval(m, "{\"type\":\"asset.approved\",\"data\":"
	    "{\"asset_id\":true,\"version\":1,\"updated_at\":1}}", std_hdrs,
	    &ev), MAPPING_INVALID);
	ck_assert_str_eq(why, "subject: not a string or an integer");
	ck_assert_int_eq(eval(m, "{\"type\":\"asset.approved\",\"data\":"
	    "{\"asset_id\":[1],\"version\":1,\"updated_at\":1}}", std_hdrs,
	    &ev), MAPPING_INVALID);
	ck_assert_str_eq(why, "subject: not a string or an integer");
	ck_assert_int_eq(eval(m, "{\"type\":\"asset.approved\",\"data\":"
	    "{\"asset_id\":77,\"version\":1,\"updated_at\":1}}", std_hdrs,
	    &ev), MAPPING_OK);
	ck_assert_str_eq(ev.subject, "77");
	ck_assert_int_eq(ev.effect, MAPPING_DO);
	mapping_free(m);
}
END_TEST

/* HB_ID_MAX bytes are an id; one more is not, in each id field. */
START_TEST(test_eval_id_max)
{
	struct mapping		*m;
	struct mapping_event	 ev;
	char			*id, *b;
	size_t			 len = 4 * HB_ID_MAX + 128;
	int			 k;

	m = mgood(ptr_map);
	b = malloc(len);
	ck_assert_ptr_nonnull(b);
	for (k = 0; k < 2; k++) {
		id = repeat('x', HB_ID_MAX + (size_t)k);
		(void)snprintf(b, len, "{\"meta\":{\"ids\":[0,\"%s\"]},"
		    "\"a/b\":{\"c~d\":\"%s\"},\"list\":[{\"v\":1}],"
		    "\"\":\"%s\",\"obj\":{\"0\":{\"~1\":1}}}", id, id, id);
		if (k == 0) {
			ck_assert_msg(eval(m, b, NULL, &ev) == MAPPING_OK,
			    "%s", why);
			ck_assert_str_eq(ev.event_id, id);
			ck_assert_str_eq(ev.subject, id);
			ck_assert_str_eq(ev.type, id);
			ck_assert_int_eq(ev.effect, MAPPING_IGNORE);
		} else {
			ck_assert_int_eq(eval(m, b, NULL, &ev),
			    MAPPING_INVALID);
			ck_assert_str_eq(why, "event_id: too long, not UTF-8 "
			    "or has control characters");
			ck_zero(&ev);
		}
		free(id);
	}
	/* A multi-byte character that would end past the limit. */
	id = repeat('x', HB_ID_MAX - 1);
	(void)snprintf(b, len, "{\"meta\":{\"ids\":[0,\"i\"]},"
	    "\"a/b\":{\"c~d\":\"%s\xc3\xa9\"},\"list\":[{\"v\":1}],"
	    "\"\":\"t\",\"obj\":{\"0\":{\"~1\":1}}}", id);
	ck_assert_int_eq(eval(m, b, NULL, &ev), MAPPING_INVALID);
	ck_assert_str_eq(why, "subject: too long, not UTF-8 or has control "
	    "characters");
	free(id);
	free(b);
	mapping_free(m);
}
END_TEST

/* Versions: a JSON integer or a string of digits, 0 to 2^53 - 1. */
static const struct vcase {
	const char	*json;
	int		 ok;
	int64_t		 want;
} vcases[] = {
	{ "0", 1, 0 },
	{ "1", 1, 1 },
	{ "-0", 1, 0 },
	{ "1.0", 1, 1 },	/* a double: the same value as 1 */
	{ "1e3", 1, 1000 },
	{ "9007199254740991", 1, 9007199254740991LL },
	{ "\"0\"", 1, 0 },
	{ "\"42\"", 1, 42 },
	{ "\"0042\"", 1, 42 },
	{ "\"9007199254740991\"", 1, 9007199254740991LL },
	{ "\"0000000000000001\"", 1, 1 },
	{ "9007199254740992", 0, 0 },
	{ "18446744073709551616", 0, 0 },
	{ "1e300", 0, 0 },
	{ "1.5", 0, 0 },
	{ "0.1", 0, 0 },
	{ "-1", 0, 0 },
	{ "-9007199254740991", 0, 0 },
	{ "\"9007199254740992\"", 0, 0 },
	{ "\"9999999999999999\"", 0, 0 },
	{ "\"00000000000000001\"", 0, 0 },	/* 17 digits */
	{ "\"1.5\"", 0, 0 },
	{ "\"1.0\"", 0, 0 },
	{ "\"-1\"", 0, 0 },
	{ "\"+1\"", 0, 0 },
	{ "\" 1\"", 0, 0 },
	{ "\"1 \"", 0, 0 },
	{ "\"1e3\"", 0, 0 },
	{ "\"0x10\"", 0, 0 },
	{ "\"\"", 0, 0 },
	{ "true", 0, 0 },
	{ "false", 0, 0 },
	{ "[]", 0, 0 },
	{ "{}", 0, 0 },
};

START_TEST(test_eval_version)
{
	const struct vcase	*c = &vcases[_i];
	struct mapping		*m;
	struct mapping_event	 ev;
	char			*b;

	m = mgood(example);
	b = body_of("asset.approved", c->json, "1");
	if (c->ok) {
		ck_assert_msg(eval(m, b, std_hdrs, &ev) == MAPPING_OK,
		    "%s: %s", c->json, why);
		ck_assert_int_eq(ev.version, c->want);
	} else {
		ck_assert_msg(eval(m, b, std_hdrs, &ev) == MAPPING_INVALID,
		    "%s accepted", c->json);
		ck_assert_str_eq(why, "version: not an integer");
		ck_zero(&ev);
	}
	free(b);
	mapping_free(m);
}
END_TEST

/*
 * Occurrences: RFC 3339 date-times and epoch seconds, from 1970 to the
 * end of 9999.
 */
#define BAD	(-1)
#define RANGE	(-2)
static const struct tcase {
	const char	*json;
	int64_t		 want;	/* ms, or BAD or RANGE */
} tcases[] = {
	{ "\"1970-01-01T00:00:00Z\"", 0 },
	{ "\"2024-05-01T10:00:00Z\"", 1714557600000LL },
	{ "\"2024-05-01T10:00:00.123Z\"", 1714557600123LL },
	{ "\"2024-05-01T10:00:00.1Z\"", 1714557600100LL },
	{ "\"2024-05-01T10:00:00.12Z\"", 1714557600120LL },
	{ "\"2024-05-01T10:00:00.123999999Z\"", 1714557600123LL },
	{ "\"2024-05-01T10:00:00.000000000000000000001Z\"", 1714557600000LL },
	{ "\"2024-05-01t10:00:00z\"", 1714557600000LL },
	{ "\"2024-05-01T12:00:00+02:00\"", 1714557600000LL },
	{ "\"2024-05-01T05:30:00-04:30\"", 1714557600000LL },
	{ "\"2024-05-01T10:00:00-00:00\"", 1714557600000LL },
	{ "\"2024-05-01T10:00:00+00:00\"", 1714557600000LL },
	{ "\"2024-05-02T09:59:00+23:59\"", 1714557600000LL },
	{ "\"2024-02-29T00:00:00Z\"", 1709164800000LL },
	{ "\"2000-02-29T00:00:00Z\"", 951782400000LL },
	{ "\"2024-12-31T23:59:59.999Z\"", 1735689599999LL },
	{ "\"9999-12-31T23:59:59.999Z\"", 253402300799999LL },
	{ "\"1970-01-01T01:00:00+01:00\"", 0 },
	{ "\"2023-02-29T00:00:00Z\"", BAD },
	{ "\"2024-02-30T00:00:00Z\"", BAD },
	{ "\"2100-02-29T00:00:00Z\"", BAD },
	{ "\"2024-04-31T00:00:00Z\"", BAD },
	{ "\"2024-13-01T00:00:00Z\"", BAD },
	{ "\"2024-00-01T00:00:00Z\"", BAD },
	{ "\"2024-01-00T00:00:00Z\"", BAD },
	{ "\"2024-01-32T00:00:00Z\"", BAD },
	{ "\"2024-05-01T24:00:00Z\"", BAD },
	{ "\"2024-05-01T23:60:00Z\"", BAD },
	{ "\"2016-12-31T23:59:60Z\"", BAD },	/* a leap second */
	{ "\"2024-05-01T10:00:00\"", BAD },
	{ "\"2024-05-01 10:00:00Z\"", BAD },
	{ "\"2024-05-01T10:00Z\"", BAD },
	{ "\"2024-05-01\"", BAD },
	{ "\"2024-05-01T10:00:00.Z\"", BAD },
	{ "\"2024-05-01T10:00:00,5Z\"", BAD },
	{ "\"2024-05-01T10:00:00+0200\"", BAD },
	{ "\"2024-05-01T10:00:00+02\"", BAD },
	{ "\"2024-05-01T10:00:00+24:00\"", BAD },
	{ "\"2024-05-01T10:00:00+02:60\"", BAD },
	{ "\"2024-05-01T10:00:00ZZ\"", BAD },
	{ "\"2024-05-01T10:00:00Z \"", BAD },
	{ "\" 2024-05-01T10:00:00Z\"", BAD },
	{ "\"2024-5-01T10:00:00Z\"", BAD },
	{ "\"+2024-05-01T10:00:00Z\"", BAD },
	{ "\"20240501T100000Z\"", BAD },
	{ "\"\"", BAD },
	{ "\"1969-12-31T23:59:59Z\"", RANGE },
	{ "\"1970-01-01T00:59:59+01:00\"", RANGE },
	{ "\"0000-01-01T00:00:00Z\"", RANGE },
	{ "\"9999-12-31T23:59:59-01:00\"", RANGE },
	/* Epoch seconds, a JSON number: to the nearest millisecond. */
	{ "0", 0 },
	{ "1700000000", 1700000000000LL },
	{ "1700000000.123", 1700000000123LL },
	{ "1700000000.5", 1700000000500LL },
	{ "1.001", 1001 },	/* 1000.9999999999999 as a double */
	{ "1.9996", 2000 },
	{ "1.7e9", 1700000000000LL },
	{ "253402300799", 253402300799000LL },
	{ "253402300799.999", 253402300799999LL },
	{ "-1", RANGE },
	{ "-0.001", RANGE },
	{ "253402300799.9996", RANGE },	/* the nearest ms is past 9999 */
	{ "253402300800", RANGE },
	{ "1e300", RANGE },
	/* Epoch seconds, a string: the fraction cut to milliseconds. */
	{ "\"0\"", 0 },
	{ "\"1700000000\"", 1700000000000LL },
	{ "\"1700000000.123\"", 1700000000123LL },
	{ "\"1700000000.1239\"", 1700000000123LL },
	{ "\"1700000000.9\"", 1700000000900LL },
	{ "\"0001700000000\"", 1700000000000LL },
	{ "\"253402300799.999999\"", 253402300799999LL },
	{ "\"253402300800\"", RANGE },
	{ "\"99999999999999999999999999\"", RANGE },
	{ "\"1700000000.\"", BAD },
	{ "\".5\"", BAD },
	{ "\"1.2.3\"", BAD },
	{ "\"-1\"", BAD },
	{ "\"+1\"", BAD },
	{ "\"1e9\"", BAD },
	{ "\" 1\"", BAD },
	{ "true", BAD },
	{ "{}", BAD },
	{ "[1]", BAD },
};

START_TEST(test_eval_occurred)
{
	const struct tcase	*c = &tcases[_i];
	struct mapping		*m;
	struct mapping_event	 ev;
	char			*b;

	m = mgood(example);
	b = body_of("asset.approved", "1", c->json);
	if (c->want >= 0) {
		ck_assert_msg(eval(m, b, std_hdrs, &ev) == MAPPING_OK,
		    "%s: %s", c->json, why);
		ck_assert_int_eq(ev.occurred_ms, c->want);
	} else {
		ck_assert_msg(eval(m, b, std_hdrs, &ev) == MAPPING_INVALID,
		    "%s accepted", c->json);
		ck_assert_str_eq(why, c->want == BAD ? "occurred: not an RFC "
		    "3339 date-time or epoch seconds" :
		    "occurred: before 1970 or after 9999");
		ck_zero(&ev);
	}
	free(b);
	mapping_free(m);
}
END_TEST

/*
 * Evaluation: the body, with provider/tornado.h's strictness
 */

static const struct bodycase {
	const char		*body;
	size_t			 len;	/* 0: strlen */
	enum mapping_err	 want;
	const char		*why;
} bodycases[] = {
	{ "", 0, MAPPING_NOT_JSON, "body: not JSON" },
	{ "{", 0, MAPPING_NOT_JSON, "body: not JSON" },
	{ "{\"type\":\"t\"} {}", 0, MAPPING_NOT_JSON, "body: not JSON" },
	{ "{\"type\":\"t\",}", 0, MAPPING_NOT_JSON, "body: not JSON" },
	{ "{'type':'t'}", 0, MAPPING_NOT_JSON, "body: not JSON" },
	{ "{\"type\":\"a\x1b" "b\"}", 0, MAPPING_NOT_JSON, "body: raw control "
	    "byte (below 0x20) in a string or between tokens" },
	{ "{\"type\":\"a\nb\"}", 0, MAPPING_NOT_JSON, "body: raw control "
	    "byte (below 0x20) in a string or between tokens" },
	{ "{\"type\":\"a\0b\"}", 14, MAPPING_NOT_JSON, "body: raw control "
	    "byte (below 0x20) in a string or between tokens" },
	{ "{\"type\":\"t\"}\0", 13, MAPPING_NOT_JSON, "body: raw control "
	    "byte (below 0x20) in a string or between tokens" },
	{ "\x0c{\"type\":\"t\"}", 0, MAPPING_NOT_JSON, "body: raw control "
	    "byte (below 0x20) in a string or between tokens" },
	{ "{\"type\":\"a\\u0000b\"}", 0, MAPPING_INVALID, "body: a string "
	    "contains \\u0000" },
	{ "{\"x\\u0000\":1}", 0, MAPPING_INVALID, "body: a string contains "
	    "\\u0000" },
	{ "{\"type\":\"a\",\"type\":\"b\"}", 0, MAPPING_INVALID,
	    "type: duplicate key" },
	{ "{\"data\":{\"x\":1,\"x\":1}}", 0, MAPPING_INVALID,
	    "x: duplicate key" },
	{ "{\"d\":[{\"k y\":1,\"k y\":2}]}", 0, MAPPING_INVALID,
	    "body: duplicate key" },
	{ "[]", 0, MAPPING_INVALID, "body: not a JSON object" },
	{ "[{\"type\":\"t\"}]", 0, MAPPING_INVALID, "body: not a JSON "
	    "object" },
	{ "\"x\"", 0, MAPPING_INVALID, "body: not a JSON object" },
	{ "1", 0, MAPPING_INVALID, "body: not a JSON object" },
	{ "null", 0, MAPPING_INVALID, "body: not a JSON object" },
	{ "true", 0, MAPPING_INVALID, "body: not a JSON object" },
};

START_TEST(test_eval_body)
{
	const struct bodycase	*c = &bodycases[_i];
	struct mapping		*m;
	struct mapping_event	 ev;

	m = mgood(example);
	ck_assert_int_eq(eval_len(m, c->body, c->len != 0 ? c->len :
	    strlen(c->body), std_hdrs, &ev), c->want);
	ck_assert_str_eq(why, c->why);
	ck_zero(&ev);
	mapping_free(m);
}
END_TEST

/* JSON white space around the object is JSON; a body is read to len. */
START_TEST(test_eval_len)
{
	static const char	body[] = " \r\n\t{\"type\":\"asset.viewed\","
	    "\"data\":{\"asset_id\":\"a\",\"version\":1,\"updated_at\":1}}"
	    " \n";
	struct mapping		*m;
	struct mapping_event	 ev;

	m = mgood(example);
	ck_assert_msg(eval(m, body, std_hdrs, &ev) == MAPPING_OK, "%s", why);
	ck_assert_str_eq(ev.type, "asset.viewed");
	/* Cut short of its closing brace: not JSON. */
	ck_assert_int_eq(eval_len(m, body, strlen(body) - 3, std_hdrs, &ev),
	    MAPPING_NOT_JSON);
	mapping_free(m);
}
END_TEST

/* why names the field, never the value the sender chose. */
START_TEST(test_eval_no_echo)
{
	static const char	*bodies[] = {
		"{\"type\":\"t\",\"data\":{\"asset_id\":\"a\",\"version\":"
		    "\"SECRET\",\"updated_at\":1}}",
		"{\"type\":\"t\",\"data\":{\"asset_id\":\"a\",\"version\":1,"
		    "\"updated_at\":\"SECRET\"}}",
		"{\"type\":\"t\",\"data\":{\"asset_id\":\"SECRET\\u001b\","
		    "\"version\":1,\"updated_at\":1}}",
		"{\"type\":\"t\",\"data\":{\"SECRET\":1,\"SECRET\":2}}",
	};
	struct mapping		*m;
	struct mapping_event	 ev;
	size_t			 i;

	m = mgood(example);
	for (i = 0; i < NELEM(bodies); i++) {
		ck_assert_int_eq(eval(m, bodies[i], std_hdrs, &ev),
		    MAPPING_INVALID);
		ck_assert_msg(strstr(why, "SECRET") == NULL || i == 3,
		    "why \"%s\"", why);
		ck_assert_ptr_nonnull(strchr(why, ':'));
	}
	mapping_free(m);
}
END_TEST

/* A why shorter than the sentence is cut, NUL-terminated; NULL is fine. */
START_TEST(test_eval_why_short)
{
	struct mapping		*m;
	struct mapping_event	 ev;
	char			 small[6];

	m = mgood(example);
	memset(small, JUNK, sizeof(small));
	ck_assert_int_eq(mapping_eval(m, "[]", 2, NULL, NULL, &ev, small,
	    sizeof(small)), MAPPING_INVALID);
	ck_assert_str_eq(small, "body:");
	ck_assert_int_eq(mapping_eval(m, "[]", 2, NULL, NULL, &ev, NULL, 0),
	    MAPPING_INVALID);
	mapping_free(m);
}
END_TEST

/*
 * Out of memory
 */

/* Fails allocation number n (from 0) that reaches FAULT_ALLOC. */
struct failnth {
	long	n;
	long	seen;
	int	fired;
};

static int
fail_nth(enum fault_point p, void *arg)
{
	struct failnth	*f = arg;

	(void)p;
	if (f->seen++ != f->n)
		return 0;
	f->fired = 1;
	return 1;
}

static int
always_fail(enum fault_point p, void *arg)
{
	struct failnth	*f = arg;

	(void)p;
	f->seen++;
	f->fired = 1;
	return 1;
}

/*
 * Mapping files, good and bad: failing each allocation in turn, the
 * answer is "out of memory" every time, never a mapping error (the
 * operator would fix a file that is right), and the normal answer once
 * nothing fails.
 */
static const struct nomemmap {
	const char	*member;	/* NULL: the example as is */
	const char	*value;
	int		 ok;		/* with memory */
} nomemmaps[] = {
	{ NULL, NULL, 1 },
	{ "occurred", "{\"header\":\"X-Time\"}", 1 },
	{ "steps", "{\"publish\":[\"a\",5]}", 0 },
	{ "ignore", "[\"asset.approved\"]", 0 },
	{ "undo", "{\"publish\":[\"b\"]}", 0 },
};

START_TEST(test_nomem_parse)
{
	const struct nomemmap	*c = &nomemmaps[_i];
	struct failnth		 f;
	struct mapping		*m;
	char			*text;

	text = c->member != NULL ? with(c->member, c->value) : NULL;
	for (f.n = 0;; f.n++) {
		f.seen = 0;
		f.fired = 0;
		fault_set(FAULT_ALLOC, fail_nth, &f);
		m = mparse(text != NULL ? text : example);
		fault_set(FAULT_ALLOC, NULL, NULL);
		if (!f.fired)
			break;
		ck_assert_msg(m == NULL, "allocation %ld failed, mapping made",
		    f.n);
		ck_assert_str_eq(why, "out of memory");
	}
	if (c->ok) {
		ck_assert_msg(m != NULL, "%s", why);
		mapping_free(m);
	} else {
		ck_assert_ptr_null(m);
		ck_assert_str_ne(why, "out of memory");
	}
	/* The document's and the mapping's own: several. */
	ck_assert_msg(f.n >= 8, "only %ld allocations", f.n);
	cJSON_free(text);
}
END_TEST

/* mapping_text(): NULL when its allocation fails, as said. */
START_TEST(test_nomem_text)
{
	struct failnth	 f = { 0, 0, 0 };
	struct mapping	*m;
	char		*t;

	m = mgood(example);
	fault_set(FAULT_ALLOC, always_fail, &f);
	t = mapping_text(m);
	fault_set(FAULT_ALLOC, NULL, NULL);
	ck_assert_ptr_null(t);
	ck_assert_int_gt(f.seen, 0);
	t = mapping_text(m);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(t, canonical);
	free(t);
	mapping_free(m);
}
END_TEST

/*
 * Bodies, good and malformed past the failure point: every failed
 * allocation is MAPPING_NOMEM ("try again"), never MAPPING_INVALID or
 * MAPPING_NOT_JSON, and leaves the event empty.
 */
static const struct nomembody {
	const char		*body;
	enum mapping_err	 want;	/* with memory */
} nomembodies[] = {
	{ "{\"type\":\"asset.approved\",\"data\":{\"asset_id\":\"a-1\","
	    "\"version\":3,\"updated_at\":\"2024-05-01T10:00:00Z\","
	    "\"tags\":[\"x\",{\"y\":null}]}}", MAPPING_OK },
	{ "{\"type\":\"asset.viewed\",\"data\":{\"asset_id\":\"a-1\","
	    "\"version\":\"4\",\"updated_at\":1714557600}}", MAPPING_OK },
	{ "{\"type\":\"asset.approved\",\"data\":{\"asset_id\":\"a-1\","
	    "\"version\":1.5,\"updated_at\":1}}", MAPPING_INVALID },
	{ "{\"type\":\"asset.approved\",\"data\":{\"asset_id\":\"a-1\","
	    "\"asset_id\":\"a-2\"}}", MAPPING_INVALID },
	{ "{\"type\":\"asset.approved\",\"data\":{\"asset_id\":\"a-1\"}",
	    MAPPING_NOT_JSON },
	{ "[{\"type\":\"asset.approved\"}]", MAPPING_INVALID },
};

START_TEST(test_nomem_eval)
{
	const struct nomembody	*c = &nomembodies[_i];
	struct failnth		 f;
	struct mapping		*m;
	struct mapping_event	 ev;
	enum mapping_err	 rc;

	m = mgood(example);
	for (f.n = 0;; f.n++) {
		f.seen = 0;
		f.fired = 0;
		fault_set(FAULT_ALLOC, fail_nth, &f);
		rc = eval(m, c->body, std_hdrs, &ev);
		fault_set(FAULT_ALLOC, NULL, NULL);
		if (!f.fired)
			break;
		ck_assert_msg(rc == MAPPING_NOMEM, "%s, allocation %ld "
		    "failed: %d, want out of memory", c->body, f.n, rc);
		ck_assert_str_eq(why, "body: out of memory");
		ck_zero(&ev);
	}
	ck_assert_msg(rc == c->want, "%s: %d with memory", c->body, rc);
	ck_assert_msg(f.n >= 4, "%s: only %ld allocations", c->body, f.n);
	mapping_free(m);
}
END_TEST

/* Allocations that fail for good; what is refused unread stays so. */
START_TEST(test_nomem_all)
{
	struct failnth		 f = { 0, 0, 0 };
	struct mapping		*m;
	struct mapping_event	 ev;
	size_t			 i;
	char			*big;

	m = mgood(example);
	big = repeat(' ', MAPPING_TEXT_MAX + 1);
	fault_set(FAULT_ALLOC, always_fail, &f);
	for (i = 0; i < NELEM(nomembodies); i++)
		ck_assert_int_eq(eval(m, nomembodies[i].body, std_hdrs, &ev),
		    MAPPING_NOMEM);
	ck_assert_ptr_null(mparse(example));
	ck_assert_str_eq(why, "out of memory");
	/* Refused before any allocation: as before. */
	ck_assert_int_eq(eval_len(m, "{\"type\":\"a\0\"}", 12, std_hdrs, &ev),
	    MAPPING_NOT_JSON);
	ck_assert_int_eq(eval(m, "{\"type\":\"a\\u0000\"}", std_hdrs, &ev),
	    MAPPING_INVALID);
	ck_assert_int_eq(eval(m, "", std_hdrs, &ev), MAPPING_NOT_JSON);
	ck_assert_ptr_null(mparse(big));
	ck_assert_str_eq(why, "mapping: longer than 16384 bytes");
	fault_set(FAULT_ALLOC, NULL, NULL);
	free(big);
	ck_assert_int_gt(f.seen, (long)NELEM(nomembodies));
	mapping_free(m);
}
END_TEST

/*
 * Restamping a sample (the disorder tester's): what is written is what
 * mapping_eval() reads back, each field keeps its kind, the rest of the
 * body stays, and a sample that lacks a field says which.
 */

/* The event the tests write: its type "" keeps the sample's. */
static void
stamp_event(struct mapping_event *ev, const char *type)
{
	memset(ev, 0, sizeof(*ev));
	(void)snprintf(ev->event_id, sizeof(ev->event_id), "evt-9");
	(void)snprintf(ev->subject, sizeof(ev->subject), "sub-9");
	(void)snprintf(ev->type, sizeof(ev->type), "%s", type);
	ev->version = 7;
	ev->occurred_ms = 1714557600123LL;
}

/* Restamps body with *ev; NULL (why filled) when refused. */
static char *
restamp(const struct mapping *m, const char *body,
    const struct mapping_event *ev, struct hdr *h, size_t *nh)
{
	static struct mapping_header	 mh[MAPPING_HEADERS_MAX];
	char				*out;
	size_t				 i;

	memset(why, JUNK, sizeof(why));
	why[sizeof(why) - 1] = '\0';
	out = mapping_restamp(m, body, strlen(body), ev, mh, nh, why,
	    sizeof(why));
	ck_assert_uint_le(*nh, MAPPING_HEADERS_MAX);
	for (i = 0; i < *nh; i++) {
		h[i].name = mh[i].name;
		h[i].value = mh[i].value;
	}
	h[*nh].name = NULL;
	return out;
}

static const char stamp_sample[] =
    "{\"type\":\"asset.approved\",\"data\":{\"asset_id\":\"a-1\","
    "\"version\":3,\"updated_at\":\"2024-05-01T10:00:00Z\","
    "\"tags\":[\"x\",{\"k\":null}]},\"extra\":true}";

START_TEST(test_restamp_example)
{
	struct mapping		*m;
	struct mapping_event	 in, ev;
	struct hdr		 h[MAPPING_HEADERS_MAX + 1];
	size_t			 nh;
	char			*out;

	m = mgood(example);
	stamp_event(&in, "");
	out = restamp(m, stamp_sample, &in, h, &nh);
	ck_assert_msg(out != NULL, "%s", why);
	/* The event id is read from a header: it goes there. */
	ck_assert_uint_eq(nh, 1);
	ck_assert_str_eq(h[0].name, "webhook-id");
	ck_assert_str_eq(h[0].value, "evt-9");
	ck_assert_msg(eval(m, out, h, &ev) == MAPPING_OK, "%s: %s", out, why);
	ck_assert_str_eq(ev.event_id, "evt-9");
	ck_assert_str_eq(ev.subject, "sub-9");
	ck_assert_int_eq(ev.version, 7);
	ck_assert_int_eq(ev.occurred_ms, 1714557600123LL);
	ck_assert_str_eq(ev.type, "asset.approved");
	ck_assert_int_eq(ev.effect, MAPPING_DO);
	ck_assert_str_eq(ev.step, "publish");
	/* Each kind kept; the rest of the body as it was. */
	ck_assert_str_eq(out, "{\"type\":\"asset.approved\",\"data\":"
	    "{\"asset_id\":\"sub-9\",\"version\":7,\"updated_at\":"
	    "\"2024-05-01T10:00:00.123Z\",\"tags\":[\"x\",{\"k\":null}]},"
	    "\"extra\":true}");
	free(out);

	/* A type given is written: here one that undoes. */
	stamp_event(&in, "asset.deleted");
	out = restamp(m, stamp_sample, &in, h, &nh);
	ck_assert_msg(out != NULL, "%s", why);
	ck_assert_int_eq(eval(m, out, h, &ev), MAPPING_OK);
	ck_assert_int_eq(ev.effect, MAPPING_UNDO);
	ck_assert_str_eq(ev.step, "unpublish");
	free(out);
	mapping_free(m);
}
END_TEST

/* Strings stay strings: a version of digits, epoch seconds of digits. */
START_TEST(test_restamp_kinds)
{
	static const struct {
		const char	*body;
		const char	*want;	/* in the output */
	} cases[] = {
		{ "{\"id\":\"e\",\"s\":\"a\",\"v\":\"3\",\"t\":\"go\","
		  "\"at\":\"1714557600\"}", "\"v\":\"7\"" },
		{ "{\"id\":\"e\",\"s\":\"a\",\"v\":3,\"t\":\"go\","
		  "\"at\":\"1714557600.5\"}", "\"at\":\"1714557600.123\"" },
		{ "{\"id\":\"e\",\"s\":\"a\",\"v\":3,\"t\":\"go\","
		  "\"at\":1714557600}", "\"at\":1714557600.123" },
		{ "{\"id\":\"e\",\"s\":\"a\",\"v\":3,\"t\":\"go\","
		  "\"at\":\"2024-05-01T12:00:00+02:00\"}",
		  "\"at\":\"2024-05-01T10:00:00.123Z\"" },
	};
	struct mapping		*m;
	struct mapping_event	 in, ev;
	struct hdr		 h[MAPPING_HEADERS_MAX + 1];
	size_t			 i, nh;
	char			*out;

	m = mgood("{\"destination\":\"d\",\"event_id\":\"/id\","
	    "\"subject\":\"/s\",\"version\":\"/v\",\"type\":\"/t\","
	    "\"occurred\":\"/at\",\"steps\":{\"p\":[\"go\"]}}");
	stamp_event(&in, "");
	for (i = 0; i < NELEM(cases); i++) {
		out = restamp(m, cases[i].body, &in, h, &nh);
		ck_assert_msg(out != NULL, "%s: %s", cases[i].body, why);
		ck_assert_uint_eq(nh, 0);
		ck_assert_msg(strstr(out, cases[i].want) != NULL, "%s: %s",
		    cases[i].body, out);
		ck_assert_msg(eval(m, out, NULL, &ev) == MAPPING_OK, "%s: %s",
		    out, why);
		ck_assert_str_eq(ev.event_id, "evt-9");
		ck_assert_int_eq(ev.version, 7);
		ck_assert_int_eq(ev.occurred_ms, 1714557600123LL);
		free(out);
	}
	mapping_free(m);
}
END_TEST

/* Every field in a header: all five go there, in the mapping's order. */
START_TEST(test_restamp_headers)
{
	struct mapping		*m;
	struct mapping_event	 in, ev;
	struct hdr		 h[MAPPING_HEADERS_MAX + 1];
	size_t			 nh;
	char			*out;

	m = mgood("{\"destination\":\"d\",\"event_id\":{\"header\":"
	    "\"X-Event-Id\"},\"subject\":{\"header\":\"x-subject\"},"
	    "\"version\":{\"header\":\"X-Version\"},\"type\":{\"header\":"
	    "\"X-TYPE\"},\"occurred\":{\"header\":\"x-time\"},"
	    "\"steps\":{\"publish\":[\"asset.approved\"]}}");
	stamp_event(&in, "asset.approved");
	out = restamp(m, "{\"a\":1}", &in, h, &nh);
	ck_assert_msg(out != NULL, "%s", why);
	ck_assert_str_eq(out, "{\"a\":1}");
	ck_assert_uint_eq(nh, 5);
	ck_assert_str_eq(h[0].name, "x-event-id");
	ck_assert_str_eq(h[4].name, "x-time");
	ck_assert_str_eq(h[4].value, "1714557600.123");
	ck_assert_msg(eval(m, out, h, &ev) == MAPPING_OK, "%s", why);
	ck_assert_str_eq(ev.subject, "sub-9");
	ck_assert_int_eq(ev.version, 7);
	ck_assert_int_eq(ev.occurred_ms, 1714557600123LL);
	free(out);
	mapping_free(m);
}
END_TEST

/*
 * A sample whose subject, event id and version are numbers: an id of
 * digits that reads back as itself stays a number, any other becomes a
 * string; a version keeps all its digits; all read back as written.
 */
START_TEST(test_restamp_numeric_ids)
{
	static const struct {
		const char	*id;
		const char	*json;	/* how the subject is written */
	} cases[] = {
		{ "77", "\"c~d\":77}" },
		{ "9007199254740991", "\"c~d\":9007199254740991}" },
		{ "9007199254740992", "\"c~d\":\"9007199254740992\"}" },
		{ "007", "\"c~d\":\"007\"}" },
		{ "acme", "\"c~d\":\"acme\"}" },
	};
	struct mapping		*m;
	struct mapping_event	 in, ev;
	struct hdr		 h[MAPPING_HEADERS_MAX + 1];
	size_t			 i, nh;
	char			*out;

	m = mgood(ptr_map);
	for (i = 0; i < NELEM(cases); i++) {
		stamp_event(&in, "");
		(void)snprintf(in.subject, sizeof(in.subject), "%s",
		    cases[i].id);
		(void)snprintf(in.event_id, sizeof(in.event_id), "e%s",
		    cases[i].id);
		/* Every digit of a version, where a double prints 15. */
		in.version = 9007199254740991LL - (int64_t)i;
		out = restamp(m, "{\"meta\":{\"ids\":[0,12]},"
		    "\"a/b\":{\"c~d\":34},\"list\":[{\"v\":1}],\"\":\"T\","
		    "\"obj\":{\"0\":{\"~1\":1}}}", &in, h, &nh);
		ck_assert_msg(out != NULL, "%s", why);
		ck_assert_msg(strstr(out, cases[i].json) != NULL, "%s", out);
		ck_assert_msg(eval(m, out, h, &ev) == MAPPING_OK, "%s", why);
		ck_assert_str_eq(ev.subject, cases[i].id);
		ck_assert_str_eq(ev.event_id, in.event_id);
		ck_assert_int_eq(ev.version, in.version);
		free(out);
	}
	mapping_free(m);
}
END_TEST

/* What a sample cannot be restamped for, named. */
START_TEST(test_restamp_bad)
{
	static const struct {
		const char	*body;
		const char	*why;
	} cases[] = {
		{ "{\"type\":\"asset.approved\",\"data\":{\"version\":3,"
		  "\"updated_at\":1}}", "subject: missing from the sample" },
		{ "{\"type\":\"asset.approved\",\"data\":{\"asset_id\":null,"
		  "\"version\":3,\"updated_at\":1}}",
		  "subject: missing from the sample" },
		{ "{\"type\":\"asset.approved\",\"data\":{\"asset_id\":true,"
		  "\"version\":3,\"updated_at\":1}}",
		  "subject: not a string or a number in the sample" },
		{ "{\"type\":\"asset.approved\",\"data\":{\"asset_id\":\"a\","
		  "\"version\":[3],\"updated_at\":1}}",
		  "version: not a string or a number in the sample" },
		{ "{\"type\":\"asset.approved\",\"data\":{\"asset_id\":\"a\","
		  "\"version\":3,\"updated_at\":{}}}",
		  "occurred: not a string or a number in the sample" },
		{ "[]", "body: not a JSON object" },
	};
	struct mapping		*m;
	struct mapping_event	 in;
	struct hdr		 h[MAPPING_HEADERS_MAX + 1];
	size_t			 i, nh;

	m = mgood(example);
	stamp_event(&in, "");
	for (i = 0; i < NELEM(cases); i++) {
		ck_assert_ptr_null(restamp(m, cases[i].body, &in, h, &nh));
		ck_assert_str_eq(why, cases[i].why);
	}
	mapping_free(m);
}
END_TEST

/* Each allocation failing in turn: "out of memory", nothing leaked. */
START_TEST(test_restamp_nomem)
{
	struct failnth		 f;
	struct mapping		*m;
	struct mapping_event	 in;
	struct hdr		 h[MAPPING_HEADERS_MAX + 1];
	size_t			 nh;
	char			*out;

	m = mgood(example);
	/* A longer subject than the sample's: its string is made anew. */
	stamp_event(&in, "");
	(void)snprintf(in.subject, sizeof(in.subject), "%s",
	    "a-subject-longer-than-the-sample-one");
	for (f.n = 0;; f.n++) {
		f.seen = 0;
		f.fired = 0;
		fault_set(FAULT_ALLOC, fail_nth, &f);
		out = restamp(m, stamp_sample, &in, h, &nh);
		fault_set(FAULT_ALLOC, NULL, NULL);
		if (!f.fired)
			break;
		ck_assert_ptr_null(out);
		ck_assert_msg(strstr(why, "out of memory") != NULL,
		    "allocation %ld: %s", f.n, why);
	}
	ck_assert_msg(out != NULL, "%s", why);
	ck_assert_ptr_nonnull(strstr(out, in.subject));
	ck_assert_msg(f.n >= 4, "only %ld allocations", f.n);
	free(out);
	mapping_free(m);
}
END_TEST

static Suite *
mapping_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("mapping");

	tc = tcase_create("file");
	tcase_add_test(tc, test_parse_example);
	tcase_add_test(tc, test_effect_names);
	tcase_add_loop_test(tc, test_bad, 0, (int)NELEM(badcases));
	tcase_add_loop_test(tc, test_bad_doc, 0, (int)NELEM(docases));
	tcase_add_test(tc, test_bad_order);
	tcase_add_test(tc, test_bad_lengths);
	tcase_add_test(tc, test_too_many_types);
	tcase_add_test(tc, test_text_max);
	tcase_add_test(tc, test_why_short);
	suite_add_tcase(s, tc);

	tc = tcase_create("text");
	tcase_add_loop_test(tc, test_roundtrip, 0, (int)NELEM(roundcases));
	tcase_add_test(tc, test_roundtrip_eval);
	suite_add_tcase(s, tc);

	tc = tcase_create("effect");
	tcase_add_test(tc, test_eval_do);
	tcase_add_test(tc, test_eval_undo);
	tcase_add_test(tc, test_eval_fanout);
	tcase_add_test(tc, test_fanout_max);
	tcase_add_test(tc, test_eval_ignore);
	tcase_add_test(tc, test_eval_no_version);
	tcase_add_test(tc, test_eval_no_event_id);
	tcase_add_test(tc, test_eval_ms_and_value);
	tcase_add_test(tc, test_form_body);
	suite_add_tcase(s, tc);

	tc = tcase_create("where");
	tcase_add_test(tc, test_eval_pointers);
	tcase_add_loop_test(tc, test_eval_missing, 0, (int)NELEM(missings));
	tcase_add_test(tc, test_eval_missing_each);
	tcase_add_test(tc, test_eval_headers);
	tcase_add_test(tc, test_eval_header_values);
	suite_add_tcase(s, tc);

	tc = tcase_create("values");
	tcase_add_loop_test(tc, test_eval_ids, 0, (int)NELEM(idcases));
	tcase_add_loop_test(tc, test_eval_numeric_ids, 0, (int)NELEM(numcases));
	tcase_add_test(tc, test_eval_id_kinds);
	tcase_add_test(tc, test_eval_id_max);
	tcase_add_loop_test(tc, test_eval_version, 0, (int)NELEM(vcases));
	tcase_add_loop_test(tc, test_eval_occurred, 0, (int)NELEM(tcases));
	suite_add_tcase(s, tc);

	tc = tcase_create("body");
	tcase_add_loop_test(tc, test_eval_body, 0, (int)NELEM(bodycases));
	tcase_add_test(tc, test_eval_len);
	tcase_add_test(tc, test_eval_no_echo);
	tcase_add_test(tc, test_eval_why_short);
	suite_add_tcase(s, tc);

	tc = tcase_create("restamp");
	tcase_add_test(tc, test_restamp_example);
	tcase_add_test(tc, test_restamp_kinds);
	tcase_add_test(tc, test_restamp_headers);
	tcase_add_test(tc, test_restamp_bad);
	tcase_add_test(tc, test_restamp_numeric_ids);
	tcase_add_test(tc, test_restamp_nomem);
	suite_add_tcase(s, tc);

	tc = tcase_create("nomem");
	tcase_add_loop_test(tc, test_nomem_parse, 0, (int)NELEM(nomemmaps));
	tcase_add_test(tc, test_nomem_text);
	tcase_add_loop_test(tc, test_nomem_eval, 0, (int)NELEM(nomembodies));
	tcase_add_test(tc, test_nomem_all);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	if (util_init() != 0)
		return 1;
	return test_run_pure(mapping_suite);
}
