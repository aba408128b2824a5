/*
 * base/text.c: the rules for text that enters from outside and leaves into
 * logs, headers and terminals.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/text.h"

int
text_valid_utf8(const char *str, size_t len)
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
text_valid(const char *s, size_t max)
{
	size_t	len;

	if (s == NULL)
		return 0;
	len = strnlen(s, max + 1);
	return len <= max && text_valid_utf8(s, len);
}

/*
 * Decodes the code point at s[*i] (valid UTF-8 assumed) and advances *i.
 */
static uint32_t
next_cp(const unsigned char *s, size_t *i)
{
	uint32_t	cp = s[*i];
	size_t		n = 0, k;

	if (cp >= 0xf0) {
		n = 3; cp &= 0x07;
	} else if (cp >= 0xe0) {
		n = 2; cp &= 0x0f;
	} else if (cp >= 0xc0) {
		n = 1; cp &= 0x1f;
	}
	for (k = 1; k <= n; k++)
		cp = (cp << 6) | (s[*i + k] & 0x3f);
	*i += n + 1;
	return cp;
}

/* Control, invisible format and bidirectional characters. */
static int
hidden_cp(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c ||
	    (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
	    (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff;
}

int
text_valid_line(const char *s, size_t max)
{
	size_t	i = 0, len;

	if (s == NULL || (len = strnlen(s, max + 1)) > max ||
	    !text_valid_utf8(s, len))
		return 0;
	while (i < len)
		if (hidden_cp(next_cp((const unsigned char *)s, &i)))
			return 0;
	return 1;
}

void
text_blank_hidden(char *s)
{
	size_t	i = 0, j = 0, at, len = strlen(s);

	while (i < len) {
		at = i;
		if (hidden_cp(next_cp((const unsigned char *)s, &i)))
			s[j++] = ' ';
		else
			while (at < i)
				s[j++] = s[at++];
	}
	s[j] = '\0';
}

int
text_valid_id(const char *s, size_t max)
{
	return s != NULL && *s != '\0' && text_valid_line(s, max);
}

static int
name_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

/* The length of the name at s, ending at stop or the NUL; 0 if invalid. */
static size_t
name_len(const char *s, int stop)
{
	size_t	i;

	if (s == NULL || !name_char((unsigned char)s[0]) || s[0] == '.' ||
	    s[0] == '_' || s[0] == '-')
		return 0;
	for (i = 0; i <= HB_ID_MAX; i++) {
		if (s[i] == '\0' || s[i] == stop)
			return i;
		if (!name_char((unsigned char)s[i]))
			return 0;
	}
	return 0;
}

int
text_valid_name(const char *s)
{
	size_t	n = name_len(s, '\0');

	return n > 0 && s[n] == '\0';
}

/* tenant:attempt:step, three names. */
static int
job_action(const char *s)
{
	size_t	n;
	int	part;

	for (part = 0; part < 3; part++) {
		if ((n = name_len(s, part < 2 ? ':' : '\0')) == 0)
			return 0;
		if (s[n] != (part < 2 ? ':' : '\0'))
			return 0;
		s += n + 1;
	}
	return 1;
}

/*
 * tenant:subject:version:step: a subject's
 * (hookbox(7), Versioned events).  The subject is its provider's id and
 * may hold ':' itself; the tenant and the step are names and the version
 * digits, which hold none, so it is read from both ends and has one
 * reading.  "subject:version" is the action's attempt, at most HB_ID_MAX
 * bytes.
 */
static int
subject_action(const char *s)
{
	const char	*subj, *last, *v;
	char		 buf[HB_ID_MAX + 1];
	size_t		 n;

	if ((n = name_len(s, ':')) == 0 || s[n] != ':')
		return 0;
	subj = s + n + 1;
	if ((last = strrchr(subj, ':')) == NULL || !text_valid_name(last + 1))
		return 0;
	for (v = last; v > subj && v[-1] >= '0' && v[-1] <= '9'; v--)
		;
	if (v == last || last - v > 16 || v - subj < 2 || v[-1] != ':' ||
	    (size_t)(last - subj) > HB_ID_MAX)
		return 0;
	n = (size_t)(v - 1 - subj);
	memcpy(buf, subj, n);
	buf[n] = '\0';
	return text_valid_id(buf, HB_ID_MAX);
}

int
text_valid_action(const char *s)
{
	return s != NULL && (job_action(s) || subject_action(s));
}

char *
text_escape(const char *s, size_t n, char *buf, size_t len)
{
	static const char	hex[] = "0123456789abcdef";
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i, o = 0, w;

	if (len == 0)
		return buf;
	for (i = 0; s != NULL && i < n && p[i] != '\0'; i++) {
		w = p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' &&
		    p[i] != '\\' ? 1 : 4;
		if (o + w + 4 > len) {
			/* Room for "..." and the NUL is kept back. */
			if (len >= 4) {
				memcpy(buf + o, "...", 3);
				o += 3;
			}
			break;
		}
		if (w == 1)
			buf[o++] = (char)p[i];
		else {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[p[i] >> 4];
			buf[o++] = hex[p[i] & 0xf];
		}
	}
	buf[o] = '\0';
	return buf;
}

/* RFC 9110's tchar: the characters of a header name. */
static int
tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' &&
	    strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

int
text_valid_header(const char *s)
{
	size_t	i;

	for (i = 0; s[i] != '\0'; i++)
		if (i == HB_ID_MAX || !tchar((unsigned char)s[i]))
			return 0;
	return i > 0;
}

void
text_say(char *why, size_t whylen, const char *fmt, ...)
{
	va_list	ap;

	if (why == NULL || whylen == 0)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

int
text_header_lower(char *dst, const char *s)
{
	size_t	i;

	if (!text_valid_header(s))
		return -1;
	for (i = 0; s[i] != '\0'; i++)
		dst[i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') :
		    s[i];
	dst[i] = '\0';
	return 0;
}

int
text_has_ctl(const char *s, size_t len)
{
	size_t		i;
	unsigned char	c;

	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return 1;
	}
	return 0;
}

int
text_decimal(const char *s, size_t len, int64_t *out)
{
	int64_t	v = 0;
	int64_t	d;
	size_t	i;

	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		d = s[i] - '0';
		if (v > (INT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int
text_eqi(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

int
text_put(char *buf, size_t len, size_t *o, const char *s, size_t n)
{
	if (n >= len - *o)
		return -1;
	memcpy(buf + *o, s, n);
	*o += n;
	buf[*o] = '\0';
	return 0;
}

/* Non-zero when a query parameter's name (n bytes) names a credential. */
static int
secret_name(const char *s, size_t n)
{
	static const char *const words[] = { "token", "key", "secret",
	    "pass", "sig", "auth" };
	size_t	i, j, w;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		w = strlen(words[i]);
		for (j = 0; j + w <= n; j++)
			if (strncasecmp(s + j, words[i], w) == 0)
				return 1;
	}
	return 0;
}

int
text_url_redact(const char *url, char *buf, size_t len)
{
	const char	*p, *auth, *end, *at = NULL, *q, *eq, *amp;
	size_t		 o = 0;

	if (len == 0)
		return -1;
	buf[0] = '\0';
	auth = (p = strstr(url, "://")) != NULL ? p + 3 : url;
	end = auth + strcspn(auth, "/?#");
	for (p = auth; p < end; p++)
		if (*p == '@')
			at = p;
	if (text_put(buf, len, &o, url, (size_t)(auth - url)) != 0 ||
	    (at != NULL && text_put(buf, len, &o, "***", 3) != 0) ||
	    text_put(buf, len, &o, at != NULL ? at : auth,
	    (size_t)(end - (at != NULL ? at : auth))) != 0)
		goto fail;
	p = end + strcspn(end, "?#");	/* the path, as is */
	if (text_put(buf, len, &o, end, (size_t)(p - end)) != 0)
		goto fail;
	if (*p == '?') {
		if (text_put(buf, len, &o, "?", 1) != 0)
			goto fail;
		end = p + 1 + strcspn(p + 1, "#");
		for (q = p + 1; q < end; q = amp + (amp < end)) {
			if ((amp = q + strcspn(q, "&;#")) > end)
				amp = end;
			if ((eq = memchr(q, '=', (size_t)(amp - q))) != NULL &&
			    eq + 1 < amp && secret_name(q, (size_t)(eq - q))) {
				if (text_put(buf, len, &o, q,
				    (size_t)(eq + 1 - q)) != 0 ||
				    text_put(buf, len, &o, "***", 3) != 0)
					goto fail;
			} else if (text_put(buf, len, &o, q,
			    (size_t)(amp - q)) != 0)
				goto fail;
			if (amp < end && text_put(buf, len, &o, amp, 1) != 0)
				goto fail;
		}
		p = end;
	}
	if (text_put(buf, len, &o, p, strlen(p)) != 0)
		goto fail;
	return 0;
fail:
	buf[0] = '\0';
	return -1;
}
