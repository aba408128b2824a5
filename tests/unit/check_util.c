/*
 * check_util.c: tests of lib/base/util.c, lib/base/hb.c, lib/provider/obs.c,
 * lib/net/addr.c and lib/run/settings.c: the integer parser, the UTF-8 and
 * identifier validators, the result table, the observation state names, the
 * redaction of URLs, which addresses are internal (and the host libcurl reads
 * from a URL), and how the data location chooses the backend and shows a
 * PostgreSQL one (its redaction is check_db's).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "base/hb.h"
#include "base/text.h"
#include "base/util.h"
#include "net/addr.h"
#include "net/http.h"
#include "provider/obs.h"
#include "run/settings.h"
#include "testutil.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* A value no function under test returns: proves *errstr was written. */
static const char	 unset[] = "unset";

static Suite	*util_suite(void);

/* Returns n copies of unit, NUL-terminated, in memory the caller frees. */
static char *
repeat(const char *unit, size_t n)
{
	size_t	 ulen = strlen(unit), i;
	char	*s;

	s = malloc(ulen * n + 1);
	ck_assert_ptr_nonnull(s);
	for (i = 0; i < n; i++)
		memcpy(s + i * ulen, unit, ulen);
	s[ulen * n] = '\0';
	return s;
}

/*
 * util_strtonum
 *
 * The contract is "a whole decimal string": digits with an optional
 * leading '-', nothing else.  This is stricter than OpenBSD's strtonum(3),
 * whose strtoll(3) skips leading white space and a '+'.
 */

static const struct numcase {
	const char	*s;
	long long	 min;
	long long	 max;
	long long	 want;
	const char	*err;	/* NULL: success */
} numcases[] = {
	{ "0", 0, 10, 0, NULL },
	{ "7", 0, 10, 7, NULL },
	{ "-0", 0, 10, 0, NULL },
	{ "0000000000000000000000042", 0, 100, 42, NULL },
	/* The edges of [min, max], and one past each. */
	{ "10", 0, 10, 10, NULL },
	{ "11", 0, 10, 0, "too large" },
	{ "1", 1, 10, 1, NULL },
	{ "0", 1, 10, 0, "too small" },
	{ "-5", -5, 5, -5, NULL },
	{ "-6", -5, 5, 0, "too small" },
	{ "5", -5, 5, 5, NULL },
	{ "6", -5, 5, 0, "too large" },
	{ "3", 3, 3, 3, NULL },
	{ "-3", -3, -3, -3, NULL },
	{ "-2", -3, -3, 0, "too large" },
	/* The type's own edges, and one past each. */
	{ "9223372036854775807", LLONG_MIN, LLONG_MAX, LLONG_MAX, NULL },
	{ "-9223372036854775808", LLONG_MIN, LLONG_MAX, LLONG_MIN, NULL },
	{ "9223372036854775808", LLONG_MIN, LLONG_MAX, 0, "too large" },
	{ "-9223372036854775809", LLONG_MIN, LLONG_MAX, 0, "too small" },
	{ "9223372036854775806", LLONG_MIN, LLONG_MAX, LLONG_MAX - 1, NULL },
	{ "-9223372036854775807", LLONG_MIN, LLONG_MAX, LLONG_MIN + 1, NULL },
	/* Far out of range: 2^64 (wraps to 0 in 64 bits), 20 and 30 digits. */
	{ "18446744073709551616", LLONG_MIN, LLONG_MAX, 0, "too large" },
	/* Past the range and then not a number: not a number. */
	{ "99999999999999999999x", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "-99999999999999999999 ", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "99999999999999999999999", 0, 65536, 0, "too large" },
	{ "-18446744073709551616", LLONG_MIN, LLONG_MAX, 0, "too small" },
	{ "99999999999999999999", LLONG_MIN, LLONG_MAX, 0, "too large" },
	{ "-99999999999999999999", LLONG_MIN, LLONG_MAX, 0, "too small" },
	{ "999999999999999999999999999999", 0, 10, 0, "too large" },
	/* In the type's range but not in [min, max]. */
	{ "9223372036854775807", 0, 100, 0, "too large" },
	{ "-9223372036854775808", 0, 100, 0, "too small" },
	/* Not a whole decimal string. */
	{ "", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "-", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "+", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "+1", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "--1", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "-+1", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ " 1", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "\t1", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "1 ", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "1\n", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "- 1", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "0x10", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "12abc", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "abc", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "1.5", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "1e3", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "1,000", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "-12-", LLONG_MIN, LLONG_MAX, 0, "invalid" },
	{ "\xd9\xa1", LLONG_MIN, LLONG_MAX, 0, "invalid" },	/* Arabic 1 */
	/* An empty range is an invalid call whatever the string. */
	{ "5", 10, 0, 0, "invalid" },
	{ "0", 1, -1, 0, "invalid" },
};

START_TEST(test_strtonum)
{
	const struct numcase	*c = &numcases[_i];
	const char		*err = unset;
	long long		 v;

	v = util_strtonum(c->s, c->min, c->max, &err);
	ck_assert_msg(v == c->want, "\"%s\" in [%lld, %lld]: %lld, want %lld",
	    c->s, c->min, c->max, v, c->want);
	if (c->err == NULL)
		ck_assert_msg(err == NULL, "\"%s\": errstr \"%s\", want NULL",
		    c->s, err == NULL ? "(null)" : err);
	else {
		ck_assert_msg(err != NULL, "\"%s\": errstr NULL, want \"%s\"",
		    c->s, c->err);
		ck_assert_str_eq(err, c->err);
	}
}
END_TEST

START_TEST(test_strtonum_null_and_reuse)
{
	const char	*err = unset;

	ck_assert_int_eq(util_strtonum(NULL, 0, 10, &err), 0);
	ck_assert_ptr_nonnull(err);
	ck_assert_str_eq(err, "invalid");

	/* A success after a failure clears the old error. */
	ck_assert_int_eq(util_strtonum("x", 0, 10, &err), 0);
	ck_assert_str_eq(err, "invalid");
	ck_assert_int_eq(util_strtonum("9", 0, 10, &err), 9);
	ck_assert_ptr_null(err);
}
END_TEST

/*
 * text_valid_utf8
 */

static const struct utf8case {
	const char	*s;
	size_t		 len;
	int		 valid;
} utf8cases[] = {
	{ "", 0, 1 },
	{ "hello, world", 12, 1 },
	{ "\x7f", 1, 1 },
	{ "a\0b", 3, 1 },		/* NUL is a character; len rules */
	/* Two bytes: the first, a middle, the last. */
	{ "\xc2\x80", 2, 1 },
	{ "\xc3\xa9", 2, 1 },
	{ "\xdf\xbf", 2, 1 },
	/* Three bytes, with the code points either side of the surrogates. */
	{ "\xe0\xa0\x80", 3, 1 },
	{ "\xe2\x82\xac", 3, 1 },
	{ "\xed\x9f\xbf", 3, 1 },
	{ "\xee\x80\x80", 3, 1 },
	{ "\xef\xbf\xbf", 3, 1 },
	/* Four bytes, up to U+10FFFF. */
	{ "\xf0\x90\x80\x80", 4, 1 },
	{ "\xf0\x9f\x98\x80", 4, 1 },
	{ "\xf4\x8f\xbf\xbf", 4, 1 },
	{ "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z", 11, 1 },
	/* Overlong forms. */
	{ "\xc0\x80", 2, 0 },
	{ "\xc0\xaf", 2, 0 },
	{ "\xc1\xbf", 2, 0 },
	{ "\xe0\x80\x80", 3, 0 },
	{ "\xe0\x80\xaf", 3, 0 },
	{ "\xe0\x9f\xbf", 3, 0 },
	{ "\xf0\x80\x80\x80", 4, 0 },
	{ "\xf0\x8f\xbf\xbf", 4, 0 },
	/* UTF-16 surrogates, alone and paired. */
	{ "\xed\xa0\x80", 3, 0 },
	{ "\xed\xaf\xbf", 3, 0 },
	{ "\xed\xb0\x80", 3, 0 },
	{ "\xed\xbf\xbf", 3, 0 },
	{ "\xed\xa0\xbd\xed\xb8\x80", 6, 0 },
	/* Past U+10FFFF. */
	{ "\xf4\x90\x80\x80", 4, 0 },
	{ "\xf5\x80\x80\x80", 4, 0 },
	{ "\xf7\xbf\xbf\xbf", 4, 0 },
	/* Lead bytes of five and six byte forms, and 0xfe, 0xff. */
	{ "\xf8\x88\x80\x80\x80", 5, 0 },
	{ "\xfc\x84\x80\x80\x80\x80", 6, 0 },
	{ "\xfe", 1, 0 },
	{ "\xff", 1, 0 },
	/* Truncated sequences: at the end, and followed by ASCII. */
	{ "\xc3", 1, 0 },
	{ "\xe2\x82", 2, 0 },
	{ "\xf0\x9f\x98", 3, 0 },
	{ "abc\xe2", 4, 0 },
	{ "\xc3" "a", 2, 0 },
	{ "\xe2\x82" "a", 3, 0 },
	{ "\xf0\x9f\x98" "a", 4, 0 },
	/* A valid sequence cut by len. */
	{ "\xc3\xa9", 1, 0 },
	{ "\xe2\x82\xac", 2, 0 },
	{ "\xf0\x9f\x98\x80", 3, 0 },
	/* Stray continuation bytes. */
	{ "\x80", 1, 0 },
	{ "\xbf", 1, 0 },
	{ "a\x80" "b", 3, 0 },
	{ "\xc3\xa9\xa9", 3, 0 },
	{ "\xe2\x82\xac\x80", 4, 0 },
	/* Bytes past len are not looked at. */
	{ "ab\xff", 2, 1 },
	{ "\xc3\xa9\xc3", 2, 1 },
};

START_TEST(test_utf8)
{
	const struct utf8case	*c = &utf8cases[_i];
	char			*copy;

	/* An exact-size copy: the sanitizer build catches reads past len. */
	copy = malloc(c->len > 0 ? c->len : 1);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, c->s, c->len);
	ck_assert_msg(text_valid_utf8(copy, c->len) == c->valid,
	    "case %d: want %d", _i, c->valid);
	free(copy);
}
END_TEST

/*
 * text_valid_id
 */

static const struct idcase {
	const char	*s;
	int		 valid;
} idcases[] = {
	{ "", 0 },
	{ "a", 1 },
	{ "acme:att-42:analyze-v1", 1 },
	{ "job 42", 1 },			/* a space is no control */
	{ "~!@#$%^&*()[]{}", 1 },
	{ "job-\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80", 1 },
	/* C0 controls, DEL, tab. */
	{ "\x01", 0 },
	{ "a\x01" "b", 0 },
	{ "\x1f", 0 },
	{ "ab\x1f", 0 },
	{ "\x7f", 0 },
	{ "a\x7f", 0 },
	{ "a\tb", 0 },
	{ "\t", 0 },
	{ "a\nb", 0 },
	{ "a\r", 0 },
	{ "\x1b[31m", 0 },
	/* Not UTF-8. */
	{ "\xff", 0 },
	{ "job-\xfe", 0 },
	{ "\xc0\x80", 0 },
	{ "\xed\xa0\x80", 0 },
	{ "\xf4\x90\x80\x80", 0 },
	{ "j\xc3", 0 },
	{ "j\x80", 0 },
	/* C1 controls (U+0080..U+009F), encoded as UTF-8. */
	{ "a\xc2\x80" "b", 0 },
	{ "a\xc2\x85" "b", 0 },	/* NEL */
	{ "\xc2\x9b" "31m", 0 },	/* CSI */
	{ "a\xc2\xa0" "b", 1 },	/* NBSP is printable */
	/* Invisible and bidirectional format characters. */
	{ "job\xe2\x80\xae" "gnp.exe", 0 },	/* U+202E RLO */
	{ "a\xe2\x80\x8b" "b", 0 },	/* U+200B zero width space */
	{ "a\xe2\x80\x8f", 0 },	/* U+200F RLM */
	{ "a\xe2\x80\xa8" "b", 0 },	/* U+2028 line separator */
	{ "a\xe2\x81\xa6" "b", 0 },	/* U+2066 LRI */
	{ "a\xd8\x9c" "b", 0 },		/* U+061C ALM */
	{ "\xef\xbb\xbf" "a", 0 },	/* U+FEFF BOM */
	{ "a\xe2\x80\x94" "b", 1 },	/* U+2014 em dash is fine */
};

START_TEST(test_id)
{
	const struct idcase	*c = &idcases[_i];

	ck_assert_msg(text_valid_id(c->s, HB_ID_MAX) == c->valid,
	    "case %d: want %d", _i, c->valid);
}
END_TEST

/*
 * text_valid_name, text_valid_action
 */

static const struct idcase namecases[] = {
	{ "", 0 },
	{ "a", 1 },
	{ "acme", 1 },
	{ "Acme-2_b.c", 1 },
	{ "9lives", 1 },
	{ "a:b", 0 },
	{ ":", 0 },
	{ "a b", 0 },
	{ "a/b", 0 },
	{ ".", 0 },
	{ "..", 0 },
	{ "_health", 0 },
	{ "-x", 0 },
	{ "a\r\nX: 1", 0 },
	{ "t\xc3\xa9nant", 0 },
	{ "a\x7f", 0 },
};

START_TEST(test_name)
{
	const struct idcase	*c = &namecases[_i];

	ck_assert_msg(text_valid_name(c->s) == c->valid,
	    "case %d \"%s\": want %d", _i, c->s, c->valid);
}
END_TEST

static const struct idcase actioncases[] = {
	{ "acme:att-42:analyze-v1", 1 },
	{ "a:b:c", 1 },
	{ "a:b", 0 },
	{ "a:b:c:d", 0 },
	{ "a::c", 0 },
	{ ":b:c", 0 },
	{ "a:b:", 0 },
	{ "a:b:c\r\nX-Evil: 1", 0 },
	{ "a:b c:d", 0 },
	{ "", 0 },
	/*
	 * A subject's: tenant:namespace/subject:version:step, the subject
	 * an id; before namespaces, tenant:subject:version:step.
	 */
	{ "acme:cms/a-1:3:publish", 1 },
	{ "acme:cms/urn:a/b:3:publish", 1 },
	{ "acme:a-1:3:publish", 1 },
	{ "acme:urn:asset:7:0:unpublish", 1 },
	{ "acme:a b\xc3\xa9:9007199254740991:publish", 1 },
	{ "a::3:d", 0 },
	{ "a:b:3:", 0 },
	{ "a:b::d", 0 },
	{ "a:b:3x:d", 0 },
	{ "a:b:12345678901234567:d", 0 },
	{ "a:b\r\n:3:d", 0 },
	{ "a:b\x7f:3:d", 0 },
	{ "a:b:3:d e", 0 },
	{ "a b:c:3:d", 0 },
	{ ":b:3:d", 0 },
};

START_TEST(test_action)
{
	const struct idcase	*c = &actioncases[_i];

	ck_assert_msg(text_valid_action(c->s) == c->valid,
	    "case %d \"%s\": want %d", _i, c->s, c->valid);
}
END_TEST

START_TEST(test_name_length)
{
	char	buf[3 * (HB_ID_MAX + 1) + 1];

	memset(buf, 'a', HB_ID_MAX);
	buf[HB_ID_MAX] = '\0';
	ck_assert_int_eq(text_valid_name(buf), 1);
	memset(buf, 'a', HB_ID_MAX + 1);
	buf[HB_ID_MAX + 1] = '\0';
	ck_assert_int_eq(text_valid_name(buf), 0);
	ck_assert_int_eq(text_valid_name(NULL), 0);

	/* Three names of HB_ID_MAX: the longest action id. */
	memset(buf, 'a', sizeof(buf) - 1);
	buf[HB_ID_MAX] = ':';
	buf[2 * HB_ID_MAX + 1] = ':';
	buf[3 * HB_ID_MAX + 2] = '\0';
	ck_assert_uint_eq(strlen(buf), HB_ACTION_MAX);
	ck_assert_int_eq(text_valid_action(buf), 1);
	buf[3 * HB_ID_MAX + 2] = 'a';
	buf[3 * HB_ID_MAX + 3] = '\0';
	ck_assert_int_eq(text_valid_action(buf), 0);
}
END_TEST

/*
 * text_escape: what reaches a log line.
 */
START_TEST(test_escape)
{
	char	buf[64], small[8];

	ck_assert_str_eq(text_escape("ok-name_1", (size_t)-1, buf,
	    sizeof(buf)), "ok-name_1");
	ck_assert_str_eq(text_escape("a\r\nb", (size_t)-1, buf, sizeof(buf)),
	    "a\\x0d\\x0ab");
	ck_assert_str_eq(text_escape("\x1b[2J", (size_t)-1, buf, sizeof(buf)),
	    "\\x1b[2J");
	/* C1 and bidirectional characters are bytes >= 0x80: escaped. */
	ck_assert_str_eq(text_escape("a\xc2\x9b" "b", (size_t)-1, buf,
	    sizeof(buf)), "a\\xc2\\x9bb");
	ck_assert_str_eq(text_escape("\xe2\x80\xae", (size_t)-1, buf,
	    sizeof(buf)), "\\xe2\\x80\\xae");
	ck_assert_str_eq(text_escape("say \"hi\" \\", (size_t)-1, buf,
	    sizeof(buf)), "say \\x22hi\\x22 \\x5c");
	/* n bounds the read; a NUL ends it sooner. */
	ck_assert_str_eq(text_escape("abcdef", 3, buf, sizeof(buf)), "abc");
	ck_assert_str_eq(text_escape(NULL, 3, buf, sizeof(buf)), "");
	/* Cut, marked, always terminated. */
	ck_assert_str_eq(text_escape("abcdefghij", (size_t)-1, small,
	    sizeof(small)), "abcd...");
	ck_assert_str_eq(text_escape("\x01\x02", (size_t)-1, small,
	    sizeof(small)), "\\x01...");
	ck_assert_str_eq(text_escape("\x01\x02\x03", (size_t)-1, small, 4),
	    "...");
}
END_TEST

START_TEST(test_id_length)
{
	char	*s, buf[HB_ID_MAX + 1];

	ck_assert_int_eq(text_valid_id(NULL, HB_ID_MAX), 0);

	/* Exactly HB_ID_MAX bytes, then one more. */
	s = repeat("a", HB_ID_MAX);
	ck_assert_int_eq(text_valid_id(s, HB_ID_MAX), 1);
	free(s);
	s = repeat("a", HB_ID_MAX + 1);
	ck_assert_int_eq(text_valid_id(s, HB_ID_MAX), 0);
	free(s);

	/* The bound is in bytes, not characters: 42 and 43 euro signs. */
	s = repeat("\xe2\x82\xac", HB_ID_MAX / 3);
	ck_assert_uint_eq(strlen(s), 126);
	ck_assert_int_eq(text_valid_id(s, HB_ID_MAX), 1);
	free(s);
	s = repeat("\xe2\x82\xac", HB_ID_MAX / 3 + 1);
	ck_assert_int_eq(text_valid_id(s, HB_ID_MAX), 0);
	free(s);

	/* A two-byte character ending exactly at the limit, or past it. */
	memset(buf, 'a', sizeof(buf));
	memcpy(buf + HB_ID_MAX - 2, "\xc3\xa9", 3);
	ck_assert_uint_eq(strlen(buf), HB_ID_MAX);
	ck_assert_int_eq(text_valid_id(buf, HB_ID_MAX), 1);

	/*
	 * HB_ID_MAX + 1 bytes and no NUL within them: refused without
	 * reading further (the sanitizer build would see a read past buf).
	 */
	memset(buf, 'a', sizeof(buf));
	ck_assert_int_eq(text_valid_id(buf, HB_ID_MAX), 0);

	/* Another max. */
	ck_assert_int_eq(text_valid_id("abc", 3), 1);
	ck_assert_int_eq(text_valid_id("abcd", 3), 0);
	ck_assert_int_eq(text_valid_id("a", 0), 0);
}
END_TEST

/*
 * text_valid
 */

START_TEST(test_line)
{
	char	buf[HB_TEXT_MAX + 2];

	ck_assert_int_eq(text_valid_line("", HB_TEXT_MAX), 1);
	ck_assert_int_eq(text_valid_line(NULL, HB_TEXT_MAX), 0);
	ck_assert_int_eq(text_valid_line("https://a.example/x?y=1 z",
	    HB_TEXT_MAX), 1);
	ck_assert_int_eq(text_valid_line("caf\xc3\xa9", HB_TEXT_MAX), 1);
	ck_assert_int_eq(text_valid_line("a\r\nb", HB_TEXT_MAX), 0);
	ck_assert_int_eq(text_valid_line("a\nb", HB_TEXT_MAX), 0);
	ck_assert_int_eq(text_valid_line("a\tb", HB_TEXT_MAX), 0);
	ck_assert_int_eq(text_valid_line("a\x7f", HB_TEXT_MAX), 0);
	ck_assert_int_eq(text_valid_line("\xff", HB_TEXT_MAX), 0);
	memset(buf, 'a', sizeof(buf));
	buf[HB_TEXT_MAX] = '\0';
	ck_assert_int_eq(text_valid_line(buf, HB_TEXT_MAX), 1);
	buf[HB_TEXT_MAX] = 'a';
	buf[HB_TEXT_MAX + 1] = '\0';
	ck_assert_int_eq(text_valid_line(buf, HB_TEXT_MAX), 0);
}
END_TEST

/* A header name, a header value's bytes, a time's digits. */
START_TEST(test_text_header)
{
	int64_t	v = -1;
	char	name[HB_ID_MAX + 2], lower[HB_ID_MAX + 1];

	ck_assert(text_valid_header("X-Hub-Signature-256"));
	ck_assert(text_valid_header("!#$%&'*+-.^_`|~"));
	ck_assert(!text_valid_header(""));
	ck_assert(!text_valid_header("X Sig"));
	ck_assert(!text_valid_header("X:Sig"));
	ck_assert(!text_valid_header("X-\xc3\xa9"));
	memset(name, 'a', sizeof(name) - 1);
	name[HB_ID_MAX] = '\0';
	ck_assert(text_valid_header(name));
	name[HB_ID_MAX] = 'a';
	name[HB_ID_MAX + 1] = '\0';
	ck_assert(!text_valid_header(name));
	ck_assert_int_eq(text_header_lower(lower, name), -1);

	/* One spelling, in place too; what is no header name is refused. */
	ck_assert_int_eq(text_header_lower(lower, "X-Hub-Signature-256"), 0);
	ck_assert_str_eq(lower, "x-hub-signature-256");
	ck_assert_int_eq(text_header_lower(lower, "X Sig"), -1);
	memcpy(lower, "Webhook-ID", sizeof("Webhook-ID"));
	ck_assert_int_eq(text_header_lower(lower, lower), 0);
	ck_assert_str_eq(lower, "webhook-id");

	/* A reason, cut to fit; none asked for, none written. */
	text_say(lower, 8, "%s: %d", "signature", 7);
	ck_assert_str_eq(lower, "signatu");
	text_say(NULL, 8, "%s", "x");
	memcpy(lower, "kept", sizeof("kept"));
	text_say(lower, 0, "%s", "x");
	ck_assert_str_eq(lower, "kept");

	ck_assert(!text_has_ctl("t=1,\tv1=ab", 10));
	ck_assert(text_has_ctl("t=1\r\n", 5));
	ck_assert(text_has_ctl("a\x7f", 2));
	ck_assert(text_has_ctl("a\0b", 3));
	ck_assert(!text_has_ctl("\xc3\xa9", 2));

	ck_assert_int_eq(text_decimal("1796119205000", 13, &v), 0);
	ck_assert_int_eq(v, 1796119205000LL);
	ck_assert_int_eq(text_decimal("9223372036854775807", 19, &v), 0);
	ck_assert_int_eq(v, INT64_MAX);
	v = 7;
	ck_assert_int_eq(text_decimal("9223372036854775808", 19, &v), -1);
	ck_assert_int_eq(text_decimal("", 0, &v), -1);
	ck_assert_int_eq(text_decimal("-1", 2, &v), -1);
	ck_assert_int_eq(text_decimal("+1", 2, &v), -1);
	ck_assert_int_eq(text_decimal(" 1", 2, &v), -1);
	ck_assert_int_eq(text_decimal("1.5", 3, &v), -1);
	ck_assert_int_eq(v, 7);
	/* len bytes, not up to a NUL. */
	ck_assert_int_eq(text_decimal("12x", 2, &v), 0);
	ck_assert_int_eq(v, 12);
}
END_TEST

START_TEST(test_text)
{
	char	*s, buf[HB_TEXT_MAX + 1];

	ck_assert_int_eq(text_valid("", HB_TEXT_MAX), 1);
	ck_assert_int_eq(text_valid("", 0), 1);
	ck_assert_int_eq(text_valid(NULL, HB_TEXT_MAX), 0);
	ck_assert_int_eq(text_valid("https://cdn.example/a b.mp4",
	    HB_TEXT_MAX), 1);
	/* Text may hold what identifiers may not. */
	ck_assert_int_eq(text_valid("line one\nline\ttwo\x7f",
	    HB_TEXT_MAX), 1);
	ck_assert_int_eq(text_valid("caf\xc3\xa9 \xf0\x9f\x98\x80",
	    HB_TEXT_MAX), 1);
	/* But not bad UTF-8. */
	ck_assert_int_eq(text_valid("caf\xc3", HB_TEXT_MAX), 0);
	ck_assert_int_eq(text_valid("\xc0\x80", HB_TEXT_MAX), 0);
	ck_assert_int_eq(text_valid("x\xed\xa0\x80", HB_TEXT_MAX), 0);
	ck_assert_int_eq(text_valid("\xff", HB_TEXT_MAX), 0);

	/* The edge. */
	s = repeat("u", HB_TEXT_MAX);
	ck_assert_int_eq(text_valid(s, HB_TEXT_MAX), 1);
	free(s);
	s = repeat("u", HB_TEXT_MAX + 1);
	ck_assert_int_eq(text_valid(s, HB_TEXT_MAX), 0);
	free(s);
	s = repeat("\xf0\x9f\x98\x80", HB_TEXT_MAX / 4);
	ck_assert_int_eq(text_valid(s, HB_TEXT_MAX), 1);
	free(s);
	s = repeat("\xf0\x9f\x98\x80", HB_TEXT_MAX / 4 + 1);
	ck_assert_int_eq(text_valid(s, HB_TEXT_MAX), 0);
	free(s);
	ck_assert_int_eq(text_valid("abc", 3), 1);
	ck_assert_int_eq(text_valid("abcd", 3), 0);

	/* No NUL within max + 1 bytes: refused, nothing read past buf. */
	memset(buf, 'u', sizeof(buf));
	ck_assert_int_eq(text_valid(buf, HB_TEXT_MAX), 0);
}
END_TEST

/*
 * text_eqi
 */

START_TEST(test_eqi)
{
	ck_assert_int_ne(text_eqi("", ""), 0);
	ck_assert_int_ne(text_eqi("Completed", "completed"), 0);
	ck_assert_int_ne(text_eqi("FAILED", "failed"), 0);
	ck_assert_int_ne(text_eqi("job_Completed-1", "JOB_completed-1"), 0);
	ck_assert_int_eq(text_eqi("completed", "complete"), 0);
	ck_assert_int_eq(text_eqi("complete", "completed"), 0);
	ck_assert_int_eq(text_eqi("failed", "faile"), 0);
	ck_assert_int_eq(text_eqi("a", ""), 0);
	ck_assert_int_eq(text_eqi("", "a"), 0);
	ck_assert_int_eq(text_eqi("muxing", "muxinG "), 0);
	/* '_' (0x5f) and DEL (0x7f) differ by 0x20 but are not letters. */
	ck_assert_int_eq(text_eqi("_", "\x7f"), 0);
	ck_assert_int_eq(text_eqi("@", "`"), 0);
	/* ASCII only: e-acute and E-acute are different bytes. */
	ck_assert_int_eq(text_eqi("\xc3\xa9", "\xc3\x89"), 0);
	ck_assert_int_ne(text_eqi("\xc3\xa9", "\xc3\xa9"), 0);
}
END_TEST

/*
 * The clock
 */

START_TEST(test_now)
{
	int64_t	s, ms;

	s = util_now();
	ms = util_now_ms();
	ck_assert_int_gt(s, INT64_C(1600000000));
	ck_assert_int_le(s, ms / 1000);
	/* Apart by at most the time between the two calls: generous. */
	ck_assert_int_le(ms / 1000 - s, 30);
}
END_TEST

/*
 * hb_result
 */

static const struct rescase {
	enum hb_result	 r;
	const char	*name;
	int		 ack;
} rescases[] = {
	{ HB_ACCEPTED, "accepted", 1 },
	{ HB_DUPLICATE, "duplicate", 1 },
	{ HB_RECORDED, "recorded", 1 },
	{ HB_STALE, "stale", 1 },
	{ HB_CONFLICT, "conflict", 1 },
	{ HB_IGNORED, "ignored", 1 },
	{ HB_MALFORMED, "malformed", 0 },
	{ HB_UNAUTHORIZED, "unauthorized", 0 },
	{ HB_UNKNOWN_ENDPOINT, "unknown_endpoint", 0 },
	{ HB_ACTION_CONFLICT, "action_conflict", 0 },
	{ HB_UNKNOWN_JOB, "unknown_job", 0 },
	{ HB_UNAVAILABLE, "unavailable", 0 },
	{ HB_NOMEM, "unavailable", 0 },		/* a 503 like any other */
};

START_TEST(test_result)
{
	const struct rescase	*c = &rescases[_i];
	const char		*text;

	/* The table lists every value, in order. */
	ck_assert_int_eq((int)c->r, _i);
	ck_assert_str_eq(hb_result_name(c->r), c->name);
	if (c->ack)
		ck_assert_int_ne(hb_result_is_ack(c->r), 0);
	else
		ck_assert_int_eq(hb_result_is_ack(c->r), 0);
	text = hb_result_strerror(c->r);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_gt(strlen(text), 0);
}
END_TEST

START_TEST(test_result_all)
{
	size_t	i, j;

	/* One row per enum value. */
	ck_assert_uint_eq(NELEM(rescases), (size_t)HB_NOMEM + 1);
	/* Every sentence is distinct (HB_NOMEM's name is not, on purpose). */
	for (i = 0; i < NELEM(rescases); i++)
		for (j = 0; j < i; j++)
			ck_assert_str_ne(hb_result_strerror(rescases[i].r),
			    hb_result_strerror(rescases[j].r));

	/* Out of range: never an acknowledgement. */
	ck_assert_int_eq(hb_result_is_ack((enum hb_result)(HB_NOMEM + 1)), 0);
	ck_assert_int_eq(hb_result_is_ack((enum hb_result)-1), 0);
	ck_assert_str_eq(hb_result_name((enum hb_result)(HB_NOMEM + 1)),
	    "unavailable");
	ck_assert_str_eq(hb_result_name((enum hb_result)-1), "unavailable");
	ck_assert_ptr_nonnull(hb_result_strerror((enum hb_result)99));
}
END_TEST

/*
 * obs stage and status names
 */

static const struct stagecase {
	enum obs_stage	 stage;
	const char	*name;
} stagecases[] = {
	{ OBS_STAGE_QUEUED, "queued" },
	{ OBS_STAGE_DOWNLOADING, "downloading" },
	{ OBS_STAGE_DOWNLOAD_COMPLETE, "download_complete" },
	{ OBS_STAGE_MUXING, "muxing" },
	{ OBS_STAGE_MUX_COMPLETE, "mux_complete" },
	{ OBS_STAGE_UPLOADING, "uploading" },
	{ OBS_STAGE_COMPLETED, "completed" },
};

START_TEST(test_stage_roundtrip)
{
	enum obs_stage	st;
	size_t		i;

	for (i = 0; i < NELEM(stagecases); i++) {
		ck_assert_str_eq(obs_stage_name(stagecases[i].stage),
		    stagecases[i].name);
		st = (enum obs_stage)-1;
		ck_assert_int_eq(obs_stage_parse(stagecases[i].name, &st), 0);
		ck_assert_int_eq(st, stagecases[i].stage);
		st = (enum obs_stage)-1;
		ck_assert_int_eq(obs_stage_parse(
		    obs_stage_name(stagecases[i].stage), &st), 0);
		ck_assert_int_eq(st, stagecases[i].stage);
	}
	ck_assert_ptr_nonnull(obs_stage_name((enum obs_stage)99));
}
END_TEST

START_TEST(test_stage_order)
{
	/* hookbox(7), ACCEPTANCE RULES (Ordering), parsed from the names. */
	static const char *const order[] = { "downloading",
	    "download_complete", "muxing", "mux_complete", "uploading",
	    "completed" };
	enum obs_stage		 prev, cur;
	size_t			 i;

	ck_assert_int_eq(obs_stage_parse("queued", &prev), 0);
	for (i = 0; i < NELEM(order); i++) {
		ck_assert_int_eq(obs_stage_parse(order[i], &cur), 0);
		ck_assert_msg(prev < cur, "%s does not rank above the stage "
		    "before it", order[i]);
		prev = cur;
	}
}
END_TEST

START_TEST(test_stage_parse)
{
	static const char *const bad[] = { "", "mux", "muxing ", " muxing",
	    "finished", "complete", "download-complete", "download complete",
	    "queued\n", "uploadingx", "mux\xc3\xa9" };
	enum obs_stage		 st;
	size_t			 i;

	/* Case-insensitive. */
	ck_assert_int_eq(obs_stage_parse("MUXING", &st), 0);
	ck_assert_int_eq(st, OBS_STAGE_MUXING);
	ck_assert_int_eq(obs_stage_parse("Download_Complete", &st), 0);
	ck_assert_int_eq(st, OBS_STAGE_DOWNLOAD_COMPLETE);
	ck_assert_int_eq(obs_stage_parse("Uploading", &st), 0);
	ck_assert_int_eq(st, OBS_STAGE_UPLOADING);

	/* Unknown names fail and leave *out alone. */
	for (i = 0; i < NELEM(bad); i++) {
		st = OBS_STAGE_MUX_COMPLETE;
		ck_assert_msg(obs_stage_parse(bad[i], &st) == -1,
		    "\"%s\" parsed", bad[i]);
		ck_assert_int_eq(st, OBS_STAGE_MUX_COMPLETE);
	}
}
END_TEST

START_TEST(test_status_names)
{
	static const struct {
		enum obs_status	 st;
		const char	*name;
	} names[] = {
		{ OBS_ST_NONE, "none" },
		{ OBS_ST_COMPLETED, "completed" },
		{ OBS_ST_FAILED, "failed" },
		{ OBS_ST_SKIPPED, "skipped" },
		{ OBS_ST_WARNING, "warning" },
	};
	static const char *const bad[] = { "", "complete", "done", "fail",
	    "completed ", "pending" };
	enum obs_status		 st;
	size_t			 i;

	for (i = 0; i < NELEM(names); i++) {
		ck_assert_str_eq(obs_status_name(names[i].st), names[i].name);
		st = (enum obs_status)-1;
		ck_assert_int_eq(obs_status_parse(names[i].name, &st), 0);
		ck_assert_int_eq(st, names[i].st);
	}
	for (i = 0; i < NELEM(bad); i++) {
		st = OBS_ST_SKIPPED;
		ck_assert_msg(obs_status_parse(bad[i], &st) == -1,
		    "\"%s\" parsed", bad[i]);
		ck_assert_int_eq(st, OBS_ST_SKIPPED);
	}
	ck_assert_ptr_nonnull(obs_status_name((enum obs_status)99));
}
END_TEST

/* The duration and time parsers behind --expires and
   --retire-others-after. */
static const struct {
	const char	*s;
	int		 ok;
	int64_t		 secs;
} durcases[] = {
	{ "0", 1, 0 }, { "90", 1, 90 }, { "90s", 1, 90 }, { "90m", 1, 5400 },
	{ "24h", 1, 86400 }, { "30d", 1, 2592000 },
	{ "36600d", 1, 36600LL * 86400 },
	{ "36601d", 0, 0 }, { "", 0, 0 }, { "h", 0, 0 }, { "-1h", 0, 0 },
	{ "+1h", 0, 0 }, { "1hh", 0, 0 }, { "-0", 0, 0 }, { "1w", 0, 0 }, { "1 h", 0, 0 },
	{ " 1h", 0, 0 }, { "1H", 0, 0 }, { "1.5h", 0, 0 },
	{ "99999999999999999999999h", 0, 0 },
};

START_TEST(test_duration)
{
	char	buf[64];
	int64_t	v = -7;
	int	rc;

	/* Durations are the +DURATION form of a time. */
	ck_assert_int_lt(snprintf(buf, sizeof(buf), "+%s", durcases[_i].s),
	    (int)sizeof(buf));
	rc = util_parse_time(buf, 0, &v);

	if (durcases[_i].ok) {
		ck_assert_msg(rc == 0, "\"%s\" refused", durcases[_i].s);
		ck_assert_int_eq(v, durcases[_i].secs);
	} else {
		ck_assert_msg(rc == -1, "\"%s\" parsed", durcases[_i].s);
		ck_assert_int_eq(v, -7);	/* untouched */
	}
}
END_TEST

#define NOW	1700000000LL	/* 2023-11-14T22:13:20Z */

static const struct {
	const char	*s;
	int		 ok;
	int64_t		 t;
} timecases[] = {
	{ "0", 1, 0 }, { "1700000000", 1, 1700000000LL },
	{ "1970-01-01", 1, 0 }, { "2023-11-14", 1, 1699920000LL },
	{ "2023-11-14T22:13:20Z", 1, NOW }, { "2000-02-29", 1, 951782400LL },
	{ "2024-12-31T23:59:59Z", 1, 1735689599LL },
	{ "2400-02-29", 1, 13574563200LL },
	{ "+0", 1, NOW }, { "+30d", 1, NOW + 30 * 86400 },
	{ "+24h", 1, NOW + 86400 }, { "+90m", 1, NOW + 5400 },
	{ "+10s", 1, NOW + 10 },
	{ "", 0, 0 }, { "-1", 0, 0 }, { "+", 0, 0 }, { "+-1d", 0, 0 },
	{ "1e9", 0, 0 }, { "2023-02-29", 0, 0 }, { "1900-02-29", 0, 0 },
	{ "2023-13-01", 0, 0 }, { "2023-00-10", 0, 0 }, { "2023-04-31", 0, 0 },
	{ "2023-1-01", 0, 0 }, { "2023/01/01", 0, 0 }, { "1969-12-31", 0, 0 },
	{ "2023-11-14T24:00:00Z", 0, 0 }, { "2023-11-14T22:60:00Z", 0, 0 },
	{ "2023-11-14T22:13:60Z", 0, 0 }, { "2023-11-14T22:13:20", 0, 0 },
	{ "2023-11-14 22:13:20Z", 0, 0 }, { "2023-11-14T22:13:20+01", 0, 0 },
	{ "2023-11-14T22:13Z", 0, 0 }, { "tomorrow", 0, 0 },
	{ "2023-11-14x", 0, 0 }, { "+1y", 0, 0 },
	{ "99999999999999999999", 0, 0 },
};

START_TEST(test_time)
{
	int64_t	v = -7;
	int	rc = util_parse_time(timecases[_i].s, NOW, &v);

	if (timecases[_i].ok) {
		ck_assert_msg(rc == 0, "\"%s\" refused", timecases[_i].s);
		ck_assert_int_eq(v, timecases[_i].t);
	} else {
		ck_assert_msg(rc == -1, "\"%s\" parsed", timecases[_i].s);
		ck_assert_int_eq(v, -7);
	}
}
END_TEST

START_TEST(test_time_null)
{
	int64_t	v = -7;

	ck_assert_int_eq(util_parse_time(NULL, NOW, &v), -1);
	ck_assert_int_eq(v, -7);
}
END_TEST

/*
 * The one date parser, util_parse_datetime(), with the forms each caller
 * asks for: DT_RFC the mapping's occurred field, DT_OP the operator's
 * times (util_parse_time()), DT_SINCE --since (util_parse_since()), and
 * DT_ISO the form every caller takes.  Values exact, in ms.
 */
#define DT_ISO		0u
#define DT_RFC		UTIL_DT_RFC3339
#define DT_OP		UTIL_DT_DATE
#define DT_SINCE	UTIL_DT_DATE
#define T_OK		UTIL_TIME_OK
#define T_BAD		UTIL_TIME_INVALID
#define T_RANGE		UTIL_TIME_RANGE

static const struct {
	unsigned	 forms;
	const char	*s;
	enum util_time	 want;
	int64_t		 ms;
} dtcases[] = {
	/* The form every caller takes, and its bounds. */
	{ DT_ISO, "2024-05-01T10:00:00Z", T_OK, 1714557600000LL },
	{ DT_ISO, "1970-01-01T00:00:00Z", T_OK, 0 },
	{ DT_ISO, "9999-12-31T23:59:59Z", T_OK, 253402300799000LL },
	{ DT_ISO, "2024-02-29T00:00:00Z", T_OK, 1709164800000LL },
	{ DT_ISO, "2000-02-29T00:00:00Z", T_OK, 951782400000LL },
	{ DT_ISO, "1969-12-31T23:59:59Z", T_RANGE, 0 },
	{ DT_ISO, "0000-01-01T00:00:00Z", T_RANGE, 0 },
	{ DT_ISO, "0000-02-29T00:00:00Z", T_RANGE, 0 },	/* 0: a leap year */
	{ DT_ISO, "1900-02-29T00:00:00Z", T_BAD, 0 },	/* no such day */
	{ DT_ISO, "2023-02-29T00:00:00Z", T_BAD, 0 },
	{ DT_ISO, "2100-02-29T00:00:00Z", T_BAD, 0 },
	{ DT_ISO, "2024-02-30T00:00:00Z", T_BAD, 0 },
	{ DT_ISO, "2024-04-31T00:00:00Z", T_BAD, 0 },
	{ DT_ISO, "2024-00-01T00:00:00Z", T_BAD, 0 },
	{ DT_ISO, "2024-13-01T00:00:00Z", T_BAD, 0 },
	{ DT_ISO, "2024-01-00T00:00:00Z", T_BAD, 0 },
	{ DT_ISO, "2024-01-32T00:00:00Z", T_BAD, 0 },
	{ DT_ISO, "2024-05-01T24:00:00Z", T_BAD, 0 },
	{ DT_ISO, "2024-05-01T23:60:00Z", T_BAD, 0 },
	{ DT_ISO, "2016-12-31T23:59:60Z", T_BAD, 0 },	/* a leap second */
	{ DT_ISO, "2024-05-01t10:00:00Z", T_BAD, 0 },
	{ DT_ISO, "2024-05-01T10:00:00z", T_BAD, 0 },
	{ DT_ISO, "2024-05-01T10:00:00.5Z", T_BAD, 0 },
	{ DT_ISO, "2024-05-01T10:00:00+00:00", T_BAD, 0 },
	{ DT_ISO, "2024-05-01", T_BAD, 0 },
	{ DT_ISO, "", T_BAD, 0 },
	/* RFC 3339 in full, as the mapping reads occurred. */
	{ DT_RFC, "2024-05-01T10:00:00Z", T_OK, 1714557600000LL },
	{ DT_RFC, "2024-05-01t10:00:00z", T_OK, 1714557600000LL },
	{ DT_RFC, "2024-05-01T10:00:00.1Z", T_OK, 1714557600100LL },
	{ DT_RFC, "2024-05-01T10:00:00.12Z", T_OK, 1714557600120LL },
	{ DT_RFC, "2024-05-01T10:00:00.123Z", T_OK, 1714557600123LL },
	{ DT_RFC, "2024-05-01T10:00:00.123999999Z", T_OK, 1714557600123LL },
	{ DT_RFC, "2024-05-01T10:00:00.000000000000000000001Z", T_OK,
	    1714557600000LL },
	{ DT_RFC, "2024-05-01T12:00:00+02:00", T_OK, 1714557600000LL },
	{ DT_RFC, "2024-05-01T05:30:00-04:30", T_OK, 1714557600000LL },
	{ DT_RFC, "2024-05-01T10:00:00-00:00", T_OK, 1714557600000LL },
	{ DT_RFC, "2024-05-02T09:59:00+23:59", T_OK, 1714557600000LL },
	{ DT_RFC, "2024-04-30T10:01:00-23:59", T_OK, 1714557600000LL },
	{ DT_RFC, "2024-05-01T12:00:00.250+02:00", T_OK, 1714557600250LL },
	{ DT_RFC, "9999-12-31T23:59:59.999Z", T_OK, 253402300799999LL },
	{ DT_RFC, "1970-01-01T01:00:00+01:00", T_OK, 0 },
	{ DT_RFC, "1969-12-31T23:00:00-01:00", T_OK, 0 },	/* UTC: 1970 */
	{ DT_RFC, "1970-01-01T00:59:59+01:00", T_RANGE, 0 },
	{ DT_RFC, "1969-12-31T23:59:59.999Z", T_RANGE, 0 },
	{ DT_RFC, "9999-12-31T23:59:59-01:00", T_RANGE, 0 },
	{ DT_RFC, "2024-05-01T10:00:00+24:00", T_BAD, 0 },
	{ DT_RFC, "2024-05-01T10:00:00+02:60", T_BAD, 0 },
	{ DT_RFC, "2024-05-01T10:00:00+0200", T_BAD, 0 },
	{ DT_RFC, "2024-05-01T10:00:00+02", T_BAD, 0 },
	{ DT_RFC, "2024-05-01T10:00:00.Z", T_BAD, 0 },
	{ DT_RFC, "2024-05-01T10:00:00,5Z", T_BAD, 0 },
	{ DT_RFC, "2024-05-01T10:00:00.5", T_BAD, 0 },
	{ DT_RFC, "2024-05-01T10:00:00", T_BAD, 0 },
	{ DT_RFC, "2024-05-01 10:00:00Z", T_BAD, 0 },
	{ DT_RFC, "2024-05-01T10:00Z", T_BAD, 0 },
	{ DT_RFC, "2024-05-01", T_BAD, 0 },
	{ DT_RFC, "2024-05-01T10:00:00ZZ", T_BAD, 0 },
	{ DT_RFC, "2024-05-01T10:00:00Z ", T_BAD, 0 },
	{ DT_RFC, " 2024-05-01T10:00:00Z", T_BAD, 0 },
	{ DT_RFC, "2024-5-01T10:00:00Z", T_BAD, 0 },
	{ DT_RFC, "+2024-05-01T10:00:00Z", T_BAD, 0 },
	{ DT_RFC, "20240501T100000Z", T_BAD, 0 },
	{ DT_RFC, "2023-02-29T00:00:00Z", T_BAD, 0 },
	{ DT_RFC, "2016-12-31T23:59:60Z", T_BAD, 0 },
	/* A date alone, as the operator and --since write one. */
	{ DT_OP, "1970-01-01", T_OK, 0 },
	{ DT_OP, "2023-11-14", T_OK, 1699920000000LL },
	{ DT_OP, "2000-02-29", T_OK, 951782400000LL },
	{ DT_OP, "2400-02-29", T_OK, 13574563200000LL },
	{ DT_OP, "2023-11-14T22:13:20Z", T_OK, 1700000000000LL },
	{ DT_OP, "1969-12-31", T_RANGE, 0 },
	{ DT_OP, "2023-02-29", T_BAD, 0 },
	{ DT_OP, "1900-02-29", T_BAD, 0 },
	{ DT_OP, "2023-04-31", T_BAD, 0 },
	{ DT_OP, "2023-11-14x", T_BAD, 0 },
	{ DT_OP, "2023-11-14T", T_BAD, 0 },
	{ DT_OP, "2023-11-14t22:13:20Z", T_BAD, 0 },
	{ DT_OP, "2023-11-14T22:13:20+00:00", T_BAD, 0 },
	{ DT_OP, "2023-1-14", T_BAD, 0 },
	{ DT_OP, "2023/11/14", T_BAD, 0 },
	/* --since's days: 29 to 31 in every month, counting on past its end. */
	{ DT_SINCE, "2023-02-28", T_OK, 1677542400000LL },
	/* A day its month has not is no date, for every caller. */
	{ DT_SINCE, "2023-02-29", T_BAD, 0 },
	{ DT_SINCE, "2023-02-31", T_BAD, 0 },
	{ DT_SINCE, "2024-02-31", T_BAD, 0 },
	{ DT_SINCE, "2023-04-31", T_BAD, 0 },
	{ DT_SINCE, "9999-11-31", T_BAD, 0 },
	{ DT_SINCE, "2026-02-30T23:59:59Z", T_BAD, 0 },
	{ DT_SINCE, "9999-12-31T23:59:59Z", T_OK, 253402300799000LL },
	{ DT_SINCE, "2023-01-32", T_BAD, 0 },
	{ DT_SINCE, "2023-01-00", T_BAD, 0 },
	{ DT_SINCE, "2023-00-10", T_BAD, 0 },
	{ DT_SINCE, "2023-13-01", T_BAD, 0 },
	{ DT_SINCE, "1969-12-31", T_RANGE, 0 },
	{ DT_SINCE | DT_RFC, "2023-02-29T00:00:00+01:00", T_BAD, 0 },
	{ DT_RFC | DT_OP, "2024-05-01", T_OK, 1714521600000LL },
};

START_TEST(test_datetime)
{
	int64_t		v = -7;
	enum util_time	r;

	r = util_parse_datetime(dtcases[_i].s, dtcases[_i].forms, &v);
	ck_assert_msg(r == dtcases[_i].want, "\"%s\" (forms %u): %d, not %d",
	    dtcases[_i].s, dtcases[_i].forms, (int)r, (int)dtcases[_i].want);
	ck_assert_int_eq(v, r == T_OK ? dtcases[_i].ms : -7);
}
END_TEST

/* Epoch seconds as text, the mapping's other string form. */
static const struct {
	const char	*s;
	enum util_time	 want;
	int64_t		 ms;
} epochcases[] = {
	{ "0", T_OK, 0 }, { "1700000000", T_OK, 1700000000000LL },
	{ "1700000000.123", T_OK, 1700000000123LL },
	{ "1700000000.1239", T_OK, 1700000000123LL },
	{ "1700000000.9", T_OK, 1700000000900LL },
	{ "0001700000000", T_OK, 1700000000000LL },
	{ "0.001", T_OK, 1 },
	{ "253402300799.999999", T_OK, 253402300799999LL },
	{ "253402300800", T_RANGE, 0 },
	{ "253402300800.0", T_RANGE, 0 },
	{ "99999999999999999999999999", T_RANGE, 0 },
	{ "253402300800.", T_BAD, 0 },
	{ "1700000000.", T_BAD, 0 }, { ".5", T_BAD, 0 }, { "1.2.3", T_BAD, 0 },
	{ "-1", T_BAD, 0 }, { "+1", T_BAD, 0 }, { "1e9", T_BAD, 0 },
	{ " 1", T_BAD, 0 }, { "1 ", T_BAD, 0 }, { "", T_BAD, 0 },
	{ "2024-05-01T10:00:00Z", T_BAD, 0 },
};

START_TEST(test_epoch)
{
	int64_t		v = -7;
	enum util_time	r = util_parse_epoch(epochcases[_i].s, &v);

	ck_assert_msg(r == epochcases[_i].want, "\"%s\": %d, not %d",
	    epochcases[_i].s, (int)r, (int)epochcases[_i].want);
	ck_assert_int_eq(v, r == T_OK ? epochcases[_i].ms : -7);
}
END_TEST

/* util_parse_time()'s edges: whole seconds, the duration's digits. */
static const struct {
	const char	*s;
	int		 ok;
	int64_t		 t;
} timeedges[] = {
	{ "0001700000000", 1, 1700000000LL },
	{ "9223372036854775", 1, 9223372036854775LL },	/* INT64_MAX / 1000 */
	{ "9223372036854776", 0, 0 },
	{ "9999-12-31T23:59:59Z", 1, 253402300799LL },
	{ "+3162240000", 1, NOW + UTIL_DURATION_MAX },
	{ "+3162240001", 0, 0 },
	{ "+00000000000000000000001", 1, NOW + 1 },	/* 23 digits */
	{ "+000000000000000000000001", 0, 0 },		/* 24 */
	{ "2023-02-30", 0, 0 }, { "2023-11-14t22:13:20z", 0, 0 },
	{ "2023-11-14T22:13:20.5Z", 0, 0 },
	{ "2023-11-14T22:13:20+00:00", 0, 0 }, { "1d", 0, 0 },
};

START_TEST(test_time_edges)
{
	int64_t	v = -7;
	int	rc = util_parse_time(timeedges[_i].s, NOW, &v);

	ck_assert_msg(rc == (timeedges[_i].ok ? 0 : -1), "\"%s\": %d",
	    timeedges[_i].s, rc);
	ck_assert_int_eq(v, timeedges[_i].ok ? timeedges[_i].t : -7);
}
END_TEST

/* --since: a duration back from now, or a UTC date. */
#define NOW_MS	(NOW * 1000 + 123)

static const struct {
	const char	*s;
	int		 ok;
	int64_t		 ms;
} sincecases[] = {
	{ "90s", 1, NOW_MS - 90000 }, { "30m", 1, NOW_MS - 1800000 },
	{ "24h", 1, NOW_MS - 86400000 }, { "7d", 1, NOW_MS - 604800000 },
	{ "0s", 1, NOW_MS }, { "-0h", 1, NOW_MS },
	{ "007d", 1, NOW_MS - 604800000 },
	{ "00000000000001h", 1, NOW_MS - 3600000 },	/* 15 characters */
	{ "53375995583s", 1, NOW_MS - 53375995583000LL },
	{ "53375995583d", 1, NOW_MS - 53375995583LL * 86400000 },
	{ "1970-01-01", 1, 0 }, { "2023-11-14", 1, 1699920000000LL },
	{ "2023-11-14T22:13:20Z", 1, 1700000000000LL },
	{ "2099-01-01", 1, 4070908800000LL },
	{ "2024-02-29", 1, 1709164800000LL },
	{ "2026-02-31", 0, 0 }, { "2024-02-30", 0, 0 },	/* no such day */
	{ "9999-12-31T23:59:59Z", 1, 253402300799000LL },
	{ "000000000000001h", 0, 0 },			/* 16 characters */
	{ "53375995584d", 0, 0 }, { "-1h", 0, 0 }, { "-h", 0, 0 },
	{ "h", 0, 0 }, { "1", 0, 0 }, { "90", 0, 0 }, { "+1h", 0, 0 },
	{ "1w", 0, 0 }, { "1H", 0, 0 }, { "1 h", 0, 0 }, { " 1h", 0, 0 },
	{ "1.5h", 0, 0 }, { "1hh", 0, 0 }, { "", 0, 0 }, { "yesterday", 0, 0 },
	{ "1969-12-31", 0, 0 }, { "2023-01-32", 0, 0 }, { "2023-00-10", 0, 0 },
	{ "2023-13-01", 0, 0 }, { "2023-11-14T24:00:00Z", 0, 0 },
	{ "2023-11-14T22:60:00Z", 0, 0 }, { "2023-11-14T22:13:60Z", 0, 0 },
	{ "2023-11-14t22:13:20z", 0, 0 }, { "2023-11-14T22:13:20", 0, 0 },
	{ "2023-11-14T22:13:20+00:00", 0, 0 },
	{ "2023-11-14T22:13:20.5Z", 0, 0 }, { "1700000000", 0, 0 },
	{ "2023-11-14 22:13:20Z", 0, 0 },
};

START_TEST(test_since)
{
	int64_t	v = -7;
	int	rc = util_parse_since(sincecases[_i].s, NOW_MS, &v);

	ck_assert_msg(rc == (sincecases[_i].ok ? 0 : -1), "\"%s\": %d",
	    sincecases[_i].s, rc);
	ck_assert_int_eq(v, sincecases[_i].ok ? sincecases[_i].ms : -7);
}
END_TEST

START_TEST(test_times_null)
{
	int64_t	v = -7;

	ck_assert_int_eq(util_parse_datetime(NULL, DT_RFC, &v), T_BAD);
	ck_assert_int_eq(util_parse_epoch(NULL, &v), T_BAD);
	ck_assert_int_eq(util_parse_since(NULL, NOW_MS, &v), -1);
	ck_assert_int_eq(v, -7);
}
END_TEST

/* ---- URL redaction ---- */

static const struct {
	const char	*in, *out;
} redcases[] = {
	{ "https://user:pass@host/x?token=abc&a=1",
	    "https://***@host/x?token=***&a=1" },
	{ "https://host/x", "https://host/x" },
	{ "http://u@h", "http://***@h" },
	{ "https://h:8080/a@b?q=1", "https://h:8080/a@b?q=1" },	/* @ in path */
	{ "https://h/?API_Key=k&Password=p;sig=s&x=1#token=f",
	    "https://h/?API_Key=***&Password=***;sig=***&x=1#token=f" },
	{ "https://h/?access_token=&secret", "https://h/?access_token=&secret" },
	{ "https://h/?x_auth=1&&keyring=2&", "https://h/?x_auth=***&&keyring=***&" },
	{ "https://a:b@h?Signature=zz", "https://***@h?Signature=***" },
	{ "", "" },
};

START_TEST(test_url_redact)
{
	char	buf[128];

	ck_assert_int_eq(text_url_redact(redcases[_i].in, buf, sizeof(buf)),
	    0);
	ck_assert_str_eq(buf, redcases[_i].out);
}
END_TEST

START_TEST(test_url_redact_short)
{
	const char	*u = "https://user:pass@host/x?token=abc";
	char		 buf[64];
	size_t		 need = strlen("https://***@host/x?token=***") + 1;

	ck_assert_int_eq(text_url_redact(u, buf, need), 0);
	/* One byte short: refused, and nothing of the URL is left. */
	ck_assert_int_eq(text_url_redact(u, buf, need - 1), -1);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(text_url_redact(u, buf, 0), -1);
	/* The bound the header states is always enough. */
	ck_assert_int_eq(text_url_redact("http://h?a=1&b=2&c=3", buf,
	    strlen("http://h?a=1&b=2&c=3") + 4 * (2 + 2)), 0);
}
END_TEST

/* The data location: -d, then HOOKBOX_DB, then HOOKBOX_DIR. */
START_TEST(test_settings_location)
{
	struct settings	 s;
	const char	*why = NULL;
	char		 buf_why[256];

	unsetenv("HOOKBOX_DB");
	unsetenv("HOOKBOX_BUSY_MS");
	unsetenv("HOOKBOX_SYNC");
	setenv("HOOKBOX_DIR", "/srv/hb", 1);
	ck_assert_int_eq(settings_load(&s, NULL, -1, 1, &why), 0);
	ck_assert_int_eq(s.server, 0);
	ck_assert_str_eq(s.state_path, "/srv/hb/state.db");
	ck_assert_str_eq(s.config_path, "/srv/hb/config.db");
	ck_assert_str_eq(settings_state_name(&s), "/srv/hb/state.db");
	ck_assert_str_eq(s.shown, "/srv/hb");

	/* HOOKBOX_DB wins over HOOKBOX_DIR, and is both "paths". */
	setenv("HOOKBOX_DB", "host=/run/pg password=pw dbname=hb", 1);
	ck_assert_int_eq(settings_load(&s, NULL, -1, 1, &why), 0);
	ck_assert_int_eq(s.server, 1);
	ck_assert_str_eq(s.state_path, "host=/run/pg password=pw dbname=hb");
	ck_assert_str_eq(s.config_path, s.state_path);
	ck_assert_str_eq(s.shown, "password=*** dbname=hb host=/run/pg");
	ck_assert_str_eq(settings_state_name(&s), s.shown);
	ck_assert_str_eq(settings_config_name(&s), s.shown);
	/* From the environment, not from argv: no warning due. */
	ck_assert_int_eq(s.argv_password, 0);
	/* Nothing on disk to check. */
	ck_assert_int_eq(settings_check_dir(&s, SETTINGS_NEED_CONFIG_WRITE |
	    SETTINGS_NEED_STATE_WRITE, buf_why, sizeof(buf_why)),
	    SETTINGS_DIR_OK);

	/* -d wins over both, and a password in it is flagged. */
	ck_assert_int_eq(settings_load(&s, "postgresql://u:pw@h/db", -1, 1,
	    &why), 0);
	ck_assert_int_eq(s.server, 1);
	ck_assert_int_eq(s.argv_password, 1);
	ck_assert_str_eq(s.shown, "user=u password=*** dbname=db host=h");
	ck_assert_int_eq(settings_load(&s, "postgresql://u@h/db", -1, 1,
	    &why), 0);
	ck_assert_int_eq(s.argv_password, 0);
	/* As libpq reads it: a key percent-encoded, a '?' in the password. */
	ck_assert_int_eq(settings_load(&s, "postgresql://h/db?%70assword=pw",
	    -1, 1, &why), 0);
	ck_assert_int_eq(s.argv_password, 1);
	ck_assert_str_eq(s.shown, "password=*** dbname=db host=h");
	ck_assert_int_eq(settings_load(&s, "postgresql://u:p?w@h/db", -1, 1,
	    &why), 0);
	ck_assert_int_eq(s.argv_password, 1);
	ck_assert_str_eq(s.shown, "user=u password=*** dbname=db host=h");
	/* Nothing libpq takes for a password: no warning. */
	ck_assert_int_eq(settings_load(&s, "postgresql://u:@h/db", -1, 1,
	    &why), 0);
	ck_assert_int_eq(s.argv_password, 0);
	/* One libpq cannot read is not echoed, and may hold one. */
	ck_assert_int_eq(settings_load(&s, "host=h password='pw", -1, 1,
	    &why), 0);
	ck_assert_int_eq(s.argv_password, 1);
	ck_assert_ptr_null(strstr(s.shown, "pw"));
	ck_assert_int_eq(settings_load(&s, "/var/hb", -1, 1, &why), 0);
	ck_assert_int_eq(s.server, 0);
	ck_assert_str_eq(s.dir, "/var/hb");

	/* HOOKBOX_DB must be a conninfo: a directory there is refused. */
	setenv("HOOKBOX_DB", "/srv/hb", 1);
	why = NULL;
	ck_assert_int_eq(settings_load(&s, NULL, -1, 1, &why), -1);
	ck_assert_ptr_nonnull(why);
	ck_assert_ptr_nonnull(strstr(why, "HOOKBOX_DB"));
	/* ... unless -d wins. */
	ck_assert_int_eq(settings_load(&s, "/var/hb", -1, 1, &why), 0);
	/* An empty HOOKBOX_DB is unset. */
	setenv("HOOKBOX_DB", "", 1);
	ck_assert_int_eq(settings_load(&s, NULL, -1, 1, &why), 0);
	ck_assert_str_eq(s.dir, "/srv/hb");
	unsetenv("HOOKBOX_DIR");
	ck_assert_int_eq(settings_load(&s, NULL, -1, 1, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "HOOKBOX_DB"));
	ck_assert_int_eq(settings_load(&s, NULL, -1, 0, &why), 0);
}
END_TEST

/* Makes an empty file at path; asserts it did. */
static void
touch(const char *path)
{
	FILE	*f;

	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	ck_assert_int_eq(fclose(f), 0);
}

/*
 * A database's journal, WAL or WAL index that SQLite would refuse
 * (db/sqlite.c) is told before anything opens it, naming the file: one
 * of another user's (root's tool beside a journal the service user
 * planted), a symbolic link, a file of two names.  Its owner's, or the
 * running user's, is taken.
 */
START_TEST(test_settings_planted)
{
	struct settings	 s;
	const char	*why = NULL, *dir = test_tmpdir();
	char		 buf[PATH_MAX + 256], j[PATH_MAX + 16], other[PATH_MAX + 16];
	const int	 need = SETTINGS_NEED_CONFIG_WRITE |
	    SETTINGS_NEED_STATE_WRITE;

	unsetenv("HOOKBOX_DB");
	ck_assert_int_eq(settings_load(&s, dir, -1, 1, &why), 0);
	touch(s.config_path);
	touch(s.state_path);
	ck_assert_int_eq(settings_check_dir(&s, need, buf, sizeof(buf)),
	    SETTINGS_DIR_OK);
	(void)snprintf(j, sizeof(j), "%s-journal", s.config_path);
	(void)snprintf(other, sizeof(other), "%s/other", dir);
	touch(j);
	ck_assert_int_eq(settings_check_dir(&s, need, buf, sizeof(buf)),
	    SETTINGS_DIR_OK);
	ck_assert_int_eq(unlink(j), 0);
	touch(other);
	ck_assert_int_eq(link(other, j), 0);
	ck_assert_int_eq(settings_check_dir(&s, need, buf, sizeof(buf)),
	    SETTINGS_DIR_PLANTED);
	ck_assert_ptr_nonnull(strstr(buf, j));
	ck_assert_ptr_nonnull(strstr(buf, "hard link"));
	ck_assert_int_eq(unlink(j), 0);
	ck_assert_int_eq(symlink(other, j), 0);
	ck_assert_int_eq(settings_check_dir(&s, need, buf, sizeof(buf)),
	    SETTINGS_DIR_PLANTED);
	ck_assert_ptr_nonnull(strstr(buf, "symbolic link"));
	ck_assert_int_eq(unlink(j), 0);
	/* state.db's too, and only where the program needs it. */
	(void)snprintf(j, sizeof(j), "%s-wal", s.state_path);
	ck_assert_int_eq(symlink(other, j), 0);
	ck_assert_int_eq(settings_check_dir(&s, need, buf, sizeof(buf)),
	    SETTINGS_DIR_PLANTED);
	ck_assert_int_eq(settings_check_dir(&s, SETTINGS_NEED_CONFIG_READ,
	    buf, sizeof(buf)), SETTINGS_DIR_OK);
	ck_assert_int_eq(unlink(j), 0);
	if (geteuid() == 0) {
		/* Another user's, beside root's file: named, with its owner. */
		(void)snprintf(j, sizeof(j), "%s-journal", s.config_path);
		touch(j);
		ck_assert_int_eq(chown(j, 65534, 65534), 0);
		ck_assert_int_eq(settings_check_dir(&s, need, buf,
		    sizeof(buf)), SETTINGS_DIR_PLANTED);
		ck_assert_ptr_nonnull(strstr(buf, "not to the database's"
		    " owner"));
		/* The database's owner's own: taken, by root too. */
		ck_assert_int_eq(chown(s.config_path, 65534, 65534), 0);
		ck_assert_int_eq(settings_check_dir(&s, need, buf,
		    sizeof(buf)), SETTINGS_DIR_OK);
	}
	test_rmdir(dir);
}
END_TEST

/*
 * Internal addresses, as a destination URL spells them: the host libcurl
 * reads from the URL (http_url_host()), then its kind.  Every spelling
 * of an IPv4 address libcurl takes, IPv6 and IPv4 in IPv6, the metadata
 * services' names; loopback, private and public addresses are not
 * internal.  The boundaries of each range are tried on both sides.
 */
static const struct {
	const char	*url;
	const char	*host;	/* as libcurl reads it */
	enum addr_kind	 kind;
} urlcases[] = {
	/* 169.254.169.254, however it is written. */
	{ "http://169.254.169.254/latest/meta-data/", "169.254.169.254",
	    ADDR_METADATA },
	{ "http://2852039166/", "169.254.169.254", ADDR_METADATA },
	{ "http://0xa9fea9fe/", "169.254.169.254", ADDR_METADATA },
	{ "http://0XA9FEA9FE/", "169.254.169.254", ADDR_METADATA },
	{ "http://0251.0376.0251.0376/", "169.254.169.254", ADDR_METADATA },
	{ "http://0xa9.0xfe.0xa9.0xfe/", "169.254.169.254", ADDR_METADATA },
	{ "http://169.254.43518/", "169.254.169.254", ADDR_METADATA },
	{ "http://169.16689662/", "169.254.169.254", ADDR_METADATA },
	{ "http://%31%36%39.254.169.254/", "169.254.169.254", ADDR_METADATA },
	{ "http://169.254.169.254./", "169.254.169.254.", ADDR_METADATA },
	{ "https://user:pw@169.254.169.254:8443/x?y#z", "169.254.169.254",
	    ADDR_METADATA },
	{ "HTTP://169.254.169.254", "169.254.169.254", ADDR_METADATA },
	/* The rest of 169.254.0.0/16, and just outside it. */
	{ "http://169.254.0.0/", "169.254.0.0", ADDR_LINK_LOCAL },
	{ "http://169.254.77.1:8080/", "169.254.77.1", ADDR_LINK_LOCAL },
	{ "http://169.254.255.255/", "169.254.255.255", ADDR_LINK_LOCAL },
	{ "http://2852015361/", "169.254.77.1", ADDR_LINK_LOCAL },
	{ "http://169.253.255.255/", "169.253.255.255", ADDR_OTHER },
	{ "http://169.255.0.0/", "169.255.0.0", ADDR_OTHER },
	/* IPv6 link-local, fe80::/10, and just outside it. */
	{ "http://[fe80::1]/", "[fe80::1]", ADDR_LINK_LOCAL },
	{ "http://[fe80::1%25eth0]:8080/", "[fe80::1]", ADDR_LINK_LOCAL },
	{ "http://[FE80:0:0:0:0:0:0:abcd]/", "[fe80::abcd]",
	    ADDR_LINK_LOCAL },
	{ "http://[febf:ffff::1]/", "[febf:ffff::1]", ADDR_LINK_LOCAL },
	{ "http://[fe7f::1]/", "[fe7f::1]", ADDR_OTHER },
	{ "http://[fec0::1]/", "[fec0::1]", ADDR_OTHER },
	/* IPv4 in IPv6: mapped, compatible, NAT64. */
	{ "http://[::ffff:169.254.169.254]/", "[::ffff:169.254.169.254]",
	    ADDR_METADATA },
	{ "http://[::ffff:a9fe:a9fe]/", "[::ffff:a9fe:a9fe]",
	    ADDR_METADATA },
	{ "http://[0:0:0:0:0:ffff:169.254.7.7]/", "[::ffff:169.254.7.7]",
	    ADDR_LINK_LOCAL },
	{ "http://[::169.254.169.254]/", "[::169.254.169.254]",
	    ADDR_METADATA },
	{ "http://[64:ff9b::169.254.1.2]/", "[64:ff9b::a9fe:102]",
	    ADDR_LINK_LOCAL },
	{ "http://[::ffff:8.8.8.8]/", "[::ffff:8.8.8.8]", ADDR_OTHER },
	{ "http://[64:ff9b:1::169.254.169.254]/", "[64:ff9b:1::a9fe:a9fe]",
	    ADDR_METADATA },
	{ "http://[::ffff:0:169.254.169.254]/", "[::ffff:0:a9fe:a9fe]",
	    ADDR_METADATA },
	/* The other metadata services, and their neighbours. */
	{ "http://[fd00:ec2::254]/latest/", "[fd00:ec2::254]",
	    ADDR_METADATA },
	{ "http://[FD00:EC2:0:0:0:0:0:254]/", "[fd00:ec2::254]",
	    ADDR_METADATA },
	{ "http://[fd00:ec2::253]/", "[fd00:ec2::253]", ADDR_OTHER },
	{ "http://169.254.170.2/v2/credentials", "169.254.170.2",
	    ADDR_METADATA },
	{ "http://100.100.100.200/latest/", "100.100.100.200",
	    ADDR_METADATA },
	{ "http://1684301000/", "100.100.100.200", ADDR_METADATA },
	{ "http://100.100.100.201/", "100.100.100.201", ADDR_OTHER },
	{ "http://192.0.0.192/", "192.0.0.192", ADDR_METADATA },
	{ "http://168.63.129.16/machine", "168.63.129.16", ADDR_METADATA },
	{ "http://metadata.google.internal/computeMetadata/v1/",
	    "metadata.google.internal", ADDR_METADATA },
	{ "http://METADATA.Google.Internal./", "METADATA.Google.Internal.",
	    ADDR_METADATA },
	{ "http://metadata/", "metadata", ADDR_METADATA },
	{ "http://instance-data/latest/", "instance-data", ADDR_METADATA },
	{ "http://instance-data.ec2.internal/", "instance-data.ec2.internal",
	    ADDR_METADATA },
	{ "http://metadata.google.internal.example.com/",
	    "metadata.google.internal.example.com", ADDR_OTHER },
	{ "http://my-metadata/", "my-metadata", ADDR_OTHER },
	/* Loopback: allowed (the application is often on this host). */
	{ "http://127.0.0.1:9/sink", "127.0.0.1", ADDR_LOOPBACK },
	{ "http://127.1/", "127.0.0.1", ADDR_LOOPBACK },
	{ "http://2130706433/", "127.0.0.1", ADDR_LOOPBACK },
	{ "http://0x7f.1/", "127.0.0.1", ADDR_LOOPBACK },
	{ "http://017700000001/", "127.0.0.1", ADDR_LOOPBACK },
	{ "http://127.255.255.254/", "127.255.255.254", ADDR_LOOPBACK },
	{ "http://0/", "0.0.0.0", ADDR_LOOPBACK },
	{ "http://[::1]:8080/", "[::1]", ADDR_LOOPBACK },
	{ "http://[::ffff:127.0.0.1]/", "[::ffff:127.0.0.1]", ADDR_LOOPBACK },
	{ "http://localhost:8080/", "localhost", ADDR_LOOPBACK },
	/* Private and public: nothing to say. */
	{ "https://example.org/h", "example.org", ADDR_OTHER },
	{ "http://93.184.216.34/", "93.184.216.34", ADDR_OTHER },
	{ "http://10.0.0.5:8080/", "10.0.0.5", ADDR_OTHER },
	{ "http://192.168.1.1/", "192.168.1.1", ADDR_OTHER },
	{ "http://172.16.0.1/", "172.16.0.1", ADDR_OTHER },
	{ "http://100.64.0.1/", "100.64.0.1", ADDR_OTHER },
	{ "http://[2001:db8::1]/", "[2001:db8::1]", ADDR_OTHER },
	{ "http://[fd00::1]/", "[fd00::1]", ADDR_OTHER },
	{ "http://4294967296/", "4294967296", ADDR_OTHER },
};

START_TEST(test_addr_url)
{
	char	host[256];
	int	internal;

	ck_assert_msg(http_url_host(urlcases[_i].url, host, sizeof(host)) ==
	    0, "%s: libcurl did not parse it", urlcases[_i].url);
	ck_assert_str_eq(host, urlcases[_i].host);
	ck_assert_msg(addr_kind_host(host) == urlcases[_i].kind,
	    "%s: kind %d, expected %d", urlcases[_i].url,
	    (int)addr_kind_host(host), (int)urlcases[_i].kind);
	internal = urlcases[_i].kind == ADDR_LINK_LOCAL ||
	    urlcases[_i].kind == ADDR_METADATA;
	ck_assert_int_eq(addr_internal(addr_kind_host(host)), internal);
}
END_TEST

/* What libcurl cannot read has no host; a host that does not fit, none. */
START_TEST(test_addr_url_bad)
{
	char	host[16];

	ck_assert_int_eq(http_url_host("http://[zz::1]/", host, sizeof(host)),
	    -1);
	ck_assert_int_eq(http_url_host("http://a b/", host, sizeof(host)), -1);
	ck_assert_int_eq(http_url_host("no scheme", host, sizeof(host)), -1);
	ck_assert_int_eq(http_url_host("http://169.254.169.254/", host,
	    sizeof(host)), 0);
	ck_assert_str_eq(host, "169.254.169.254");
	/* "169.254.169.254" and its NUL: one byte short. */
	ck_assert_int_eq(http_url_host("http://169.254.169.254/", host, 15),
	    -1);
	ck_assert_int_eq(addr_kind_host(NULL), ADDR_OTHER);
	ck_assert_int_eq(addr_kind_host(""), ADDR_OTHER);
	ck_assert_int_eq(addr_kind_host("[]"), ADDR_OTHER);
	ck_assert_int_eq(addr_kind_host("."), ADDR_OTHER);
}
END_TEST

/*
 * The addresses the dispatcher is about to connect to (what a name
 * resolved to), as sockets take them.
 */
static const struct {
	int		 family;
	const char	*addr;
	enum addr_kind	 kind;
} sacases[] = {
	{ AF_INET, "169.254.169.254", ADDR_METADATA },
	{ AF_INET, "169.254.77.1", ADDR_LINK_LOCAL },
	{ AF_INET, "169.254.0.1", ADDR_LINK_LOCAL },
	{ AF_INET, "100.100.100.200", ADDR_METADATA },
	{ AF_INET, "127.0.0.1", ADDR_LOOPBACK },
	{ AF_INET, "169.255.0.1", ADDR_OTHER },
	{ AF_INET, "8.8.8.8", ADDR_OTHER },
	{ AF_INET6, "::ffff:169.254.77.1", ADDR_LINK_LOCAL },
	{ AF_INET6, "::ffff:169.254.169.254", ADDR_METADATA },
	{ AF_INET6, "fe80::1", ADDR_LINK_LOCAL },
	{ AF_INET6, "fd00:ec2::254", ADDR_METADATA },
	{ AF_INET6, "::1", ADDR_LOOPBACK },
	{ AF_INET6, "::ffff:127.0.0.1", ADDR_LOOPBACK },
	{ AF_INET6, "2001:db8::1", ADDR_OTHER },
	{ AF_INET6, "::ffff:8.8.8.8", ADDR_OTHER },
	/* Local-use NAT64 (RFC 8215), the IPv4 address where RFC 6052 puts
	   it for a /96 and for a /48 of it; IPv4-translated (RFC 2765). */
	{ AF_INET6, "64:ff9b:1::a9fe:a9fe", ADDR_METADATA },
	{ AF_INET6, "64:ff9b:1::a9fe:4d01", ADDR_LINK_LOCAL },
	{ AF_INET6, "64:ff9b:1:a9fe:a9:fe00::", ADDR_METADATA },
	{ AF_INET6, "64:ff9b:1:a9fe:4d:100::", ADDR_LINK_LOCAL },
	{ AF_INET6, "64:ff9b:1::808:808", ADDR_OTHER },
	{ AF_INET6, "64:ff9b:2::a9fe:a9fe", ADDR_OTHER },
	{ AF_INET6, "::ffff:0:a9fe:a9fe", ADDR_METADATA },
	{ AF_INET6, "::ffff:0:a9fe:4d01", ADDR_LINK_LOCAL },
	{ AF_INET6, "::ffff:0:808:808", ADDR_OTHER },
};

START_TEST(test_addr_sockaddr)
{
	struct sockaddr_in	s4;
	struct sockaddr_in6	s6;
	const struct sockaddr	*sa;
	size_t			 len;

	memset(&s4, 0, sizeof(s4));
	memset(&s6, 0, sizeof(s6));
	if (sacases[_i].family == AF_INET) {
		s4.sin_family = AF_INET;
		ck_assert_int_eq(inet_pton(AF_INET, sacases[_i].addr,
		    &s4.sin_addr), 1);
		sa = (const struct sockaddr *)&s4;
		len = sizeof(s4);
	} else {
		s6.sin6_family = AF_INET6;
		ck_assert_int_eq(inet_pton(AF_INET6, sacases[_i].addr,
		    &s6.sin6_addr), 1);
		sa = (const struct sockaddr *)&s6;
		len = sizeof(s6);
	}
	ck_assert_msg(addr_kind_of(sa, len) == sacases[_i].kind,
	    "%s: kind %d, expected %d", sacases[_i].addr,
	    (int)addr_kind_of(sa, len), (int)sacases[_i].kind);
	/* Shorter than its family's address: nothing is read. */
	ck_assert_int_eq(addr_kind_of(sa, len - 1), ADDR_OTHER);
}
END_TEST

START_TEST(test_addr_names)
{
	struct sockaddr_un	su;

	/* Another family, or none: nothing to say. */
	memset(&su, 0, sizeof(su));
	su.sun_family = AF_UNIX;
	ck_assert_int_eq(addr_kind_of((const struct sockaddr *)&su,
	    sizeof(su)), ADDR_OTHER);
	ck_assert_int_eq(addr_kind_of(NULL, 0), ADDR_OTHER);
	/* Only link-local and metadata are internal. */
	ck_assert_int_eq(addr_internal(ADDR_OTHER), 0);
	ck_assert_int_eq(addr_internal(ADDR_LOOPBACK), 0);
	ck_assert_int_ne(addr_internal(ADDR_LINK_LOCAL), 0);
	ck_assert_int_ne(addr_internal(ADDR_METADATA), 0);
	ck_assert_ptr_nonnull(strstr(addr_kind_name(ADDR_LINK_LOCAL),
	    "169.254.0.0/16"));
	ck_assert_ptr_nonnull(strstr(addr_kind_name(ADDR_METADATA),
	    "metadata"));
	ck_assert_ptr_nonnull(addr_kind_name((enum addr_kind)99));
}
END_TEST

static Suite *
util_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("util");

	tc = tcase_create("strtonum");
	tcase_add_loop_test(tc, test_strtonum, 0, (int)NELEM(numcases));
	tcase_add_test(tc, test_strtonum_null_and_reuse);
	suite_add_tcase(s, tc);

	tc = tcase_create("time");
	tcase_add_loop_test(tc, test_duration, 0, (int)NELEM(durcases));
	tcase_add_loop_test(tc, test_time, 0, (int)NELEM(timecases));
	tcase_add_test(tc, test_time_null);
	tcase_add_loop_test(tc, test_datetime, 0, (int)NELEM(dtcases));
	tcase_add_loop_test(tc, test_epoch, 0, (int)NELEM(epochcases));
	tcase_add_loop_test(tc, test_time_edges, 0, (int)NELEM(timeedges));
	tcase_add_loop_test(tc, test_since, 0, (int)NELEM(sincecases));
	tcase_add_test(tc, test_times_null);
	suite_add_tcase(s, tc);

	tc = tcase_create("validate");
	tcase_add_loop_test(tc, test_utf8, 0, (int)NELEM(utf8cases));
	tcase_add_loop_test(tc, test_id, 0, (int)NELEM(idcases));
	tcase_add_test(tc, test_id_length);
	tcase_add_loop_test(tc, test_name, 0, (int)NELEM(namecases));
	tcase_add_loop_test(tc, test_action, 0, (int)NELEM(actioncases));
	tcase_add_test(tc, test_name_length);
	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_text);
	tcase_add_test(tc, test_text_header);
	tcase_add_test(tc, test_line);
	tcase_add_test(tc, test_eqi);
	tcase_add_test(tc, test_now);
	suite_add_tcase(s, tc);

	tc = tcase_create("result");
	tcase_add_loop_test(tc, test_result, 0, (int)NELEM(rescases));
	tcase_add_test(tc, test_result_all);
	suite_add_tcase(s, tc);

	tc = tcase_create("obs");
	tcase_add_test(tc, test_stage_roundtrip);
	tcase_add_test(tc, test_stage_order);
	tcase_add_test(tc, test_stage_parse);
	tcase_add_test(tc, test_status_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("url_redact");
	tcase_add_loop_test(tc, test_url_redact, 0, (int)NELEM(redcases));
	tcase_add_test(tc, test_url_redact_short);
	suite_add_tcase(s, tc);

	tc = tcase_create("addr");
	tcase_add_loop_test(tc, test_addr_url, 0, (int)NELEM(urlcases));
	tcase_add_test(tc, test_addr_url_bad);
	tcase_add_loop_test(tc, test_addr_sockaddr, 0, (int)NELEM(sacases));
	tcase_add_test(tc, test_addr_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("settings");
	tcase_add_test(tc, test_settings_location);
	tcase_add_test(tc, test_settings_planted);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	if (util_init() != 0)
		return 1;
	return test_run_pure(util_suite);
}
