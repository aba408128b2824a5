/*
 * cli/disorder.h: the delivery-disorder tester (hookbox(1), DISORDER): sends
 * a running instance the disorder its providers cause, and checks, in
 * state.db, that it made of it what it promises.
 *
 * Against one endpoint of the site (its format: its kind, its mapping,
 * its authentication mode and header), it works under a tenant of its
 * own, disorder-XXXXXXXX, made in config.db for the run: the tenant, a
 * copy of the endpoint (with a secret of the tester's own; the site's are
 * never read), a destination named as the tenant (the copied mapping
 * names it: no series of the site's destinations counts the run), its URL
 * the sink given, by default a loopback port nothing listens on, so that
 * nothing leaves the host; and for Tornado endpoints the other route and
 * a job per case.  It sends signed requests to BASE/hooks/<its endpoint>
 * over HTTP, through whatever stands in front of the responder, each
 * signed as it is sent and a 503 sent again after its Retry-After (5
 * times at most) as a provider does, and checks the answers and the rows
 * the tenant has in state.db.  After, whatever happened, it removes its
 * endpoints, then the tenant's rows in state.db (once none of its actions
 * is being delivered, 10 s at most; while rows stay, their configuration
 * stays too), then the rest of what it made in config.db.
 *
 * The cases, each a row of the report:
 *
 *   same event twice	 the first accepted, the second a duplicate,
 *			 one action
 *   same event, new id	 (mapped) the same event under another event id:
 *			 a duplicate, no new action
 *   N at once		 one new event sent N times together: one
 *			 accepted, the others duplicates, one action
 *   older after newer	 (mapped) version 4, then version 3: the older
 *			 one is stale, makes no action, and the subject
 *			 stays at version 4
 *   routes raced	 (Tornado) the job's callback and the organization
 *			 event, N in all, together: one action
 *   timeout after	 the connection dropped once the request is
 *   success		 written, before the answer is read; its action
 *			 waited for (10 s at most); then sent again: a
 *			 duplicate (accepted if the first never landed:
 *			 a proxy may end a request whose client left),
 *			 and one action
 *   older than undo	 (mapped, with an undo sample) an undo at version
 *			 7, then an approval of version 6: stale; the
 *			 subject stays undone at 7
 *   the event log	 the tenant's actions, receipts and open
 *			 conflicts are what the cases made, and no more
 *
 * A mapped endpoint's sample is one request body of a type that takes
 * effect (and the undo sample one of a type that undoes); the tester
 * writes its own subject, event ids, versions and occurrences into it
 * where the mapping reads them (mapping_restamp()).  Tornado's bodies
 * are the tester's own.
 *
 * Transactions: config.db writes of its own (one transaction to set up,
 * one for a Tornado endpoint's jobs, one per removal after); state.db
 * reads, and store_tenant_forget().
 */
#ifndef HB_DISORDER_H
#define HB_DISORDER_H

#include <stddef.h>
#include <stdint.h>

#include "base/hb.h"

struct config;
struct store;

#define DISORDER_ROWS_MAX	8
#define DISORDER_AT_ONCE_DEFAULT	8
#define DISORDER_TIMEOUT_MS_DEFAULT	10000

struct disorder_opts {
	const char	*base;		/* "http://127.0.0.1:8080": requests
					   go to BASE/hooks/NAME */
	const char	*endpoint;	/* the site's endpoint, whose format
					   is tried */
	const char	*sample;	/* mapped: a body whose type takes
					   effect */
	size_t		 samplelen;
	const char	*undo;		/* mapped, or NULL: one whose type
					   undoes */
	size_t		 undolen;
	const char	*sink;		/* the test destination's URL; NULL:
					   a loopback port nothing answers */
	int		 at_once;	/* 2 .. HTTP_BATCH_MAX */
	long		 timeout_ms;	/* each request's */
	/* Asked between the cases, or NULL: non-zero stops the run (the
	   clean-up is still done). */
	int		(*stop)(void *);
	void		*stop_arg;
};

enum disorder_verdict {
	DISORDER_PASS = 0,
	DISORDER_FAIL,		/* inconsistent: the promise was broken */
	DISORDER_SKIP		/* not for this kind of endpoint */
};

struct disorder_row {
	const char		*name;		/* static storage */
	char			 expected[160];
	char			 seen[256];
	enum disorder_verdict	 verdict;
};

struct disorder_report {
	char			tenant[HB_ID_MAX + 1];
	struct disorder_row	rows[DISORDER_ROWS_MAX];
	size_t			n;
	int			failed;		/* rows that failed */
	int			skipped;	/* rows skipped */
	int			interrupted;	/* opts.stop said so */
	int64_t			removed;	/* state.db rows removed after */
	int			left;		/* something could not be
						   removed: see why */
};

/*
 * Runs the cases.  cfg is config.db opened for writing, st state.db, of
 * the instance at opts->base.  Returns 0 when the cases ran: the report
 * says how each went (and, with left set, why says what the clean-up
 * could not remove).  Returns -1 when they could not run, with why
 * naming what was wrong: the endpoint, a sample that does not fit its
 * mapping (a mapping that reads the type from a header cannot be tried:
 * a sample carries no header), the configuration, out of memory.
 */
HB_API int disorder_run(struct config *cfg, struct store *st,
    const struct disorder_opts *opts, struct disorder_report *rep,
    char *why, size_t whylen) HB_MUST_CHECK;

#endif
