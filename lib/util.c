/*
 * util.c: start-up, bounded parsing, validation and the clock.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <malloc.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "json.h"
#include "util.h"

int
util_init(void)
{
	json_init();
	return sodium_init() < 0 ? -1 : 0;
}

void
util_keep_heap(void)
{
	long	cores;

#ifdef M_TRIM_THRESHOLD
	(void)mallopt(M_TRIM_THRESHOLD, 8 * 1024 * 1024);
#endif
#ifdef M_ARENA_MAX
	if ((cores = sysconf(_SC_NPROCESSORS_ONLN)) < 1)
		cores = 1;
	(void)mallopt(M_ARENA_MAX, (int)(cores < 8 ? cores : 8));
#else
	(void)cores;
#endif
}

enum util_num
util_parse_num(const char *s, long long min, long long max, long long *out)
{
	long long	 v = 0;
	int		 neg = 0, digit;

	if (s == NULL || min > max)
		return UTIL_NUM_INVALID;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (*s == '\0')
		return UTIL_NUM_INVALID;
	/* Accumulate negatively so that LLONG_MIN parses too. */
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return UTIL_NUM_INVALID;
		digit = *s - '0';
		if (v < (LLONG_MIN + digit) / 10) {
			/* Still a number: say which way it is out of range. */
			while (s[1] >= '0' && s[1] <= '9')
				s++;
			if (s[1] != '\0')
				return UTIL_NUM_INVALID;
			return neg ? UTIL_NUM_SMALL : UTIL_NUM_LARGE;
		}
		v = v * 10 - digit;
	}
	if (!neg) {
		if (v == LLONG_MIN)
			return UTIL_NUM_LARGE;
		v = -v;
	}
	if (v < min)
		return UTIL_NUM_SMALL;
	if (v > max)
		return UTIL_NUM_LARGE;
	*out = v;
	return UTIL_NUM_OK;
}

long long
util_strtonum(const char *s, long long min, long long max, const char **errstr)
{
	static const char *const words[] = {
		[UTIL_NUM_OK] = NULL,
		[UTIL_NUM_INVALID] = "invalid",
		[UTIL_NUM_SMALL] = "too small",
		[UTIL_NUM_LARGE] = "too large",
	};
	long long	v = 0;

	*errstr = words[util_parse_num(s, min, max, &v)];
	return *errstr == NULL ? v : 0;
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

/* "90s", "90m", "24h", "30d" or "90" (seconds) into *secs; 0 or -1. */
static int
parse_duration(const char *s, int64_t *secs)
{
	char		 num[24];
	size_t		 n;
	long long	 v, unit = 1;

	if (s == NULL || (n = strspn(s, "0123456789")) == 0 ||
	    n >= sizeof(num))
		return -1;
	switch (s[n]) {
	case '\0':
	case 's':
		break;
	case 'm':
		unit = 60;
		break;
	case 'h':
		unit = 3600;
		break;
	case 'd':
		unit = 86400;
		break;
	default:
		return -1;
	}
	if (s[n] != '\0' && s[n + 1] != '\0')
		return -1;
	memcpy(num, s, n);
	num[n] = '\0';
	if (util_parse_num(num, 0, UTIL_DURATION_MAX / unit, &v) !=
	    UTIL_NUM_OK)
		return -1;
	*secs = (int64_t)(v * unit);
	return 0;
}

/* n digits at s into [min, max]; -1 for anything else. */
static int
fixed_digits(const char *s, size_t n, int min, int max, int *out)
{
	size_t	i;
	int	v = 0;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t
days_from_civil(int y, int m, int d)
{
	int64_t	era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int
util_parse_time(const char *s, int64_t now, int64_t *out)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };
	size_t		 len;
	long long	 v;
	int64_t		 d;
	int		 y, m, day, hh = 0, mm = 0, ss = 0, leap;

	if (s == NULL)
		return -1;
	if (s[0] == '+') {
		if (parse_duration(s + 1, &d) != 0)
			return -1;
		*out = now + d;
		return 0;
	}
	len = strlen(s);
	if (len > 0 && strspn(s, "0123456789") == len) {
		if (util_parse_num(s, 0, INT64_MAX / 1000, &v) != UTIL_NUM_OK)
			return -1;
		*out = (int64_t)v;
		return 0;
	}
	/* YYYY-MM-DD, then optionally THH:MM:SSZ. */
	if ((len != 10 && len != 20) || s[4] != '-' || s[7] != '-' ||
	    fixed_digits(s, 4, 1970, 9999, &y) != 0 ||
	    fixed_digits(s + 5, 2, 1, 12, &m) != 0 ||
	    fixed_digits(s + 8, 2, 1, 31, &day) != 0)
		return -1;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (day > mdays[m - 1] + (m == 2 && leap))
		return -1;
	if (len == 20 && (s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
	    s[19] != 'Z' || fixed_digits(s + 11, 2, 0, 23, &hh) != 0 ||
	    fixed_digits(s + 14, 2, 0, 59, &mm) != 0 ||
	    fixed_digits(s + 17, 2, 0, 59, &ss) != 0))
		return -1;
	*out = days_from_civil(y, m, day) * 86400 + hh * 3600 + mm * 60 + ss;
	return 0;
}
