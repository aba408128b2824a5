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

#include "base/text.h"
#include "base/util.h"
#include "config/bulk.h"
#include "intake/accept.h"
#include "provider/tornado.h"
#include "store/admin.h"
#include "store/circuit.h"
#include "store/metrics.h"
#include "store/outbox.h"

#include "cli.h"
#include "status/status.h"

/* ---- the options, one table for every command here ---------------- */

/* What the commands here read from their options. */
struct state_opts {
	struct cli_list_opts	 o;
	const char		*tenant, *destination, *state;
	const char		*note;		/* RESOLVE_NOTE_DEFAULT */
	int			 all, keep_jobs;
	int64_t			 rdays, adays;	/* prune: days kept */
};

/* The commands the rows name (bits). */
#define OBSERVE		0x01
#define STATUS		0x02
#define LIST		0x04
#define ATTEMPTS	0x08
#define CONFLICTS	0x10
#define RESOLVE		0x20
#define PRUNE		0x40

static int	state_note(const char *, void *);

#define CLI_ROWS_OF	struct state_opts
static const struct cli_opt state_rows[] = {
	CLI_OPT_PTR("state", LIST, state, CLI_REQUIRED),
	CLI_OPT_FLAG("all", CONFLICTS, all, 1),
	CLI_OPT_PTR("tenant", OBSERVE | LIST | CONFLICTS, tenant, 0),
	CLI_OPT_PTR("destination", LIST, destination, 0),
	CLI_OPT_FLAG("json", STATUS, o.json, 1),
	CLI_OPT_LIST(LIST | ATTEMPTS | CONFLICTS, o),
	CLI_OPT_FN("note", RESOLVE, state_note),
	CLI_OPT_INT("receipts-days", PRUNE, rdays, 0, 36500),
	CLI_OPT_INT("actions-days", PRUNE, adays, 1, 36500),
	CLI_OPT_FLAG("keep-jobs", PRUNE, keep_jobs, 1),
};
#undef CLI_ROWS_OF

/* --note: a line of text, bounded. */
static int
state_note(const char *arg, void *p)
{
	struct state_opts	*a = p;

	if (!text_valid(arg, HB_TEXT_MAX)) {
		cli_warn("--note: too long or not UTF-8");
		return -1;
	}
	a->note = arg;
	return 0;
}

/*
 * Reads command cmd's options into *a, the read-outs' defaults first;
 * then exactly n operands must follow.  EXIT_OK, or EXIT_USAGE reported.
 */
static int
state_args(int argc, char **argv, unsigned cmd, int n, struct state_opts *a)
{
	memset(a, 0, sizeof(*a));
	a->o.limit = LIST_LIMIT_DEFAULT;
	a->note = RESOLVE_NOTE_DEFAULT;
	a->rdays = PRUNE_RECEIPTS_DAYS_DEFAULT;
	a->adays = PRUNE_ACTIONS_DAYS_DEFAULT;
	return cli_parse(argc, argv, CLI_ROWS(state_rows), cmd, a, NULL, n);
}

/* ---- observe ------------------------------------------------------ */

int
cmd_observe(struct settings *e, int argc, char **argv)
{
	struct state_opts	 a;
	struct accept_req	 req;
	struct accept_res	 res;
	struct obs		 o;
	struct config		*cfg = NULL;
	struct store		*st = NULL;
	char			*body = NULL, out[ACCEPT_JSON_MAX];
	size_t			 len;
	enum tornado_err	 perr;
	int			 rc;

	if ((rc = state_args(argc, argv, OBSERVE, 0, &a)) != EXIT_OK)
		return rc;
	if (a.tenant == NULL)
		return cli_usage();
	memset(&res, 0, sizeof(res));
	if ((rc = cli_read_body(&body, &len)) != EXIT_OK)
		goto out;
	if ((perr = tornado_parse_poll(body, len, &o, res.why,
	    sizeof(res.why))) != TORNADO_OK) {
		res.result = perr == TORNADO_NOMEM ? HB_NOMEM : HB_MALFORMED;
		res.detail = res.why;
	} else {
		if ((rc = cli_open_config(e, CONFIG_READ, &cfg)) != EXIT_OK ||
		    (rc = cli_open_store(e, 0, &st)) != EXIT_OK)
			goto out;
		memset(&req, 0, sizeof(req));
		req.tenant = a.tenant;
		req.obs = &o;
		req.body = body;
		req.bodylen = len;
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

/* ms, a time in unix ms or null, as seconds from now (0 when past). */
static long long
secs_from(const cJSON *ms, int64_t now)
{
	return cJSON_IsNumber(ms) && ms->valuedouble > (double)now ?
	    ((long long)ms->valuedouble - now + 999) / 1000 : 0;
}

/* A name from state.db, for a terminal: "invalid" unless a valid one. */
static const char *
name_of(const cJSON *r, const char *member)
{
	const char	*s = cJSON_GetStringValue(cJSON_GetObjectItem(r, member));

	return s != NULL && text_valid_name(s) ? s : "invalid";
}

/*
 * One line per destination held back or failing: its circuit, its pause,
 * a Retry-After's hold, what it has in flight.
 */
static void
print_circuits(const cJSON *a, int64_t now)
{
	const cJSON	*r;

	cJSON_ArrayForEach(r, a) {
		printf("destination %s of %s: circuit %s, %lld failures in a"
		    " row, %lld in flight", name_of(r, "destination"),
		    name_of(r, "tenant"), name_of(r, "circuit"),
		    (long long)cJSON_GetNumberValue(cJSON_GetObjectItem(r,
		    "failures")), (long long)cJSON_GetNumberValue(
		    cJSON_GetObjectItem(r, "in_flight")));
		if (cJSON_IsNumber(cJSON_GetObjectItem(r, "probe_at")))
			printf(", next probe in %lld s", secs_from(
			    cJSON_GetObjectItem(r, "probe_at"), now));
		if (cJSON_IsNumber(cJSON_GetObjectItem(r, "held_until")))
			printf(", held %lld s more (Retry-After)", secs_from(
			    cJSON_GetObjectItem(r, "held_until"), now));
		if (cJSON_IsTrue(cJSON_GetObjectItem(r, "paused")))
			printf(", paused (hookbox destination resume)");
		printf("\n");
	}
}

/* ---- status ------------------------------------------------------- */

/*
 * What a dead dispatcher would hide in the counts above: when one last
 * recorded (stale past STATUS_HEARTBEAT_STALE_S), and each destination's
 * last error, as the page shows them.
 */
static void
print_health(const struct status_view *v)
{
	const struct store_dest_gauge	*g;
	char				 name[4 * HB_ID_MAX + 1];
	char				 err[4 * STORE_DEST_ERROR_MAX + 1];
	int64_t				 age;
	int				 k;

	if (v->heartbeat_ms == 0)
		printf("dispatcher: none has recorded yet (hookbox dispatch)\n");
	else {
		age = store_age(v->heartbeat_ms, v->now_ms);
		printf("dispatcher: last recorded %lld s ago%s\n",
		    (long long)age, age > STATUS_HEARTBEAT_STALE_S ? ": none"
		    " is recording (hookbox dispatch, or its unit)" : "");
	}
	for (k = 0; k < v->ndests; k++) {
		g = &v->dests[k].g;
		if (g->error_ms > 0)
			printf("destination %s: last error %lld s ago: %s\n",
			    text_escape(g->destination, (size_t)-1, name,
			    sizeof(name)), (long long)store_age(g->error_ms,
			    v->now_ms), text_escape(g->error, (size_t)-1, err,
			    sizeof(err)));
	}
}

int
cmd_status(struct settings *e, int argc, char **argv)
{
	struct state_opts	 a;
	struct status_view	 v;
	struct store		*st = NULL;
	enum store_status	 src;
	enum store_state	 i;
	cJSON			*doc;
	char			*s;
	int			 rc;

	if ((rc = state_args(argc, argv, STATUS, 0, &a)) != EXIT_OK ||
	    (rc = cli_open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = status_read(st, NULL, util_now_ms(), &v);
	store_close(st);
	if (src != STORE_OK)
		return cli_store_fail(e, src);
	if (a.o.json) {
		doc = status_json(&v);
		s = doc != NULL ? cJSON_PrintUnformatted(doc) : NULL;
		cJSON_Delete(doc);
		status_view_free(&v);
		if (s == NULL)
			return cli_store_fail(e, STORE_NOMEM);
		printf("%s\n", s);
		cJSON_free(s);
		return EXIT_OK;
	}
	printf("outbox:");
	for (i = 0; i < STORE_STATE__N; i++)
		printf("%s %lld %s", i > 0 ? "," : "",
		    (long long)v.counts.outbox[i], store_state_name(i));
	printf("\nopen conflicts: %lld\noldest pending: %lld s\n",
	    (long long)v.counts.conflicts_open,
	    (long long)store_counts_age(&v.counts, v.now_ms));
	print_health(&v);
	print_circuits(v.circuits, v.now_ms);
	status_view_free(&v);
	return EXIT_OK;
}

/* ---- operator read-outs and moves ---------------------------------- */

static const struct cli_list_col outbox_cols[] = {
	{ "action", "ACTION", CLI_LIST_TEXT, 0 },
	{ "destination", "DESTINATION", CLI_LIST_TEXT, 0 },
	{ "state", "STATE", CLI_LIST_TEXT, 0 },
	{ "attempts", "ATTEMPTS", CLI_LIST_NUMBER, 0 },
	{ "created_at", "CREATED", CLI_LIST_TIME, 0 },
	{ "next_at", "NEXT", CLI_LIST_TIME, 0 },
	{ "last_status", "STATUS", CLI_LIST_NUMBER, 0 },
	{ "last_error", "LAST ERROR", CLI_LIST_TEXT, 60 },
};
static const struct cli_list_col attempt_cols[] = {
	{ "n", "N", CLI_LIST_NUMBER, 0 },
	{ "owner", "OWNER", CLI_LIST_TEXT, 0 },
	{ "started_at", "STARTED", CLI_LIST_TIME, 0 },
	{ "ended_at", "ENDED", CLI_LIST_TIME, 0 },
	{ "http_status", "STATUS", CLI_LIST_NUMBER, 0 },
	{ "error", "ERROR", CLI_LIST_TEXT, 60 },
};
static const struct cli_list_col conflict_cols[] = {
	{ "id", "ID", CLI_LIST_NUMBER, 0 },
	{ "created_at", "CREATED", CLI_LIST_TIME, 0 },
	{ "tenant", "TENANT", CLI_LIST_TEXT, 0 },
	{ "job_id", "JOB", CLI_LIST_TEXT, 40 },
	{ "kind", "KIND", CLI_LIST_TEXT, 0 },
	{ "recorded", "RECORDED", CLI_LIST_TEXT, 30 },
	{ "observed", "OBSERVED", CLI_LIST_TEXT, 30 },
	{ "seen", "SEEN", CLI_LIST_NUMBER, 0 },
	{ "resolved_at", "RESOLVED", CLI_LIST_TIME, 0 },
	{ "action", "ACTION", CLI_LIST_TEXT, 0 },
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
	if ((rc = cli_open_config(e, CONFIG_READ, &cfg)) != EXIT_OK)
		return rc;
	if ((tenant == NULL ||
	    (rc = cli_known_tenant(cfg, tenant)) == EXIT_OK) &&
	    destination != NULL)
		rc = cli_known_destination(cfg, tenant, destination);
	config_close(cfg);
	return rc;
}

/* f with a read-out's --since and --limit (one more says more exist). */
static struct store_list_filter *
list_filter(struct store_list_filter *f, const struct cli_list_opts *o)
{
	f->since = o->since;
	f->limit = o->limit + 1;
	return f;
}

/* Closes state.db after a read-out, then reports or prints its rows. */
static int
state_print(struct settings *e, struct store *st, enum store_status src,
    cJSON *arr, const struct cli_list_col *cols, size_t n,
    const struct cli_list_opts *o)
{
	store_close(st);
	if (src != STORE_OK) {
		cJSON_Delete(arr);
		return cli_store_fail(e, src);
	}
	return cli_list_print(arr, cols, n, o->json, o->limit);
}

int
cmd_list_state(struct settings *e, int argc, char **argv)
{
	struct store_list_filter	 f;
	struct state_opts		 a;
	struct store			*st = NULL;
	cJSON				*arr = NULL;
	enum store_status		 src;
	enum store_state		 state;
	int				 rc;

	if ((rc = state_args(argc, argv, LIST, 0, &a)) != EXIT_OK)
		return rc;
	/* No --state, or "all": every state (STORE_STATE__N). */
	state = STORE_STATE__N;
	if (a.state != NULL && strcmp(a.state, "all") != 0 &&
	    store_state_parse(a.state, &state) != 0) {
		cli_warn("--state: pending, leased, delivered, dead, unknown"
		    " or all");
		return EXIT_USAGE;
	}
	if ((rc = known_names(e, a.tenant, a.destination)) != EXIT_OK ||
	    (rc = cli_open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	memset(&f, 0, sizeof(f));
	f.tenant = a.tenant;
	f.destination = a.destination;
	src = store_outbox_list(st, state, list_filter(&f, &a.o), &arr);
	return state_print(e, st, src, arr, outbox_cols, NCOLS(outbox_cols),
	    &a.o);
}

int
cmd_attempts(struct settings *e, int argc, char **argv)
{
	struct store_list_filter	 f;
	struct state_opts		 a;
	struct store			*st = NULL;
	cJSON				*arr = NULL;
	enum store_status		 src;
	enum store_state		 state;
	int				 found, rc;

	if ((rc = state_args(argc, argv, ATTEMPTS, 1, &a)) != EXIT_OK ||
	    (rc = cli_open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	memset(&f, 0, sizeof(f));
	if ((src = store_action_state(st, argv[optind], &state, &found)) ==
	    STORE_OK && found)
		src = store_attempts_list(st, argv[optind],
		    list_filter(&f, &a.o), &arr);
	if (src == STORE_OK && !found) {
		store_close(st);
		cli_warn("action %s: no such action", argv[optind]);
		return EXIT_FAIL;
	}
	return state_print(e, st, src, arr, attempt_cols, NCOLS(attempt_cols),
	    &a.o);
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

	if ((rc = cli_open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_outbox_move(st, action, m, util_now_ms(), 0, note,
	    &changed);
	if (src == STORE_OK && !changed)
		src = store_action_state(st, action, &state, &found);
	store_close(st);
	if (src != STORE_OK)
		return cli_store_fail(e, src);
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

static int
by_text(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * requeue by filter: the actions it names (or would move, --dry-run),
 * one a line in the order of their ids, then how many.
 */
static int
requeue_filtered(struct settings *e, const struct store_requeue_filter *f,
    int dry_run)
{
	struct store		 *st = NULL;
	enum store_status	  src;
	const cJSON		 *x;
	const char		**ids;
	cJSON			 *a = NULL;
	int			  n = 0, i, rc;

	if ((rc = cli_open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_outbox_requeue(st, f, dry_run, util_now_ms(),
	    "requeued by an operator", &a);
	store_close(st);
	if (src != STORE_OK)
		return cli_store_fail(e, src);
	if ((ids = calloc((size_t)cJSON_GetArraySize(a) + 1,
	    sizeof(*ids))) == NULL) {
		cJSON_Delete(a);
		return cli_store_fail(e, STORE_NOMEM);
	}
	cJSON_ArrayForEach(x, a)
		ids[n++] = x->valuestring;
	qsort(ids, (size_t)n, sizeof(*ids), by_text);
	for (i = 0; i < n; i++)
		printf("%s\n", ids[i]);
	printf("%d action%s %s\n", n, n == 1 ? "" : "s", dry_run ?
	    "would be requeued (--dry-run: nothing moved)" : "requeued");
	free(ids);
	cJSON_Delete(a);
	return EXIT_OK;
}

/*
 * requeue ACTION, or requeue [--dry-run] with a filter: --state dead
 * (the default) or unknown, --tenant, --destination, and when the rows
 * moved to that state, --since and --until.
 */
int
cmd_requeue(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "state", required_argument, NULL, 's' },
		{ "tenant", required_argument, NULL, 't' },
		{ "destination", required_argument, NULL, 'd' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ NULL, 0, NULL, 0 }
	};
	struct store_requeue_filter	 f;
	int64_t				 now = util_now_ms();
	int				 ch, dry_run = 0, filters = 0, rc;

	memset(&f, 0, sizeof(f));
	f.state = STORE_DEAD;
	while ((ch = cli_next_opt(argc, argv, opts)) != -1) {
		filters += ch != 'n';
		switch (ch) {
		case 'n':
			dry_run = 1;
			break;
		case 's':
			if (strcmp(optarg, "dead") != 0 &&
			    strcmp(optarg, "unknown") != 0) {
				cli_warn("--state: dead or unknown");
				return EXIT_USAGE;
			}
			f.state = optarg[0] == 'd' ? STORE_DEAD :
			    STORE_UNKNOWN;
			break;
		case 't':
			f.tenant = optarg;
			break;
		case 'd':
			f.destination = optarg;
			break;
		case 'S':
		case 'U':
			if (util_parse_since(optarg, now, ch == 'S' ?
			    &f.since : &f.until) != 0) {
				cli_warn("--%s: %s: expected a duration (30m,"
				    " 24h, 7d) or a UTC date (YYYY-MM-DD or"
				    " YYYY-MM-DDTHH:MM:SSZ)", ch == 'S' ?
				    "since" : "until", optarg);
				return EXIT_USAGE;
			}
			break;
		default:
			return cli_usage();
		}
	}
	if (argc - optind == 1 && filters == 0 && !dry_run) {
		if ((rc = move(e, argv[optind], STORE_MOVE_REQUEUE,
		    "requeued by an operator", "dead or unknown")) == EXIT_OK)
			printf("action %s requeued\n", argv[optind]);
		return rc;
	}
	if (argc - optind != 0 || filters == 0) {
		cli_warn("requeue: one ACTION, or a filter (--state, --tenant,"
		    " --destination, --since, --until)");
		return EXIT_USAGE;
	}
	return requeue_filtered(e, &f, dry_run);
}

/*
 * destination pause|resume --tenant T NAME: the dispatchers send nothing
 * to it while it is paused, and its actions' retry horizon does not run.
 */
int
cmd_destination_pause(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tenant", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	struct config_destination	 d;
	struct config			*cfg = NULL;
	struct store			*st = NULL;
	enum config_status		 crc;
	enum store_status		 src;
	const char			*tenant = NULL, *name;
	int				 ch, pause, changed, rc;

	pause = strcmp(argv[0], "pause") == 0;
	while ((ch = cli_next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 't':
			tenant = optarg;
			break;
		default:
			return cli_usage();
		}
	if (argc - optind != 1 || tenant == NULL)
		return cli_usage();
	name = argv[optind];
	if (!text_valid_name(tenant) || !text_valid_name(name)) {
		cli_warn("%s: not a valid tenant or destination name", name);
		return EXIT_USAGE;
	}
	if ((rc = cli_open_config(e, CONFIG_READ, &cfg)) != EXIT_OK)
		return rc;
	crc = config_destination_get(cfg, tenant, name, &d);
	config_close(cfg);
	if (crc == CONFIG_NOTFOUND) {
		cli_warn("destination %s of tenant %s: no such destination",
		    name, tenant);
		return EXIT_FAIL;
	}
	if (crc != CONFIG_OK && crc != CONFIG_INVALID) {
		cli_warn("destination %s: %s", name, config_strerror(crc));
		return EXIT_FAIL;
	}
	if ((rc = cli_open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_circuit_pause(st, tenant, name, pause, util_now_ms(),
	    &changed);
	store_close(st);
	if (src != STORE_OK)
		return cli_store_fail(e, src);
	printf("destination %s %s%s\n", name, changed ? "" : "was already ",
	    pause ? "paused" : "resumed");
	return EXIT_OK;
}

int
cmd_reconcile(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "delivered", no_argument, NULL, 'd' },
		{ "resend", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 }
	};
	int	ch, how = 0, rc;

	while ((ch = cli_next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'd':
		case 'r':
			if (how != 0)
				return cli_usage();
			how = ch;
			break;
		default:
			return cli_usage();
		}
	if (argc - optind != 1 || how == 0)
		return cli_usage();
	/* Said, as requeue says it: the operator sees what moved. */
	if (how == 'd') {
		if ((rc = move(e, argv[optind], STORE_MOVE_DELIVERED,
		    "reconciled by an operator: delivered",
		    "unknown or dead")) == EXIT_OK)
			printf("action %s reconciled: delivered\n",
			    argv[optind]);
		return rc;
	}
	if ((rc = move(e, argv[optind], STORE_MOVE_RESEND,
	    "reconciled by an operator: resend", "unknown")) == EXIT_OK)
		printf("action %s reconciled: to be sent again\n",
		    argv[optind]);
	return rc;
}

int
cmd_conflicts(struct settings *e, int argc, char **argv)
{
	struct store_list_filter	 f;
	struct state_opts		 a;
	struct store			*st = NULL;
	cJSON				*arr = NULL;
	enum store_status		 src;
	int				 rc;

	if ((rc = state_args(argc, argv, CONFLICTS, 0, &a)) != EXIT_OK ||
	    (rc = known_names(e, a.tenant, NULL)) != EXIT_OK ||
	    (rc = cli_open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	memset(&f, 0, sizeof(f));
	f.tenant = a.tenant;
	src = store_conflicts_list(st, a.all, list_filter(&f, &a.o),
	    &arr);
	return state_print(e, st, src, arr, conflict_cols,
	    NCOLS(conflict_cols), &a.o);
}

int
cmd_resolve(struct settings *e, int argc, char **argv)
{
	struct state_opts	 a;
	struct store		*st = NULL;
	enum store_status	 src;
	long long		 id;
	int			 changed, found = 1, resolved = 0, rc;

	if ((rc = state_args(argc, argv, RESOLVE, 1, &a)) != EXIT_OK)
		return rc;
	if (cli_parse_int(argv[optind], 1, INT64_MAX, "ID", &id) != 0)
		return cli_usage();
	if ((rc = cli_open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_conflict_resolve(st, id, a.note, util_now_ms(), &changed);
	if (src == STORE_OK && !changed)
		src = store_conflict_state(st, id, &found, &resolved);
	store_close(st);
	if (src != STORE_OK)
		return cli_store_fail(e, src);
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
	if ((rc = cli_open_config(e, CONFIG_WRITE, &cfg)) != EXIT_OK)
		goto out;
	for (;;) {
		if ((src = store_jobs_ended(st, before, refs, PRUNE_JOBS_BATCH,
		    &n)) != STORE_OK || n == 0)
			break;
		if ((rc = cli_config_done(config_begin(cfg), "jobs", NULL)) !=
		    EXIT_OK)
			goto out;
		for (i = 0; i < n; i++) {
			crc = config_remove(cfg, CONFIG_JOBS, refs[i].tenant,
			    refs[i].job_id);
			if (crc != CONFIG_OK && crc != CONFIG_NOTFOUND) {
				config_rollback(cfg);
				rc = cli_config_done(crc, refs[i].job_id, NULL);
				goto out;
			}
		}
		if ((rc = cli_config_done(config_commit(cfg), "jobs", NULL)) !=
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
		rc = cli_store_fail(e, src);
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
	if ((rc = config_list(cfg, t, NULL, &rows)) != CONFIG_OK)
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
	if ((rc = cli_open_config(e, CONFIG_READ, &cfg)) != EXIT_OK)
		return rc;
	if ((crc = configured_names(cfg, CONFIG_ENDPOINTS, &eps)) ==
	    CONFIG_OK)
		crc = configured_names(cfg, CONFIG_DESTINATIONS, &dests);
	config_close(cfg);
	if ((rc = cli_config_done(crc, "config.db", NULL)) == EXIT_OK &&
	    (src = store_metrics_forget(st, eps, dests, n)) != STORE_OK)
		rc = cli_store_fail(e, src);
	cJSON_free(eps);
	cJSON_free(dests);
	return rc;
}

int
cmd_prune(struct settings *e, int argc, char **argv)
{
	struct state_opts	 a;
	struct store_pruned	 p;
	struct store		*st = NULL;
	enum store_status	 src;
	int64_t			 now = util_now_ms(), day = 86400000;
	int64_t			 jobs = 0, polls = 0, series = 0;
	int			 rc;

	if ((rc = state_args(argc, argv, PRUNE, 0, &a)) != EXIT_OK ||
	    (rc = cli_open_store(e, 0, &st)) != EXIT_OK)
		return rc;
	src = store_prune(st, now - a.rdays * day, now - a.adays * day, &p);
	if (src != STORE_OK) {
		store_close(st);
		return cli_store_fail(e, src);
	}
	if (!a.keep_jobs && (rc = prune_jobs(e, st, now - a.adays * day,
	    &jobs, &polls)) != EXIT_OK)
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
