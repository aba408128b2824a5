/*
 * provider/auth.c: authentication of webhook requests, and signing of our own.
 *
 * Three schemes: the Tornado/Mux "t=..,v1=.." header, Standard Webhooks
 * (webhook-id, webhook-timestamp, webhook-signature) and a shared key whose
 * BLAKE2b-256 hash is stored.  Every digest comparison goes through
 * sodium_memcmp(); every decoded key and digest is wiped before return.
 *
 * Statuses are decided in a fixed order: AUTH_ERROR (bad arguments),
 * AUTH_MISSING, AUTH_MALFORMED, AUTH_TIMESTAMP, AUTH_NO_SECRET, and only
 * then AUTH_BAD_SIGNATURE or AUTH_OK.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "base/text.h"
#include "provider/auth.h"

#define MAC_LEN		32	/* HMAC-SHA256 */
#define MAC_HEX_LEN	(2 * MAC_LEN + 1)
#define MAC_B64_LEN	sodium_base64_ENCODED_LEN(MAC_LEN, \
			    sodium_base64_VARIANT_ORIGINAL)
#define SIG_MAX		8	/* signature values per header */
#define TS_TEXT_MAX	24	/* decimal int64 and its NUL */
#define SW_ID_MAX	256	/* longest webhook-id accepted */
#define SW_PREFIX	"whsec_"
#define SW_PREFIX_LEN	(sizeof(SW_PREFIX) - 1)
#define SW_KEY_MAX	(HB_TEXT_MAX / 4 * 3)	/* decoded secret */

/* Decoded signature values presented in one header. */
struct sigset {
	unsigned char	sig[SIG_MAX][MAC_LEN];
	int		ok[SIG_MAX];	/* decoded to MAC_LEN bytes */
	size_t		n;
};

/* The parsed "t=..,v1=.." header. */
struct tsig {
	const char	*t;	/* t as presented: the signed text */
	size_t		 tlen;
	int64_t		 tval;
	struct sigset	 sigs;
};

static const unsigned char	empty_bytes[1];

const char *
auth_strerror(enum auth_status st)
{
	switch (st) {
	case AUTH_OK:
		return "authenticated";
	case AUTH_MISSING:
		return "no signature or key was presented";
	case AUTH_MALFORMED:
		return "the signature header is malformed";
	case AUTH_TIMESTAMP:
		return "the signature timestamp is outside the tolerance";
	case AUTH_BAD_SIGNATURE:
		return "the signature or key matches no active secret";
	case AUTH_NO_SECRET:
		return "no active secret is configured";
	case AUTH_ERROR:
		return "internal error during authentication";
	}
	return "unknown authentication status";
}

int
auth_hmac_sha256(const unsigned char *key, size_t keylen,
    const unsigned char *const *parts, const size_t *lens, size_t n,
    unsigned char out[32])
{
	crypto_auth_hmacsha256_state	 st;
	size_t				 i;
	int				 rc = -1;

	sodium_memzero(&st, sizeof(st));
	if (out == NULL || (key == NULL && keylen != 0) ||
	    (n != 0 && (parts == NULL || lens == NULL)))
		goto out;
	for (i = 0; i < n; i++)
		if (parts[i] == NULL && lens[i] != 0)
			goto out;
	if (key == NULL)
		key = empty_bytes;

	if (crypto_auth_hmacsha256_init(&st, key, keylen) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (lens[i] == 0)
			continue;
		if (crypto_auth_hmacsha256_update(&st, parts[i],
		    (unsigned long long)lens[i]) != 0)
			goto out;
	}
	if (crypto_auth_hmacsha256_final(&st, out) != 0)
		goto out;
	rc = 0;
out:
	sodium_memzero(&st, sizeof(st));
	if (rc != 0 && out != NULL)
		sodium_memzero(out, MAC_LEN);
	return rc;
}

/* Non-zero when |now - t| <= tolerance (tolerance >= 0), without overflow. */
static int
within_tolerance(int64_t t, int64_t now, int64_t tolerance)
{
	uint64_t	diff;

	if (t >= now)
		diff = (uint64_t)t - (uint64_t)now;
	else
		diff = (uint64_t)now - (uint64_t)t;
	return diff <= (uint64_t)tolerance;
}

/* strlen(s) when at most max, else max + 1; reads at most max + 1 bytes. */
static size_t
bounded_len(const char *s, size_t max)
{
	size_t	n;

	for (n = 0; n <= max && s[n] != '\0'; n++)
		;
	return n;
}

static int
is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* Element names: letters, digits, '_' and '-'. */
static int
is_name(const char *s, size_t len)
{
	size_t	i;
	char	c;

	if (len == 0)
		return 0;
	for (i = 0; i < len; i++) {
		c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

static int
mem_is(const char *s, size_t len, const char *lit)
{
	size_t	litlen;

	litlen = strlen(lit);
	return len == litlen && memcmp(s, lit, len) == 0;
}

/* Usable for verifying or signing at now: unexpired, non-empty. */
static int
secret_active(const struct auth_secret *s, int64_t now)
{
	return s->keylen != 0 && (s->expires_at == 0 || s->expires_at > now);
}

static int
secrets_valid(const struct auth_secret *secrets, size_t n)
{
	size_t	i;

	if (secrets == NULL)
		return n == 0;
	for (i = 0; i < n; i++)
		if (secrets[i].key == NULL && secrets[i].keylen != 0)
			return 0;
	return 1;
}

/* Non-zero when mac equals any decoded value of the set (constant time). */
static int
sigset_match(const struct sigset *set, const unsigned char mac[MAC_LEN])
{
	size_t	i;
	int	match = 0;

	for (i = 0; i < set->n; i++)
		match |= set->ok[i] & (sodium_memcmp(set->sig[i], mac,
		    MAC_LEN) == 0);
	return match;
}

static void
sigset_add_hex(struct sigset *set, const char *hex, size_t len)
{
	size_t	binlen = 0;
	size_t	i = set->n++;

	set->ok[i] = sodium_hex2bin(set->sig[i], MAC_LEN, hex, len, NULL,
	    &binlen, NULL) == 0 && binlen == MAC_LEN;
}

static void
sigset_add_b64(struct sigset *set, const char *b64, size_t len)
{
	size_t	binlen = 0;
	size_t	i = set->n++;

	set->ok[i] = sodium_base642bin(set->sig[i], MAC_LEN, b64, len, NULL,
	    &binlen, NULL, sodium_base64_VARIANT_ORIGINAL) == 0 &&
	    binlen == MAC_LEN;
}

/*
 * Parses "t=<decimal>,v1=<hex>[,...]": comma-separated name=value
 * elements, OWS around each ignored.  An empty element, one without '='
 * or with an odd name, a missing or repeated t, a t that is not a plain
 * decimal integer, or more than SIG_MAX v1 values is AUTH_MALFORMED.
 * Unknown elements are ignored; v1 values that do not decode to 32 bytes
 * are kept as non-matching.
 */
static enum auth_status
tsig_parse(const char *h, size_t len, struct tsig *ts)
{
	const char	*p, *end, *e, *eq, *next;

	if (text_has_ctl(h, len))
		return AUTH_MALFORMED;
	ts->t = NULL;
	ts->tlen = 0;
	ts->sigs.n = 0;
	p = h;
	end = h + len;
	for (;;) {
		if ((e = memchr(p, ',', (size_t)(end - p))) == NULL)
			e = end;
		next = e;
		while (p < e && is_ows(*p))
			p++;
		while (e > p && is_ows(e[-1]))
			e--;
		if ((eq = memchr(p, '=', (size_t)(e - p))) == NULL ||
		    !is_name(p, (size_t)(eq - p)))
			return AUTH_MALFORMED;
		if (mem_is(p, (size_t)(eq - p), "t")) {
			if (ts->t != NULL)
				return AUTH_MALFORMED;
			ts->t = eq + 1;
			ts->tlen = (size_t)(e - ts->t);
			if (text_decimal(ts->t, ts->tlen, &ts->tval) != 0)
				return AUTH_MALFORMED;
		} else if (mem_is(p, (size_t)(eq - p), "v1")) {
			if (ts->sigs.n == SIG_MAX)
				return AUTH_MALFORMED;
			sigset_add_hex(&ts->sigs, eq + 1,
			    (size_t)(e - (eq + 1)));
		}
		if (next == end)
			break;
		p = next + 1;
	}
	if (ts->t == NULL)
		return AUTH_MALFORMED;
	return AUTH_OK;
}

enum auth_status
auth_verdict(size_t nactive, int match, size_t first, size_t *matched)
{
	if (nactive == 0)
		return AUTH_NO_SECRET;
	if (!match)
		return AUTH_BAD_SIGNATURE;
	if (matched != NULL)
		*matched = first;
	return AUTH_OK;
}

enum auth_status
auth_verify_tsig(const char *header, const unsigned char *body,
    size_t bodylen, const struct auth_secret *secrets, size_t nsecrets,
    int64_t now, int64_t tolerance, size_t *matched)
{
	struct tsig			 ts;
	unsigned char			 mac[MAC_LEN];
	const unsigned char		*parts[3];
	size_t				 lens[3], len, i, nactive = 0;
	size_t				 first = 0;
	int				 match = 0, m;
	enum auth_status		 rc;

	sodium_memzero(&ts, sizeof(ts));
	sodium_memzero(mac, sizeof(mac));
	if ((body == NULL && bodylen != 0) || tolerance < 0 ||
	    !secrets_valid(secrets, nsecrets)) {
		rc = AUTH_ERROR;
		goto out;
	}
	if (header == NULL || *header == '\0') {
		rc = AUTH_MISSING;
		goto out;
	}
	if ((len = bounded_len(header, AUTH_HEADER_MAX)) > AUTH_HEADER_MAX) {
		rc = AUTH_MALFORMED;
		goto out;
	}
	if ((rc = tsig_parse(header, len, &ts)) != AUTH_OK)
		goto out;
	if (!within_tolerance(ts.tval, now, tolerance)) {
		rc = AUTH_TIMESTAMP;
		goto out;
	}

	parts[0] = (const unsigned char *)ts.t;
	lens[0] = ts.tlen;
	parts[1] = (const unsigned char *)".";
	lens[1] = 1;
	parts[2] = body;
	lens[2] = bodylen;
	for (i = 0; i < nsecrets; i++) {
		if (!secret_active(&secrets[i], now))
			continue;
		nactive++;
		if (auth_hmac_sha256(secrets[i].key, secrets[i].keylen, parts,
		    lens, 3, mac) != 0) {
			rc = AUTH_ERROR;
			goto out;
		}
		m = sigset_match(&ts.sigs, mac);
		if (m && !match)
			first = i;
		match |= m;
	}
	rc = auth_verdict(nactive, match, first, matched);
out:
	sodium_memzero(mac, sizeof(mac));
	sodium_memzero(&ts, sizeof(ts));
	return rc;
}

int
auth_sign_tsig(const struct auth_secret *secrets, size_t nsecrets,
    int64_t now, int64_t t, const unsigned char *body, size_t bodylen,
    char *out, size_t outlen)
{
	char				 ttext[TS_TEXT_MAX];
	char				 hex[MAC_HEX_LEN];
	unsigned char			 mac[MAC_LEN];
	const struct auth_secret	*s = NULL;
	const unsigned char		*parts[3];
	size_t				 lens[3], i;
	int				 n, rc = -1;

	sodium_memzero(mac, sizeof(mac));
	sodium_memzero(hex, sizeof(hex));
	if (out == NULL || outlen == 0)
		goto out;
	out[0] = '\0';
	if (t < 0 || (body == NULL && bodylen != 0) ||
	    !secrets_valid(secrets, nsecrets))
		goto out;
	for (i = 0; i < nsecrets && s == NULL; i++)
		if (secret_active(&secrets[i], now))
			s = &secrets[i];
	if (s == NULL)
		goto out;

	n = snprintf(ttext, sizeof(ttext), "%" PRId64, t);
	if (n < 0 || (size_t)n >= sizeof(ttext))
		goto out;
	parts[0] = (const unsigned char *)ttext;
	lens[0] = (size_t)n;
	parts[1] = (const unsigned char *)".";
	lens[1] = 1;
	parts[2] = body;
	lens[2] = bodylen;
	if (auth_hmac_sha256(s->key, s->keylen, parts, lens, 3, mac) != 0)
		goto out;
	sodium_bin2hex(hex, sizeof(hex), mac, sizeof(mac));
	n = snprintf(out, outlen, "t=%s,v1=%s", ttext, hex);
	if (n < 0 || (size_t)n >= outlen)
		goto out;
	rc = 0;
out:
	if (rc != 0 && out != NULL)
		sodium_memzero(out, outlen);
	sodium_memzero(hex, sizeof(hex));
	sodium_memzero(mac, sizeof(mac));
	return rc;
}

/*
 * The HMAC key of a Standard Webhooks secret: the base64 (original
 * alphabet, padded) after "whsec_", or the whole secret without the
 * prefix.  A secret that does not decode, or decodes to nothing or to
 * more than SW_KEY_MAX bytes, is unusable.  Returns 0, or -1.
 */
static int
sw_decode_secret(const unsigned char *secret, size_t secretlen,
    unsigned char key[SW_KEY_MAX], size_t *keylen)
{
	const char	*b64 = (const char *)secret;
	size_t		 len = secretlen;

	*keylen = 0;
	if (secret == NULL || secretlen == 0)
		return -1;
	if (len >= SW_PREFIX_LEN &&
	    memcmp(b64, SW_PREFIX, SW_PREFIX_LEN) == 0) {
		b64 += SW_PREFIX_LEN;
		len -= SW_PREFIX_LEN;
	}
	if (sodium_base642bin(key, SW_KEY_MAX, b64, len, NULL, keylen, NULL,
	    sodium_base64_VARIANT_ORIGINAL) != 0 || *keylen == 0) {
		sodium_memzero(key, SW_KEY_MAX);
		*keylen = 0;
		return -1;
	}
	return 0;
}

/* A webhook-id: non-empty, at most SW_ID_MAX bytes, no control bytes. */
static int
sw_id_valid(const char *id, size_t *idlen)
{
	size_t	len;

	len = bounded_len(id, SW_ID_MAX);
	if (len == 0 || len > SW_ID_MAX || text_has_ctl(id, len) ||
	    memchr(id, '\t', len) != NULL)
		return 0;
	*idlen = len;
	return 1;
}

/*
 * webhook-signature: entries separated by OWS, each "<version>,<sig>".
 * Only "v1" entries count, the first SIG_MAX of them; the rest, and
 * entries of other versions or without a comma, are ignored.
 */
static void
sw_parse_signature(const char *h, size_t len, struct sigset *set)
{
	const char	*p, *end, *e, *comma;

	set->n = 0;
	p = h;
	end = h + len;
	while (p < end && set->n < SIG_MAX) {
		while (p < end && is_ows(*p))
			p++;
		e = p;
		while (e < end && !is_ows(*e))
			e++;
		if (e > p &&
		    (comma = memchr(p, ',', (size_t)(e - p))) != NULL &&
		    mem_is(p, (size_t)(comma - p), "v1"))
			sigset_add_b64(set, comma + 1,
			    (size_t)(e - (comma + 1)));
		p = e;
	}
}

enum auth_status
auth_verify_stdwebhooks(const char *id, const char *timestamp,
    const char *signature, const unsigned char *body, size_t bodylen,
    const struct auth_secret *secrets, size_t nsecrets,
    int64_t now, int64_t tolerance, size_t *matched)
{
	struct sigset		 sigs;
	unsigned char		 key[SW_KEY_MAX];
	unsigned char		 mac[MAC_LEN];
	const unsigned char	*parts[5];
	size_t			 lens[5], idlen, tslen, siglen, keylen, i;
	size_t			 nactive = 0, first = 0;
	int64_t			 tval;
	int			 match = 0, m;
	enum auth_status	 rc;

	sodium_memzero(&sigs, sizeof(sigs));
	sodium_memzero(key, sizeof(key));
	sodium_memzero(mac, sizeof(mac));
	if ((body == NULL && bodylen != 0) || tolerance < 0 ||
	    !secrets_valid(secrets, nsecrets)) {
		rc = AUTH_ERROR;
		goto out;
	}
	if (id == NULL || *id == '\0' || timestamp == NULL ||
	    *timestamp == '\0' || signature == NULL || *signature == '\0') {
		rc = AUTH_MISSING;
		goto out;
	}
	tslen = bounded_len(timestamp, AUTH_HEADER_MAX);
	siglen = bounded_len(signature, AUTH_HEADER_MAX);
	if (!sw_id_valid(id, &idlen) || tslen > AUTH_HEADER_MAX ||
	    text_decimal(timestamp, tslen, &tval) != 0 ||
	    siglen > AUTH_HEADER_MAX || text_has_ctl(signature, siglen)) {
		rc = AUTH_MALFORMED;
		goto out;
	}
	if (!within_tolerance(tval, now, tolerance)) {
		rc = AUTH_TIMESTAMP;
		goto out;
	}
	sw_parse_signature(signature, siglen, &sigs);

	parts[0] = (const unsigned char *)id;
	lens[0] = idlen;
	parts[1] = (const unsigned char *)".";
	lens[1] = 1;
	parts[2] = (const unsigned char *)timestamp;
	lens[2] = tslen;
	parts[3] = (const unsigned char *)".";
	lens[3] = 1;
	parts[4] = body;
	lens[4] = bodylen;
	for (i = 0; i < nsecrets; i++) {
		if (!secret_active(&secrets[i], now) ||
		    sw_decode_secret(secrets[i].key, secrets[i].keylen, key,
		    &keylen) != 0)
			continue;
		nactive++;
		if (auth_hmac_sha256(key, keylen, parts, lens, 5, mac) != 0) {
			rc = AUTH_ERROR;
			goto out;
		}
		sodium_memzero(key, sizeof(key));
		m = sigset_match(&sigs, mac);
		if (m && !match)
			first = i;
		match |= m;
	}
	rc = auth_verdict(nactive, match, first, matched);
out:
	sodium_memzero(mac, sizeof(mac));
	sodium_memzero(key, sizeof(key));
	sodium_memzero(&sigs, sizeof(sigs));
	return rc;
}

int
auth_sign_stdwebhooks(const unsigned char *secret, size_t secretlen,
    const char *id, int64_t timestamp, const unsigned char *body,
    size_t bodylen, char *out, size_t outlen)
{
	char			 ttext[TS_TEXT_MAX];
	char			 b64[MAC_B64_LEN];
	unsigned char		 key[SW_KEY_MAX];
	unsigned char		 mac[MAC_LEN];
	const unsigned char	*parts[5];
	size_t			 lens[5], idlen, keylen;
	int			 n, rc = -1;

	sodium_memzero(key, sizeof(key));
	sodium_memzero(mac, sizeof(mac));
	sodium_memzero(b64, sizeof(b64));
	if (out == NULL || outlen == 0)
		goto out;
	out[0] = '\0';
	if (id == NULL || !sw_id_valid(id, &idlen) || timestamp < 0 ||
	    (body == NULL && bodylen != 0))
		goto out;
	if (sw_decode_secret(secret, secretlen, key, &keylen) != 0)
		goto out;

	n = snprintf(ttext, sizeof(ttext), "%" PRId64, timestamp);
	if (n < 0 || (size_t)n >= sizeof(ttext))
		goto out;
	parts[0] = (const unsigned char *)id;
	lens[0] = idlen;
	parts[1] = (const unsigned char *)".";
	lens[1] = 1;
	parts[2] = (const unsigned char *)ttext;
	lens[2] = (size_t)n;
	parts[3] = (const unsigned char *)".";
	lens[3] = 1;
	parts[4] = body;
	lens[4] = bodylen;
	if (auth_hmac_sha256(key, keylen, parts, lens, 5, mac) != 0)
		goto out;
	sodium_bin2base64(b64, sizeof(b64), mac, sizeof(mac),
	    sodium_base64_VARIANT_ORIGINAL);
	n = snprintf(out, outlen, "v1,%s", b64);
	if (n < 0 || (size_t)n >= outlen)
		goto out;
	rc = 0;
out:
	if (rc != 0 && out != NULL)
		sodium_memzero(out, outlen);
	sodium_memzero(b64, sizeof(b64));
	sodium_memzero(mac, sizeof(mac));
	sodium_memzero(key, sizeof(key));
	return rc;
}

int
auth_key_hash(const char *key, size_t keylen,
    unsigned char out[AUTH_HASH_LEN])
{
	const unsigned char	*in = (const unsigned char *)key;

	if (out == NULL || (key == NULL && keylen != 0))
		return -1;
	if (in == NULL)
		in = empty_bytes;
	if (crypto_generichash(out, AUTH_HASH_LEN, in,
	    (unsigned long long)keylen, NULL, 0) != 0) {
		sodium_memzero(out, AUTH_HASH_LEN);
		return -1;
	}
	return 0;
}

enum auth_status
auth_verify_key(const char *presented, size_t presentedlen,
    const struct auth_secret *hashes, size_t nhashes, int64_t now,
    size_t *matched)
{
	unsigned char		h[AUTH_HASH_LEN];
	size_t			i, nactive = 0, first = 0;
	int			match = 0, m;
	enum auth_status	rc;

	sodium_memzero(h, sizeof(h));
	if (!secrets_valid(hashes, nhashes)) {
		rc = AUTH_ERROR;
		goto out;
	}
	if (presented == NULL || presentedlen == 0) {
		rc = AUTH_MISSING;
		goto out;
	}
	if (presentedlen > AUTH_HEADER_MAX) {
		rc = AUTH_MALFORMED;
		goto out;
	}
	if (auth_key_hash(presented, presentedlen, h) != 0) {
		rc = AUTH_ERROR;
		goto out;
	}
	for (i = 0; i < nhashes; i++) {
		if (hashes[i].keylen != AUTH_HASH_LEN ||
		    !secret_active(&hashes[i], now))
			continue;
		nactive++;
		m = sodium_memcmp(hashes[i].key, h, AUTH_HASH_LEN) == 0;
		if (m && !match)
			first = i;
		match |= m;
	}
	rc = auth_verdict(nactive, match, first, matched);
out:
	sodium_memzero(h, sizeof(h));
	return rc;
}
