/*
 * fuzz.c: libFuzzer targets, one per parser, chosen at compile time:
 *   -DFUZZ_CALLBACK  tornado_parse_callback
 *   -DFUZZ_EVENT     tornado_parse_event
 *   -DFUZZ_POLL      tornado_parse_poll
 *   -DFUZZ_TSIG      auth_verify_tsig (the "t=..,v1=.." header parser)
 *   -DFUZZ_SW        auth_verify_stdwebhooks (its three header values)
 *   -DFUZZ_MAPPING   mapping_eval of the input as a body, against a fixed
 *                    mapping, and of it restamped (mapping_restamp); an
 *                    input that starts with '#' is a mapping file
 *                    instead (mapping_parse, mapping_text)
 *   -DFUZZ_SCHEME    scheme_verify of the input as a signature header (and
 *                    its time header), against a declared scheme of each
 *                    shape, and of the input as a form body ({form});
 *                    form_parse of it, whatever is taken written back
 *                    (form_encode) and read again the same; an input that
 *                    starts with '#' is a scheme's declaration instead
 *                    (scheme_parse, scheme_text)
 * Beyond not crashing (ASan, UBSan; cJSON itself is compiled in with the
 * same instrumentation when Debian's source could be had, see the
 * Makefile), each checks the parser's promises: whatever it accepts is
 * typed, bounded and valid UTF-8, and (hookbox-fcgi(8), HTTP CONTRACT)
 * came from a body with no raw byte below 0x20 inside a string and no
 * object naming a key twice, and holds no control character in any
 * string.  Those two body properties are checked here by code of the
 * harness's own, not by lib/base/json.c's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "base/text.h"
#include "base/util.h"
#include "provider/auth.h"
#include "provider/form.h"
#include "provider/mapping.h"
#include "provider/scheme.h"
#include "provider/tornado.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_text(const char *s, size_t cap)
{
	size_t	n = strnlen(s, cap);

	if (n >= cap || !text_valid_utf8(s, n))
		abort();
}

#if defined(FUZZ_CALLBACK) || defined(FUZZ_EVENT) || defined(FUZZ_POLL)
/*
 * Non-zero when a byte below 0x20 stands inside a string: a quote opens
 * or closes a string unless an odd number of backslashes precede it.
 */
static int
raw_control_in_string(const uint8_t *b, size_t len)
{
	size_t	i, k;
	int	in = 0;

	for (i = 0; i < len; i++) {
		if (b[i] == '"') {
			for (k = i; k > 0 && b[k - 1] == '\\'; k--)
				;
			if (!in || (i - k) % 2 == 0)
				in = !in;
		} else if (in && b[i] < 0x20)
			return 1;
	}
	return 0;
}

/* Non-zero when v or an object below it names a key twice (n^2 compare). */
static int
dup_key(const cJSON *v)
{
	const cJSON	*a, *b;

	for (a = v->child; a != NULL; a = a->next) {
		if (dup_key(a))
			return 1;
		if (!cJSON_IsObject(v))
			continue;
		for (b = a->next; b != NULL; b = b->next)
			if (strcmp(a->string, b->string) == 0)
				return 1;
	}
	return 0;
}

static void
check_line(const char *s, size_t cap)
{
	check_text(s, cap);
	if (!text_valid_line(s, cap - 1))
		abort();
}

static int	ready;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct obs		 o;
	char			 why[128];
	enum tornado_err	 rc;
	cJSON			*doc;

	if (!ready) {
		/* The allocation hooks: a failure must read as NOMEM. */
		if (util_init() != 0)
			abort();
		ready = 1;
	}

#if defined(FUZZ_CALLBACK)
	rc = tornado_parse_callback((const char *)data, len, &o, why,
	    sizeof(why));
#elif defined(FUZZ_EVENT)
	rc = tornado_parse_event((const char *)data, len, &o, why, sizeof(why));
#else
	rc = tornado_parse_poll((const char *)data, len, &o, why,
	    sizeof(why));
#endif
	/* Inputs of at most 4 KiB never exhaust memory. */
	if (rc == TORNADO_NOMEM)
		abort();
	if (rc != TORNADO_OK)
		return 0;

	/* The body: no raw control byte in a string, no key twice. */
	if (raw_control_in_string(data, len))
		abort();
	if ((doc = cJSON_ParseWithLength((const char *)data, len)) == NULL ||
	    dup_key(doc))
		abort();
	cJSON_Delete(doc);

	/* The observation: identifiers valid, no control character at all. */
	if (!text_valid_id(o.type, HB_ID_MAX))
		abort();
	if (o.event == OBS_EV_JOB && !text_valid_id(o.job_id, HB_ID_MAX))
		abort();
	if (o.delivery_id[0] != '\0' &&
	    !text_valid_id(o.delivery_id, HB_ID_MAX))
		abort();
	if ((unsigned)o.stage > OBS_STAGE_COMPLETED ||
	    (unsigned)o.status > OBS_ST_WARNING)
		abort();
	check_line(o.type, sizeof(o.type));
	check_line(o.job_id, sizeof(o.job_id));
	check_line(o.delivery_id, sizeof(o.delivery_id));
	check_line(o.file_key, sizeof(o.file_key));
	check_line(o.file_url, sizeof(o.file_url));
	check_line(o.error, sizeof(o.error));
	return 0;
}
#elif defined(FUZZ_TSIG) || defined(FUZZ_SW)
static int	ready;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static const unsigned char	 key[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
	struct auth_secret		 sec = { key, sizeof(key) - 1, 0 };
	char				*s, *a, *b;
	enum auth_status		 rc;

	if (!ready) {
		if (util_init() != 0)
			abort();
		ready = 1;
	}
	if ((s = malloc(len + 1)) == NULL)
		return 0;
	memcpy(s, data, len);
	s[len] = '\0';
#if defined(FUZZ_TSIG)
	(void)a; (void)b;
	rc = auth_verify_tsig(s, (const unsigned char *)"{}", 2, &sec, 1,
	    1700000000, 300, NULL);
#else
	/* Three NUL-separated values: id, timestamp, signature. */
	a = s + strlen(s) + (strlen(s) < len ? 1 : 0);
	b = a + strlen(a) + (a + strlen(a) < s + len ? 1 : 0);
	rc = auth_verify_stdwebhooks(s, a, b, (const unsigned char *)"{}", 2,
	    &sec, 1, 1700000000, 300, NULL);
#endif
	/* Random bytes never make a valid MAC. */
	if (rc == AUTH_OK || (unsigned)rc > AUTH_ERROR)
		abort();
	free(s);
	return 0;
}
#elif defined(FUZZ_MAPPING)
/* Headers and pointers both, an array index and an escape among them. */
static const char	fixed[] =
    "{\"destination\":\"cms\","
    "\"event_id\":{\"header\":\"Webhook-Id\"},"
    "\"subject\":\"/data/ids/0\","
    "\"version\":\"/data/version\","
    "\"type\":\"/type\","
    "\"occurred\":\"/data/at~1utc\","
    "\"steps\":{\"publish\":[\"asset.approved\",\"asset.replaced\"]},"
    "\"undo\":{\"unpublish\":[\"asset.deleted\"]},"
    "\"ignore\":[\"asset.viewed\"]}";

/* A body for the mappings made from inputs: some field may resolve. */
static const char	probe[] =
    "{\"type\":\"asset.approved\",\"id\":\"e\",\"data\":{\"ids\":[\"s\"],"
    "\"version\":\"7\",\"at/utc\":\"2024-05-01T10:00:00Z\"}}";

static const char *
one_header(void *arg, const char *name)
{
	(void)arg;
	return strcmp(name, "webhook-id") == 0 ? "msg_2mJ9" : NULL;
}

/* What every successful evaluation promises. */
static void
check_event(const struct mapping_event *ev)
{
	if (!text_valid_id(ev->event_id, HB_ID_MAX) ||
	    !text_valid_id(ev->subject, HB_ID_MAX) ||
	    !text_valid_id(ev->type, HB_ID_MAX))
		abort();
	if (ev->version < 0 || ev->version > 9007199254740991LL ||
	    ev->occurred_ms < 0 || ev->occurred_ms >= 253402300800000LL)
		abort();
	if (ev->effect == MAPPING_IGNORE ? ev->step[0] != '\0' :
	    !text_valid_name(ev->step))
		abort();
}

static void
check_zero(const struct mapping_event *ev)
{
	static const struct mapping_event	zero;

	if (memcmp(ev, &zero, sizeof(zero)) != 0)
		abort();
}

static int		 ready;
static struct mapping	*m;
static const char	*last_body;	/* the input being evaluated */
static size_t		 last_len;

static struct mapping_header	 stamped[MAPPING_HEADERS_MAX];
static size_t			 nstamped;

static const char *
stamped_header(void *arg, const char *name)
{
	size_t	i;

	(void)arg;
	for (i = 0; i < nstamped; i++)
		if (strcmp(stamped[i].name, name) == 0)
			return stamped[i].value;
	return NULL;
}

/*
 * A body the mapping reads, restamped as the disorder tester does:
 * always done, and read back as written, its type and effect kept.
 */
static void
restamped(const struct mapping_event *was)
{
	struct mapping_event	 to, ev;
	char			 why[128], *b;

	memset(&to, 0, sizeof(to));
	(void)snprintf(to.event_id, sizeof(to.event_id), "disorder-1-a");
	(void)snprintf(to.subject, sizeof(to.subject), "disorder-1");
	to.version = 42;
	to.occurred_ms = 1714557600123LL;
	if ((b = mapping_restamp(m, last_body, last_len, &to, stamped,
	    &nstamped, why, sizeof(why))) == NULL)
		abort();
	if (mapping_eval(m, b, strlen(b), stamped_header, NULL, &ev, why,
	    sizeof(why)) != MAPPING_OK ||
	    strcmp(ev.event_id, to.event_id) != 0 ||
	    strcmp(ev.subject, to.subject) != 0 || ev.version != 42 ||
	    ev.occurred_ms != to.occurred_ms ||
	    strcmp(ev.type, was->type) != 0 || ev.effect != was->effect)
		abort();
	free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct mapping_event	 ev;
	struct mapping		*m2, *m3;
	enum mapping_err	 rc;
	char			 why[128], *t, *t2;

	if (!ready) {
		if (util_init() != 0 || (m = mapping_parse(fixed,
		    sizeof(fixed) - 1, why, sizeof(why))) == NULL)
			abort();
		ready = 1;
	}
	if (len > 0 && data[0] == '#') {
		/* A mapping file: whatever is taken has a canonical text. */
		m2 = mapping_parse((const char *)data + 1, len - 1, why,
		    sizeof(why));
		if (m2 == NULL) {
			/* Inputs of at most 4 KiB never exhaust memory. */
			if (strcmp(why, "out of memory") == 0 || why[0] == '\0')
				abort();
			return 0;
		}
		if (!text_valid_name(mapping_destination(m2)) ||
		    (t = mapping_text(m2)) == NULL)
			abort();
		/* Its text is the same mapping: the same text again. */
		if ((m3 = mapping_parse(t, strlen(t), why, sizeof(why))) ==
		    NULL || (t2 = mapping_text(m3)) == NULL ||
		    strcmp(t, t2) != 0)
			abort();
		rc = mapping_eval(m2, probe, sizeof(probe) - 1, one_header,
		    NULL, &ev, why, sizeof(why));
		if (rc == MAPPING_OK)
			check_event(&ev);
		else if (rc != MAPPING_INVALID)
			abort();
		else
			check_zero(&ev);
		free(t2);
		free(t);
		mapping_free(m3);
		mapping_free(m2);
		return 0;
	}
	last_body = (const char *)data;
	last_len = len;
	rc = mapping_eval(m, (const char *)data, len, one_header, NULL, &ev,
	    why, sizeof(why));
	if (rc == MAPPING_NOMEM || (unsigned)rc > MAPPING_NOMEM)
		abort();
	if (rc != MAPPING_OK) {
		check_zero(&ev);
		return 0;
	}
	check_event(&ev);
	if (strcmp(ev.event_id, "msg_2mJ9") != 0 ||
	    (ev.effect == MAPPING_DO && strcmp(ev.step, "publish") != 0) ||
	    (ev.effect == MAPPING_UNDO && strcmp(ev.step, "unpublish") != 0))
		abort();
	restamped(&ev);
	return 0;
}
#elif defined(FUZZ_SCHEME)
/* A scheme of each shape: parts and a time, a prefix, a list by spaces. */
static const char *const shapes[] = {
	"{\"header\":\"S\",\"parts\":{\"separator\":\",\",\"assign\":"
	"\"=\",\"signature\":\"v1\"},\"timestamp\":{\"part\":\"t\"},"
	"\"signed\":\"{timestamp}.{body}\",\"algorithm\":\"hmac-sha256\","
	"\"encoding\":\"hex\"}",
	"{\"header\":\"S\",\"prefix\":\"v0=\",\"timestamp\":{\"header\":"
	"\"T\",\"unit\":\"ms\"},\"signed\":\"v0:{timestamp}:{body}\","
	"\"algorithm\":\"hmac-sha1\",\"encoding\":\"base64url\"}",
	"{\"header\":\"S\",\"parts\":{\"separator\":\" \",\"assign\":"
	"\",\",\"signature\":\"v1a\"},\"signed\":\"{header:T}.{body}\","
	"\"algorithm\":\"ed25519\",\"encoding\":\"base64\",\"key\":"
	"\"base64\"}",
	"{\"header\":\"S\",\"signed\":\"{url}{body}{secret}\",\"url\":"
	"\"https://h/x\",\"algorithm\":\"sha256\",\"encoding\":"
	"\"base64\"}",
	"{\"header\":\"S\",\"signed\":\"{url}{form}\",\"url\":"
	"\"https://h/x\",\"algorithm\":\"hmac-sha1\",\"encoding\":"
	"\"base64\"}",
};

/* A form read is written back and read again as the same fields. */
static void
check_form(const char *b, size_t len)
{
	struct form	f, g;
	char		*t, why[128];
	size_t		i;

	if (form_parse(b, len, &f, why, sizeof(why)) != FORM_OK)
		return;
	if ((t = form_encode(f.f, f.n)) == NULL ||
	    form_parse(t, strlen(t), &g, why, sizeof(why)) != FORM_OK ||
	    g.n != f.n)
		abort();
	for (i = 0; i < f.n; i++)
		if (strcmp(f.f[i].name, g.f[i].name) != 0 ||
		    strcmp(f.f[i].value, g.f[i].value) != 0 ||
		    !text_valid_line(f.f[i].name, HB_TEXT_MAX) ||
		    !text_valid_line(f.f[i].value, len))
			abort();
	free(t);
	form_free(&g);
	form_free(&f);
}
#define NSHAPES	(sizeof(shapes) / sizeof(shapes[0]))

static int		 ready;
static struct scheme	*fixed[NSHAPES];
static const char	*hv[2];	/* S, then T */

static const char *
two_headers(const void *arg, const char *name)
{
	(void)arg;
	return strcmp(name, "s") == 0 ? hv[0] : strcmp(name, "t") == 0 ?
	    hv[1] : NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	/* An Ed25519 public key, base64 (RFC 8032's first). */
	static const char	 pk[] =
	    "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=";
	struct auth_secret	 sec[2] = {
		{ (const unsigned char *)"0123456789abcdef", 16, 0 },
		{ (const unsigned char *)pk, sizeof(pk) - 1, 0 },
	};
	struct scheme_req	 r;
	struct scheme		*s, *s2;
	enum auth_status	 rc;
	cJSON			*v;
	char			*in, *t, *t2, why[128];
	size_t			 i;
	int			 nomem;

	if (!ready) {
		if (util_init() != 0)
			abort();
		for (i = 0; i < NSHAPES; i++)
			if ((v = cJSON_Parse(shapes[i])) == NULL ||
			    (fixed[i] = scheme_parse(v, why, sizeof(why),
			    &nomem)) == NULL)
				abort();
			else
				cJSON_Delete(v);
		ready = 1;
	}
	if ((in = malloc(len + 1)) == NULL)
		return 0;
	memcpy(in, data, len);
	in[len] = '\0';
	if (len > 0 && in[0] == '#') {
		/* A declaration: whatever is taken has a canonical text. */
		if ((v = cJSON_Parse(in + 1)) != NULL) {
			s = scheme_parse(v, why, sizeof(why), &nomem);
			if (nomem || (s == NULL && why[0] == '\0'))
				abort();
			if (s != NULL) {
				cJSON_Delete(v);
				if ((t = scheme_text(s)) == NULL ||
				    (v = cJSON_Parse(t)) == NULL ||
				    (s2 = scheme_parse(v, why, sizeof(why),
				    &nomem)) == NULL ||
				    (t2 = scheme_text(s2)) == NULL ||
				    strcmp(t, t2) != 0)
					abort();
				free(t);
				free(t2);
				scheme_free(s2);
				scheme_free(s);
			}
			cJSON_Delete(v);
		}
		free(in);
		return 0;
	}
	check_form((const char *)data, len);
	/* The input as a form body, against the {form} shape. */
	memset(&r, 0, sizeof(r));
	r.header = two_headers;
	hv[0] = "AAAAAAAAAAAAAAAAAAAAAAAAAAA=";
	hv[1] = NULL;
	r.body = data;
	r.bodylen = len;
	r.now_ms = 1700000000000LL;
	rc = scheme_verify(fixed[NSHAPES - 1], &r, sec, 2, 300, NULL);
	if (rc == AUTH_OK || rc == AUTH_ERROR || (unsigned)rc > AUTH_ERROR)
		abort();
	/* The input's first line is the signature, the rest the time. */
	hv[0] = in;
	hv[1] = "1700000000";
	if ((t = strchr(in, '\n')) != NULL) {
		*t = '\0';
		hv[1] = t + 1;
	}
	memset(&r, 0, sizeof(r));
	r.header = two_headers;
	r.body = (const unsigned char *)"{}";
	r.bodylen = 2;
	r.query = hv[1];
	r.now_ms = 1700000000000LL;
	for (i = 0; i < NSHAPES; i++) {
		rc = scheme_verify(fixed[i], &r, sec, 2, 300, NULL);
		/* Random bytes never make a valid signature. */
		if (rc == AUTH_OK || rc == AUTH_ERROR ||
		    (unsigned)rc > AUTH_ERROR)
			abort();
	}
	free(in);
	return 0;
}
#else
#error "define one FUZZ_* target"
#endif
