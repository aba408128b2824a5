/*
 * intake/group.c: group commit (see intake/group.h).
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "base/text.h"
#include "base/util.h"
#include "intake/group.h"
#include "store/flight.h"
#include "store/metrics.h"
#include "store/record.h"

/*
 * One waiting observation; it lives on its waiter's stack.  The thread
 * that runs its batch posts done once res is final: each waiter is woken
 * alone, and does not need the group's lock to go on.
 */
struct item {
	struct accept_prep		*prep;
	struct accept_res		*res;
	struct item			*next;
	int64_t				 at;	/* handed over, ms */
	sem_t				 done;
};

/*
 * Threaded, the writer leaves checkpoints (copying the WAL into the file,
 * two more flushes) to a thread of its own, so that no batch waits for
 * one: it asks for one every GROUP_CHECKPOINT_PAGES pages' worth of
 * observations, and checkpoints itself only past ten times that, should
 * the checkpointer fall behind.
 */
#define GROUP_CHECKPOINT_PAGES	1000
/*
 * The writer's page cache, KiB: the pages every observation writes (the
 * tables' last pages, the indexes' upper levels) fit, with room; the rest
 * of state.db is read from the kernel's cache.  SQLite's default, about 2
 * MiB, was a fifth of a worker's resident size and measured no faster
 * (bench/scale.sh, a million actions: 0.82-0.88 of an empty file's rate
 * with it, 1.00-1.13 with this).
 */
#define GROUP_CACHE_KIB		1024
#define GROUP_CHECKPOINT_EVERY	256	/* observations between requests */

/*
 * What the batch in hand works in: one batch runs at a time, so one of
 * these, the group's, rather than some 20 KiB on the stack of whichever
 * serving thread runs it (each of them, in time).
 */
struct scratch {
	const struct accept_prep	*p[GROUP_BATCH_MAX];
	struct accept_res		*res[GROUP_BATCH_MAX];
	int				 skip[GROUP_BATCH_MAX];
	struct config_ask		 ask[GROUP_BATCH_MAX];
	size_t				 at[GROUP_BATCH_MAX];
};

struct group {
	struct group_opts	 opts;
	struct scratch		 b;	/* the batch in hand's */
	char			*path;
	struct store		*st;	/* the batches'; NULL until opened */
	pthread_mutex_t		 lock;	/* everything below */
	pthread_cond_t		 work;	/* the writer waits for items */
	pthread_cond_t		 ckpt;	/* the checkpointer waits for a call */
	struct item		*head, **tail;
	int			 running;	/* a batch is in hand */
	int			 stopping;
	int64_t			 since_ckpt;	/* observations since a call */
	int			 ckpt_due;
	pthread_t		 writer, checkpointer;
	struct group_stats	 stats;
	struct metrics_set	 flush;	/* the batch's counts, being written */
};

/* The endpoint label of a member: its configured endpoint's name. */
static const char *
label(const struct item *it)
{
	const char	*e = it->prep->rcpt.endpoint;

	return e != NULL && text_valid_name(e) ? e : "unknown";
}

/* The member's secret's id as a label; 0 when it has none. */
static int
secret_label(const struct item *it, char *buf, size_t len)
{
	if (it->prep->secret <= 0)
		return 0;
	(void)snprintf(buf, len, "%lld", (long long)it->prep->secret);
	return 1;
}

/*
 * Counts the members' answers in memory, for the next batch: their
 * counts did not ride a COMMIT (it failed, or their own write did).  A
 * member that starts again (config_stale) is counted when it is
 * answered.
 */
static void
count_answers(struct group *g, struct item *batch)
{
	struct item	*it;
	int64_t		 now = util_now_ms();
	char		 id[24];

	for (it = batch; it != NULL; it = it->next) {
		if (it->prep->config_stale)
			continue;
		metrics_count(g->opts.metrics, "requests", label(it),
		    hb_result_name(it->res->result), now);
		if (secret_label(it, id, sizeof(id)))
			metrics_max(g->opts.metrics, "secret_used_ms",
			    label(it), id, now);
	}
}

/*
 * Once every member has its answer: what the process counted so far
 * (requests refused before they could be written, earlier batches that
 * failed) and this batch's own results, for the batch's COMMIT to carry
 * (store_metrics_send(): one UPSERT per label set, riding it in a
 * savepoint of their own: store_ride()).
 * NULL when there are none to write (no memory for them).  When they are
 * not written, the batch still stands, and the counts stay in memory for
 * the next one: metrics_done(, 0) puts back what was taken,
 * count_answers() the members.
 */
static const struct metrics_set *
counts(struct group *g, struct item *batch)
{
	struct item	*it;
	int64_t		 now = util_now_ms();
	char		 id[24];

	metrics_set_clear(&g->flush);
	if (metrics_take(g->opts.metrics, &g->flush) != 0)
		return NULL;
	for (it = batch; it != NULL; it = it->next) {
		if (it->prep->config_stale)
			continue;
		if (metrics_set_count(&g->flush, "requests", label(it),
		    hb_result_name(it->res->result), now) != 0 ||
		    (secret_label(it, id, sizeof(id)) &&
		    metrics_set_max(&g->flush, "secret_used_ms", label(it), id,
		    now) != 0))
			return NULL;
	}
	return &g->flush;
}

/*
 * Every member of a batch answered "try again": nothing of it is kept.
 * Those answered before its transaction (skip) keep their answers.
 */
static void
fail_all(struct item *batch, const int *skip, enum store_status ss)
{
	struct item	*it;
	size_t		 i;

	for (it = batch, i = 0; it != NULL; it = it->next, i++) {
		if (skip[i])
			continue;
		memset(it->res, 0, sizeof(*it->res));
		it->res->result = ss == STORE_NOMEM ? HB_NOMEM :
		    HB_UNAVAILABLE;
		it->res->detail = store_strerror(ss);
	}
}

/*
 * BEGIN on the group's connection, (re)opening it first when it is not
 * open or its file is no longer the one at the path.
 */
static enum store_status
begin(struct group *g)
{
	struct store_opts	o;
	enum store_status	ss;
	int			tries;

	for (tries = 0; tries < 2; tries++) {
		if (g->st == NULL) {
			memset(&o, 0, sizeof(o));
			o.busy_ms = g->opts.busy_ms;
			o.sync_normal = g->opts.sync_normal;
			o.cache_kib = GROUP_CACHE_KIB;
			/*
			 * A batch's pass is one savepoint, whose copies
			 * of the pages it changes (110-170 KB for about
			 * twenty fresh observations) went to a temporary
			 * file past 64 KiB, two writes a page: 2.3 of a
			 * request's 13 system calls.  In memory they are
			 * at most the batch's pages, whose bodies its
			 * requests hold already.
			 */
			o.journal_in_memory = 1;
			if (g->opts.threaded)
				o.checkpoint_pages = 10 * GROUP_CHECKPOINT_PAGES;
			if ((ss = store_open(g->path, &o, &g->st)) !=
			    STORE_OK) {
				g->st = NULL;
				return ss;
			}
		}
		if ((ss = store_begin(g->st)) != STORE_GONE)
			return ss;
		store_close(g->st);
		g->st = NULL;
	}
	return STORE_GONE;
}

/* After a batch failed: no transaction left, no connection to a lost file. */
static void
end_failed(struct group *g, enum store_status ss)
{
	store_rollback(g->st);
	if (ss == STORE_GONE) {
		store_close(g->st);
		g->st = NULL;
	}
}

/*
 * The jobs of the members that want theirs, in one read of config.db:
 * g->b.skip[i] set for a member answered here.  Returns how many are
 * left to write.
 */
static size_t
look_up_jobs(struct group *g, struct item *batch)
{
	struct scratch		*b = &g->b;
	struct item		*it;
	size_t			 i, j, n, m = 0;

	for (it = batch, n = 0; it != NULL && n < GROUP_BATCH_MAX;
	    it = it->next, n++) {
		b->skip[n] = 0;
		if (!it->prep->job_wanted)
			continue;
		b->ask[m].tenant = it->prep->job.tenant;
		b->ask[m].job_id = it->prep->job.job_id;
		b->ask[m].version = it->prep->version;
		b->ask[m].job = &it->prep->job;
		b->ask[m].status = CONFIG_ERROR;	/* no cache: a misuse */
		b->at[m++] = n;
	}
	if (m > 0 && g->opts.configs != NULL)
		config_cache_jobs(g->opts.configs, b->ask, m);
	for (it = batch, i = 0, j = 0; j < m; it = it->next, i++) {
		if (i != b->at[j])
			continue;
		if (accept_job_found(it->prep, b->ask[j].status, it->res) !=
		    0) {
			b->skip[i] = 1;
			n--;
		}
		j++;
	}
	return n;
}

/*
 * One transaction for the whole batch, one savepoint per member.  Called
 * by whichever thread has the batch in hand, or inline under the lock;
 * touches only the items and the connection.  Returns STORE_OK, or why nothing was committed.
 */
static enum store_status
run_batch(struct group *g, struct item *batch)
{
	const struct accept_prep	**p = g->b.p;
	struct accept_res		**res = g->b.res;
	const int			 *skip = g->b.skip;
	struct item			*it;
	enum store_status		 ss;
	struct metrics			*m = g->opts.metrics;
	const struct metrics_set	*set = NULL;
	size_t				 n, start;
	int				 counted = 0, kept, tries;

	for (it = batch, n = 0; it != NULL && n < GROUP_BATCH_MAX;
	    it = it->next, n++) {
		p[n] = it->prep;
		res[n] = it->res;
	}
	/* Nothing to write: counted in memory, as a refused request is. */
	if (look_up_jobs(g, batch) == 0) {
		count_answers(g, batch);
		return STORE_OK;
	}
	for (tries = 0;; tries++) {
		if ((ss = begin(g)) != STORE_OK)
			goto answer;
		/* Its members that fail alone are answered "try again". */
		if ((ss = accept_batch(g->st, n, p, res, skip)) == STORE_OK)
			break;
		/*
		 * A connection lost while it waited is met by the batch's
		 * first flight, its BEGIN with it: nothing ran, and the batch
		 * runs once more on a new one.
		 */
		if (ss != STORE_GONE || tries > 0)
			goto fail;
		end_failed(g, ss);
	}
	if (m != NULL)
		set = counts(g, batch);
	/*
	 * A read-out sees this COMMIT's counts in the table or in memory.
	 * Counts that rode it are in the file its rows went to, once,
	 * whatever the file check after it said: never put back, and the
	 * members (answered 503 when the check failed) not counted again.
	 */
	if (m != NULL)
		metrics_lock_commit(m);
	if (set != NULL && set->n > 0) {
		start = store_ride(g->st);
		store_metrics_send(g->st, set);
		ss = store_commit_ridden(g->st, start, &counted);
	} else
		ss = store_commit(g->st);
	kept = counted && store_committed(g->st);
	if (ss != STORE_OK)
		fail_all(batch, skip, ss);
	if (!kept)
		count_answers(g, batch);
	if (m != NULL) {
		metrics_done(m, kept);
		metrics_unlock_commit(m);
	}
	if (ss != STORE_OK)
		end_failed(g, ss);
	return ss;
fail:
	end_failed(g, ss);
answer:
	fail_all(batch, skip, ss);
	count_answers(g, batch);
	return ss;
}

/* What a batch cost the state database. */
struct cost {
	uint64_t	trips;	/* round trips */
	uint64_t	tx;	/* store_tx_statements() */
};

static void
cost_of(const struct store *st, struct cost *c)
{
	c->trips = st != NULL ? store_round_trips(st) : 0;
	c->tx = st != NULL ? store_tx_statements(st) : 0;
}

/*
 * run_batch(), *c what it cost the state database (a connection closed
 * on the way takes its counts with it).
 */
static enum store_status
run_counted(struct group *g, struct item *batch, struct cost *c)
{
	struct store		*s0 = g->st;
	struct cost		 c0, c1;
	enum store_status	 ss;

	cost_of(s0, &c0);
	ss = run_batch(g, batch);
	cost_of(g->st, &c1);
	if (g->st != s0)
		c0.trips = c0.tx = 0;
	c->trips = c1.trips >= c0.trips ? c1.trips - c0.trips : c1.trips;
	c->tx = c1.tx >= c0.tx ? c1.tx - c0.tx : c1.tx;
	return ss;
}

/* Under the lock: counts a batch of n that ended with ss. */
static void
count(struct group *g, int64_t n, enum store_status ss, const struct cost *c)
{
	g->stats.round_trips += (int64_t)c->trips;
	g->stats.tx_statements += (int64_t)c->tx;
	g->stats.batches++;
	g->stats.observations += n;
	if (n > g->stats.largest)
		g->stats.largest = n;
	if (ss != STORE_OK)
		g->stats.failed++;
	g->stats.last = ss;
	g->stats.running_ms = 0;
}

/*
 * Under the lock, with running set by the caller: takes everything
 * waiting (up to the cap, in arrival order), runs it with the lock let go,
 * answers its members and counts it.  Returns with the lock held.
 */
static void
run_next(struct group *g)
{
	struct item		*batch, *it, *next, **cut;
	int64_t			 n;
	struct cost		 c;
	enum store_status	 ss;

#ifdef HB_FAULT
	/* A test may hold the runner here while a batch forms. */
	pthread_mutex_unlock(&g->lock);
	(void)fault_fire(FAULT_GROUP_TAKE);
	pthread_mutex_lock(&g->lock);
#endif
	batch = g->head;
	for (n = 1, cut = &batch->next; *cut != NULL && n < GROUP_BATCH_MAX;
	    n++)
		cut = &(*cut)->next;
	g->head = *cut;
	if (g->head == NULL)
		g->tail = &g->head;
	*cut = NULL;
	g->stats.waiting -= n;
	g->stats.running_ms = util_now_ms();
	pthread_mutex_unlock(&g->lock);

	ss = run_counted(g, batch, &c);

	/* Once posted, an item may be gone: read next first. */
	for (it = batch; it != NULL; it = next) {
		next = it->next;
		sem_post(&it->done);
	}
	pthread_mutex_lock(&g->lock);
	count(g, n, ss, &c);
	if ((g->since_ckpt += n) >= GROUP_CHECKPOINT_EVERY) {
		g->since_ckpt = 0;
		g->ckpt_due = 1;
		pthread_cond_signal(&g->ckpt);
	}
}

/*
 * The writer: the batches that form while another runs.  It leaves
 * once stopping, with nothing running and nothing waiting.
 */
static void *
writer(void *arg)
{
	struct group	*g = arg;

	pthread_mutex_lock(&g->lock);
	for (;;) {
		while (g->running || (g->head == NULL && !g->stopping))
			pthread_cond_wait(&g->work, &g->lock);
		if (g->head == NULL)
			break;
		g->running = 1;
		run_next(g);
		g->running = 0;
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

/*
 * The checkpointer: its own connection, a passive checkpoint when asked
 * (it waits for no lock, and the writer goes on committing meanwhile).
 * A failure is left for the next call, or the writer's own fallback.
 */
static void *
checkpointer(void *arg)
{
	struct group		*g = arg;
	struct store		*st = NULL;
	struct store_opts	 o;

	memset(&o, 0, sizeof(o));
	o.busy_ms = g->opts.busy_ms;
	o.sync_normal = g->opts.sync_normal;
	pthread_mutex_lock(&g->lock);
	for (;;) {
		while (!g->ckpt_due && !g->stopping)
			pthread_cond_wait(&g->ckpt, &g->lock);
		if (g->stopping)
			break;
		g->ckpt_due = 0;
		pthread_mutex_unlock(&g->lock);
		if (st != NULL && store_check_file(st) != STORE_OK) {
			store_close(st);
			st = NULL;
		}
		/* A server checkpoints by itself: no connection for it. */
		if (st == NULL && store_own_checkpoints(g->path) &&
		    store_open(g->path, &o, &st) != STORE_OK)
			st = NULL;
		if (st != NULL && store_checkpoint(st) == STORE_IO) {
			store_close(st);
			st = NULL;
		}
		pthread_mutex_lock(&g->lock);
	}
	pthread_mutex_unlock(&g->lock);
	store_close(st);
	return NULL;
}

/* Stops the threads that were started, once the writer is done. */
static void
stop(struct group *g, int join_writer)
{
	pthread_mutex_lock(&g->lock);
	g->stopping = 1;
	pthread_cond_signal(&g->work);
	pthread_cond_signal(&g->ckpt);
	pthread_mutex_unlock(&g->lock);
	if (join_writer)
		pthread_join(g->writer, NULL);
	pthread_join(g->checkpointer, NULL);
}

static void
destroy(struct group *g)
{
	metrics_set_free(&g->flush);
	store_close(g->st);
	pthread_cond_destroy(&g->ckpt);
	pthread_cond_destroy(&g->work);
	pthread_mutex_destroy(&g->lock);
	free(g->path);
	free(g);
}

int
group_new(const struct group_opts *opts, struct group **out)
{
	struct group	*g;
	int		 e;

	*out = NULL;
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return -1;
	g->opts = *opts;
	if ((g->path = strdup(opts->state_path)) == NULL) {
		free(g);
		return -1;
	}
	g->opts.state_path = g->path;
	g->tail = &g->head;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->work, NULL);
	pthread_cond_init(&g->ckpt, NULL);
	if (opts->threaded) {
		if ((e = pthread_create(&g->checkpointer, NULL, checkpointer,
		    g)) != 0) {
			destroy(g);
			errno = e;
			return -1;
		}
		if ((e = pthread_create(&g->writer, NULL, writer, g)) != 0) {
			stop(g, 0);
			destroy(g);
			errno = e;
			return -1;
		}
	}
	*out = g;
	return 0;
}

void
group_free(struct group *g)
{
	if (g == NULL)
		return;
	if (g->opts.threaded)
		stop(g, 1);
	destroy(g);
}

enum hb_result
group_submit(struct group *g, struct accept_prep *p,
    struct accept_res *res)
{
	struct item		 it;
	struct cost		 c;
	enum store_status	 ss;

	memset(&it, 0, sizeof(it));
	it.prep = p;
	it.res = res;
	it.at = util_now_ms();
	if (!g->opts.threaded) {
		/* A batch of one, on this thread, one at a time. */
		pthread_mutex_lock(&g->lock);
		ss = run_counted(g, &it, &c);
		count(g, 1, ss, &c);
		pthread_mutex_unlock(&g->lock);
		return res->result;
	}
	sem_init(&it.done, 0, 0);
	pthread_mutex_lock(&g->lock);
	*g->tail = &it;
	g->tail = &it.next;
	g->stats.waiting++;
	if (!g->running) {
		/*
		 * No batch in hand: this thread runs the one that holds its
		 * observation, with no hand-over to the writer and back.
		 */
		g->running = 1;
		run_next(g);
		g->running = 0;
		/* What came meanwhile is the writer's. */
		if (g->head != NULL || g->stopping)
			pthread_cond_signal(&g->work);
	}
	pthread_mutex_unlock(&g->lock);
	while (sem_wait(&it.done) != 0)
		continue;	/* EINTR */
	sem_destroy(&it.done);
	return res->result;
}

size_t
group_quiet(struct group *g)
{
	size_t	n = 0;

	/* A batch running has the connection; else the lock keeps it. */
	pthread_mutex_lock(&g->lock);
	if (!g->running && g->st != NULL)
		n = store_shrink(g->st);
	pthread_mutex_unlock(&g->lock);
	return n;
}

void
group_stats(struct group *g, struct group_stats *out)
{
	pthread_mutex_lock(&g->lock);
	*out = g->stats;
	out->oldest_ms = g->head != NULL ? g->head->at : 0;
	pthread_mutex_unlock(&g->lock);
}
