/*
 * net/addr.c: link-local and cloud metadata addresses and names, in tables.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>

#include "net/addr.h"

/*
 * Metadata services at an IPv4 address, host order.  Those inside
 * 169.254.0.0/16 are link-local anyway; they are listed to be named.
 */
static const uint32_t metadata4[] = {
	0xa9fea9feu,	/* 169.254.169.254: AWS, GCP, Azure, OpenStack,
			   Oracle, DigitalOcean, ... */
	0xa9feaa02u,	/* 169.254.170.2: AWS ECS task credentials */
	0x646464c8u,	/* 100.100.100.200: Alibaba Cloud ECS */
	0xc00000c0u,	/* 192.0.0.192: Oracle Cloud Classic */
	0xa83f8110u,	/* 168.63.129.16: Azure's WireServer (a VM's
			   goal state and extension settings) */
};

/* Metadata services at an IPv6 address. */
static const unsigned char metadata6[][16] = {
	/* fd00:ec2::254: AWS IMDS on Nitro instances */
	{ 0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54 },
};

/* The names metadata services answer to (resolving to 169.254.169.254). */
static const char *const metadata_names[] = {
	"metadata.google.internal",
	"metadata",			/* GCP's short name */
	"instance-data",		/* AWS */
	"instance-data.ec2.internal",
};

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static enum addr_kind
kind_v4(uint32_t a)
{
	size_t	i;

	for (i = 0; i < NELEM(metadata4); i++)
		if (a == metadata4[i])
			return ADDR_METADATA;
	if ((a >> 16) == 0xa9fe)		/* 169.254.0.0/16 */
		return ADDR_LINK_LOCAL;
	if ((a >> 24) == 127 || a == 0)		/* 127/8; 0.0.0.0 is here */
		return ADDR_LOOPBACK;
	return ADDR_OTHER;
}

/* The IPv4 address of four bytes at b[i], b[j], b[k], b[l]. */
static uint32_t
v4_at(const unsigned char *b, int i, int j, int k, int l)
{
	return (uint32_t)b[i] << 24 | (uint32_t)b[j] << 16 |
	    (uint32_t)b[k] << 8 | b[l];
}

/*
 * The more internal of two kinds: metadata, then link-local; else a, the
 * kind the caller reads first.
 */
static enum addr_kind
worse(enum addr_kind a, enum addr_kind b)
{
	if (a == ADDR_METADATA || b == ADDR_METADATA)
		return ADDR_METADATA;
	if (a == ADDR_LINK_LOCAL || b == ADDR_LINK_LOCAL)
		return ADDR_LINK_LOCAL;
	return a;
}

static enum addr_kind
kind_v6(const unsigned char *b)
{
	static const unsigned char	mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0,
	    0, 0, 0xff, 0xff };
	static const unsigned char	translated[12] = { 0, 0, 0, 0, 0, 0,
	    0, 0, 0xff, 0xff, 0, 0 };
	static const unsigned char	nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
	static const unsigned char	local64[6] = { 0x00, 0x64, 0xff, 0x9b,
	    0x00, 0x01 };
	static const unsigned char	zero[15];
	size_t				i;

	for (i = 0; i < NELEM(metadata6); i++)
		if (memcmp(b, metadata6[i], 16) == 0)
			return ADDR_METADATA;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)	/* fe80::/10 */
		return ADDR_LINK_LOCAL;
	if (memcmp(b, zero, 15) == 0 && (b[15] == 0 || b[15] == 1))
		return ADDR_LOOPBACK;			/* ::1, and :: */
	/*
	 * An IPv4 address in IPv6 clothes is judged as itself: mapped,
	 * translated (RFC 2765), compatible, and the well-known NAT64
	 * prefix (64:ff9b::/96).
	 */
	if (memcmp(b, mapped, 12) == 0 || memcmp(b, translated, 12) == 0 ||
	    memcmp(b, nat64, 12) == 0 || memcmp(b, zero, 12) == 0)
		return kind_v4(v4_at(b, 12, 13, 14, 15));
	/*
	 * The local-use NAT64 prefix (64:ff9b:1::/48, RFC 8215), cut into
	 * prefixes of any length RFC 6052 allows from /48: its IPv4 address
	 * may stand where a /48, /56, /64 or /96 puts it (around the u
	 * octet, byte 8), and the most internal reading counts.
	 */
	if (memcmp(b, local64, 6) == 0)
		return worse(kind_v4(v4_at(b, 12, 13, 14, 15)),
		    worse(worse(kind_v4(v4_at(b, 6, 7, 9, 10)),
		    kind_v4(v4_at(b, 7, 9, 10, 11))),
		    kind_v4(v4_at(b, 9, 10, 11, 12))));
	return ADDR_OTHER;
}

enum addr_kind
addr_kind_of(const struct sockaddr *sa, size_t len)
{
	const struct sockaddr_in	*s4;
	const struct sockaddr_in6	*s6;

	if (sa == NULL)
		return ADDR_OTHER;
	if (sa->sa_family == AF_INET && len >= sizeof(*s4)) {
		s4 = (const struct sockaddr_in *)(const void *)sa;
		return kind_v4(ntohl(s4->sin_addr.s_addr));
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(*s6)) {
		s6 = (const struct sockaddr_in6 *)(const void *)sa;
		return kind_v6(s6->sin6_addr.s6_addr);
	}
	return ADDR_OTHER;
}

enum addr_kind
addr_kind_host(const char *host)
{
	struct in_addr	a4;
	struct in6_addr	a6;
	char		h[256];
	size_t		len, i;

	if (host == NULL)
		return ADDR_OTHER;
	len = strlen(host);
	if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
		host++;
		len -= 2;
	}
	if (len > 1 && host[len - 1] == '.')
		len--;
	if (len == 0 || len >= sizeof(h))
		return ADDR_OTHER;
	memcpy(h, host, len);
	h[len] = '\0';
	if (inet_pton(AF_INET, h, &a4) == 1)
		return kind_v4(ntohl(a4.s_addr));
	if (inet_pton(AF_INET6, h, &a6) == 1)
		return kind_v6(a6.s6_addr);
	for (i = 0; i < NELEM(metadata_names); i++)
		if (strcasecmp(h, metadata_names[i]) == 0)
			return ADDR_METADATA;
	if (strcasecmp(h, "localhost") == 0)
		return ADDR_LOOPBACK;
	return ADDR_OTHER;
}

int
addr_internal(enum addr_kind k)
{
	return k == ADDR_LINK_LOCAL || k == ADDR_METADATA;
}

const char *
addr_kind_name(enum addr_kind k)
{
	switch (k) {
	case ADDR_OTHER:
		return "an ordinary address";
	case ADDR_LOOPBACK:
		return "this host (loopback)";
	case ADDR_LINK_LOCAL:
		return "a link-local address (169.254.0.0/16, fe80::/10)";
	case ADDR_METADATA:
		return "a cloud metadata service";
	}
	return "an ordinary address";
}
