/*
 * check_auth.c: tests of lib/provider/auth.c.
 *
 * Known answers that do not come from provider/auth.c itself were computed with
 * the openssl and b2sum command line tools, e.g.
 *	printf '%s' '1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret
 *	printf abc | b2sum -l 256
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "provider/auth.h"
#include "testutil.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* Tornado known answer: HMAC-SHA256("secret", "1700000000.{"a":1}"). */
#define KA_SECRET	"secret"
#define KA_T		INT64_C(1700000000)
#define KA_TS		"1700000000"
#define KA_BODY		"{\"a\":1}"
#define KA_MAC \
	"49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686"
#define KA_MAC_UPPER \
	"49F24E537407743FA4A0242BB63B94B9A47EE99CBBE071CCD8A22550AE411686"
#define KA_HEADER	"t=" KA_TS ",v1=" KA_MAC
/* Another 64 lowercase hex digits: a well-formed but wrong v1. */
#define WRONG_MAC \
	"0000000000000000000000000000000000000000000000000000000000000000"

/*
 * Standard Webhooks known answer: the example of the specification,
 * reproduced with
 *	K=$(printf %s MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw | base64 -d | xxd -p)
 *	printf %s 'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}' |
 *	    openssl dgst -sha256 -mac HMAC -macopt hexkey:$K -binary | base64
 */
#define SW_SECRET	"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#define SW_SECRET_BARE	"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#define SW_ID		"msg_p5jXN8AQM9LWM0D4loKWxJek"
#define SW_T		INT64_C(1614265330)
#define SW_TS		"1614265330"
#define SW_BODY		"{\"test\": 2432232314}"
#define SW_B64		"g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
#define SW_SIG		"v1," SW_B64
#define SW_WRONG	"v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

#define TOL		AUTH_TOLERANCE_DEFAULT

static Suite	*auth_suite(void);

static struct auth_secret
mksecret(const char *key, int64_t expires_at)
{
	struct auth_secret	s;

	s.key = (const unsigned char *)key;
	s.keylen = strlen(key);
	s.expires_at = expires_at;
	return s;
}

static void
unhex(const char *hex, unsigned char *out, size_t len)
{
	size_t	binlen;

	ck_assert_int_eq(sodium_hex2bin(out, len, hex, strlen(hex), NULL,
	    &binlen, NULL), 0);
	ck_assert_uint_eq(binlen, len);
}

/* Verifies a tsig header against the known-answer secret and body. */
static enum auth_status
ka_verify(const char *header, int64_t now)
{
	struct auth_secret	s = mksecret(KA_SECRET, 0);

	return auth_verify_tsig(header, (const unsigned char *)KA_BODY,
	    strlen(KA_BODY), &s, 1, now, TOL, NULL);
}

/* Verifies Standard Webhooks headers against the specification's example. */
static enum auth_status
sw_verify(const char *id, const char *ts, const char *sig, int64_t now)
{
	struct auth_secret	s = mksecret(SW_SECRET, 0);

	return auth_verify_stdwebhooks(id, ts, sig,
	    (const unsigned char *)SW_BODY, strlen(SW_BODY), &s, 1, now, TOL,
	    NULL);
}

/*
 * HMAC-SHA256
 */

/* RFC 4231 test cases 1-4, 6 and 7 (5 is a truncated output). */
static const struct rfc4231 {
	const char	*key;	/* NULL: keylen bytes of keyfill */
	size_t		 keylen;
	unsigned char	 keyfill;
	const char	*data;	/* NULL: datalen bytes of datafill */
	size_t		 datalen;
	unsigned char	 datafill;
	const char	*mac;
} rfc4231[] = {
	{ NULL, 20, 0x0b, "Hi There", 8, 0,
	  "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
	{ "Jefe", 4, 0, "what do ya want for nothing?", 28, 0,
	  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
	{ NULL, 20, 0xaa, NULL, 50, 0xdd,
	  "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
	{ "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"
	  "\x11\x12\x13\x14\x15\x16\x17\x18\x19", 25, 0, NULL, 50, 0xcd,
	  "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b" },
	{ NULL, 131, 0xaa,
	  "Test Using Larger Than Block-Size Key - Hash Key First", 54, 0,
	  "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
	{ NULL, 131, 0xaa,
	  "This is a test using a larger than block-size key and a larger "
	  "than block-size data. The key needs to be hashed before being used "
	  "by the HMAC algorithm.", 152, 0,
	  "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2" },
};

START_TEST(test_hmac_rfc4231)
{
	const struct rfc4231	*v = &rfc4231[_i];
	unsigned char		 key[256], data[256], want[32], got[32];
	const unsigned char	*parts[256];
	size_t			 lens[256], i, a, b;

	ck_assert_uint_le(v->keylen, sizeof(key));
	ck_assert_uint_le(v->datalen, sizeof(data));
	if (v->key != NULL)
		memcpy(key, v->key, v->keylen);
	else
		memset(key, v->keyfill, v->keylen);
	if (v->data != NULL)
		memcpy(data, v->data, v->datalen);
	else
		memset(data, v->datafill, v->datalen);
	unhex(v->mac, want, sizeof(want));

	/* One part. */
	parts[0] = data;
	lens[0] = v->datalen;
	memset(got, 0, sizeof(got));
	ck_assert_int_eq(auth_hmac_sha256(key, v->keylen, parts, lens, 1, got),
	    0);
	ck_assert_mem_eq(got, want, sizeof(want));

	/* Three uneven parts, with empty (one NULL) parts in between. */
	a = v->datalen / 3;
	b = 2 * v->datalen / 3 + 1;
	parts[0] = data;
	lens[0] = a;
	parts[1] = NULL;
	lens[1] = 0;
	parts[2] = data + a;
	lens[2] = b - a;
	parts[3] = data;
	lens[3] = 0;
	parts[4] = data + b;
	lens[4] = v->datalen - b;
	memset(got, 0, sizeof(got));
	ck_assert_int_eq(auth_hmac_sha256(key, v->keylen, parts, lens, 5, got),
	    0);
	ck_assert_mem_eq(got, want, sizeof(want));

	/* One byte per part. */
	for (i = 0; i < v->datalen; i++) {
		parts[i] = data + i;
		lens[i] = 1;
	}
	memset(got, 0, sizeof(got));
	ck_assert_int_eq(auth_hmac_sha256(key, v->keylen, parts, lens,
	    v->datalen, got), 0);
	ck_assert_mem_eq(got, want, sizeof(want));

	/* A missing byte changes the digest. */
	parts[0] = data;
	lens[0] = v->datalen - 1;
	ck_assert_int_eq(auth_hmac_sha256(key, v->keylen, parts, lens, 1, got),
	    0);
	ck_assert_int_ne(memcmp(got, want, sizeof(want)), 0);
}
END_TEST

START_TEST(test_hmac_empty_and_args)
{
	unsigned char		 want[32], got[32];
	const unsigned char	*parts[1];
	size_t			 lens[1];

	/* HMAC-SHA256 with an empty key over an empty message. */
	unhex(
	    "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad",
	    want, sizeof(want));
	ck_assert_int_eq(auth_hmac_sha256(NULL, 0, NULL, NULL, 0, got), 0);
	ck_assert_mem_eq(got, want, sizeof(want));
	ck_assert_int_eq(auth_hmac_sha256((const unsigned char *)"", 0, NULL,
	    NULL, 0, got), 0);
	ck_assert_mem_eq(got, want, sizeof(want));

	parts[0] = NULL;
	lens[0] = 1;
	ck_assert_int_eq(auth_hmac_sha256((const unsigned char *)"k", 1,
	    parts, lens, 1, got), -1);
	ck_assert_int_eq(auth_hmac_sha256(NULL, 1, NULL, NULL, 0, got), -1);
	ck_assert_int_eq(auth_hmac_sha256((const unsigned char *)"k", 1,
	    NULL, lens, 1, got), -1);
	ck_assert_int_eq(auth_hmac_sha256((const unsigned char *)"k", 1,
	    parts, NULL, 1, got), -1);
	ck_assert_int_eq(auth_hmac_sha256((const unsigned char *)"k", 1,
	    NULL, NULL, 0, NULL), -1);
}
END_TEST

/*
 * Tornado "t=..,v1=.." scheme
 */

START_TEST(test_tsig_known_answer)
{
	struct auth_secret	s = mksecret(KA_SECRET, 0);
	char			out[128];

	ck_assert_int_eq(ka_verify(KA_HEADER, KA_T), AUTH_OK);
	ck_assert_int_eq(auth_sign_tsig(&s, 1, KA_T, KA_T,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), out, sizeof(out)),
	    0);
	ck_assert_str_eq(out, KA_HEADER);
}
END_TEST

START_TEST(test_tsig_empty_body)
{
	/* HMAC-SHA256("secret", "1700000000.") */
	static const char	 hdr[] = "t=" KA_TS ",v1="
	    "4bc5f74d868b97888288889c5d9d65df02526f94c1592a79fdf4fe8b26e311e5";
	struct auth_secret	 s = mksecret(KA_SECRET, 0);
	char			 out[128];

	ck_assert_int_eq(auth_verify_tsig(hdr, NULL, 0, &s, 1, KA_T, TOL, NULL),
	    AUTH_OK);
	ck_assert_int_eq(auth_verify_tsig(hdr, (const unsigned char *)"", 0,
	    &s, 1, KA_T, TOL, NULL), AUTH_OK);
	ck_assert_int_eq(auth_sign_tsig(&s, 1, KA_T, KA_T, NULL, 0, out,
	    sizeof(out)), 0);
	ck_assert_str_eq(out, hdr);
	ck_assert_int_eq(ka_verify(hdr, KA_T), AUTH_BAD_SIGNATURE);
}
END_TEST

START_TEST(test_tsig_roundtrip)
{
	static const unsigned char	 body[] = "{\"event\":\"job.done\","
	    "\"id\":\"\xc3\xa9\",\"n\":\0\x01\xff}";
	static const unsigned char	 key[] = "\x00\x01binary\xff key";
	struct auth_secret		 s;
	char				 out[128];
	unsigned char			 copy[sizeof(body)];
	int64_t				 now = INT64_C(1750000123);
	size_t				 i;

	s.key = key;
	s.keylen = sizeof(key) - 1;
	s.expires_at = 0;
	ck_assert_int_eq(auth_sign_tsig(&s, 1, now, now, body, sizeof(body),
	    out, sizeof(out)), 0);
	ck_assert_int_eq(strncmp(out, "t=1750000123,v1=", 16), 0);
	ck_assert_uint_eq(strlen(out), 16 + 64);
	ck_assert_int_eq(auth_verify_tsig(out, body, sizeof(body), &s, 1, now,
	    TOL, NULL), AUTH_OK);

	/* Any one byte changed, one byte more or less: rejected. */
	for (i = 0; i < sizeof(body); i++) {
		memcpy(copy, body, sizeof(body));
		copy[i] ^= 0x01;
		ck_assert_int_eq(auth_verify_tsig(out, copy, sizeof(copy), &s,
		    1, now, TOL, NULL), AUTH_BAD_SIGNATURE);
	}
	ck_assert_int_eq(auth_verify_tsig(out, body, sizeof(body) - 1, &s, 1,
	    now, TOL, NULL), AUTH_BAD_SIGNATURE);
	ck_assert_int_eq(auth_verify_tsig(out, body, 0, &s, 1, now, TOL, NULL),
	    AUTH_BAD_SIGNATURE);

	/* Another key: rejected. */
	s.keylen--;
	ck_assert_int_eq(auth_verify_tsig(out, body, sizeof(body), &s, 1, now,
	    TOL, NULL), AUTH_BAD_SIGNATURE);
}
END_TEST

START_TEST(test_tsig_body_one_byte)
{
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER,
	    (const unsigned char *)"{\"a\":2}", 7, &(struct auth_secret){
	    (const unsigned char *)KA_SECRET, 6, 0 }, 1, KA_T, TOL, NULL),
	    AUTH_BAD_SIGNATURE);
}
END_TEST

START_TEST(test_tsig_tolerance)
{
	/* The header's t is fixed; move now around it. */
	ck_assert_int_eq(ka_verify(KA_HEADER, KA_T + TOL), AUTH_OK);
	ck_assert_int_eq(ka_verify(KA_HEADER, KA_T + TOL + 1), AUTH_TIMESTAMP);
	ck_assert_int_eq(ka_verify(KA_HEADER, KA_T - TOL), AUTH_OK);
	ck_assert_int_eq(ka_verify(KA_HEADER, KA_T - TOL - 1), AUTH_TIMESTAMP);
	ck_assert_int_eq(ka_verify(KA_HEADER, INT64_MAX), AUTH_TIMESTAMP);
	ck_assert_int_eq(ka_verify(KA_HEADER, INT64_MIN), AUTH_TIMESTAMP);
	ck_assert_int_eq(ka_verify(KA_HEADER, 0), AUTH_TIMESTAMP);
}
END_TEST

START_TEST(test_tsig_tolerance_signed)
{
	struct auth_secret	s = mksecret("k", 0);
	char			out[128];
	int64_t			now = INT64_C(1800000000);
	static const int64_t	off[] = { -TOL - 1, -TOL, 0, TOL, TOL + 1 };
	static const int	ok[] = { 0, 1, 1, 1, 0 };
	size_t			i;

	for (i = 0; i < NELEM(off); i++) {
		ck_assert_int_eq(auth_sign_tsig(&s, 1, now, now + off[i],
		    (const unsigned char *)"x", 1, out, sizeof(out)), 0);
		ck_assert_int_eq(auth_verify_tsig(out,
		    (const unsigned char *)"x", 1, &s, 1, now, TOL, NULL),
		    ok[i] ? AUTH_OK : AUTH_TIMESTAMP);
	}
	/* Tolerance 0: only exactly now. */
	ck_assert_int_eq(auth_sign_tsig(&s, 1, now, now,
	    (const unsigned char *)"x", 1, out, sizeof(out)), 0);
	ck_assert_int_eq(auth_verify_tsig(out, (const unsigned char *)"x", 1,
	    &s, 1, now, 0, NULL), AUTH_OK);
	ck_assert_int_eq(auth_verify_tsig(out, (const unsigned char *)"x", 1,
	    &s, 1, now + 1, 0, NULL), AUTH_TIMESTAMP);
}
END_TEST

/* Headers checked against KA_SECRET, KA_BODY at now = KA_T. */
static const struct tsig_case {
	const char		*header;
	enum auth_status	 want;
} tsig_cases[] = {
	{ KA_HEADER, AUTH_OK },
	/* OWS around elements is ignored. */
	{ " t=" KA_TS " , v1=" KA_MAC " ", AUTH_OK },
	{ "\tt=" KA_TS ",\t v1=" KA_MAC "\t", AUTH_OK },
	{ "v1=" KA_MAC ",t=" KA_TS, AUTH_OK },
	/* Unknown elements are ignored. */
	{ "t=" KA_TS ",v0=deadbeef,v1=" KA_MAC ",v2=zz,x-y_z=", AUTH_OK },
	/*
	 * Uppercase hex is accepted: we sign in lowercase, but v1 is compared
	 * as the decoded 32 bytes (sodium_hex2bin takes either case), and a
	 * sender that uppercases its hex is not forging anything.
	 */
	{ "t=" KA_TS ",v1=" KA_MAC_UPPER, AUTH_OK },
	/* A value that does not decode to 32 bytes just does not match. */
	{ "t=" KA_TS ",v1=nothex,v1=" KA_MAC, AUTH_OK },
	{ "t=" KA_TS ",v1=" WRONG_MAC ",v1=" KA_MAC, AUTH_OK },

	/* No value, no t, bad t, repeated t. */
	{ "t=", AUTH_MALFORMED },
	{ "t=,v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=abc,v1=" KA_MAC, AUTH_MALFORMED },
	{ "v1=" KA_MAC, AUTH_MALFORMED },
	{ "v0=" KA_MAC ",v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=" KA_TS ",t=" KA_TS ",v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=" KA_TS ",v1=" KA_MAC ",t=1", AUTH_MALFORMED },
	/* Signs, overflow, junk: t is a plain decimal integer. */
	{ "t=+" KA_TS ",v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=-" KA_TS ",v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=-0,v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=" KA_TS "x,v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=" KA_TS ".0,v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=0x6553f100,v1=" KA_MAC, AUTH_MALFORMED },
	{ "t= " KA_TS ",v1=" KA_MAC, AUTH_MALFORMED },
	{ "t =" KA_TS ",v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=17000 00000,v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=9223372036854775808,v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=99999999999999999999999,v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=18446744073709551617,v1=" KA_MAC, AUTH_MALFORMED },
	/* The largest t parses; it is just far off. */
	{ "t=9223372036854775807,v1=" KA_MAC, AUTH_TIMESTAMP },
	/* Empty elements, elements without '=' or without a name. */
	{ "t=" KA_TS ",,v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=" KA_TS ",v1=" KA_MAC ",", AUTH_MALFORMED },
	{ ",t=" KA_TS ",v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=" KA_TS ", ,v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=" KA_TS ",garbage,v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=" KA_TS ",=x,v1=" KA_MAC, AUTH_MALFORMED },
	{ "t=" KA_TS ";v1=" KA_MAC, AUTH_MALFORMED },
	{ "   ", AUTH_MALFORMED },
	{ ",", AUTH_MALFORMED },
	{ "garbage", AUTH_MALFORMED },
	/* Control bytes. */
	{ "t=" KA_TS ",v1=" KA_MAC "\r\n", AUTH_MALFORMED },
	{ "t=" KA_TS ",\x01v1=" KA_MAC, AUTH_MALFORMED },

	/* Well formed, but no v1 matches. */
	{ "t=" KA_TS, AUTH_BAD_SIGNATURE },
	{ "t=" KA_TS ",v0=" KA_MAC, AUTH_BAD_SIGNATURE },
	{ "t=" KA_TS ",V1=" KA_MAC, AUTH_BAD_SIGNATURE },
	{ "t=" KA_TS ",v=" KA_MAC, AUTH_BAD_SIGNATURE },
	{ "t=" KA_TS ",v10=" KA_MAC, AUTH_BAD_SIGNATURE },
	{ "t=" KA_TS ",v1=", AUTH_BAD_SIGNATURE },
	{ "t=" KA_TS ",v1=" WRONG_MAC, AUTH_BAD_SIGNATURE },
	/* Not hex, odd, short, long. */
	{ "t=" KA_TS ",v1="
	  "zzf24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686",
	  AUTH_BAD_SIGNATURE },
	{ "t=" KA_TS ",v1="
	  "49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae41168",
	  AUTH_BAD_SIGNATURE },
	{ "t=" KA_TS ",v1="
	  "49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae4116",
	  AUTH_BAD_SIGNATURE },
	{ "t=" KA_TS ",v1=" KA_MAC "00", AUTH_BAD_SIGNATURE },
	{ "t=" KA_TS ",v1=" KA_MAC "x", AUTH_BAD_SIGNATURE },
	{ "t=" KA_TS ",v1=" KA_MAC " 0", AUTH_BAD_SIGNATURE },
	{ "t=" KA_TS ",v1=0x" KA_MAC, AUTH_BAD_SIGNATURE },
	/* The t text is signed as presented: t is bound to the signature. */
	{ "t=1700000001,v1=" KA_MAC, AUTH_BAD_SIGNATURE },
	{ "t=0" KA_TS ",v1=" KA_MAC, AUTH_BAD_SIGNATURE },
	/* HMAC-SHA256("secret", "01700000000.{"a":1}") */
	{ "t=0" KA_TS ",v1="
	  "8170cedc1479141732c5be1091ac7d271a3b2ca423e31e92945086338ed4d539",
	  AUTH_OK },
};

START_TEST(test_tsig_cases)
{
	const struct tsig_case	*c = &tsig_cases[_i];

	ck_assert_msg(ka_verify(c->header, KA_T) == c->want,
	    "case %d: \"%s\": got %d, want %d", _i, c->header,
	    (int)ka_verify(c->header, KA_T), (int)c->want);
}
END_TEST

START_TEST(test_tsig_missing)
{
	ck_assert_int_eq(ka_verify(NULL, KA_T), AUTH_MISSING);
	ck_assert_int_eq(ka_verify("", KA_T), AUTH_MISSING);
}
END_TEST

/* n v1 elements, all wrong except the last when last_right. */
static void
many_v1(char *buf, size_t size, size_t n, int last_right)
{
	size_t	i;

	ck_assert_uint_lt(strlen(KA_HEADER), size);
	memcpy(buf, "t=" KA_TS, sizeof("t=" KA_TS));
	for (i = 0; i < n; i++) {
		ck_assert_uint_lt(strlen(buf) + 4 + 64, size);
		memcpy(buf + strlen(buf), ",v1=", 5);
		memcpy(buf + strlen(buf), last_right && i == n - 1 ? KA_MAC :
		    WRONG_MAC, 65);
	}
}

/*
 * A presented digest one byte short must not match even when the missing
 * byte is the zero that an unfilled buffer would hold: find a body whose
 * HMAC ends in 0x00 and present its first 31 bytes, in hex and in base64.
 */
START_TEST(test_short_digest)
{
	struct auth_secret	 s = mksecret("k", 0);
	unsigned char		 mac[32];
	const unsigned char	*parts[3];
	size_t			 lens[3];
	char			 body[16], hex[65], b64[64];
	char			 hdr[128], sig[80];
	int			 i, n;

	for (i = 0; i < 100000; i++) {
		n = snprintf(body, sizeof(body), "%d", i);
		ck_assert(n > 0 && (size_t)n < sizeof(body));
		parts[0] = (const unsigned char *)KA_TS;
		lens[0] = strlen(KA_TS);
		parts[1] = (const unsigned char *)".";
		lens[1] = 1;
		parts[2] = (const unsigned char *)body;
		lens[2] = (size_t)n;
		ck_assert_int_eq(auth_hmac_sha256(s.key, s.keylen, parts, lens,
		    3, mac), 0);
		if (mac[31] == 0)
			break;
	}
	ck_assert_int_eq(mac[31], 0);

	sodium_bin2hex(hex, sizeof(hex), mac, 32);
	n = snprintf(hdr, sizeof(hdr), "t=%s,v1=%s", KA_TS, hex);
	ck_assert(n > 0 && (size_t)n < sizeof(hdr));
	ck_assert_int_eq(auth_verify_tsig(hdr, (const unsigned char *)body,
	    strlen(body), &s, 1, KA_T, TOL, NULL), AUTH_OK);
	hdr[n - 2] = '\0';
	ck_assert_int_eq(auth_verify_tsig(hdr, (const unsigned char *)body,
	    strlen(body), &s, 1, KA_T, TOL, NULL), AUTH_BAD_SIGNATURE);

	/* Standard Webhooks: "id.<t>.<body>", key "k". */
	s = mksecret("whsec_aw==", 0);	/* base64 of "k" */
	for (i = 0; i < 100000; i++) {
		n = snprintf(body, sizeof(body), "%d", i);
		ck_assert(n > 0 && (size_t)n < sizeof(body));
		parts[0] = (const unsigned char *)"id.";
		lens[0] = 3;
		parts[1] = (const unsigned char *)KA_TS ".";
		lens[1] = strlen(KA_TS) + 1;
		parts[2] = (const unsigned char *)body;
		lens[2] = (size_t)n;
		ck_assert_int_eq(auth_hmac_sha256((const unsigned char *)"k", 1,
		    parts, lens, 3, mac), 0);
		if (mac[31] == 0)
			break;
	}
	ck_assert_int_eq(mac[31], 0);
	sodium_bin2base64(b64, sizeof(b64), mac, 32,
	    sodium_base64_VARIANT_ORIGINAL);
	n = snprintf(sig, sizeof(sig), "v1,%s", b64);
	ck_assert(n > 0 && (size_t)n < sizeof(sig));
	ck_assert_int_eq(auth_verify_stdwebhooks("id", KA_TS, sig,
	    (const unsigned char *)body, strlen(body), &s, 1, KA_T, TOL, NULL),
	    AUTH_OK);
	sodium_bin2base64(b64, sizeof(b64), mac, 31,
	    sodium_base64_VARIANT_ORIGINAL);
	n = snprintf(sig, sizeof(sig), "v1,%s", b64);
	ck_assert(n > 0 && (size_t)n < sizeof(sig));
	ck_assert_int_eq(auth_verify_stdwebhooks("id", KA_TS, sig,
	    (const unsigned char *)body, strlen(body), &s, 1, KA_T, TOL, NULL),
	    AUTH_BAD_SIGNATURE);
}
END_TEST

START_TEST(test_tsig_many_v1)
{
	char	buf[AUTH_HEADER_MAX + 1];

	/* Eight values, only the last one right. */
	many_v1(buf, sizeof(buf), 8, 1);
	ck_assert_int_eq(ka_verify(buf, KA_T), AUTH_OK);
	many_v1(buf, sizeof(buf), 8, 0);
	ck_assert_int_eq(ka_verify(buf, KA_T), AUTH_BAD_SIGNATURE);
	/* Nine values is malformed, even when one is right. */
	many_v1(buf, sizeof(buf), 9, 1);
	ck_assert_uint_le(strlen(buf), AUTH_HEADER_MAX);
	ck_assert_int_eq(ka_verify(buf, KA_T), AUTH_MALFORMED);
	/* Unknown elements do not count. */
	many_v1(buf, sizeof(buf), 8, 1);
	memcpy(buf + strlen(buf), ",v0=" WRONG_MAC, 4 + 65);
	ck_assert_int_eq(ka_verify(buf, KA_T), AUTH_OK);
}
END_TEST

START_TEST(test_tsig_huge_header)
{
	char	*buf;
	size_t	 len;

	/* KA_HEADER padded with an unknown element to exactly the limit. */
	buf = malloc(100001);
	ck_assert_ptr_nonnull(buf);
	len = strlen(KA_HEADER);
	memcpy(buf, KA_HEADER ",x=", len + 3);
	memset(buf + len + 3, 'a', AUTH_HEADER_MAX - len - 3);
	buf[AUTH_HEADER_MAX] = '\0';
	ck_assert_uint_eq(strlen(buf), AUTH_HEADER_MAX);
	ck_assert_int_eq(ka_verify(buf, KA_T), AUTH_OK);
	/* One byte more. */
	buf[AUTH_HEADER_MAX] = 'a';
	buf[AUTH_HEADER_MAX + 1] = '\0';
	ck_assert_int_eq(ka_verify(buf, KA_T), AUTH_MALFORMED);
	/* Much more. */
	memset(buf + AUTH_HEADER_MAX, 'a', 100000 - AUTH_HEADER_MAX);
	buf[100000] = '\0';
	ck_assert_int_eq(ka_verify(buf, KA_T), AUTH_MALFORMED);
	free(buf);
}
END_TEST

START_TEST(test_tsig_rotation)
{
	struct auth_secret	 s[3];
	const unsigned char	*b = (const unsigned char *)KA_BODY;
	size_t			 bl = strlen(KA_BODY), m;

	/* The second secret signs, and the verifier says which one. */
	s[0] = mksecret("old-secret", 0);
	s[1] = mksecret(KA_SECRET, 0);
	m = 9;
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER, b, bl, s, 2, KA_T, TOL,
	    &m), AUTH_OK);
	ck_assert_uint_eq(m, 1);
	/* The first one signs. */
	s[0] = mksecret(KA_SECRET, 0);
	s[1] = mksecret("new-secret", 0);
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER, b, bl, s, 2, KA_T, TOL,
	    &m), AUTH_OK);
	ck_assert_uint_eq(m, 0);
	/* Both are the same secret: the first of them. */
	s[1] = s[0];
	s[0] = mksecret("expired", KA_T - 1);
	s[2] = s[1];
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER, b, bl, s, 3, KA_T, TOL,
	    &m), AUTH_OK);
	ck_assert_uint_eq(m, 1);
	/* Neither: the index is left alone. */
	s[0] = mksecret("old-secret", 0);
	s[1] = mksecret("new-secret", 0);
	m = 9;
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER, b, bl, s, 2, KA_T, TOL,
	    &m), AUTH_BAD_SIGNATURE);
	ck_assert_uint_eq(m, 9);
}
END_TEST

START_TEST(test_tsig_expired)
{
	struct auth_secret	s[2];
	const unsigned char	*b = (const unsigned char *)KA_BODY;
	size_t			 bl = strlen(KA_BODY);

	/* The only secret matches but has expired (expires_at <= now). */
	s[0] = mksecret(KA_SECRET, KA_T - 1);
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER, b, bl, s, 1, KA_T, TOL,
	    NULL),
	    AUTH_NO_SECRET);
	s[0] = mksecret(KA_SECRET, KA_T);
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER, b, bl, s, 1, KA_T, TOL,
	    NULL),
	    AUTH_NO_SECRET);
	s[0] = mksecret(KA_SECRET, KA_T + 1);
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER, b, bl, s, 1, KA_T, TOL,
	    NULL),
	    AUTH_OK);
	/* An active secret exists, but it does not match. */
	s[0] = mksecret(KA_SECRET, KA_T);
	s[1] = mksecret("other", 0);
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER, b, bl, s, 2, KA_T, TOL,
	    NULL),
	    AUTH_BAD_SIGNATURE);
	/* No secrets at all, or only an empty one. */
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER, b, bl, NULL, 0, KA_T,
	    TOL, NULL), AUTH_NO_SECRET);
	s[0] = mksecret("", 0);
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER, b, bl, s, 1, KA_T, TOL,
	    NULL),
	    AUTH_NO_SECRET);
}
END_TEST

START_TEST(test_tsig_order)
{
	struct auth_secret	 s = mksecret(KA_SECRET, KA_T);
	const unsigned char	*b = (const unsigned char *)KA_BODY;
	size_t			 bl = strlen(KA_BODY);
	char			 buf[AUTH_HEADER_MAX + 1];

	/* MISSING, MALFORMED, TIMESTAMP come before NO_SECRET. */
	ck_assert_int_eq(auth_verify_tsig("", b, bl, &s, 1, KA_T, TOL, NULL),
	    AUTH_MISSING);
	ck_assert_int_eq(auth_verify_tsig("t=x", b, bl, &s, 1, KA_T, TOL, NULL),
	    AUTH_MALFORMED);
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER, b, bl, &s, 1,
	    KA_T + TOL + 1, TOL, NULL), AUTH_TIMESTAMP);
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER, b, bl, NULL, 0,
	    KA_T - TOL - 1, TOL, NULL), AUTH_TIMESTAMP);
	/* MALFORMED comes before TIMESTAMP. */
	many_v1(buf, sizeof(buf), 9, 1);
	ck_assert_int_eq(ka_verify(buf, 0), AUTH_MALFORMED);
	ck_assert_int_eq(ka_verify("t=" KA_TS ",t=" KA_TS, 0), AUTH_MALFORMED);
}
END_TEST

START_TEST(test_tsig_bad_args)
{
	struct auth_secret	s = mksecret(KA_SECRET, 0);
	struct auth_secret	bad = { NULL, 6, 0 };

	ck_assert_int_eq(auth_verify_tsig(KA_HEADER, NULL, 1, &s, 1, KA_T,
	    TOL, NULL), AUTH_ERROR);
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), NULL, 1, KA_T,
	    TOL, NULL), AUTH_ERROR);
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), &bad, 1, KA_T,
	    TOL, NULL), AUTH_ERROR);
	ck_assert_int_eq(auth_verify_tsig(KA_HEADER,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), &s, 1, KA_T, -1,
	    NULL),
	    AUTH_ERROR);
}
END_TEST

START_TEST(test_tsig_sign)
{
	struct auth_secret	s[2];
	char			out[sizeof(KA_HEADER)];
	char			big[128];

	/* Exactly the room needed, then one byte less. */
	s[0] = mksecret(KA_SECRET, 0);
	ck_assert_int_eq(auth_sign_tsig(s, 1, KA_T, KA_T,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), out, sizeof(out)),
	    0);
	ck_assert_str_eq(out, KA_HEADER);
	memset(out, 'x', sizeof(out));
	ck_assert_int_eq(auth_sign_tsig(s, 1, KA_T, KA_T,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), out,
	    sizeof(out) - 1), -1);
	ck_assert_int_eq(out[0], '\0');
	ck_assert_int_eq(auth_sign_tsig(s, 1, KA_T, KA_T,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), out, 0), -1);
	ck_assert_int_eq(auth_sign_tsig(s, 1, KA_T, KA_T,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), NULL, 10), -1);

	/* The first active secret signs. */
	s[0] = mksecret("expired", KA_T);
	s[1] = mksecret(KA_SECRET, 0);
	ck_assert_int_eq(auth_sign_tsig(s, 2, KA_T, KA_T,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), big, sizeof(big)),
	    0);
	ck_assert_str_eq(big, KA_HEADER);
	s[0] = mksecret(KA_SECRET, KA_T + 1);
	s[1] = mksecret("later", 0);
	ck_assert_int_eq(auth_sign_tsig(s, 2, KA_T, KA_T,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), big, sizeof(big)),
	    0);
	ck_assert_str_eq(big, KA_HEADER);

	/* No active secret. */
	s[0] = mksecret(KA_SECRET, KA_T);
	ck_assert_int_eq(auth_sign_tsig(s, 1, KA_T, KA_T,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), big, sizeof(big)),
	    -1);
	ck_assert_int_eq(auth_sign_tsig(NULL, 0, KA_T, KA_T,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), big, sizeof(big)),
	    -1);
	/* A negative t could not be verified. */
	s[0] = mksecret(KA_SECRET, 0);
	ck_assert_int_eq(auth_sign_tsig(s, 1, KA_T, -1,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), big, sizeof(big)),
	    -1);
	ck_assert_int_eq(auth_sign_tsig(s, 1, KA_T, KA_T, NULL, 1, big,
	    sizeof(big)), -1);
	/* t = 0 and the largest t are fine. */
	ck_assert_int_eq(auth_sign_tsig(s, 1, KA_T, 0,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), big, sizeof(big)),
	    0);
	ck_assert_int_eq(auth_verify_tsig(big, (const unsigned char *)KA_BODY,
	    strlen(KA_BODY), s, 1, 0, 0, NULL), AUTH_OK);
	ck_assert_int_eq(auth_sign_tsig(s, 1, KA_T, INT64_MAX,
	    (const unsigned char *)KA_BODY, strlen(KA_BODY), big, sizeof(big)),
	    0);
	ck_assert_int_eq(auth_verify_tsig(big, (const unsigned char *)KA_BODY,
	    strlen(KA_BODY), s, 1, INT64_MAX, 0, NULL), AUTH_OK);
}
END_TEST

/*
 * Standard Webhooks
 */

START_TEST(test_sw_spec_example)
{
	struct auth_secret	s = mksecret(SW_SECRET_BARE, 0);
	char			out[64];

	ck_assert_int_eq(sw_verify(SW_ID, SW_TS, SW_SIG, SW_T), AUTH_OK);
	/* A secret without the whsec_ prefix is base64 too. */
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, SW_SIG,
	    (const unsigned char *)SW_BODY, strlen(SW_BODY), &s, 1, SW_T, TOL,
	    NULL),
	    AUTH_OK);

	ck_assert_int_eq(auth_sign_stdwebhooks(
	    (const unsigned char *)SW_SECRET, strlen(SW_SECRET), SW_ID, SW_T,
	    (const unsigned char *)SW_BODY, strlen(SW_BODY), out, sizeof(out)),
	    0);
	ck_assert_str_eq(out, SW_SIG);
	ck_assert_int_eq(auth_sign_stdwebhooks(
	    (const unsigned char *)SW_SECRET_BARE, strlen(SW_SECRET_BARE),
	    SW_ID, SW_T, (const unsigned char *)SW_BODY, strlen(SW_BODY), out,
	    sizeof(out)), 0);
	ck_assert_str_eq(out, SW_SIG);
}
END_TEST

/* Headers checked against the specification's secret and body, now=SW_T. */
static const struct sw_case {
	const char		*id;
	const char		*ts;
	const char		*sig;
	enum auth_status	 want;
} sw_cases[] = {
	{ SW_ID, SW_TS, SW_SIG, AUTH_OK },
	/* Several entries; other versions are ignored. */
	{ SW_ID, SW_TS, SW_WRONG " " SW_SIG, AUTH_OK },
	{ SW_ID, SW_TS, SW_SIG " " SW_WRONG, AUTH_OK },
	{ SW_ID, SW_TS, "v1a,bm90IGEga2V5 v2,xyz " SW_SIG " v1,AAAA", AUTH_OK },
	{ SW_ID, SW_TS, "v1,!!!! v1, v1 nocomma " SW_SIG, AUTH_OK },
	{ SW_ID, SW_TS, "  " SW_SIG "  ", AUTH_OK },
	{ SW_ID, SW_TS, SW_WRONG "\t" SW_SIG, AUTH_OK },
	/* Nothing that matches. */
	{ SW_ID, SW_TS, SW_WRONG, AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, "v1a," SW_B64, AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, "V1," SW_B64, AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, "v2," SW_B64, AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, "v," SW_B64, AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, "v10," SW_B64, AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, "," SW_B64, AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, SW_B64, AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, "v1 " SW_B64, AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, "v1,", AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, "   ", AUTH_BAD_SIGNATURE },
	/* Unpadded, trailing junk, 33 bytes, 31 bytes, url-safe alphabet. */
	{ SW_ID, SW_TS, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE",
	  AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, SW_SIG ",x", AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, SW_SIG "=", AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OEA",
	  AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ",
	  AUTH_BAD_SIGNATURE },
	{ SW_ID, SW_TS, "v1,g0hM9SsE-OTPJTGt_tmIKtSyZlE3uFJELVlNIOLJ1OE=",
	  AUTH_BAD_SIGNATURE },
	/* Another id or timestamp than the one signed. */
	{ "msg_p5jXN8AQM9LWM0D4loKWxJel", SW_TS, SW_SIG, AUTH_BAD_SIGNATURE },
	{ SW_ID "x", SW_TS, SW_SIG, AUTH_BAD_SIGNATURE },
	{ SW_ID, "1614265331", SW_SIG, AUTH_BAD_SIGNATURE },
	{ SW_ID, "0" SW_TS, SW_SIG, AUTH_BAD_SIGNATURE },

	{ NULL, SW_TS, SW_SIG, AUTH_MISSING },
	{ "", SW_TS, SW_SIG, AUTH_MISSING },
	{ SW_ID, NULL, SW_SIG, AUTH_MISSING },
	{ SW_ID, "", SW_SIG, AUTH_MISSING },
	{ SW_ID, SW_TS, NULL, AUTH_MISSING },
	{ SW_ID, SW_TS, "", AUTH_MISSING },

	{ SW_ID, "abc", SW_SIG, AUTH_MALFORMED },
	{ SW_ID, "-" SW_TS, SW_SIG, AUTH_MALFORMED },
	{ SW_ID, "+" SW_TS, SW_SIG, AUTH_MALFORMED },
	{ SW_ID, " " SW_TS, SW_SIG, AUTH_MALFORMED },
	{ SW_ID, SW_TS " ", SW_SIG, AUTH_MALFORMED },
	{ SW_ID, SW_TS ".0", SW_SIG, AUTH_MALFORMED },
	{ SW_ID, "1614265330000", SW_SIG, AUTH_TIMESTAMP },
	{ SW_ID, "9223372036854775808", SW_SIG, AUTH_MALFORMED },
	{ SW_ID, "99999999999999999999999", SW_SIG, AUTH_MALFORMED },
	{ "msg\n1", SW_TS, SW_SIG, AUTH_MALFORMED },
	{ "msg\t1", SW_TS, SW_SIG, AUTH_MALFORMED },
	{ SW_ID, SW_TS, SW_SIG "\r\n", AUTH_MALFORMED },

	/* Tolerance around the fixed timestamp (the signature is for SW_TS). */
	{ SW_ID, "1614265630", SW_SIG, AUTH_BAD_SIGNATURE },
	{ SW_ID, "1614265631", SW_SIG, AUTH_TIMESTAMP },
	{ SW_ID, "1614265030", SW_SIG, AUTH_BAD_SIGNATURE },
	{ SW_ID, "1614265029", SW_SIG, AUTH_TIMESTAMP },
};

START_TEST(test_sw_cases)
{
	const struct sw_case	*c = &sw_cases[_i];
	enum auth_status	 got;

	got = sw_verify(c->id, c->ts, c->sig, SW_T);
	ck_assert_msg(got == c->want, "case %d: \"%s\" \"%s\" \"%s\": got %d, "
	    "want %d", _i, c->id ? c->id : "(null)", c->ts ? c->ts : "(null)",
	    c->sig ? c->sig : "(null)", (int)got, (int)c->want);
}
END_TEST

START_TEST(test_sw_roundtrip)
{
	static const char		 secret[] =
	    "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
	static const unsigned char	 body[] = "{\"type\":\"job\"}";
	struct auth_secret		 s = mksecret(secret, 0);
	char				 out[64];
	unsigned char			 copy[sizeof(body)];
	int64_t				 now = INT64_C(1750000000);
	size_t				 i;

	ck_assert_int_eq(auth_sign_stdwebhooks((const unsigned char *)secret,
	    strlen(secret), "msg_1", now, body, sizeof(body), out,
	    sizeof(out)), 0);
	ck_assert_int_eq(strncmp(out, "v1,", 3), 0);
	ck_assert_uint_eq(strlen(out), 3 + 44);
	ck_assert_int_eq(auth_verify_stdwebhooks("msg_1", "1750000000", out,
	    body, sizeof(body), &s, 1, now, TOL, NULL), AUTH_OK);
	ck_assert_int_eq(auth_verify_stdwebhooks("msg_2", "1750000000", out,
	    body, sizeof(body), &s, 1, now, TOL, NULL), AUTH_BAD_SIGNATURE);
	for (i = 0; i < sizeof(body); i++) {
		memcpy(copy, body, sizeof(body));
		copy[i] ^= 0x80;
		ck_assert_int_eq(auth_verify_stdwebhooks("msg_1", "1750000000",
		    out, copy, sizeof(copy), &s, 1, now, TOL, NULL),
		    AUTH_BAD_SIGNATURE);
	}
	/* The spec's secret does not verify it. */
	s = mksecret(SW_SECRET, 0);
	ck_assert_int_eq(auth_verify_stdwebhooks("msg_1", "1750000000", out,
	    body, sizeof(body), &s, 1, now, TOL, NULL), AUTH_BAD_SIGNATURE);

	/* Empty body, NULL pointer. */
	s = mksecret(secret, 0);
	ck_assert_int_eq(auth_sign_stdwebhooks((const unsigned char *)secret,
	    strlen(secret), "msg_1", now, NULL, 0, out, sizeof(out)), 0);
	ck_assert_int_eq(auth_verify_stdwebhooks("msg_1", "1750000000", out,
	    NULL, 0, &s, 1, now, TOL, NULL), AUTH_OK);
}
END_TEST

START_TEST(test_sw_tolerance)
{
	struct auth_secret	s = mksecret(SW_SECRET, 0);
	static const char	*ts[] = { "1614265029", "1614265030",
	    "1614265330", "1614265630", "1614265631" };
	static const int64_t	 t[] = { SW_T - TOL - 1, SW_T - TOL, SW_T,
	    SW_T + TOL, SW_T + TOL + 1 };
	static const int	 ok[] = { 0, 1, 1, 1, 0 };
	char			 out[64];
	size_t			 i;

	for (i = 0; i < NELEM(t); i++) {
		ck_assert_int_eq(auth_sign_stdwebhooks(
		    (const unsigned char *)SW_SECRET, strlen(SW_SECRET), SW_ID,
		    t[i], (const unsigned char *)SW_BODY, strlen(SW_BODY), out,
		    sizeof(out)), 0);
		ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, ts[i], out,
		    (const unsigned char *)SW_BODY, strlen(SW_BODY), &s, 1,
		    SW_T, TOL, NULL), ok[i] ? AUTH_OK : AUTH_TIMESTAMP);
	}
}
END_TEST

/* n entries: all wrong except entry right (0-based; n or more: none). */
static void
sw_entries(char *buf, size_t size, size_t n, size_t right)
{
	size_t	i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		ck_assert_uint_lt(len + 1 + sizeof(SW_SIG), size);
		if (i > 0)
			buf[len++] = ' ';
		memcpy(buf + len, i == right ? SW_SIG : SW_WRONG,
		    sizeof(SW_SIG));
		len += sizeof(SW_SIG) - 1;
	}
}

START_TEST(test_sw_entries_limit)
{
	char	buf[AUTH_HEADER_MAX + 1];
	size_t	len;

	/* Only the first eight v1 entries are considered. */
	sw_entries(buf, sizeof(buf), 8, 7);
	ck_assert_int_eq(sw_verify(SW_ID, SW_TS, buf, SW_T), AUTH_OK);
	sw_entries(buf, sizeof(buf), 9, 8);
	ck_assert_int_eq(sw_verify(SW_ID, SW_TS, buf, SW_T),
	    AUTH_BAD_SIGNATURE);
	/* More than eight is not malformed. */
	sw_entries(buf, sizeof(buf), 20, 0);
	ck_assert_int_eq(sw_verify(SW_ID, SW_TS, buf, SW_T), AUTH_OK);
	/* Entries of other versions do not count. */
	memcpy(buf, "v2,a v2,b v2,c v2,d v2,e v2,f v2,g v2,h v2,i ", 45);
	sw_entries(buf + 45, sizeof(buf) - 45, 8, 7);
	ck_assert_int_eq(sw_verify(SW_ID, SW_TS, buf, SW_T), AUTH_OK);

	/* Exactly AUTH_HEADER_MAX, then one byte more. */
	sw_entries(buf, sizeof(buf), 1, 0);
	len = strlen(buf);
	memset(buf + len, ' ', AUTH_HEADER_MAX - len);
	buf[AUTH_HEADER_MAX] = '\0';
	ck_assert_int_eq(sw_verify(SW_ID, SW_TS, buf, SW_T), AUTH_OK);
	{
		char	big[AUTH_HEADER_MAX + 2];

		memcpy(big, buf, AUTH_HEADER_MAX);
		big[AUTH_HEADER_MAX] = ' ';
		big[AUTH_HEADER_MAX + 1] = '\0';
		ck_assert_int_eq(sw_verify(SW_ID, SW_TS, big, SW_T),
		    AUTH_MALFORMED);
	}
}
END_TEST

START_TEST(test_sw_secrets)
{
	struct auth_secret	s[3];
	const unsigned char	*b = (const unsigned char *)SW_BODY;
	size_t			 bl = strlen(SW_BODY), m;

	/* Secrets that do not decode are skipped. */
	s[0] = mksecret("whsec_!!!not base64!!!", 0);
	s[1] = mksecret("whsec_", 0);
	s[2] = mksecret(SW_SECRET, 0);
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, SW_SIG, b, bl,
	    s, 3, SW_T, TOL, NULL), AUTH_OK);
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, SW_SIG, b, bl,
	    s, 2, SW_T, TOL, NULL), AUTH_NO_SECRET);
	/* Unpadded base64 does not decode (the original variant is padded). */
	s[0] = mksecret("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7o", 0);
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, SW_SIG, b, bl,
	    s, 1, SW_T, TOL, NULL), AUTH_NO_SECRET);

	/* Rotation: the second secret signs, and it is named. */
	s[0] = mksecret("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD", 0);
	s[1] = mksecret(SW_SECRET, 0);
	m = 9;
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, SW_SIG, b, bl,
	    s, 2, SW_T, TOL, &m), AUTH_OK);
	ck_assert_uint_eq(m, 1);

	/* Expired. */
	s[0] = mksecret(SW_SECRET, SW_T);
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, SW_SIG, b, bl,
	    s, 1, SW_T, TOL, NULL), AUTH_NO_SECRET);
	s[1] = mksecret("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD", 0);
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, SW_SIG, b, bl,
	    s, 2, SW_T, TOL, NULL), AUTH_BAD_SIGNATURE);
	s[0] = mksecret(SW_SECRET, SW_T + 1);
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, SW_SIG, b, bl,
	    s, 1, SW_T, TOL, NULL), AUTH_OK);
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, SW_SIG, b, bl,
	    NULL, 0, SW_T, TOL, NULL), AUTH_NO_SECRET);

	/* MALFORMED and TIMESTAMP come before NO_SECRET. */
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, "x", SW_SIG, b, bl,
	    NULL, 0, SW_T, TOL, NULL), AUTH_MALFORMED);
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, SW_SIG, b, bl,
	    NULL, 0, SW_T + TOL + 1, TOL, NULL), AUTH_TIMESTAMP);
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, "", b, bl,
	    NULL, 0, SW_T, TOL, NULL), AUTH_MISSING);
}
END_TEST

START_TEST(test_sw_id_limits)
{
	struct auth_secret	s = mksecret(SW_SECRET, 0);
	char			id[300], out[64];

	memset(id, 'i', 256);
	id[256] = '\0';
	ck_assert_int_eq(auth_sign_stdwebhooks(
	    (const unsigned char *)SW_SECRET, strlen(SW_SECRET), id, SW_T,
	    (const unsigned char *)SW_BODY, strlen(SW_BODY), out, sizeof(out)),
	    0);
	ck_assert_int_eq(auth_verify_stdwebhooks(id, SW_TS, out,
	    (const unsigned char *)SW_BODY, strlen(SW_BODY), &s, 1, SW_T, TOL,
	    NULL),
	    AUTH_OK);
	id[256] = 'i';
	id[257] = '\0';
	ck_assert_int_eq(auth_verify_stdwebhooks(id, SW_TS, out,
	    (const unsigned char *)SW_BODY, strlen(SW_BODY), &s, 1, SW_T, TOL,
	    NULL),
	    AUTH_MALFORMED);
	ck_assert_int_eq(auth_sign_stdwebhooks(
	    (const unsigned char *)SW_SECRET, strlen(SW_SECRET), id, SW_T,
	    (const unsigned char *)SW_BODY, strlen(SW_BODY), out, sizeof(out)),
	    -1);
}
END_TEST

START_TEST(test_sw_sign_errors)
{
	char			 out[sizeof(SW_SIG)];
	const unsigned char	*sec = (const unsigned char *)SW_SECRET;
	const unsigned char	*b = (const unsigned char *)SW_BODY;
	size_t			 sl = strlen(SW_SECRET);
	size_t			 bl = strlen(SW_BODY);

	/* Exactly the room needed, then one byte less. */
	ck_assert_int_eq(auth_sign_stdwebhooks(sec, sl, SW_ID, SW_T, b, bl,
	    out, sizeof(out)), 0);
	ck_assert_str_eq(out, SW_SIG);
	memset(out, 'x', sizeof(out));
	ck_assert_int_eq(auth_sign_stdwebhooks(sec, sl, SW_ID, SW_T, b, bl,
	    out, sizeof(out) - 1), -1);
	ck_assert_int_eq(out[0], '\0');
	ck_assert_int_eq(auth_sign_stdwebhooks(sec, sl, SW_ID, SW_T, b, bl,
	    NULL, 64), -1);
	ck_assert_int_eq(auth_sign_stdwebhooks(sec, sl, SW_ID, SW_T, b, bl,
	    out, 0), -1);

	/* Secrets that do not decode. */
	ck_assert_int_eq(auth_sign_stdwebhooks(
	    (const unsigned char *)"whsec_!!", 8, SW_ID, SW_T, b, bl, out,
	    sizeof(out)), -1);
	ck_assert_int_eq(auth_sign_stdwebhooks(
	    (const unsigned char *)"whsec_", 6, SW_ID, SW_T, b, bl, out,
	    sizeof(out)), -1);
	ck_assert_int_eq(auth_sign_stdwebhooks(NULL, 0, SW_ID, SW_T, b, bl,
	    out, sizeof(out)), -1);
	/* A bad id, timestamp or body. */
	ck_assert_int_eq(auth_sign_stdwebhooks(sec, sl, "", SW_T, b, bl,
	    out, sizeof(out)), -1);
	ck_assert_int_eq(auth_sign_stdwebhooks(sec, sl, NULL, SW_T, b, bl,
	    out, sizeof(out)), -1);
	ck_assert_int_eq(auth_sign_stdwebhooks(sec, sl, "a\nb", SW_T, b, bl,
	    out, sizeof(out)), -1);
	ck_assert_int_eq(auth_sign_stdwebhooks(sec, sl, SW_ID, -1, b, bl,
	    out, sizeof(out)), -1);
	ck_assert_int_eq(auth_sign_stdwebhooks(sec, sl, SW_ID, SW_T, NULL, 1,
	    out, sizeof(out)), -1);
}
END_TEST

START_TEST(test_sw_bad_args)
{
	struct auth_secret	s = mksecret(SW_SECRET, 0);
	struct auth_secret	bad = { NULL, 3, 0 };
	const unsigned char	*b = (const unsigned char *)SW_BODY;
	size_t			 bl = strlen(SW_BODY);

	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, SW_SIG, NULL,
	    1, &s, 1, SW_T, TOL, NULL), AUTH_ERROR);
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, SW_SIG, b, bl,
	    NULL, 1, SW_T, TOL, NULL), AUTH_ERROR);
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, SW_SIG, b, bl,
	    &bad, 1, SW_T, TOL, NULL), AUTH_ERROR);
	ck_assert_int_eq(auth_verify_stdwebhooks(SW_ID, SW_TS, SW_SIG, b, bl,
	    &s, 1, SW_T, -5, NULL), AUTH_ERROR);
}
END_TEST

/*
 * Key mode
 */

START_TEST(test_key_hash_known)
{
	unsigned char	want[AUTH_HASH_LEN], got[AUTH_HASH_LEN];

	/* printf abc | b2sum -l 256 */
	unhex(
	    "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319",
	    want, sizeof(want));
	ck_assert_int_eq(auth_key_hash("abc", 3, got), 0);
	ck_assert_mem_eq(got, want, sizeof(want));
	/* printf hb_live_0123456789 | b2sum -l 256 */
	unhex(
	    "49673d0a07e6048e24a6450ff26b8c6904e8ac26b266019aaa23d1d19fde7739",
	    want, sizeof(want));
	ck_assert_int_eq(auth_key_hash("hb_live_0123456789", 18, got), 0);
	ck_assert_mem_eq(got, want, sizeof(want));
	/* printf '' | b2sum -l 256 */
	unhex(
	    "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8",
	    want, sizeof(want));
	ck_assert_int_eq(auth_key_hash(NULL, 0, got), 0);
	ck_assert_mem_eq(got, want, sizeof(want));

	ck_assert_int_eq(auth_key_hash(NULL, 1, got), -1);
	ck_assert_int_eq(auth_key_hash("abc", 3, NULL), -1);
}
END_TEST

START_TEST(test_key_verify)
{
	static const char	 key[] = "hb_live_0123456789";
	unsigned char		 h[AUTH_HASH_LEN], h2[AUTH_HASH_LEN];
	struct auth_secret	 s[2];
	int64_t			 now = INT64_C(1700000000);
	size_t			 m;

	ck_assert_int_eq(auth_key_hash(key, strlen(key), h), 0);
	s[0].key = h;
	s[0].keylen = sizeof(h);
	s[0].expires_at = 0;
	ck_assert_int_eq(auth_verify_key(key, strlen(key), s, 1, now, NULL),
	    AUTH_OK);
	/* Wrong keys: another, a prefix, one byte more, an embedded NUL. */
	ck_assert_int_eq(auth_verify_key("hb_live_0123456788", 18, s, 1, now,
	    NULL),
	    AUTH_BAD_SIGNATURE);
	ck_assert_int_eq(auth_verify_key(key, strlen(key) - 1, s, 1, now, NULL),
	    AUTH_BAD_SIGNATURE);
	ck_assert_int_eq(auth_verify_key("hb_live_01234567890", 19, s, 1,
	    now, NULL), AUTH_BAD_SIGNATURE);
	ck_assert_int_eq(auth_verify_key("hb_live_0123456789\0", 19, s, 1,
	    now, NULL), AUTH_BAD_SIGNATURE);

	/* Rotation: the second hash matches. */
	ck_assert_int_eq(auth_key_hash("other", 5, h2), 0);
	s[1] = s[0];
	s[0].key = h2;
	ck_assert_int_eq(auth_verify_key(key, strlen(key), s, 2, now, &m),
	    AUTH_OK);
	ck_assert_uint_eq(m, 1);
	ck_assert_int_eq(auth_verify_key("other", 5, s, 2, now, &m), AUTH_OK);
	ck_assert_uint_eq(m, 0);
	ck_assert_int_eq(auth_verify_key("neither", 7, s, 2, now, &m),
	    AUTH_BAD_SIGNATURE);
	ck_assert_uint_eq(m, 0);
}
END_TEST

START_TEST(test_key_missing_and_long)
{
	unsigned char		h[AUTH_HASH_LEN];
	struct auth_secret	s;
	char			big[AUTH_HEADER_MAX + 1];

	memset(big, 'k', sizeof(big));
	ck_assert_int_eq(auth_key_hash(big, AUTH_HEADER_MAX, h), 0);
	s.key = h;
	s.keylen = sizeof(h);
	s.expires_at = 0;
	ck_assert_int_eq(auth_verify_key(NULL, 0, &s, 1, 1, NULL),
	    AUTH_MISSING);
	ck_assert_int_eq(auth_verify_key(NULL, 5, &s, 1, 1, NULL),
	    AUTH_MISSING);
	ck_assert_int_eq(auth_verify_key("", 0, &s, 1, 1, NULL), AUTH_MISSING);
	ck_assert_int_eq(auth_verify_key("abc", 0, &s, 1, 1, NULL),
	    AUTH_MISSING);
	ck_assert_int_eq(auth_verify_key(NULL, 0, NULL, 0, 1, NULL),
	    AUTH_MISSING);
	/* Longest accepted, then one byte more. */
	ck_assert_int_eq(auth_verify_key(big, AUTH_HEADER_MAX, &s, 1, 1, NULL),
	    AUTH_OK);
	ck_assert_int_eq(auth_verify_key(big, AUTH_HEADER_MAX + 1, &s, 1, 1,
	    NULL),
	    AUTH_MALFORMED);
	ck_assert_int_eq(auth_verify_key(big, AUTH_HEADER_MAX + 1, NULL, 0, 1,
	    NULL),
	    AUTH_MALFORMED);
	/* Bad arguments. */
	ck_assert_int_eq(auth_verify_key("abc", 3, NULL, 1, 1, NULL),
	    AUTH_ERROR);
	s.key = NULL;
	ck_assert_int_eq(auth_verify_key("abc", 3, &s, 1, 1, NULL), AUTH_ERROR);
}
END_TEST

START_TEST(test_key_expired)
{
	static const char	 key[] = "k-123";
	unsigned char		 h[AUTH_HASH_LEN], h2[AUTH_HASH_LEN];
	struct auth_secret	 s[2];
	int64_t			 now = INT64_C(1700000000);

	ck_assert_int_eq(auth_key_hash(key, 5, h), 0);
	ck_assert_int_eq(auth_key_hash("k-456", 5, h2), 0);
	s[0].key = h;
	s[0].keylen = sizeof(h);
	s[0].expires_at = now;
	ck_assert_int_eq(auth_verify_key(key, 5, s, 1, now, NULL),
	    AUTH_NO_SECRET);
	s[0].expires_at = now - 100;
	ck_assert_int_eq(auth_verify_key(key, 5, s, 1, now, NULL),
	    AUTH_NO_SECRET);
	ck_assert_int_eq(auth_verify_key("x", 1, s, 1, now, NULL),
	    AUTH_NO_SECRET);
	s[0].expires_at = now + 1;
	ck_assert_int_eq(auth_verify_key(key, 5, s, 1, now, NULL), AUTH_OK);
	/* The matching one expired, an active one does not match. */
	s[0].expires_at = now;
	s[1].key = h2;
	s[1].keylen = sizeof(h2);
	s[1].expires_at = 0;
	ck_assert_int_eq(auth_verify_key(key, 5, s, 2, now, NULL),
	    AUTH_BAD_SIGNATURE);
	ck_assert_int_eq(auth_verify_key(key, 5, NULL, 0, now, NULL),
	    AUTH_NO_SECRET);
}
END_TEST

START_TEST(test_key_wrong_length)
{
	static const char	 key[] = "k-123";
	unsigned char		 h[AUTH_HASH_LEN + 1], h2[AUTH_HASH_LEN];
	struct auth_secret	 s[2];

	ck_assert_int_eq(auth_key_hash(key, 5, h), 0);
	ck_assert_int_eq(auth_key_hash("k-456", 5, h2), 0);
	h[AUTH_HASH_LEN] = 0;
	/* The right hash plus a byte, or minus one: skipped, never compared. */
	s[0].key = h;
	s[0].keylen = AUTH_HASH_LEN + 1;
	s[0].expires_at = 0;
	ck_assert_int_eq(auth_verify_key(key, 5, s, 1, 0, NULL),
	    AUTH_NO_SECRET);
	s[0].keylen = AUTH_HASH_LEN - 1;
	ck_assert_int_eq(auth_verify_key(key, 5, s, 1, 0, NULL),
	    AUTH_NO_SECRET);
	s[1].key = h2;
	s[1].keylen = sizeof(h2);
	s[1].expires_at = 0;
	ck_assert_int_eq(auth_verify_key(key, 5, s, 2, 0, NULL),
	    AUTH_BAD_SIGNATURE);
	ck_assert_int_eq(auth_verify_key("k-456", 5, s, 2, 0, NULL), AUTH_OK);
	s[0].keylen = 0;
	ck_assert_int_eq(auth_verify_key(key, 5, s, 1, 0, NULL),
	    AUTH_NO_SECRET);
}
END_TEST

START_TEST(test_strerror)
{
	static const enum auth_status	 all[] = { AUTH_OK, AUTH_MISSING,
	    AUTH_MALFORMED, AUTH_TIMESTAMP, AUTH_BAD_SIGNATURE,
	    AUTH_NO_SECRET, AUTH_ERROR };
	const char			*a, *b;
	size_t				 i, j;

	for (i = 0; i < NELEM(all); i++) {
		a = auth_strerror(all[i]);
		ck_assert_ptr_nonnull(a);
		ck_assert_uint_gt(strlen(a), 0);
		for (j = 0; j < i; j++) {
			b = auth_strerror(all[j]);
			ck_assert_str_ne(a, b);
		}
	}
	ck_assert_ptr_nonnull(auth_strerror((enum auth_status)99));
}
END_TEST

static Suite *
auth_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("auth");

	tc = tcase_create("hmac");
	tcase_add_loop_test(tc, test_hmac_rfc4231, 0, (int)NELEM(rfc4231));
	tcase_add_test(tc, test_hmac_empty_and_args);
	suite_add_tcase(s, tc);

	tc = tcase_create("tsig");
	tcase_add_test(tc, test_tsig_known_answer);
	tcase_add_test(tc, test_tsig_empty_body);
	tcase_add_test(tc, test_tsig_roundtrip);
	tcase_add_test(tc, test_tsig_body_one_byte);
	tcase_add_test(tc, test_tsig_tolerance);
	tcase_add_test(tc, test_tsig_tolerance_signed);
	tcase_add_loop_test(tc, test_tsig_cases, 0, (int)NELEM(tsig_cases));
	tcase_add_test(tc, test_tsig_missing);
	tcase_add_test(tc, test_tsig_many_v1);
	tcase_add_test(tc, test_tsig_huge_header);
	tcase_add_test(tc, test_tsig_rotation);
	tcase_add_test(tc, test_tsig_expired);
	tcase_add_test(tc, test_tsig_order);
	tcase_add_test(tc, test_tsig_bad_args);
	tcase_add_test(tc, test_tsig_sign);
	tcase_add_test(tc, test_short_digest);
	suite_add_tcase(s, tc);

	tc = tcase_create("stdwebhooks");
	tcase_add_test(tc, test_sw_spec_example);
	tcase_add_loop_test(tc, test_sw_cases, 0, (int)NELEM(sw_cases));
	tcase_add_test(tc, test_sw_roundtrip);
	tcase_add_test(tc, test_sw_tolerance);
	tcase_add_test(tc, test_sw_entries_limit);
	tcase_add_test(tc, test_sw_secrets);
	tcase_add_test(tc, test_sw_id_limits);
	tcase_add_test(tc, test_sw_sign_errors);
	tcase_add_test(tc, test_sw_bad_args);
	suite_add_tcase(s, tc);

	tc = tcase_create("key");
	tcase_add_test(tc, test_key_hash_known);
	tcase_add_test(tc, test_key_verify);
	tcase_add_test(tc, test_key_missing_and_long);
	tcase_add_test(tc, test_key_expired);
	tcase_add_test(tc, test_key_wrong_length);
	tcase_add_test(tc, test_strerror);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	if (sodium_init() < 0)
		return 1;
	return test_run_pure(auth_suite);
}
