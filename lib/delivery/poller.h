/*
 * delivery/poller.h: asking the provider's job API about unfinished jobs
 * (polling; "status" is the operator's view, lib/status/).
 *
 * For each registered job of an active tenant with a job API base URL
 * (its status_base, as the tool has always called it) whose recorded
 * state is not terminal, GET {base}/jobs/{id} with the tenant's key in
 * x-api-key, parse the answer and run it through the same acceptance
 * routine as a webhook.  One failing job does not stop the others.
 *
 * Transactions: self-contained: each result is accepted in its own
 * transaction, and none is held across a network request.
 */
#ifndef HB_POLLER_H
#define HB_POLLER_H

#include "intake/accept.h"

struct http;

struct poll_report {
	const char		*tenant;
	const char		*job_id;
	const struct accept_res	*res;	/* NULL when the job could not be asked */
	const char		*error;	/* why not, or NULL */
};

struct poll_stats {
	int	asked;		/* requests sent */
	int	answered;	/* answers run through acceptance */
	int	failed;		/* no usable answer */
	int	unavailable;	/* acceptance could not commit */
};

/*
 * Polls at most limit unfinished jobs, those asked about least recently
 * first (never asked: first of all), so that jobs the API keeps answering
 * "Processing" or 404 for cannot starve the others.  report (may be NULL)
 * is called once per job asked.  Returns STORE_OK unless state.db itself
 * failed.
 */
HB_API enum store_status poller_run(struct store *, struct config *,
    struct http *, int limit, long timeout_ms,
    void (*report)(void *arg, const struct poll_report *), void *arg,
    struct poll_stats *) HB_MUST_CHECK;

#endif
