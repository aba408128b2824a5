/*
 * config/map.h: endpoints of kind mapped, whose format is a declared mapping
 * (provider/mapping.h; hookbox(1), MAPPED ENDPOINTS), in config.db: adding one,
 * changing and reading its mapping.  A configuration made before there were any
 * is upgraded by config_upgrade() (config/config.h).
 *
 * Transactions: each write is self-contained, or caller-owned between
 * config_begin() and config_commit() (config/admin.h), its checks and
 * its write in that one transaction; a read is self-contained, or inside
 * config_snapshot().
 *
 * A mapping is stored as its canonical text (mapping_text()) in the
 * endpoints' column mapping: there for kind mapped, and only for it.
 * Every write parses it (mapping_parse()) and requires its destination to
 * be one of the endpoint's tenant's; every read of it parses it again.  The
 * snapshot a responder answers from (config/cache.h) holds each mapped
 * endpoint's mapping parsed (struct config_endpoint's mapping); a change
 * made here bumps the configuration's version, so that the next request
 * is answered with it.  A destination that a mapping names is not
 * removed (config_remove(): CONFIG_REFUSED; config_referrer() names the
 * endpoint).
 */
#ifndef HB_CONFIG_MAP_H
#define HB_CONFIG_MAP_H

#include <stddef.h>

#include "config/config.h"

/*
 * Adds an endpoint (CONFIG_WRITE only) as config_endpoint_add() does,
 * with its mapping: text (len bytes, at most MAPPING_TEXT_MAX) for kind
 * mapped, NULL for the others.  On refusal why (whylen bytes) says what
 * is wrong, in a sentence: CONFIG_INVALID for a field, for a mapping
 * given to another kind or none to kind mapped, for a mapping that does
 * not parse (mapping_parse()'s own words, naming the member);
 * CONFIG_REFUSED for a mapping whose destination is not one of the
 * tenant's, or a tenant that does not exist; CONFIG_EXISTS for a name
 * that is taken.  The endpoint's secrets are added as for any other
 * (config_secret_add()).
 */
HB_API enum config_status config_endpoint_add_mapped(struct config *,
    const struct config_endpoint *, const char *text, size_t len,
    char *why, size_t whylen) HB_MUST_CHECK;

/*
 * Replaces a mapped endpoint's mapping (CONFIG_WRITE only), checked as
 * config_endpoint_add_mapped() checks it.  No such endpoint:
 * CONFIG_NOTFOUND; one of another kind: CONFIG_INVALID, with why.
 */
HB_API enum config_status config_endpoint_set_mapping(struct config *,
    const char *endpoint, const char *text, size_t len, char *why,
    size_t whylen) HB_MUST_CHECK;

/*
 * An endpoint's mapping in its canonical form (mapping_text()), into
 * *text: allocated, the caller frees it with free(); NULL for an
 * endpoint of another kind.  No such endpoint: CONFIG_NOTFOUND; a stored
 * mapping that does not parse: CONFIG_INVALID.
 */
HB_API enum config_status config_endpoint_mapping(struct config *,
    const char *endpoint, char **text) HB_MUST_CHECK;

#endif
