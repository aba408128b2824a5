/*
 * config/pool.c: config.db connections shared by threads (config/pool.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config/pool.h"

struct config_pool {
	char		*path;
	int		 busy_ms;
	int		 size;		/* connections allowed */
	int		 out;		/* taken now */
	int		 nidle;
	struct config	*idle[CONFIG_POOL_MAX];
	pthread_mutex_t	 lock;
	pthread_cond_t	 given;
};

int
config_pool_new(const char *path, int busy_ms, int size,
    struct config_pool **out)
{
	struct config_pool	*p;

	*out = NULL;
	if (size < 1 || size > CONFIG_POOL_MAX)
		return -1;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -1;
	if ((p->path = strdup(path)) == NULL) {
		free(p);
		return -1;
	}
	p->busy_ms = busy_ms;
	p->size = size;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->given, NULL);
	*out = p;
	return 0;
}

void
config_pool_free(struct config_pool *p)
{
	if (p == NULL)
		return;
	while (p->nidle > 0)
		config_close(p->idle[--p->nidle]);
	pthread_cond_destroy(&p->given);
	pthread_mutex_destroy(&p->lock);
	free(p->path);
	free(p);
}

struct config *
config_pool_take(struct config_pool *p, enum config_status *why)
{
	struct config	*c = NULL;

	pthread_mutex_lock(&p->lock);
	while (p->out == p->size)
		pthread_cond_wait(&p->given, &p->lock);
	p->out++;
	if (p->nidle > 0)
		c = p->idle[--p->nidle];
	pthread_mutex_unlock(&p->lock);

	/* Opening and checking happen outside the lock: they do I/O. */
	if (c != NULL && !config_same_file(c)) {
		config_close(c);
		c = NULL;
	}
	*why = CONFIG_OK;
	if (c == NULL && (*why = config_open(p->path, CONFIG_READ, p->busy_ms,
	    &c)) != CONFIG_OK) {
		c = NULL;
		config_pool_give(p, NULL);
	}
	return c;
}

void
config_pool_give(struct config_pool *p, struct config *c)
{
	pthread_mutex_lock(&p->lock);
	p->out--;
	if (c != NULL)
		p->idle[p->nidle++] = c;
	pthread_cond_signal(&p->given);
	pthread_mutex_unlock(&p->lock);
}
