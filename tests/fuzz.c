/*
 * fuzz.c: libFuzzer targets, one per parser, chosen at compile time:
 *   -DFUZZ_CALLBACK  tornado_parse_callback
 *   -DFUZZ_EVENT     tornado_parse_event
 *   -DFUZZ_STATUS    tornado_parse_status
 *   -DFUZZ_TSIG      auth_verify_tsig (the "t=..,v1=.." header parser)
 *   -DFUZZ_SW        auth_verify_stdwebhooks (its three header values)
 * Beyond not crashing (ASan, UBSan), each checks the parser's promises:
 * whatever it accepts is typed, bounded and valid UTF-8.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "tornado.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_text(const char *s, size_t cap)
{
	size_t	n = strnlen(s, cap);

	if (n >= cap || !util_valid_utf8(s, n))
		abort();
}

#if defined(FUZZ_CALLBACK) || defined(FUZZ_EVENT) || defined(FUZZ_STATUS)
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct obs		o;
	char			why[128];
	enum tornado_err	rc;

#if defined(FUZZ_CALLBACK)
	rc = tornado_parse_callback((const char *)data, len, &o, why,
	    sizeof(why));
#elif defined(FUZZ_EVENT)
	rc = tornado_parse_event((const char *)data, len, &o, why, sizeof(why));
#else
	rc = tornado_parse_status((const char *)data, len, &o, why,
	    sizeof(why));
#endif
	if (rc != TORNADO_OK)
		return 0;
	if (o.event == OBS_EV_JOB && !util_valid_id(o.job_id, HB_ID_MAX))
		abort();
	if ((unsigned)o.stage > OBS_STAGE_COMPLETED ||
	    (unsigned)o.status > OBS_ST_WARNING)
		abort();
	check_text(o.type, sizeof(o.type));
	check_text(o.delivery_id, sizeof(o.delivery_id));
	check_text(o.file_key, sizeof(o.file_key));
	check_text(o.file_url, sizeof(o.file_url));
	check_text(o.error, sizeof(o.error));
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
	    1700000000, 300);
#else
	/* Three NUL-separated values: id, timestamp, signature. */
	a = s + strlen(s) + (strlen(s) < len ? 1 : 0);
	b = a + strlen(a) + (a + strlen(a) < s + len ? 1 : 0);
	rc = auth_verify_stdwebhooks(s, a, b, (const unsigned char *)"{}", 2,
	    &sec, 1, 1700000000, 300);
#endif
	/* Random bytes never make a valid MAC. */
	if (rc == AUTH_OK || (unsigned)rc > AUTH_ERROR)
		abort();
	free(s);
	return 0;
}
#else
#error "define one FUZZ_* target"
#endif
