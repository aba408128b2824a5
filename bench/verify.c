/*
 * bench/verify.c: the verification alone, built-in against declared.
 *
 *	verify BODY_FILE ITERATIONS
 *
 * Signs the body as Mux does (t=,v1= over {t}.{body}, HMAC-SHA256), then
 * verifies it ITERATIONS times with auth_verify_tsig() (the built-in
 * hmac) and with scheme_verify() of the same scheme declared, in turns of
 * 1000 so that the machine's drift falls on both, and prints the
 * nanoseconds each took per verification and declared / built-in.
 * bench/scheme.sh runs it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cJSON.h>

#include "base/util.h"
#include "provider/auth.h"
#include "provider/scheme.h"

static const char	decl[] =
    "{\"header\":\"Mux-Signature\",\"parts\":{\"separator\":\",\","
    "\"assign\":\"=\",\"signature\":\"v1\"},\"timestamp\":{\"part\":\"t\"},"
    "\"signed\":\"{timestamp}.{body}\",\"algorithm\":\"hmac-sha256\","
    "\"encoding\":\"hex\"}";

static char	header[AUTH_HEADER_MAX + 1];

static const char *
hdr(const void *arg, const char *name)
{
	(void)arg;
	return strcasecmp(name, "mux-signature") == 0 ? header : NULL;
}

static double
now_ns(void)
{
	struct timespec	ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	struct auth_secret	 sec;
	struct scheme_req	 r;
	struct scheme		*s;
	cJSON			*v;
	FILE			*f;
	char			*body, why[256];
	double			 t0, tb = 0, td = 0;
	long			 n, i, k, len;
	int64_t			 now;
	int			 nomem;

	if (argc != 3 || (n = strtol(argv[2], NULL, 10)) < 1000) {
		fprintf(stderr, "usage: verify BODY_FILE ITERATIONS\n");
		return 2;
	}
	if (util_init() != 0 || (f = fopen(argv[1], "rb")) == NULL ||
	    fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
	    (body = malloc((size_t)len + 1)) == NULL)
		return 1;
	rewind(f);
	if (fread(body, 1, (size_t)len, f) != (size_t)len)
		return 1;
	(void)fclose(f);
	if ((v = cJSON_Parse(decl)) == NULL ||
	    (s = scheme_parse(v, why, sizeof(why), &nomem)) == NULL)
		return 1;
	cJSON_Delete(v);
	sec.key = (const unsigned char *)"bench-secret-of-sixteen-bytes";
	sec.keylen = strlen((const char *)sec.key);
	sec.expires_at = 0;
	now = util_now();
	if (auth_sign_tsig(&sec, 1, now, now, (const unsigned char *)body,
	    (size_t)len, header, sizeof(header)) != 0)
		return 1;
	memset(&r, 0, sizeof(r));
	r.header = hdr;
	r.body = (const unsigned char *)body;
	r.bodylen = (size_t)len;
	r.now_ms = now * 1000;
	for (i = 0; i < n; i += 1000) {
		t0 = now_ns();
		for (k = 0; k < 1000; k++)
			if (auth_verify_tsig(header, (const unsigned char *)body,
			    (size_t)len, &sec, 1, now, 300) != AUTH_OK)
				return 1;
		tb += now_ns() - t0;
		t0 = now_ns();
		for (k = 0; k < 1000; k++)
			if (scheme_verify(s, &r, &sec, 1, 300) != AUTH_OK)
				return 1;
		td += now_ns() - t0;
	}
	n = i;
	printf("verification of a %ld-byte body, %ld times each: built-in"
	    " %.0f ns, declared %.0f ns; declared / built-in %.3f\n", len, n,
	    tb / (double)n, td / (double)n, td / tb);
	scheme_free(s);
	free(body);
	return 0;
}
