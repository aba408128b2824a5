/*
 * bench/delay.c: a TCP delay line, the distance to a database on another
 * host simulated on one machine.  It listens on a TCP port and forwards
 * each connection to TARGET (HOST:PORT, or the path of a unix socket such
 * as PostgreSQL's DIR/.s.PGSQL.5432), holding every chunk it reads, in
 * either direction, for DELAY before writing it on.  The round trip it
 * adds is twice DELAY plus its own and the kernel's time, which
 * bench/rtt.c measures: a configured delay is not what is delivered.
 * Bench only; built by bench/distance.sh.
 *
 *     delay [-d MS] [-o FILE] LISTEN TARGET
 *
 * LISTEN is PORT or HOST:PORT (default host 127.0.0.1; port 0: any free
 * one).  The port it listens on is printed on stdout, one line, once it
 * listens.  -d MS is the one-way delay in milliseconds (default 0.125, a
 * fraction allowed).
 *
 * One thread, one epoll set, one timerfd, no thread per connection.
 * Every chunk is held the same time, so the chunks of all connections
 * fall due in the order they were read: one FIFO holds them all, and the
 * timer is armed at its head.  Order within a direction is kept, an end
 * of stream (a read of 0) is delayed like data and then passed on as a
 * shutdown of writing; a reset or an error closes the connection at once.
 * A direction holding more than DELAY_HELD_MAX bytes stops reading until
 * its destination has taken some.
 *
 * Counted per connection and in total: bytes and chunks each way, flights
 * (client->server data read after the last answer, or first) and
 * turnarounds: a flight client->server followed by data server->client.
 * A turnaround is one round trip as the line sees it; a client that sends
 * several statements before reading (a pipeline) makes one flight and
 * one turnaround of them.  Data the server sends unasked is no
 * turnaround.  The counts are written on SIGUSR1 and once more at SIGTERM
 * or SIGINT, before it exits: to FILE with -o (written whole, then
 * renamed over it, so a reader never sees half of it), else to stderr.
 * One line "total key=value ...", then one "conn key=value ..." per
 * connection since the start, open or closed.
 */
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DELAY_READ	65536		/* bytes per read */
#define DELAY_HELD_MAX	(4 << 20)	/* bytes held per direction */
#define DELAY_EVENTS	64

enum { C2S, S2C };			/* directions */
enum { CLIENT, SERVER };		/* ends: CLIENT reads C2S */

/* What an epoll event points at: one end of a connection, or a fd of
 * the line's own (c == NULL, side: one of the DELAY_FD_*). */
enum { DELAY_FD_LISTEN = 2, DELAY_FD_TIMER, DELAY_FD_SIGNAL };
struct conn;
struct end {
	struct conn	*c;
	int		 side;
	uint32_t	 ev;		/* the events registered */
};

/* A chunk read, held until due, then written.  len 0: an end of stream. */
struct chunk {
	struct chunk	*next;		/* in the FIFO, then in an outq */
	struct conn	*c;
	int		 dir;
	uint64_t	 due;		/* CLOCK_MONOTONIC, ns */
	size_t		 len, off;
	unsigned char	 data[];
};

struct half {
	struct chunk	*outq, *outq_tail;	/* due, not yet written */
	size_t		 held;		/* read and not yet written */
	int		 eof_read;	/* its source ended */
	int		 eof_sent;	/* shutdown(SHUT_WR) passed on */
	uint64_t	 bytes, chunks;
};

/*
 * A connection.  Never freed: its counts are reported until the line
 * exits, and chunks still in the FIFO may point at it after it closed
 * (they are dropped when they fall due).
 */
struct conn {
	struct conn	*next;
	uint64_t	 id;
	int		 fd[2];
	struct end	 end[2];
	struct half	 h[2];
	int		 open;
	int		 connecting;	/* the connect to TARGET is under way */
	int		 reading[2];	/* EPOLLIN wanted on fd[side] */
	int		 flight;	/* a client flight not yet answered */
	uint64_t	 flights, turns;
	char		 peer[64];
};

static struct {
	int			 ep, lfd, tfd, sfd;
	uint64_t		 delay;		/* ns */
	const char		*out;		/* -o FILE, or NULL */
	struct sockaddr_storage	 to;
	socklen_t		 tolen;
	struct chunk		*fifo, *fifo_tail;
	uint64_t		 armed;		/* the timer's due time, or 0 */
	struct conn		*conns, *conns_tail;
	uint64_t		 nconns, nopen, turns, flights;
	uint64_t		 bytes[2], chunks[2];
	uint64_t		 start;
	struct end		 lend, tend, send;
} L;

static uint64_t
now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
ep_set(int op, int fd, uint32_t events, struct end *e)
{
	struct epoll_event	ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.ptr = e;
	if (epoll_ctl(L.ep, op, fd, &ev) == -1 && op != EPOLL_CTL_DEL)
		err(1, "epoll_ctl");
}

/* The timer at the FIFO's head, or off when it is empty. */
static void
timer_arm(void)
{
	struct itimerspec	its;
	uint64_t		due = L.fifo != NULL ? L.fifo->due : 0;

	if (due == L.armed)
		return;
	L.armed = due;
	memset(&its, 0, sizeof(its));
	if (L.fifo != NULL) {
		its.it_value.tv_sec = (time_t)(L.fifo->due / 1000000000u);
		its.it_value.tv_nsec = (long)(L.fifo->due % 1000000000u);
		/* 0 would disarm it: a due time is never the epoch. */
		if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
			its.it_value.tv_nsec = 1;
	}
	if (timerfd_settime(L.tfd, TFD_TIMER_ABSTIME, &its, NULL) == -1)
		err(1, "timerfd_settime");
}

/* The events each end of c waits for, from its state (a system call
 * only when they change). */
static void
conn_arm(struct conn *c)
{
	uint32_t	ev;
	int		side;

	for (side = CLIENT; side <= SERVER; side++) {
		if (c->fd[side] == -1)
			continue;
		ev = 0;
		/* The end reads the direction of its own index. */
		if (c->reading[side] && !c->connecting)
			ev |= EPOLLIN;
		/* ... and writes the other one. */
		if (c->h[!side].outq != NULL ||
		    (side == SERVER && c->connecting))
			ev |= EPOLLOUT;
		if (ev != c->end[side].ev) {
			c->end[side].ev = ev;
			ep_set(EPOLL_CTL_MOD, c->fd[side], ev,
			    &c->end[side]);
		}
	}
}

static void
conn_close(struct conn *c)
{
	struct chunk	*k, *n;
	int		 i;

	if (!c->open)
		return;
	for (i = 0; i < 2; i++) {
		if (c->fd[i] != -1) {
			ep_set(EPOLL_CTL_DEL, c->fd[i], 0, NULL);
			close(c->fd[i]);
			c->fd[i] = -1;
		}
		for (k = c->h[i].outq; k != NULL; k = n) {
			n = k->next;
			free(k);
		}
		c->h[i].outq = c->h[i].outq_tail = NULL;
		c->h[i].held = 0;
	}
	c->open = 0;
	L.nopen--;
}

/*
 * Writes what is due in direction dir of c, in order, as far as its
 * destination takes it.  Returns -1 when c was closed.
 */
static int
half_flush(struct conn *c, int dir)
{
	struct half	*h = &c->h[dir];
	struct chunk	*k;
	ssize_t		 n;
	int		 to = c->fd[dir == C2S ? SERVER : CLIENT];

	if (dir == C2S && c->connecting)
		return 0;
	while ((k = h->outq) != NULL) {
		if (k->len == 0) {
			if (shutdown(to, SHUT_WR) == -1 && errno != ENOTCONN) {
				conn_close(c);
				return -1;
			}
			h->eof_sent = 1;
		} else {
			n = send(to, k->data + k->off, k->len - k->off,
			    MSG_NOSIGNAL);
			if (n == -1 && (errno == EAGAIN || errno == EINTR))
				break;
			if (n == -1) {
				conn_close(c);
				return -1;
			}
			k->off += (size_t)n;
			h->held -= (size_t)n;
			if (k->off < k->len)
				break;
		}
		h->outq = k->next;
		if (h->outq == NULL)
			h->outq_tail = NULL;
		free(k);
	}
	if (c->h[C2S].eof_sent && c->h[S2C].eof_sent) {
		conn_close(c);
		return -1;
	}
	/* Read again once the destination has taken some. */
	if (!h->eof_read && h->held < DELAY_HELD_MAX / 2)
		c->reading[dir == C2S ? CLIENT : SERVER] = 1;
	return 0;
}

/* Reads what end side of c has, into the FIFO, due after the delay. */
static void
conn_read(struct conn *c, int side)
{
	struct chunk	*k;
	ssize_t		 n;
	int		 dir = side == CLIENT ? C2S : S2C;
	unsigned char	 buf[DELAY_READ];

	n = read(c->fd[side], buf, sizeof(buf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == -1) {
		conn_close(c);
		return;
	}
	if ((k = malloc(sizeof(*k) + (size_t)n)) == NULL)
		err(1, "malloc");
	memcpy(k->data, buf, (size_t)n);
	k->next = NULL;
	k->c = c;
	k->dir = dir;
	k->len = (size_t)n;
	k->off = 0;
	k->due = now_ns() + L.delay;
	if (L.fifo_tail != NULL)
		L.fifo_tail->next = k;
	else
		L.fifo = k;
	L.fifo_tail = k;
	timer_arm();
	if (n == 0) {
		c->h[dir].eof_read = 1;
		c->reading[side] = 0;
		return;
	}
	c->h[dir].held += (size_t)n;
	c->h[dir].bytes += (uint64_t)n;
	c->h[dir].chunks++;
	L.bytes[dir] += (uint64_t)n;
	L.chunks[dir]++;
	if (dir == C2S && !c->flight) {
		c->flight = 1;
		c->flights++;
		L.flights++;
	} else if (dir == S2C && c->flight) {
		c->flight = 0;
		c->turns++;
		L.turns++;
	}
	if (c->h[dir].held >= DELAY_HELD_MAX)
		c->reading[side] = 0;
}

/* Moves every chunk that is due to its direction's outq and writes. */
static void
fifo_release(void)
{
	struct chunk	*k;
	struct conn	*c;
	uint64_t	 now = now_ns();

	while ((k = L.fifo) != NULL && k->due <= now) {
		L.fifo = k->next;
		if (L.fifo == NULL)
			L.fifo_tail = NULL;
		k->next = NULL;
		c = k->c;
		if (!c->open) {
			free(k);
			continue;
		}
		if (c->h[k->dir].outq_tail != NULL)
			c->h[k->dir].outq_tail->next = k;
		else
			c->h[k->dir].outq = k;
		c->h[k->dir].outq_tail = k;
		if (half_flush(c, k->dir) == 0)
			conn_arm(c);
	}
	timer_arm();
}

static void
line_accept(void)
{
	struct sockaddr_storage	 ss;
	struct conn		*c;
	socklen_t		 sl = sizeof(ss);
	char			 host[INET6_ADDRSTRLEN];
	int			 fd, sfd, one = 1;
	uint16_t		 port = 0;

	if ((fd = accept4(L.lfd, (struct sockaddr *)&ss, &sl,
	    SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1) {
		if (errno != EAGAIN && errno != EINTR &&
		    errno != ECONNABORTED)
			warn("accept");
		return;
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((sfd = socket(L.to.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		warn("socket");
		close(fd);
		return;
	}
	if (L.to.ss_family != AF_UNIX)
		(void)setsockopt(sfd, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
	if ((c = calloc(1, sizeof(*c))) == NULL)
		err(1, "calloc");
	if (connect(sfd, (struct sockaddr *)&L.to, L.tolen) == -1) {
		if (errno != EINPROGRESS) {
			warn("connect");
			close(sfd);
			close(fd);
			free(c);
			return;
		}
		c->connecting = 1;
	}
	c->id = ++L.nconns;
	c->fd[CLIENT] = fd;
	c->fd[SERVER] = sfd;
	c->open = 1;
	c->reading[CLIENT] = c->reading[SERVER] = 1;
	c->end[CLIENT].c = c->end[SERVER].c = c;
	c->end[CLIENT].side = CLIENT;
	c->end[SERVER].side = SERVER;
	host[0] = '\0';
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
	}
	snprintf(c->peer, sizeof(c->peer), "%s:%u", host, (unsigned)port);
	if (L.conns_tail != NULL)
		L.conns_tail->next = c;
	else
		L.conns = c;
	L.conns_tail = c;
	L.nopen++;
	ep_set(EPOLL_CTL_ADD, fd, 0, &c->end[CLIENT]);
	ep_set(EPOLL_CTL_ADD, sfd, 0, &c->end[SERVER]);
	conn_arm(c);
}

static void
conn_event(struct conn *c, int side, uint32_t ev)
{
	int	e = 0;
	socklen_t el = sizeof(e);

	if (!c->open)
		return;
	if (side == SERVER && c->connecting) {
		if (!(ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		if (getsockopt(c->fd[SERVER], SOL_SOCKET, SO_ERROR, &e,
		    &el) == -1 || e != 0) {
			warnx("connect: %s", strerror(e != 0 ? e : errno));
			conn_close(c);
			return;
		}
		c->connecting = 0;
		if (half_flush(c, C2S) == 0)
			conn_arm(c);
		return;
	}
	/* A hang-up or an error still has its data and end to be read. */
	if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && c->reading[side])
		conn_read(c, side);
	if (c->open && (ev & EPOLLOUT) &&
	    half_flush(c, side == CLIENT ? S2C : C2S) == -1)
		return;
	if (c->open && (ev & EPOLLERR) && !c->reading[side] &&
	    c->h[side == CLIENT ? S2C : C2S].outq == NULL) {
		conn_close(c);
		return;
	}
	if (c->open)
		conn_arm(c);
}

static void
stats_write(void)
{
	struct conn	*c;
	FILE		*f = stderr;
	char		 tmp[PATH_MAX];
	int		 n;

	if (L.out != NULL) {
		n = snprintf(tmp, sizeof(tmp), "%s.tmp", L.out);
		if (n < 0 || (size_t)n >= sizeof(tmp)) {
			warnx("%s: name too long", L.out);
			return;
		}
		if ((f = fopen(tmp, "w")) == NULL) {
			warn("%s", tmp);
			return;
		}
	}
	fprintf(f, "total delay_us=%.1f elapsed_s=%.3f conns=%" PRIu64
	    " open=%" PRIu64 " turnarounds=%" PRIu64 " flights=%" PRIu64
	    " c2s_bytes=%" PRIu64 " s2c_bytes=%" PRIu64 " c2s_chunks=%"
	    PRIu64 " s2c_chunks=%" PRIu64 "\n", (double)L.delay / 1e3,
	    (double)(now_ns() - L.start) / 1e9, L.nconns, L.nopen, L.turns,
	    L.flights, L.bytes[C2S], L.bytes[S2C], L.chunks[C2S],
	    L.chunks[S2C]);
	for (c = L.conns; c != NULL; c = c->next)
		fprintf(f, "conn id=%" PRIu64 " peer=%s open=%d turnarounds=%"
		    PRIu64 " flights=%" PRIu64 " c2s_bytes=%" PRIu64
		    " s2c_bytes=%" PRIu64 " c2s_chunks=%" PRIu64
		    " s2c_chunks=%" PRIu64 "\n", c->id, c->peer, c->open,
		    c->turns, c->flights, c->h[C2S].bytes, c->h[S2C].bytes,
		    c->h[C2S].chunks, c->h[S2C].chunks);
	if (L.out == NULL) {
		fflush(f);
		return;
	}
	if (fclose(f) != 0) {
		warn("%s", tmp);
		return;
	}
	if (rename(tmp, L.out) == -1)
		warn("rename %s", L.out);
}

/* HOST:PORT or PORT into a socket address, for listening (passive). */
static void
parse_inet(const char *arg, int passive, struct sockaddr_storage *ss,
    socklen_t *sl)
{
	struct addrinfo	 hints, *res;
	const char	*colon = strrchr(arg, ':');
	char		 host[256];
	const char	*port = colon != NULL ? colon + 1 : arg;
	int		 e;

	if (colon == NULL)
		snprintf(host, sizeof(host), "127.0.0.1");
	else if ((size_t)(colon - arg) >= sizeof(host) || colon == arg)
		errx(2, "%s: bad host", arg);
	else {
		memcpy(host, arg, (size_t)(colon - arg));
		host[colon - arg] = '\0';
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	if ((e = getaddrinfo(host, port, &hints, &res)) != 0)
		errx(2, "%s: %s", arg, gai_strerror(e));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*sl = res->ai_addrlen;
	freeaddrinfo(res);
}

static void
usage(void)
{
	fprintf(stderr, "usage: delay [-d MS] [-o FILE] LISTEN TARGET\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	struct epoll_event	 evs[DELAY_EVENTS];
	struct sockaddr_storage	 ls;
	struct signalfd_siginfo	 si;
	struct rlimit		 rl;
	struct sockaddr_un	*un;
	struct end		*e;
	sigset_t		 sigs;
	socklen_t		 lsl;
	uint64_t		 ticks;
	char			*endp;
	double			 ms = 0.125;
	int			 ch, i, n, one = 1;

	while ((ch = getopt(argc, argv, "d:o:")) != -1) {
		switch (ch) {
		case 'd':
			errno = 0;
			ms = strtod(optarg, &endp);
			if (errno != 0 || *endp != '\0' || endp == optarg ||
			    !(ms >= 0 && ms <= 10000))
				errx(2, "-d: milliseconds, 0 to 10000");
			break;
		case 'o':
			L.out = optarg;
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2)
		usage();
	L.delay = (uint64_t)(ms * 1e6 + 0.5);

	parse_inet(argv[optind], 1, &ls, &lsl);
	if (strchr(argv[optind + 1], '/') != NULL) {
		un = (struct sockaddr_un *)&L.to;
		if (strlen(argv[optind + 1]) >= sizeof(un->sun_path))
			errx(2, "%s: path too long", argv[optind + 1]);
		un->sun_family = AF_UNIX;
		memcpy(un->sun_path, argv[optind + 1],
		    strlen(argv[optind + 1]) + 1);
		L.tolen = sizeof(*un);
	} else
		parse_inet(argv[optind + 1], 0, &L.to, &L.tolen);

	/* Timers to the microsecond, not the default 50 us of slack. */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) == -1)
		err(1, "sigprocmask");
	if ((L.sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC)) == -1)
		err(1, "signalfd");
	if ((L.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK |
	    TFD_CLOEXEC)) == -1)
		err(1, "timerfd_create");
	if ((L.lfd = socket(ls.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		err(1, "socket");
	(void)setsockopt(L.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(L.lfd, (struct sockaddr *)&ls, lsl) == -1)
		err(1, "bind %s", argv[optind]);
	if (listen(L.lfd, 512) == -1)
		err(1, "listen");
	lsl = sizeof(ls);
	if (getsockname(L.lfd, (struct sockaddr *)&ls, &lsl) == -1)
		err(1, "getsockname");
	if ((L.ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		err(1, "epoll_create1");
	L.lend.side = DELAY_FD_LISTEN;
	L.tend.side = DELAY_FD_TIMER;
	L.send.side = DELAY_FD_SIGNAL;
	ep_set(EPOLL_CTL_ADD, L.lfd, EPOLLIN, &L.lend);
	ep_set(EPOLL_CTL_ADD, L.tfd, EPOLLIN, &L.tend);
	ep_set(EPOLL_CTL_ADD, L.sfd, EPOLLIN, &L.send);
	L.start = now_ns();
	printf("%u\n", ls.ss_family == AF_INET6 ?
	    ntohs(((struct sockaddr_in6 *)&ls)->sin6_port) :
	    ntohs(((struct sockaddr_in *)&ls)->sin_port));
	fflush(stdout);

	for (;;) {
		if ((n = epoll_wait(L.ep, evs, DELAY_EVENTS, -1)) == -1) {
			if (errno == EINTR)
				continue;
			err(1, "epoll_wait");
		}
		for (i = 0; i < n; i++) {
			e = evs[i].data.ptr;
			if (e->c != NULL) {
				conn_event(e->c, e->side, evs[i].events);
				continue;
			}
			switch (e->side) {
			case DELAY_FD_LISTEN:
				line_accept();
				break;
			case DELAY_FD_TIMER:
				(void)!read(L.tfd, &ticks, sizeof(ticks));
				L.armed = 0;	/* expired */
				fifo_release();
				break;
			case DELAY_FD_SIGNAL:
				while (read(L.sfd, &si, sizeof(si)) ==
				    (ssize_t)sizeof(si)) {
					stats_write();
					if (si.ssi_signo != SIGUSR1)
						return 0;
				}
				break;
			}
		}
	}
}
