/*
 * config/check.c: the admin tool's checks of new values (see
 * config/check.h), and its policy for a destination's addresses.  No
 * SQL: they look at values alone.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cJSON.h>
#include <sodium.h>

#include "base/json.h"
#include "base/text.h"
#include "config/check.h"
#include "config/config_int.h"
#include "net/addr.h"
#include "provider/scheme.h"
#include "net/http.h"

#define SW_PREFIX	"whsec_"
#define SW_PREFIX_LEN	(sizeof(SW_PREFIX) - 1)

const char *
config_check_url(const char *u)
{
	static const char	expected[] =
	    "expected http://HOST... or https://HOST...";
	size_t			skip, host;

	if (u == NULL || !text_valid_line(u, HB_TEXT_MAX) ||
	    strpbrk(u, " \"<>\\^`{|}") != NULL)
		return expected;
	if (strncasecmp(u, "http://", 7) == 0)
		skip = 7;
	else if (strncasecmp(u, "https://", 8) == 0)
		skip = 8;
	else
		return expected;
	u += skip;
	/* The authority: [userinfo@]host[:port], up to the path. */
	host = strcspn(u, "/?#");
	if (memchr(u, '@', host) != NULL) {
		skip = (size_t)((const char *)memchr(u, '@', host) - u) + 1;
		u += skip;
		host -= skip;
	}
	if (host == 0 || u[0] == ':' || u[0] == '@')
		return expected;
	return NULL;
}

const char *
config_check_address(const char *u, char *host, size_t len)
{
	char		h[HB_TEXT_MAX + 1];
	enum addr_kind	k;

	if (host != NULL && len > 0)
		host[0] = '\0';
	if (u == NULL || http_url_host(u, h, sizeof(h)) != 0 ||
	    !addr_internal(k = addr_kind_host(h)))
		return NULL;
	if (host != NULL && len > 0)
		(void)snprintf(host, len, "%s", h);
	return addr_kind_name(k);
}

const char *
config_destination_refused(const struct config_destination *d)
{
	if (d->allow_internal)
		return NULL;
	if (config_check_address(d->url, NULL, 0) != NULL)
		return "destination URL (an internal address: link-local or a"
		    " cloud metadata service; refused unless the destination"
		    " allows it, --allow-internal)";
	if (config_check_address(d->status_url, NULL, 0) != NULL)
		return "status URL (an internal address: link-local or a cloud"
		    " metadata service; refused unless the destination allows"
		    " it, --allow-internal)";
	return NULL;
}

const char *
config_check_endpoint_name(const char *s)
{
	if (s != NULL && s[0] == '_')
		return "reserved: names starting with '_' are the responder's"
		    " own (_health, _metrics)";
	/* The metrics' label for requests to no configured endpoint. */
	if (s != NULL && strcmp(s, "unknown") == 0)
		return "reserved: the metrics' label for requests to no"
		    " configured endpoint";
	if (!text_valid_name(s))
		return "expected 1..128 of A-Z a-z 0-9 . _ -, starting with a"
		    " letter or digit";
	return NULL;
}

/* The base64 (original alphabet) at b decodes to at least the minimum. */
static int
decodes(const char *b, size_t len)
{
	unsigned char	key[CONFIG_SECRET_MAX];
	size_t		n = 0;
	int		ok;

	ok = len > 0 && sodium_base642bin(key, sizeof(key), b, len, NULL, &n,
	    NULL, sodium_base64_VARIANT_ORIGINAL) == 0 &&
	    n >= CONFIG_HMAC_KEY_MIN;
	sodium_memzero(key, sizeof(key));
	return ok;
}

const char *
config_check_secret(enum config_auth a, const struct scheme *sch,
    const unsigned char *s, size_t len)
{
	if (s == NULL || len == 0 || len > CONFIG_SECRET_MAX)
		return "expected 1..512 bytes";
	switch (a) {
	case CONFIG_AUTH_HMAC:
		if (len < CONFIG_HMAC_KEY_MIN)
			return "expected an HMAC secret of at least 16 bytes";
		break;
	case CONFIG_AUTH_STANDARD:
		if (len <= SW_PREFIX_LEN ||
		    memcmp(s, SW_PREFIX, SW_PREFIX_LEN) != 0 ||
		    !decodes((const char *)s + SW_PREFIX_LEN,
		    len - SW_PREFIX_LEN))
			return "expected whsec_ and base64 of at least 16"
			    " bytes";
		break;
	case CONFIG_AUTH_KEY:
		break;
	case CONFIG_AUTH_SCHEME:
		if (sch == NULL)
			return "expected an endpoint whose mapping declares its"
			    " signature";
		return scheme_check_secret(sch, s, len);
	}
	return NULL;
}

const char *
config_check_dest_secret(const unsigned char *s, size_t len)
{
	const char	*b = (const char *)s;

	if (s == NULL || len == 0 || len > CONFIG_SECRET_MAX)
		return "expected 1..512 bytes";
	if (len > SW_PREFIX_LEN && memcmp(s, SW_PREFIX, SW_PREFIX_LEN) == 0) {
		b += SW_PREFIX_LEN;
		len -= SW_PREFIX_LEN;
	}
	if (!decodes(b, len))
		return "expected whsec_ and base64 of at least 16 bytes";
	return NULL;
}

const char *
config_check_api_key(const unsigned char *k, size_t len)
{
	if (k == NULL || len == 0 || !config_valid_api_key(k, len))
		return "expected printable ASCII without spaces, at most 512"
		    " bytes";
	return NULL;
}

const char *
config_check_output(const char *s)
{
	cJSON		*v = NULL;
	const char	*why = NULL;

	if (s == NULL || !text_valid(s, HB_TEXT_MAX))
		return "expected a JSON object of at most 2048 bytes";
	switch (json_parse_strict(s, strlen(s), &v, NULL, 0)) {
	case JSON_OK:
		if (!cJSON_IsObject(v))
			why = "expected a JSON object, {...}";
		break;
	case JSON_NOMEM:
		why = "out of memory";
		break;
	default:
		why = "expected a JSON object, {...}";
		break;
	}
	cJSON_Delete(v);
	return why;
}
