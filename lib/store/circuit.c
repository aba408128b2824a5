/*
 * store/circuit.c: destinations' circuits, pauses and holds (see
 * store/circuit.h).
 */
#include <string.h>

#include <cJSON.h>

#include "base/json.h"
#include "store/circuit.h"
#include "store/flight.h"
#include "store/store_int.h"

static const char *const names[] = {
	[STORE_CIRCUIT_CLOSED] = "closed",
	[STORE_CIRCUIT_OPEN] = "open",
	[STORE_CIRCUIT_HALF] = "half-open",
};
/* As the column holds them. */
static const char *const columns[] = {
	[STORE_CIRCUIT_CLOSED] = "closed",
	[STORE_CIRCUIT_OPEN] = "open",
	[STORE_CIRCUIT_HALF] = "half",
};

const char *
store_circuit_name(enum store_circuit_state st)
{
	return (unsigned)st <= STORE_CIRCUIT_HALF ? names[st] : "closed";
}

/* Opens c at now for cool, its hold beginning now unless it had. */
static void
open_for(struct store_circuit *c, int64_t now, int64_t cool)
{
	if (c->state == STORE_CIRCUIT_CLOSED)
		c->opened_at = now;
	c->state = STORE_CIRCUIT_OPEN;
	c->cooldown_ms = cool;
	c->retry_at = now + cool;
	if (c->held_since == 0)
		c->held_since = now;
}

/*
 * The start of c's hold, cleared, when that hold has just ended (closed
 * and not paused); else 0.
 */
static int64_t
hold_ended(struct store_circuit *c)
{
	int64_t	held = c->held_since;

	if (c->state != STORE_CIRCUIT_CLOSED || c->paused_at != 0)
		return 0;
	c->held_since = 0;
	return held;
}

int64_t
store_circuit_step(struct store_circuit *c,
    const struct store_circuit_report *r)
{
	if (r->hold_until > c->hold_until)
		c->hold_until = r->hold_until;
	if (r->ok > 0) {
		c->state = STORE_CIRCUIT_CLOSED;
		c->failures = 0;
		c->opened_at = c->retry_at = c->cooldown_ms = 0;
	} else if (r->failed > 0) {
		c->failures += r->failed;
		if (c->state == STORE_CIRCUIT_HALF)
			/* The probe failed: longer this time. */
			open_for(c, r->now, c->cooldown_ms * 2 >
			    r->cooldown_max_ms ? r->cooldown_max_ms :
			    c->cooldown_ms * 2 > 0 ? c->cooldown_ms * 2 :
			    r->cooldown_ms);
		else if (c->state == STORE_CIRCUIT_CLOSED &&
		    r->threshold > 0 && c->failures >= r->threshold)
			open_for(c, r->now, r->cooldown_ms);
	}
	return hold_ended(c);
}

int64_t
store_circuit_held_until(const struct store_circuit *c, int64_t now)
{
	int64_t	until = 0;

	if (c->paused_at != 0)
		return now + STORE_PAUSE_RETIME_MS;
	if (c->hold_until > now)
		until = c->hold_until;
	if (c->state != STORE_CIRCUIT_CLOSED && c->retry_at > until)
		until = c->retry_at;
	return until > now ? until : 0;
}

int
store_circuit_allows(const struct store_circuit *c, int64_t now,
    int in_flight_max)
{
	int64_t	left;

	if (c->paused_at != 0 || c->hold_until > now)
		return 0;
	if (c->state != STORE_CIRCUIT_CLOSED)
		return c->retry_at > now ? 0 : 1;
	if (in_flight_max <= 0)
		return -1;
	left = in_flight_max - c->leased;
	return left > 0 ? (int)left : 0;
}

int
store_circuit_same(const struct store_circuit *a,
    const struct store_circuit *b)
{
	return a->state == b->state && a->failures == b->failures &&
	    a->opened_at == b->opened_at && a->retry_at == b->retry_at &&
	    a->cooldown_ms == b->cooldown_ms && a->paused_at == b->paused_at &&
	    a->hold_until == b->hold_until && a->held_since == b->held_since &&
	    a->rate_next_us == b->rate_next_us &&
	    strcmp(a->tenant, b->tenant) == 0 &&
	    strcmp(a->destination, b->destination) == 0;
}

static enum store_circuit_state
state_of(const char *s)
{
	if (s != NULL && strcmp(s, "open") == 0)
		return STORE_CIRCUIT_OPEN;
	if (s != NULL && strcmp(s, "half") == 0)
		return STORE_CIRCUIT_HALF;
	return STORE_CIRCUIT_CLOSED;
}

/* A row of CIRCUIT_COLS into c (its leased count left 0). */
static int
read_row(struct db_stmt *st, struct store_circuit *c)
{
	memset(c, 0, sizeof(*c));
	if (db_col_copy(st, 0, c->tenant, sizeof(c->tenant)) != 0 ||
	    db_col_copy(st, 1, c->destination, sizeof(c->destination)) != 0)
		return -1;
	c->state = state_of(db_col_text(st, 2));
	c->failures = db_col_int64(st, 3);
	c->opened_at = db_col_int64(st, 4);
	c->retry_at = db_col_int64(st, 5);
	c->cooldown_ms = db_col_int64(st, 6);
	c->paused_at = db_col_int64(st, 7);
	c->hold_until = db_col_int64(st, 8);
	c->held_since = db_col_int64(st, 9);
	c->rate_next_us = db_col_int64(st, 10);
	return 0;
}

struct store_circuit *
store_circuit_find(struct store_circuit *c, int n, const char *tenant, const char *dest)
{
	int	i;

	for (i = 0; i < n; i++)
		if (strcmp(c[i].tenant, tenant) == 0 &&
		    strcmp(c[i].destination, dest) == 0)
			return &c[i];
	return NULL;
}

static enum store_status
send_keys(struct store *s, enum store_q q, const char *keys, int64_t now,
    struct db_stmt **out)
{
	struct db_stmt	*st;

	*out = NULL;
	if ((st = store_stmt(s, q)) == NULL)
		return store_last(s);
	if (db_bind_text(st, 1, keys) != DB_OK ||
	    (q == STORE_Q_CIRCUIT_MAKE && db_bind_int64(st, 2, now) != DB_OK))
		return STORE_NOMEM;
	*out = st;
	return store_send(st);
}

enum store_status
store_circuit_gate(struct store *s, const char *keys, int64_t now,
    struct store_circuit *c, int max, int *got)
{
	struct db_stmt		*make, *gate = NULL, *leased = NULL;
	struct store_circuit	*x;
	enum store_status	 rc;
	enum db_rc		 step = DB_DONE;

	*got = 0;
	if ((rc = send_keys(s, STORE_Q_CIRCUIT_MAKE, keys, now, &make)) !=
	    STORE_OK ||
	    (rc = send_keys(s, STORE_Q_CIRCUIT_GATE, keys, now, &gate)) !=
	    STORE_OK ||
	    (rc = send_keys(s, STORE_Q_CIRCUIT_LEASED, keys, now, &leased)) !=
	    STORE_OK ||
	    (rc = store_land(s, NULL)) != STORE_OK)
		goto out;
	while (*got < max && (step = db_step(gate)) == DB_ROW)
		if (read_row(gate, &c[*got]) == 0)
			(*got)++;
	if (step != DB_ROW && step != DB_DONE) {
		rc = store_status_of(step);
		goto out;
	}
	while ((step = db_step(leased)) == DB_ROW)
		if ((x = store_circuit_find(c, *got, db_col_text(leased, 0),
		    db_col_text(leased, 1))) != NULL)
			x->leased = db_col_int64(leased, 2);
	rc = store_status_of(step);
out:
	if (gate != NULL)
		db_reset(gate);
	if (leased != NULL)
		db_reset(leased);
	return rc;
}

/* Binds t, a time (0: NULL), at idx. */
static int
bind_time(struct db_stmt *st, int idx, int64_t t)
{
	return (t != 0 ? db_bind_int64(st, idx, t) : db_bind_null(st, idx)) !=
	    DB_OK;
}

enum store_status
store_circuit_put(struct store *s, const struct store_circuit *c,
    int64_t now)
{
	struct db_stmt	*st;

	if ((st = store_stmt(s, STORE_Q_CIRCUIT_PUT)) == NULL)
		return store_last(s);
	if (db_bind_text(st, 1, c->tenant) != DB_OK ||
	    db_bind_text(st, 2, c->destination) != DB_OK ||
	    db_bind_text(st, 3, columns[c->state]) != DB_OK ||
	    db_bind_int64(st, 4, c->failures) != DB_OK ||
	    bind_time(st, 5, c->opened_at) || bind_time(st, 6, c->retry_at) ||
	    bind_time(st, 7, c->cooldown_ms) ||
	    bind_time(st, 8, c->paused_at) ||
	    bind_time(st, 9, c->hold_until) ||
	    bind_time(st, 10, c->held_since) ||
	    db_bind_int64(st, 11, now) != DB_OK ||
	    bind_time(st, 12, c->rate_next_us))
		return STORE_NOMEM;
	return store_send(st);
}

enum store_status
store_circuit_release(struct store *s, const struct store_circuit *c,
    int64_t held_since, int64_t now)
{
	struct db_stmt	*st;

	if ((st = store_stmt(s, STORE_Q_CIRCUIT_RELEASE)) == NULL)
		return store_last(s);
	if (db_bind_text(st, 1, c->tenant) != DB_OK ||
	    db_bind_text(st, 2, c->destination) != DB_OK ||
	    db_bind_int64(st, 3, held_since) != DB_OK ||
	    db_bind_int64(st, 4, now) != DB_OK)
		return STORE_NOMEM;
	return store_send(st);
}

/* name: t in unix ms, or null for 0; -1 when out of memory. */
static int
json_add_time(cJSON *o, const char *name, int64_t t)
{
	return (t != 0 ? json_add_int(o, name, t) :
	    cJSON_AddNullToObject(o, name)) == NULL ? -1 : 0;
}

/* A circuit as `hookbox status --json` shows it. */
static cJSON *
circuit_json(const struct store_circuit *c, int64_t now)
{
	cJSON	*o;

	if ((o = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(o, "tenant", c->tenant) == NULL ||
	    cJSON_AddStringToObject(o, "destination", c->destination) ==
	    NULL ||
	    cJSON_AddStringToObject(o, "circuit", names[c->state]) == NULL ||
	    cJSON_AddNumberToObject(o, "failures", (double)c->failures) ==
	    NULL ||
	    cJSON_AddBoolToObject(o, "paused", c->paused_at != 0) == NULL ||
	    cJSON_AddNumberToObject(o, "in_flight", (double)c->leased) ==
	    NULL ||
	    json_add_time(o, "opened_at", c->opened_at) != 0 ||
	    json_add_time(o, "probe_at", c->state != STORE_CIRCUIT_CLOSED ?
	    c->retry_at : 0) != 0 ||
	    json_add_time(o, "held_until", c->hold_until > now ?
	    c->hold_until : 0) != 0 ||
	    json_add_time(o, "paused_at", c->paused_at) != 0) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

enum store_status
store_circuit_list(struct store *s, int64_t now, int all, cJSON **out)
{
	struct store_circuit	 c;
	struct db_stmt		*st;
	cJSON			*a, *o;
	enum db_rc		 rc;

	*out = NULL;
	if ((st = store_stmt(s, STORE_Q_CIRCUIT_LIST)) == NULL)
		return store_last(s);
	if ((a = cJSON_CreateArray()) == NULL)
		return STORE_NOMEM;
	while ((rc = db_step(st)) == DB_ROW) {
		if (read_row(st, &c) != 0)
			continue;
		c.leased = db_col_int64(st, 11);
		if (!all && c.state == STORE_CIRCUIT_CLOSED &&
		    c.failures == 0 &&
		    c.paused_at == 0 && c.hold_until <= now && c.leased == 0)
			continue;	/* plainly well */
		if ((o = circuit_json(&c, now)) == NULL) {
			db_reset(st);
			cJSON_Delete(a);
			return STORE_NOMEM;
		}
		cJSON_AddItemToArray(a, o);
	}
	db_reset(st);
	if (rc != DB_DONE) {
		cJSON_Delete(a);
		return store_status_of(rc);
	}
	*out = a;
	return STORE_OK;
}

enum store_status
store_circuit_pause(struct store *s, const char *tenant,
    const char *destination, int pause, int64_t now, int *changed)
{
	struct store_circuit	 c;
	cJSON			*k;
	char			*keys = NULL;
	enum store_status	 rc;
	int64_t			 held;
	int			 got;

	*changed = 0;
	if ((k = cJSON_CreateArray()) == NULL ||
	    !cJSON_AddItemToArray(k, cJSON_CreateStringArray((const char *[]){
	    tenant, destination }, 2)) ||
	    (keys = cJSON_PrintUnformatted(k)) == NULL) {
		cJSON_Delete(k);
		return STORE_NOMEM;
	}
	cJSON_Delete(k);
	if ((rc = store_begin(s)) != STORE_OK ||
	    (rc = store_circuit_gate(s, keys, now, &c, 1, &got)) != STORE_OK)
		goto out;
	if (got != 1) {
		rc = STORE_ERROR;
		goto out;
	}
	if (pause && c.paused_at == 0) {
		c.paused_at = now;
		if (c.held_since == 0)
			c.held_since = now;
		*changed = 1;
	} else if (!pause && c.paused_at != 0) {
		c.paused_at = 0;
		*changed = 1;
		if ((held = hold_ended(&c)) != 0 &&
		    (rc = store_circuit_release(s, &c, held, now)) != STORE_OK)
			goto out;
	}
	if (*changed && (rc = store_circuit_put(s, &c, now)) != STORE_OK)
		goto out;
	rc = store_commit(s);
out:
	cJSON_free(keys);
	if (rc != STORE_OK) {
		store_rollback(s);
		*changed = 0;
	}
	return rc;
}
