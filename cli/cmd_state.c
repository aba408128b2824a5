/*
 * The commands over state.db: observe, status, and the operator's
 * read-outs and moves (list, attempts, requeue, reconcile, conflicts,
 * resolve, prune).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accept.h"
#include "store_metrics.h"
#include "store_ops.h"
#include "store_outbox.h"
#include "text.h"
#include "tornado.h"
#include "util.h"

#include "cli.h"

/* ---- observe ------------------------------------------------------ */

int
cmd_observe(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tenant", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	struct accept_req	 req;
	struct accept_res	 res;
	struct obs		 o;
	struct config		*cfg = NULL;
	struct store		*st = NULL;
	char			*body = NULL, out[1024];
	const char		*tenant = NULL;
	ssize_t			 len;
	enum tornado_err	 perr;
	int			 ch, rc;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 't':
			tenant = optarg;
			break;
		default:
			return usage();
		}
	if (argc != optind || tenant == NULL)
		return usage();
	if ((body = malloc(HB_BODY_MAX_DEFAULT)) == NULL) {
		cli_warn("out of memory");
		return EXIT_FAIL;
	}
	memset(&res, 0, sizeof(res));
	if ((len = read_bounded(STDIN_FILENO, body, HB_BODY_MAX_DEFAULT)) < 0) {
		cli_warn("standard input: unreadable or over %d bytes",
		    HB_BODY_MAX_DEFAULT);
		rc = EXIT_FAIL;
		goto out;
	}
	if ((perr = tornado_parse_status(body, (size_t)len, &o, res.why,
	    sizeof(res.why))) != TORNADO_OK) {
		res.result = perr == TORNADO_NOMEM ? HB_NOMEM : HB_MALFORMED;
		res.detail = res.why;
	} else {
		if ((rc = open_config(e, CONFIG_READ, &cfg)) != EXIT_OK ||
		    (rc = open_store(e, 0, &st)) != EXIT_OK)
			goto out;
		memset(&req, 0, sizeof(req));
		req.tenant = tenant;
		req.obs = &o;
		req.body = body;
		req.bodylen = (size_t)len;
		req.now_ms = util_now_ms();
		if (accept_observation(st, cfg, &req, &res) == HB_UNAVAILABLE)
			cli_warn("%s: %s", settings_state_name(e),
			    store_errmsg(st));
	}
	if (accept_res_json(&res, out, sizeof(out)) == 0)
		puts(out);
	rc = hb_result_is_ack(res.result) ? EXIT_OK :
	    res.result == HB_UNAVAILABLE ? EXIT_TEMPFAIL : EXIT_FAIL;
out:
	store_close(st);
	config_close(cfg);
	free(body);
	return rc;
}

/* ---- status ------------------------------------------------------- */

int
cmd_status(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	struct store_counts	 c;
	struct store		*st = NULL;
	enum store_status	 src;
	enum store_state	 i;
	int64_t			 age;
	int			 ch, json = 0, rc;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'j':
			json = 1;
			break;
		default:
			return usage();
		}
	if (argc != optind)
		return usage();
	if ((rc = open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_counts(st, &c);
	store_close(st);
	if (src != STORE_OK)
		return store_fail(e, src);
	age = store_counts_age(&c, util_now_ms());
	if (json) {
		printf("{\"outbox\":{");
		for (i = 0; i < STORE_STATE__N; i++)
			printf("%s\"%s\":%lld", i > 0 ? "," : "",
			    store_state_name(i), (long long)c.outbox[i]);
		printf("},\"conflicts_open\":%lld,\"oldest_pending_age_s\":"
		    "%lld}\n", (long long)c.conflicts_open, (long long)age);
	} else {
		printf("outbox:");
		for (i = 0; i < STORE_STATE__N; i++)
			printf("%s %lld %s", i > 0 ? "," : "",
			    (long long)c.outbox[i], store_state_name(i));
		printf("\nopen conflicts: %lld\noldest pending: %lld s\n",
		    (long long)c.conflicts_open, (long long)age);
	}
	return EXIT_OK;
}

/* ---- operator read-outs and moves ---------------------------------- */

static const struct list_col outbox_cols[] = {
	{ "action", "ACTION", LIST_TEXT, 0 },
	{ "destination", "DESTINATION", LIST_TEXT, 0 },
	{ "state", "STATE", LIST_TEXT, 0 },
	{ "attempts", "ATTEMPTS", LIST_NUMBER, 0 },
	{ "created_at", "CREATED", LIST_TIME, 0 },
	{ "next_at", "NEXT", LIST_TIME, 0 },
	{ "last_status", "STATUS", LIST_NUMBER, 0 },
	{ "last_error", "LAST ERROR", LIST_TEXT, 60 },
};
static const struct list_col attempt_cols[] = {
	{ "n", "N", LIST_NUMBER, 0 },
	{ "owner", "OWNER", LIST_TEXT, 0 },
	{ "started_at", "STARTED", LIST_TIME, 0 },
	{ "ended_at", "ENDED", LIST_TIME, 0 },
	{ "http_status", "STATUS", LIST_NUMBER, 0 },
	{ "error", "ERROR", LIST_TEXT, 60 },
};
static const struct list_col conflict_cols[] = {
	{ "id", "ID", LIST_NUMBER, 0 },
	{ "created_at", "CREATED", LIST_TIME, 0 },
	{ "tenant", "TENANT", LIST_TEXT, 0 },
	{ "job_id", "JOB", LIST_TEXT, 40 },
	{ "kind", "KIND", LIST_TEXT, 0 },
	{ "recorded", "RECORDED", LIST_TEXT, 30 },
	{ "observed", "OBSERVED", LIST_TEXT, 30 },
	{ "seen", "SEEN", LIST_NUMBER, 0 },
	{ "resolved_at", "RESOLVED", LIST_TIME, 0 },
	{ "action", "ACTION", LIST_TEXT, 0 },
};

#define NCOLS(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Checks the names a filter gives against config.db: an unknown tenant
 * or destination is an error, not an empty list.
 */
static int
known_names(struct settings *e, const char *tenant, const char *destination)
{
	struct config	*cfg = NULL;
	int		 rc;

	if (tenant == NULL && destination == NULL)
		return EXIT_OK;
	if ((rc = open_config(e, CONFIG_READ, &cfg)) != EXIT_OK)
		return rc;
	if ((tenant == NULL || (rc = known_tenant(cfg, tenant)) == EXIT_OK) &&
	    destination != NULL)
		rc = known_destination(cfg, tenant, destination);
	config_close(cfg);
	return rc;
}

int
cmd_list_state(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "tenant", required_argument, NULL, 't' },
		{ "destination", required_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'j' },
		{ "limit", required_argument, NULL, 'l' },
		{ "since", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 }
	};
	struct store_list_filter	 f;
	struct list_opts		 o;
	struct store			*st = NULL;
	cJSON				*arr = NULL;
	enum store_status		 src;
	enum store_state		 state;
	const char			*name = NULL;
	int				 ch, rc;

	memset(&f, 0, sizeof(f));
	memset(&o, 0, sizeof(o));
	o.limit = LIST_LIMIT_DEFAULT;
	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 's':
			name = optarg;
			break;
		case 't':
			f.tenant = optarg;
			break;
		case 'D':
			f.destination = optarg;
			break;
		default:
			if (list_opt(ch, &o) != 0)
				return EXIT_USAGE;
		}
	if (argc != optind)
		return usage();
	/* No --state, or "all": every state (STORE_STATE__N). */
	state = STORE_STATE__N;
	if (name != NULL && strcmp(name, "all") != 0 &&
	    store_state_parse(name, &state) != 0) {
		cli_warn("--state: pending, leased, delivered, dead, unknown"
		    " or all");
		return EXIT_USAGE;
	}
	if ((rc = known_names(e, f.tenant, f.destination)) != EXIT_OK ||
	    (rc = open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	f.since = o.since;
	f.limit = o.limit + 1;	/* one more says more exist */
	src = store_outbox_list_where(st, state, &f, &arr);
	store_close(st);
	if (src != STORE_OK)
		return store_fail(e, src);
	return list_print(arr, outbox_cols, NCOLS(outbox_cols), o.json,
	    o.limit);
}

int
cmd_attempts(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "limit", required_argument, NULL, 'l' },
		{ "since", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 }
	};
	struct store_list_filter	 f;
	struct list_opts		 o;
	struct store			*st = NULL;
	cJSON				*arr = NULL;
	enum store_status		 src;
	enum store_state		 state;
	int				 ch, found, rc;

	memset(&f, 0, sizeof(f));
	memset(&o, 0, sizeof(o));
	o.limit = LIST_LIMIT_DEFAULT;
	while ((ch = next_opt(argc, argv, opts)) != -1)
		if (list_opt(ch, &o) != 0)
			return EXIT_USAGE;
	if (argc - optind != 1)
		return usage();
	if ((rc = open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	f.since = o.since;
	f.limit = o.limit + 1;
	if ((src = store_action_state(st, argv[optind], &state, &found)) ==
	    STORE_OK && found)
		src = store_attempts_list_where(st, argv[optind], &f, &arr);
	store_close(st);
	if (src != STORE_OK)
		return store_fail(e, src);
	if (!found) {
		cli_warn("action %s: no such action", argv[optind]);
		return EXIT_FAIL;
	}
	return list_print(arr, attempt_cols, NCOLS(attempt_cols), o.json,
	    o.limit);
}

/* Applies one operator move to an action; 1 when it was not applicable. */
static int
move(struct settings *e, const char *action, enum store_move m,
    const char *note, const char *from)
{
	struct store		*st = NULL;
	enum store_status	 src;
	enum store_state	 state;
	int			 changed, found = 1, rc;

	if ((rc = open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_outbox_move(st, action, m, util_now_ms(), 0, note,
	    &changed);
	if (src == STORE_OK && !changed)
		src = store_action_state(st, action, &state, &found);
	store_close(st);
	if (src != STORE_OK)
		return store_fail(e, src);
	if (!found) {
		cli_warn("action %s: no such action", action);
		return EXIT_FAIL;
	}
	if (!changed) {
		cli_warn("action %s: %s, not %s", action,
		    store_state_name(state), from);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int
cmd_requeue(struct settings *e, int argc, char **argv)
{
	if (argc != 2)
		return usage();
	return move(e, argv[1], STORE_MOVE_REQUEUE, "requeued by an operator",
	    "dead or unknown");
}

int
cmd_reconcile(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "delivered", no_argument, NULL, 'd' },
		{ "resend", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 }
	};
	int	ch, how = 0;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'd':
		case 'r':
			if (how != 0)
				return usage();
			how = ch;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 || how == 0)
		return usage();
	if (how == 'd')
		return move(e, argv[optind], STORE_MOVE_DELIVERED,
		    "reconciled by an operator: delivered", "unknown or dead");
	return move(e, argv[optind], STORE_MOVE_RESEND,
	    "reconciled by an operator: resend", "unknown");
}

int
cmd_conflicts(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "tenant", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "limit", required_argument, NULL, 'l' },
		{ "since", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 }
	};
	struct store_list_filter	 f;
	struct list_opts		 o;
	struct store			*st = NULL;
	cJSON				*arr = NULL;
	enum store_status		 src;
	int				 ch, all = 0, rc;

	memset(&f, 0, sizeof(f));
	memset(&o, 0, sizeof(o));
	o.limit = LIST_LIMIT_DEFAULT;
	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'a':
			all = 1;
			break;
		case 't':
			f.tenant = optarg;
			break;
		default:
			if (list_opt(ch, &o) != 0)
				return EXIT_USAGE;
		}
	if (argc != optind)
		return usage();
	if ((rc = known_names(e, f.tenant, NULL)) != EXIT_OK ||
	    (rc = open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	f.since = o.since;
	f.limit = o.limit + 1;
	src = store_conflicts_list_where(st, all, &f, &arr);
	store_close(st);
	if (src != STORE_OK)
		return store_fail(e, src);
	return list_print(arr, conflict_cols, NCOLS(conflict_cols), o.json,
	    o.limit);
}

int
cmd_resolve(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "note", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 }
	};
	struct store		*st = NULL;
	enum store_status	 src;
	const char		*note = RESOLVE_NOTE_DEFAULT;
	long long		 id;
	int			 ch, changed, found = 1, resolved = 0, rc;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'n':
			if (!text_valid(optarg, HB_TEXT_MAX)) {
				cli_warn("--note: too long or not UTF-8");
				return EXIT_USAGE;
			}
			note = optarg;
			break;
		default:
			return usage();
		}
	if (argc - optind != 1 ||
	    parse_int(argv[optind], 1, INT64_MAX, "ID", &id) != 0)
		return usage();
	if ((rc = open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_conflict_resolve(st, id, note, util_now_ms(), &changed);
	if (src == STORE_OK && !changed)
		src = store_conflict_state(st, id, &found, &resolved);
	store_close(st);
	if (src != STORE_OK)
		return store_fail(e, src);
	if (!found) {
		cli_warn("conflict %lld: no such conflict", id);
		return EXIT_FAIL;
	}
	if (!changed) {
		cli_warn("conflict %lld: already resolved", id);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

#define PRUNE_JOBS_BATCH	1000

/*
 * Forgets the jobs that ended (completed or failed) before `before`, a
 * batch at a time: first their rows in config.db's jobs (one
 * transaction), then their job_state and polls rows in state.db (one
 * more).  A crash between the two leaves the job_state rows, which the
 * next prune finds again.  Adds the job_state and polls rows removed to
 * p->jobs and p->polls.
 */
static int
prune_jobs(struct settings *e, struct store *st, int64_t before,
    int64_t *jobs, int64_t *polls)
{
	struct store_job_ref	*refs = NULL;
	struct config		*cfg = NULL;
	enum store_status	 src = STORE_OK;
	enum config_status	 crc;
	int64_t			 was;
	int			 i, n, rc;

	if ((refs = calloc(PRUNE_JOBS_BATCH, sizeof(*refs))) == NULL) {
		cli_warn("out of memory");
		return EXIT_FAIL;
	}
	if ((rc = open_config(e, CONFIG_WRITE, &cfg)) != EXIT_OK)
		goto out;
	for (;;) {
		if ((src = store_jobs_ended(st, before, refs, PRUNE_JOBS_BATCH,
		    &n)) != STORE_OK || n == 0)
			break;
		if ((rc = config_done(config_begin(cfg), "jobs", NULL)) !=
		    EXIT_OK)
			goto out;
		for (i = 0; i < n; i++) {
			crc = config_remove(cfg, CONFIG_JOBS, refs[i].tenant,
			    refs[i].job_id);
			if (crc != CONFIG_OK && crc != CONFIG_NOTFOUND) {
				config_rollback(cfg);
				rc = config_done(crc, refs[i].job_id, NULL);
				goto out;
			}
		}
		if ((rc = config_done(config_commit(cfg), "jobs", NULL)) !=
		    EXIT_OK) {
			config_rollback(cfg);
			goto out;
		}
		was = *jobs;
		if ((src = store_jobs_forget(st, refs, n, before, jobs,
		    polls)) != STORE_OK || n < PRUNE_JOBS_BATCH ||
		    *jobs == was)
			break;
	}
	if (src != STORE_OK)
		rc = store_fail(e, src);
out:
	config_close(cfg);
	free(refs);
	return rc;
}

/*
 * The names configured in table t, as a JSON array in *out (freed with
 * cJSON_free()).
 */
static enum config_status
configured_names(struct config *cfg, enum config_table t, char **out)
{
	cJSON			*rows = NULL, *names, *r, *n;
	enum config_status	 rc;

	*out = NULL;
	if ((rc = config_list(cfg, t, &rows)) != CONFIG_OK)
		return rc;
	if ((names = cJSON_CreateArray()) == NULL) {
		cJSON_Delete(rows);
		return CONFIG_NOMEM;
	}
	cJSON_ArrayForEach(r, rows) {
		n = cJSON_GetObjectItemCaseSensitive(r, "name");
		if (!cJSON_IsString(n) || !cJSON_AddItemToArray(names,
		    cJSON_CreateString(n->valuestring))) {
			rc = CONFIG_NOMEM;
			break;
		}
	}
	if (rc == CONFIG_OK && (*out = cJSON_PrintUnformatted(names)) == NULL)
		rc = CONFIG_NOMEM;
	cJSON_Delete(names);
	cJSON_Delete(rows);
	return rc;
}

/*
 * Removes the metrics series of endpoints and destinations that are no
 * longer configured (a removed tenant's, a replay's): label values stay
 * bounded by what is configured.  *n receives the rows removed.
 */
static int
prune_series(struct settings *e, struct store *st, int64_t *n)
{
	struct config		*cfg = NULL;
	char			*eps = NULL, *dests = NULL;
	enum config_status	 crc;
	enum store_status	 src;
	int			 rc;

	*n = 0;
	if ((rc = open_config(e, CONFIG_READ, &cfg)) != EXIT_OK)
		return rc;
	if ((crc = configured_names(cfg, CONFIG_ENDPOINTS, &eps)) ==
	    CONFIG_OK)
		crc = configured_names(cfg, CONFIG_DESTINATIONS, &dests);
	config_close(cfg);
	if ((rc = config_done(crc, "config.db", NULL)) == EXIT_OK &&
	    (src = store_metrics_forget(st, eps, dests, n)) != STORE_OK)
		rc = store_fail(e, src);
	cJSON_free(eps);
	cJSON_free(dests);
	return rc;
}

int
cmd_prune(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "receipts-days", required_argument, NULL, 'r' },
		{ "actions-days", required_argument, NULL, 'a' },
		{ "keep-jobs", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 }
	};
	struct store_pruned	 p;
	struct store		*st = NULL;
	enum store_status	 src;
	long long		 rdays = PRUNE_RECEIPTS_DAYS_DEFAULT;
	long long		 adays = PRUNE_ACTIONS_DAYS_DEFAULT;
	int64_t			 now = util_now_ms(), day = 86400000;
	int64_t			 jobs = 0, polls = 0, series = 0;
	int			 ch, keep_jobs = 0, rc;

	while ((ch = next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'r':
			if (parse_int(optarg, 0, 36500, "--receipts-days",
			    &rdays) != 0)
				return EXIT_USAGE;
			break;
		case 'a':
			if (parse_int(optarg, 1, 36500, "--actions-days",
			    &adays) != 0)
				return EXIT_USAGE;
			break;
		case 'k':
			keep_jobs = 1;
			break;
		default:
			return usage();
		}
	if (argc != optind)
		return usage();
	if ((rc = open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_prune(st, now - rdays * day, now - adays * day, &p);
	if (src != STORE_OK) {
		store_close(st);
		return store_fail(e, src);
	}
	if (!keep_jobs && (rc = prune_jobs(e, st, now - adays * day, &jobs,
	    &polls)) != EXIT_OK)
		cli_warn("ended jobs not pruned: config.db must be writable"
		    " (run as its owner), or give --keep-jobs");
	/* Series are a nicety: a config.db it cannot read only leaves them. */
	if (prune_series(e, st, &series) != EXIT_OK)
		cli_warn("metrics series of removed endpoints and destinations"
		    " not pruned: config.db must be readable");
	store_close(st);
	printf("pruned %lld receipts, %lld delivered actions, %lld ended"
	    " jobs, %lld poll marks, %lld metrics series\n",
	    (long long)p.receipts, (long long)p.actions, (long long)jobs,
	    (long long)polls, (long long)series);
	return rc;
}
