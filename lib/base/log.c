/*
 * base/log.c: key=value lines (see base/log.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

static int	log_fd = 2;

int
log_set_fd(int fd)
{
	int	old = log_fd;

	log_fd = fd;
	return old;
}

/* "info", "warn", "error". */
static const char *
log_level_name(enum log_level lv)
{
	switch (lv) {
	case LOG_LV_INFO:
		return "info";
	case LOG_LV_WARN:
		return "warn";
	case LOG_LV_ERROR:
		return "error";
	}
	return "info";
}

/* Room kept at the end for " truncated=1\n". */
#define LOG_TAIL	16

/* Appends n bytes when they fit before the tail; 0, or -1. */
static int
put(struct log_line *l, const char *s, size_t n)
{
	if (l->full || l->len + n > sizeof(l->buf) - LOG_TAIL) {
		l->full = 1;
		return -1;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
	return 0;
}

void
log_begin(struct log_line *l, enum log_level lv, const char *event)
{
	struct timespec	ts;
	struct tm	tm;
	char		t[40];
	int		n;

	l->len = 0;
	l->full = 0;
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	if (gmtime_r(&ts.tv_sec, &tm) == NULL)
		memset(&tm, 0, sizeof(tm));
	n = snprintf(t, sizeof(t), "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000L);
	if (n > 0 && (size_t)n < sizeof(t))
		(void)put(l, t, (size_t)n);
	(void)put(l, " level=", 7);
	(void)put(l, log_level_name(lv), strlen(log_level_name(lv)));
	(void)put(l, " event=", 7);
	(void)put(l, event, strlen(event));
}

/* A bare value: printable ASCII, no space, '"', '=' or '\'. */
static int
bare(const unsigned char *s, size_t n)
{
	size_t	i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f || s[i] == '"' ||
		    s[i] == '=' || s[i] == '\\')
			return 0;
	return 1;
}

/* Adds key=value from the first n bytes of val (which may hold a NUL). */
static void
log_strn(struct log_line *l, const char *key, const char *val, size_t n)
{
	const unsigned char	*s = (const unsigned char *)val;
	char			 v[LOG_VALUE_MAX * 4 + 8], *p = v;
	size_t			 i, cut = n > LOG_VALUE_MAX ? LOG_VALUE_MAX : n;

	if (val == NULL || l->full)
		return;
	if (cut == n && bare(s, cut)) {
		memcpy(p, val, cut);
		p += cut;
	} else {
		*p++ = '"';
		for (i = 0; i < cut; i++) {
			if (s[i] == '"' || s[i] == '\\') {
				*p++ = '\\';
				*p++ = (char)s[i];
			} else if (s[i] == '\n') {
				*p++ = '\\';
				*p++ = 'n';
			} else if (s[i] == '\r') {
				*p++ = '\\';
				*p++ = 'r';
			} else if (s[i] == '\t') {
				*p++ = '\\';
				*p++ = 't';
			} else if (s[i] < 0x20 || s[i] >= 0x7f) {
				(void)snprintf(p, 5, "\\x%02x", s[i]);
				p += 4;
			} else
				*p++ = (char)s[i];
		}
		if (cut < n) {
			memcpy(p, "...", 3);
			p += 3;
		}
		*p++ = '"';
	}
	i = l->len;
	if (put(l, " ", 1) != 0 || put(l, key, strlen(key)) != 0 ||
	    put(l, "=", 1) != 0 || put(l, v, (size_t)(p - v)) != 0)
		l->len = i;	/* no half key */
}

void
log_str(struct log_line *l, const char *key, const char *val)
{
	if (val != NULL)
		log_strn(l, key, val, strlen(val));
}

void
log_int(struct log_line *l, const char *key, long long val)
{
	char	v[24];
	int	n;

	n = snprintf(v, sizeof(v), "%lld", val);
	if (n > 0 && (size_t)n < sizeof(v))
		log_strn(l, key, v, (size_t)n);
}

void
log_fmt(struct log_line *l, const char *key, const char *fmt, ...)
{
	char	v[LOG_VALUE_MAX + 2];
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* Cut by vsnprintf(): still longer than LOG_VALUE_MAX, so marked. */
	log_strn(l, key, v, (size_t)n < sizeof(v) ? (size_t)n :
	    sizeof(v) - 1);
}

void
log_end(struct log_line *l)
{
	ssize_t	w;

	if (l->full && l->len + 12 < sizeof(l->buf)) {
		memcpy(l->buf + l->len, " truncated=1", 12);
		l->len += 12;
	}
	l->buf[l->len++] = '\n';
	do
		w = write(log_fd, l->buf, l->len);
	while (w < 0 && errno == EINTR);
}

void
log_event(enum log_level lv, const char *event, ...)
{
	struct log_line	 l;
	const char	*k, *v;
	va_list		 ap;

	log_begin(&l, lv, event);
	va_start(ap, event);
	while ((k = va_arg(ap, const char *)) != NULL) {
		v = va_arg(ap, const char *);
		log_str(&l, k, v);
	}
	va_end(ap);
	log_end(&l);
}
