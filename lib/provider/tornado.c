/*
 * provider/tornado.c: Tornado's callback, organization event and status
 * formats.
 *
 * Validation happens in one place: a table of fields per payload kind
 * (in the manner of kcgi's kvalid), applied by extract().  The classifiers
 * below it see only typed, bounded, UTF-8-checked values.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "base/json.h"
#include "base/text.h"
#include "base/util.h"
#include "provider/tornado.h"

enum ftype {
	F_ID,		/* string, text_valid_id(), at most HB_ID_MAX */
	F_TEXT,		/* string, text_valid_line(), at most HB_TEXT_MAX */
	F_TEXT_CUT,	/* free text: valid UTF-8, cut to HB_TEXT_MAX if
			   longer, control characters made spaces */
	F_NUMBER,	/* JSON number; only its type is checked */
	F_OBJECT	/* JSON object; only its type is checked */
};

#define NOWHERE ((size_t)-1)

struct field {
	const char	*name;
	const char	*alt;		/* older or alternative name, or NULL */
	enum ftype	 type;
	int		 required;
	size_t		 off;		/* into struct raw, or NOWHERE */
};

/*
 * A validated string: the document's own (s is NUL-terminated there), of
 * which len bytes are the value; an F_TEXT_CUT value may be cut shorter.
 * An absent field is "".
 */
struct val {
	const char	*s;
	size_t		 len;
};

/*
 * Validated values, before classification: they point into the parsed
 * document, and live as long as it does.  Copies would put some 9 KiB on
 * every serving thread's stack (18 KiB for an event), and clear it.
 */
struct raw {
	struct val	type;
	struct val	job_id;
	struct val	status;
	struct val	stage;
	struct val	batch_id;
	struct val	delivery_id;
	struct val	key;
	struct val	url;
	struct val	error;
	struct val	reason;
};

#define R(f) offsetof(struct raw, f)

/* Per-job callbacks, both generations, batch and progress. */
static const struct field callback_fields[] = {
	{ "type", NULL, F_ID, 1, R(type) },
	{ "job_id", NULL, F_ID, 0, R(job_id) },
	{ "status", NULL, F_ID, 0, R(status) },
	{ "stage", "step", F_ID, 0, R(stage) },
	{ "key", "s3_key", F_TEXT, 0, R(key) },
	{ "url", "s3_url", F_TEXT, 0, R(url) },
	{ "error", NULL, F_TEXT_CUT, 0, R(error) },
	{ "reason", NULL, F_TEXT_CUT, 0, R(reason) },
	{ "batch_id", NULL, F_ID, 0, R(batch_id) },
	{ "progress", NULL, F_NUMBER, 0, NOWHERE },
	{ "file_size_bytes", NULL, F_NUMBER, 0, NOWHERE },
	{ "completed", NULL, F_NUMBER, 0, NOWHERE },
	{ "failed", NULL, F_NUMBER, 0, NOWHERE },
	{ "total", NULL, F_NUMBER, 0, NOWHERE },
};

/* The job fields inside an organization envelope: type may be absent. */
static const struct field data_fields[] = {
	{ "type", NULL, F_ID, 0, R(type) },
	{ "job_id", "id", F_ID, 0, R(job_id) },
	{ "status", NULL, F_ID, 0, R(status) },
	{ "stage", "step", F_ID, 0, R(stage) },
	{ "key", "s3_key", F_TEXT, 0, R(key) },
	{ "url", "s3_url", F_TEXT, 0, R(url) },
	{ "error", NULL, F_TEXT_CUT, 0, R(error) },
	{ "reason", NULL, F_TEXT_CUT, 0, R(reason) },
	{ "batch_id", NULL, F_ID, 0, R(batch_id) },
	{ "progress", NULL, F_NUMBER, 0, NOWHERE },
	{ "file_size_bytes", NULL, F_NUMBER, 0, NOWHERE },
};

static const struct field event_fields[] = {
	{ "delivery_id", NULL, F_ID, 1, R(delivery_id) },
	{ "type", NULL, F_ID, 1, R(type) },
	{ "data", NULL, F_OBJECT, 0, NOWHERE },
};

static const struct field status_fields[] = {
	{ "id", NULL, F_ID, 1, R(job_id) },
	{ "status", NULL, F_ID, 1, R(status) },
	{ "step", NULL, F_ID, 0, R(stage) },
	{ "error", NULL, F_TEXT_CUT, 0, R(error) },
	{ "key", "s3_key", F_TEXT, 0, R(key) },
	{ "url", "s3_url", F_TEXT, 0, R(url) },
	{ "finished_at", NULL, F_NUMBER, 0, NOWHERE },
};

#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

const char *
tornado_strerror(enum tornado_err e)
{
	switch (e) {
	case TORNADO_OK:
		return "ok";
	case TORNADO_NOT_JSON:
		return "body is not a JSON document";
	case TORNADO_INVALID:
		return "invalid payload";
	case TORNADO_NOMEM:
		return "out of memory";
	}
	return "unknown error";
}

static void
say(char *why, size_t whylen, const char *field, const char *what)
{
	if (why != NULL && whylen > 0)
		(void)snprintf(why, whylen, "%s: %s", field, what);
}

/* Cuts s to at most max bytes without splitting a UTF-8 sequence. */
static size_t
cut_utf8(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	len = max;
	while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
		len--;
	return len;
}

/*
 * Applies a field table to a JSON object: checks presence and type, bounds
 * and UTF-8, and points the raw struct's values at the strings.  Absent
 * and null are the same.
 */
static enum tornado_err
extract(const cJSON *obj, const struct field *tab, size_t n, struct raw *raw,
    char *why, size_t whylen)
{
	const cJSON	*it;
	const char	*name;
	size_t		 i, len;
	struct val	*dst;

	for (i = 0; i < n; i++) {
		name = tab[i].name;
		it = cJSON_GetObjectItemCaseSensitive(obj, name);
		if ((it == NULL || cJSON_IsNull(it)) && tab[i].alt != NULL) {
			name = tab[i].alt;
			it = cJSON_GetObjectItemCaseSensitive(obj, name);
		}
		if (it == NULL || cJSON_IsNull(it)) {
			if (tab[i].required) {
				say(why, whylen, tab[i].name, "required");
				return TORNADO_INVALID;
			}
			continue;
		}
		switch (tab[i].type) {
		case F_NUMBER:
			if (!cJSON_IsNumber(it))
				goto badtype;
			continue;
		case F_OBJECT:
			if (!cJSON_IsObject(it))
				goto badtype;
			continue;
		default:
			break;
		}
		if (!cJSON_IsString(it) || it->valuestring == NULL)
			goto badtype;
		len = strlen(it->valuestring);
		switch (tab[i].type) {
		case F_ID:
			if (!text_valid_id(it->valuestring, HB_ID_MAX)) {
				say(why, whylen, name, len == 0 ? "empty" :
				    "too long, not UTF-8 or has control "
				    "characters");
				return TORNADO_INVALID;
			}
			break;
		case F_TEXT:
			if (!text_valid_line(it->valuestring, HB_TEXT_MAX)) {
				say(why, whylen, name, "too long, not UTF-8 "
				    "or has control characters");
				return TORNADO_INVALID;
			}
			break;
		default:
			len = cut_utf8(it->valuestring, len, HB_TEXT_MAX);
			if (!text_valid_utf8(it->valuestring, len)) {
				say(why, whylen, name, "not UTF-8");
				return TORNADO_INVALID;
			}
			break;
		}
		if (tab[i].off == NOWHERE)
			continue;
		dst = (struct val *)(void *)((char *)raw + tab[i].off);
		dst->s = it->valuestring;
		dst->len = len;
		continue;
badtype:
		say(why, whylen, name, "wrong type");
		return TORNADO_INVALID;
	}
	return TORNADO_OK;
}

/* The body, which must be one JSON object: json_parse_body(). */
static enum tornado_err
parse_object(const char *body, size_t len, cJSON **out, char *why,
    size_t whylen)
{
	static const enum tornado_err	rc[] = {
		[JSON_BODY_OK] = TORNADO_OK,
		[JSON_BODY_NOT_JSON] = TORNADO_NOT_JSON,
		[JSON_BODY_INVALID] = TORNADO_INVALID,
		[JSON_BODY_NOMEM] = TORNADO_NOMEM,
	};

	return rc[json_parse_body(body, len, out, why, whylen)];
}

/* Lower-cases an event type and maps '.' to '_' ("job.completed"). */
static void
normalize_type(const char *in, char *out, size_t outlen)
{
	size_t	i;

	for (i = 0; in[i] != '\0' && i + 1 < outlen; i++)
		out[i] = in[i] == '.' ? '_' : (char)tolower((unsigned char)in[i]);
	out[i] = '\0';
}

/* A raw struct with every value absent. */
static void
raw_reset(struct raw *r)
{
	static const struct val	none = { "", 0 };

	r->type = r->job_id = r->status = r->stage = r->batch_id =
	    r->delivery_id = r->key = r->url = r->error = r->reason = none;
}

/* Copies v into dst, of size dstlen, which extract()'s bounds fit. */
static void
put(char *dst, size_t dstlen, struct val v)
{
	if (v.len >= dstlen)
		v.len = dstlen - 1;
	memcpy(dst, v.s, v.len);
	dst[v.len] = '\0';
}

static void
copy_out(struct obs *o, const struct raw *r)
{
	put(o->type, sizeof(o->type), r->type);
	put(o->job_id, sizeof(o->job_id), r->job_id);
	put(o->delivery_id, sizeof(o->delivery_id), r->delivery_id);
	put(o->file_key, sizeof(o->file_key), r->key);
	put(o->file_url, sizeof(o->file_url), r->url);
	put(o->error, sizeof(o->error), r->error.len > 0 ? r->error :
	    r->reason);
	/*
	 * Free text is the provider's to word, and a multi-line message
	 * must not make a failure unrecordable: what a terminal or a log
	 * would act on becomes a space.  The receipt keeps the body as
	 * sent.
	 */
	text_blank_hidden(o->error);
}

/*
 * Classifies validated job fields (callback or event data).  The status
 * comparison is case-insensitive; the legacy job_completed + "Failed" is
 * a failure.  A payload with a job and a known stage but no terminal type
 * is progress; anything else is unknown, to be recorded.
 */
static enum tornado_err
classify_job(const struct raw *r, struct obs *o, char *why, size_t whylen)
{
	char		type[HB_ID_MAX + 1];
	enum obs_stage	stage;

	normalize_type(r->type.s, type, sizeof(type));
	copy_out(o, r);
	o->event = OBS_EV_JOB;
	o->status = OBS_ST_NONE;

	if (strcmp(type, "batch_completed") == 0) {
		if (r->batch_id.len == 0) {
			say(why, whylen, "batch_id", "required");
			return TORNADO_INVALID;
		}
		o->event = OBS_EV_BATCH;
		o->job_id[0] = '\0';
		return TORNADO_OK;
	}

	if (strcmp(type, "job_completed") == 0) {
		if (r->status.len == 0 || text_eqi(r->status.s, "completed"))
			o->status = OBS_ST_COMPLETED;
		else if (text_eqi(r->status.s, "failed"))
			o->status = OBS_ST_FAILED;
		else if (text_eqi(r->status.s, "skipped"))
			o->status = OBS_ST_SKIPPED;
		else {
			say(why, whylen, "status", "unknown value");
			return TORNADO_INVALID;
		}
	} else if (strcmp(type, "job_failed") == 0)
		o->status = OBS_ST_FAILED;
	else if (strcmp(type, "job_skipped") == 0)
		o->status = OBS_ST_SKIPPED;

	if (o->status != OBS_ST_NONE) {
		if (r->job_id.len == 0) {
			say(why, whylen, "job_id", "required");
			return TORNADO_INVALID;
		}
		o->stage = o->status == OBS_ST_COMPLETED ?
		    OBS_STAGE_COMPLETED : OBS_STAGE_QUEUED;
		return TORNADO_OK;
	}

	/* Progress: field names are undocumented; stage or step. */
	if (r->job_id.len > 0 && r->stage.len > 0 &&
	    obs_stage_parse(r->stage.s, &stage) == 0) {
		o->stage = stage;
		return TORNADO_OK;
	}
	o->event = OBS_EV_UNKNOWN;
	return TORNADO_OK;
}

static void
obs_reset(struct obs *o, enum obs_source src)
{
	memset(o, 0, sizeof(*o));
	o->source = src;
}

enum tornado_err
tornado_parse_callback(const char *body, size_t len, struct obs *out,
    char *why, size_t whylen)
{
	struct raw		 r;
	cJSON			*doc;
	enum tornado_err	 rc;

	obs_reset(out, OBS_SRC_JOB);
	raw_reset(&r);
	if ((rc = parse_object(body, len, &doc, why, whylen)) != TORNADO_OK)
		return rc;
	rc = extract(doc, callback_fields, NFIELDS(callback_fields), &r,
	    why, whylen);
	if (rc == TORNADO_OK)
		rc = classify_job(&r, out, why, whylen);
	cJSON_Delete(doc);
	return rc;
}

enum tornado_err
tornado_parse_event(const char *body, size_t len, struct obs *out,
    char *why, size_t whylen)
{
	struct raw		 env, r;
	const cJSON		*data;
	cJSON			*doc;
	enum tornado_err	 rc;

	obs_reset(out, OBS_SRC_ORG);
	raw_reset(&env);
	raw_reset(&r);
	if ((rc = parse_object(body, len, &doc, why, whylen)) != TORNADO_OK)
		return rc;
	rc = extract(doc, event_fields, NFIELDS(event_fields), &env,
	    why, whylen);
	if (rc != TORNADO_OK)
		goto out;
	data = cJSON_GetObjectItemCaseSensitive(doc, "data");
	if (cJSON_IsObject(data)) {
		rc = extract(data, data_fields, NFIELDS(data_fields), &r,
		    why, whylen);
		if (rc != TORNADO_OK)
			goto out;
	}
	/* The envelope's type and delivery id are authoritative. */
	r.type = env.type;
	r.delivery_id = env.delivery_id;
	rc = classify_job(&r, out, why, whylen);
out:
	cJSON_Delete(doc);
	return rc;
}

/* Classifies validated status fields (a poll of the job's status). */
static void
classify_poll(struct raw *r, struct obs *o)
{
	enum obs_stage	stage;

	r->type.s = "status";
	r->type.len = sizeof("status") - 1;
	copy_out(o, r);
	o->event = OBS_EV_JOB;
	if (text_eqi(r->status.s, "completed")) {
		o->status = OBS_ST_COMPLETED;
		o->stage = OBS_STAGE_COMPLETED;
	} else if (text_eqi(r->status.s, "failed"))
		o->status = OBS_ST_FAILED;
	else if (text_eqi(r->status.s, "skipped"))
		o->status = OBS_ST_SKIPPED;
	else if (text_eqi(r->status.s, "warning"))
		o->status = OBS_ST_WARNING;
	else if (text_eqi(r->status.s, "pending") ||
	    text_eqi(r->status.s, "processing")) {
		/* The API's step names: Queued .. Finished. */
		if (text_eqi(r->stage.s, "finished"))
			o->stage = OBS_STAGE_COMPLETED;
		else if (r->stage.len > 0 &&
		    obs_stage_parse(r->stage.s, &stage) == 0)
			o->stage = stage;
	} else
		o->event = OBS_EV_UNKNOWN;
}

enum tornado_err
tornado_parse_poll(const char *body, size_t len, struct obs *out,
    char *why, size_t whylen)
{
	struct raw		 r;
	cJSON			*doc;
	enum tornado_err	 rc;

	obs_reset(out, OBS_SRC_POLL);
	raw_reset(&r);
	if ((rc = parse_object(body, len, &doc, why, whylen)) != TORNADO_OK)
		return rc;
	rc = extract(doc, status_fields, NFIELDS(status_fields), &r,
	    why, whylen);
	if (rc == TORNADO_OK)
		classify_poll(&r, out);
	cJSON_Delete(doc);
	return rc;
}
