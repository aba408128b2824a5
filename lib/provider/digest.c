/*
 * provider/digest.c: SHA-1 (FIPS 180-4, section 6.1) and its HMAC (RFC
 * 2104), and libsodium's SHA-256, SHA-512 and their HMACs, behind one
 * interface.
 */
#include <stdint.h>
#include <string.h>

#include <sodium.h>

#include "provider/digest.h"

#define SHA1_LEN	20
#define SHA1_BLOCK	64
#define BLOCK_MAX	128	/* SHA-512's block */

struct sha1 {
	uint32_t	h[5];
	uint64_t	bytes;		/* hashed so far */
	unsigned char	buf[SHA1_BLOCK];
	size_t		nbuf;
};

/* One hash in progress, of any of the three. */
struct hash {
	enum digest_alg	alg;
	union {
		struct sha1			sha1;
		crypto_hash_sha256_state	sha256;
		crypto_hash_sha512_state	sha512;
	} u;
};

static uint32_t
rol(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

static void
sha1_block(uint32_t h[5], const unsigned char *p)
{
	uint32_t	w[80], a, b, c, d, e, f, k, t;
	int		i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (i = 16; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	a = h[0];
	b = h[1];
	c = h[2];
	d = h[3];
	e = h[4];
	for (i = 0; i < 80; i++) {
		if (i < 20) {
			f = (b & c) | (~b & d);
			k = 0x5a827999;
		} else if (i < 40) {
			f = b ^ c ^ d;
			k = 0x6ed9eba1;
		} else if (i < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8f1bbcdc;
		} else {
			f = b ^ c ^ d;
			k = 0xca62c1d6;
		}
		t = rol(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = rol(b, 30);
		b = a;
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	sodium_memzero(w, sizeof(w));
}

static void
sha1_init(struct sha1 *s)
{
	static const uint32_t	h0[5] = {
		0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0
	};

	memcpy(s->h, h0, sizeof(h0));
	s->bytes = 0;
	s->nbuf = 0;
}

static void
sha1_update(struct sha1 *s, const unsigned char *p, size_t len)
{
	size_t	n;

	s->bytes += len;
	while (len > 0) {
		n = SHA1_BLOCK - s->nbuf;
		if (n > len)
			n = len;
		memcpy(s->buf + s->nbuf, p, n);
		s->nbuf += n;
		p += n;
		len -= n;
		if (s->nbuf == SHA1_BLOCK) {
			sha1_block(s->h, s->buf);
			s->nbuf = 0;
		}
	}
}

/* Padding: 0x80, zeros, the length in bits, big-endian, to a block. */
static void
sha1_final(struct sha1 *s, unsigned char out[SHA1_LEN])
{
	uint64_t	bits = s->bytes * 8;
	int		i;

	s->buf[s->nbuf++] = 0x80;
	if (s->nbuf > SHA1_BLOCK - 8) {
		memset(s->buf + s->nbuf, 0, SHA1_BLOCK - s->nbuf);
		sha1_block(s->h, s->buf);
		s->nbuf = 0;
	}
	memset(s->buf + s->nbuf, 0, SHA1_BLOCK - 8 - s->nbuf);
	for (i = 0; i < 8; i++)
		s->buf[SHA1_BLOCK - 1 - i] = (unsigned char)(bits >> (8 * i));
	sha1_block(s->h, s->buf);
	for (i = 0; i < 5; i++) {
		out[4 * i] = (unsigned char)(s->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)s->h[i];
	}
}

size_t
digest_len(enum digest_alg alg)
{
	switch (alg) {
	case DIGEST_SHA1:
		return SHA1_LEN;
	case DIGEST_SHA256:
		return crypto_hash_sha256_BYTES;
	case DIGEST_SHA512:
		return crypto_hash_sha512_BYTES;
	}
	return 0;
}

static size_t
block_len(enum digest_alg alg)
{
	return alg == DIGEST_SHA512 ? 128 : 64;
}

static void
hash_init(struct hash *h, enum digest_alg alg)
{
	h->alg = alg;
	if (alg == DIGEST_SHA1)
		sha1_init(&h->u.sha1);
	else if (alg == DIGEST_SHA256)
		(void)crypto_hash_sha256_init(&h->u.sha256);
	else
		(void)crypto_hash_sha512_init(&h->u.sha512);
}

static void
hash_update(struct hash *h, const unsigned char *p, size_t len)
{
	if (len == 0)
		return;
	if (h->alg == DIGEST_SHA1)
		sha1_update(&h->u.sha1, p, len);
	else if (h->alg == DIGEST_SHA256)
		(void)crypto_hash_sha256_update(&h->u.sha256, p, len);
	else
		(void)crypto_hash_sha512_update(&h->u.sha512, p, len);
}

static void
hash_final(struct hash *h, unsigned char *out)
{
	if (h->alg == DIGEST_SHA1)
		sha1_final(&h->u.sha1, out);
	else if (h->alg == DIGEST_SHA256)
		(void)crypto_hash_sha256_final(&h->u.sha256, out);
	else
		(void)crypto_hash_sha512_final(&h->u.sha512, out);
	sodium_memzero(h, sizeof(*h));
}

static int
args_valid(enum digest_alg alg, const unsigned char *const *parts,
    const size_t *lens, size_t n, const unsigned char *out)
{
	size_t	i;

	if (digest_len(alg) == 0 || out == NULL ||
	    (n != 0 && (parts == NULL || lens == NULL)))
		return 0;
	for (i = 0; i < n; i++)
		if (parts[i] == NULL && lens[i] != 0)
			return 0;
	return 1;
}

int
digest_hash(enum digest_alg alg, const unsigned char *const *parts,
    const size_t *lens, size_t n, unsigned char *out)
{
	struct hash	h;
	size_t		i;

	if (!args_valid(alg, parts, lens, n, out))
		return -1;
	hash_init(&h, alg);
	for (i = 0; i < n; i++)
		hash_update(&h, parts[i], lens[i]);
	hash_final(&h, out);
	return 0;
}

/* libsodium's HMAC-SHA256 and -SHA512, which take a key of any length. */
static void
sodium_hmac(enum digest_alg alg, const unsigned char *key, size_t keylen,
    const unsigned char *const *parts, const size_t *lens, size_t n,
    unsigned char *out)
{
	static const unsigned char	none[1];
	crypto_auth_hmacsha256_state	s256;
	crypto_auth_hmacsha512_state	s512;
	size_t				i;

	if (key == NULL)
		key = none;
	if (alg == DIGEST_SHA256) {
		(void)crypto_auth_hmacsha256_init(&s256, key, keylen);
		for (i = 0; i < n; i++)
			if (lens[i] != 0)
				(void)crypto_auth_hmacsha256_update(&s256,
				    parts[i], lens[i]);
		(void)crypto_auth_hmacsha256_final(&s256, out);
		sodium_memzero(&s256, sizeof(s256));
		return;
	}
	(void)crypto_auth_hmacsha512_init(&s512, key, keylen);
	for (i = 0; i < n; i++)
		if (lens[i] != 0)
			(void)crypto_auth_hmacsha512_update(&s512, parts[i],
			    lens[i]);
	(void)crypto_auth_hmacsha512_final(&s512, out);
	sodium_memzero(&s512, sizeof(s512));
}

int
digest_hmac(enum digest_alg alg, const unsigned char *key, size_t keylen,
    const unsigned char *const *parts, const size_t *lens, size_t n,
    unsigned char *out)
{
	struct hash	h;
	unsigned char	k[BLOCK_MAX], pad[BLOCK_MAX], inner[DIGEST_MAX];
	size_t		i, block;

	if (!args_valid(alg, parts, lens, n, out) ||
	    (key == NULL && keylen != 0))
		return -1;
	if (alg != DIGEST_SHA1) {
		sodium_hmac(alg, key, keylen, parts, lens, n, out);
		return 0;
	}
	block = block_len(alg);
	memset(k, 0, sizeof(k));
	if (keylen > block) {
		hash_init(&h, alg);
		hash_update(&h, key, keylen);
		hash_final(&h, k);
	} else if (keylen != 0)
		memcpy(k, key, keylen);

	for (i = 0; i < block; i++)
		pad[i] = k[i] ^ 0x36;
	hash_init(&h, alg);
	hash_update(&h, pad, block);
	for (i = 0; i < n; i++)
		hash_update(&h, parts[i], lens[i]);
	hash_final(&h, inner);

	for (i = 0; i < block; i++)
		pad[i] = k[i] ^ 0x5c;
	hash_init(&h, alg);
	hash_update(&h, pad, block);
	hash_update(&h, inner, digest_len(alg));
	hash_final(&h, out);

	sodium_memzero(k, sizeof(k));
	sodium_memzero(pad, sizeof(pad));
	sodium_memzero(inner, sizeof(inner));
	return 0;
}
