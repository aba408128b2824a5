/*
 * check_scheme.c: tests of lib/provider/digest.c and lib/provider/scheme.c:
 * the digests against published vectors, every error of a scheme's
 * declaration, its canonical text, and requests verified and signed in
 * each shape providers use.
 *
 * Known answers that do not come from hookbox were computed with the
 * openssl command line tool, e.g.
 *	printf %s 'v0:1796119205:{"a":1}' | openssl dgst -sha256 -hmac slack_secret
 * or are the published vectors named beside them.  The providers' own
 * libraries are checked in tests/e2e/providers.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <cJSON.h>
#include <sodium.h>

#include "base/fault.h"
#include "base/util.h"
#include "provider/digest.h"
#include "provider/scheme.h"
#include "testutil.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

#define NOW_S		INT64_C(1796119205)
#define NOW_MS		(NOW_S * 1000)
#define BODY		"{\"a\":1}"

static char	why[256];

static Suite	*scheme_suite(void);

/*
 * Digests
 */

static void
hex_eq(const unsigned char *got, size_t len, const char *want)
{
	char	hex[2 * DIGEST_MAX + 1];

	sodium_bin2hex(hex, sizeof(hex), got, len);
	ck_assert_str_eq(hex, want);
}

/* FIPS 180-2 appendix A's and the empty message's SHA-1. */
START_TEST(test_sha1_vectors)
{
	static const struct {
		const char	*msg;
		const char	*want;
	} v[] = {
		{ "abc", "a9993e364706816aba3e25717850c26c9cd0d89d" },
		{ "", "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
	};
	unsigned char		 out[DIGEST_MAX];
	const unsigned char	*p[3];
	size_t			 l[3], i, n;

	for (i = 0; i < NELEM(v); i++) {
		p[0] = (const unsigned char *)v[i].msg;
		l[0] = strlen(v[i].msg);
		ck_assert_int_eq(digest_hash(DIGEST_SHA1, p, l, 1, out), 0);
		hex_eq(out, 20, v[i].want);
		/* The same bytes in three parts, split anywhere. */
		n = l[0] / 3;
		p[1] = p[0] + n;
		p[2] = p[0] + 2 * n;
		l[2] = l[0] - 2 * n;
		l[0] = l[1] = n;
		ck_assert_int_eq(digest_hash(DIGEST_SHA1, p, l, 3, out), 0);
		hex_eq(out, 20, v[i].want);
	}
}
END_TEST

/* A million 'a' (FIPS 180-2 A.3): many blocks, fed unevenly. */
START_TEST(test_sha1_million)
{
	unsigned char		 a[997], out[DIGEST_MAX];
	const unsigned char	*p[1100];
	size_t			 l[1100], n = 0, left = 1000000;

	memset(a, 'a', sizeof(a));
	while (left > 0) {
		p[n] = a;
		l[n] = left < sizeof(a) - n % 7 ? left : sizeof(a) - n % 7;
		left -= l[n++];
	}
	ck_assert_int_eq(digest_hash(DIGEST_SHA1, p, l, n, out), 0);
	hex_eq(out, 20, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}
END_TEST

/* RFC 2202 (HMAC-SHA-1) and RFC 4231 (HMAC-SHA-256, -512) cases. */
START_TEST(test_hmac_vectors)
{
	static const struct {
		enum digest_alg	 alg;
		int		 keyfill;	/* 0: key is "Jefe" */
		size_t		 keylen;
		const char	*data;
		const char	*want;
	} v[] = {
		{ DIGEST_SHA1, 0x0b, 20, "Hi There",
		  "b617318655057264e28bc0b6fb378c8ef146be00" },
		{ DIGEST_SHA1, 0, 4, "what do ya want for nothing?",
		  "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79" },
		{ DIGEST_SHA1, 0xaa, 80,
		  "Test Using Larger Than Block-Size Key - Hash Key First",
		  "aa4ae5e15272d00e95705637ce8a3b55ed402112" },
		{ DIGEST_SHA256, 0x0b, 20, "Hi There",
		  "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32"
		  "cff7" },
		{ DIGEST_SHA512, 0x0b, 20, "Hi There",
		  "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e1"
		  "7cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c20"
		  "3a126854" },
		{ DIGEST_SHA512, 0xaa, 131,
		  "Test Using Larger Than Block-Size Key - Hash Key First",
		  "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8"
		  "f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a98"
		  "5d786598" },
	};
	unsigned char		 key[200], out[DIGEST_MAX];
	const unsigned char	*p[1];
	size_t			 l[1], i;

	for (i = 0; i < NELEM(v); i++) {
		if (v[i].keyfill == 0)
			memcpy(key, "Jefe", 4);
		else
			memset(key, v[i].keyfill, v[i].keylen);
		p[0] = (const unsigned char *)v[i].data;
		l[0] = strlen(v[i].data);
		ck_assert_int_eq(digest_hmac(v[i].alg, key, v[i].keylen, p, l,
		    1, out), 0);
		hex_eq(out, digest_len(v[i].alg), v[i].want);
	}
}
END_TEST

START_TEST(test_digest_args)
{
	unsigned char		 out[DIGEST_MAX];
	const unsigned char	*p[1] = { NULL };
	size_t			 l[1] = { 1 };

	ck_assert_uint_eq(digest_len(DIGEST_SHA1), 20);
	ck_assert_uint_eq(digest_len(DIGEST_SHA256), 32);
	ck_assert_uint_eq(digest_len(DIGEST_SHA512), 64);
	ck_assert_uint_eq(digest_len((enum digest_alg)9), 0);
	ck_assert_int_eq(digest_hash(DIGEST_SHA1, p, l, 1, out), -1);
	ck_assert_int_eq(digest_hash((enum digest_alg)9, NULL, NULL, 0, out),
	    -1);
	ck_assert_int_eq(digest_hmac(DIGEST_SHA1, NULL, 3, NULL, NULL, 0,
	    out), -1);
	ck_assert_int_eq(digest_hmac(DIGEST_SHA1, NULL, 0, NULL, NULL, 0,
	    NULL), -1);
	/* Nothing at all is a message too. */
	ck_assert_int_eq(digest_hash(DIGEST_SHA1, NULL, NULL, 0, out), 0);
	hex_eq(out, 20, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
}
END_TEST

/*
 * Declarations
 */

/* Parses a declaration written as JSON text. */
static struct scheme *
parse(const char *text)
{
	struct scheme	*s;
	cJSON		*v;
	int		 nomem;

	v = cJSON_Parse(text);
	ck_assert_msg(v != NULL, "test JSON does not parse: %s", text);
	s = scheme_parse(v, why, sizeof(why), &nomem);
	ck_assert_int_eq(nomem, 0);
	cJSON_Delete(v);
	return s;
}

#define BASE	"\"header\":\"X-Sig\",\"signed\":\"{body}\"," \
		"\"algorithm\":\"hmac-sha256\",\"encoding\":\"hex\""

static const struct {
	const char	*decl;
	const char	*why;	/* a part of the error */
} bad[] = {
	{ "[]", "signature: not an object" },
	{ "{\"signed\":\"{body}\",\"algorithm\":\"hmac-sha256\","
	  "\"encoding\":\"hex\"}", "signature.header: missing" },
	{ "{" BASE ",\"colour\":1}", "\"colour\" is not one of its members" },
	{ "{\"header\":\"X Sig\",\"signed\":\"{body}\",\"algorithm\":"
	  "\"hmac-sha256\",\"encoding\":\"hex\"}",
	  "signature.header: not a header name" },
	{ "{\"header\":7,\"signed\":\"{body}\",\"algorithm\":\"hmac-sha256\","
	  "\"encoding\":\"hex\"}", "signature.header: not a string" },
	{ "{\"header\":\"X-Sig\",\"algorithm\":\"hmac-sha256\","
	  "\"encoding\":\"hex\"}", "signature.signed: missing" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{url}\",\"url\":\"https://h/\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"hex\"}",
	  "{body} or {form} once" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{body}{body}\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"hex\"}",
	  "{body} or {form} once" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{bodyy}\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"hex\"}",
	  "{bodyy} is none of" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{body\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"hex\"}",
	  "not around a placeholder" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"}{body}\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"hex\"}",
	  "not around a placeholder" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{{body}}\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"hex\"}",
	  "not around a placeholder" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"\\u00e9{body}\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"hex\"}",
	  "printable ASCII" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{header:a b}{body}\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"hex\"}",
	  "not a header name" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{timestamp}.{body}\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"hex\"}",
	  "{timestamp} without signature.timestamp" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{body}\","
	  "\"algorithm\":\"hmac-md5\",\"encoding\":\"hex\"}",
	  "signature.algorithm: not one of" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{body}\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"HEX\"}",
	  "signature.encoding: not one of" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{body}\","
	  "\"algorithm\":\"sha1\",\"encoding\":\"hex\"}", "{secret} is for" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{body}{secret}\","
	  "\"algorithm\":\"hmac-sha1\",\"encoding\":\"hex\"}",
	  "{secret} is for" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{url}{body}\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"base64\"}",
	  "signature.url: missing" },
	{ "{" BASE ",\"url\":\"https://h.example/x\"}",
	  "signature.url: given, but" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{url}{body}\","
	  "\"url\":\"https://h.example/x?y=1\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"base64\"}",
	  "without a query" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{url}{body}\","
	  "\"url\":\"ftp://h.example/x\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"base64\"}",
	  "not an http or https URL" },
	{ "{" BASE ",\"key\":\"hex\"}", "signature.key: not text or base64" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{form}{body}\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"hex\"}",
	  "{body} or {form} once" },
	{ "{" BASE ",\"key_prefix\":\"whsec_\"}", "for a base64 key" },
	{ "{\"header\":\"X-Sig\",\"signed\":\"{body}\","
	  "\"algorithm\":\"ed25519\",\"encoding\":\"base64\"}",
	  "base64 for ed25519" },
	{ "{" BASE ",\"prefix\":\"a b\"}", "signature.prefix: not 1 to" },
	{ "{" BASE ",\"prefix\":\"\"}", "signature.prefix: not 1 to" },
	{ "{" BASE ",\"parts\":[]}", "signature.parts: not an object" },
	{ "{" BASE ",\"parts\":{\"separator\":\",\",\"assign\":\",\","
	  "\"signature\":\"v1\"}}", "two different characters" },
	{ "{" BASE ",\"parts\":{\"separator\":\"x\",\"assign\":\"=\","
	  "\"signature\":\"v1\"}}", "two different characters" },
	{ "{" BASE ",\"parts\":{\"separator\":\",\",\"assign\":\"==\","
	  "\"signature\":\"v1\"}}", "two different characters" },
	{ "{" BASE ",\"parts\":{\"separator\":\",\",\"assign\":\"=\"}}",
	  "signature.parts.signature: missing" },
	{ "{" BASE ",\"parts\":{\"separator\":\",\",\"assign\":\"=\","
	  "\"signature\":\"v 1\"}}", "not a part's name" },
	{ "{" BASE ",\"parts\":{\"separator\":\",\",\"assign\":\"=\","
	  "\"signature\":\"v1\",\"x\":1}}",
	  "signature.parts: \"x\" is not one of its members" },
	{ "{" BASE ",\"timestamp\":{\"part\":\"t\"}}", "has no parts" },
	{ "{" BASE ",\"timestamp\":{}}", "names one of part and header" },
	{ "{" BASE ",\"timestamp\":{\"header\":\"T\",\"unit\":\"us\"}}",
	  "signature.timestamp.unit: not s or ms" },
	{ "{" BASE ",\"parts\":{\"separator\":\",\",\"assign\":\"=\","
	  "\"signature\":\"v1\"},\"timestamp\":{\"part\":\"v1\"}}",
	  "other than the signature's" },
};

START_TEST(test_decl_errors)
{
	struct scheme	*s;

	s = parse(bad[_i].decl);
	ck_assert_msg(s == NULL, "accepted: %s", bad[_i].decl);
	ck_assert_msg(strstr(why, bad[_i].why) != NULL,
	    "%s: \"%s\" lacks \"%s\"", bad[_i].decl, why, bad[_i].why);
}
END_TEST

/* Declarations that are right, and their canonical text. */
static const struct {
	const char	*decl;
	const char	*canon;
} decls[] = {
	{ "{" BASE "}",
	  "{\"header\":\"x-sig\",\"signed\":\"{body}\",\"algorithm\":"
	  "\"hmac-sha256\",\"encoding\":\"hex\",\"key\":\"text\"}" },
	{ "{\"header\":\"Webhook-Signature\",\"parts\":{\"separator\":\" \","
	  "\"assign\":\",\",\"signature\":\"v1a\"},\"timestamp\":{\"header\":"
	  "\"webhook-timestamp\"},\"signed\":\"{header:webhook-id}.{timestamp}."
	  "{body}\",\"algorithm\":\"ed25519\",\"encoding\":\"base64\","
	  "\"key\":\"base64\",\"key_prefix\":\"whpk_\"}",
	  "{\"header\":\"webhook-signature\",\"parts\":{\"separator\":\" \","
	  "\"assign\":\",\",\"signature\":\"v1a\"},\"timestamp\":{\"header\":"
	  "\"webhook-timestamp\",\"unit\":\"s\"},\"signed\":"
	  "\"{header:webhook-id}.{timestamp}.{body}\",\"algorithm\":"
	  "\"ed25519\",\"encoding\":\"base64\",\"key\":\"base64\","
	  "\"key_prefix\":\"whpk_\"}" },
	{ "{\"header\":\"X-Square-Hmacsha256-Signature\",\"signed\":"
	  "\"{url}{body}\",\"algorithm\":\"hmac-sha256\",\"encoding\":"
	  "\"base64\",\"url\":\"https://h.example/hooks/sq\"}",
	  "{\"header\":\"x-square-hmacsha256-signature\",\"signed\":"
	  "\"{url}{body}\",\"algorithm\":\"hmac-sha256\",\"encoding\":"
	  "\"base64\",\"key\":\"text\",\"url\":\"https://h.example/hooks/sq\"}" },
	{ "{\"header\":\"X-Hub-Signature-256\",\"prefix\":\"sha256=\","
	  "\"signed\":\"{body}\",\"algorithm\":\"hmac-sha256\",\"encoding\":"
	  "\"hex\",\"key\":\"text\"}",
	  "{\"header\":\"x-hub-signature-256\",\"prefix\":\"sha256=\","
	  "\"signed\":\"{body}\",\"algorithm\":\"hmac-sha256\",\"encoding\":"
	  "\"hex\",\"key\":\"text\"}" },
	{ "{\"header\":\"Livepeer-Signature\",\"parts\":{\"separator\":\",\","
	  "\"assign\":\"=\",\"signature\":\"v1\"},\"timestamp\":{\"part\":"
	  "\"t\",\"unit\":\"ms\"},\"signed\":\"{body}\",\"algorithm\":"
	  "\"hmac-sha256\",\"encoding\":\"hex\"}",
	  "{\"header\":\"livepeer-signature\",\"parts\":{\"separator\":\",\","
	  "\"assign\":\"=\",\"signature\":\"v1\"},\"timestamp\":{\"part\":"
	  "\"t\",\"unit\":\"ms\"},\"signed\":\"{body}\",\"algorithm\":"
	  "\"hmac-sha256\",\"encoding\":\"hex\",\"key\":\"text\"}" },
};

START_TEST(test_decl_canonical)
{
	struct scheme	*s, *t;
	char		*a, *b;

	s = parse(decls[_i].decl);
	ck_assert_msg(s != NULL, "%s: %s", decls[_i].decl, why);
	a = scheme_text(s);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(a, decls[_i].canon);
	/* The canonical text reads back as the same scheme. */
	t = parse(a);
	ck_assert_ptr_nonnull(t);
	b = scheme_text(t);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	scheme_free(s);
	scheme_free(t);
}
END_TEST

START_TEST(test_decl_signs_and_weak)
{
	struct scheme		*s;
	const char *const	*h;

	s = parse(decls[1].decl);
	ck_assert_ptr_nonnull(s);
	h = scheme_signed_headers(s);
	ck_assert_str_eq(h[0], "webhook-id");
	ck_assert_str_eq(h[1], "webhook-timestamp");
	ck_assert_ptr_null(h[2]);
	ck_assert_int_eq(scheme_weak(s), 0);
	ck_assert_int_eq(scheme_timed(s), 1);
	ck_assert_str_eq(scheme_algorithm(s), "ed25519");
	scheme_free(s);

	/* A time in a header the text does not sign is not a signed header. */
	s = parse("{" BASE ",\"timestamp\":{\"header\":\"X-T\"}}");
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_null(scheme_signed_headers(s)[0]);
	ck_assert_int_eq(scheme_timed(s), 1);
	scheme_free(s);

	s = parse("{\"header\":\"X-Cld-Signature\",\"timestamp\":{\"header\":"
	    "\"X-Cld-Timestamp\"},\"signed\":\"{body}{timestamp}{secret}\","
	    "\"algorithm\":\"sha1\",\"encoding\":\"hex\"}");
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(scheme_weak(s), 1);
	ck_assert_str_eq(scheme_signed_headers(s)[0], "x-cld-timestamp");
	scheme_free(s);
}
END_TEST

static int
always_fail(enum fault_point p, void *arg)
{
	(void)p;
	(void)arg;
	return 1;
}

START_TEST(test_decl_nomem)
{
	struct scheme	*s;
	cJSON		*v;
	int		 nomem;

	v = cJSON_Parse("{" BASE "}");
	ck_assert_ptr_nonnull(v);
	fault_set(FAULT_ALLOC, always_fail, NULL);
	s = scheme_parse(v, why, sizeof(why), &nomem);
	fault_set(FAULT_ALLOC, NULL, NULL);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(nomem, 1);
	ck_assert_str_eq(why, "out of memory");
	cJSON_Delete(v);
}
END_TEST

/*
 * Requests
 */

#define HDRS_MAX	4

struct hdrs {
	const char	*name[HDRS_MAX];
	const char	*value[HDRS_MAX];
	size_t		 n;
};

static const char *
hdr(const void *arg, const char *name)
{
	const struct hdrs	*h = arg;
	size_t			 i;

	for (i = 0; i < h->n; i++)
		if (strcasecmp(h->name[i], name) == 0)
			return h->value[i];
	return NULL;
}

static void
hset(struct hdrs *h, const char *name, const char *value)
{
	size_t	i;

	for (i = 0; i < h->n; i++)
		if (strcasecmp(h->name[i], name) == 0) {
			h->value[i] = value;
			return;
		}
	ck_assert_uint_lt(h->n, HDRS_MAX);
	h->name[h->n] = name;
	h->value[h->n++] = value;
}

static struct scheme_req
mkreq(const struct hdrs *h, const char *body, int64_t now_ms)
{
	struct scheme_req	r;

	memset(&r, 0, sizeof(r));
	r.header = hdr;
	r.arg = h;
	r.body = (const unsigned char *)body;
	r.bodylen = strlen(body);
	r.now_ms = now_ms;
	return r;
}

static struct auth_secret
sec(const char *key)
{
	struct auth_secret	a;

	a.key = (const unsigned char *)key;
	a.keylen = strlen(key);
	a.expires_at = 0;
	return a;
}

static enum auth_status
verify(const struct scheme *s, const struct hdrs *h, const char *body,
    const char *key)
{
	struct scheme_req	r = mkreq(h, body, NOW_MS);
	struct auth_secret	a = sec(key);

	return scheme_verify(s, &r, &a, 1, 300, NULL);
}

/*
 * Known answers in the providers' shapes: the header as the provider
 * writes it, the MAC from openssl (see the top of the file).
 */
static const struct {
	const char	*name;
	const char	*decl;
	const char	*key;
	const char	*h[3][2];	/* name, value */
	const char	*query;
} known[] = {
	{ "t in milliseconds, a part of the header",
	  "{\"header\":\"Livepeer-Signature\",\"parts\":{\"separator\":\",\","
	  "\"assign\":\"=\",\"signature\":\"v1\"},\"timestamp\":{\"part\":"
	  "\"t\",\"unit\":\"ms\"},\"signed\":\"{timestamp}.{body}\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"hex\"}", "lp_secret",
	  { { "Livepeer-Signature", "t=1796119205000,v1=b22d18025945b1f9b278"
	      "589f3313ea744cd59ddeb80de2ff68b17534e9b4928a" } }, NULL },
	{ "bitmovin: hmac-sha512 hex of the body",
	  "{\"header\":\"Bitmovin-Signature\",\"signed\":\"{body}\","
	  "\"algorithm\":\"hmac-sha512\",\"encoding\":\"hex\"}", "bm_secret",
	  { { "Bitmovin-Signature", "15bc520bd455dd93538a5153963eb66d0255265d"
	      "8459b5b4f1eaf4272a982bf06be00af3aad3be9d52c6a545a5fdb6817dfa89"
	      "735697d88e250af9bc7e45af9b" } }, NULL },
	{ "slack: v0= prefix, the time in a header",
	  "{\"header\":\"X-Slack-Signature\",\"prefix\":\"v0=\",\"timestamp\":"
	  "{\"header\":\"X-Slack-Request-Timestamp\"},\"signed\":"
	  "\"v0:{timestamp}:{body}\",\"algorithm\":\"hmac-sha256\","
	  "\"encoding\":\"hex\"}", "slack_secret",
	  { { "X-Slack-Signature", "v0=1c9774adfdbac6e2761e2471e9dcaddd80d38d"
	      "ed4ab6ca9470ff3450270e7bb4" },
	    { "X-Slack-Request-Timestamp", "1796119205" } }, NULL },
	{ "cloudinary: plain sha1 over body, time and secret",
	  "{\"header\":\"X-Cld-Signature\",\"timestamp\":{\"header\":"
	  "\"X-Cld-Timestamp\"},\"signed\":\"{body}{timestamp}{secret}\","
	  "\"algorithm\":\"sha1\",\"encoding\":\"hex\"}", "cld_secret",
	  { { "X-Cld-Signature", "5494def6a2b4cea2f65695f15892bb757ea04d91" },
	    { "X-Cld-Timestamp", "1796119205" } }, NULL },
	{ "square: base64 over the URL, its query, and the body",
	  "{\"header\":\"X-Square-Hmacsha256-Signature\",\"signed\":"
	  "\"{url}{body}\",\"url\":\"https://h.example/hooks/sq\","
	  "\"algorithm\":\"hmac-sha256\",\"encoding\":\"base64\"}",
	  "sq_secret",
	  { { "X-Square-Hmacsha256-Signature",
	      "H+81d/fhpa+Q5I57lKvDewPbbymUm6TiVkCbDcQpME8=" } }, "x=1" },
	{ "base64url, unpadded, hmac-sha1",
	  "{\"header\":\"X-Sig\",\"signed\":\"{body}\",\"algorithm\":"
	  "\"hmac-sha1\",\"encoding\":\"base64url\"}", "tw_secret",
	  { { "X-Sig", "__W3zEjk0I_E4R4rYB-gDHUYgQU" } }, NULL },
};

static struct hdrs
known_hdrs(size_t k)
{
	struct hdrs	h;
	size_t		i;

	memset(&h, 0, sizeof(h));
	for (i = 0; i < 3 && known[k].h[i][0] != NULL; i++)
		hset(&h, known[k].h[i][0], known[k].h[i][1]);
	return h;
}

START_TEST(test_known_answers)
{
	struct scheme		*s;
	struct scheme_req	 r;
	struct auth_secret	 a = sec(known[_i].key);
	struct hdrs		 h = known_hdrs((size_t)_i);
	char			 body[] = BODY;

	s = parse(known[_i].decl);
	ck_assert_msg(s != NULL, "%s: %s", known[_i].name, why);
	r = mkreq(&h, body, NOW_MS);
	r.query = known[_i].query;
	ck_assert_msg(scheme_verify(s, &r, &a, 1, 300, NULL) == AUTH_OK, "%s",
	    known[_i].name);
	/* One byte of the body changed. */
	body[2] = 'b';
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL),
	    AUTH_BAD_SIGNATURE);
	body[2] = 'a';
	/* Another secret. */
	a = sec("another");
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL),
	    AUTH_BAD_SIGNATURE);
	a = sec(known[_i].key);
	/* Signed with the same secret, the same header comes out. */
	{
		struct scheme_header	out[SCHEME_OUT_MAX];
		size_t			nout, i;

		ck_assert_int_eq(scheme_sign(s, &r,
		    (const unsigned char *)known[_i].key,
		    strlen(known[_i].key), out, &nout), 0);
		ck_assert_uint_ge(nout, 1);
		for (i = 0; i < nout; i++)
			ck_assert_str_eq(out[i].value, hdr(&h, out[i].name));
	}
	scheme_free(s);
}
END_TEST

#define TSIG	"{\"header\":\"Webhook-Signature\",\"parts\":{\"separator\":" \
		"\",\",\"assign\":\"=\",\"signature\":\"sig1\"},\"timestamp\":" \
		"{\"part\":\"time\"},\"signed\":\"{timestamp}.{body}\"," \
		"\"algorithm\":\"hmac-sha256\",\"encoding\":\"hex\"}"

/* Signs BODY at now_ms with key into buf: the signature header's value. */
static void
sign_into(const struct scheme *s, const char *key, int64_t now_ms,
    char *buf, size_t len)
{
	struct hdrs		h;
	struct scheme_req	r;
	struct scheme_header	out[SCHEME_OUT_MAX];
	size_t			nout;

	memset(&h, 0, sizeof(h));
	r = mkreq(&h, BODY, now_ms);
	ck_assert_int_eq(scheme_sign(s, &r, (const unsigned char *)key,
	    strlen(key), out, &nout), 0);
	ck_assert_uint_eq(nout, 1);
	ck_assert_int_lt(snprintf(buf, len, "%s", out[0].value), (int)len);
}

START_TEST(test_parts)
{
	static const struct {
		const char		*fmt;	/* %s: sig1's hex */
		enum auth_status	 want;
	} cases[] = {
		{ "time=1796119205,sig1=%s", AUTH_OK },
		{ " time=1796119205 , sig1=%s ", AUTH_OK },
		{ "sig1=%s,time=1796119205", AUTH_OK },
		{ "time=1796119205,sig0=x,sig1=%s,other", AUTH_OK },
		{ "time=1796119205,sig1=00,sig1=%s", AUTH_OK },
		{ "time=1796119205,sig1=%.63s", AUTH_BAD_SIGNATURE },
		{ "time=1796119205,sig1=", AUTH_BAD_SIGNATURE },
		{ "time=1796119205", AUTH_MALFORMED },
		{ "sig1=%s", AUTH_MALFORMED },
		{ "time=1796119205,time=1796119205,sig1=%s", AUTH_MALFORMED },
		{ "time=-1796119205,sig1=%s", AUTH_MALFORMED },
		{ "time=17961192o5,sig1=%s", AUTH_MALFORMED },
		{ "time=,sig1=%s", AUTH_MALFORMED },
		{ "time=99999999999999999999999,sig1=%s", AUTH_MALFORMED },
		{ "time=1796118904,sig1=%s", AUTH_TIMESTAMP },
		{ "time=1796119506,sig1=%s", AUTH_TIMESTAMP },
		{ "time=1796118905,sig1=%s", AUTH_BAD_SIGNATURE },
		{ "time=9223372036854775807,sig1=%s", AUTH_TIMESTAMP },
	};
	struct scheme	*s;
	struct hdrs	 h;
	char		 good[AUTH_HEADER_MAX], hex[130], v[AUTH_HEADER_MAX];
	size_t		 i;

	s = parse(TSIG);
	ck_assert_ptr_nonnull(s);
	sign_into(s, "cf", NOW_MS, good, sizeof(good));
	ck_assert_int_eq(strncmp(good, "time=1796119205,sig1=", 21), 0);
	ck_assert_int_lt(snprintf(hex, sizeof(hex), "%s", good + 21),
	    (int)sizeof(hex));
	for (i = 0; i < NELEM(cases); i++) {
		memset(&h, 0, sizeof(h));
		(void)snprintf(v, sizeof(v), cases[i].fmt, hex);
		hset(&h, "webhook-signature", v);
		ck_assert_msg(verify(s, &h, BODY, "cf") == cases[i].want,
		    "%s: %s", v, auth_strerror(verify(s, &h, BODY, "cf")));
	}
	scheme_free(s);
}
END_TEST

START_TEST(test_headers_bounded)
{
	struct scheme	*s;
	struct hdrs	 h;
	char		 good[AUTH_HEADER_MAX], v[AUTH_HEADER_MAX + 64];
	size_t		 n;

	s = parse(TSIG);
	ck_assert_ptr_nonnull(s);
	sign_into(s, "cf", NOW_MS, good, sizeof(good));
	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(verify(s, &h, BODY, "cf"), AUTH_MISSING);
	hset(&h, "webhook-signature", "");
	ck_assert_int_eq(verify(s, &h, BODY, "cf"), AUTH_MISSING);
	/* Nine signatures: more than any rotation needs. */
	n = (size_t)snprintf(v, sizeof(v), "time=1796119205");
	while (n + 8 < AUTH_HEADER_MAX && n < 9 * 8 + 16)
		n += (size_t)snprintf(v + n, sizeof(v) - n, ",sig1=00");
	hset(&h, "webhook-signature", v);
	ck_assert_int_eq(verify(s, &h, BODY, "cf"), AUTH_MALFORMED);
	/* A control byte; a header one byte too long. */
	ck_assert_int_lt(snprintf(v, sizeof(v), "%s\x01", good),
	    (int)sizeof(v));
	hset(&h, "webhook-signature", v);
	ck_assert_int_eq(verify(s, &h, BODY, "cf"), AUTH_MALFORMED);
	memset(v, ' ', AUTH_HEADER_MAX + 1);
	memcpy(v, good, strlen(good));
	v[AUTH_HEADER_MAX + 1] = '\0';
	hset(&h, "webhook-signature", v);
	ck_assert_int_eq(verify(s, &h, BODY, "cf"), AUTH_MALFORMED);
	v[AUTH_HEADER_MAX] = '\0';
	ck_assert_int_eq(verify(s, &h, BODY, "cf"), AUTH_OK);
	scheme_free(s);
}
END_TEST

START_TEST(test_secrets)
{
	struct scheme		*s;
	struct hdrs		 h;
	struct scheme_req	 r;
	struct auth_secret	 a[3];
	char			 good[AUTH_HEADER_MAX];
	size_t			 m;

	s = parse(TSIG);
	ck_assert_ptr_nonnull(s);
	sign_into(s, "new", NOW_MS, good, sizeof(good));
	memset(&h, 0, sizeof(h));
	hset(&h, "webhook-signature", good);
	r = mkreq(&h, BODY, NOW_MS);
	/* Rotation: the old and the new secret at once; the new one named. */
	a[0] = sec("old");
	a[1] = sec("new");
	m = 9;
	ck_assert_int_eq(scheme_verify(s, &r, a, 2, 300, &m), AUTH_OK);
	ck_assert_uint_eq(m, 1);
	a[2] = a[0];
	a[0] = a[1];
	ck_assert_int_eq(scheme_verify(s, &r, a, 3, 300, &m), AUTH_OK);
	ck_assert_uint_eq(m, 0);
	a[0] = a[2];
	/* The new one expired; expired only. */
	a[1].expires_at = NOW_S;
	ck_assert_int_eq(scheme_verify(s, &r, a, 2, 300, NULL),
	    AUTH_BAD_SIGNATURE);
	ck_assert_int_eq(scheme_verify(s, &r, a + 1, 1, 300, NULL),
	    AUTH_NO_SECRET);
	ck_assert_int_eq(scheme_verify(s, &r, NULL, 0, 300, NULL),
	    AUTH_NO_SECRET);
	a[1].expires_at = NOW_S + 1;
	ck_assert_int_eq(scheme_verify(s, &r, a + 1, 1, 300, NULL), AUTH_OK);
	/* Bad arguments. */
	ck_assert_int_eq(scheme_verify(s, &r, a, 1, -1, NULL), AUTH_ERROR);
	ck_assert_int_eq(scheme_verify(s, &r, NULL, 1, 300, NULL), AUTH_ERROR);
	r.body = NULL;
	ck_assert_int_eq(scheme_verify(s, &r, a, 1, 300, NULL), AUTH_ERROR);
	scheme_free(s);
}
END_TEST

/* Standard Webhooks v1, the specification's own example. */
#define SW	"{\"header\":\"webhook-signature\",\"parts\":{\"separator\":" \
		"\" \",\"assign\":\",\",\"signature\":\"v1\"},\"timestamp\":" \
		"{\"header\":\"webhook-timestamp\"},\"signed\":" \
		"\"{header:webhook-id}.{timestamp}.{body}\",\"algorithm\":" \
		"\"hmac-sha256\",\"encoding\":\"base64\",\"key\":\"base64\"," \
		"\"key_prefix\":\"whsec_\"}"

START_TEST(test_standard_webhooks)
{
	struct scheme		*s;
	struct hdrs		 h;
	struct scheme_req	 r;
	struct auth_secret	 a = sec("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
	const char		*body = "{\"test\": 2432232314}";

	s = parse(SW);
	ck_assert_ptr_nonnull(s);
	memset(&h, 0, sizeof(h));
	hset(&h, "webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek");
	hset(&h, "webhook-timestamp", "1614265330");
	hset(&h, "webhook-signature", "v1a,xx v2,yy "
	    "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
	r = mkreq(&h, body, INT64_C(1614265330) * 1000);
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL), AUTH_OK);
	/* The id is signed: another id is another signature. */
	hset(&h, "webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJeK");
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL),
	    AUTH_BAD_SIGNATURE);
	hset(&h, "webhook-id", NULL);
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL), AUTH_MISSING);
	hset(&h, "webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek");
	/* A secret that does not decode is none. */
	a = sec("whsec_!!");
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL),
	    AUTH_NO_SECRET);
	/* Without the prefix, the secret decodes as it is. */
	a = sec("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL), AUTH_OK);
	hset(&h, "webhook-timestamp", NULL);
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL), AUTH_MISSING);
	scheme_free(s);
}
END_TEST

/* RFC 8032, 7.1, TEST 1: the empty message. */
#define ED_SK	"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
#define ED_PK	"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
#define ED_SIG	"e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522" \
		"4901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe246551414" \
		"38e7a100b"

/* hex as "<prefix><base64>" into out. */
static void
b64_of_hex(const char *prefix, const char *hex, char *out, size_t len)
{
	unsigned char	bin[64];
	size_t		n, p = strlen(prefix);

	ck_assert_int_eq(sodium_hex2bin(bin, sizeof(bin), hex, strlen(hex),
	    NULL, &n, NULL), 0);
	memcpy(out, prefix, p);
	sodium_bin2base64(out + p, len - p, bin, n,
	    sodium_base64_VARIANT_ORIGINAL);
}

START_TEST(test_ed25519)
{
	struct scheme		*s;
	struct hdrs		 h;
	struct scheme_req	 r;
	struct scheme_header	 out[SCHEME_OUT_MAX];
	struct auth_secret	 a;
	char			 pk[64], sk[64], sig[128], v[160];
	size_t			 nout;

	s = parse("{\"header\":\"X-Ed\",\"signed\":\"{body}\",\"algorithm\":"
	    "\"ed25519\",\"encoding\":\"base64\",\"key\":\"base64\","
	    "\"key_prefix\":\"whpk_\"}");
	ck_assert_ptr_nonnull(s);
	b64_of_hex("whpk_", ED_PK, pk, sizeof(pk));
	b64_of_hex("whsk_", ED_SK, sk, sizeof(sk));
	b64_of_hex("", ED_SIG, sig, sizeof(sig));
	memset(&h, 0, sizeof(h));
	hset(&h, "X-Ed", sig);
	r = mkreq(&h, "", NOW_MS);
	a = sec(pk);
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL), AUTH_OK);
	/* Signed from the seed, the same signature (Ed25519 is fixed). */
	ck_assert_int_eq(scheme_sign(s, &r, (const unsigned char *)sk,
	    strlen(sk), out, &nout), 0);
	ck_assert_str_eq(out[0].value, sig);
	/* Any other message fails. */
	r.body = (const unsigned char *)"x";
	r.bodylen = 1;
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL),
	    AUTH_BAD_SIGNATURE);
	/* A key of another length is none. */
	a = sec("whpk_AAAA");
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL),
	    AUTH_NO_SECRET);
	/* A signature of another length does not match. */
	ck_assert_int_lt(snprintf(v, sizeof(v), "%.40s", sig), (int)sizeof(v));
	hset(&h, "X-Ed", v);
	a = sec(pk);
	r.body = (const unsigned char *)"";
	r.bodylen = 0;
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL),
	    AUTH_BAD_SIGNATURE);
	scheme_free(s);
}
END_TEST

/* A prefix marks the scheme's values; another prefix is not one. */
START_TEST(test_prefix)
{
	struct scheme	*s;
	struct hdrs	 h;
	char		 good[AUTH_HEADER_MAX], v[AUTH_HEADER_MAX];

	s = parse("{\"header\":\"X-Hub-Signature-256\",\"prefix\":\"sha256=\","
	    "\"signed\":\"{body}\",\"algorithm\":\"hmac-sha256\","
	    "\"encoding\":\"hex\"}");
	ck_assert_ptr_nonnull(s);
	sign_into(s, "gh", NOW_MS, good, sizeof(good));
	ck_assert_int_eq(strncmp(good, "sha256=", 7), 0);
	memset(&h, 0, sizeof(h));
	hset(&h, "x-hub-signature-256", good);
	ck_assert_int_eq(verify(s, &h, BODY, "gh"), AUTH_OK);
	hset(&h, "x-hub-signature-256", good + 7);
	ck_assert_int_eq(verify(s, &h, BODY, "gh"), AUTH_MALFORMED);
	ck_assert_int_lt(snprintf(v, sizeof(v), "sha1=%s", good + 7),
	    (int)sizeof(v));
	hset(&h, "x-hub-signature-256", v);
	ck_assert_int_eq(verify(s, &h, BODY, "gh"), AUTH_MALFORMED);
	/* Hex in capitals is the same signature. */
	ck_assert_int_lt(snprintf(v, sizeof(v), "%s", good), (int)sizeof(v));
	for (size_t i = 7; v[i] != '\0'; i++)
		if (v[i] >= 'a' && v[i] <= 'f')
			v[i] = (char)(v[i] - 'a' + 'A');
	hset(&h, "x-hub-signature-256", v);
	ck_assert_int_eq(verify(s, &h, BODY, "gh"), AUTH_OK);
	scheme_free(s);
}
END_TEST

START_TEST(test_milliseconds)
{
	struct scheme	*s;
	struct hdrs	 h;
	char		 v[AUTH_HEADER_MAX];

	s = parse("{\"header\":\"S\",\"parts\":{\"separator\":\",\",\"assign\":"
	    "\"=\",\"signature\":\"v1\"},\"timestamp\":{\"part\":\"t\","
	    "\"unit\":\"ms\"},\"signed\":\"{body}\",\"algorithm\":"
	    "\"hmac-sha256\",\"encoding\":\"hex\"}");
	ck_assert_ptr_nonnull(s);
	memset(&h, 0, sizeof(h));
	/* 300 s and 1 ms ago: too old; 300 s ago exactly: in time. */
	sign_into(s, "k", NOW_MS - 300001, v, sizeof(v));
	ck_assert_int_eq(strncmp(v, "t=1796118904999,", 16), 0);
	hset(&h, "s", v);
	ck_assert_int_eq(verify(s, &h, BODY, "k"), AUTH_TIMESTAMP);
	sign_into(s, "k", NOW_MS - 300000, v, sizeof(v));
	hset(&h, "s", v);
	ck_assert_int_eq(verify(s, &h, BODY, "k"), AUTH_OK);
	/* A time in seconds, read as milliseconds, is 1970. */
	sign_into(s, "k", NOW_S, v, sizeof(v));
	hset(&h, "s", v);
	ck_assert_int_eq(verify(s, &h, BODY, "k"), AUTH_TIMESTAMP);
	scheme_free(s);
}
END_TEST

/* The URL's query is the request's; a query of another request differs. */
/*
 * {form}: the body read as a form, its fields by name, each name then
 * value decoded (Twilio's), after the URL and its query; a body that is
 * no form is malformed.
 */
START_TEST(test_form)
{
	struct scheme		*s;
	struct hdrs		 h;
	struct scheme_req	 r;
	struct auth_secret	 a = sec("tw_secret_of_16b");
	const char		*body = "b=2&a=x+y%21";

	s = parse("{\"header\":\"X-Twilio-Signature\",\"signed\":"
	    "\"{url}{form}\",\"url\":\"https://h.example/hooks/tw\","
	    "\"algorithm\":\"hmac-sha1\",\"encoding\":\"base64\"}");
	ck_assert_msg(s != NULL, "%s", why);
	memset(&h, 0, sizeof(h));
	hset(&h, "X-Twilio-Signature", "xnmYsJbF6V8EZdpIrsKkM1bMrIQ=");
	r = mkreq(&h, body, NOW_MS);
	r.query = "q=1";
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL), AUTH_OK);
	/* The fields in another order are the same form. */
	r.body = (const unsigned char *)"a=x+y%21&b=2";
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL), AUTH_OK);
	r.body = (const unsigned char *)"a=x+y%21&b=3";
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL),
	    AUTH_BAD_SIGNATURE);
	/* No form: a field twice, a bad escape, a raw space. */
	r.body = (const unsigned char *)"a=1&a=1&b=2";
	r.bodylen = strlen((const char *)r.body);
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL),
	    AUTH_MALFORMED);
	r.body = (const unsigned char *)"a=%2&b=22";
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL),
	    AUTH_MALFORMED);
	r.body = (const unsigned char *)"a=x y&b=22";
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL),
	    AUTH_MALFORMED);
	scheme_free(s);
}
END_TEST

START_TEST(test_url_query)
{
	struct scheme		*s;
	struct hdrs		 h;
	struct scheme_req	 r;
	struct scheme_header	 out[SCHEME_OUT_MAX];
	struct auth_secret	 a = sec("k");
	size_t			 nout;
	char			 q[HB_TEXT_MAX + 2];

	s = parse("{\"header\":\"S\",\"signed\":\"{url}{body}\",\"url\":"
	    "\"https://h.example/hooks/x\",\"algorithm\":\"hmac-sha1\","
	    "\"encoding\":\"base64\"}");
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(scheme_weak(s), 1);
	memset(&h, 0, sizeof(h));
	r = mkreq(&h, BODY, NOW_MS);
	r.query = "a=1";
	ck_assert_int_eq(scheme_sign(s, &r, (const unsigned char *)"k", 1,
	    out, &nout), 0);
	hset(&h, "s", out[0].value);
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL), AUTH_OK);
	r.query = "a=2";
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL),
	    AUTH_BAD_SIGNATURE);
	r.query = "";
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL),
	    AUTH_BAD_SIGNATURE);
	memset(q, 'q', sizeof(q) - 1);
	q[sizeof(q) - 1] = '\0';
	r.query = q;
	ck_assert_int_eq(scheme_verify(s, &r, &a, 1, 300, NULL),
	    AUTH_MALFORMED);
	scheme_free(s);
}
END_TEST

static Suite *
scheme_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("scheme");

	tc = tcase_create("digest");
	tcase_add_test(tc, test_sha1_vectors);
	tcase_add_test(tc, test_sha1_million);
	tcase_add_test(tc, test_hmac_vectors);
	tcase_add_test(tc, test_digest_args);
	suite_add_tcase(s, tc);

	tc = tcase_create("declaration");
	tcase_add_loop_test(tc, test_decl_errors, 0, (int)NELEM(bad));
	tcase_add_loop_test(tc, test_decl_canonical, 0, (int)NELEM(decls));
	tcase_add_test(tc, test_decl_signs_and_weak);
	tcase_add_test(tc, test_decl_nomem);
	suite_add_tcase(s, tc);

	tc = tcase_create("requests");
	tcase_add_loop_test(tc, test_known_answers, 0, (int)NELEM(known));
	tcase_add_test(tc, test_parts);
	tcase_add_test(tc, test_headers_bounded);
	tcase_add_test(tc, test_secrets);
	tcase_add_test(tc, test_standard_webhooks);
	tcase_add_test(tc, test_ed25519);
	tcase_add_test(tc, test_prefix);
	tcase_add_test(tc, test_milliseconds);
	tcase_add_test(tc, test_url_query);
	tcase_add_test(tc, test_form);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	if (util_init() != 0)
		return 1;
	return test_run_pure(scheme_suite);
}
