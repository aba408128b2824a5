/*
 * base/json.c: strict parsing of outside bytes, and cJSON's allocation hooks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "base/fault.h"
#include "base/json.h"
#include "base/text.h"

/*
 * Set by the allocation hook when an allocation fails on this thread;
 * cleared by each parse before it starts.  Thread-local because cJSON's
 * hooks are process-global while parses may run on several threads.
 */
static _Thread_local int	nomem;

static void *
json_alloc(size_t n)
{
	void	*p;

	p = fault_fire(FAULT_ALLOC) ? NULL : malloc(n);
	if (p == NULL)
		nomem = 1;
	return p;
}

static void
json_dealloc(void *p)
{
	free(p);
}

void
json_init(void)
{
	/*
	 * With its own malloc cJSON never calls realloc: it allocates and
	 * copies instead, so every allocation passes json_alloc().
	 */
	static cJSON_Hooks	hooks = { json_alloc, json_dealloc };

	cJSON_InitHooks(&hooks);
}

const char *
json_strerror(enum json_status s)
{
	switch (s) {
	case JSON_OK:
		return "ok";
	case JSON_SYNTAX:
		return "not JSON";
	case JSON_CONTROL:
		return "raw control byte (below 0x20) in a string or between "
		    "tokens";
	case JSON_NUL:
		return "a string contains \\u0000";
	case JSON_DUPKEY:
		return "duplicate key";
	case JSON_NOMEM:
		return "out of memory";
	}
	return "unknown error";
}

/* JSON's white space (RFC 8259 section 2). */
static int
is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * The byte rules cJSON does not apply, in one pass over the raw body.
 * Strings are followed by their quotes, an escape skipped with the byte
 * after it, exactly as cJSON delimits them; so for any body cJSON accepts
 * "inside a string" here means inside one there.  Bodies cJSON would
 * refuse anyway may be refused here for another reason: all are malformed.
 */
static enum json_status
scan(const unsigned char *b, size_t len)
{
	size_t	i;
	int	in = 0;

	for (i = 0; i < len; i++) {
		if (!in) {
			if (b[i] == '"')
				in = 1;
			else if (b[i] < 0x20 && !is_ws(b[i]))
				return JSON_CONTROL;
			continue;
		}
		if (b[i] == '"')
			in = 0;
		else if (b[i] < 0x20)
			return JSON_CONTROL;
		else if (b[i] == '\\' && i + 1 < len) {
			i++;
			if (b[i] < 0x20)
				return JSON_CONTROL;
			if (b[i] == 'u' && len - i >= 5 &&
			    memcmp(b + i + 1, "0000", 4) == 0)
				return JSON_NUL;
		}
	}
	return JSON_OK;
}

static int
keycmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Looks for an object, v or any below it, that names a key twice; sets
 * *dup to the key.  Keys are sorted, so that an object of n keys costs
 * n log n comparisons, not n^2: a 64 KiB body can hold thousands.  Keys
 * cannot hold a NUL (scan() refused \u0000), so strcmp() compares them
 * whole.  Recursion is bounded by cJSON's nesting limit (1000).
 */
static enum json_status
dupkeys(const cJSON *v, const char **dup)
{
	const cJSON		 *c;
	const char		**keys;
	size_t			  n = 0, i;
	enum json_status	  rc;

	for (c = v->child; c != NULL; c = c->next) {
		n++;
		if ((cJSON_IsObject(c) || cJSON_IsArray(c)) &&
		    (rc = dupkeys(c, dup)) != JSON_OK)
			return rc;
	}
	if (!cJSON_IsObject(v) || n < 2)
		return JSON_OK;
	if ((keys = json_alloc(n * sizeof(*keys))) == NULL)
		return JSON_NOMEM;
	for (i = 0, c = v->child; c != NULL; c = c->next)
		keys[i++] = c->string != NULL ? c->string : "";
	qsort(keys, n, sizeof(*keys), keycmp);
	rc = JSON_OK;
	for (i = 1; i < n; i++)
		if (strcmp(keys[i - 1], keys[i]) == 0) {
			*dup = keys[i];
			rc = JSON_DUPKEY;
			break;
		}
	free(keys);
	return rc;
}

/* Copies key into buf if it is plain and fits; else buf is "". */
static void
copy_plain(const char *key, char *buf, size_t len)
{
	size_t	i, n;
	char	c;

	if (buf == NULL || len == 0)
		return;
	buf[0] = '\0';
	if ((n = strlen(key)) == 0 || n >= len)
		return;
	for (i = 0; i < n; i++) {
		c = key[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
			return;
	}
	memcpy(buf, key, n + 1);
}

enum json_status
json_parse_strict(const char *b, size_t len, cJSON **out, char *dup,
    size_t duplen)
{
	const char		*end = NULL, *key = "";
	cJSON			*doc = NULL;
	enum json_status	 rc;

	*out = NULL;
	if (dup != NULL && duplen > 0)
		dup[0] = '\0';
	if ((rc = scan((const unsigned char *)b, len)) != JSON_OK)
		goto out;
	nomem = 0;
	if ((doc = cJSON_ParseWithLengthOpts(b, len, &end, 0)) == NULL) {
		rc = nomem ? JSON_NOMEM : JSON_SYNTAX;
		goto out;
	}
	for (; end != NULL && end < b + len; end++)
		if (!is_ws((unsigned char)*end)) {
			rc = JSON_SYNTAX;
			goto out;
		}
	if ((rc = dupkeys(doc, &key)) == JSON_DUPKEY)
		copy_plain(key, dup, duplen);
	if (rc != JSON_OK)
		goto out;
	*out = doc;
	doc = NULL;
out:
	cJSON_Delete(doc);
	return rc;
}

enum json_body
json_parse_body(const char *b, size_t len, cJSON **out, char *why,
    size_t whylen)
{
	enum json_status	 js;
	enum json_body		 rc;
	cJSON			*doc;
	char			 key[33];

	*out = NULL;
	switch ((js = json_parse_strict(b, len, &doc, key, sizeof(key)))) {
	case JSON_OK:
		if (cJSON_IsObject(doc)) {
			*out = doc;
			return JSON_BODY_OK;
		}
		cJSON_Delete(doc);
		if (why != NULL && whylen > 0)
			(void)snprintf(why, whylen, "body: not a JSON object");
		return JSON_BODY_INVALID;
	case JSON_NOMEM:
		rc = JSON_BODY_NOMEM;
		break;
	case JSON_SYNTAX:
	case JSON_CONTROL:
		rc = JSON_BODY_NOT_JSON;
		break;
	default:
		rc = JSON_BODY_INVALID;
		break;
	}
	if (why != NULL && whylen > 0)
		(void)snprintf(why, whylen, "%s: %s", js == JSON_DUPKEY &&
		    key[0] != '\0' ? key : "body", json_strerror(js));
	return rc;
}

enum json_status
json_parse(const char *s, cJSON **out)
{
	nomem = 0;
	if ((*out = cJSON_ParseWithOpts(s, NULL, 1)) != NULL)
		return JSON_OK;
	return nomem ? JSON_NOMEM : JSON_SYNTAX;
}

int
json_put_string(char *buf, size_t len, size_t *off, const char *s)
{
	static const char	 hex[] = "0123456789abcdef";
	const unsigned char	*p;
	char			 esc[7];
	size_t			 n;
	const char		*add;

	if (*off + 1 >= len)
		return -1;
	buf[(*off)++] = '"';
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		add = esc;
		if (*p == '"' || *p == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*p;
			n = 2;
		} else if (*p < 0x20 || *p == 0x7f) {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[*p >> 4];
			esc[5] = hex[*p & 0xf];
			n = 6;
		} else {
			add = (const char *)p;
			n = 1;
		}
		if (len - *off <= n)
			return -1;
		memcpy(buf + *off, add, n);
		*off += n;
	}
	if (len - *off <= 1)
		return -1;
	buf[(*off)++] = '"';
	return 0;
}

cJSON *
json_add_int(cJSON *obj, const char *name, int64_t v)
{
	char	digits[24];

	(void)snprintf(digits, sizeof(digits), "%lld", (long long)v);
	return cJSON_AddRawToObject(obj, name, digits);
}

void
json_out_raw(struct json_out *o, const char *s)
{
	if (o->ok && text_put(o->buf, o->len, &o->off, s, strlen(s)) != 0)
		o->ok = 0;
}

void
json_out_str(struct json_out *o, const char *s)
{
	if (o->ok && json_put_string(o->buf, o->len, &o->off, s) != 0)
		o->ok = 0;
}
