/*
 * provider/digest.h: the hash functions providers sign with, plain and as
 * HMAC (RFC 2104), over a message given in parts.
 *
 * SHA-256 and SHA-512, and their HMACs, are libsodium's (crypto_hash_*,
 * crypto_auth_hmacsha*).  SHA-1, which libsodium does not have, and its
 * HMAC (RFC 2104) are written here from FIPS 180-4: some
 * providers still sign with it (Twilio's HMAC-SHA1, Cloudinary's plain
 * SHA-1), and a weak algorithm is accepted only where a provider's
 * declared scheme names it (provider/scheme.h).  Every state and key
 * block is wiped (sodium_memzero) before return.
 *
 * Transactions: none; no database.
 */
#ifndef HB_DIGEST_H
#define HB_DIGEST_H

#include <stddef.h>

#include "base/hb.h"

#define DIGEST_MAX	64	/* bytes of the longest digest, SHA-512 */

enum digest_alg {
	DIGEST_SHA1 = 0,
	DIGEST_SHA256,
	DIGEST_SHA512
};

/* Bytes of alg's digest: 20, 32 or 64. */
HB_API size_t digest_len(enum digest_alg);

/*
 * The digest of the concatenation of the n parts (parts[i] may be NULL
 * when lens[i] is 0) into out (digest_len(alg) bytes).  Returns 0, or -1
 * for bad arguments.
 */
HB_API int digest_hash(enum digest_alg, const unsigned char *const *parts,
    const size_t *lens, size_t n, unsigned char *out) HB_MUST_CHECK;

/*
 * HMAC with alg (RFC 2104, a key of any length: one longer than the
 * block is hashed first) of the concatenation of the n parts, into out
 * (digest_len(alg) bytes).  Returns 0, or -1 for bad arguments.
 */
HB_API int digest_hmac(enum digest_alg, const unsigned char *key,
    size_t keylen, const unsigned char *const *parts, const size_t *lens,
    size_t n, unsigned char *out) HB_MUST_CHECK;

#endif
