/*
 * config/check.h: the checks an operator's values must pass when the
 * admin tool adds or changes them (config/admin.h, config/edit.h).
 *
 * Transactions: none: each check looks at the value alone, and reads
 * nothing from config.db.
 *
 * They are the tool's policy for new values, stricter than the rules
 * every read applies again (config/config.h): a config.db written before them,
 * or a test's, keeps working.
 */
#ifndef HB_CONFIG_CHECK_H
#define HB_CONFIG_CHECK_H

#include <stddef.h>

#include "config/config.h"

struct scheme;

/* The shortest HMAC key hookbox takes (hmac endpoints, the decoded key of
   a standard endpoint or of a destination's signing secret). */
#define CONFIG_HMAC_KEY_MIN	16

/*
 * The checks.  Each returns NULL when the value is acceptable, else what
 * was expected, for a message after the option and its value (static
 * storage): "expected http://HOST... or https://HOST...".
 */
/* An http or https URL with a host, that can go into a request line. */
HB_API const char *config_check_url(const char *);
/*
 * A destination's URL or status URL that goes to an internal address
 * (net/addr.h): NULL when its host, as libcurl reads it, is not one (a name
 * that resolves to one is refused by the dispatcher when it connects),
 * else what it is ("a link-local address (...)", static storage), and
 * host (len bytes; NULL for none) gets the host as libcurl read it.  A
 * URL libcurl cannot read is left to config_check_url().
 */
HB_API const char *config_check_address(const char *url, char *host,
    size_t len);
/* An endpoint's name: a name (text_valid_name()) and not one the
   responder keeps for itself (_health, _metrics: every name starting
   with '_' is refused). */
HB_API const char *config_check_endpoint_name(const char *);
/* An endpoint's secret for its auth mode: hmac at least
   CONFIG_HMAC_KEY_MIN bytes; standard "whsec_" and base64 that decodes
   to at least that many; key any 1..CONFIG_SECRET_MAX bytes; scheme
   what the scheme (its mapping's, provider/scheme.h) verifies with. */
HB_API const char *config_check_secret(enum config_auth,
    const struct scheme *, const unsigned char *, size_t);
/* A destination's signing secret (Standard Webhooks): base64, with or
   without "whsec_", decoding to at least CONFIG_HMAC_KEY_MIN bytes. */
HB_API const char *config_check_dest_secret(const unsigned char *, size_t);
/* A tenant's status API key: it goes into a header. */
HB_API const char *config_check_api_key(const unsigned char *, size_t);
/* A job's output settings: a JSON object. */
HB_API const char *config_check_output(const char *);

#endif
