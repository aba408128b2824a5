/*
 * check_presets.c: every preset (presets/NAME.json) against the requests
 * its provider's own library signed (tests/providers/fixtures/NAME.json,
 * made by tests/providers/make-fixtures.mjs, which says what signed each):
 * the preset's signature accepts the fixture at the time it was signed,
 * refuses it with one byte of the body changed, with another secret, and
 * (a timed scheme) past the tolerance; its mapping reads the event, of a
 * type that takes effect.  tests/e2e/providers.sh sends the same requests
 * through nginx.
 *
 * Run from the top of the tree (tests/check.sh does).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <check.h>
#include <cJSON.h>
#include <sodium.h>

#include "base/util.h"
#include "provider/auth.h"
#include "provider/mapping.h"
#include "provider/scheme.h"
#include "testutil.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))
#define TOL		300

static Suite	*presets_suite(void);

/*
 * The providers with a preset that declares its signature, and those
 * whose preset uses a built-in authentication (its flags in hookbox(1)).
 */
static const char *const declared[] = {
	"apivideo", "bitmovin", "cloudflare-stream", "cloudinary", "github",
	"livepeer", "shopify", "slack", "square", "standardwebhooks",
	"standardwebhooks-v1a", "stripe", "zoom", "twilio",
	/* hookbox(1)'s worked example, a provider with no preset */
	"sanity",
};

/* A whole file, NUL-terminated. */
static char *
slurp(const char *path, size_t *len)
{
	FILE	*f;
	char	*buf;
	long	 n;

	ck_assert_msg((f = fopen(path, "rb")) != NULL, "%s: cannot open",
	    path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	ck_assert_int_ge(n = ftell(f), 0);
	rewind(f);
	ck_assert_ptr_nonnull(buf = malloc((size_t)n + 1));
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	(void)fclose(f);
	*len = (size_t)n;
	return buf;
}

struct fixture {
	cJSON		*doc;
	const cJSON	*headers;
	char		*body;		/* a copy: a byte of it is changed */
	size_t		 bodylen;
	const char	*secret;
	int64_t		 now;
};

static void
fixture_load(const char *name, struct fixture *fx)
{
	char		 path[256], *text;
	size_t		 len;
	const cJSON	*b;

	(void)snprintf(path, sizeof(path), "tests/providers/fixtures/%s.json",
	    name);
	text = slurp(path, &len);
	ck_assert_ptr_nonnull(fx->doc = cJSON_Parse(text));
	free(text);
	fx->headers = cJSON_GetObjectItemCaseSensitive(fx->doc, "headers");
	b = cJSON_GetObjectItemCaseSensitive(fx->doc, "body");
	ck_assert(cJSON_IsObject(fx->headers) && cJSON_IsString(b));
	fx->bodylen = strlen(b->valuestring);
	ck_assert_ptr_nonnull(fx->body = malloc(fx->bodylen + 1));
	memcpy(fx->body, b->valuestring, fx->bodylen + 1);
	fx->secret = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	    fx->doc, "secret"));
	ck_assert_ptr_nonnull(fx->secret);
	fx->now = (int64_t)cJSON_GetNumberValue(
	    cJSON_GetObjectItemCaseSensitive(fx->doc, "now"));
	ck_assert_int_gt(fx->now, 0);
}

static void
fixture_free(struct fixture *fx)
{
	cJSON_Delete(fx->doc);
	free(fx->body);
}

/* A fixture's header by name, in any case; NULL when it has none. */
static const char *
fx_header(const void *arg, const char *name)
{
	const struct fixture	*fx = arg;
	const cJSON		*h;

	cJSON_ArrayForEach(h, fx->headers)
		if (strcasecmp(h->string, name) == 0)
			return h->valuestring;
	return NULL;
}

static const char *
fx_header_rw(void *arg, const char *name)
{
	return fx_header(arg, name);
}

static struct mapping *
preset(const char *name)
{
	struct mapping	*m;
	char		 path[256], why[256], *text;
	size_t		 len;

	(void)snprintf(path, sizeof(path), "%s/%s.json",
	    strcmp(name, "sanity") == 0 ? "tests/providers" : "presets", name);
	text = slurp(path, &len);
	m = mapping_parse(text, len, why, sizeof(why));
	ck_assert_msg(m != NULL, "%s: %s", path, why);
	free(text);
	return m;
}

static enum auth_status
verify(const struct scheme *s, const struct fixture *fx, const char *secret,
    int64_t now_ms)
{
	struct scheme_req	r;
	struct auth_secret	a;

	memset(&r, 0, sizeof(r));
	r.header = fx_header;
	r.arg = fx;
	r.body = (const unsigned char *)fx->body;
	r.bodylen = fx->bodylen;
	r.now_ms = now_ms;
	a.key = (const unsigned char *)secret;
	a.keylen = strlen(secret);
	a.expires_at = 0;
	return scheme_verify(s, &r, &a, 1, TOL, NULL);
}

START_TEST(test_declared)
{
	const char		*name = declared[_i];
	struct fixture		 fx;
	struct mapping		*m;
	struct mapping_event	 ev;
	const struct scheme	*s;
	char			 why[256];
	int64_t			 now;

	memset(&fx, 0, sizeof(fx));
	fixture_load(name, &fx);
	m = preset(name);
	ck_assert_msg((s = mapping_scheme(m)) != NULL, "%s: no signature",
	    name);
	now = fx.now * 1000;
	ck_assert_msg(verify(s, &fx, fx.secret, now) == AUTH_OK, "%s: %s",
	    name, auth_strerror(verify(s, &fx, fx.secret, now)));
	/* The same at the edges of the tolerance, for a timed scheme. */
	if (scheme_timed(s)) {
		ck_assert_int_eq(verify(s, &fx, fx.secret, now + TOL * 1000),
		    AUTH_OK);
		ck_assert_int_eq(verify(s, &fx, fx.secret, now +
		    (TOL + 2) * 1000), AUTH_TIMESTAMP);
		ck_assert_int_eq(verify(s, &fx, fx.secret, now -
		    (TOL + 2) * 1000), AUTH_TIMESTAMP);
	}
	/* Its secrets are of the form endpoint add takes. */
	ck_assert_msg(scheme_check_secret(s, (const unsigned char *)fx.secret,
	    strlen(fx.secret)) == NULL, "%s: %s", name,
	    scheme_check_secret(s, (const unsigned char *)fx.secret,
	    strlen(fx.secret)));
	/* Its event, of a type that takes effect. */
	ck_assert_msg(mapping_eval(m, fx.body, fx.bodylen, fx_header_rw, &fx,
	    &ev, why, sizeof(why)) == MAPPING_OK, "%s: %s", name, why);
	ck_assert_msg(ev.effect == MAPPING_DO, "%s: type %s", name, ev.type);
	/* Every header it reads is one its signature signs. */
	{
		const char	*h = NULL;

		ck_assert_msg(mapping_unsigned_field(m,
		    scheme_signed_headers(s), &h) == NULL, "%s: %s", name, h);
	}
	/* One letter or digit of the body, half way, is another request. */
	{
		size_t	i = fx.bodylen / 2;
		char	was;

		while (i < fx.bodylen && !isalnum((unsigned char)fx.body[i]))
			i++;
		ck_assert_uint_lt(i, fx.bodylen);
		was = fx.body[i];
		fx.body[i] = was == 'a' ? 'b' : was == '0' ? '1' :
		    isdigit((unsigned char)was) ? '0' : 'a';
		ck_assert_int_eq(verify(s, &fx, fx.secret, now),
		    AUTH_BAD_SIGNATURE);
		fx.body[i] = was;
	}
	/* Another secret of the same form. */
	{
		char	other[SCHEME_SECRET_LEN], signer[SCHEME_SECRET_LEN];

		ck_assert_int_eq(scheme_make_secret(s, other, sizeof(other),
		    signer, sizeof(signer)), 0);
		ck_assert_int_eq(verify(s, &fx, other, now),
		    AUTH_BAD_SIGNATURE);
	}
	mapping_free(m);
	fixture_free(&fx);
}
END_TEST

/*
 * What hookbox signs in a preset's scheme, its provider's library
 * verifies (tests/providers/make-fixtures.mjs): here, that hookbox signs
 * each fixture's request as the library did, header for header, where
 * the scheme is deterministic (Ed25519 is too, given the key).
 */
START_TEST(test_signs_alike)
{
	const char		*name = declared[_i];
	struct scheme_header	 out[SCHEME_OUT_MAX];
	struct scheme_req	 r;
	struct fixture		 fx;
	struct mapping		*m;
	const struct scheme	*s;
	const char		*secret, *want;
	const cJSON		*pk;
	size_t			 nout, i;

	memset(&fx, 0, sizeof(fx));
	fixture_load(name, &fx);
	m = preset(name);
	s = mapping_scheme(m);
	pk = cJSON_GetObjectItemCaseSensitive(fx.doc, "private_key");
	secret = cJSON_IsString(pk) ? pk->valuestring : fx.secret;
	memset(&r, 0, sizeof(r));
	r.header = fx_header;
	r.arg = &fx;
	r.body = (const unsigned char *)fx.body;
	r.bodylen = fx.bodylen;
	r.now_ms = fx.now * 1000;
	ck_assert_int_eq(scheme_sign(s, &r, (const unsigned char *)secret,
	    strlen(secret), out, &nout), 0);
	for (i = 0; i < nout; i++) {
		want = fx_header(&fx, out[i].name);
		ck_assert_msg(want != NULL, "%s: no %s", name, out[i].name);
		ck_assert_msg(strstr(want, out[i].value) != NULL,
		    "%s: %s: %s, the library's %s", name, out[i].name,
		    out[i].value, want);
	}
	mapping_free(m);
	fixture_free(&fx);
}
END_TEST

/* Mux's and Replicate's presets, on the built-in hmac and standard. */
START_TEST(test_builtin)
{
	struct fixture		 fx;
	struct auth_secret	 a;
	struct mapping		*m;
	struct mapping_event	 ev;
	char			 why[256];
	int			 std;

	for (std = 0; std <= 1; std++) {
		memset(&fx, 0, sizeof(fx));
		fixture_load(std ? "replicate" : "mux", &fx);
		a.key = (const unsigned char *)fx.secret;
		a.keylen = strlen(fx.secret);
		a.expires_at = 0;
		ck_assert_int_eq(std ? auth_verify_stdwebhooks(
		    fx_header(&fx, "webhook-id"),
		    fx_header(&fx, "webhook-timestamp"),
		    fx_header(&fx, "webhook-signature"),
		    (const unsigned char *)fx.body, fx.bodylen, &a, 1, fx.now,
		    TOL, NULL) : auth_verify_tsig(fx_header(&fx,
		    "mux-signature"),
		    (const unsigned char *)fx.body, fx.bodylen, &a, 1, fx.now,
		    TOL, NULL), AUTH_OK);
		m = preset(std ? "replicate" : "mux");
		ck_assert_msg(mapping_eval(m, fx.body, fx.bodylen,
		    fx_header_rw, &fx, &ev, why, sizeof(why)) == MAPPING_OK,
		    "%s", why);
		mapping_free(m);
		fixture_free(&fx);
	}
}
END_TEST

static Suite *
presets_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("presets");
	tc = tcase_create("fixtures");
	tcase_add_loop_test(tc, test_declared, 0, (int)NELEM(declared));
	tcase_add_loop_test(tc, test_signs_alike, 0, (int)NELEM(declared));
	tcase_add_test(tc, test_builtin);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (util_init() != 0)
		return 1;
	return test_run_pure(presets_suite);
}
