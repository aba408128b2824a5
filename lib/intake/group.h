/*
 * intake/group.h: group commit.  Many requests' acceptance made durable by one
 * COMMIT, and so by one flush of the disk.
 *
 * Request threads prepare their observations (accept_prepare(), with no
 * state.db transaction open) and hand them to group_submit(), which waits.
 * A batch takes everything waiting, looks up the jobs its members left to
 * it (group_opts's configs), opens one transaction, applies each
 * observation in a savepoint of its own (accept_batch()), so that one
 * that fails is rolled back alone, commits once, and then releases every
 * waiter with its own answer.  The next batch forms while this one's
 * COMMIT waits for the disk: there is no fixed delay, and a lone request
 * is committed at once.
 *
 * An answer is released only after the COMMIT that holds its work
 * returned OK.  A COMMIT that fails answers every member of its batch
 * HB_UNAVAILABLE, with nothing written.  A duplicate is applied in the
 * same batch as the rest: its receipt costs no flush of its own.
 *
 * Two ways to run it:
 *  - threaded: group_submit() is called from any number of threads.  One
 *    batch is in hand at a time.  A request that finds none runs its own
 *    batch on its own thread (what waits then, itself among it), with no
 *    hand-over to another thread and back; what arrives while a batch is
 *    in hand is the writer thread's next batch.  A second thread, with
 *    its own connection, checkpoints the WAL every few hundred
 *    observations, so that no batch waits for a checkpoint;
 *  - inline: no thread; the caller's thread runs a batch of one under a
 *    lock (a single-threaded worker, plain CGI, the tests).
 *
 * The group owns its state.db connection: opened at the first batch, and
 * opened again when the file is no longer the one at its path.
 *
 * Transactions: self-contained: group_submit() returns after the COMMIT
 * of the batch that held its observation, or after it was rolled back.
 */
#ifndef HB_GROUP_H
#define HB_GROUP_H

#include "base/metrics.h"
#include "config/cache.h"
#include "intake/accept.h"

struct group;

/* The most observations one COMMIT holds. */
#define GROUP_BATCH_MAX	256

struct group_opts {
	const char	*state_path;	/* copied */
	int		 busy_ms;
	int		 sync_normal;
	int		 threaded;	/* non-zero: a writer thread */
	/*
	 * Borrowed, may be NULL: every batch adds to state.db's metrics
	 * table, in its own transaction, what was counted here since the
	 * last one and its members' results (requests{endpoint,result});
	 * members of a batch that failed are counted here as unavailable.
	 */
	struct metrics	*metrics;
	/*
	 * Borrowed, may be NULL: where a member prepared without its job
	 * (accept_prep's job_wanted) has it looked up, with the rest of
	 * its batch's, in one read before the batch's transaction
	 * (config_cache_jobs()).  A member whose job is not there, or
	 * whose configuration is no longer current (config_stale), is
	 * answered without a write.
	 */
	struct config_cache *configs;
};

/*
 * What the group has done and is doing, for health, metrics and tests.
 * A batch is counted just after its members are answered: a
 * group_submit() that returned may not be counted yet.
 */
struct group_stats {
	int64_t	batches;	/* COMMITs tried */
	int64_t	observations;	/* observations in them */
	int64_t	largest;	/* the most in one batch */
	int64_t	failed;		/* batches whose COMMIT (or BEGIN) failed */
	int64_t	waiting;	/* handed over, not yet taken into a batch */
	/* How the last batch ended: STORE_OK, or why it failed. */
	enum store_status last;
	int64_t	oldest_ms;	/* when the oldest waiting one came; 0: none */
	int64_t	running_ms;	/* when the batch in hand began; 0: none */
	/* Round trips to the state database (PostgreSQL; 0 on SQLite). */
	int64_t	round_trips;
	/* Of the statements sent, those of store_tx_statements(). */
	int64_t	tx_statements;
};

/*
 * Makes a group; with opts->threaded, starts its writer.  Returns 0, or
 * -1 when out of memory or the thread cannot start (errno says).  Opens
 * no file yet.
 */
HB_API int group_new(const struct group_opts *, struct group **out)
    HB_MUST_CHECK;

/*
 * Stops the writer once every observation handed to it is answered, and
 * closes the connection.  A group_submit() already waiting when it is
 * called is answered before it returns (and then returns by itself); none
 * may start, or be about to hand its observation over, once it is called.
 * group_free(NULL) is a no-op.
 */
HB_API void group_free(struct group *);

/*
 * Applies a prepared observation and returns once it is durable (or
 * rolled back): res holds the answer and the return value equals
 * res->result.  p is only borrowed for the call.
 */
HB_API enum hb_result group_submit(struct group *, struct accept_prep *p,
    struct accept_res *res) HB_MUST_CHECK;

HB_API void group_stats(struct group *, struct group_stats *);

/*
 * For a process that has gone quiet: unless a batch is running, the
 * batches' connection gives back its page cache (store_shrink()), which
 * the next batch reads again from the kernel's.  Returns the bytes it
 * held.
 */
HB_API size_t group_quiet(struct group *);

#endif
