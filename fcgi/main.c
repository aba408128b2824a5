/*
 * hookbox-fcgi: the webhook responder.
 *
 * One binary, three ways to run:
 *  - on its own socket (-s PATH or -s [HOST]:PORT): -w worker processes
 *    (default 1), respawned when one dies, each with -t threads (default
 *    THREADS_DEFAULT) that accept and serve requests, and one writer
 *    thread that commits their observations in groups (lib/intake/group.h);
 *  - under spawn-fcgi (or any FastCGI manager): the listening socket is
 *    file descriptor 0; the same threads, or with -t 1 the classic
 *    single-threaded process, one commit per request;
 *  - as a plain CGI program, when started with CGI variables and no
 *    socket: one request from the environment and standard input.
 * The request path itself is respond.c.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "base/log.h"
#include "db/access.h"
#include "respond.h"
#include "base/util.h"
#include "run/super.h"
#include "store/store.h"

static volatile sig_atomic_t	stopping;
static volatile sig_atomic_t	in_request;

#define SOCKET_MODE_DEFAULT	0660
/* Serving threads per process; measured on 2 cores (README, Performance). */
#define THREADS_DEFAULT		32
#define THREADS_MAX		256
/* Each thread's stack: the request path needs far less. */
#define THREAD_STACK		(512 * 1024)
/*
 * A threaded process that has served requests and then none for a whole
 * QUIET_S seconds gives back its writer's page cache and its freed heap
 * (respond_quiet()), what a burst took (bench/README.md, Memory).
 */
#define QUIET_S			1

/*
 * Prints the usage with each option's default to f and exits with code:
 * -h asks for it (standard output, 0), a bad option earns it (standard
 * error, 2).
 */
static void
usage_to(FILE *f, int code)
{
	fprintf(f, "usage: hookbox-fcgi [-hV] [-d DIR] [-s SOCKET [-w WORKERS]"
	    " [-m MODE]] [-t THREADS]\n"
	    "                    [-l BODY_MAX] [-b BUSY_MS]\n"
	    "  -d DIR       data directory, or a PostgreSQL conninfo (default"
	    " $HOOKBOX_DB,\n"
	    "               else $HOOKBOX_DIR)\n"
	    "  -s SOCKET    unix socket path or [HOST]:PORT (default: the"
	    " socket on fd 0,\n"
	    "               or one CGI request)\n"
	    "  -w WORKERS   worker processes, 1.." HB_STR(SUPER_WORKERS_MAX)
	    " (default 1)\n"
	    "  -m MODE      socket mode, octal (default 0%o)\n"
	    "  -t THREADS   serving threads per process, 1.." HB_STR(THREADS_MAX)
	    " (default %d)\n"
	    "  -l BODY_MAX  body limit in bytes (default %d)\n"
	    "  -b BUSY_MS   busy timeout, 0..600000 (default $HOOKBOX_BUSY_MS,"
	    " else %d)\n"
	    "  -h           this help\n"
	    "  -V           print the version\n",
	    (unsigned)SOCKET_MODE_DEFAULT, THREADS_DEFAULT,
	    HB_BODY_MAX_DEFAULT, STORE_BUSY_MS_DEFAULT);
	exit(code);
}

static void
usage(void)
{
	usage_to(stderr, 2);
}

/* An octal file mode, as chmod(1) writes it: "660", "0660". */
static int
parse_mode(const char *s, mode_t *mode)
{
	unsigned	v = 0;
	size_t		i;

	if (s[0] == '\0' || strlen(s) > 4)
		return -1;
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] < '0' || s[i] > '7')
			return -1;
		v = v * 8 + (unsigned)(s[i] - '0');
	}
	if (v > 0777)
		return -1;
	*mode = (mode_t)v;
	return 0;
}

/*
 * A TCP socket on every address ("-s :9000", "0.0.0.0:9000") lets anyone
 * who reaches the port talk FastCGI to us, bypassing nginx.
 */
static void
warn_wildcard(const char *sock)
{
	if (sock[0] == '/')
		return;
	if (sock[0] == ':' || strncmp(sock, "0.0.0.0:", 8) == 0 ||
	    strncmp(sock, "*:", 2) == 0 || strncmp(sock, "[::]:", 5) == 0 ||
	    strncmp(sock, ":::", 3) == 0)
		log_event(LOG_LV_WARN, "wildcard_socket", "socket", sock,
		    "msg", getenv("FCGI_WEB_SERVER_ADDRS") != NULL ?
		    "listens on every address: anyone who reaches the port"
		    " can send requests past nginx; bind 127.0.0.1:PORT" :
		    "listens on every address: anyone who reaches the port"
		    " can send requests past nginx; bind 127.0.0.1:PORT, or"
		    " set FCGI_WEB_SERVER_ADDRS to nginx's address",
		    (char *)NULL);
}

/* A start-up failure: one line, and exit with code. */
static void
fail(int code, const char *what)
{
	log_event(LOG_LV_ERROR, "start_failed", "error", what, (char *)NULL);
	exit(code);
}

static void
die(const char *what)
{
	fail(1, what);
}

/* ---- FastCGI transport ---- */

static const char *
fcgi_param(void *arg, const char *name)
{
	return FCGX_GetParam(name, ((FCGX_Request *)arg)->envp);
}

static size_t
fcgi_read(void *arg, char *buf, size_t len)
{
	FCGX_Request	*r = arg;
	size_t		 got = 0;
	int		 n;

	while (got < len) {
		n = FCGX_GetStr(buf + got, len - got > 65536 ? 65536 :
		    (int)(len - got), r->in);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

static int
fcgi_write(void *arg, const char *buf, size_t len)
{
	return FCGX_PutStr(buf, (int)len, ((FCGX_Request *)arg)->out) ==
	    (int)len ? 0 : -1;
}

/*
 * Ends the request.  libfcgi closes a connection by shutting down its
 * write side and then reading, up to two seconds, what the peer still
 * sends: three system calls, there so that input left unread does not
 * turn the close into a reset that could cut the answer short.  A
 * request whose input was read to its end has none left (nginx sends the
 * body's end with the body): its connection is closed at once.  Finding
 * the end costs no system call when it came with the body, as it does
 * from nginx; a peer that withholds it could as well withhold the body.
 */
static void
fcgi_finish(FCGX_Request *r)
{
	char	c;

	if (FCGX_GetStr(&c, 1, r->in) == 0 && FCGX_HasSeenEOF(r->in) == EOF)
		(void)FCGX_Detach(r);
	FCGX_Finish_r(r);
}

/* ---- CGI transport ---- */

static const char *
cgi_param(void *arg, const char *name)
{
	(void)arg;
	return getenv(name);
}

static size_t
cgi_read(void *arg, char *buf, size_t len)
{
	(void)arg;
	return fread(buf, 1, len, stdin);
}

static int
cgi_write(void *arg, const char *buf, size_t len)
{
	(void)arg;
	return fwrite(buf, 1, len, stdout) == len ? 0 : -1;
}

/* ---- process model ---- */

/*
 * XXX A stop that lands after libfcgi accepted a connection but before
 * in_request is set drops that connection: nginx answers 502 and the
 * provider retries.  Nothing was committed, so nothing is lost.
 */
static void
on_term(int sig)
{
	(void)sig;
	stopping = 1;
	/* Idle in accept(): nothing to finish, leave now. */
	if (!in_request)
		_exit(0);
}

/* The stops: SIGTERM and SIGINT. */
static void
stop_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
}

static void
serve(struct resp_server *srv, int listen_fd)
{
	struct sigaction	sa;
	sigset_t		stops;
	FCGX_Request		req;
	struct resp_io		io;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	/* A stop must not cut a body read short: restart the read. */
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* Held since start-up (main()): one already sent ends us here. */
	stop_set(&stops);
	pthread_sigmask(SIG_UNBLOCK, &stops, NULL);
	if (FCGX_InitRequest(&req, listen_fd, 0) != 0)
		die("cannot initialise a FastCGI request");
	io.param = fcgi_param;
	io.read = fcgi_read;
	io.write = fcgi_write;
	io.arg = &req;
	while (!stopping) {
		if (FCGX_Accept_r(&req) < 0) {
			if (errno == EINTR && !stopping)
				continue;
			break;
		}
		in_request = 1;
		respond(srv, &io);
		fcgi_finish(&req);
		in_request = 0;
	}
	respond_close(srv);
}

/*
 * The threaded process: what its serving threads share.  busy counts the
 * requests being served, so that a stop waits for them and no longer.
 */
struct pool {
	/*
	 * The threads' one server: its shared state set, respond() only
	 * reads it (a copy each would be a copy of the settings' paths on
	 * every thread's stack).
	 */
	struct resp_server		*srv;
	int				 listen_fd;
	pthread_mutex_t			 lock;
	pthread_cond_t			 idle;
	int				 busy;
	unsigned long			 served;	/* requests answered */
	int				 stopping;
	/* The main thread's alone: served at its last two looks. */
	unsigned long			 seen, given;
};

static void *
pool_thread(void *arg)
{
	struct pool	*p = arg;
	FCGX_Request	 req;
	struct resp_io	 io;
	int		 stop = 0;

	if (FCGX_InitRequest(&req, p->listen_fd, 0) != 0)
		return NULL;
	io.param = fcgi_param;
	io.read = fcgi_read;
	io.write = fcgi_write;
	io.arg = &req;
	while (!stop) {
		if (FCGX_Accept_r(&req) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		pthread_mutex_lock(&p->lock);
		p->busy++;
		pthread_mutex_unlock(&p->lock);
		/* A request accepted during a stop is still answered. */
		respond(p->srv, &io);
		fcgi_finish(&req);
		pthread_mutex_lock(&p->lock);
		p->served++;
		if (--p->busy == 0 && p->stopping)
			pthread_cond_signal(&p->idle);
		stop = p->stopping;
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

/*
 * Waits up to QUIET_S seconds for a stop: returns 0 when one came, else
 * -1, having called respond_quiet() if the pool served requests before
 * the last wait and none since.
 */
static int
wait_stop(struct pool *p, const sigset_t *stops)
{
	struct timespec		 ts = { QUIET_S, 0 };
	unsigned long		 n;
	int			 busy;

	if (sigtimedwait(stops, NULL, &ts) > 0)
		return 0;
	pthread_mutex_lock(&p->lock);
	n = p->served;
	busy = p->busy;
	pthread_mutex_unlock(&p->lock);
	if (busy == 0 && n == p->seen && n != p->given) {
		respond_quiet(p->srv->shared);
		p->given = n;
	}
	p->seen = n;
	return -1;
}

/*
 * Serves with n threads and one writer until SIGTERM or SIGINT, then
 * returns once the requests in flight are answered.  Threads idle in
 * accept() are not waited for: the process ends under them.
 */
static int
serve_threads(struct resp_server *srv, int listen_fd, int n)
{
	static struct pool	 p;	/* outlives the call: see the end */
	pthread_attr_t		 attr;
	pthread_t		 tid;
	sigset_t		 stops, old;
	int			 i, started = 0;

	memset(&p, 0, sizeof(p));
	p.srv = srv;
	p.listen_fd = listen_fd;
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.idle, NULL);
	/* Every thread is born with the stops blocked: this one takes them. */
	stop_set(&stops);
	pthread_sigmask(SIG_BLOCK, &stops, &old);

	if (respond_shared_new(&srv->set, n, &srv->shared) != 0) {
		/* A thread limit must not take the service down with it. */
		log_event(LOG_LV_ERROR, "threads_failed", "error",
		    strerror(errno), "msg", "cannot start the writer thread;"
		    " serving on one thread", (char *)NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		serve(srv, listen_fd);
		return 0;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < n; i++)
		if (pthread_create(&tid, &attr, pool_thread, &p) == 0)
			started++;
	pthread_attr_destroy(&attr);
	if (started < n) {
		struct log_line	l;

		log_begin(&l, LOG_LV_WARN, "threads_short");
		log_int(&l, "started", started);
		log_int(&l, "threads", n);
		log_end(&l);
	}
	if (started == 0) {
		respond_shared_free(srv->shared);
		srv->shared = NULL;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		serve(srv, listen_fd);
		return 0;
	}

	while (wait_stop(&p, &stops) != 0)
		continue;
	pthread_mutex_lock(&p.lock);
	p.stopping = 1;
	while (p.busy > 0)
		pthread_cond_wait(&p.idle, &p.lock);
	pthread_mutex_unlock(&p.lock);
	/*
	 * Every answered request's work is committed and nothing waits for
	 * the writer.  The shared state is not freed: a thread idle in
	 * accept() may still take a connection as the process ends, and
	 * what it would serve is never answered, so never acknowledged.
	 */
	return 0;
}

/* What a worker gets: the server state and the socket, the fork's copy. */
struct worker {
	struct resp_server	*srv;
	int			 listen_fd;
	int			 threads;
};

static int
worker_main(void *arg)
{
	struct worker	*w = arg;

	if (w->threads > 1)
		return serve_threads(w->srv, w->listen_fd, w->threads);
	serve(w->srv, w->listen_fd);
	return 0;
}

/*
 * Keeps n workers alive until SIGTERM or SIGINT, then stops them (each
 * finishes the request it is serving) and returns the exit status.
 * Workers open their own database connections after the fork.
 */
static int
supervise(struct resp_server *srv, int listen_fd, int n, int threads)
{
	struct super_opts	o;
	struct worker		w;

	memset(&o, 0, sizeof(o));
	o.name = "hookbox-fcgi";
	o.workers = n;
	o.respawn = 1;
	w.srv = srv;
	w.listen_fd = listen_fd;
	w.threads = threads;
	return super_run(&o, worker_main, &w);
}

/* One line at start-up: which build serves which directory, and how. */
static void
start_line(const struct resp_server *srv, const char *sock,
    long long workers, long long threads)
{
	struct log_line	l;

	log_begin(&l, LOG_LV_INFO, "start");
	log_str(&l, "program", "hookbox-fcgi");
	log_str(&l, "version", HB_VERSION);
	log_str(&l, "dir", srv->set.shown);
	log_str(&l, "backend", srv->set.backend);
	log_str(&l, "socket", sock != NULL ? sock : "fd0");
	log_int(&l, "workers", workers);
	log_int(&l, "threads", threads);
	/* What the database must allow for this responder (README). */
	log_int(&l, "connections", workers *
	    respond_connections((int)threads, srv->set.server));
	log_end(&l);
}

/*
 * PostgreSQL: one connection at start-up, as the serving role, to say at
 * once (rather than at the first request) that the server cannot be
 * reached, the schemas are missing, or the role lacks its grants.  The
 * writes insert no row.  Not fatal: the responder answers 503 until the
 * database does, and then serves without a restart.  A directory has
 * nothing to probe here (settings_check_dir() checked it).
 */
static void
probe_db(const struct settings *set)
{
	char			why[512];
	enum access_status	rc;

	switch ((rc = access_probe(set->dir, set->busy_ms, ACCESS_SERVE, why,
	    sizeof(why)))) {
	case ACCESS_OK:
		break;
	case ACCESS_UNREACHABLE:
		log_event(LOG_LV_ERROR, "db_unavailable", "backend",
		    "postgresql", "db", set->shown, "error", why, "msg",
		    "cannot connect; answering 503 until it can",
		    (char *)NULL);
		break;
	default:
		log_event(LOG_LV_ERROR, rc == ACCESS_DENIED ? "db_denied" :
		    "db_unusable", "backend", "postgresql", "db", set->shown,
		    "error", why, "msg", rc == ACCESS_DENIED ?
		    "this role may not read the configuration or write the"
		    " state: run `hookbox init --grant ROLE` as the admin;"
		    " answering 503" : "the schemas are missing or unusable:"
		    " run `hookbox init`; answering 503", (char *)NULL);
		break;
	}
}

int
main(int argc, char *argv[])
{
	struct resp_server	 srv;
	struct resp_io		 io;
	struct log_line		 l;
	const char		*dir = NULL, *sock = NULL, *err, *why;
	char			 dirwhy[PATH_MAX + 128];
	long long		 workers = 1, threads = THREADS_DEFAULT;
	long long		 busy_ms = -1;
	mode_t			 mode = SOCKET_MODE_DEFAULT, mask;
	sigset_t		 stops;
	int			 ch, fd, rc, workers_set = 0;

	memset(&srv, 0, sizeof(srv));
	srv.body_max = HB_BODY_MAX_DEFAULT;
	srv.retry_after = 5;
	while ((ch = getopt(argc, argv, "b:d:hl:m:s:t:Vw:")) != -1)
		switch (ch) {
		case 'h':
			usage_to(stdout, 0);
			break;
		case 'V':
			printf("hookbox-fcgi %s\n", HB_VERSION);
			return 0;
		case 'b':
			busy_ms = util_strtonum(optarg, 0, 600000, &err);
			if (err != NULL)
				usage();
			break;
		case 'd':
			dir = optarg;
			break;
		case 'l':
			srv.body_max = (size_t)util_strtonum(optarg, 1,
			    64 * 1024 * 1024, &err);
			if (err != NULL)
				usage();
			break;
		case 'm':
			if (parse_mode(optarg, &mode) != 0)
				usage();
			break;
		case 's':
			sock = optarg;
			break;
		case 't':
			threads = util_strtonum(optarg, 1, THREADS_MAX, &err);
			if (err != NULL)
				usage();
			break;
		case 'w':
			workers = util_strtonum(optarg, 1, SUPER_WORKERS_MAX,
			    &err);
			if (err != NULL)
				usage();
			workers_set = 1;
			break;
		default:
			usage();
		}
	if (argc != optind)
		usage();
	if (util_init() != 0)
		die("libsodium failed to initialise");
	/* Every request allocates and frees much the same memory. */
	util_keep_heap();
	/* The operator's data directory: a request cannot choose another. */
	if (settings_load(&srv.set, dir, (int)busy_ms, 1, &why) != 0)
		fail(2, why);
	/* Never serve a directory this user cannot use: say why, and go. */
	if (settings_check_dir(&srv.set, SETTINGS_NEED_CONFIG_READ |
	    SETTINGS_NEED_STATE_WRITE, dirwhy, sizeof(dirwhy)) !=
	    SETTINGS_DIR_OK)
		fail(2, dirwhy);
	if (srv.set.argv_password)
		log_event(LOG_LV_WARN, "password_in_argv", "msg", "-d holds a"
		    " password, which any user can read in ps(1); put it in"
		    " ~/.pgpass (or PGPASSFILE) and the conninfo in HOOKBOX_DB",
		    (char *)NULL);
	probe_db(&srv.set);
	signal(SIGPIPE, SIG_IGN);
	/*
	 * The stops are held from here until whoever serves takes them
	 * (serve(), serve_threads(), the supervisor).  FCGX_Init() catches
	 * SIGTERM into a flag of its own that nothing here reads: a stop
	 * sent as the socket is bound would be lost there, and the process
	 * would serve on.  SIGTERM gets its default back.
	 */
	stop_set(&stops);
	if (sigprocmask(SIG_BLOCK, &stops, NULL) != 0)
		die("cannot block SIGTERM");
	if (FCGX_Init() != 0)
		die("cannot initialise libfcgi");
	signal(SIGTERM, SIG_DFL);

	if (sock != NULL) {
		warn_wildcard(sock);
		/* The socket is born with its mode: no window with a looser one. */
		mask = umask(~mode & 0777);
		fd = FCGX_OpenSocket(sock, 128);
		umask(mask);
		if (fd < 0)
			die("cannot listen on the socket");
		if (sock[0] == '/' && chmod(sock, mode) != 0)
			die("cannot set the socket's mode");
		start_line(&srv, sock, workers, threads);
		rc = supervise(&srv, fd, (int)workers, (int)threads);
		close(fd);
		if (sock[0] == '/')
			unlink(sock);
		log_begin(&l, LOG_LV_INFO, "stop");
		log_str(&l, "program", "hookbox-fcgi");
		log_int(&l, "exit", rc);
		log_end(&l);
		return rc;
	}
	if (!FCGX_IsCGI()) {
		/*
		 * A FastCGI manager (spawn-fcgi) gave us fd 0.  It may fork
		 * the processes itself (spawn-fcgi -F), so one process unless
		 * -w says otherwise.
		 */
		start_line(&srv, NULL, workers_set ? workers : 1, threads);
		if (workers_set && workers > 1)
			return supervise(&srv, 0, (int)workers, (int)threads);
		if (threads > 1)
			return serve_threads(&srv, 0, (int)threads);
		serve(&srv, 0);
		return 0;
	}
	/* Plain CGI: one request. */
	if (getenv("GATEWAY_INTERFACE") == NULL &&
	    getenv("REQUEST_METHOD") == NULL) {
		fail(2, "not started by a web server (no socket on fd 0, no"
		    " CGI variables); see -s");
	}
	sigprocmask(SIG_UNBLOCK, &stops, NULL);
	io.param = cgi_param;
	io.read = cgi_read;
	io.write = cgi_write;
	io.arg = NULL;
	respond(&srv, &io);
	respond_close(&srv);
	return fflush(stdout) == 0 ? 0 : 1;
}
