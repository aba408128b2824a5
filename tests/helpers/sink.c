/*
 * sink.c: a small HTTP/1.1 destination for the outbox dispatcher tests.
 *
 *	sink -p PORT [-a ADDR] -l LOGFILE [-s SCRIPT] [-g GETSCRIPT]
 *	    [-r PIDFILE] [-t TIMEFILE] [-k]
 *
 * Listens on ADDR (default 127.0.0.1) and PORT (0: any free port), writes
 * the pid to PIDFILE, then the bound port and a newline to stdout.  Every
 * connection is served by a forked child, so a held connection does not
 * block the others.  Connections are numbered 0, 1, 2, ... in accept
 * order.  Without -k a connection carries one request and every answer
 * closes it.  With -k (keep-alive) a connection carries requests one
 * after another: an answer leaves it open (no "Connection: close")
 * unless the request asked for close, was malformed, or came with bytes
 * after its body (a pipelined request, which is not served); the child
 * then reads the next request, until the client closes or goes quiet
 * (10 s), or a "hang" entry ends the connection.
 *
 * Requests other than GET are numbered 0, 1, 2, ... in the order they
 * start to arrive: the first request of a connection by the parent before
 * it forks (for a client that writes as soon as it has connected, as
 * libcurl does, that is accept order; the parent peeks at the first bytes
 * to tell a GET apart), a later one on a kept-alive connection by its
 * child once the request's head is in.  Request N is
 * answered by entry N of SCRIPT, a comma-separated list whose last entry
 * repeats; the default is "204".  An entry is one of
 *
 *	NNN		status NNN, empty body (Content-Length: 0, none with 204)
 *	NNN:S		status NNN with "Retry-After: S"
 *	hang:S		hold the connection S seconds, close without answering
 *	slow:MS:NNN	wait MS milliseconds, then answer NNN
 *
 * A GET is a reconciliation lookup: 200 if LOGFILE holds an earlier POST
 * with the same Idempotency-Key that was answered 2xx or held by "hang"
 * (it reached the sink), 404 otherwise.  A GET takes no number and uses
 * no SCRIPT entry.  GETs are numbered apart, 0, 1, 2, ... in the order
 * they start to arrive, and GET N is answered after entry N of
 * GETSCRIPT, a comma-separated list of delays in milliseconds whose last
 * entry repeats (default "0").  The lookup is made when the GET has
 * arrived, before the delay: a slow answer can be stale, as a real
 * destination's can.
 *
 * Every request that arrives whole, and every one rejected by the parser,
 * is logged before it is answered, as one line appended with a single
 * write(2) to LOGFILE (O_APPEND), eleven tab-separated fields:
 *
 *	seq method path idempotency_key webhook_id webhook_timestamp
 *	webhook_signature content_length answer body connection
 *
 * seq is "-" for a GET, a missing header is "-", answer is the status
 * about to be sent or "hang", connection is the number of the connection
 * the request came on, and tab, newline and CR in any field are replaced
 * by a space.  A client that disconnects or stalls (10 s) before
 * its request is whole is closed without a log line.
 *
 * With -t, every logged request also gets one line in TIMEFILE (single
 * write(2), O_APPEND), written once it has been answered (or, for
 * "hang", once it is held):
 *
 *	seq method accepted_ms answered_ms
 *
 * in CLOCK_MONOTONIC milliseconds, rounded down: accepted is when the
 * parent accepted the connection (never before the client connected),
 * answered is just before the answer's first byte was written (never
 * after the client could read it), "-" for a request held by "hang".  So
 * the gap from one answer to a later request's acceptance is never
 * shorter than the gap the client left between the two.
 *
 * SIGTERM or SIGINT ends the sink and its process group.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <netinet/in.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define HDR_MAX		16384		/* request line and headers */
#define BODY_MAX	(1024 * 1024)
#define READ_TIMEOUT	10		/* seconds, per read */
#define LINGER_MS	1000		/* draining after an answer */
#define LINGER_MAX	(4 * 1024 * 1024)
#define PEND_MAX	64		/* accepted, method not yet seen */
#define RECHECK_MS	10		/* first bytes came split */
#define SCRIPT_MAX	4096
#define HANG_MAX	86400		/* seconds */
#define SLOW_MAX	3600000		/* milliseconds */
#define RETRY_MAX	2147483647

enum act {
	ACT_STATUS,
	ACT_HANG,
	ACT_SLOW
};

struct entry {
	enum act	 act;
	int		 status;
	long long	 retry_after;	/* -1: none */
	long long	 wait;		/* hang: seconds, slow: milliseconds */
};

struct pend {
	int		 fd;
	long long	 accepted;	/* monotonic ms */
	long long	 deadline;	/* monotonic ms */
	long long	 recheck;	/* monotonic ms; 0: poll now */
};

enum cls {
	CLS_WAIT,
	CLS_DROP,
	CLS_GET,
	CLS_OTHER
};

struct req {
	char		*method;
	char		*target;
	char		*key;		/* Idempotency-Key */
	char		*id;		/* Webhook-Id */
	char		*ts;		/* Webhook-Timestamp */
	char		*sig;		/* Webhook-Signature */
	char		*clen;		/* Content-Length */
	char		*te;		/* Transfer-Encoding */
	char		*expect;	/* Expect */
	char		*conn;		/* Connection */
	char		*body;
	size_t		 bodylen;
};

struct buf {
	char		*p;
	size_t		 len;
	size_t		 cap;
	int		 err;
};

static volatile sig_atomic_t	 got_term;
static volatile sig_atomic_t	 got_chld;
static sigset_t			 waitmask;	/* the mask while waiting */
static struct entry		*script;
static size_t			 nscript;
static long long		*gscript;	/* GET delays, ms */
static size_t			 ngscript;
static const char		*logpath;
static int			 logfd = -1;
static const char		*timepath;
static int			 timefd = -1;
static int			 keepalive;	/* -k */
/* The next request numbers, POST (and others) and GET, shared with the
   children (MAP_SHARED), which number a kept-alive connection's later
   requests. */
static long long		*counters;

static void
usage(void)
{
	fprintf(stderr, "usage: sink -p port [-a addr] -l logfile "
	    "[-s script] [-g getscript] [-r pidfile] [-t timefile] [-k]\n");
}

/*
 * Parses len bytes of decimal digits into *out.  Returns 0, -1 if the
 * text is empty or holds anything but digits, -2 if the value is above
 * max.
 */
static int
parse_dec(const char *s, size_t len, unsigned long long max,
    unsigned long long *out)
{
	unsigned long long	 v = 0;
	unsigned int		 d;
	size_t			 i;

	if (len == 0)
		return -1;
	for (i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return -1;
	for (i = 0; i < len; i++) {
		d = (unsigned int)(s[i] - '0');
		if (v > max / 10 || (v == max / 10 && d > max % 10))
			return -2;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static int
parse_status(const char *s, size_t len, int *status)
{
	unsigned long long	v;

	if (len != 3 || parse_dec(s, len, 599, &v) != 0 || v < 200)
		return -1;
	*status = (int)v;
	return 0;
}

static int
parse_entry(const char *s, size_t len, struct entry *e)
{
	const char		*c;
	unsigned long long	 v;

	e->act = ACT_STATUS;
	e->status = 0;
	e->retry_after = -1;
	e->wait = 0;
	if (len > 5 && memcmp(s, "hang:", 5) == 0) {
		if (parse_dec(s + 5, len - 5, HANG_MAX, &v) != 0)
			return -1;
		e->act = ACT_HANG;
		e->wait = (long long)v;
		return 0;
	}
	if (len > 5 && memcmp(s, "slow:", 5) == 0) {
		s += 5;
		len -= 5;
		if ((c = memchr(s, ':', len)) == NULL ||
		    parse_dec(s, (size_t)(c - s), SLOW_MAX, &v) != 0 ||
		    parse_status(c + 1, len - (size_t)(c - s) - 1,
		    &e->status) != 0)
			return -1;
		e->act = ACT_SLOW;
		e->wait = (long long)v;
		return 0;
	}
	if ((c = memchr(s, ':', len)) == NULL)
		return parse_status(s, len, &e->status);
	if (parse_status(s, (size_t)(c - s), &e->status) != 0 ||
	    parse_dec(c + 1, len - (size_t)(c - s) - 1, RETRY_MAX, &v) != 0)
		return -1;
	e->retry_after = (long long)v;
	return 0;
}

static int
load_script(const char *spec)
{
	const char	*p, *c;
	size_t		 n = 1, i, len;

	for (p = spec; *p != '\0'; p++)
		if (*p == ',')
			n++;
	if (n > SCRIPT_MAX) {
		warnx("script: more than %d entries", SCRIPT_MAX);
		return -1;
	}
	if ((script = calloc(n, sizeof(*script))) == NULL) {
		warn("calloc");
		return -1;
	}
	for (p = spec, i = 0; i < n; i++) {
		c = strchr(p, ',');
		len = c != NULL ? (size_t)(c - p) : strlen(p);
		if (parse_entry(p, len, &script[i]) == -1) {
			warnx("script: bad entry \"%.*s\"", (int)len, p);
			free(script);
			script = NULL;
			return -1;
		}
		p += len + 1;
	}
	nscript = n;
	return 0;
}

static int
load_gscript(const char *spec)
{
	const char		*p, *c;
	size_t			 n = 1, i, len;
	unsigned long long	 v;

	for (p = spec; *p != '\0'; p++)
		if (*p == ',')
			n++;
	if (n > SCRIPT_MAX) {
		warnx("GET script: more than %d entries", SCRIPT_MAX);
		return -1;
	}
	if ((gscript = calloc(n, sizeof(*gscript))) == NULL) {
		warn("calloc");
		return -1;
	}
	for (p = spec, i = 0; i < n; i++) {
		c = strchr(p, ',');
		len = c != NULL ? (size_t)(c - p) : strlen(p);
		if (parse_dec(p, len, SLOW_MAX, &v) != 0) {
			warnx("GET script: bad entry \"%.*s\"", (int)len, p);
			free(gscript);
			gscript = NULL;
			return -1;
		}
		gscript[i] = (long long)v;
		p += len + 1;
	}
	ngscript = n;
	return 0;
}

static long long
now_ms(void)
{
	struct timespec	ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		err(1, "clock_gettime");
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
sleep_ms(long long ms)
{
	struct timespec	ts, rem;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	while (nanosleep(&ts, &rem) == -1) {
		if (errno != EINTR) {
			warn("nanosleep");
			return;
		}
		ts = rem;
	}
}

static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void
on_term(int sig)
{
	got_term = sig;
}

static void
on_chld(int sig)
{
	(void)sig;
	got_chld = 1;
}

static void
reap(void)
{
	int	status;
	pid_t	pid;

	got_chld = 0;
	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid > 0)
			continue;
		if (pid == -1 && errno == EINTR)
			continue;
		if (pid == -1 && errno != ECHILD)
			warn("waitpid");
		return;
	}
}

/* After kill(0, SIGTERM): collect the children for up to ms. */
static void
reap_all(long long ms)
{
	long long	until;
	int		status;
	pid_t		pid;

	until = now_ms() + ms;
	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid > 0)
			continue;
		if (pid == -1) {
			if (errno == EINTR)
				continue;
			if (errno != ECHILD)
				warn("waitpid");
			return;
		}
		if (now_ms() >= until)
			return;
		sleep_ms(10);
	}
}

static int
set_signals(void)
{
	struct sigaction	sa;
	sigset_t		block;

	memset(&sa, 0, sizeof(sa));
	if (sigemptyset(&sa.sa_mask) == -1) {
		warn("sigemptyset");
		return -1;
	}
	sa.sa_handler = on_term;
	if (sigaction(SIGTERM, &sa, NULL) == -1 ||
	    sigaction(SIGINT, &sa, NULL) == -1) {
		warn("sigaction");
		return -1;
	}
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_NOCLDSTOP;
	if (sigaction(SIGCHLD, &sa, NULL) == -1) {
		warn("sigaction");
		return -1;
	}
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	if (sigaction(SIGPIPE, &sa, NULL) == -1) {
		warn("sigaction");
		return -1;
	}
	/* Blocked but while waiting in ppoll(2): no lost wake-ups. */
	if (sigemptyset(&block) == -1 || sigaddset(&block, SIGTERM) == -1 ||
	    sigaddset(&block, SIGINT) == -1 ||
	    sigaddset(&block, SIGCHLD) == -1) {
		warn("sigset");
		return -1;
	}
	if (sigprocmask(SIG_BLOCK, &block, &waitmask) == -1) {
		warn("sigprocmask");
		return -1;
	}
	if (sigdelset(&waitmask, SIGTERM) == -1 ||
	    sigdelset(&waitmask, SIGINT) == -1 ||
	    sigdelset(&waitmask, SIGCHLD) == -1) {
		warn("sigdelset");
		return -1;
	}
	return 0;
}

/* In a child: default dispositions, nothing blocked that was not. */
static int
child_signals(void)
{
	struct sigaction	sa;

	memset(&sa, 0, sizeof(sa));
	if (sigemptyset(&sa.sa_mask) == -1) {
		warn("sigemptyset");
		return -1;
	}
	sa.sa_handler = SIG_DFL;
	if (sigaction(SIGTERM, &sa, NULL) == -1 ||
	    sigaction(SIGINT, &sa, NULL) == -1 ||
	    sigaction(SIGCHLD, &sa, NULL) == -1) {
		warn("sigaction");
		return -1;
	}
	if (sigprocmask(SIG_SETMASK, &waitmask, NULL) == -1) {
		warn("sigprocmask");
		return -1;
	}
	return 0;
}

static int
listen_on(const char *addr, unsigned long long port)
{
	struct addrinfo	*res = NULL, *ai, hints;
	char		 pstr[16];
	int		 fd = -1, rc, on = 1;

	rc = snprintf(pstr, sizeof(pstr), "%llu", port);
	if (rc < 0 || (size_t)rc >= sizeof(pstr)) {
		warnx("port: too long");
		goto out;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((rc = getaddrinfo(addr, pstr, &hints, &res)) != 0) {
		warnx("%s: %s", addr, gai_strerror(rc));
		res = NULL;
		goto out;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family,
		    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    ai->ai_protocol);
		if (fd == -1) {
			warn("socket");
			continue;
		}
		if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on,
		    sizeof(on)) == 0 &&
		    bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, 128) == 0)
			break;
		warn("%s port %s", addr, pstr);
		if (close(fd) == -1)
			warn("close");
		fd = -1;
	}
 out:
	if (res != NULL)
		freeaddrinfo(res);
	return fd;
}

static int
bound_port(int fd, unsigned int *port)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	 sin;
	struct sockaddr_in6	 sin6;
	socklen_t		 sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == -1) {
		warn("getsockname");
		return -1;
	}
	if (ss.ss_family == AF_INET) {
		memcpy(&sin, &ss, sizeof(sin));
		*port = ntohs(sin.sin_port);
	} else if (ss.ss_family == AF_INET6) {
		memcpy(&sin6, &ss, sizeof(sin6));
		*port = ntohs(sin6.sin6_port);
	} else {
		warnx("getsockname: address family %d", (int)ss.ss_family);
		return -1;
	}
	return 0;
}

static int
write_pidfile(const char *path)
{
	char	b[32];
	int	fd = -1, n, rv = -1;

	n = snprintf(b, sizeof(b), "%ld\n", (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(b)) {
		warnx("pid: too long");
		goto out;
	}
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) == -1) {
		warn("%s", path);
		goto out;
	}
	if (write_all(fd, b, (size_t)n) == -1) {
		warn("%s", path);
		goto out;
	}
	rv = 0;
 out:
	if (fd != -1 && close(fd) == -1) {
		warn("%s", path);
		rv = -1;
	}
	return rv;
}

static const char *
reason(int status)
{
	switch (status) {
	case 100:
		return "Continue";
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 202:
		return "Accepted";
	case 204:
		return "No Content";
	case 301:
		return "Moved Permanently";
	case 302:
		return "Found";
	case 307:
		return "Temporary Redirect";
	case 308:
		return "Permanent Redirect";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 409:
		return "Conflict";
	case 410:
		return "Gone";
	case 411:
		return "Length Required";
	case 413:
		return "Content Too Large";
	case 415:
		return "Unsupported Media Type";
	case 422:
		return "Unprocessable Content";
	case 429:
		return "Too Many Requests";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	default:
		return "Status";
	}
}

static void
buf_add(struct buf *b, const char *s, size_t n, int clean)
{
	size_t	 i, cap;
	char	*p;

	if (b->err)
		return;
	if (n > SIZE_MAX - b->len - 1) {
		b->err = 1;
		return;
	}
	if (b->len + n + 1 > b->cap) {
		cap = b->cap == 0 ? 256 : b->cap;
		while (cap < b->len + n + 1)
			cap = cap > SIZE_MAX / 2 ? b->len + n + 1 : cap * 2;
		if ((p = realloc(b->p, cap)) == NULL) {
			b->err = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	for (i = 0; i < n; i++) {
		if (clean && (s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
			b->p[b->len++] = ' ';
		else
			b->p[b->len++] = s[i];
	}
}

static void
buf_field(struct buf *b, const char *s)
{
	buf_add(b, "\t", 1, 0);
	if (s == NULL)
		s = "-";
	buf_add(b, s, strlen(s), 1);
}

/* One line, one write(2) on the O_APPEND descriptor. */
static int
log_request(long long seq, long long conn, const struct req *rq,
    const char *answer)
{
	struct buf	 b = { NULL, 0, 0, 0 };
	char		 num[32], cnum[32];
	ssize_t		 w;
	int		 n, rv = -1;

	if (seq >= 0) {
		n = snprintf(num, sizeof(num), "%lld", seq);
		if (n < 0 || (size_t)n >= sizeof(num)) {
			warnx("log: seq too long");
			goto out;
		}
	} else {
		num[0] = '-';
		num[1] = '\0';
	}
	buf_add(&b, num, strlen(num), 0);
	buf_field(&b, rq->method);
	buf_field(&b, rq->target);
	buf_field(&b, rq->key);
	buf_field(&b, rq->id);
	buf_field(&b, rq->ts);
	buf_field(&b, rq->sig);
	buf_field(&b, rq->clen);
	buf_field(&b, answer);
	buf_add(&b, "\t", 1, 0);
	if (rq->body != NULL)
		buf_add(&b, rq->body, rq->bodylen, 1);
	n = snprintf(cnum, sizeof(cnum), "%lld", conn);
	if (n < 0 || (size_t)n >= sizeof(cnum)) {
		warnx("log: connection number too long");
		goto out;
	}
	buf_field(&b, cnum);
	buf_add(&b, "\n", 1, 0);
	if (b.err) {
		warnx("log: out of memory");
		goto out;
	}
	if ((w = write(logfd, b.p, b.len)) == -1) {
		warn("%s", logpath);
		goto out;
	}
	if ((size_t)w != b.len) {
		warnx("%s: short write", logpath);
		goto out;
	}
	rv = 0;
 out:
	free(b.p);
	return rv;
}

/* One TIMEFILE line, one write(2); answered -1 is written "-". */
static int
log_time(long long seq, const char *method, long long accepted,
    long long answered)
{
	char	b[256], sq[32], an[32];
	int	n;

	if (timefd == -1)
		return 0;
	if (seq >= 0)
		n = snprintf(sq, sizeof(sq), "%lld", seq);
	else
		n = snprintf(sq, sizeof(sq), "-");
	if (n < 0 || (size_t)n >= sizeof(sq))
		return -1;
	if (answered >= 0)
		n = snprintf(an, sizeof(an), "%lld", answered);
	else
		n = snprintf(an, sizeof(an), "-");
	if (n < 0 || (size_t)n >= sizeof(an))
		return -1;
	n = snprintf(b, sizeof(b), "%s\t%.16s\t%lld\t%s\n", sq,
	    method != NULL ? method : "-", accepted, an);
	if (n < 0 || (size_t)n >= sizeof(b)) {
		warnx("time log: line too long");
		return -1;
	}
	if (write(timefd, b, (size_t)n) != n) {
		warn("%s", timepath);
		return -1;
	}
	return 0;
}

/*
 * Does this log line record a POST with this key that reached the sink:
 * answered 2xx, or held by a hang entry?
 */
static int
line_matches(const char *line, size_t len, const char *key, size_t klen)
{
	const char	*f[11], *end = line + len, *p = line, *t;
	size_t		 fl[11], i;

	if (len > 0 && line[len - 1] == '\n')
		end--;
	for (i = 0; i < 11; i++) {
		t = i < 10 ? memchr(p, '\t', (size_t)(end - p)) : end;
		if (t == NULL)
			return 0;
		f[i] = p;
		fl[i] = (size_t)(t - p);
		p = t + 1;
	}
	if (fl[1] != 4 || memcmp(f[1], "POST", 4) != 0)
		return 0;
	if (fl[3] != klen || memcmp(f[3], key, klen) != 0)
		return 0;
	if (fl[8] == 4 && memcmp(f[8], "hang", 4) == 0)
		return 1;
	return fl[8] == 3 && f[8][0] == '2' &&
	    f[8][1] >= '0' && f[8][1] <= '9' &&
	    f[8][2] >= '0' && f[8][2] <= '9';
}

/* The answer to a lookup GET: 200, 404, or 500 if the log is unreadable. */
static int
lookup(const char *key)
{
	FILE	*fp = NULL;
	char	*line = NULL, *ckey = NULL;
	size_t	 cap = 0, klen, i;
	ssize_t	 n;
	int	 status = 500;

	if (key == NULL || *key == '\0' || strcmp(key, "-") == 0)
		return 404;
	/* The log holds keys cleaned like this. */
	if ((ckey = strdup(key)) == NULL) {
		warn("strdup");
		goto out;
	}
	klen = strlen(ckey);
	for (i = 0; i < klen; i++)
		if (ckey[i] == '\t')
			ckey[i] = ' ';
	if ((fp = fopen(logpath, "re")) == NULL) {
		warn("%s", logpath);
		goto out;
	}
	status = 404;
	while ((n = getline(&line, &cap, fp)) != -1) {
		if (line_matches(line, (size_t)n, ckey, klen)) {
			status = 200;
			break;
		}
	}
	if (status == 404 && ferror(fp)) {
		warn("%s", logpath);
		status = 500;
	}
 out:
	free(line);
	free(ckey);
	if (fp != NULL && fclose(fp) == EOF)
		warn("%s", logpath);
	return status;
}

/*
 * Returns the length of the request head up to and including the empty
 * line, or 0 if it is not all there yet.  *scan remembers where to go on.
 */
static size_t
find_eoh(const char *p, size_t len, size_t *scan)
{
	size_t	i;

	for (i = *scan; i < len; i++) {
		if (p[i] != '\n')
			continue;
		if (i + 1 >= len) {
			*scan = i;
			return 0;
		}
		if (p[i + 1] == '\n')
			return i + 2;
		if (p[i + 1] != '\r')
			continue;
		if (i + 2 >= len) {
			*scan = i;
			return 0;
		}
		if (p[i + 2] == '\n')
			return i + 3;
	}
	*scan = len;
	return 0;
}

/* Splits "METHOD SP target SP HTTP/1.x" in place. */
static int
parse_reqline(char *line, struct req *rq)
{
	char	*sp1, *sp2, *p;

	if ((sp1 = strchr(line, ' ')) == NULL ||
	    (sp2 = strrchr(line, ' ')) == sp1)
		return -1;
	*sp1 = '\0';
	*sp2 = '\0';
	if (*line == '\0' || sp1[1] == '\0')
		return -1;
	for (p = line; *p != '\0'; p++)
		if (*p < 'A' || *p > 'Z')
			return -1;
	for (p = sp1 + 1; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return -1;
	p = sp2 + 1;
	if (strncmp(p, "HTTP/1.", 7) != 0 || p[7] < '0' || p[7] > '9' ||
	    p[8] != '\0')
		return -1;
	rq->method = line;
	rq->target = sp1 + 1;
	return 0;
}

static int
set_header(struct req *rq, const char *name, char *value)
{
	char	**slot = NULL;

	if (strcasecmp(name, "Content-Length") == 0)
		slot = &rq->clen;
	else if (strcasecmp(name, "Transfer-Encoding") == 0)
		slot = &rq->te;
	else if (strcasecmp(name, "Expect") == 0)
		slot = &rq->expect;
	else if (strcasecmp(name, "Connection") == 0)
		slot = &rq->conn;
	else if (strcasecmp(name, "Idempotency-Key") == 0)
		slot = &rq->key;
	else if (strcasecmp(name, "Webhook-Id") == 0)
		slot = &rq->id;
	else if (strcasecmp(name, "Webhook-Timestamp") == 0)
		slot = &rq->ts;
	else if (strcasecmp(name, "Webhook-Signature") == 0)
		slot = &rq->sig;
	if (slot == NULL)
		return 0;
	if (*slot == NULL) {
		*slot = value;
		return 0;
	}
	/* Two differing lengths: no way to tell where the body ends. */
	if (slot == &rq->clen && strcmp(*slot, value) != 0)
		return -1;
	return 0;
}

/*
 * Parses the head (hlen bytes, ending in an empty line) in place.
 * Returns 0, or -1 for a malformed head (400).
 */
static int
parse_head(char *p, size_t hlen, struct req *rq)
{
	char	*end = p + hlen, *line, *nl, *colon, *v, *ve, *c;

	if (memchr(p, '\0', hlen) != NULL)
		return -1;
	/* Leading empty lines are to be ignored (RFC 9112, 2.2). */
	while (p < end && (*p == '\r' || *p == '\n'))
		p++;
	for (line = p; line < end; line = nl + 1) {
		if ((nl = memchr(line, '\n', (size_t)(end - line))) == NULL)
			return -1;
		*nl = '\0';
		if (nl > line && nl[-1] == '\r')
			nl[-1] = '\0';
		if (line == p) {
			if (parse_reqline(line, rq) == -1)
				return -1;
			continue;
		}
		if (*line == '\0')
			return 0;
		if ((colon = strchr(line, ':')) == NULL || colon == line)
			return -1;
		for (c = line; c < colon; c++)
			if ((unsigned char)*c <= 0x20 || *c == 0x7f)
				return -1;
		*colon = '\0';
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		for (ve = v + strlen(v); ve > v &&
		    (ve[-1] == ' ' || ve[-1] == '\t'); ve--)
			;
		*ve = '\0';
		for (c = v; *c != '\0'; c++)
			if (((unsigned char)*c < 0x20 && *c != '\t') ||
			    *c == 0x7f)
				return -1;
		if (set_header(rq, line, v) == -1)
			return -1;
	}
	return -1;
}

static int
respond(int fd, int status, long long retry_after, int keep)
{
	char	ra[64], b[512];
	int	n;

	ra[0] = '\0';
	if (retry_after >= 0) {
		n = snprintf(ra, sizeof(ra), "Retry-After: %lld\r\n",
		    retry_after);
		if (n < 0 || (size_t)n >= sizeof(ra)) {
			warnx("Retry-After: too long");
			return -1;
		}
	}
	/* No Content-Length with 204 or 304 (RFC 9110, 8.6). */
	n = snprintf(b, sizeof(b), "HTTP/1.1 %d %s\r\n%s%s%s\r\n", status,
	    reason(status),
	    status == 204 || status == 304 ? "" : "Content-Length: 0\r\n",
	    ra, keep ? "" : "Connection: close\r\n");
	if (n < 0 || (size_t)n >= sizeof(b)) {
		warnx("response: too long");
		return -1;
	}
	return write_all(fd, b, (size_t)n);
}

/*
 * After an answer: half-close, then read what the client still sends
 * (an unread request body would otherwise turn close(2) into a reset
 * that can cost the client the answer) until it closes or a second
 * has passed.
 */
static void
linger_close(int fd)
{
	struct timeval	 tv;
	char		 b[4096];
	long long	 until;
	size_t		 total = 0;
	ssize_t		 n;

	if (shutdown(fd, SHUT_WR) == -1) {
		if (errno != ENOTCONN)
			warn("shutdown");
		goto out;
	}
	tv.tv_sec = 0;
	tv.tv_usec = 200000;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1) {
		warn("setsockopt");
		goto out;
	}
	until = now_ms() + LINGER_MS;
	while (total < LINGER_MAX && now_ms() < until) {
		n = recv(fd, b, sizeof(b), 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (n <= 0)
			break;
		total += (size_t)n;
	}
 out:
	if (close(fd) == -1)
		warn("close");
}

static int
set_timeouts(int fd)
{
	struct timeval	tv;

	tv.tv_sec = READ_TIMEOUT;
	tv.tv_usec = 0;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == -1) {
		warn("setsockopt");
		return -1;
	}
	return 0;
}

/* Is this error just the client going away or going quiet? */
static int
quiet_errno(int e)
{
	return e == EAGAIN || e == EWOULDBLOCK || e == ECONNRESET ||
	    e == EPIPE || e == ETIMEDOUT;
}

/*
 * Reads one request from fd into hdr (HDR_MAX + 1 bytes, which rq then
 * points into) and rq->body.  Sets *status to 0 for a request read whole,
 * or to the error to answer (400, 411, 413, 431) with the body unread.
 * *extra is set when bytes came after the body (a pipelined request).
 * Returns 0, -1 on an error, -2 if the client went away or went quiet.
 */
static int
read_request(int fd, char *hdr, struct req *rq, int *status, int *extra)
{
	char			*nl;
	size_t			 len = 0, hlen, scan = 0, have;
	unsigned long long	 clen = 0;
	ssize_t			 n;
	int			 rc;

	*status = 0;
	*extra = 0;
	while ((hlen = find_eoh(hdr, len, &scan)) == 0) {
		if (len == HDR_MAX) {
			*status = 431;
			break;
		}
		n = recv(fd, hdr + len, HDR_MAX - len, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			if (!quiet_errno(errno))
				warn("recv");
			return -2;
		}
		if (n == 0)
			return -2;
		len += (size_t)n;
	}
	hdr[len] = '\0';

	if (*status == 431) {
		/* Log at least the request line, if it is all there. */
		if ((nl = memchr(hdr, '\n', len)) != NULL &&
		    memchr(hdr, '\0', len) == NULL) {
			*nl = '\0';
			if (nl > hdr && nl[-1] == '\r')
				nl[-1] = '\0';
			if (parse_reqline(hdr, rq) == -1)
				rq->method = rq->target = NULL;
		}
		return 0;
	}
	if (parse_head(hdr, hlen, rq) == -1) {
		*status = 400;
		return 0;
	}
	if (rq->te != NULL) {
		*status = rq->clen == NULL ? 411 : 400;
		return 0;
	}
	if (rq->clen != NULL) {
		rc = parse_dec(rq->clen, strlen(rq->clen), BODY_MAX, &clen);
		if (rc != 0) {
			*status = rc == -2 ? 413 : 400;
			return 0;
		}
	}

	/* The body: what came with the head, then the rest. */
	have = len - hlen;
	if (have > clen) {
		*extra = 1;
		have = (size_t)clen;
	}
	if ((rq->body = malloc((size_t)clen + 1)) == NULL) {
		warn("malloc");
		return -1;
	}
	memcpy(rq->body, hdr + hlen, have);
	if (have < clen && rq->expect != NULL &&
	    strcasecmp(rq->expect, "100-continue") == 0 &&
	    write_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25) == -1) {
		if (!quiet_errno(errno))
			warn("send");
		return -2;
	}
	while (have < clen) {
		n = recv(fd, rq->body + have, (size_t)clen - have, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			if (!quiet_errno(errno))
				warn("recv");
			return -2;
		}
		if (n == 0)
			return -2;
		have += (size_t)n;
	}
	rq->body[clen] = '\0';
	rq->bodylen = (size_t)clen;
	return 0;
}

/* Takes the next number from a shared counter (0: POST, 1: GET). */
static long long
next_number(int which)
{
	return __atomic_fetch_add(&counters[which], 1, __ATOMIC_SEQ_CST);
}

/*
 * Serves the requests on fd in a child: one, or with -k one after
 * another.  seq is the first request's number, -1 if the parent saw a
 * GET; gseq is a GET's number, else -1; conn is the connection's number;
 * accepted is when the parent accepted it.  Owns and closes fd.  Returns
 * the exit status.
 */
static int
serve_conn(int fd, long long seq, long long gseq, long long conn,
    long long accepted)
{
	static char		 hdr[HDR_MAX + 1];
	struct req		 rq;
	const struct entry	*e;
	char			 ans[8];
	long long		 retry_after, answered, delay;
	int			 status, rv = 1, rc, extra, keep, whole;
	int			 first = 1;

	memset(&rq, 0, sizeof(rq));
	if (set_timeouts(fd) == -1)
		goto out;
	for (;; first = 0) {
		free(rq.body);
		memset(&rq, 0, sizeof(rq));
		e = NULL;
		retry_after = -1;
		delay = 0;
		if ((rc = read_request(fd, hdr, &rq, &status, &extra)) != 0) {
			if (rc == -2)
				rv = 0;
			goto out;
		}
		whole = status == 0;
		if (!first) {
			/* A later request on a kept-alive connection. */
			accepted = now_ms();
			if (rq.method != NULL && strcmp(rq.method, "GET") == 0) {
				seq = -1;
				gseq = next_number(1);
			} else {
				seq = next_number(0);
				gseq = -1;
			}
		}

		if (rq.method != NULL && strcmp(rq.method, "GET") == 0) {
			seq = -1;
			if (status == 0)
				status = lookup(rq.key);
			if (gseq >= 0 && ngscript > 0)
				delay = gscript[(unsigned long long)gseq <
				    ngscript ? (size_t)gseq : ngscript - 1];
		} else if (status == 0 && seq < 0)
			status = 500;	/* the parent cannot have missed a GET */
		else if (status == 0) {
			e = &script[(unsigned long long)seq < nscript ?
			    (size_t)seq : nscript - 1];
			status = e->status;
			retry_after = e->retry_after;
		}
		/* Not after a malformed request, or one followed by more. */
		keep = keepalive && whole && !extra &&
		    (rq.conn == NULL || strcasecmp(rq.conn, "close") != 0);

		if (e != NULL && e->act == ACT_HANG)
			memcpy(ans, "hang", sizeof("hang"));
		else {
			rc = snprintf(ans, sizeof(ans), "%d", status);
			if (rc < 0 || (size_t)rc >= sizeof(ans)) {
				warnx("status too long");
				goto out;
			}
		}
		if (log_request(seq, conn, &rq, ans) == -1)
			goto out;
		if (e != NULL && e->act == ACT_HANG) {
			if (log_time(seq, rq.method, accepted, -1) == -1)
				goto out;
			sleep_ms(e->wait * 1000);
			rv = 0;
			goto out;
		}
		if (e != NULL && e->act == ACT_SLOW)
			sleep_ms(e->wait);
		if (delay > 0)
			sleep_ms(delay);
		answered = now_ms();
		if (respond(fd, status, retry_after, keep) == -1) {
			if (!quiet_errno(errno))
				warn("send");
			rv = 0;
			goto out;
		}
		if (log_time(seq, rq.method, accepted, answered) == -1)
			goto out;
		if (!keep)
			break;
	}
	linger_close(fd);
	fd = -1;
	rv = 0;
 out:
	free(rq.body);
	if (fd != -1 && close(fd) == -1)
		warn("close");
	return rv;
}

/*
 * Peeks at the first bytes of a pending connection: a GET takes no
 * sequence number, anything else does.
 */
static enum cls
classify(struct pend *p, long long now)
{
	char	b[4];
	ssize_t	n;

	n = recv(p->fd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return CLS_WAIT;
		return CLS_DROP;
	}
	if (n == 0)
		return CLS_DROP;
	if ((size_t)n < sizeof(b)) {
		if (memcmp(b, "GET ", (size_t)n) != 0)
			return CLS_OTHER;
		/* "G", "GE" or "GET" so far: look again shortly. */
		p->recheck = now + RECHECK_MS;
		return CLS_WAIT;
	}
	return memcmp(b, "GET ", 4) == 0 ? CLS_GET : CLS_OTHER;
}

static void
drop_fd(int fd)
{
	if (close(fd) == -1)
		warn("close");
}

/* Forks a child to serve pend[i]; the parent closes its copy. */
static void
dispatch(int lfd, struct pend *pend, size_t npend, size_t i, long long seq,
    long long gseq, long long conn)
{
	size_t	j;
	pid_t	pid;
	int	fd = pend[i].fd;

	if ((pid = fork()) == -1) {
		warn("fork");
		drop_fd(fd);
		return;
	}
	if (pid == 0) {
		drop_fd(lfd);
		for (j = 0; j < npend; j++)
			if (j != i && pend[j].fd != -1)
				drop_fd(pend[j].fd);
		if (child_signals() == -1) {
			drop_fd(fd);
			_exit(1);
		}
		_exit(serve_conn(fd, seq, gseq, conn, pend[i].accepted));
	}
	drop_fd(fd);
}

static int
serve_loop(int lfd)
{
	struct pend	 pend[PEND_MAX];
	struct pollfd	 pfd[PEND_MAX + 1];
	size_t		 idx[PEND_MAX + 1], npend = 0, np, i, j;
	long long	 conn = 0, now, next, lpause = 0;
	struct timespec	 ts;
	enum cls	 c;
	int		 fd, rc;

	for (;;) {
		if (got_chld)
			reap();
		if (got_term)
			break;

		now = now_ms();
		next = -1;
		np = 0;
		if (npend < PEND_MAX && lpause <= now) {
			pfd[np].fd = lfd;
			pfd[np].events = POLLIN;
			idx[np++] = PEND_MAX;
		} else if (npend < PEND_MAX)
			next = lpause;
		for (i = 0; i < npend; i++) {
			if (pend[i].deadline <= now) {
				drop_fd(pend[i].fd);
				pend[i].fd = -1;
				continue;
			}
			if (next == -1 || pend[i].deadline < next)
				next = pend[i].deadline;
			if (pend[i].recheck > now) {
				if (pend[i].recheck < next)
					next = pend[i].recheck;
				continue;
			}
			pend[i].recheck = 0;
			pfd[np].fd = pend[i].fd;
			pfd[np].events = POLLIN;
			idx[np++] = i;
		}
		for (i = j = 0; i < npend; i++)
			if (pend[i].fd != -1)
				pend[j++] = pend[i];
		if (j != npend) {
			npend = j;
			continue;	/* indices moved: build again */
		}

		if (next != -1) {
			ts.tv_sec = (next - now) / 1000;
			ts.tv_nsec = ((next - now) % 1000) * 1000000;
		}
		rc = ppoll(pfd, (nfds_t)np, next == -1 ? NULL : &ts,
		    &waitmask);
		if (rc == -1) {
			if (errno == EINTR)
				continue;
			warn("ppoll");
			return -1;
		}
		now = now_ms();

		/* Older connections first: their numbers come first. */
		for (i = 0; i < np; i++) {
			if (idx[i] == PEND_MAX || pfd[i].revents == 0)
				continue;
			j = idx[i];
			c = classify(&pend[j], now);
			if (c == CLS_WAIT)
				continue;
			if (c == CLS_DROP)
				drop_fd(pend[j].fd);
			else
				dispatch(lfd, pend, npend, j,
				    c == CLS_GET ? -1 : next_number(0),
				    c == CLS_GET ? next_number(1) : -1, conn++);
			pend[j].fd = -1;
		}
		for (i = j = 0; i < npend; i++)
			if (pend[i].fd != -1)
				pend[j++] = pend[i];
		npend = j;

		if (np == 0 || idx[0] != PEND_MAX || pfd[0].revents == 0)
			continue;
		while (npend < PEND_MAX) {
			fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (fd == -1) {
				if (errno == EINTR || errno == ECONNABORTED)
					continue;
				if (errno == EAGAIN || errno == EWOULDBLOCK)
					break;
				/* Out of descriptors or memory: back off. */
				warn("accept");
				lpause = now + 100;
				break;
			}
			pend[npend].fd = fd;
			pend[npend].accepted = now_ms();
			pend[npend].deadline = now + READ_TIMEOUT * 1000;
			pend[npend].recheck = 0;
			npend++;
		}
	}

	for (i = 0; i < npend; i++)
		drop_fd(pend[i].fd);
	return 0;
}

int
main(int argc, char *argv[])
{
	struct sigaction	 sa;
	const char		*addr = "127.0.0.1", *portarg = NULL;
	const char		*spec = "204", *gspec = "0", *pidpath = NULL;
	unsigned long long	 port;
	unsigned int		 bound;
	int			 ch, lfd = -1, rv = 1;

	while ((ch = getopt(argc, argv, "p:a:l:s:g:r:t:k")) != -1) {
		switch (ch) {
		case 'p':
			portarg = optarg;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'l':
			logpath = optarg;
			break;
		case 's':
			spec = optarg;
			break;
		case 'g':
			gspec = optarg;
			break;
		case 'r':
			pidpath = optarg;
			break;
		case 't':
			timepath = optarg;
			break;
		case 'k':
			keepalive = 1;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (optind != argc || portarg == NULL || logpath == NULL) {
		usage();
		return 2;
	}
	if (parse_dec(portarg, strlen(portarg), 65535, &port) != 0) {
		warnx("port: %s: not a port number", portarg);
		return 2;
	}
	if (load_script(spec) == -1 || load_gscript(gspec) == -1)
		return 2;
	counters = mmap(NULL, 2 * sizeof(*counters), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (counters == MAP_FAILED) {
		warn("mmap");
		return 1;
	}
	counters[0] = counters[1] = 0;

	/* Our own process group, so that kill(0, ...) reaches our children. */
	if (setpgid(0, 0) == -1 && getpgrp() != getpid()) {
		warn("setpgid");
		goto out;
	}
	if ((logfd = open(logpath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0644)) == -1) {
		warn("%s", logpath);
		goto out;
	}
	if (timepath != NULL && (timefd = open(timepath,
	    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) == -1) {
		warn("%s", timepath);
		goto out;
	}
	if (set_signals() == -1)
		goto out;
	if ((lfd = listen_on(addr, port)) == -1)
		goto out;
	if (bound_port(lfd, &bound) == -1)
		goto out;
	if (pidpath != NULL && write_pidfile(pidpath) == -1)
		goto out;
	if (printf("%u\n", bound) < 0 || fflush(stdout) == EOF) {
		warn("stdout");
		goto out;
	}

	if (serve_loop(lfd) == -1)
		goto out;
	rv = 0;
 out:
	if (got_term) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_IGN;
		if (sigemptyset(&sa.sa_mask) == -1 ||
		    sigaction(SIGTERM, &sa, NULL) == -1)
			warn("sigaction");
		else if (kill(0, SIGTERM) == -1)
			warn("kill");
		else
			reap_all(2000);
	}
	if (lfd != -1 && close(lfd) == -1)
		warn("close");
	if (logfd != -1 && close(logfd) == -1)
		warn("%s", logpath);
	if (timefd != -1 && close(timefd) == -1)
		warn("%s", timepath);
	free(script);
	free(gscript);
	return rv;
}
