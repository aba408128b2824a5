/*
 * http.c: libcurl behind a small interface.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "http.h"
#include "util.h"

#define RETRY_AFTER_MAX_MS	(3600 * 1000LL)

struct http {
	CURL	*curl;
};

struct sink {
	struct http_result	*out;
	size_t			 cap;
};

int
http_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

struct http *
http_new(void)
{
	struct http	*h;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	if ((h->curl = curl_easy_init()) == NULL) {
		free(h);
		return NULL;
	}
	return h;
}

void
http_free(struct http *h)
{
	if (h == NULL)
		return;
	curl_easy_cleanup(h->curl);
	free(h);
}

void
http_result_clear(struct http_result *r)
{
	if (r == NULL)
		return;
	free(r->body);
	memset(r, 0, sizeof(*r));
	r->retry_after_ms = -1;
}

static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	struct sink	*s = arg;
	size_t		 len = size * n, room;
	char		*p;

	if (s->cap == 0)
		return len;
	if (s->out->body == NULL) {
		if ((s->out->body = malloc(s->cap + 1)) == NULL)
			return 0;	/* aborts the transfer */
		s->out->body[0] = '\0';
	}
	room = s->cap - s->out->bodylen;
	if (len > room) {
		/* More than we keep: an oversized answer is an error. */
		return 0;
	}
	p = s->out->body + s->out->bodylen;
	memcpy(p, data, len);
	s->out->bodylen += len;
	s->out->body[s->out->bodylen] = '\0';
	return len;
}

/* Retry-After: delta-seconds or an HTTP-date; capped at an hour. */
static size_t
on_header(char *data, size_t size, size_t n, void *arg)
{
	struct sink	*s = arg;
	size_t		 len = size * n, i;
	char		 v[64];
	enum util_num	 num;
	long long	 secs = 0;
	time_t		 when;

	if (len < 12 || strncasecmp(data, "Retry-After:", 12) != 0)
		return len;
	for (i = 12; i < len && isspace((unsigned char)data[i]); i++)
		;
	len -= i;
	while (len > 0 && isspace((unsigned char)data[i + len - 1]))
		len--;
	if (len == 0 || len >= sizeof(v))
		return size * n;
	memcpy(v, data + i, len);
	v[len] = '\0';
	if ((num = util_parse_num(v, 0, RETRY_AFTER_MAX_MS / 1000, &secs)) ==
	    UTIL_NUM_LARGE)
		secs = RETRY_AFTER_MAX_MS / 1000;
	else if (num != UTIL_NUM_OK) {
		if ((when = curl_getdate(v, NULL)) < 0)
			return size * n;
		secs = (long long)(when - time(NULL));
		if (secs < 0)
			secs = 0;
		if (secs > RETRY_AFTER_MAX_MS / 1000)
			secs = RETRY_AFTER_MAX_MS / 1000;
	}
	s->out->retry_after_ms = secs * 1000;
	return size * n;
}

/*
 * Whether any of the request left: libcurl counts the bytes of requests
 * it wrote.  On a reused connection the connect time is 0 even though
 * the request went out, so that is no test.
 */
static int
wrote_request(CURL *c)
{
	long	n = 0;

	return curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &n) != CURLE_OK ||
	    n > 0;
}

int
http_request(struct http *h, const char *method, const char *url,
    const struct http_header *hdrs, size_t nhdrs, const char *body,
    size_t bodylen, long timeout_ms, size_t body_cap, int flags,
    struct http_result *out)
{
	struct curl_slist	*list = NULL, *l;
	struct sink		 sink;
	char			 line[HB_TEXT_MAX + 256];
	char			 errbuf[CURL_ERROR_SIZE];
	CURL			*c = h->curl;
	CURLcode		 cc;
	size_t			 i;
	int			 rc = -1;

	memset(out, 0, sizeof(*out));
	out->retry_after_ms = -1;
	out->sent = 1;
	sink.out = out;
	sink.cap = body_cap;
	errbuf[0] = '\0';

	for (i = 0; i < nhdrs; i++) {
		if (snprintf(line, sizeof(line), "%s: %s", hdrs[i].name,
		    hdrs[i].value) >= (int)sizeof(line) ||
		    (l = curl_slist_append(list, line)) == NULL) {
			(void)snprintf(out->error, sizeof(out->error),
			    "request header too long or out of memory");
			out->sent = 0;
			goto out;
		}
		list = l;
	}
	/* No "Expect: 100-continue" round trip for small bodies. */
	if ((l = curl_slist_append(list, "Expect:")) == NULL) {
		out->sent = 0;
		goto out;
	}
	list = l;

	curl_easy_reset(c);
	if (curl_easy_setopt(c, CURLOPT_URL, url) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") !=
	    CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
	    timeout_ms < 5000 ? timeout_ms : 5000L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_HTTPHEADER, list) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header) !=
	    CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_HEADERDATA, &sink) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_USERAGENT, "hookbox") != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_FRESH_CONNECT,
	    (flags & HTTP_FRESH) ? 1L : 0L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_FORBID_REUSE,
	    (flags & HTTP_FRESH) ? 1L : 0L) != CURLE_OK) {
		(void)snprintf(out->error, sizeof(out->error),
		    "cannot set up the request");
		out->sent = 0;
		goto out;
	}
	if (strcmp(method, "POST") == 0) {
		if (curl_easy_setopt(c, CURLOPT_POST, 1L) != CURLE_OK ||
		    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body != NULL ?
		    body : "") != CURLE_OK ||
		    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)bodylen) != CURLE_OK) {
			out->sent = 0;
			goto out;
		}
	} else if (curl_easy_setopt(c, CURLOPT_HTTPGET, 1L) != CURLE_OK) {
		out->sent = 0;
		goto out;
	}

	cc = curl_easy_perform(c);
	(void)curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
	if (cc == CURLE_OK) {
		rc = 0;
		goto out;
	}
	out->status = 0;
	out->timed_out = cc == CURLE_OPERATION_TIMEDOUT;
	/* Not sent: no connection, or not a byte of the request written. */
	out->sent = !(cc == CURLE_COULDNT_CONNECT ||
	    cc == CURLE_COULDNT_RESOLVE_HOST || cc == CURLE_COULDNT_RESOLVE_PROXY ||
	    cc == CURLE_UNSUPPORTED_PROTOCOL || cc == CURLE_URL_MALFORMAT) &&
	    wrote_request(c);
	(void)snprintf(out->error, sizeof(out->error), "%s",
	    errbuf[0] != '\0' ? errbuf : curl_easy_strerror(cc));
out:
	curl_slist_free_all(list);
	return rc;
}

int
http_escape(struct http *h, const char *s, char *out, size_t len)
{
	char	*e;
	int	 rc = -1;

	if ((e = curl_easy_escape(h->curl, s, 0)) == NULL)
		return -1;
	if (strlen(e) < len) {
		memcpy(out, e, strlen(e) + 1);
		rc = 0;
	}
	curl_free(e);
	return rc;
}
