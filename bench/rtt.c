/*
 * bench/rtt.c: the round trip a delay line (bench/delay.c) really adds
 * in front of a PostgreSQL server.  Opens one connection DIRECT (the
 * server's unix socket) and one THROUGH the line, and times COUNT
 * `SELECT 1`s on each, one on each in turn (a simple query: one message
 * each way, one round trip), after 20 on each not counted.  With -i MS it
 * sleeps MS between turns, so that measuring under load adds little of
 * its own.  Prints one line:
 *
 *     rtt n=COUNT direct_median_ms= direct_p99_ms= line_median_ms=
 *         line_p99_ms= added_median_ms= added_p99_ms=
 *
 * added_* are the median and the 99th percentile of the differences of
 * each turn's two times (through the line less directly, measured one
 * right after the other): what the line added to each round trip, the
 * machine's own hiccups, which the direct one sees too, mostly taken
 * out.  Bench only; built by bench/distance.sh.
 *
 *     rtt [-n COUNT] [-i MS] DIRECT THROUGH
 */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

static double
rtt_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One SELECT 1 on conn; its time in ms, or -1. */
static double
rtt_one(PGconn *conn)
{
	PGresult	*res;
	double		 t0, t1;
	int		 ok;

	t0 = rtt_now();
	res = PQexec(conn, "SELECT 1");
	t1 = rtt_now();
	ok = PQresultStatus(res) == PGRES_TUPLES_OK;
	if (!ok)
		warnx("SELECT 1: %s", PQerrorMessage(conn));
	PQclear(res);
	return ok ? t1 - t0 : -1;
}

static int
rtt_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile of the n sorted values v (the nearest rank). */
static double
rtt_rank(const double *v, long n, double q)
{
	long	i = (long)(q * (double)n + 0.999999) - 1;

	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

int
main(int argc, char *argv[])
{
	PGconn		*c[2] = { NULL, NULL };
	struct timespec	 gap = { 0, 0 };
	double		*v[3] = { NULL, NULL, NULL }, ms = 0, t, med[3], p99[3];
	char		*end;
	long		 n = 1000, i;
	int		 ch, k, rc = 1;

	while ((ch = getopt(argc, argv, "n:i:")) != -1) {
		switch (ch) {
		case 'n':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || n < 1 ||
			    n > 10000000)
				errx(2, "-n: 1 to 10000000");
			break;
		case 'i':
			errno = 0;
			ms = strtod(optarg, &end);
			if (errno != 0 || *end != '\0' || end == optarg ||
			    !(ms >= 0 && ms <= 10000))
				errx(2, "-i: milliseconds, 0 to 10000");
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2)
		goto usage;
	gap.tv_sec = (time_t)(ms / 1e3);
	gap.tv_nsec = (long)((ms - (double)gap.tv_sec * 1e3) * 1e6);
	for (k = 0; k < 2; k++) {
		c[k] = PQconnectdb(argv[optind + k]);
		if (PQstatus(c[k]) != CONNECTION_OK) {
			warnx("%s: %s", k == 0 ? "direct" : "through the line",
			    PQerrorMessage(c[k]));
			goto out;
		}
	}
	for (k = 0; k < 3; k++)
		if ((v[k] = calloc((size_t)n, sizeof(double))) == NULL) {
			warn("calloc");
			goto out;
		}
	for (i = 0; i < 20; i++)
		for (k = 0; k < 2; k++)
			if (rtt_one(c[k]) < 0)
				goto out;
	for (i = 0; i < n; i++) {
		for (k = 0; k < 2; k++) {
			if ((t = rtt_one(c[k])) < 0)
				goto out;
			v[k][i] = t;
		}
		v[2][i] = v[1][i] - v[0][i];
		if (ms > 0)
			nanosleep(&gap, NULL);
	}
	for (k = 0; k < 3; k++) {
		qsort(v[k], (size_t)n, sizeof(double), rtt_cmp);
		med[k] = rtt_rank(v[k], n, 0.5);
		p99[k] = rtt_rank(v[k], n, 0.99);
	}
	printf("rtt n=%ld direct_median_ms=%.3f direct_p99_ms=%.3f"
	    " line_median_ms=%.3f line_p99_ms=%.3f added_median_ms=%.3f"
	    " added_p99_ms=%.3f\n", n, med[0], p99[0], med[1], p99[1],
	    med[2], p99[2]);
	rc = 0;
out:
	for (k = 0; k < 2; k++)
		PQfinish(c[k]);
	for (k = 0; k < 3; k++)
		free(v[k]);
	return rc;
usage:
	fprintf(stderr, "usage: rtt [-n COUNT] [-i MS] DIRECT THROUGH\n");
	return 2;
}
