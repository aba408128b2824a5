/*
 * provider/mapping.c: a provider's event format as configuration: the mapping
 * file's validation and canonical text, and its evaluation per request.
 *
 * Everything the operator wrote is checked once, in mapping_parse(), and
 * kept decoded (a pointer's reference tokens, the types with their
 * effect), so that mapping_eval() only walks the body and applies the
 * value rules.  A struct mapping is never written after it is made.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cJSON.h>
#include <sodium.h>

#include "base/fault.h"
#include "base/json.h"
#include "base/text.h"
#include "base/util.h"
#include "provider/form.h"
#include "provider/mapping.h"
#include "provider/scheme.h"

/* The fields, in the order of the file and of the canonical text. */
enum fid {
	F_EVENT_ID = 0,
	F_SUBJECT,
	F_VERSION,
	F_TYPE,
	F_OCCURRED,
	F__N
};

static const char *const fnames[F__N] = {
	[F_EVENT_ID] = "event_id",
	[F_SUBJECT] = "subject",
	[F_VERSION] = "version",
	[F_TYPE] = "type",
	[F_OCCURRED] = "occurred",
};

enum fkind {
	K_NONE = 0,	/* absent ("version" and "event_id" may be) */
	K_POINTER,	/* a JSON pointer into the body */
	K_HEADER,	/* a request header */
	K_VALUE		/* one value for every event ("type" alone) */
};

struct field {
	enum fkind	 kind;
	int		 ms;	/* "unit": "ms" ("occurred" alone) */
	char		*text;	/* the pointer as written, the header
				   name in lower case, or the value */
	char		*tok;	/* K_POINTER: its reference tokens,
				   decoded, each NUL-terminated, in a row */
	size_t		 ntok;
};

struct step {
	char			name[HB_ID_MAX + 1];
	char			dest[HB_ID_MAX + 1];	/* "": the mapping's */
	enum mapping_effect	effect;		/* MAPPING_DO or _UNDO */
};

/* A type, once for each step that names it (a fan-out's, in order). */
struct type {
	char			name[HB_ID_MAX + 1];
	enum mapping_effect	effect;
	size_t			step;		/* into steps[]; not when
						   ignored */
};

struct mapping {
	char		dest[HB_ID_MAX + 1];
	char		space[HB_ID_MAX + 1];	/* "": the endpoint's */
	int		keep_body;	/* "carry": false clears it */
	int		form;		/* "body": "form" */
	struct scheme	*scheme;	/* "signature"; NULL: none */
	struct field	f[F__N];
	/*
	 * Every step names a type at least, so there are never more steps
	 * than types.  Both in the order given: the canonical text lists
	 * them back so.
	 */
	struct step	steps[MAPPING_TYPES_MAX];
	size_t		nsteps;
	struct type	types[MAPPING_TYPES_MAX];
	size_t		ntypes;
};

/* 2^53 - 1: the largest integer every JSON reader holds exactly. */
#define VERSION_MAX	9007199254740991LL

/* What a value the operator chose may show of itself in a message. */
#define ECHO_MAX	48

/*
 * The mapping's own allocations pass the test build's FAULT_ALLOC as
 * cJSON's do, so that each of them is seen to fail as "out of memory".
 */
static void *
alloc(size_t n)
{
	return fault_fire(FAULT_ALLOC) ? NULL : malloc(n);
}

const char *
mapping_effect_name(enum mapping_effect e)
{
	switch (e) {
	case MAPPING_IGNORE:
		return "ignore";
	case MAPPING_DO:
		return "do";
	case MAPPING_UNDO:
		return "undo";
	}
	return "unknown";
}

/*
 * The mapping file
 */

static const char *const members[] = {
	"destination", "namespace", "event_id", "subject", "version", "type",
	"occurred", "steps", "undo", "ignore", "carry", "body", "signature"
};

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

int
mapping_reads_form(const struct mapping *m)
{
	return m->form;
}

int
mapping_reads_event_id(const struct mapping *m)
{
	return m->f[F_EVENT_ID].kind != K_NONE;
}

const struct scheme *
mapping_scheme(const struct mapping *m)
{
	return m->scheme;
}

const char *
mapping_unsigned_field(const struct mapping *m,
    const char *const *signed_headers, const char **header)
{
	const char *const	*s;
	size_t			 i;

	for (i = 0; i < F__N; i++) {
		if (m->f[i].kind != K_HEADER)
			continue;
		for (s = signed_headers; s != NULL && *s != NULL; s++)
			if (strcasecmp(*s, m->f[i].text) == 0)
				break;
		if (s != NULL && *s != NULL)
			continue;
		*header = m->f[i].text;
		return fnames[i];
	}
	return NULL;
}

/*
 * Decodes the pointer s (RFC 6901, "" or starting with '/') into its
 * reference tokens at tok, each NUL-terminated; tok holds strlen(s) + 1
 * bytes, always enough (a token is never longer than its text, and each
 * NUL takes the place of its '/').  Returns the number of tokens, or -1
 * when a '~' is not followed by '0' or '1'.
 */
static long
pointer_decode(const char *s, char *tok)
{
	long	n = 0;

	while (*s == '/') {
		s++;
		n++;
		for (; *s != '\0' && *s != '/'; s++) {
			if (*s != '~')
				*tok++ = *s;
			else if (s[1] == '0' || s[1] == '1')
				*tok++ = *++s == '0' ? '~' : '/';
			else
				return -1;
		}
		*tok++ = '\0';
	}
	return n;
}

/* A JSON pointer s into f (K_POINTER); why names the field. */
static enum mapping_err
parse_pointer(struct field *f, const char *name, const char *s, char *why,
    size_t whylen)
{
	size_t	len;
	long	n;

	if (s[0] != '\0' && s[0] != '/') {
		text_say(why, whylen, "%s: a JSON pointer is \"\" or starts with "
		    "\"/\"", name);
		return MAPPING_INVALID;
	}
	/* Shown by the tool and in logs: as clean as an id. */
	if (!text_valid_line(s, MAPPING_TEXT_MAX)) {
		text_say(why, whylen, "%s: not UTF-8 or has control characters",
		    name);
		return MAPPING_INVALID;
	}
	len = strlen(s);
	if ((f->text = alloc(2 * (len + 1))) == NULL) {
		text_say(why, whylen, "out of memory");
		return MAPPING_NOMEM;
	}
	memcpy(f->text, s, len + 1);
	f->tok = f->text + len + 1;
	if ((n = pointer_decode(s, f->tok)) < 0) {
		text_say(why, whylen, "%s: \"~\" not followed by \"0\" or \"1\" in "
		    "the JSON pointer", name);
		return MAPPING_INVALID;
	}
	f->ntok = (size_t)n;
	f->kind = K_POINTER;
	return MAPPING_OK;
}

/* A header name s into f (K_HEADER), kept in lower case. */
static enum mapping_err
parse_header(struct field *f, const char *name, const char *s, char *why,
    size_t whylen)
{
	char	buf[HB_ID_MAX + 1];

	/* Matched case-insensitively: one spelling, the canonical. */
	if (text_header_lower(buf, s) != 0) {
		text_say(why, whylen, "%s.header: not an HTTP header name "
		    "(1 to %d token characters)", name, HB_ID_MAX);
		return MAPPING_INVALID;
	}
	if ((f->text = alloc(strlen(buf) + 1)) == NULL) {
		text_say(why, whylen, "out of memory");
		return MAPPING_NOMEM;
	}
	memcpy(f->text, buf, strlen(buf) + 1);
	f->kind = K_HEADER;
	return MAPPING_OK;
}

/*
 * A field written as an object: {"header": NAME} or {"pointer": P},
 * for "occurred" with "unit": "s" or "ms"; for "type", {"value": TYPE}
 * (a provider that names its event only where its signature does not
 * reach, for an endpoint of one type).
 */
static enum mapping_err
parse_field_object(struct field *f, enum fid id, const cJSON *v, char *why,
    size_t whylen)
{
	const char	*name = fnames[id];
	const cJSON	*c, *where = NULL, *unit = NULL;

	for (c = v->child; c != NULL; c = c->next) {
		if (strcmp(c->string, "unit") == 0 && id == F_OCCURRED)
			unit = c;
		else if ((strcmp(c->string, "header") == 0 ||
		    strcmp(c->string, "pointer") == 0 ||
		    (strcmp(c->string, "value") == 0 && id == F_TYPE)) &&
		    where == NULL)
			where = c;
		else
			goto bad;
	}
	if (where == NULL)
		goto bad;
	if (!cJSON_IsString(where)) {
		text_say(why, whylen, "%s.%s: not a string", name, where->string);
		return MAPPING_INVALID;
	}
	if (unit != NULL) {
		if (!cJSON_IsString(unit) || (strcmp(unit->valuestring, "s") !=
		    0 && strcmp(unit->valuestring, "ms") != 0)) {
			text_say(why, whylen, "%s.unit: not s or ms", name);
			return MAPPING_INVALID;
		}
		f->ms = strcmp(unit->valuestring, "ms") == 0;
	}
	if (strcmp(where->string, "header") == 0)
		return parse_header(f, name, where->valuestring, why, whylen);
	if (strcmp(where->string, "pointer") == 0)
		return parse_pointer(f, name, where->valuestring, why, whylen);
	if (!text_valid_id(where->valuestring, HB_ID_MAX)) {
		text_say(why, whylen, "%s.value: not a valid type (1 to %d bytes of"
		    " UTF-8, no control characters)", name, HB_ID_MAX);
		return MAPPING_INVALID;
	}
	if ((f->text = alloc(strlen(where->valuestring) + 1)) == NULL) {
		text_say(why, whylen, "out of memory");
		return MAPPING_NOMEM;
	}
	memcpy(f->text, where->valuestring, strlen(where->valuestring) + 1);
	f->kind = K_VALUE;
	return MAPPING_OK;
bad:
	text_say(why, whylen, "%s: not a JSON pointer or {\"header\": NAME}%s",
	    name, id == F_OCCURRED ? ", with \"unit\" or not" : id == F_TYPE ?
	    ", or {\"value\": TYPE}" : "");
	return MAPPING_INVALID;
}

static enum mapping_err
parse_field(struct field *f, enum fid id, const cJSON *v, int optional,
    char *why, size_t whylen)
{
	if (v == NULL) {
		if (optional)
			return MAPPING_OK;
		text_say(why, whylen, "%s: missing", fnames[id]);
		return MAPPING_INVALID;
	}
	if (cJSON_IsObject(v))
		return parse_field_object(f, id, v, why, whylen);
	if (!cJSON_IsString(v)) {
		text_say(why, whylen, "%s: not a JSON pointer or {\"header\": NAME}",
		    fnames[id]);
		return MAPPING_INVALID;
	}
	return parse_pointer(f, fnames[id], v->valuestring, why, whylen);
}

/*
 * Adds the type at v; path names it ("steps.publish[1]").  A type another
 * step of the same list names already fans out, up to MAPPING_FANOUT_MAX
 * steps.
 */
static enum mapping_err
add_type(struct mapping *m, const cJSON *v, const char *member,
    const char *path, enum mapping_effect effect, size_t step, char *why,
    size_t whylen)
{
	struct type	*t;
	char		 echo[ECHO_MAX];
	size_t		 i, fan = 0;

	if (!cJSON_IsString(v)) {
		text_say(why, whylen, "%s: not a string", path);
		return MAPPING_INVALID;
	}
	if (!text_valid_id(v->valuestring, HB_ID_MAX)) {
		text_say(why, whylen, "%s: not a valid type (1 to %d bytes of "
		    "UTF-8, no control characters)", path, HB_ID_MAX);
		return MAPPING_INVALID;
	}
	for (i = 0; i < m->ntypes; i++) {
		t = &m->types[i];
		if (strcmp(t->name, v->valuestring) != 0)
			continue;
		if (t->effect != effect || effect == MAPPING_IGNORE ||
		    t->step == step) {
			text_say(why, whylen, "%s: \"%s\" is named twice",
			    member, text_escape(v->valuestring, (size_t)-1,
			    echo, sizeof(echo)));
			return MAPPING_INVALID;
		}
		if (++fan == MAPPING_FANOUT_MAX) {
			text_say(why, whylen, "%s: \"%s\" makes more than %d "
			    "steps", path, text_escape(v->valuestring,
			    (size_t)-1, echo, sizeof(echo)),
			    MAPPING_FANOUT_MAX);
			return MAPPING_INVALID;
		}
	}
	if (m->ntypes == MAPPING_TYPES_MAX) {
		text_say(why, whylen, "%s: more than %d types in the mapping",
		    member, MAPPING_TYPES_MAX);
		return MAPPING_INVALID;
	}
	t = &m->types[m->ntypes++];
	memcpy(t->name, v->valuestring, strlen(v->valuestring) + 1);
	t->effect = effect;
	t->step = step;
	return MAPPING_OK;
}

/*
 * A step's value, c (named c->string in member): its list of types, in
 * *types, and the destination an object names, in st->dest.
 */
static enum mapping_err
step_value(struct step *st, const cJSON *c, const char *member,
    const cJSON **types, char *why, size_t whylen)
{
	const cJSON	*k, *d;
	char		 echo[ECHO_MAX];

	*types = c;
	if (cJSON_IsObject(c)) {
		for (k = c->child; k != NULL; k = k->next)
			if (strcmp(k->string, "types") != 0 &&
			    strcmp(k->string, "destination") != 0) {
				text_say(why, whylen, "%s.%s: \"%s\": not a "
				    "member of a step (types, destination)",
				    member, c->string, text_escape(k->string,
				    (size_t)-1, echo, sizeof(echo)));
				return MAPPING_INVALID;
			}
		if ((*types = cJSON_GetObjectItemCaseSensitive(c, "types")) ==
		    NULL) {
			text_say(why, whylen, "%s.%s.types: missing", member,
			    c->string);
			return MAPPING_INVALID;
		}
		d = cJSON_GetObjectItemCaseSensitive(c, "destination");
		if (d != NULL && (!cJSON_IsString(d) ||
		    !text_valid_name(d->valuestring))) {
			text_say(why, whylen, "%s.%s.destination: not a valid "
			    "destination name", member, c->string);
			return MAPPING_INVALID;
		}
		if (d != NULL)
			memcpy(st->dest, d->valuestring,
			    strlen(d->valuestring) + 1);
	}
	if (!cJSON_IsArray(*types)) {
		text_say(why, whylen, "%s.%s%s: not an array", member,
		    c->string, *types != c ? ".types" : "");
		return MAPPING_INVALID;
	}
	if ((*types)->child == NULL) {
		text_say(why, whylen, "%s.%s: names no type", member,
		    c->string);
		return MAPPING_INVALID;
	}
	return MAPPING_OK;
}

/*
 * "steps" or "undo": an object of step names, each a list of types or an
 * object with the list and a destination (step_value()).
 */
static enum mapping_err
parse_steps(struct mapping *m, const cJSON *obj, const char *member,
    enum mapping_effect effect, char *why, size_t whylen)
{
	const cJSON		*c, *t, *types;
	struct step		*st;
	char			 path[2 * HB_ID_MAX], echo[ECHO_MAX];
	size_t			 i, k;
	enum mapping_err	 rc;

	if (!cJSON_IsObject(obj)) {
		text_say(why, whylen, "%s: not an object", member);
		return MAPPING_INVALID;
	}
	if (obj->child == NULL && effect == MAPPING_DO) {
		text_say(why, whylen, "%s: names no step", member);
		return MAPPING_INVALID;
	}
	for (c = obj->child; c != NULL; c = c->next) {
		if (!text_valid_name(c->string)) {
			text_say(why, whylen, "%s: \"%s\" is not a valid step name",
			    member, text_escape(c->string, (size_t)-1, echo,
			    sizeof(echo)));
			return MAPPING_INVALID;
		}
		/* An undo's step is its own: an action id names one. */
		for (i = 0; i < m->nsteps; i++)
			if (strcmp(m->steps[i].name, c->string) == 0) {
				text_say(why, whylen, "%s: \"%s\" is already a "
				    "step", member, c->string);
				return MAPPING_INVALID;
			}
		if (m->nsteps == MAPPING_TYPES_MAX) {
			text_say(why, whylen, "%s: more than %d types in the "
			    "mapping", member, MAPPING_TYPES_MAX);
			return MAPPING_INVALID;
		}
		st = &m->steps[m->nsteps];
		memset(st, 0, sizeof(*st));
		if ((rc = step_value(st, c, member, &types, why, whylen)) !=
		    MAPPING_OK)
			return rc;
		memcpy(st->name, c->string, strlen(c->string) + 1);
		st->effect = effect;
		for (k = 0, t = types->child; t != NULL; t = t->next, k++) {
			(void)snprintf(path, sizeof(path), "%s.%s%s[%zu]",
			    member, c->string, types != c ? ".types" : "", k);
			rc = add_type(m, t, member, path, effect, m->nsteps,
			    why, whylen);
			if (rc != MAPPING_OK)
				return rc;
		}
		m->nsteps++;
	}
	return MAPPING_OK;
}

static enum mapping_err
parse_ignore(struct mapping *m, const cJSON *arr, char *why, size_t whylen)
{
	const cJSON		*t;
	char			 path[32];
	size_t			 k;
	enum mapping_err	 rc;

	if (!cJSON_IsArray(arr)) {
		text_say(why, whylen, "ignore: not an array");
		return MAPPING_INVALID;
	}
	for (k = 0, t = arr->child; t != NULL; t = t->next, k++) {
		(void)snprintf(path, sizeof(path), "ignore[%zu]", k);
		rc = add_type(m, t, "ignore", path, MAPPING_IGNORE, 0, why,
		    whylen);
		if (rc != MAPPING_OK)
			return rc;
	}
	return MAPPING_OK;
}

/*
 * A member that is a name (text_valid_name()) into buf (HB_ID_MAX + 1
 * bytes); absent, "" when it is not required.  -1 with why filled.
 */
static int
name_member(const cJSON *doc, const char *member, int required, char *buf,
    char *why, size_t whylen)
{
	const cJSON	*c;

	buf[0] = '\0';
	if ((c = cJSON_GetObjectItemCaseSensitive(doc, member)) == NULL) {
		if (!required)
			return 0;
		text_say(why, whylen, "%s: missing", member);
		return -1;
	}
	if (!cJSON_IsString(c)) {
		text_say(why, whylen, "%s: not a string", member);
		return -1;
	}
	if (!text_valid_name(c->valuestring)) {
		text_say(why, whylen, "%s: not a valid name", member);
		return -1;
	}
	memcpy(buf, c->valuestring, strlen(c->valuestring) + 1);
	return 0;
}

static enum mapping_err
parse_doc(struct mapping *m, const cJSON *doc, char *why, size_t whylen)
{
	const cJSON		*c;
	char			 echo[ECHO_MAX];
	size_t			 i;
	int			 nomem;
	enum mapping_err	 rc;

	/* A misspelt member is named as such, not as another missing. */
	for (c = doc->child; c != NULL; c = c->next) {
		for (i = 0; i < NELEM(members); i++)
			if (strcmp(c->string, members[i]) == 0)
				break;
		if (i == NELEM(members)) {
			text_say(why, whylen, "\"%s\": not a member of a mapping",
			    text_escape(c->string, (size_t)-1, echo,
			    sizeof(echo)));
			return MAPPING_INVALID;
		}
	}

	if (name_member(doc, "destination", 1, m->dest, why, whylen) != 0 ||
	    name_member(doc, "namespace", 0, m->space, why, whylen) != 0)
		return MAPPING_INVALID;
	m->keep_body = 1;
	if ((c = cJSON_GetObjectItemCaseSensitive(doc, "carry")) != NULL) {
		if (!cJSON_IsBool(c)) {
			text_say(why, whylen, "carry: not true or false");
			return MAPPING_INVALID;
		}
		m->keep_body = cJSON_IsTrue(c);
	}
	if ((c = cJSON_GetObjectItemCaseSensitive(doc, "body")) != NULL) {
		if (!cJSON_IsString(c) || (strcmp(c->valuestring, "json") != 0 &&
		    strcmp(c->valuestring, "form") != 0)) {
			text_say(why, whylen, "body: not json or form");
			return MAPPING_INVALID;
		}
		m->form = strcmp(c->valuestring, "form") == 0;
	}

	for (i = 0; i < F__N; i++) {
		c = cJSON_GetObjectItemCaseSensitive(doc, fnames[i]);
		rc = parse_field(&m->f[i], (enum fid)i, c, i == F_VERSION ||
		    i == F_EVENT_ID, why, whylen);
		if (rc != MAPPING_OK)
			return rc;
	}

	if ((c = cJSON_GetObjectItemCaseSensitive(doc, "steps")) == NULL) {
		text_say(why, whylen, "steps: missing");
		return MAPPING_INVALID;
	}
	if ((rc = parse_steps(m, c, "steps", MAPPING_DO, why, whylen)) !=
	    MAPPING_OK)
		return rc;
	if ((c = cJSON_GetObjectItemCaseSensitive(doc, "undo")) != NULL &&
	    (rc = parse_steps(m, c, "undo", MAPPING_UNDO, why, whylen)) !=
	    MAPPING_OK)
		return rc;
	if ((c = cJSON_GetObjectItemCaseSensitive(doc, "ignore")) != NULL &&
	    (rc = parse_ignore(m, c, why, whylen)) != MAPPING_OK)
		return rc;
	if ((c = cJSON_GetObjectItemCaseSensitive(doc, "signature")) != NULL &&
	    (m->scheme = scheme_parse(c, why, whylen, &nomem)) == NULL)
		return nomem ? MAPPING_NOMEM : MAPPING_INVALID;
	return MAPPING_OK;
}

struct mapping *
mapping_parse(const char *text, size_t len, char *why, size_t whylen)
{
	struct mapping		*m = NULL;
	cJSON			*doc = NULL;
	enum json_status	 js;
	char			 key[33];

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (len > MAPPING_TEXT_MAX) {
		text_say(why, whylen, "mapping: longer than %d bytes",
		    MAPPING_TEXT_MAX);
		return NULL;
	}
	/* The operator's file is held to what a provider's body is. */
	switch ((js = json_parse_strict(text, len, &doc, key, sizeof(key)))) {
	case JSON_OK:
		break;
	case JSON_NOMEM:
		text_say(why, whylen, "out of memory");
		return NULL;
	case JSON_DUPKEY:
		if (key[0] != '\0')
			text_say(why, whylen, "\"%s\": named twice", key);
		else
			text_say(why, whylen, "mapping: a key is named twice");
		return NULL;
	default:
		text_say(why, whylen, "mapping: %s", json_strerror(js));
		return NULL;
	}
	if (!cJSON_IsObject(doc)) {
		text_say(why, whylen, "mapping: not a JSON object");
		goto fail;
	}
	if ((m = alloc(sizeof(*m))) == NULL) {
		text_say(why, whylen, "out of memory");
		goto fail;
	}
	memset(m, 0, sizeof(*m));
	if (parse_doc(m, doc, why, whylen) != MAPPING_OK)
		goto fail;
	cJSON_Delete(doc);
	return m;
fail:
	mapping_free(m);
	cJSON_Delete(doc);
	return NULL;
}

void
mapping_free(struct mapping *m)
{
	size_t	i;

	if (m == NULL)
		return;
	scheme_free(m->scheme);
	for (i = 0; i < F__N; i++)
		free(m->f[i].text);
	free(m);
}

const char *
mapping_destination(const struct mapping *m)
{
	return m->dest;
}

const char *
mapping_destination_at(const struct mapping *m, size_t i)
{
	size_t	k;

	if (i == 0)
		return m->dest;
	for (k = 0; k < m->nsteps; k++)
		if (m->steps[k].dest[0] != '\0' && --i == 0)
			return m->steps[k].dest;
	return NULL;
}

const char *
mapping_namespace(const struct mapping *m)
{
	return m->space[0] != '\0' ? m->space : NULL;
}

int
mapping_carries_body(const struct mapping *m)
{
	return m->keep_body;
}

/*
 * The canonical text
 */

static void
put_list(struct json_out *o, const struct mapping *m, enum mapping_effect e,
    size_t step)
{
	size_t	i;
	int	first = 1;

	json_out_raw(o, "[");
	for (i = 0; i < m->ntypes; i++) {
		if (m->types[i].effect != e || (e != MAPPING_IGNORE &&
		    m->types[i].step != step))
			continue;
		if (!first)
			json_out_raw(o, ",");
		json_out_str(o, m->types[i].name);
		first = 0;
	}
	json_out_raw(o, "]");
}

static void
put_steps(struct json_out *o, const struct mapping *m, enum mapping_effect e,
    const char *member)
{
	size_t	i;
	int	first = 1;

	for (i = 0; i < m->nsteps; i++) {
		if (m->steps[i].effect != e)
			continue;
		if (first) {
			json_out_raw(o, ",\"");
			json_out_raw(o, member);
			json_out_raw(o, "\":{");
		} else
			json_out_raw(o, ",");
		json_out_str(o, m->steps[i].name);
		/* A step with a destination of its own is an object. */
		if (m->steps[i].dest[0] != '\0') {
			json_out_raw(o, ":{\"types\":");
			put_list(o, m, e, i);
			json_out_raw(o, ",\"destination\":");
			json_out_str(o, m->steps[i].dest);
			json_out_raw(o, "}");
		} else {
			json_out_raw(o, ":");
			put_list(o, m, e, i);
		}
		first = 0;
	}
	if (!first)
		json_out_raw(o, "}");
}

char *
mapping_text(const struct mapping *m)
{
	struct json_out	 o;
	size_t		 i, len;
	char		*sig = NULL;

	/*
	 * json_put_string() needs at most 6 bytes a byte and its quotes;
	 * 16 bytes an item more cover every member name, colon and comma.
	 */
	len = 256 + 6 * (strlen(m->dest) + strlen(m->space)) + 32;
	for (i = 0; i < F__N; i++)
		if (m->f[i].text != NULL)
			len += 6 * strlen(m->f[i].text) + 16;
	for (i = 0; i < m->nsteps; i++)
		len += 6 * (strlen(m->steps[i].name) +
		    strlen(m->steps[i].dest)) + 48;
	for (i = 0; i < m->ntypes; i++)
		len += 6 * strlen(m->types[i].name) + 16;
	if (m->scheme != NULL) {
		if ((sig = scheme_text(m->scheme)) == NULL)
			return NULL;
		len += strlen(sig) + 16;
	}
	if ((o.buf = alloc(len)) == NULL) {
		free(sig);
		return NULL;
	}
	o.len = len;
	o.off = 0;
	o.ok = 1;
	o.buf[0] = '\0';

	json_out_raw(&o, "{\"destination\":");
	json_out_str(&o, m->dest);
	if (m->space[0] != '\0') {
		json_out_raw(&o, ",\"namespace\":");
		json_out_str(&o, m->space);
	}
	for (i = 0; i < F__N; i++) {
		if (m->f[i].kind == K_NONE)
			continue;
		json_out_raw(&o, ",\"");
		json_out_raw(&o, fnames[i]);
		json_out_raw(&o, "\":");
		if (m->f[i].kind == K_POINTER && !m->f[i].ms) {
			json_out_str(&o, m->f[i].text);
			continue;
		}
		json_out_raw(&o, m->f[i].kind == K_HEADER ? "{\"header\":" :
		    m->f[i].kind == K_VALUE ? "{\"value\":" : "{\"pointer\":");
		json_out_str(&o, m->f[i].text);
		json_out_raw(&o, m->f[i].ms ? ",\"unit\":\"ms\"}" : "}");
	}
	put_steps(&o, m, MAPPING_DO, "steps");
	put_steps(&o, m, MAPPING_UNDO, "undo");
	for (i = 0; i < m->ntypes; i++)
		if (m->types[i].effect == MAPPING_IGNORE) {
			json_out_raw(&o, ",\"ignore\":");
			put_list(&o, m, MAPPING_IGNORE, 0);
			break;
		}
	/* The default, true, is not written: texts before it stay. */
	if (!m->keep_body)
		json_out_raw(&o, ",\"carry\":false");
	if (m->form)
		json_out_raw(&o, ",\"body\":\"form\"");
	if (sig != NULL) {
		json_out_raw(&o, ",\"signature\":");
		json_out_raw(&o, sig);
		free(sig);
	}
	json_out_raw(&o, "}");
	/* Cannot happen: the size above is a bound. */
	if (!o.ok) {
		free(o.buf);
		return NULL;
	}
	return o.buf;
}

/*
 * Evaluation
 */

/*
 * The body, which must be one JSON object (json_parse_body()), or for a
 * mapping of forms a form (provider/form.h), read as an object of its
 * fields, each a string, in their order.
 */
static enum mapping_err
parse_body(const struct mapping *m, const char *body, size_t len,
    cJSON **out, char *why, size_t whylen)
{
	static const enum mapping_err	rc[] = {
		[JSON_BODY_OK] = MAPPING_OK,
		[JSON_BODY_NOT_JSON] = MAPPING_NOT_JSON,
		[JSON_BODY_INVALID] = MAPPING_INVALID,
		[JSON_BODY_NOMEM] = MAPPING_NOMEM,
	};
	struct form	f;
	enum form_err	fe;
	size_t		i;

	if (!m->form)
		return rc[json_parse_body(body, len, out, why, whylen)];
	*out = NULL;
	if ((fe = form_parse(body, len, &f, why, whylen)) != FORM_OK)
		return fe == FORM_NOMEM ? MAPPING_NOMEM : MAPPING_INVALID;
	if ((*out = cJSON_CreateObject()) != NULL)
		for (i = 0; i < f.n; i++)
			if (cJSON_AddStringToObject(*out, f.f[i].name,
			    f.f[i].value) == NULL) {
				cJSON_Delete(*out);
				*out = NULL;
				break;
			}
	form_free(&f);
	if (*out == NULL) {
		text_say(why, whylen, "out of memory");
		return MAPPING_NOMEM;
	}
	return MAPPING_OK;
}

/* A form's fields written back, in their order (all strings). */
static char *
form_of(const cJSON *doc)
{
	struct form_field	 f[FORM_FIELDS_MAX];
	const cJSON		*c;
	size_t			 n = 0;

	for (c = doc->child; c != NULL && n < FORM_FIELDS_MAX; c = c->next) {
		if (!cJSON_IsString(c))
			return NULL;
		f[n].name = c->string;
		f[n++].value = c->valuestring;
	}
	return form_encode(f, n);
}

/* An array index as RFC 6901 writes one: decimal, no leading zero. */
static int
array_index(const char *t, int *out)
{
	size_t	i, n = strlen(t);
	int	v = 0;

	/* No body holds a billion items; "-" (past the end) is no index. */
	if (n == 0 || n > 9 || (t[0] == '0' && n > 1))
		return -1;
	for (i = 0; i < n; i++) {
		if (t[i] < '0' || t[i] > '9')
			return -1;
		v = v * 10 + (t[i] - '0');
	}
	*out = v;
	return 0;
}

/*
 * What a field found: s, a string (body or header); j, the JSON value in
 * the body (a string too).
 */
struct value {
	const char	*s;
	const cJSON	*j;
};

/*
 * Finds field f of a request.  Returns 0, or -1 when it is missing: a
 * pointer that leads nowhere or to null, a header the request lacks.
 */
static int
resolve(const struct field *f, const cJSON *doc, mapping_header_fn hdr,
    void *arg, struct value *v)
{
	const cJSON	*j = doc;
	const char	*t;
	size_t		 i;
	int		 k;

	v->s = NULL;
	v->j = NULL;
	if (f->kind == K_VALUE) {
		v->s = f->text;
		return 0;
	}
	if (f->kind == K_HEADER) {
		if (hdr == NULL || (v->s = hdr(arg, f->text)) == NULL)
			return -1;
		return 0;
	}
	for (i = 0, t = f->tok; i < f->ntok; i++, t += strlen(t) + 1) {
		if (cJSON_IsObject(j))
			j = cJSON_GetObjectItemCaseSensitive(j, t);
		else if (cJSON_IsArray(j) && array_index(t, &k) == 0)
			j = cJSON_GetArrayItem(j, k);
		else
			return -1;
		if (j == NULL)
			return -1;
	}
	if (cJSON_IsNull(j))
		return -1;
	if (cJSON_IsString(j))
		v->s = j->valuestring;
	v->j = j;
	return 0;
}

/* A JSON number that is an integer from 0 to 2^53 - 1: 0, else -1. */
static int
json_uint53(const cJSON *j, int64_t *out)
{
	double	d;

	if (!cJSON_IsNumber(j))
		return -1;
	d = j->valuedouble;
	/* In range first: a double past int64_t does not convert. */
	if (!(d >= 0 && d <= (double)VERSION_MAX) || (double)(int64_t)d != d)
		return -1;
	*out = (int64_t)d;
	return 0;
}

/*
 * An id: a string, or for the event id and the subject a JSON integer
 * from 0 to 2^53 - 1, read as its decimal text (GitHub numbers its
 * objects).  A larger one is refused: cJSON holds a double, and its text
 * would not be the sender's number.
 */
static enum mapping_err
get_id(const struct value *v, const char *name, int numeric, char *dst,
    char *why, size_t whylen)
{
	int64_t	n;

	if (v->s == NULL && numeric && cJSON_IsNumber(v->j)) {
		if (json_uint53(v->j, &n) != 0) {
			text_say(why, whylen, "%s: a number, but not an integer"
			    " from 0 to 2^53 - 1", name);
			return MAPPING_INVALID;
		}
		(void)snprintf(dst, HB_ID_MAX + 1, "%lld", (long long)n);
		return MAPPING_OK;
	}
	if (v->s == NULL) {
		text_say(why, whylen, "%s: not a string%s", name, numeric ?
		    " or an integer" : "");
		return MAPPING_INVALID;
	}
	if (!text_valid_id(v->s, HB_ID_MAX)) {
		text_say(why, whylen, "%s: %s", name, v->s[0] == '\0' ? "empty" :
		    "too long, not UTF-8 or has control characters");
		return MAPPING_INVALID;
	}
	memcpy(dst, v->s, strlen(v->s) + 1);
	return MAPPING_OK;
}

static int
digit(char c)
{
	return c >= '0' && c <= '9';
}

/* s is 1 to 16 decimal digits, 0 to 2^53 - 1: 0 with *out, else -1. */
static int
text_uint53(const char *s, int64_t *out)
{
	const char	*p;
	int64_t		 n = 0;

	for (p = s; digit(*p) && p - s < 16; p++)
		n = n * 10 + (*p - '0');
	if (p == s || *p != '\0' || n > VERSION_MAX)
		return -1;
	*out = n;
	return 0;
}

/*
 * A JSON integer or a string of at most 16 digits, 0 to 2^53 - 1.
 * XXX cJSON keeps a number as a double only: from 2^52 on, a fraction
 * of one half rounds to an integer and is not seen.
 */
static enum mapping_err
get_version(const struct value *v, int64_t *out, char *why, size_t whylen)
{
	int64_t	n;

	if (v->s != NULL ? text_uint53(v->s, &n) != 0 :
	    json_uint53(v->j, &n) != 0)
		goto bad;
	*out = n;
	return MAPPING_OK;
bad:
	text_say(why, whylen, "version: not an integer");
	return MAPPING_INVALID;
}

/*
 * A string is epoch seconds when it has only digits and dots, else RFC
 * 3339's date-time (base/util.h has each form's bounds).
 */
static enum mapping_err
get_occurred(const struct value *v, int ms, int64_t *out, char *why,
    size_t whylen)
{
	enum util_time	r;
	double		d;
	int64_t		n;

	if (ms) {
		/* Epoch milliseconds: an integer, as a number or digits. */
		r = UTIL_TIME_INVALID;
		if (v->s != NULL ? text_uint53(v->s, &n) == 0 :
		    json_uint53(v->j, &n) == 0)
			r = n < UTIL_TIME_END_S * 1000 ? UTIL_TIME_OK :
			    UTIL_TIME_RANGE;
		if (r == UTIL_TIME_OK)
			*out = n;
		else if (r == UTIL_TIME_INVALID) {
			text_say(why, whylen, "occurred: not epoch milliseconds");
			return MAPPING_INVALID;
		}
	} else if (v->s != NULL)
		r = v->s[strspn(v->s, "0123456789.")] == '\0' ?
		    util_parse_epoch(v->s, out) :
		    util_parse_datetime(v->s, UTIL_DT_RFC3339, out);
	else if (cJSON_IsNumber(v->j)) {
		/*
		 * A JSON number is a double, a few hundred nanoseconds off
		 * the decimal written: the nearest millisecond is the one
		 * meant when the sender wrote milliseconds.
		 */
		d = v->j->valuedouble;
		r = UTIL_TIME_RANGE;
		if (d >= 0 && d < (double)UTIL_TIME_END_S) {
			*out = (int64_t)(d * 1000.0 + 0.5);
			if (*out < UTIL_TIME_END_S * 1000)
				r = UTIL_TIME_OK;
		}
	} else
		r = UTIL_TIME_INVALID;
	if (r == UTIL_TIME_INVALID)
		text_say(why, whylen, "occurred: not an RFC 3339 date-time or "
		    "epoch seconds");
	else if (r == UTIL_TIME_RANGE)
		text_say(why, whylen, "occurred: before 1970 or after 9999");
	return r == UTIL_TIME_OK ? MAPPING_OK : MAPPING_INVALID;
}

/*
 * The identity of an event its provider names none for: "hb-" and the
 * hex of a BLAKE2b-128 of its type, subject and version, each ended by
 * a NUL (neither a type nor a subject holds one), so that a resent event
 * is one receipt and any other event another.
 */
static void
derive_id(struct mapping_event *ev)
{
	crypto_generichash_state	st;
	unsigned char			h[16];
	char				v[24];

	(void)snprintf(v, sizeof(v), "%lld", (long long)ev->version);
	(void)crypto_generichash_init(&st, NULL, 0, sizeof(h));
	(void)crypto_generichash_update(&st, (const unsigned char *)ev->type,
	    strlen(ev->type) + 1);
	(void)crypto_generichash_update(&st,
	    (const unsigned char *)ev->subject, strlen(ev->subject) + 1);
	(void)crypto_generichash_update(&st, (const unsigned char *)v,
	    strlen(v) + 1);
	(void)crypto_generichash_final(&st, h, sizeof(h));
	memcpy(ev->event_id, "hb-", 3);
	sodium_bin2hex(ev->event_id + 3, sizeof(ev->event_id) - 3, h,
	    sizeof(h));
}

enum mapping_err
mapping_eval(const struct mapping *m, const char *body, size_t len,
    mapping_header_fn hdr, void *arg, struct mapping_event *out, char *why,
    size_t whylen)
{
	struct mapping_event	 ev;
	struct value		 v;
	const struct type	*t;
	const struct step	*st;
	cJSON			*doc = NULL;
	size_t			 i;
	enum mapping_err	 rc;

	memset(out, 0, sizeof(*out));
	memset(&ev, 0, sizeof(ev));
	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if ((rc = parse_body(m, body, len, &doc, why, whylen)) != MAPPING_OK)
		return rc;
	for (i = 0; i < F__N; i++) {
		if (m->f[i].kind == K_NONE)
			continue;
		if (resolve(&m->f[i], doc, hdr, arg, &v) != 0) {
			text_say(why, whylen, "%s: missing", fnames[i]);
			rc = MAPPING_INVALID;
			goto out;
		}
		switch (i) {
		case F_EVENT_ID:
			rc = get_id(&v, fnames[i], 1, ev.event_id, why,
			    whylen);
			break;
		case F_SUBJECT:
			rc = get_id(&v, fnames[i], 1, ev.subject, why,
			    whylen);
			break;
		case F_TYPE:
			rc = get_id(&v, fnames[i], 0, ev.type, why, whylen);
			break;
		case F_VERSION:
			rc = get_version(&v, &ev.version, why, whylen);
			break;
		default:
			rc = get_occurred(&v, m->f[i].ms, &ev.occurred_ms, why,
			    whylen);
			break;
		}
		if (rc != MAPPING_OK)
			goto out;
	}
	/* A provider that numbers nothing: its clock orders the events. */
	if (m->f[F_VERSION].kind == K_NONE)
		ev.version = ev.occurred_ms;
	/* One that names no event: the event is what it says. */
	if (m->f[F_EVENT_ID].kind == K_NONE)
		derive_id(&ev);
	/* Every step its type makes, in the order the mapping names them. */
	for (i = 0; i < m->ntypes; i++) {
		t = &m->types[i];
		if (t->effect == MAPPING_IGNORE || strcmp(t->name, ev.type) != 0)
			continue;
		ev.effect = t->effect;
		st = &m->steps[t->step];
		memcpy(ev.steps[ev.nsteps].name, st->name, sizeof(st->name));
		memcpy(ev.steps[ev.nsteps].destination, st->dest[0] != '\0' ?
		    st->dest : m->dest, sizeof(st->dest));
		ev.nsteps++;
	}
	if (ev.nsteps > 0)
		memcpy(ev.step, ev.steps[0].name, sizeof(ev.step));
	*out = ev;
out:
	cJSON_Delete(doc);
	return rc;
}

/*
 * Restamping a sample
 */

/*
 * Field f of *ev as text, as a sample writes it as a string: the
 * occurrence in epoch seconds when the sample's is digits (digits is 1;
 * in milliseconds when ms is), else in RFC 3339.  -1 when the time
 * cannot be written.
 */
static int
stamp_text(enum fid f, const struct mapping_event *ev, int digits,
    int ms_unit, char *buf, size_t len)
{
	struct tm	tm;
	time_t		t;
	int64_t		ms = ev->occurred_ms;

	switch (f) {
	case F_EVENT_ID:
		(void)snprintf(buf, len, "%s", ev->event_id);
		return 0;
	case F_SUBJECT:
		(void)snprintf(buf, len, "%s", ev->subject);
		return 0;
	case F_TYPE:
		(void)snprintf(buf, len, "%s", ev->type);
		return 0;
	case F_VERSION:
		(void)snprintf(buf, len, "%lld", (long long)ev->version);
		return 0;
	default:
		break;
	}
	if (digits && ms_unit) {
		(void)snprintf(buf, len, "%lld", (long long)ms);
		return 0;
	}
	if (digits) {
		(void)snprintf(buf, len, "%lld.%03d", (long long)(ms / 1000),
		    (int)(ms % 1000));
		return 0;
	}
	t = (time_t)(ms / 1000);
	if (gmtime_r(&t, &tm) == NULL)
		return -1;
	(void)snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)(ms % 1000));
	return 0;
}

/*
 * Makes j a node of kind (cJSON_CreateString or cJSON_CreateRaw) holding
 * text, in place.  A raw node prints its text as it is: an integer is
 * written digit for digit, where cJSON's own printing of a double keeps
 * fifteen significant digits.  Returns 0, or -2 when out of memory.
 */
static int
stamp_node(cJSON *j, cJSON *(*kind)(const char *), const char *text)
{
	cJSON	*n;

	if ((n = kind(text)) == NULL)
		return -2;
	if (!(j->type & cJSON_IsReference))
		cJSON_free(j->valuestring);
	j->type = n->type;
	j->valuestring = n->valuestring;
	n->valuestring = NULL;
	cJSON_Delete(n);
	return 0;
}

/* An integer written over a number of the sample, as its digits. */
static int
stamp_integer(cJSON *j, int64_t n)
{
	char	text[24];

	(void)snprintf(text, sizeof(text), "%lld", (long long)n);
	return stamp_node(j, cJSON_CreateRaw, text);
}

/*
 * An id written over a number of the sample: a number still when it is
 * one of digits that get_id() reads back as itself (no leading zero),
 * else a string (the id fields read either).
 */
static int
stamp_number_id(cJSON *j, const char *id)
{
	int64_t	n;

	if (text_uint53(id, &n) == 0 && (id[0] != '0' || id[1] == '\0'))
		return stamp_integer(j, n);
	return stamp_node(j, cJSON_CreateString, id);
}

/*
 * Writes field f of *ev over the sample's value j, keeping its kind where
 * the value fits it.  Returns 0; -1 for a value of the wrong kind (why
 * filled), -2 when out of memory.
 */
static int
stamp(cJSON *j, enum fid f, int ms, const struct mapping_event *ev,
    char *why, size_t whylen)
{
	char	buf[HB_ID_MAX + 1];

	if (cJSON_IsNumber(j) && f == F_VERSION)
		return stamp_integer(j, ev->version);
	if (cJSON_IsNumber(j) && f == F_OCCURRED && ms)
		return stamp_integer(j, ev->occurred_ms);
	if (cJSON_IsNumber(j) && f == F_OCCURRED) {
		(void)cJSON_SetNumberHelper(j, (double)ev->occurred_ms / 1000.0);
		return 0;
	}
	if (cJSON_IsNumber(j) && (f == F_EVENT_ID || f == F_SUBJECT))
		return stamp_number_id(j, f == F_EVENT_ID ? ev->event_id :
		    ev->subject);
	if (!cJSON_IsString(j) || (j->type & cJSON_IsReference) != 0) {
		text_say(why, whylen, "%s: not a string%s in the sample", fnames[f],
		    f == F_TYPE ? "" : " or a number");
		return -1;
	}
	if (stamp_text(f, ev, j->valuestring[strspn(j->valuestring,
	    "0123456789.")] == '\0', ms, buf, sizeof(buf)) != 0) {
		text_say(why, whylen, "%s: cannot be written", fnames[f]);
		return -1;
	}
	return cJSON_SetValuestring(j, buf) != NULL ? 0 : -2;
}

char *
mapping_restamp(const struct mapping *m, const char *body, size_t len,
    const struct mapping_event *ev, struct mapping_header *hdrs,
    size_t *nhdrs, char *why, size_t whylen)
{
	struct value	 v;
	cJSON		*doc = NULL;
	char		*out = NULL;
	enum fid	 f;
	int		 rc;

	*nhdrs = 0;
	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (parse_body(m, body, len, &doc, why, whylen) != MAPPING_OK)
		return NULL;
	for (f = 0; f < F__N; f++) {
		if (m->f[f].kind == K_NONE || m->f[f].kind == K_VALUE ||
		    (f == F_TYPE && ev->type[0] == '\0'))
			continue;
		if (m->f[f].kind == K_HEADER) {
			memcpy(hdrs[*nhdrs].name, m->f[f].text,
			    strlen(m->f[f].text) + 1);
			/* Epoch seconds: no header value needs a date. */
			(void)stamp_text(f, ev, 1, m->f[f].ms,
			    hdrs[*nhdrs].value, sizeof(hdrs[*nhdrs].value));
			(*nhdrs)++;
			continue;
		}
		if (resolve(&m->f[f], doc, NULL, NULL, &v) != 0) {
			text_say(why, whylen, "%s: missing from the sample",
			    fnames[f]);
			goto out;
		}
		/* The document is ours: its values may be written. */
		if ((rc = stamp((cJSON *)(uintptr_t)v.j, f, m->f[f].ms, ev,
		    why, whylen)) != 0) {
			if (rc == -2)
				text_say(why, whylen, "out of memory");
			goto out;
		}
	}
	if ((out = m->form ? form_of(doc) : cJSON_PrintUnformatted(doc)) ==
	    NULL)
		text_say(why, whylen, "out of memory");
out:
	cJSON_Delete(doc);
	return out;
}
