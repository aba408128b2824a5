/*
 * provider/scheme.h: a provider's signature scheme, declared as
 * configuration rather than compiled in (hookbox(1), SIGNATURE SCHEMES).
 *
 * A scheme says where a request's signature is, what bytes it signs, with
 * which algorithm and encoding, and where its time is.  It is the
 * "signature" member of a mapping file (provider/mapping.h), validated
 * when the endpoint is added (each error names the member), stored in
 * the mapping's canonical text, and evaluated for every request:
 *
 *   "signature": {
 *     "header":    "Stripe-Signature",
 *     "parts":     {"separator": ",", "assign": "=", "signature": "v1"},
 *     "prefix":    "sha256=",
 *     "timestamp": {"part": "t", "unit": "s"},
 *     "signed":    "{timestamp}.{body}",
 *     "algorithm": "hmac-sha256",
 *     "encoding":  "hex",
 *     "key":       "text",
 *     "key_prefix": "whsec_",
 *     "url":       "https://hooks.example.com/hooks/square"
 *   }
 *
 * "header" (required) names the header that holds the signature.
 * Without "parts" its whole value is one signature; with "parts" it is a
 * list of elements split at "separator" (one character), each a name,
 * "assign" (one character) and a value, white space (space, tab) around
 * each ignored: the elements named "signature" are the signatures (at
 * most SCHEME_SIGS_MAX, several for a secret being rotated), elements of
 * other names are ignored.  "prefix" (optional) is what each signature
 * value starts with ("sha256=", "v0="); a value without it is not a
 * signature of the scheme.
 *
 * "timestamp" (optional) is where the request's time is: {"part": NAME}
 * (an element of the list, exactly once) or {"header": NAME}, in "unit"
 * "s" (the default) or "ms", a plain decimal integer; the request is
 * refused when it is further than the endpoint's tolerance from now.
 * Without it nothing is timed, and a replay is recognised by the event
 * id alone (its receipt): hookbox(1) says so.
 *
 * "signed" (required) is the text the signature is over: literal bytes
 * (printable ASCII but '{' and '}') and the placeholders {body} (the raw
 * body), {form} (the body read as a form, provider/form.h: each field's
 * name then value, decoded, by name in bytewise order, as Twilio signs
 * its parameters), {timestamp} (as presented), {url} (the declared
 * "url", with the request's query string when it has one), {header:NAME}
 * (that header's value) and {secret} (the key itself, for a plain
 * digest).  It signs the body, once, as {body} or {form}.
 *
 * "algorithm" (required): hmac-sha1, hmac-sha256, hmac-sha512 (the key
 * is the secret), sha1, sha256 (a plain digest of the signed text, which
 * must hold {secret}), ed25519 (the secret is the sender's public key,
 * 32 bytes).  sha1, hmac-sha1 and the plain digests are weak: a provider
 * that requires one is followed, and scheme_weak() says so.
 * "encoding" (required): hex (either case), base64, base64url (padding
 * optional).
 * "key": how the configured secret becomes the key: "text" (its bytes,
 * the default) or "base64" (decoded, after "key_prefix" when the secret
 * starts with it, as Standard Webhooks' whsec_ and whpk_).
 *
 * The headers a scheme signs (for mapping_unsigned_field()): each
 * {header:NAME}, and the timestamp's header when {timestamp} is signed.
 *
 * Transactions: none; no database.  A struct scheme is read-only once
 * made: any number of threads may verify with one at once.
 */
#ifndef HB_SCHEME_H
#define HB_SCHEME_H

#include <stddef.h>
#include <stdint.h>

#include "base/hb.h"
#include "provider/auth.h"

#define SCHEME_SIGS_MAX		8	/* signature values per request */
#define SCHEME_PIECES_MAX	16	/* literals and placeholders */
#define SCHEME_SIGNED_MAX	256	/* bytes of "signed" */
#define SCHEME_PREFIX_MAX	16	/* bytes of a prefix */

struct scheme;
struct cJSON;

/*
 * The "signature" member v of a mapping file, checked.  Returns a new
 * scheme (scheme_free()), or NULL with why filled: "signature.encoding:
 * not one of hex, base64, base64url", or "out of memory" (*nomem set).
 */
HB_API struct scheme *scheme_parse(const struct cJSON *v, char *why,
    size_t whylen, int *nomem);

HB_API void scheme_free(struct scheme *);

/*
 * The scheme in its canonical form, a compact JSON object with every
 * member (defaults written out), in the order above; scheme_parse() of
 * it gives the same scheme.  Allocated (free()); NULL when out of memory.
 */
HB_API char *scheme_text(const struct scheme *);

/* The headers the scheme signs, NULL-ended, lower case.  Static in s. */
HB_API const char *const *scheme_signed_headers(const struct scheme *);

/* The algorithm's name ("hmac-sha256"); non-zero when it is weak. */
HB_API const char *scheme_algorithm(const struct scheme *);
HB_API int scheme_weak(const struct scheme *);

/* Non-zero when the scheme times requests. */
HB_API int scheme_timed(const struct scheme *);

/*
 * NULL when secret (len bytes) is one the scheme can verify with: as
 * "key" says, a key of at least SCHEME_KEY_MIN bytes (shorter ones are
 * guessed), for ed25519 a public key of 32; else a sentence saying what
 * is expected.  Static storage.
 */
#define SCHEME_KEY_MIN	16
HB_API const char *scheme_check_secret(const struct scheme *,
    const unsigned char *secret, size_t len);

/* What scheme_verify() and scheme_sign() read of a request. */
struct scheme_req {
	/* A header's value by name (any case), or NULL. */
	const char		*(*header)(const void *arg, const char *name);
	const void		*arg;
	const unsigned char	*body;
	size_t			 bodylen;
	const char		*query;	/* the query string, NULL or "":
					   none; only {url} reads it */
	int64_t			 now_ms;
};

/*
 * Verifies a request against the active secrets (provider/auth.h: any
 * active one may match), its time within tolerance seconds of now.  The
 * statuses of provider/auth.h, decided in its order: AUTH_MISSING (no
 * signature header, or a header the scheme signs), AUTH_MALFORMED (no
 * signature of the scheme in it, a part twice, a time that is not a
 * decimal integer, a header longer than AUTH_HEADER_MAX or holding a
 * control byte), AUTH_TIMESTAMP, AUTH_NO_SECRET (none active, or none
 * that decodes as "key" says), then AUTH_OK (with *matched, as
 * provider/auth.h says) or AUTH_BAD_SIGNATURE.
 * Every comparison is constant-time, every key and digest wiped.
 */
HB_API enum auth_status scheme_verify(const struct scheme *,
    const struct scheme_req *, const struct auth_secret *secrets,
    size_t nsecrets, int64_t tolerance, size_t *matched) HB_MUST_CHECK;

/* A header scheme_sign() writes. */
struct scheme_header {
	char	name[HB_ID_MAX + 1];
	char	value[AUTH_HEADER_MAX + 1];
};

/*
 * A new random secret in the form the scheme's key takes (24 random
 * bytes: as hex for a text key, as base64 after key_prefix for a base64
 * one), into secret; for ed25519 a new key pair, the public key into
 * secret (key_prefix, base64) and the private key that signs for it
 * into signer ("whsk_", base64 of 64 bytes).  signer is secret's copy
 * for the others.  Each buffer SCHEME_SECRET_LEN bytes.  Returns 0, or
 * -1 when they are too small.
 */
#define SCHEME_SECRET_LEN	128
HB_API int scheme_make_secret(const struct scheme *, char *secret,
    size_t secretlen, char *signer, size_t signerlen) HB_MUST_CHECK;

#define SCHEME_OUT_MAX	4	/* headers scheme_sign() writes */

/*
 * Signs a request as the provider would, at req->now_ms: into out[0]
 * the signature header; then, when the time is a header of its own,
 * that header; then each header the scheme signs that req->header does
 * not have, made up as a provider makes its delivery id ("msg_" and 24
 * hex digits); *nout of them.  secret is what the endpoint holds (for
 * ed25519, the sender's private key instead: 64 bytes, or its 32-byte
 * seed, base64 after a prefix of the form "whsk_").  Returns 0, or -1
 * when the secret does not decode, more headers are missing than out
 * holds, or the result does not fit.
 */
HB_API int scheme_sign(const struct scheme *, const struct scheme_req *,
    const unsigned char *secret, size_t secretlen,
    struct scheme_header out[SCHEME_OUT_MAX], size_t *nout) HB_MUST_CHECK;

#endif
