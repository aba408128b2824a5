/*
 * config/cache.c: the responder's shared snapshot of config.db
 * (config/cache.h).  The SQL it runs is config/config.c's, by statement enum.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/fault.h"
#include "base/json.h"
#include "config/cache.h"
#include "config/config_int.h"
#include "config/pool.h"
#include "provider/mapping.h"

/* One secret of an endpoint, its bytes in the snapshot's keys. */
struct snap_secret {
	int64_t	id;
	size_t	off, len;
	int64_t	expires;	/* unix seconds, when not never */
	int	never;		/* no expiry */
	int	bad;		/* empty or too long: refused while unexpired */
};

struct snap_endpoint {
	struct config_endpoint	e;	/* e.mapping: map */
	enum config_status	status;	/* its row's, as a look-up gives it */
	size_t			first, n;	/* its secrets, newest first */
	struct mapping		*map;	/* kind mapped: its mapping, parsed
					   once, freed with the snapshot */
};

struct snap_tenant {
	struct config_tenant	t;
	enum config_status	status;
};

/*
 * Immutable once made, but for refs (the cache's lock).  Endpoints and
 * tenants are sorted by name, byte by byte, for bsearch().
 */
struct config_snap {
	int64_t			 version;	/* -1 for a single one */
	int			 single;	/* read for one request */
	int			 refs;
	struct snap_endpoint	*ep;
	size_t			 nep, capep;
	struct snap_tenant	*tn;
	size_t			 ntn, captn;
	struct snap_secret	*sec;
	size_t			 nsec, capsec;
	unsigned char		*keys;		/* wiped when freed or moved */
	size_t			 keyslen, keyscap;
};

struct config_cache {
	struct config_pool	*pool;
	pthread_mutex_t		 lock;		/* everything below */
	pthread_cond_t		 ended;		/* a refresh ended */
	struct config_snap	*cur;		/* the shared one, or NULL */
	int			 single;	/* no version: per request */
	uint64_t		 started, done;	/* refreshes begun, ended */
	int			 running;
	enum config_status	 last;		/* the last refresh's outcome */
	struct config_cache_stats stats;
};

static void
snap_free(struct config_snap *s)
{
	size_t	i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nep; i++)
		mapping_free(s->ep[i].map);
	if (s->keys != NULL) {
		sodium_memzero(s->keys, s->keyscap);
		free(s->keys);
	}
	free(s->ep);
	free(s->tn);
	free(s->sec);
	free(s);
}

/*
 * p, an array of *cap elements of size sz holding n, with room for one
 * more: p itself, or a larger copy (*cap updated); NULL when out of
 * memory (p is then unchanged, still the caller's).
 */
static void *
grow(void *p, size_t *cap, size_t n, size_t sz)
{
	void	*q;
	size_t	 c = *cap != 0 ? *cap * 2 : 16;

	if (n < *cap)
		return p;
	if (c > SIZE_MAX / sz || (q = realloc(p, c * sz)) == NULL)
		return NULL;
	*cap = c;
	return q;
}

/* Appends len bytes of a secret; the old buffer is wiped, never left. */
static int
add_key(struct config_snap *s, const void *b, size_t len, size_t *off)
{
	unsigned char	*k;
	size_t		 cap;

	if (s->keyscap - s->keyslen < len) {
		cap = s->keyscap != 0 ? s->keyscap * 2 : 4096;
		while (cap - s->keyslen < len)
			cap *= 2;
		if ((k = malloc(cap)) == NULL)
			return -1;
		if (s->keys != NULL) {
			memcpy(k, s->keys, s->keyslen);
			sodium_memzero(s->keys, s->keyscap);
			free(s->keys);
		}
		s->keys = k;
		s->keyscap = cap;
	}
	memcpy(s->keys + s->keyslen, b, len);
	*off = s->keyslen;
	s->keyslen += len;
	return 0;
}

static int
ep_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snap_endpoint *)a)->e.name,
	    ((const struct snap_endpoint *)b)->e.name);
}

static int
tn_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snap_tenant *)a)->t.id,
	    ((const struct snap_tenant *)b)->t.id);
}

static struct snap_endpoint *
find_ep(const struct config_snap *s, const char *name)
{
	struct snap_endpoint	key;

	if (strlen(name) >= sizeof(key.e.name))
		return NULL;
	memcpy(key.e.name, name, strlen(name) + 1);
	return s->nep == 0 ? NULL : bsearch(&key, s->ep, s->nep,
	    sizeof(*s->ep), ep_cmp);
}

static struct snap_tenant *
find_tn(const struct config_snap *s, const char *id)
{
	struct snap_tenant	key;

	if (strlen(id) >= sizeof(key.t.id))
		return NULL;
	memcpy(key.t.id, id, strlen(id) + 1);
	return s->ntn == 0 ? NULL : bsearch(&key, s->tn, s->ntn,
	    sizeof(*s->tn), tn_cmp);
}

/*
 * A mapped endpoint's mapping (column 6 of its row) into p, parsed once
 * for every request the snapshot answers.  One that does not parse makes
 * its endpoint's look-ups fail (CONFIG_INVALID), as a row that breaks
 * another rule does.  -1 when out of memory.
 */
static int
read_mapping(struct db_stmt *st, struct snap_endpoint *p)
{
	const char	*t;
	char		 why[256];

	if (p->status != CONFIG_OK || p->e.kind != CONFIG_KIND_MAPPED)
		return 0;
	t = db_col_text(st, 6);
	if ((p->map = mapping_parse(t, strlen(t), why, sizeof(why))) ==
	    NULL) {
		/* provider/mapping.h's words for it. */
		if (strcmp(why, "out of memory") == 0)
			return -1;
		p->status = CONFIG_INVALID;
	}
	p->e.mapping = p->map;
	return 0;
}

/*
 * The rows of a bound statement over endpoints, tenants or secrets, into
 * s.  A row that breaks a rule is kept with its status, so that a look-up
 * of it fails as config/config.h's would; one whose name cannot even be held is
 * one no request can name, and is left out.
 */
static enum config_status
read_endpoints(struct config *c, struct db_stmt *st, struct config_snap *s)
{
	struct snap_endpoint	*p;
	enum db_rc		 rc;

	while ((rc = db_step(st)) == DB_ROW) {
		if ((p = grow(s->ep, &s->capep, s->nep, sizeof(*p))) == NULL) {
			db_reset(st);
			return CONFIG_NOMEM;
		}
		s->ep = p;
		p = &s->ep[s->nep];
		memset(p, 0, sizeof(*p));
		if ((p->status = config_row_endpoint(st, &p->e)) != CONFIG_OK &&
		    db_col_copy(st, 0, p->e.name, sizeof(p->e.name)) != 0)
			continue;
		if (read_mapping(st, p) != 0) {
			db_reset(st);
			return CONFIG_NOMEM;
		}
		s->nep++;
	}
	if (rc != DB_DONE)
		return config_status_of(c, rc);
	if (s->nep > 1)
		qsort(s->ep, s->nep, sizeof(*s->ep), ep_cmp);
	return CONFIG_OK;
}

static enum config_status
read_tenants(struct config *c, struct db_stmt *st, struct config_snap *s)
{
	struct snap_tenant	*p;
	enum db_rc		 rc;

	while ((rc = db_step(st)) == DB_ROW) {
		if ((p = grow(s->tn, &s->captn, s->ntn, sizeof(*p))) == NULL) {
			db_reset(st);
			return CONFIG_NOMEM;
		}
		s->tn = p;
		p = &s->tn[s->ntn];
		memset(p, 0, sizeof(*p));
		if ((p->status = config_row_tenant(st, &p->t)) != CONFIG_OK &&
		    db_col_copy(st, 0, p->t.id, sizeof(p->t.id)) != 0)
			continue;
		s->ntn++;
	}
	if (rc != DB_DONE)
		return config_status_of(c, rc);
	if (s->ntn > 1)
		qsort(s->tn, s->ntn, sizeof(*s->tn), tn_cmp);
	return CONFIG_OK;
}

/*
 * Secrets, each endpoint's rows together and newest first (the
 * endpoints read already): each group becomes its endpoint's.
 */
static enum config_status
read_secrets(struct config *c, struct db_stmt *st, struct config_snap *s)
{
	struct snap_endpoint	*ep = NULL;
	struct snap_secret	*k;
	char			 name[HB_ID_MAX + 1], last[HB_ID_MAX + 1] = "";
	const void		*v;
	size_t			 len;
	enum db_rc		 rc;
	enum config_status	 status = CONFIG_OK;

	while ((rc = db_step(st)) == DB_ROW) {
		if (db_col_copy(st, 0, name, sizeof(name)) != 0)
			continue;	/* no endpoint of the snapshot's */
		if (strcmp(name, last) != 0) {
			memcpy(last, name, sizeof(last));
			/*
			 * ORDER BY keeps an endpoint's rows together; were
			 * they not, a second group would be left out, never
			 * counted as another endpoint's.
			 */
			if ((ep = find_ep(s, name)) != NULL && ep->n > 0)
				ep = NULL;
			if (ep != NULL)
				ep->first = s->nsec;
		}
		if (ep == NULL)
			continue;
		if ((k = grow(s->sec, &s->capsec, s->nsec, sizeof(*k))) ==
		    NULL) {
			status = CONFIG_NOMEM;
			break;
		}
		s->sec = k;
		k = &s->sec[s->nsec];
		memset(k, 0, sizeof(*k));
		v = db_col_blob(st, 1, &len);
		if (v == NULL || len == 0 || len > CONFIG_SECRET_MAX)
			k->bad = 1;
		else if (add_key(s, v, len, &k->off) != 0) {
			status = CONFIG_NOMEM;
			break;
		} else
			k->len = len;
		k->never = db_col_null(st, 2);
		k->expires = db_col_int64(st, 2);
		k->id = db_col_int64(st, 3);
		s->nsec++;
		ep->n++;
	}
	if (status != CONFIG_OK) {
		db_reset(st);
		return status;
	}
	return rc == DB_DONE ? CONFIG_OK : config_status_of(c, rc);
}

/* Steps the bound statement q through fn. */
static enum config_status
read_all(struct config *c, enum config_q q, const char *key,
    enum config_status (*fn)(struct config *, struct db_stmt *,
    struct config_snap *), struct config_snap *s)
{
	struct db_stmt		*st;
	enum config_status	 rc;

	if ((st = config_stmt(c, q, &rc)) == NULL)
		return rc;
	if (key != NULL && db_bind_opt(st, 1, key) != DB_OK)
		return CONFIG_NOMEM;
	return fn(c, st, s);
}

/*
 * Inside c's read transaction: the whole snapshot (endpoint NULL), or
 * for a config.db without the version what one request for endpoint
 * needs: the endpoint, its secrets and its tenant.
 */
static enum config_status
load(struct config *c, const char *endpoint, struct config_snap **out)
{
	struct config_snap	*s;
	enum config_status	 rc;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return CONFIG_NOMEM;
	s->refs = 1;
	s->version = -1;
	s->single = endpoint != NULL;
	if (endpoint == NULL)
		rc = config_scalar(c, CONFIG_Q_CACHE_VERSION, &s->version);
	else
		rc = read_all(c, CONFIG_Q_ENDPOINT_GET, endpoint,
		    read_endpoints, s);
	if (rc == CONFIG_OK && endpoint == NULL)
		rc = read_all(c, CONFIG_Q_CACHE_ENDPOINTS, NULL,
		    read_endpoints, s);
	if (rc == CONFIG_OK)
		rc = read_all(c, endpoint == NULL ? CONFIG_Q_CACHE_SECRETS :
		    CONFIG_Q_CACHE_SECRETS_OF, endpoint, read_secrets, s);
	if (rc == CONFIG_OK && endpoint == NULL)
		rc = read_all(c, CONFIG_Q_CACHE_TENANTS, NULL, read_tenants, s);
	else if (rc == CONFIG_OK && s->nep == 1)
		rc = read_all(c, CONFIG_Q_TENANT_GET, s->ep[0].e.tenant,
		    read_tenants, s);
	if (rc != CONFIG_OK)
		snap_free(s);
	else
		*out = s;
	return rc;
}

/*
 * One refresh, outside the lock: with a snapshot at version have (-1:
 * none), reads the version alone, and only when it is another (or
 * cannot be read: is the table gone?) the whole snapshot, in one read
 * transaction.  *fresh is the new snapshot (NULL: keep the one there),
 * *single set when config.db has no version; *checked when the version
 * was read alone.
 */
static enum config_status
renew(struct config_cache *cc, int64_t have, struct config_snap **fresh,
    int *single, int *checked)
{
	struct config		*c;
	enum config_status	 rc;
	int64_t			 v;
	int			 n;

	*fresh = NULL;
	*single = *checked = 0;
	if ((c = config_pool_take(cc->pool, &rc)) == NULL)
		return rc;
	if (fault_fire(FAULT_CACHE_READ)) {
		rc = CONFIG_BUSY;
		goto out;
	}
	if (have >= 0) {
		*checked = 1;
		rc = config_scalar(c, CONFIG_Q_CACHE_VERSION, &v);
		if ((rc == CONFIG_OK && v == have) ||
		    (rc != CONFIG_OK && rc != CONFIG_ERROR))
			goto out;
	}
	if ((rc = config_snapshot(c)) != CONFIG_OK)
		goto out;
	if ((n = config_versioned(c, &rc)) == 0)
		*single = 1;
	else if (n > 0)
		rc = load(c, NULL, fresh);
	config_release(c);
out:
	config_pool_give(cc->pool, c);
	return rc;
}

/*
 * Waits for a refresh that begins after this call did, running it when
 * none is running, and returns its outcome: every caller that arrives
 * while one runs shares the next one, so that there is at most one read
 * of the version at a time, and each caller's sees every change
 * committed before it called.
 */
static enum config_status
refresh(struct config_cache *cc)
{
	struct config_snap	*fresh, *old;
	enum config_status	 rc;
	uint64_t		 want, mine;
	int64_t			 have;
	int			 single, checked, waiting = 0;

	pthread_mutex_lock(&cc->lock);
	want = cc->started + 1;
	while (cc->done < want) {
		if (cc->running) {
			cc->stats.waiting += !waiting;
			waiting = 1;
			pthread_cond_wait(&cc->ended, &cc->lock);
			continue;
		}
		cc->running = 1;
		mine = ++cc->started;
		have = cc->cur != NULL ? cc->cur->version : -1;
		pthread_mutex_unlock(&cc->lock);

		rc = renew(cc, have, &fresh, &single, &checked);

		pthread_mutex_lock(&cc->lock);
		old = NULL;
		if (fresh != NULL || single) {
			old = cc->cur;
			cc->cur = fresh;
			cc->single = single;
		}
		if (old != NULL && --old->refs > 0)
			old = NULL;
		cc->stats.loads += fresh != NULL;
		cc->stats.checks += checked;
		cc->running = 0;
		cc->done = mine;
		cc->last = rc;
		pthread_cond_broadcast(&cc->ended);
		if (old != NULL) {
			pthread_mutex_unlock(&cc->lock);
			snap_free(old);
			pthread_mutex_lock(&cc->lock);
		}
	}
	rc = cc->last;
	cc->stats.waiting -= waiting;
	pthread_mutex_unlock(&cc->lock);
	return rc;
}

/* The shared snapshot's version, or -1. */
static int64_t
current_version(struct config_cache *cc)
{
	int64_t	v;

	pthread_mutex_lock(&cc->lock);
	v = cc->cur != NULL ? cc->cur->version : -1;
	pthread_mutex_unlock(&cc->lock);
	return v;
}

int
config_cache_new(const char *path, int busy_ms, int conns,
    struct config_cache **out)
{
	struct config_cache	*cc;

	*out = NULL;
	if ((cc = calloc(1, sizeof(*cc))) == NULL)
		return -1;
	if (config_pool_new(path, busy_ms, conns, &cc->pool) != 0) {
		free(cc);
		return -1;
	}
	pthread_mutex_init(&cc->lock, NULL);
	pthread_cond_init(&cc->ended, NULL);
	cc->stats.version = -1;
	*out = cc;
	return 0;
}

void
config_cache_free(struct config_cache *cc)
{
	if (cc == NULL)
		return;
	if (cc->cur != NULL && --cc->cur->refs == 0)
		snap_free(cc->cur);
	config_pool_free(cc->pool);
	pthread_cond_destroy(&cc->ended);
	pthread_mutex_destroy(&cc->lock);
	free(cc);
}

/*
 * A snapshot for one request, config.db having no version; CONFIG_STALE
 * when it has one now.
 */
static enum config_status
hold_single(struct config_cache *cc, const char *endpoint,
    struct config_snap **out)
{
	struct config		*c;
	enum config_status	 rc;
	int			 n;

	*out = NULL;
	if ((c = config_pool_take(cc->pool, &rc)) == NULL)
		return rc;
	if ((rc = config_snapshot(c)) == CONFIG_OK) {
		if ((n = config_versioned(c, &rc)) > 0)
			rc = CONFIG_STALE;
		else if (n == 0)
			rc = load(c, endpoint, out);
		config_release(c);
	}
	config_pool_give(cc->pool, c);
	if (rc == CONFIG_OK) {
		pthread_mutex_lock(&cc->lock);
		cc->stats.singles++;
		pthread_mutex_unlock(&cc->lock);
	}
	return rc;
}

/* The most times a hold looks again, the configuration changing under it. */
#define HOLD_TRIES	4

struct config_snap *
config_cache_hold(struct config_cache *cc, const char *endpoint,
    enum config_status *why)
{
	struct config_snap	*s;
	enum config_status	 rc = CONFIG_BUSY;
	int			 i, single;

	for (i = 0; i < HOLD_TRIES; i++) {
		pthread_mutex_lock(&cc->lock);
		if ((s = cc->cur) != NULL)
			s->refs++;
		single = cc->single;
		pthread_mutex_unlock(&cc->lock);
		if (s != NULL)
			return s;
		if (!single) {
			if ((rc = refresh(cc)) != CONFIG_OK)
				break;
			continue;
		}
		if ((rc = hold_single(cc, endpoint, &s)) == CONFIG_OK)
			return s;
		if (rc != CONFIG_STALE)
			break;
		/* The version is there now: the shared snapshot from now. */
		pthread_mutex_lock(&cc->lock);
		cc->single = 0;
		pthread_mutex_unlock(&cc->lock);
		rc = CONFIG_BUSY;
	}
	*why = rc;
	return NULL;
}

void
config_cache_drop(struct config_cache *cc, struct config_snap *s)
{
	int	last;

	if (s == NULL)
		return;
	pthread_mutex_lock(&cc->lock);
	last = --s->refs == 0;
	pthread_mutex_unlock(&cc->lock);
	if (last)
		snap_free(s);
}

enum config_status
config_snap_endpoint(const struct config_snap *s, const char *name,
    struct config_endpoint *e)
{
	const struct snap_endpoint	*p;

	if ((p = find_ep(s, name)) == NULL)
		return CONFIG_NOTFOUND;
	if (p->status == CONFIG_OK)
		*e = p->e;
	return p->status;
}

enum config_status
config_snap_tenant(const struct config_snap *s, const char *id,
    struct config_tenant *t)
{
	const struct snap_tenant	*p;

	if ((p = find_tn(s, id)) == NULL)
		return CONFIG_NOTFOUND;
	if (p->status == CONFIG_OK)
		*t = p->t;
	return p->status;
}

enum config_status
config_snap_secrets(const struct config_snap *s, const char *endpoint,
    int64_t now, struct config_secrets *out)
{
	const struct snap_endpoint	*p;
	const struct snap_secret	*k;
	size_t				 i;

	memset(out, 0, sizeof(*out));
	if ((p = find_ep(s, endpoint)) == NULL)
		return CONFIG_OK;	/* none, as a query would find */
	for (i = 0; i < p->n; i++) {
		k = &s->sec[p->first + i];
		if (!k->never && k->expires <= now)
			continue;
		/* As config_endpoint_secrets(): refused, never cut. */
		if (k->bad || out->n == CONFIG_SECRETS_MAX) {
			memset(out, 0, sizeof(*out));
			return CONFIG_INVALID;
		}
		out->s[out->n].key = s->keys + k->off;
		out->s[out->n].keylen = k->len;
		out->id[out->n] = k->id;
		out->n++;
	}
	return CONFIG_OK;
}

/*
 * CONFIG_Q_CACHE_JOB: config.db's version in *version, and the job:
 * CONFIG_OK (j filled), CONFIG_NOTFOUND, or why it could not be read.
 */
static enum config_status
version_job(struct config *c, const char *tenant, const char *job_id,
    int64_t *version, struct config_job *j)
{
	struct db_stmt		*st;
	enum config_status	 rc;
	enum db_rc		 drc;

	if ((st = config_stmt(c, CONFIG_Q_CACHE_JOB, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, tenant) != DB_OK ||
	    db_bind_opt(st, 2, job_id) != DB_OK)
		rc = CONFIG_NOMEM;
	else if ((drc = db_step(st)) != DB_ROW)
		rc = drc == DB_DONE ? CONFIG_ERROR : config_status_of(c, drc);
	else {
		*version = db_col_int64(st, 0);
		rc = db_col_null(st, 1) ? CONFIG_NOTFOUND :
		    config_row_job(st, 1, j);
	}
	db_reset(st);
	return rc;
}

enum config_status
config_cache_job(struct config_cache *cc, const struct config_snap *s,
    const char *tenant, const char *job_id, struct config_job *j)
{
	struct config		*c;
	enum config_status	 rc, rr;
	int64_t			 v = -1;
	int			 stale;

	if ((c = config_pool_take(cc->pool, &rc)) == NULL)
		return rc;
	if (s->single) {
		rc = config_job_get(c, tenant, job_id, j);
		config_pool_give(cc->pool, c);
		return rc;
	}
	rc = version_job(c, tenant, job_id, &v, j);
	stale = (rc == CONFIG_OK || rc == CONFIG_NOTFOUND) && v != s->version;
	config_pool_give(cc->pool, c);
	/*
	 * Another version: read it.  An error may be a table gone (a file
	 * restored from before the version): the refresh looks.  A busy or
	 * lost database is only this request's 503.
	 */
	if (!stale && rc != CONFIG_ERROR)
		return rc;
	if ((rr = refresh(cc)) != CONFIG_OK)
		return rr;
	return stale || current_version(cc) != s->version ? CONFIG_STALE : rc;
}

int64_t
config_cache_defers(const struct config_cache *cc,
    const struct config_snap *s)
{
	(void)cc;
	return s->single ? -1 : s->version;
}

/*
 * The asks' keys, [[tenant, job], ...], as CONFIG_Q_CACHE_JOBS binds
 * them; NULL when out of memory.
 */
static char *
jobs_keys(const struct config_ask *a, size_t n)
{
	struct json_out	o;
	size_t		i;

	memset(&o, 0, sizeof(o));
	o.len = 3;
	for (i = 0; i < n; i++)
		o.len += 6 * (strlen(a[i].tenant) + strlen(a[i].job_id)) + 12;
	if ((o.buf = malloc(o.len)) == NULL)
		return NULL;
	o.ok = 1;
	json_out_raw(&o, "[");
	for (i = 0; i < n; i++) {
		json_out_raw(&o, i > 0 ? ",[" : "[");
		json_out_str(&o, a[i].tenant);
		json_out_raw(&o, ",");
		json_out_str(&o, a[i].job_id);
		json_out_raw(&o, "]");
	}
	json_out_raw(&o, "]");
	if (!o.ok) {		/* cannot be: o.len is enough */
		free(o.buf);
		return NULL;
	}
	o.buf[o.off] = '\0';
	return o.buf;
}

/*
 * CONFIG_Q_CACHE_JOBS: each ask's job (its status CONFIG_OK, j filled, or
 * CONFIG_NOTFOUND) and config.db's version in *v (every row carries the
 * one), in one statement; an ask left CONFIG_ERROR had no row.  Returns
 * CONFIG_OK, or why nothing could be read.
 */
static enum config_status
version_jobs(struct config *c, struct config_ask *a, size_t n, int64_t *v)
{
	struct db_stmt		*st;
	enum config_status	 rc;
	enum db_rc		 drc;
	const char		*t, *j;
	char			*keys;
	size_t			 i;

	*v = -1;
	for (i = 0; i < n; i++)
		a[i].status = CONFIG_ERROR;
	if ((st = config_stmt(c, CONFIG_Q_CACHE_JOBS, &rc)) == NULL)
		return rc;
	if ((keys = jobs_keys(a, n)) == NULL)
		return CONFIG_NOMEM;
	drc = db_bind_text(st, 1, keys);
	free(keys);
	if (drc != DB_OK)
		return CONFIG_NOMEM;
	while ((drc = db_step(st)) == DB_ROW) {
		t = db_col_text(st, 1);
		j = db_col_text(st, 2);
		for (i = 0; i < n; i++) {
			if (a[i].status != CONFIG_ERROR || t == NULL ||
			    j == NULL || strcmp(a[i].tenant, t) != 0 ||
			    strcmp(a[i].job_id, j) != 0)
				continue;
			*v = db_col_int64(st, 0);
			a[i].status = db_col_null(st, 3) ? CONFIG_NOTFOUND :
			    config_row_job(st, 3, a[i].job);
		}
	}
	rc = drc == DB_DONE ? CONFIG_OK : config_status_of(c, drc);
	db_reset(st);
	return rc;
}

void
config_cache_jobs(struct config_cache *cc, struct config_ask *a, size_t n)
{
	struct config		*c;
	enum config_status	 rc;
	int64_t			 v = -1;
	size_t			 i;
	int			 again = 0;

	if ((c = config_pool_take(cc->pool, &rc)) != NULL) {
		rc = version_jobs(c, a, n, &v);
		config_pool_give(cc->pool, c);
	}
	for (i = 0; i < n; i++) {
		if (rc != CONFIG_OK)
			a[i].status = rc;
		if ((a[i].status == CONFIG_OK ||
		    a[i].status == CONFIG_NOTFOUND) && v != a[i].version)
			a[i].status = CONFIG_STALE;
		again |= a[i].status == CONFIG_STALE ||
		    a[i].status == CONFIG_ERROR;
	}
	pthread_mutex_lock(&cc->lock);
	cc->stats.batches++;
	cc->stats.asked += (int64_t)n;
	pthread_mutex_unlock(&cc->lock);
	/* As config_cache_job() does, once for the batch. */
	if (!again || refresh(cc) != CONFIG_OK)
		return;
	v = current_version(cc);
	for (i = 0; i < n; i++)
		if (a[i].status == CONFIG_ERROR && v != a[i].version)
			a[i].status = CONFIG_STALE;
}

enum config_status
config_cache_check(struct config_cache *cc, const struct config_snap *s)
{
	enum config_status	rc;

	if (s->single)
		return CONFIG_OK;
	if ((rc = refresh(cc)) != CONFIG_OK)
		return rc;
	return current_version(cc) == s->version ? CONFIG_OK : CONFIG_STALE;
}

void
config_cache_stats(struct config_cache *cc, struct config_cache_stats *out)
{
	pthread_mutex_lock(&cc->lock);
	*out = cc->stats;
	out->version = cc->cur != NULL ? cc->cur->version : -1;
	pthread_mutex_unlock(&cc->lock);
}
