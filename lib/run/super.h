/*
 * run/super.h: the one fork/wait supervisor.  It runs a function in N worker
 * processes and waits for them, in one of two modes:
 *
 *  - respawn: keep N alive until a stop.  A worker that ends is logged
 *    ("NAME: worker PID exited (status S); restarting", or "(signal S)")
 *    and forked again, but never sooner than SUPER_RESTART_MS after its
 *    slot's previous fork, so that a worker that dies at once cannot make
 *    the supervisor spin.  A fork that fails (no memory, RLIMIT_NPROC) is
 *    logged and tried again SUPER_RESTART_MS later, with no signal
 *    needed.  The FastCGI responder's pre-forked workers.
 *  - run once: fork N, wait until every one has ended; a worker that
 *    ends is not replaced and the others go on; one killed by a
 *    signal is logged (one that returns says why itself).  A fork that
 *    fails is logged and stops the workers already started.
 *    dispatch --workers, with or without --once.
 *
 * Signals.  For the length of super_run() the supervisor owns SIGTERM,
 * SIGINT and SIGCHLD: it blocks them and takes them synchronously
 * (sigtimedwait), so none of the caller's handlers runs in the supervisor,
 * and a signal the caller ignores (a shell starts background jobs with
 * SIGINT ignored) still reaches it.  SIGTERM or SIGINT is a stop: every
 * live worker gets SIGTERM, once, and the supervisor waits for all of
 * them, however long they take to finish; a further stop meanwhile is
 * absorbed.  Before it returns it restores the caller's mask and
 * dispositions, with no stop left pending.  Other signals are the
 * caller's.  The supervisor must be single-threaded (PR_SET_PDEATHSIG
 * follows the forking thread), and it waits only for its own workers:
 * other children of the caller are left to the caller.
 *
 * A worker is its own process, forked from the supervisor, that calls
 * child(arg) and passes its return value to _exit() (0..255: atexit
 * handlers do not run and stdio is not flushed; flush what you write).
 * When child() is called:
 *  - the signal mask and the dispositions of SIGTERM and SIGINT are the
 *    caller's, as they were when super_run() was called; SIGCHLD is
 *    SIG_DFL.  A stop reaches the worker as SIGTERM, which its own handler
 *    may turn into "finish what is in flight, then return"; with SIG_DFL
 *    it simply dies;
 *  - it gets SIGTERM when the supervisor dies, however it dies, SIGKILL
 *    included (PR_SET_PDEATHSIG): a worker never outlives its supervisor.
 *    A worker forked just as the supervisor died exits 1 without calling
 *    child();
 *  - everything else is the fork's copy of the caller: memory, open
 *    descriptors (a listening socket).  Open database connections in
 *    child(), not before.
 * Output the caller left in stdout's buffer is flushed before the first
 * fork, so that no worker writes it a second time.
 *
 * Transactions: none; no database.
 */
#ifndef HB_SUPER_H
#define HB_SUPER_H

#include "base/hb.h"

#define SUPER_WORKERS_MAX	64
#define SUPER_RESTART_MS	1000	/* least time between forks of a slot */

struct super_opts {
	const char	*name;		/* log prefix ("hookbox"); escaped */
	int		 workers;	/* 1..SUPER_WORKERS_MAX */
	int		 respawn;	/* non-zero: keep alive; 0: run once */
};

/*
 * Runs opts->workers workers of child(arg) as described above and returns
 * the exit status the program should use:
 *  - respawn: 0 once a stop has ended every worker;
 *  - run once: 0 when every worker returned 0, else the first non-zero
 *    status in the order the workers ended (a worker ended by a signal
 *    counts as 1); 1 when a fork failed;
 *  - 1, with a log line and nothing forked, for options out of range or
 *    a failed sigaction() or sigprocmask().
 * opts, child and arg are only borrowed for the call.
 */
HB_API int super_run(const struct super_opts *opts, int (*child)(void *),
    void *arg) HB_MUST_CHECK;

#endif
