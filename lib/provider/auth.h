/*
 * provider/auth.h: authentication of webhook requests, and signing of our own.
 *
 * Every verifier works on the raw body bytes, before any parsing, and
 * compares in constant time (sodium_memcmp).  Keys and digests are wiped
 * (sodium_memzero) before return.  sodium_init() must have succeeded
 * before any call (util_init() does it).
 *
 * Secrets are passed as an array so that several can be active at once
 * (rotation).  A secret whose expires_at is non-zero and <= now is skipped.
 * A verifier that returns AUTH_OK sets *matched (when matched is not
 * NULL) to the index of the first secret that matched, so that the
 * caller can say which one the sender used; it is left alone otherwise.
 * No function here logs or copies a secret or a signature anywhere.
 *
 * Transactions: none; no database.
 */
#ifndef HB_AUTH_H
#define HB_AUTH_H

#include "base/hb.h"

#define AUTH_HASH_LEN	32	/* stored hash of a shared key (BLAKE2b-256) */
#define AUTH_TOLERANCE_DEFAULT	300	/* seconds, both directions */
#define AUTH_HEADER_MAX	1024	/* longest signature header accepted */

enum auth_status {
	AUTH_OK = 0,
	AUTH_MISSING,		/* no header / no value */
	AUTH_MALFORMED,		/* header present but not of the scheme */
	AUTH_TIMESTAMP,		/* timestamp outside the tolerance */
	AUTH_BAD_SIGNATURE,	/* well formed, matched no active secret */
	AUTH_NO_SECRET,		/* no active (unexpired) secret configured */
	AUTH_ERROR		/* internal error (out of memory, bad args) */
};

struct auth_secret {
	const unsigned char	*key;	/* the secret bytes as configured */
	size_t			 keylen;
	int64_t			 expires_at;	/* unix seconds; 0 = never */
};

/* A fixed sentence per status, for logs.  Never mentions the secret. */
HB_API const char *auth_strerror(enum auth_status);

/*
 * HMAC-SHA256 of the concatenation of the n parts, with a key of any
 * length (crypto_auth_hmacsha256_init/update/final).  Returns 0, or -1.
 */
HB_API int auth_hmac_sha256(const unsigned char *key, size_t keylen,
    const unsigned char *const *parts, const size_t *lens, size_t n,
    unsigned char out[32]) HB_MUST_CHECK;

/*
 * The Tornado (and Mux) scheme: header "t=<unix seconds>,v1=<hex>[,v1=..]"
 * where v1 = lowercase hex HMAC-SHA256(secret, "<t>.<body>").  Elements
 * are separated by commas, optional spaces around them are ignored,
 * unknown elements (v0=, v2=...) are ignored, at most 8 v1 values are
 * considered; more than that, a missing or repeated t, or a t that is
 * not a plain decimal integer, is AUTH_MALFORMED.  |now - t| > tolerance
 * is AUTH_TIMESTAMP.  OK when any v1 matches any active secret.
 */
HB_API enum auth_status auth_verify_tsig(const char *header,
    const unsigned char *body, size_t bodylen,
    const struct auth_secret *secrets, size_t nsecrets,
    int64_t now, int64_t tolerance, size_t *matched) HB_MUST_CHECK;

/*
 * Writes "t=<t>,v1=<hex>" for the first active secret into out.
 * Returns 0, or -1 when out is too small or no secret is active.
 */
HB_API int auth_sign_tsig(const struct auth_secret *secrets, size_t nsecrets,
    int64_t now, int64_t t, const unsigned char *body, size_t bodylen,
    char *out, size_t outlen) HB_MUST_CHECK;

/*
 * Standard Webhooks: headers webhook-id, webhook-timestamp and
 * webhook-signature ("v1,<base64>" entries separated by spaces); the
 * signature is HMAC-SHA256 over "<id>.<timestamp>.<body>", keyed by the
 * base64-decoded part of a "whsec_<base64>" secret (a secret without the
 * prefix is decoded as base64 too; one that does not decode is skipped).
 */
HB_API enum auth_status auth_verify_stdwebhooks(const char *id,
    const char *timestamp, const char *signature,
    const unsigned char *body, size_t bodylen,
    const struct auth_secret *secrets, size_t nsecrets,
    int64_t now, int64_t tolerance, size_t *matched) HB_MUST_CHECK;

/*
 * Writes "v1,<base64>" for the given secret ("whsec_..." form) into out.
 * Returns 0, or -1 when out is too small or the secret does not decode.
 */
HB_API int auth_sign_stdwebhooks(const unsigned char *secret, size_t secretlen,
    const char *id, int64_t timestamp,
    const unsigned char *body, size_t bodylen,
    char *out, size_t outlen) HB_MUST_CHECK;

/* The stored form of a shared key: BLAKE2b-256 of its bytes. */
HB_API int auth_key_hash(const char *key, size_t keylen,
    unsigned char out[AUTH_HASH_LEN]) HB_MUST_CHECK;

/*
 * Key mode: hashes the presented key and compares it in constant time
 * with each active stored hash (each secret's keylen is AUTH_HASH_LEN).
 */
HB_API enum auth_status auth_verify_key(const char *presented,
    size_t presentedlen, const struct auth_secret *hashes, size_t nhashes,
    int64_t now, size_t *matched) HB_MUST_CHECK;

/*
 * The end of every verifier, over the secrets it tried: AUTH_NO_SECRET
 * when none was active, AUTH_BAD_SIGNATURE when none matched, else
 * AUTH_OK with *matched (if not NULL) set to first.
 */
HB_API enum auth_status auth_verdict(size_t nactive, int match,
    size_t first, size_t *matched);

#endif
