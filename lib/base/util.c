/*
 * base/util.c: start-up, bounded parsing, times and the clock.
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

#include "base/json.h"
#include "base/util.h"

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

void
util_give_heap_back(void)
{
#ifdef M_TRIM_THRESHOLD
	(void)malloc_trim(0);
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

void
util_sleep_ms(int64_t ms)
{
	struct timespec	ts;

	if (ms < 0)
		ms = 0;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	(void)nanosleep(&ts, NULL);
}

/* ---- times -------------------------------------------------------- */

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Exactly n digits at s (a NUL among them is not one), into *out. */
static int
digits(const char *s, int n, int *out)
{
	int	i, v = 0;

	for (i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 1;
}

/* The days in month m (1-12) of year y, proleptic Gregorian. */
static int
month_days(int y, int m)
{
	static const int	days[12] = { 31, 28, 31, 30, 31, 30, 31, 31,
	    30, 31, 30, 31 };

	if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
		return 29;
	return days[m - 1];
}

/*
 * Days from 1970-01-01 to y-m-d, proleptic Gregorian (Hinnant's
 * algorithm), for m 1-12, d within its month and any y.
 */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t	era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/*
 * A fraction of a second after its '.': one digit at least, the first
 * three kept as milliseconds, the others dropped.  Returns the end, or
 * NULL.
 */
static const char *
fraction(const char *s, int *ms)
{
	int	k;

	*ms = 0;
	if (!is_digit(*s))
		return NULL;
	for (k = 0; is_digit(*s); s++, k++)
		if (k < 3)
			*ms = *ms * 10 + (*s - '0');
	for (; k < 3; k++)
		*ms *= 10;
	return s;
}

enum util_time
util_parse_datetime(const char *s, unsigned forms, int64_t *ms)
{
	int	y, mo, d, h = 0, mi = 0, sec = 0, frac = 0;
	int	sign = 0, oh = 0, om = 0, rfc = (forms & UTIL_DT_RFC3339) != 0;
	int64_t	t;

	if (s == NULL || !digits(s, 4, &y) || s[4] != '-' ||
	    !digits(s + 5, 2, &mo) || s[7] != '-' || !digits(s + 8, 2, &d))
		return UTIL_TIME_INVALID;
	s += 10;
	if (*s != '\0' || !(forms & UTIL_DT_DATE)) {
		if ((*s != 'T' && (!rfc || *s != 't')) ||
		    !digits(s + 1, 2, &h) || s[3] != ':' ||
		    !digits(s + 4, 2, &mi) || s[6] != ':' ||
		    !digits(s + 7, 2, &sec))
			return UTIL_TIME_INVALID;
		s += 9;
		if (rfc && *s == '.' && (s = fraction(s + 1, &frac)) == NULL)
			return UTIL_TIME_INVALID;
		if (*s == 'Z' || (rfc && *s == 'z'))
			s++;
		else if (rfc && (*s == '+' || *s == '-')) {
			sign = *s == '+' ? 1 : -1;
			if (!digits(s + 1, 2, &oh) || s[3] != ':' ||
			    !digits(s + 4, 2, &om))
				return UTIL_TIME_INVALID;
			s += 6;
		} else
			return UTIL_TIME_INVALID;
	}
	if (*s != '\0' || mo < 1 || mo > 12 || d < 1 ||
	    d > month_days(y, mo) ||
	    h > 23 || mi > 59 || sec > 59 || oh > 23 || om > 59)
		return UTIL_TIME_INVALID;
	t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
	    sign * (oh * 3600 + om * 60);
	if (t < 0 || t >= UTIL_TIME_END_S)
		return UTIL_TIME_RANGE;
	*ms = t * 1000 + frac;
	return UTIL_TIME_OK;
}

enum util_time
util_parse_epoch(const char *s, int64_t *ms)
{
	int64_t	sec = 0;
	int	frac = 0;

	if (s == NULL || !is_digit(*s))
		return UTIL_TIME_INVALID;
	/* Once at the end of range it stays there: no overflow. */
	for (; is_digit(*s); s++)
		if (sec < UTIL_TIME_END_S)
			sec = sec * 10 + (*s - '0');
	if (*s == '.' && (s = fraction(s + 1, &frac)) == NULL)
		return UTIL_TIME_INVALID;
	if (*s != '\0')
		return UTIL_TIME_INVALID;
	if (sec >= UTIL_TIME_END_S)
		return UTIL_TIME_RANGE;
	*ms = sec * 1000 + frac;
	return UTIL_TIME_OK;
}

/* The seconds in a duration's unit, s, m, h or d; 0 for any other. */
static int64_t
unit_seconds(char c)
{
	switch (c) {
	case 's':
		return 1;
	case 'm':
		return 60;
	case 'h':
		return 3600;
	case 'd':
		return 86400;
	}
	return 0;
}

int
util_parse_duration(const char *s, int64_t *secs)
{
	char		 num[24];
	size_t		 n;
	long long	 v;
	int64_t		 unit = 1;

	if (s == NULL || (n = strspn(s, "0123456789")) == 0 ||
	    n >= sizeof(num))
		return -1;
	if (s[n] != '\0' &&
	    ((unit = unit_seconds(s[n])) == 0 || s[n + 1] != '\0'))
		return -1;
	memcpy(num, s, n);
	num[n] = '\0';
	if (util_parse_num(num, 0, UTIL_DURATION_MAX / unit, &v) !=
	    UTIL_NUM_OK)
		return -1;
	*secs = (int64_t)(v * unit);
	return 0;
}

int
util_parse_time(const char *s, int64_t now, int64_t *out)
{
	size_t		 len;
	long long	 v;
	int64_t		 d, ms;

	if (s == NULL)
		return -1;
	if (s[0] == '+') {
		if (util_parse_duration(s + 1, &d) != 0)
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
	if (util_parse_datetime(s, UTIL_DT_DATE, &ms) != UTIL_TIME_OK)
		return -1;
	*out = ms / 1000;
	return 0;
}

int
util_parse_since(const char *s, int64_t now_ms, int64_t *out)
{
	char		 num[16];
	size_t		 len;
	long long	 v;
	int64_t		 unit, ms;

	if (s == NULL)
		return -1;
	len = strlen(s);
	if (len > 1 && len < sizeof(num) &&
	    (unit = unit_seconds(s[len - 1])) != 0) {
		memcpy(num, s, len - 1);
		num[len - 1] = '\0';
		if (util_parse_num(num, 0, UTIL_SINCE_MAX, &v) != UTIL_NUM_OK)
			return -1;
		*out = now_ms - (int64_t)v * unit * 1000;
		return 0;
	}
	if (util_parse_datetime(s, UTIL_DT_DATE, &ms) !=
	    UTIL_TIME_OK)
		return -1;
	*out = ms;
	return 0;
}
