/*
 * run/super.c: the fork/wait supervisor (see run/super.h for the contract).
 *
 * The supervisor keeps SIGTERM, SIGINT and SIGCHLD blocked from start to
 * end and takes them with sigtimedwait(): a signal that arrives between
 * a check and the wait stays pending instead of being lost, a restart
 * delay or a fork retry is the wait's timeout (no alarm(), no sleep()
 * that would hold a stop back), and no handler shares state with it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/text.h"
#include "base/util.h"
#include "run/super.h"

#define SUPER_NAME_MAX	64	/* the program named in log lines */

struct super {
	const struct super_opts	*o;
	int			(*child)(void *);
	void			*arg;
	char			 name[SUPER_NAME_MAX];
	pid_t			 self;
	pid_t			 pid[SUPER_WORKERS_MAX];	/* 0: empty */
	int64_t			 forked[SUPER_WORKERS_MAX]; /* last fork, ms */
	int			 live;		/* slots with a pid */
	int			 stopping;
	int			 rc;		/* run once: status so far */
	sigset_t		 owned;		/* SIGTERM, SIGINT, SIGCHLD */
	sigset_t		 caller_mask;
	struct sigaction	 caller_term, caller_int, caller_chld;
};

/*
 * Installed so that the signals are not discarded while blocked (SIGCHLD
 * by default, SIGINT when the caller ignores it); it never runs, since
 * they stay blocked and sigtimedwait() takes them.
 */
static void
on_signal(int sig)
{
	(void)sig;
}

static int64_t
mono_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* In the new process: become the caller's again, then run child(). */
static void
worker(struct super *s)
{
	struct sigaction	sa;

	/*
	 * Never outlive the supervisor.  It may have died before prctl()
	 * took effect: then the parent is no longer the one that forked us.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != s->self)
		_exit(1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	/* Dispositions first: a stop already pending meets the caller's. */
	if (sigaction(SIGCHLD, &sa, NULL) != 0 ||
	    sigaction(SIGTERM, &s->caller_term, NULL) != 0 ||
	    sigaction(SIGINT, &s->caller_int, NULL) != 0 ||
	    sigprocmask(SIG_SETMASK, &s->caller_mask, NULL) != 0)
		_exit(1);
	_exit(s->child(s->arg));
}

/* Forks slot i's worker; a failure is logged, and in run-once mode stops. */
static void
spawn(struct super *s, int i)
{
	pid_t	pid;

	s->forked[i] = mono_ms();
	if ((pid = fork()) == 0)
		worker(s);
	if (pid < 0) {
		log_event(LOG_LV_ERROR, "fork_failed", "program", s->name,
		    "error", strerror(errno), (char *)NULL);
		if (!s->o->respawn) {
			if (s->rc == 0)
				s->rc = 1;
			s->stopping = 1;
		}
		return;
	}
	s->pid[i] = pid;
	s->live++;
}

/*
 * Slot i's worker has ended with wait status st (-1: unknown, someone
 * else reaped it).  Counts it, and says so unless it was asked to stop.
 */
static void
ended(struct super *s, int i, int st)
{
	struct log_line	l;
	char		how[32];
	int		code;

	if (st != -1 && WIFEXITED(st)) {
		code = WEXITSTATUS(st);
		(void)snprintf(how, sizeof(how), "status %d", code);
	} else {
		code = 1;
		if (st != -1)
			(void)snprintf(how, sizeof(how), "signal %d",
			    WTERMSIG(st));
		else
			(void)snprintf(how, sizeof(how), "status unknown");
	}
	if ((s->o->respawn && !s->stopping) || (!s->o->respawn &&
	    !s->stopping && code != 0 && (st == -1 || !WIFEXITED(st)))) {
		/* A worker says why it returned non-zero; not why it died. */
		log_begin(&l, LOG_LV_ERROR, "worker_exited");
		log_str(&l, "program", s->name);
		log_int(&l, "pid", (long long)s->pid[i]);
		log_str(&l, "how", how);
		log_str(&l, "restarting", s->o->respawn ? "yes" : "no");
		log_end(&l);
	}
	if (!s->o->respawn && code != 0 && s->rc == 0)
		s->rc = code;
	s->pid[i] = 0;
	s->live--;
}

/* Collects every worker that has ended; only ours, never blocking. */
static void
reap(struct super *s)
{
	pid_t	r;
	int	i, st;

	for (i = 0; i < s->o->workers; i++) {
		if (s->pid[i] <= 0)
			continue;
		while ((r = waitpid(s->pid[i], &st, WNOHANG)) < 0 &&
		    errno == EINTR)
			;
		if (r == s->pid[i])
			ended(s, i, st);
		else if (r < 0)
			ended(s, i, -1);
	}
}

/*
 * Respawn mode: forks every empty slot whose last fork is at least
 * SUPER_RESTART_MS old.  Returns the milliseconds until the next slot
 * falls due, or -1 when every slot is full.
 */
static int64_t
refill(struct super *s)
{
	int64_t	now, due, next = -1;
	int	i;

	for (i = 0; i < s->o->workers; i++) {
		if (s->pid[i] > 0)
			continue;
		now = mono_ms();
		due = s->forked[i] + SUPER_RESTART_MS;
		if (now >= due) {
			spawn(s, i);
			if (s->pid[i] > 0)
				continue;
			now = s->forked[i];	/* failed: try again later */
			due = now + SUPER_RESTART_MS;
		}
		if (next < 0 || due - now < next)
			next = due - now;
	}
	return next;
}

/*
 * Waits up to wait_ms (-1: with no bound) for one of the owned signals.
 * SIGTERM and SIGINT start the stop; SIGCHLD only wakes the caller's
 * loop, which reaps.
 */
static void
take_signal(struct super *s, int64_t wait_ms)
{
	struct timespec	ts;
	int		sig;

	ts.tv_sec = (time_t)(wait_ms / 1000);
	ts.tv_nsec = (long)(wait_ms % 1000) * 1000000L;
	sig = sigtimedwait(&s->owned, NULL, wait_ms >= 0 ? &ts : NULL);
	if (sig == SIGTERM || sig == SIGINT)
		s->stopping = 1;
}

int
super_run(const struct super_opts *o, int (*child)(void *), void *arg)
{
	struct super		 s;
	struct sigaction	 sa;
	struct timespec		 zero = { 0, 0 };
	sigset_t		 stops;
	int			 i, rc = 1, blocked = 0, term = 0, intr = 0;
	int			 chld = 0;

	memset(&s, 0, sizeof(s));
	/* Escaped by the log (base/log.h), as any value. */
	(void)snprintf(s.name, sizeof(s.name), "%s", o != NULL &&
	    o->name != NULL ? o->name : "super");
	if (o == NULL || child == NULL || o->workers < 1 ||
	    o->workers > SUPER_WORKERS_MAX) {
		log_event(LOG_LV_ERROR, "start_failed", "program", s.name,
		    "error", "workers: out of range 1.." HB_STR(SUPER_WORKERS_MAX),
		    (char *)NULL);
		return 1;
	}
	s.o = o;
	s.child = child;
	s.arg = arg;
	s.self = getpid();

	sigemptyset(&s.owned);
	sigaddset(&s.owned, SIGTERM);
	sigaddset(&s.owned, SIGINT);
	sigaddset(&s.owned, SIGCHLD);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	/* Blocked first: nothing arrives between two of these calls. */
	if (sigprocmask(SIG_BLOCK, &s.owned, &s.caller_mask) != 0)
		goto fail;
	blocked = 1;
	if (sigaction(SIGTERM, &sa, &s.caller_term) != 0)
		goto fail;
	term = 1;
	if (sigaction(SIGINT, &sa, &s.caller_int) != 0)
		goto fail;
	intr = 1;
	if (sigaction(SIGCHLD, &sa, &s.caller_chld) != 0)
		goto fail;
	chld = 1;
	fflush(stdout);

	for (i = 0; i < o->workers && !s.stopping; i++)
		spawn(&s, i);
	for (;;) {
		int64_t	next = -1;

		reap(&s);
		if (s.stopping)
			break;
		if (o->respawn)
			next = refill(&s);
		else if (s.live == 0)
			break;
		take_signal(&s, next);
	}
	/* The stop: SIGTERM once to every worker, then wait for them all. */
	for (i = 0; i < o->workers; i++)
		if (s.pid[i] > 0)
			kill(s.pid[i], SIGTERM);
	for (reap(&s); s.live > 0; reap(&s))
		take_signal(&s, -1);
	rc = s.rc;
	goto out;
fail:
	log_event(LOG_LV_ERROR, "start_failed", "program", s.name, "error",
	    strerror(errno), "msg", "cannot set up signals", (char *)NULL);
out:
	/* A stop taken or absorbed here must not reach the caller's handler. */
	if (blocked) {
		sigemptyset(&stops);
		sigaddset(&stops, SIGTERM);
		sigaddset(&stops, SIGINT);
		while (sigtimedwait(&stops, NULL, &zero) > 0)
			;
	}
	if (chld)
		sigaction(SIGCHLD, &s.caller_chld, NULL);
	if (intr)
		sigaction(SIGINT, &s.caller_int, NULL);
	if (term)
		sigaction(SIGTERM, &s.caller_term, NULL);
	if (blocked)
		sigprocmask(SIG_SETMASK, &s.caller_mask, NULL);
	return rc;
}
