/*
 * provider/form.c: application/x-www-form-urlencoded bodies read and
 * written (provider/form.h).
 */
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "base/text.h"
#include "provider/form.h"

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decodes the len bytes at s into d ('+' a space, %XX a byte) and ends it
 * with a NUL; returns the bytes written, or -1 for a '%' not followed by
 * two hex digits, or for %00.
 */
static long
decode(const char *s, size_t len, char *d)
{
	size_t	i, n = 0;
	int	hi, lo;

	for (i = 0; i < len; i++) {
		if (s[i] == '+')
			d[n++] = ' ';
		else if (s[i] != '%')
			d[n++] = s[i];
		else {
			/* %00 would cut the name or value it is in. */
			if (i + 2 >= len ||
			    (hi = hexval(s[i + 1])) < 0 ||
			    (lo = hexval(s[i + 2])) < 0 || (hi | lo) == 0)
				return -1;
			d[n++] = (char)(hi << 4 | lo);
			i += 2;
		}
	}
	d[n] = '\0';
	return (long)n;
}

/* A name that may be shown in a message: ASCII letters, digits, "_-.". */
static int
plain(const char *s)
{
	size_t	n = strlen(s);

	return n > 0 && n <= 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == n;
}

enum form_err
form_parse(const char *b, size_t len, struct form *out, char *why,
    size_t whylen)
{
	const char	*p, *end = b + len, *amp, *eq;
	char		*d;
	size_t		 i, j, nf = 1;
	long		 k;

	memset(out, 0, sizeof(*out));
	if (why != NULL && whylen > 0)
		why[0] = '\0';
	for (i = 0; i < len; i++) {
		if (b[i] <= ' ' || b[i] >= 0x7f) {
			text_say(why, whylen, "%s", "body: a form holds a byte that"
			    " is not printable ASCII");
			return FORM_INVALID;
		}
		nf += b[i] == '&';
	}
	if (len == 0 || nf > FORM_FIELDS_MAX) {
		text_say(why, whylen, "%s", len == 0 ? "body: an empty form" :
		    "body: a form of more than 256 fields");
		return FORM_INVALID;
	}
	/* Decoded, every field fits in its own bytes and two NULs. */
	if (fault_fire(FAULT_ALLOC) ||
	    (out->f = calloc(nf, sizeof(*out->f))) == NULL ||
	    (out->buf = malloc(len + 2 * nf)) == NULL)
		goto nomem;
	d = out->buf;
	for (p = b; p <= end; p = amp + 1) {
		if ((amp = memchr(p, '&', (size_t)(end - p))) == NULL)
			amp = end;
		if (amp == p) {
			text_say(why, whylen, "%s", "body: an empty field in the"
			    " form");
			goto invalid;
		}
		if ((eq = memchr(p, '=', (size_t)(amp - p))) == NULL)
			eq = amp;
		out->f[out->n].name = d;
		if ((k = decode(p, (size_t)(eq - p), d)) <= 0)
			goto bad;
		d += k + 1;
		out->f[out->n].value = d;
		if ((k = decode(eq == amp ? eq : eq + 1, eq == amp ? 0 :
		    (size_t)(amp - eq - 1), d)) < 0)
			goto bad;
		d += k + 1;
		if (!text_valid_line(out->f[out->n].name, HB_TEXT_MAX) ||
		    !text_valid_line(out->f[out->n].value, len))
			goto bad;
		for (j = 0; j < out->n; j++)
			if (strcmp(out->f[j].name, out->f[out->n].name) == 0) {
				text_say(why, whylen, plain(out->f[j].name) ?
				    "body: a field named twice: %s" :
				    "body: a field named twice%s", plain(
				    out->f[j].name) ? out->f[j].name : "");
				goto invalid;
			}
		out->n++;
		if (amp == end)
			break;
	}
	return FORM_OK;
bad:
	text_say(why, whylen, "%s", "body: a form's name or value is empty,"
	    " badly %-encoded, not UTF-8 or holds a control character");
invalid:
	form_free(out);
	return FORM_INVALID;
nomem:
	text_say(why, whylen, "%s", "out of memory");
	form_free(out);
	return FORM_NOMEM;
}

void
form_free(struct form *f)
{
	if (f == NULL)
		return;
	free(f->f);
	free(f->buf);
	memset(f, 0, sizeof(*f));
}

/* Appends s encoded at *o of buf (room made by the caller). */
static void
put(char *buf, size_t *o, const char *s)
{
	static const char	hex[] = "0123456789ABCDEF";
	unsigned char		c;

	for (; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("*-._", c) != NULL)
			buf[(*o)++] = (char)c;
		else if (c == ' ')
			buf[(*o)++] = '+';
		else {
			buf[(*o)++] = '%';
			buf[(*o)++] = hex[c >> 4];
			buf[(*o)++] = hex[c & 0xf];
		}
	}
}

char *
form_encode(const struct form_field *f, size_t n)
{
	char	*buf;
	size_t	 i, len = 1, o = 0;

	for (i = 0; i < n; i++)
		len += 3 * (strlen(f[i].name) + strlen(f[i].value)) + 2;
	if (fault_fire(FAULT_ALLOC) || (buf = malloc(len)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (i > 0)
			buf[o++] = '&';
		put(buf, &o, f[i].name);
		buf[o++] = '=';
		put(buf, &o, f[i].value);
	}
	buf[o] = '\0';
	return buf;
}
