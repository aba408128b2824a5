/*
 * check_super.c: tests of lib/run/super.c with real processes.
 *
 * Each test forks a supervisor process that calls super_run() (and dies
 * with the test, PR_SET_PDEATHSIG).  Its workers report on a pipe: 'S'
 * when they are ready for signals, 'T' when they got SIGTERM.  Every wait
 * polls every POLL_MS up to WAIT_MS: generous bounds for a loaded
 * machine, never a tight timing.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "base/util.h"
#include "run/super.h"
#include "testutil.h"

#define WAIT_MS		10000
#define POLL_MS		50

/* What a worker is told: where to report, what to return. */
struct job {
	int		 fd;		/* the report pipe's write end */
	int		 code;		/* the worker's return value */
	const char	*path;		/* excl_worker: the file to create */
};

struct report {
	char	ev;		/* 'S' started, 'T' got SIGTERM */
	pid_t	pid;
};

static int	 ev[2];		/* the report pipe */
static char	 dir[256];	/* this test's directory */
static char	 logpath[300];	/* the supervisor's standard error */

static volatile sig_atomic_t	got_term, got_quit;

static Suite	*super_suite(void);

static int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
setup(void)
{
	const char	*d = test_tmpdir();

	ck_assert_int_lt(snprintf(dir, sizeof(dir), "%s", d),
	    (int)sizeof(dir));
	ck_assert_int_lt(snprintf(logpath, sizeof(logpath), "%s/log", dir),
	    (int)sizeof(logpath));
	ck_assert_int_eq(pipe(ev), 0);
}

static void
teardown(void)
{
	close(ev[0]);
	close(ev[1]);
	test_rmdir(dir);
}

static void
say(int fd, char what)
{
	struct report	r;
	ssize_t		n;

	memset(&r, 0, sizeof(r));
	r.ev = what;
	r.pid = getpid();
	n = write(fd, &r, sizeof(r));	/* atomic: under PIPE_BUF */
	(void)n;
}

static void
on_term(int sig)
{
	(void)sig;
	got_term = 1;
}

static void
on_quit(int sig)
{
	(void)sig;
	got_quit = 1;
}

/*
 * A worker that waits: SIGUSR1 makes it return job->code, SIGTERM makes
 * it report 'T' and return job->code.  Its handlers are in place before
 * it reports 'S'.
 */
static int
wait_worker(void *arg)
{
	const struct job	*j = arg;
	struct sigaction	 sa;
	sigset_t		 block, old;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_quit;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old);
	say(j->fd, 'S');
	while (!got_term && !got_quit)
		sigsuspend(&old);
	if (got_term)
		say(j->fd, 'T');
	return j->code;
}

/* A worker that returns at once. */
static int
quick_worker(void *arg)
{
	const struct job	*j = arg;

	say(j->fd, 'S');
	return j->code;
}

/* The one worker that creates j->path returns j->code; the others 0. */
static int
excl_worker(void *arg)
{
	const struct job	*j = arg;
	int			 fd;

	if ((fd = open(j->path, O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0)
		return 0;
	close(fd);
	return j->code;
}

static void
mark(int sig)
{
	(void)sig;
}

/*
 * What the contract promises a worker: the caller's mask (SIGUSR2 blocked
 * there, nothing of the supervisor's), the caller's SIGTERM and SIGINT
 * dispositions, SIGCHLD SIG_DFL, its own process.  One bit per breach.
 */
static int
contract_worker(void *arg)
{
	const struct job	*j = arg;
	struct sigaction	 sa;
	sigset_t		 m;
	int			 bad = 0;

	(void)j;
	sigprocmask(SIG_SETMASK, NULL, &m);
	if (!sigismember(&m, SIGUSR2))
		bad |= 1;
	if (sigismember(&m, SIGTERM) || sigismember(&m, SIGINT) ||
	    sigismember(&m, SIGCHLD))
		bad |= 2;
	sigaction(SIGTERM, NULL, &sa);
	if (sa.sa_handler != mark)
		bad |= 4;
	sigaction(SIGINT, NULL, &sa);
	if (sa.sa_handler != SIG_IGN)
		bad |= 8;
	sigaction(SIGCHLD, NULL, &sa);
	if (sa.sa_handler != SIG_DFL)
		bad |= 16;
	return bad;
}

/*
 * The supervisor's process starts with SIGTERM and SIGINT at SIG_DFL:
 * Check's runner handles them by signalling the test's whole process
 * group, and a worker would inherit that handler (as the contract says).
 */
static void
plain_signals(void)
{
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
}

/*
 * Forks the supervisor: super_run(workers, respawn, fn, job) with its
 * standard error in logpath; the caller's signal state set up by prep
 * (may be NULL) first.  It exits with super_run()'s status.
 */
static pid_t
start(int workers, int respawn, const char *name, int (*fn)(void *),
    struct job *j, void (*prep)(void))
{
	struct super_opts	o;
	pid_t			parent = getpid(), pid;
	int			fd;

	memset(&o, 0, sizeof(o));
	o.name = name;
	o.workers = workers;
	o.respawn = respawn;
	j->fd = ev[1];
	ck_assert_int_ge(pid = fork(), 0);
	if (pid > 0)
		return pid;
	/* Never left behind by a failed test. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(99);
	if ((fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0600)) < 0 ||
	    dup2(fd, 2) < 0)
		_exit(99);
	close(fd);
	plain_signals();
	if (prep != NULL)
		prep();
	_exit(super_run(&o, fn, j));
}

/* The next report within ms; 0, or -1 when none came. */
static int
next_report(struct report *r, int ms)
{
	struct pollfd	p;
	int64_t		end = now_ms() + ms;
	ssize_t		n;

	p.fd = ev[0];
	p.events = POLLIN;
	for (;;) {
		if (poll(&p, 1, POLL_MS) == 1) {
			n = read(ev[0], r, sizeof(*r));
			ck_assert_int_eq(n, (ssize_t)sizeof(*r));
			return 0;
		}
		if (now_ms() >= end)
			return -1;
	}
}

/* Waits for n reports of kind what, their pids into pids. */
static void
expect(char what, int n, pid_t *pids)
{
	struct report	r;
	int		i;

	for (i = 0; i < n; i++) {
		ck_assert_msg(next_report(&r, WAIT_MS) == 0,
		    "report %c %d of %d: none within %d ms", what, i + 1, n,
		    WAIT_MS);
		ck_assert_int_eq(r.ev, what);
		pids[i] = r.pid;
	}
}

/* Waits for pid to exit; returns its wait status, or -1 past WAIT_MS. */
static int
exited(pid_t pid)
{
	int64_t	end = now_ms() + WAIT_MS;
	int	st;

	while (now_ms() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(POLL_MS * 1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/* The supervisor's exit status, or -1. */
static int
exit_code(pid_t pid)
{
	int	st = exited(pid);

	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The supervisor's standard error so far, NUL-terminated, static. */
static const char *
log_text(void)
{
	static char	 buf[8192];
	ssize_t		 n;
	int		 fd;

	buf[0] = '\0';
	if ((fd = open(logpath, O_RDONLY)) < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return buf;
}

static int
count(const char *hay, const char *needle)
{
	int	n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* A process is gone (reaped); a zombie would still answer kill(). */
static int
gone(pid_t pid)
{
	return kill(pid, 0) != 0 && errno == ESRCH;
}

/* N workers start; SIGTERM to the supervisor stops them all and returns. */
START_TEST(starts_n_and_stops)
{
	struct job	j = { 0, 0, NULL };
	pid_t		sup, s[3], t[3];
	int		i, k, found;

	sup = start(3, 1, "test", wait_worker, &j, NULL);
	expect('S', 3, s);
	ck_assert(s[0] != s[1] && s[1] != s[2] && s[0] != s[2]);
	ck_assert_int_eq(kill(sup, SIGTERM), 0);
	expect('T', 3, t);
	for (i = 0; i < 3; i++) {
		for (found = 0, k = 0; k < 3; k++)
			found |= t[k] == s[i];
		ck_assert_msg(found, "worker %d got no SIGTERM", (int)s[i]);
	}
	ck_assert_int_eq(exit_code(sup), 0);
	for (i = 0; i < 3; i++)
		ck_assert_msg(gone(s[i]), "worker %d left behind", (int)s[i]);
	/* A stop is not a worker exiting: nothing to report. */
	ck_assert_int_eq(count(log_text(), "restarting"), 0);
}
END_TEST

/* Respawn: a worker that exits is logged and started again. */
START_TEST(respawn_restarts)
{
	struct job	j = { 0, 0, NULL };
	struct report	r;
	pid_t		sup, s[2], t[2], again;
	char		line[128];

	sup = start(2, 1, "test", wait_worker, &j, NULL);
	expect('S', 2, s);
	ck_assert_int_eq(kill(s[0], SIGUSR1), 0);
	expect('S', 1, &again);
	ck_assert(again != s[0] && again != s[1]);
	ck_assert_int_lt(snprintf(line, sizeof(line),
	    " level=error event=worker_exited program=test pid=%d"
	    " how=\"status 0\" restarting=yes\n", (int)s[0]),
	    (int)sizeof(line));
	ck_assert_ptr_nonnull(strstr(log_text(), line));
	ck_assert_int_eq(kill(sup, SIGTERM), 0);
	expect('T', 2, t);
	ck_assert_int_eq(exit_code(sup), 0);
	ck_assert_int_eq(next_report(&r, 0), -1);
}
END_TEST

/* Run once: a worker that exits is not replaced; the others go on. */
START_TEST(once_no_restart)
{
	struct job	j = { 0, 0, NULL };
	struct report	r;
	pid_t		sup, s[2];
	int		st;

	sup = start(2, 0, "test", wait_worker, &j, NULL);
	expect('S', 2, s);
	ck_assert_int_eq(kill(s[0], SIGUSR1), 0);
	/* Longer than a respawn's delay; no bound to be late for. */
	ck_assert_int_eq(next_report(&r, 2 * SUPER_RESTART_MS), -1);
	ck_assert_int_eq(waitpid(sup, &st, WNOHANG), 0);
	ck_assert(!gone(s[1]));
	ck_assert_int_eq(kill(s[1], SIGUSR1), 0);
	ck_assert_int_eq(exit_code(sup), 0);
	ck_assert_int_eq(next_report(&r, 0), -1);
	ck_assert_str_eq(log_text(), "");
}
END_TEST

/* Run once: SIGINT is a stop too, passed on as SIGTERM. */
START_TEST(once_sigint_stops)
{
	struct job	j = { 0, 0, NULL };
	pid_t		sup, s[2], t[2];

	sup = start(2, 0, "test", wait_worker, &j, NULL);
	expect('S', 2, s);
	ck_assert_int_eq(kill(sup, SIGINT), 0);
	expect('T', 2, t);
	ck_assert_int_eq(exit_code(sup), 0);
}
END_TEST

static void
ignore_sigint(void)
{
	signal(SIGINT, SIG_IGN);
}

/* A caller that ignores SIGINT (a shell's background job) still stops. */
START_TEST(sigint_ignored_by_caller)
{
	struct job	j = { 0, 0, NULL };
	pid_t		sup, s[1], t[1];

	sup = start(1, 1, "test", wait_worker, &j, ignore_sigint);
	expect('S', 1, s);
	ck_assert_int_eq(kill(sup, SIGINT), 0);
	expect('T', 1, t);
	ck_assert_int_eq(t[0], s[0]);
	ck_assert_int_eq(exit_code(sup), 0);
}
END_TEST

/*
 * A worker that dies at once does not make the supervisor spin: at most
 * one fork per SUPER_RESTART_MS, however late this test looks.  The log
 * prefix, which the caller gives, is escaped.
 */
START_TEST(no_spin)
{
	struct job	j = { 0, 1, NULL };
	struct report	r;
	int64_t		t0 = now_ms(), left, elapsed;
	pid_t		sup;
	int		starts = 0;
	const char	*log;

	sup = start(1, 1, "hb\n\033[31m", quick_worker, &j, NULL);
	for (;;) {
		elapsed = now_ms() - t0;
		if ((elapsed >= 2000 && starts >= 2) || elapsed >= WAIT_MS)
			break;
		left = 2000 - elapsed;
		if (next_report(&r, left > POLL_MS ? (int)left : POLL_MS) == 0)
			starts++;
	}
	ck_assert_int_eq(kill(sup, SIGTERM), 0);
	ck_assert_int_eq(exit_code(sup), 0);
	elapsed = now_ms() - t0;
	while (next_report(&r, 0) == 0)
		starts++;
	ck_assert_int_ge(starts, 2);
	ck_assert_msg(starts <= elapsed / SUPER_RESTART_MS + 2,
	    "%d starts in %lld ms", starts, (long long)elapsed);
	log = log_text();
	ck_assert_int_ge(count(log, "how=\"status 1\" restarting=yes\n"), 1);
	ck_assert_int_le(count(log, "restarting"), starts);
	ck_assert_ptr_nonnull(strstr(log, " program=\"hb\\n\\x1b[31m\" pid="));
	ck_assert_ptr_null(strchr(log, '\033'));
}
END_TEST

/* Run once: the exit status is the first failing worker's. */
START_TEST(once_status)
{
	struct job	j = { 0, 0, NULL };
	char		path[320];
	pid_t		sup;

	sup = start(3, 0, "test", quick_worker, &j, NULL);
	ck_assert_int_eq(exit_code(sup), 0);

	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/one", dir),
	    (int)sizeof(path));
	j.path = path;
	j.code = 5;
	sup = start(3, 0, "test", excl_worker, &j, NULL);
	ck_assert_int_eq(exit_code(sup), 5);

	j.code = 7;
	sup = start(2, 0, "test", quick_worker, &j, NULL);
	ck_assert_int_eq(exit_code(sup), 7);
	ck_assert_str_eq(log_text(), "");
}
END_TEST

/* Run once: a worker killed by a signal counts as 1, and is logged. */
START_TEST(once_signal_fails)
{
	struct job	j = { 0, 0, NULL };
	pid_t		sup, s[2];
	char		line[128];

	sup = start(2, 0, "test", wait_worker, &j, NULL);
	expect('S', 2, s);
	ck_assert_int_eq(kill(s[0], SIGKILL), 0);
	ck_assert_int_eq(kill(s[1], SIGUSR1), 0);
	ck_assert_int_eq(exit_code(sup), 1);
	ck_assert_int_lt(snprintf(line, sizeof(line),
	    " level=error event=worker_exited program=test pid=%d"
	    " how=\"signal %d\" restarting=no\n", (int)s[0], SIGKILL),
	    (int)sizeof(line));
	/* One line, and that one. */
	ck_assert_int_eq(count(log_text(), "\n"), 1);
	ck_assert_ptr_nonnull(strstr(log_text(), line));
}
END_TEST

/* Workers get SIGTERM when their supervisor is SIGKILLed. */
START_TEST(pdeathsig)
{
	struct job	j = { 0, 0, NULL };
	pid_t		sup, s[2], t[2];
	int		st;

	sup = start(2, 1, "test", wait_worker, &j, NULL);
	expect('S', 2, s);
	ck_assert_int_eq(kill(sup, SIGKILL), 0);
	ck_assert_int_eq(waitpid(sup, &st, 0), sup);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	expect('T', 2, t);
	ck_assert((t[0] == s[0] && t[1] == s[1]) ||
	    (t[0] == s[1] && t[1] == s[0]));
}
END_TEST

static volatile sig_atomic_t	caller_term;

static void
on_caller_term(int sig)
{
	(void)sig;
	caller_term = 1;
}

static void
contract_prep(void)
{
	struct sigaction	sa;
	sigset_t		m;

	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	sigprocmask(SIG_BLOCK, &m, NULL);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = mark;
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGINT, SIG_IGN);
	signal(SIGCHLD, SIG_IGN);
}

/* The worker starts with the caller's mask and dispositions. */
START_TEST(child_contract)
{
	struct job	j = { 0, 0, NULL };
	pid_t		sup;

	sup = start(1, 0, "test", contract_worker, &j, contract_prep);
	ck_assert_int_eq(exit_code(sup), 0);
}
END_TEST

/*
 * After super_run() the caller has its own mask and dispositions back,
 * and the stop super_run() took does not reach the caller's handler.
 */
static int
after_run(void)
{
	struct super_opts	o;
	struct sigaction	sa;
	struct job		j = { ev[1], 0, NULL };
	sigset_t		m;
	int			rc, bad = 0;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_caller_term;
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGCHLD, SIG_IGN);
	memset(&o, 0, sizeof(o));
	o.name = "test";
	o.workers = 1;
	o.respawn = 1;
	rc = super_run(&o, wait_worker, &j);
	sigprocmask(SIG_SETMASK, NULL, &m);
	if (sigismember(&m, SIGTERM) || sigismember(&m, SIGINT) ||
	    sigismember(&m, SIGCHLD))
		bad |= 2;
	sigaction(SIGTERM, NULL, &sa);
	if (sa.sa_handler != on_caller_term)
		bad |= 4;
	sigaction(SIGCHLD, NULL, &sa);
	if (sa.sa_handler != SIG_IGN)
		bad |= 8;
	if (caller_term)
		bad |= 16;
	return rc | bad;
}

START_TEST(caller_restored)
{
	pid_t	sup, parent = getpid(), s[1], t[1];

	ck_assert_int_ge(sup = fork(), 0);
	if (sup == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 ||
		    getppid() != parent)
			_exit(99);
		plain_signals();
		_exit(after_run());
	}
	expect('S', 1, s);
	ck_assert_int_eq(kill(sup, SIGTERM), 0);
	expect('T', 1, t);
	ck_assert_int_eq(exit_code(sup), 0);
}
END_TEST

/* Options out of range: 1, nothing forked. */
START_TEST(bad_options)
{
	struct super_opts	o;
	struct job		j = { -1, 0, NULL };
	int			n[] = { 0, -1, SUPER_WORKERS_MAX + 1 };
	size_t			i;
	int			fd;

	ck_assert_int_ge(fd = open(logpath, O_WRONLY | O_CREAT, 0600), 0);
	ck_assert_int_eq(dup2(fd, 2), 2);
	close(fd);
	memset(&o, 0, sizeof(o));
	o.name = "test";
	for (i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
		o.workers = n[i];
		o.respawn = (int)(i % 2);
		ck_assert_int_eq(super_run(&o, quick_worker, &j), 1);
	}
	o.workers = 1;
	ck_assert_int_eq(super_run(&o, NULL, &j), 1);
	ck_assert_int_eq(super_run(NULL, quick_worker, &j), 1);
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	ck_assert_int_eq(count(log_text(),
	    " event=start_failed program=test"
	    " error=\"workers: out of range 1..64\"\n"), 4);
	ck_assert_int_eq(count(log_text(), " event=start_failed program=super"
	    " error=\"workers: out of range"), 1);
}
END_TEST

static Suite *
super_suite(void)
{
	Suite	*s = suite_create("super");
	TCase	*tc = tcase_create("processes");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, starts_n_and_stops);
	tcase_add_test(tc, respawn_restarts);
	tcase_add_test(tc, once_no_restart);
	tcase_add_test(tc, once_sigint_stops);
	tcase_add_test(tc, sigint_ignored_by_caller);
	tcase_add_test(tc, no_spin);
	tcase_add_test(tc, once_status);
	tcase_add_test(tc, once_signal_fails);
	tcase_add_test(tc, pdeathsig);
	tcase_add_test(tc, child_contract);
	tcase_add_test(tc, caller_restored);
	tcase_add_test(tc, bad_options);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return test_run(super_suite);
}
