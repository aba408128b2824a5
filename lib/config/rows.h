/*
 * config/rows.h: config.db's rows as their readers see them, as types
 * alone: a tenant, an endpoint, a destination, a registered job, and the
 * names of an endpoint's kind and authentication.  config/config.h reads
 * them; the acceptance rules (intake/decide.h) decide over a job without
 * seeing how it is read.
 *
 * Transactions: none; no database.
 */
#ifndef HB_CONFIG_ROWS_H
#define HB_CONFIG_ROWS_H

#include <stdint.h>

#include "base/hb.h"

struct mapping;

/* tornado-job, tornado-org; mapped: a declared format (config/map.h). */
enum config_kind { CONFIG_KIND_JOB = 0, CONFIG_KIND_ORG, CONFIG_KIND_MAPPED };
/* scheme: the one the endpoint's mapping declares (provider/scheme.h). */
enum config_auth {
	CONFIG_AUTH_HMAC = 0, CONFIG_AUTH_KEY, CONFIG_AUTH_STANDARD,
	CONFIG_AUTH_SCHEME
};

struct config_tenant {
	char	id[HB_ID_MAX + 1];
	int	active;
	char	status_base[HB_TEXT_MAX + 1];	/* provider status API base URL */
};

struct config_endpoint {
	char			name[HB_ID_MAX + 1];
	char			tenant[HB_ID_MAX + 1];
	enum config_kind	kind;
	enum config_auth	auth;
	/* key: the header carrying the key; hmac: the signature header
	   ("" for X-Tornado-Signature); unused for standard. */
	char			key_header[HB_ID_MAX + 1];
	int64_t			tolerance;	/* seconds */
	/*
	 * Kind mapped: its mapping, parsed (provider/mapping.h), when the
	 * endpoint comes from a snapshot (config_snap_endpoint()): the
	 * snapshot's, valid while it is held.  NULL for the other kinds, and
	 * from config_endpoint_get(), whose caller reads the mapping's text
	 * with config_endpoint_mapping() (config/map.h).
	 */
	const struct mapping	*mapping;
};

struct config_destination {
	char	tenant[HB_ID_MAX + 1];
	char	name[HB_ID_MAX + 1];
	char	url[HB_TEXT_MAX + 1];
	int	idempotent;	/* honours Idempotency-Key */
	char	status_url[HB_TEXT_MAX + 1];	/* "" when none */
	int	timeout_ms;
	int	max_attempts;	/* 0: none, the horizon alone */
	int	allow_internal;	/* may go to internal addresses
				   (net/addr.h) */
	/* Its delivery policy (hookbox(1), OUTAGES AND LIMITS): */
	int64_t	retry_for_s;	/* its actions' retry horizon */
	int	max_in_flight;	/* requests at once; 0: no limit */
	int	rate;		/* requests started a second; 0: no limit */
	int	circuit_failures; /* failures in a row that open its
				   circuit; 0: never */
	int64_t	cooldown_s;	/* the circuit's first cool-down */
};

struct config_job {
	char	tenant[HB_ID_MAX + 1];
	char	job_id[HB_ID_MAX + 1];
	char	attempt[HB_ID_MAX + 1];
	char	step[HB_ID_MAX + 1];
	char	destination[HB_ID_MAX + 1];
	char	source_url[HB_TEXT_MAX + 1];
	char	output[HB_TEXT_MAX + 1];	/* output settings, JSON text */
};

#endif
