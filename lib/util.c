/*
 * util.c: start-up, bounded parsing, validation and the clock.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sodium.h>

#include "json.h"
#include "util.h"

int
util_init(void)
{
	json_init();
	return sodium_init() < 0 ? -1 : 0;
}

long long
util_strtonum(const char *s, long long min, long long max, const char **errstr)
{
	long long	 v = 0;
	int		 neg = 0, digit;

	*errstr = "invalid";
	if (s == NULL || min > max)
		return 0;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (*s == '\0')
		return 0;
	/* Accumulate negatively so that LLONG_MIN parses too. */
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		digit = *s - '0';
		if (v < (LLONG_MIN + digit) / 10) {
			*errstr = neg ? "too small" : "too large";
			return 0;
		}
		v = v * 10 - digit;
	}
	if (!neg) {
		if (v == LLONG_MIN) {
			*errstr = "too large";
			return 0;
		}
		v = -v;
	}
	if (v < min) {
		*errstr = "too small";
		return 0;
	}
	if (v > max) {
		*errstr = "too large";
		return 0;
	}
	*errstr = NULL;
	return v;
}

int
util_valid_utf8(const char *str, size_t len)
{
	const unsigned char	*s = (const unsigned char *)str;
	size_t			 i = 0, n, k;
	uint32_t		 cp, min;

	while (i < len) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((s[i] & 0xe0) == 0xc0) {
			n = 1; cp = s[i] & 0x1f; min = 0x80;
		} else if ((s[i] & 0xf0) == 0xe0) {
			n = 2; cp = s[i] & 0x0f; min = 0x800;
		} else if ((s[i] & 0xf8) == 0xf0) {
			n = 3; cp = s[i] & 0x07; min = 0x10000;
		} else
			return 0;
		if (len - i - 1 < n)
			return 0;
		for (k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += n + 1;
	}
	return 1;
}

int
util_valid_text(const char *s, size_t max)
{
	size_t	len;

	if (s == NULL)
		return 0;
	len = strnlen(s, max + 1);
	return len <= max && util_valid_utf8(s, len);
}

int
util_valid_line(const char *s, size_t max)
{
	size_t	i, len;

	if (s == NULL || (len = strnlen(s, max + 1)) > max)
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return util_valid_utf8(s, len);
}

int
util_valid_id(const char *s, size_t max)
{
	return s != NULL && *s != '\0' && util_valid_line(s, max);
}

int64_t
util_now(void)
{
	return (int64_t)time(NULL);
}

int64_t
util_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
util_eqi(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}
