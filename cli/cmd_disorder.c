/*
 * cmd_disorder.c: `hookbox disorder`, the delivery-disorder tester
 * (cli/disorder.h), against a running instance.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disorder.h"
#include "net/http.h"

#include "cli.h"
#include "table.h"

static const char *const verdicts[] = {
	[DISORDER_PASS] = "consistent",
	[DISORDER_FAIL] = "INCONSISTENT",
	[DISORDER_SKIP] = "skipped",
};

/* Ctrl-C, SIGTERM or SIGHUP, held back while the run is on: stop. */
static int
stop_asked(void *arg)
{
	sigset_t	pending;

	(void)arg;
	return sigpending(&pending) == 0 && (sigismember(&pending, SIGINT) ||
	    sigismember(&pending, SIGTERM) || sigismember(&pending, SIGHUP));
}

static int
report(const struct disorder_report *rep)
{
	static const struct table_col	 cols[] = {
		{ "CASE", TABLE_LEFT, 0 },
		{ "EXPECTED", TABLE_LEFT, 0 },
		{ "SEEN", TABLE_LEFT, 0 },
		{ "VERDICT", TABLE_LEFT, 0 },
	};
	struct table			*t;
	const char			*cells[4];
	size_t				 i;

	if ((t = table_new(cols, 4)) == NULL) {
		cli_warn("out of memory");
		return -1;
	}
	for (i = 0; i < rep->n; i++) {
		cells[0] = rep->rows[i].name;
		cells[1] = rep->rows[i].expected;
		cells[2] = rep->rows[i].seen;
		cells[3] = verdicts[rep->rows[i].verdict];
		if (table_add(t, cells) != 0) {
			table_free(t);
			cli_warn("out of memory");
			return -1;
		}
	}
	table_print(t, stdout);
	table_free(t);
	return 0;
}

int
cmd_disorder(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "endpoint", required_argument, NULL, 'e' },
		{ "url", required_argument, NULL, 'u' },
		{ "sample", required_argument, NULL, 's' },
		{ "undo", required_argument, NULL, 'U' },
		{ "sink", required_argument, NULL, 'k' },
		{ "at-once", required_argument, NULL, 'n' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	struct disorder_opts	 o;
	struct disorder_report	 rep;
	struct config		*cfg = NULL;
	struct store		*st = NULL;
	const char		*sample = NULL, *undo = NULL;
	char			*stext = NULL, *utext = NULL, why[512];
	sigset_t		 stop, old;
	long long		 v;
	int			 ch, rc;

	memset(&o, 0, sizeof(o));
	o.at_once = DISORDER_AT_ONCE_DEFAULT;
	o.timeout_ms = DISORDER_TIMEOUT_MS_DEFAULT;
	o.stop = stop_asked;
	while ((ch = cli_next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'e':
			o.endpoint = optarg;
			break;
		case 'u':
			o.base = optarg;
			break;
		case 's':
			sample = optarg;
			break;
		case 'U':
			undo = optarg;
			break;
		case 'k':
			o.sink = optarg;
			break;
		case 'n':
			if (cli_parse_int(optarg, 2, HTTP_BATCH_MAX,
			    "--at-once", &v) != 0)
				return EXIT_USAGE;
			o.at_once = (int)v;
			break;
		case 't':
			if (cli_parse_int(optarg, 1, 600000, "--timeout-ms",
			    &v) != 0)
				return EXIT_USAGE;
			o.timeout_ms = (long)v;
			break;
		default:
			return cli_usage();
		}
	if (argc != optind || o.endpoint == NULL || o.base == NULL ||
	    (undo != NULL && sample == NULL))
		return cli_usage();
	if ((sample != NULL && (rc = cli_read_file("--sample", sample,
	    HB_BODY_MAX_DEFAULT, &stext, &o.samplelen)) != EXIT_OK) ||
	    (undo != NULL && (rc = cli_read_file("--undo", undo,
	    HB_BODY_MAX_DEFAULT, &utext, &o.undolen)) != EXIT_OK))
		goto out;
	o.sample = stext;
	o.undo = utext;
	/* The responder is asked directly, never through a proxy. */
	if (http_global_init(NULL) != 0) {
		cli_warn("cannot start libcurl");
		rc = EXIT_FAIL;
		goto out;
	}
	if ((rc = cli_open_config(e, CONFIG_WRITE, &cfg)) != EXIT_OK ||
	    (rc = cli_open_store(e, 0, &st)) != EXIT_OK)
		goto out;
	/*
	 * What the run makes is removed before it exits: a signal is held
	 * back, asked for between the cases (stop_asked()), and delivered
	 * once all is removed.
	 */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	(void)sigprocmask(SIG_BLOCK, &stop, &old);
	rc = disorder_run(cfg, st, &o, &rep, why, sizeof(why));
	(void)sigprocmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		cli_warn("%s", why);
		rc = EXIT_FAIL;
		goto out;
	}
	if (report(&rep) != 0) {
		rc = EXIT_FAIL;
		goto out;
	}
	printf("%d of %zu cases inconsistent, %d skipped; tenant %s and its"
	    " %lld rows in state.db %s\n", rep.failed,
	    rep.n - (size_t)rep.skipped, rep.skipped, rep.tenant,
	    (long long)rep.removed, rep.left ? "NOT all removed" : "removed");
	if (rep.interrupted)
		cli_warn("interrupted: the cases after the last row were not"
		    " run");
	if (rep.left)
		cli_warn("%s", why);
	rc = rep.failed > 0 || rep.left || rep.interrupted ? EXIT_FAIL :
	    EXIT_OK;
out:
	store_close(st);
	config_close(cfg);
	free(stext);
	free(utext);
	return rc;
}
