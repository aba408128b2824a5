/*
 * config/map.c: mapped endpoints in config.db (config/map.h): their
 * mapping checked, written and read.  The SQL it runs is config/config.c's, by
 * statement enum; config_upgrade() is config/config.c's too, beside
 * config_open(), and so is the look-up of the endpoints whose mapping
 * names a destination (config_dest_mapped_by(), config/config_int.h), which the
 * removals below this module ask.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "config/admin.h"
#include "config/config_int.h"
#include "config/map.h"
#include "provider/mapping.h"
#include "provider/scheme.h"

/*
 * The headers each authentication signs, a mapping's fields may come
 * from (mapping_unsigned_field()): Standard Webhooks signs its id and
 * timestamp with the body; hmac (t= and the body) and a shared key sign
 * no header.
 */
static const char *const standard_signs[] = {
	"webhook-id", "webhook-timestamp", NULL
};

/*
 * The authentication of an endpoint whose mapping is m and whose auth
 * is given: a mapping that declares a signature is the endpoint's
 * authentication, and auth scheme is the signature a mapping declares.
 * -1 with why filled when the two disagree.
 */
static int
agree(const struct mapping *m, enum config_auth auth, char *why,
    size_t whylen)
{
	if (mapping_scheme(m) != NULL && auth != CONFIG_AUTH_SCHEME) {
		(void)snprintf(why, whylen, "signature: the mapping declares"
		    " how the provider signs, so the endpoint's"
		    " authentication is scheme, not %s",
		    config_auth_name(auth));
		return -1;
	}
	if (mapping_scheme(m) == NULL && auth == CONFIG_AUTH_SCHEME) {
		(void)snprintf(why, whylen, "signature: missing: the"
		    " endpoint's authentication is the signature its mapping"
		    " declares (auth scheme)");
		return -1;
	}
	return 0;
}

/*
 * The mapping text (len bytes) for an endpoint of tenant authenticated
 * by auth, checked: it parses, its signature and auth agree (agree()),
 * every field it takes from a header is one the authentication signs,
 * and every destination it names is one of the tenant's.  With adopt, a mapping
 * that declares a signature makes *auth scheme.  Into *canon its
 * canonical text (free()), or the status and why.
 */
static enum config_status
check(struct config *c, const char *tenant, enum config_auth *auth,
    int adopt, const char *text, size_t len, char **canon, char *why,
    size_t whylen)
{
	struct config_tenant		 t;
	struct config_destination	 d;
	struct mapping			*m;
	enum config_status		 rc;
	const char			*field, *header = NULL, *dest;
	const char *const		*signs;
	char				 esc[HB_ID_MAX * 4 + 1];
	size_t				 i;

	*canon = NULL;
	if ((rc = config_tenant_get(c, tenant, &t)) == CONFIG_NOTFOUND) {
		(void)snprintf(why, whylen, "tenant %s does not exist", tenant);
		return CONFIG_REFUSED;
	}
	if (rc != CONFIG_OK)
		return rc;
	if ((m = config_mapping_parse(text, len, &rc, why, whylen)) == NULL)
		return rc;
	if (adopt && mapping_scheme(m) != NULL)
		*auth = CONFIG_AUTH_SCHEME;
	if (agree(m, *auth, why, whylen) != 0) {
		mapping_free(m);
		return CONFIG_INVALID;
	}
	if (*auth == CONFIG_AUTH_SCHEME)
		signs = scheme_signed_headers(mapping_scheme(m));
	else
		signs = *auth == CONFIG_AUTH_STANDARD ? standard_signs : NULL;
	if ((field = mapping_unsigned_field(m, signs, &header)) != NULL) {
		(void)snprintf(why, whylen, "%s comes from header %s, which %s"
		    " authentication does not sign: a signed request sent"
		    " again with another %s would be another event; take it"
		    " from the body%s", field, header, config_auth_name(*auth),
		    header, *auth == CONFIG_AUTH_SCHEME ? ", or sign it"
		    " ({header:NAME} in signature.signed)" :
		    *auth == CONFIG_AUTH_STANDARD ? "" : ", or use"
		    " --auth standard, which signs webhook-id and"
		    " webhook-timestamp");
		mapping_free(m);
		return CONFIG_INVALID;
	}
	/* Every destination it names, the mapping's and its steps'. */
	for (i = 0, rc = CONFIG_OK; rc == CONFIG_OK &&
	    (dest = mapping_destination_at(m, i)) != NULL; i++)
		if ((rc = config_destination_get(c, tenant, dest, &d)) ==
		    CONFIG_NOTFOUND) {
			(void)snprintf(why, whylen, "destination \"%s\" is not"
			    " one of tenant %s's destinations (destination add"
			    " makes one)", text_escape(dest, (size_t)-1, esc,
			    sizeof(esc)), tenant);
			rc = CONFIG_REFUSED;
		}
	if (rc == CONFIG_OK && (*canon = mapping_text(m)) == NULL)
		rc = CONFIG_NOMEM;
	mapping_free(m);
	return rc;
}

enum config_status
config_endpoint_add_mapped(struct config *c, const struct config_endpoint *e,
    const char *text, size_t len, char *why, size_t whylen)
{
	enum config_auth	 auth = e->auth;
	enum config_status	 rc;
	const char		*f;
	char			*canon = NULL;

	(void)snprintf(why, whylen, "%s", "");
	if ((rc = config_writable(c, &f)) != CONFIG_OK)
		return rc;
	if ((f = config_endpoint_invalid(e)) != NULL) {
		(void)snprintf(why, whylen, "invalid %s", f);
		return CONFIG_INVALID;
	}
	if (e->kind != CONFIG_KIND_MAPPED && text != NULL) {
		(void)snprintf(why, whylen, "kind %s takes no mapping (only"
		    " kind mapped does)", config_kind_name(e->kind));
		return CONFIG_INVALID;
	}
	if (e->kind == CONFIG_KIND_MAPPED && text == NULL) {
		(void)snprintf(why, whylen, "kind mapped needs a mapping");
		return CONFIG_INVALID;
	}
	if (text != NULL && (rc = check(c, e->tenant, &auth, 0, text, len,
	    &canon, why, whylen)) != CONFIG_OK)
		return rc;
	rc = config_endpoint_insert(c, e, canon);
	free(canon);
	return rc;
}

enum config_status
config_endpoint_set_mapping(struct config *c, const char *endpoint,
    const char *text, size_t len, char *why, size_t whylen)
{
	struct config_endpoint	 e;
	struct db_stmt		*st;
	enum config_status	 rc;
	const char		*f;
	char			*canon = NULL;

	(void)snprintf(why, whylen, "%s", "");
	if ((rc = config_writable(c, &f)) != CONFIG_OK)
		return rc;
	if ((rc = config_endpoint_get(c, endpoint, &e)) != CONFIG_OK)
		return rc;
	if (e.kind != CONFIG_KIND_MAPPED) {
		(void)snprintf(why, whylen, "endpoint %s is of kind %s: only"
		    " kind mapped has a mapping", e.name,
		    config_kind_name(e.kind));
		return CONFIG_INVALID;
	}
	if ((rc = check(c, e.tenant, &e.auth, 1, text, len, &canon, why,
	    whylen)) != CONFIG_OK)
		return rc;
	if ((st = config_stmt(c, CONFIG_Q_ENDPOINT_SET_MAPPING, &rc)) == NULL)
		goto out;
	if (db_bind_opt(st, 1, e.name) != DB_OK ||
	    db_bind_opt(st, 2, canon) != DB_OK ||
	    db_bind_opt(st, 3, config_auth_name(e.auth)) != DB_OK) {
		rc = CONFIG_NOMEM;
		goto out;
	}
	if ((rc = config_write(c, st)) == CONFIG_OK && db_changes(st) == 0)
		rc = CONFIG_NOTFOUND;
out:
	free(canon);
	return rc;
}

enum config_status
config_endpoint_mapping(struct config *c, const char *endpoint, char **text)
{
	struct config_endpoint	 e;
	struct mapping		*m;
	struct db_stmt		*st;
	enum config_status	 rc;
	enum db_rc		 drc;
	const char		*t;
	char			 why[256];

	*text = NULL;
	if ((st = config_stmt(c, CONFIG_Q_ENDPOINT_GET, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, endpoint) != DB_OK)
		return CONFIG_NOMEM;
	if ((drc = db_step(st)) != DB_ROW)
		return drc == DB_DONE ? CONFIG_NOTFOUND :
		    config_status_of(c, drc);
	if ((rc = config_row_endpoint(st, &e)) == CONFIG_OK &&
	    e.kind == CONFIG_KIND_MAPPED) {
		t = db_col_text(st, 6);
		if ((m = config_mapping_parse(t, strlen(t), &rc, why,
		    sizeof(why))) != NULL &&
		    (*text = mapping_text(m)) == NULL)
			rc = CONFIG_NOMEM;
		mapping_free(m);
	}
	db_reset(st);
	return rc;
}
