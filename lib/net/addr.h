/*
 * net/addr.h: what kind of place an address or a host name is, for the
 * dispatcher's outgoing requests: a destination must not turn into a
 * request from this server to a cloud metadata service (instance
 * credentials) or to something on the local link, unless the operator
 * said so for that destination.
 *
 * Internal, here, means link-local or a cloud metadata service; loopback
 * is not internal (the application often runs on the same host), nor are
 * private networks (10/8, 192.168/16, fc00::/7 but the listed ones).
 *
 * Pure functions over what they are given: no resolving, no network.
 * Transactions: none; no database.
 */
#ifndef HB_ADDR_H
#define HB_ADDR_H

#include <sys/socket.h>

#include "base/hb.h"

enum addr_kind {
	ADDR_OTHER = 0,		/* nothing to say: public or private */
	ADDR_LOOPBACK,		/* 127.0.0.0/8, ::1, 0.0.0.0, :: (this host) */
	ADDR_LINK_LOCAL,	/* 169.254.0.0/16, fe80::/10 */
	ADDR_METADATA		/* a cloud metadata service's address or name */
};

/*
 * An IPv4 or IPv6 socket address (len bytes at sa).  An IPv4 address
 * carried in IPv6 (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64's
 * 64:ff9b::a.b.c.d) is judged as that IPv4 address.  Any other family is
 * ADDR_OTHER.
 */
HB_API enum addr_kind addr_kind_of(const struct sockaddr *sa, size_t len);

/*
 * A host as libcurl's URL parser gives it (http_url_host()): an IPv4
 * address in dotted decimal, an IPv6 address with or without its
 * brackets, or a name.  A name is ADDR_METADATA when it is a metadata
 * service's own (metadata.google.internal, ...), ADDR_LOOPBACK for
 * "localhost", else ADDR_OTHER: what a name resolves to is judged when
 * the dispatcher connects (net/http.h).  Case and one trailing dot do not
 * matter.
 */
HB_API enum addr_kind addr_kind_host(const char *host);

/* Non-zero for the kinds refused unless allowed: link-local, metadata. */
HB_API int addr_internal(enum addr_kind);

/* "a link-local address (169.254.0.0/16, fe80::/10)", ...: static. */
HB_API const char *addr_kind_name(enum addr_kind);

#endif
