/*
 * The long-running commands: dispatch (the outbox's deliveries, under a
 * supervisor) and poll (asking the provider about overdue jobs).
 */
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/text.h"
#include "base/util.h"
#include "delivery/dispatch.h"
#include "delivery/poller.h"
#include "net/http.h"
#include "run/super.h"

#include "cli.h"

/* ---- dispatch ------------------------------------------------------ */

/* dispatch --once also waits for what falls due within this. */
#define ONCE_HORIZON_MS	1000


static volatile sig_atomic_t	stop_requested;

static void
on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}


/*
 * A dispatcher's connections, opened again when a file is no longer the
 * one at its path (a restored backup, a removed state.db): a long-running
 * worker must deliver from, and record into, the files operators see.
 */
struct dispatcher {
	struct config	*cfg;
	struct store	*st;
	struct dispatch	*ob;
};

/* Closes d; what its outbox recorded is added to total (may be NULL). */
static void
dispatcher_close(struct dispatcher *d, struct dispatch_stats *total)
{
	struct dispatch_stats	s;

	if (d->ob != NULL && total != NULL) {
		dispatch_stats(d->ob, &s);
		total->delivered += s.delivered;
		total->retried += s.retried;
		total->dead += s.dead;
		total->unknown += s.unknown;
	}
	dispatch_free(d->ob);
	store_close(d->st);
	config_close(d->cfg);
	memset(d, 0, sizeof(*d));
}

static int
dispatcher_open(struct settings *e, const struct dispatch_opts *opts,
    struct dispatcher *d, struct dispatch_stats *total)
{
	int	rc;

	if (d->ob != NULL && store_check_file(d->st) == STORE_OK &&
	    config_same_file(d->cfg))
		return EXIT_OK;
	dispatcher_close(d, total);
	if ((rc = cli_open_config(e, CONFIG_READ, &d->cfg)) != EXIT_OK ||
	    (rc = cli_open_store(e, 0, &d->st)) != EXIT_OK)
		goto fail;
	if ((d->ob = dispatch_new(d->st, d->cfg, opts)) == NULL) {
		cli_warn("out of memory");
		rc = EXIT_FAIL;
		goto fail;
	}
	return EXIT_OK;
fail:
	dispatcher_close(d, total);
	return rc;
}

/* One dispatcher worker: its own connections, its own lease owner id. */
static int
dispatch_worker(struct settings *e, int once)
{
	struct dispatch_opts	 opts;
	struct dispatch_stats	 total;
	struct dispatcher	 d;
	struct log_line		 l;
	enum dispatch_status	 s;
	char			 host[64], owner[HB_ID_MAX + 1];
	int64_t			 wait, t0 = util_now_ms();
	int			 rc;

	memset(&d, 0, sizeof(d));
	memset(&total, 0, sizeof(total));
	memset(&opts, 0, sizeof(opts));
	opts.backoff_base_ms = e->backoff_ms;
	opts.backoff_max_ms = e->backoff_max_ms;
	opts.lease_margin_ms = e->lease_margin_ms;
	opts.recheck_ms = e->recheck_ms;
	if (gethostname(host, sizeof(host)) != 0)
		memcpy(host, "localhost", sizeof("localhost"));
	host[sizeof(host) - 1] = '\0';
	(void)snprintf(owner, sizeof(owner), "%s:%ld", host, (long)getpid());
	opts.owner = owner;
	rc = EXIT_OK;
	while (!stop_requested) {
		if ((rc = dispatcher_open(e, &opts, &d, &total)) != EXIT_OK) {
			if (once)
				break;
			util_sleep_ms(1000);
			continue;
		}
		s = dispatch_step(d.ob);
		if (s == DISPATCH_WORKED)
			continue;
		if (s == DISPATCH_HELD) {
			util_sleep_ms(DISPATCH_HELD_MS);
			continue;
		}
		if (s == DISPATCH_IDLE) {
			/* --once: done when nothing is due within a second. */
			wait = dispatch_idle_ms(d.ob, once ? ONCE_HORIZON_MS :
			    250);
			if (once && wait >= ONCE_HORIZON_MS)
				break;
			util_sleep_ms(wait > 0 ? wait : 1);
			continue;
		}
		log_event(s == DISPATCH_BUSY ? LOG_LV_WARN : LOG_LV_ERROR,
		    "dispatch_error", "db", settings_state_name(e), "error",
		    s == DISPATCH_BUSY ? "busy" : store_errmsg(d.st),
		    (char *)NULL);
		if (once) {
			rc = s == DISPATCH_BUSY ? EXIT_TEMPFAIL : EXIT_FAIL;
			break;
		}
		util_sleep_ms(s == DISPATCH_BUSY ? 50 : 1000);
	}
	if (stop_requested && rc != EXIT_OK && !once)
		rc = EXIT_OK;
	dispatcher_close(&d, &total);
	if (once) {
		log_begin(&l, LOG_LV_INFO, "dispatch_summary");
		log_int(&l, "delivered", total.delivered);
		log_int(&l, "retried", total.retried);
		log_int(&l, "dead", total.dead);
		log_int(&l, "unknown", total.unknown);
		log_int(&l, "duration_ms", util_now_ms() - t0);
		log_int(&l, "exit", rc);
		log_end(&l);
	}
	log_begin(&l, LOG_LV_INFO, "stop");
	log_str(&l, "program", "hookbox dispatch");
	log_str(&l, "owner", owner);
	log_str(&l, "reason", stop_requested ? "signal" : once ? "once" :
	    "error");
	log_int(&l, "exit", rc);
	log_end(&l);
	return rc;
}

/* What each of dispatch --workers N gets: the fork's copy. */
struct dispatch_job {
	struct settings	*e;
	int		 once;
};

static int
dispatch_child(void *arg)
{
	const struct dispatch_job	*j = arg;

	return dispatch_worker(j->e, j->once);
}

int
cmd_dispatch(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "once", no_argument, NULL, 'o' },
		{ "workers", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 }
	};
	struct sigaction	 sa;
	struct super_opts	 so;
	struct dispatch_job	 j;
	struct log_line		 l;
	long long		 workers = 1;
	int			 ch, once = 0;
	char			 shown[PATH_MAX + 64];

	while ((ch = cli_next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'o':
			once = 1;
			break;
		case 'w':
			if (cli_parse_int(optarg, 1, SUPER_WORKERS_MAX,
			    "--workers", &workers) != 0)
				return EXIT_USAGE;
			break;
		default:
			return cli_usage();
		}
	if (argc != optind)
		return cli_usage();
	if (http_global_init(e->proxy) != 0) {
		cli_warn("libcurl failed to initialise");
		return EXIT_FAIL;
	}
	/* Every batch allocates and frees much the same memory. */
	util_keep_heap();
	/*
	 * SIGTERM: finish the batch in flight, record it, then leave.  With
	 * --workers the supervisor takes the signal and passes it on to each
	 * worker, which starts with this handler (run/super.h).
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* One line at start-up: which build serves which directory. */
	log_begin(&l, LOG_LV_INFO, "start");
	log_str(&l, "program", "hookbox dispatch");
	log_str(&l, "version", HB_VERSION);
	log_str(&l, "dir", e->shown);
	log_str(&l, "backend", e->backend);
	log_int(&l, "workers", workers);
	log_str(&l, "once", once ? "yes" : "no");
	/* HOOKBOX_PROXY's, its credentials masked; never the environment's. */
	if (e->proxy[0] == '\0' ||
	    text_url_redact(e->proxy, shown, sizeof(shown)) != 0)
		(void)snprintf(shown, sizeof(shown), "%s", e->proxy[0] == '\0' ?
		    "none" : "(set)");
	log_str(&l, "proxy", shown);
	log_end(&l);
	if (workers == 1)
		return dispatch_worker(e, once);
	/*
	 * Run to completion, not respawned: a worker left under init would
	 * go on claiming and sending beside the dispatcher started next, so
	 * each dies with the supervisor.  The exit status is the first
	 * failing worker's.
	 */
	memset(&so, 0, sizeof(so));
	so.name = "hookbox";
	so.workers = (int)workers;
	so.respawn = 0;
	j.e = e;
	j.once = once;
	return super_run(&so, dispatch_child, &j);
}

/* ---- poll ---------------------------------------------------------- */

static void
poll_report(void *arg, const struct poll_report *r)
{
	char	out[ACCEPT_JSON_MAX];

	(void)arg;
	if (r->res != NULL && accept_res_json(r->res, out, sizeof(out)) == 0)
		printf("%s\t%s\t%s\n", r->tenant, r->job_id, out);
	else
		printf("%s\t%s\t{\"error\":\"%s\"}\n", r->tenant, r->job_id,
		    r->error != NULL ? r->error : "unknown");
}

int
cmd_poll(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "limit", required_argument, NULL, 'l' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 }
	};
	struct poll_stats	 ps;
	struct log_line		 l;
	struct config		*cfg = NULL;
	struct store		*st = NULL;
	struct http		*http = NULL;
	enum store_status	 src;
	long long		 limit = POLL_LIMIT_DEFAULT;
	long long		 timeout = POLL_TIMEOUT_MS_DEFAULT;
	int			 ch, rc;

	while ((ch = cli_next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'l':
			if (cli_parse_int(optarg, 1, 100000, "--limit",
			    &limit) != 0)
				return EXIT_USAGE;
			break;
		case 'T':
			if (cli_parse_int(optarg, 1, 600000, "--timeout-ms",
			    &timeout) != 0)
				return EXIT_USAGE;
			break;
		default:
			return cli_usage();
		}
	if (argc != optind)
		return cli_usage();
	if (http_global_init(e->proxy) != 0 || (http = http_new()) == NULL) {
		cli_warn("libcurl failed to initialise");
		return EXIT_FAIL;
	}
	if ((rc = cli_open_config(e, CONFIG_READ, &cfg)) != EXIT_OK ||
	    (rc = cli_open_store(e, 0, &st)) != EXIT_OK)
		goto out;
	src = poller_run(st, cfg, http, (int)limit, (long)timeout, poll_report,
	    NULL, &ps);
	log_begin(&l, src == STORE_OK ? LOG_LV_INFO : LOG_LV_ERROR,
	    "poll_summary");
	log_int(&l, "asked", ps.asked);
	log_int(&l, "answered", ps.answered);
	log_int(&l, "failed", ps.failed);
	log_int(&l, "unavailable", ps.unavailable);
	log_end(&l);
	if (src != STORE_OK)
		rc = cli_store_fail(e, src);
	else
		rc = ps.unavailable > 0 ? EXIT_TEMPFAIL : EXIT_OK;
out:
	http_free(http);
	store_close(st);
	config_close(cfg);
	return rc;
}
