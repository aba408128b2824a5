/*
 * job import: jobs at volume, one JSON object per line (JSON Lines), in
 * one transaction per batch of lines.
 *
 * A bad line is reported with its number and skipped; the good lines are
 * committed, and the exit code is 1 when any line was bad.  A job stored
 * already with the same fields counts as present, not bad, so a file can
 * be imported again; the same tenant and id with other fields is bad.
 * A failure of the database itself (busy, disk) stops the import: the
 * batches before it stay committed, the one under way is rolled back.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "base/util.h"
#include "config/admin.h"
#include "config/bulk.h"
#include "config/edit.h"

#include "cli.h"

#define IMPORT_LINE_MAX		16384	/* bytes in one line */
#define IMPORT_BATCH_MAX	100000

struct import {
	struct config	*cfg;
	const char	*tenant;	/* --tenant, or NULL */
	const char	*name;		/* the input's name, for messages */
	long long	 line;		/* the current line's number */
	long long	 imported, present, bad;	/* committed */
	long long	 tx_imported, tx_present;	/* in the open batch */
	int		 in_tx;		/* lines in the open transaction */
};

/* Reports a bad line. */
static void __attribute__((format(printf, 2, 3)))
bad(struct import *im, const char *fmt, ...)
{
	va_list	ap;
	char	msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cli_warn("%s: line %lld: %s", im->name, im->line, msg);
	im->bad++;
}

/* Reports a failure of the database itself; its exit code. */
static int
failed(const struct import *im, enum config_status rc)
{
	cli_warn("%s: line %lld: %s", im->name, im->line, config_strerror(rc));
	return cli_config_exit(rc);
}

/* A job id fit for a message: one with a control character is not echoed. */
static const char *
shown(const char *id)
{
	return text_valid_id(id, HB_ID_MAX) ? id : "(an id that is not text)";
}

/* A job's field by the name config_job_import() gives it. */
static const char *
job_field_value(const struct config_job *j, const char *field)
{
	if (strcmp(field, "attempt") == 0)
		return j->attempt;
	if (strcmp(field, "step") == 0)
		return j->step;
	if (strcmp(field, "destination") == 0)
		return j->destination;
	if (strcmp(field, "source_url") == 0)
		return j->source_url;
	return j->output;
}

void
cli_job_conflict(struct config *cfg, const struct config_job *j,
    const char *field, char *buf, size_t len)
{
	struct config_job	have;
	char			a[HB_ID_MAX * 2], b[HB_ID_MAX * 2];

	if (field == NULL || config_job_get(cfg, j->tenant, j->job_id,
	    &have) != CONFIG_OK) {
		(void)snprintf(buf, len, "exists already, with other fields");
		return;
	}
	(void)snprintf(buf, len, "exists already with %s \"%s\", not \"%s\"",
	    field, text_escape(job_field_value(&have, field), (size_t)-1, a,
	    sizeof(a)), text_escape(job_field_value(j, field), (size_t)-1, b,
	    sizeof(b)));
}

/*
 * Adds one line's job.  EXIT_OK when the line was taken or skipped as
 * bad; another exit code when the database failed (reported).
 */
static int
one(struct import *im, const char *line, size_t len)
{
	struct config_job	 j;
	enum config_status	 rc;
	const char		*why = NULL;
	char			 msg[1024], other[HB_ID_MAX + 1];
	int			 present;

	if ((rc = config_job_parse(line, len, im->tenant, &j, msg,
	    sizeof(msg))) == CONFIG_INVALID) {
		bad(im, "%s", msg);
		return EXIT_OK;
	}
	if (rc != CONFIG_OK)
		return cli_config_done(rc, im->name, NULL);
	/* One job per action id, as job add has it (and earlier lines too). */
	rc = config_job_of_action(im->cfg, j.tenant, j.attempt, j.step, other,
	    sizeof(other));
	if (rc == CONFIG_OK && strcmp(other, j.job_id) != 0) {
		bad(im, "job %s: attempt %s and step %s of tenant %s already"
		    " belong to job %s", shown(j.job_id), j.attempt, j.step,
		    j.tenant, other);
		return EXIT_OK;
	}
	if (rc != CONFIG_OK && rc != CONFIG_NOTFOUND)
		return failed(im, rc);
	rc = config_job_import(im->cfg, &j, &present, &why);
	if (rc == CONFIG_DENIED && why != NULL) {
		bad(im, "job %s: %s: %s", shown(j.job_id), shown(j.tenant),
		    why);
		return EXIT_OK;
	}
	switch (rc) {
	case CONFIG_OK:
		if (present)
			im->tx_present++;
		else
			im->tx_imported++;
		return EXIT_OK;
	case CONFIG_INVALID:
		bad(im, "job %s: invalid %s", shown(j.job_id), why != NULL ? why :
		    "value");
		return EXIT_OK;
	case CONFIG_EXISTS:
		cli_job_conflict(im->cfg, &j, why, msg, sizeof(msg));
		bad(im, "job %s: %s", shown(j.job_id), msg);
		return EXIT_OK;
	case CONFIG_REFUSED:
	case CONFIG_NOTFOUND:
		bad(im, "job %s: tenant %s has no destination %s",
		    shown(j.job_id), shown(j.tenant), shown(j.destination));
		return EXIT_OK;
	default:
		return failed(im, rc);
	}
}

/* Non-zero for a line of white space only (skipped, like an empty one). */
static int
blank(const char *s, size_t n)
{
	return strspn(s, " \t\r\n") >= n;
}

/* Commits the open batch, if any, and counts its jobs. */
static int
commit(struct import *im)
{
	int	rc;

	if (im->in_tx == 0)
		return EXIT_OK;
	if ((rc = cli_config_done(config_commit(im->cfg), im->name, NULL)) !=
	    EXIT_OK)
		return rc;
	im->imported += im->tx_imported;
	im->present += im->tx_present;
	im->tx_imported = im->tx_present = 0;
	im->in_tx = 0;
	return EXIT_OK;
}

/*
 * Reads one line of at most max bytes into buf (max + 1 bytes), without
 * its newline, NUL-terminated; *len is its real length, NUL bytes
 * included.  Returns 1 for a line, 0 at the end of the input (or an
 * error: ferror() tells), -1 for a line longer than max, which is read
 * to its end and dropped.
 */
static int
read_line(FILE *in, char *buf, size_t max, size_t *len)
{
	size_t	n = 0;
	int	c;

	while ((c = getc(in)) != EOF && c != '\n')
		if (n++ < max)
			buf[n - 1] = (char)c;
	*len = n;
	if (n > max)
		return -1;
	buf[n] = '\0';
	return c != EOF || n > 0;
}

static int
import(struct import *im, FILE *in, long long batch)
{
	char	*buf;
	size_t	 len;
	int	 got, rc = EXIT_OK;

	if ((buf = malloc(IMPORT_LINE_MAX + 1)) == NULL) {
		cli_warn("out of memory");
		return EXIT_FAIL;
	}
	while (rc == EXIT_OK &&
	    (got = read_line(in, buf, IMPORT_LINE_MAX, &len)) != 0) {
		im->line++;
		if (got < 0) {
			bad(im, "longer than %d bytes", IMPORT_LINE_MAX);
			continue;
		}
		if (memchr(buf, '\0', len) != NULL) {
			bad(im, "holds a NUL byte");
			continue;
		}
		if (blank(buf, len))
			continue;
		if (im->in_tx == 0 && (rc = cli_config_done(
		    config_begin(im->cfg), im->name, NULL)) != EXIT_OK)
			break;
		if ((rc = one(im, buf, len)) == EXIT_OK &&
		    ++im->in_tx >= batch)
			rc = commit(im);
	}
	if (rc == EXIT_OK && ferror(in)) {
		cli_warn("%s: %s", im->name, strerror(errno));
		rc = EXIT_FAIL;
	}
	if (rc == EXIT_OK)
		rc = commit(im);
	free(buf);
	return rc;
}

int
cmd_job_import(struct settings *e, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tenant", required_argument, NULL, 't' },
		{ "batch", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 }
	};
	struct import	 im;
	FILE		*in = stdin;
	long long	 batch = IMPORT_BATCH_DEFAULT;
	int		 ch, rc;

	memset(&im, 0, sizeof(im));
	im.name = "standard input";
	while ((ch = cli_next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 't':
			im.tenant = optarg;
			break;
		case 'b':
			if (cli_parse_int(optarg, 1, IMPORT_BATCH_MAX,
			    "--batch", &batch) != 0)
				return EXIT_USAGE;
			break;
		default:
			return cli_usage();
		}
	if (argc - optind > 1)
		return cli_usage();
	if (argc - optind == 1 && strcmp(argv[optind], "-") != 0) {
		/* The service opens nothing a registrar names. */
		if (cli_registrar != NULL) {
			cli_warn("job import: the registrar service reads"
			    " standard input alone");
			return EXIT_USAGE;
		}
		im.name = argv[optind];
		if ((in = fopen(im.name, "r")) == NULL) {
			cli_warn("%s: %s", im.name, strerror(errno));
			return EXIT_FAIL;
		}
	}
	if ((rc = cli_open_config(e, CONFIG_WRITE, &im.cfg)) == EXIT_OK) {
		if (im.tenant == NULL ||
		    (rc = cli_known_tenant(im.cfg, im.tenant)) == EXIT_OK)
			rc = import(&im, in, batch);
		if (rc != EXIT_OK)
			config_rollback(im.cfg);
		config_close(im.cfg);
	}
	if (in != stdin)
		fclose(in);
	if (rc != EXIT_OK && im.line > 0)
		cli_warn("%s: stopped at line %lld; the batch under way was"
		    " rolled back", im.name, im.line);
	printf("imported %lld jobs, %lld already present, %lld bad lines\n",
	    im.imported, im.present, im.bad);
	if (rc != EXIT_OK)
		return rc;
	return im.bad > 0 ? EXIT_FAIL : EXIT_OK;
}
