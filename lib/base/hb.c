/*
 * base/hb.c: the names and meanings of enum hb_result, in one table.
 */
#include <string.h>

#include "base/hb.h"

static const struct {
	const char	*name;
	const char	*text;
	int		 ack;
} results[HB_RESULT__N] = {
	[HB_ACCEPTED] = { "accepted", "a new pending action was committed", 1 },
	[HB_DUPLICATE] = { "duplicate", "the action was already accepted", 1 },
	[HB_RECORDED] = { "recorded", "observation recorded; no action", 1 },
	[HB_STALE] = { "stale", "older than the recorded state; ignored", 1 },
	[HB_CONFLICT] = { "conflict",
	    "contradicting terminal state recorded for reconciliation", 1 },
	[HB_IGNORED] = { "ignored", "unknown event type, recorded", 1 },
	[HB_MALFORMED] = { "malformed", "malformed payload", 0 },
	[HB_UNAUTHORIZED] = { "unauthorized",
	    "missing or bad signature, key or timestamp", 0 },
	[HB_UNKNOWN_ENDPOINT] = { "unknown_endpoint",
	    "no such endpoint or tenant", 0 },
	[HB_ACTION_CONFLICT] = { "action_conflict",
	    "the action id already maps to another job (recorded)", 0 },
	[HB_UNKNOWN_JOB] = { "unknown_job",
	    "job not registered to this tenant", 0 },
	[HB_UNAVAILABLE] = { "unavailable",
	    "not committed: database busy or failing; retry later", 0 },
	[HB_NOMEM] = { "unavailable", "out of memory; nothing committed", 0 },
};

static int
valid(enum hb_result r)
{
	return (unsigned)r < sizeof(results) / sizeof(results[0]);
}

const char *
hb_result_name(enum hb_result r)
{
	return valid(r) ? results[r].name : "unavailable";
}

int
hb_result_parse(const char *s, enum hb_result *out)
{
	unsigned	i;

	for (i = 0; s != NULL && i < sizeof(results) / sizeof(results[0]);
	    i++)
		if (results[i].name != NULL && strcmp(results[i].name, s) == 0) {
			*out = (enum hb_result)i;
			return 0;
		}
	return -1;
}

const char *
hb_result_strerror(enum hb_result r)
{
	return valid(r) ? results[r].text : "unknown result";
}

int
hb_result_is_ack(enum hb_result r)
{
	return valid(r) && results[r].ack;
}
