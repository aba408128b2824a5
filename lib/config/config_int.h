/*
 * config/config_int.h: what config/config.c (the reads) and config/admin.c (the
 * admin writes) share.  Private to lib/: not installed, not exported.
 *
 * Transactions: none of its own; each caller keeps its header's promise.
 *
 * All config.db SQL, the schema and the statement texts, lives in
 * config/config.c (PostgreSQL's schema in db/pg_schema.c); config/admin.c,
 * config/edit.c and config/bulk.c run the statements by their enum.
 */
#ifndef HB_CONFIG_INT_H
#define HB_CONFIG_INT_H

#include "config/config.h"
#include "config/registrar.h"
#include "db/db.h"

struct config {
	struct db	*db;
	int		 writable;
	int		 in_snapshot;
	int		 scoped;	/* narrowed to registrar
					   (config/registrar.h) */
	char		 registrar[CONFIG_REGISTRAR_MAX + 1];
	int		 allow_col;	/* destinations.allow_internal is
					   there */
};

/* The statements of config.db, indexes into config/config.c's SQL texts. */
enum config_q {
	CONFIG_Q_TENANT_GET,
	CONFIG_Q_ENDPOINT_GET,
	CONFIG_Q_JOB_GET,
	CONFIG_Q_DEST_GET,
	CONFIG_Q_SECRETS,
	CONFIG_Q_SECRET_COUNT,
	CONFIG_Q_DEST_SECRET,
	CONFIG_Q_TENANT_KEY,
	CONFIG_Q_TENANT_ADD,
	CONFIG_Q_ENDPOINT_ADD,
	CONFIG_Q_SECRET_ADD,
	CONFIG_Q_DEST_ADD,
	CONFIG_Q_JOB_ADD,
	CONFIG_Q_TENANT_DEL,
	CONFIG_Q_ENDPOINT_DEL,
	CONFIG_Q_DEST_DEL,
	CONFIG_Q_JOB_DEL,
	CONFIG_Q_TENANT_LIST,
	CONFIG_Q_ENDPOINT_LIST,
	CONFIG_Q_DEST_LIST,
	CONFIG_Q_JOB_LIST,
	CONFIG_Q_POLLABLE,
	/* config/edit.c's */
	CONFIG_Q_TENANT_SET,
	CONFIG_Q_TENANT_SET_KEY,
	CONFIG_Q_ENDPOINT_SET,
	CONFIG_Q_DEST_SET,
	CONFIG_Q_DEST_SET_SECRET,
	CONFIG_Q_SECRET_LIST,
	CONFIG_Q_SECRET_DEL,
	CONFIG_Q_SECRET_RETIRE,
	CONFIG_Q_TENANT_REFERRER,
	CONFIG_Q_DEST_REFERRER,
	CONFIG_Q_JOB_OF_ACTION,
	CONFIG_Q_VERSION,
	CONFIG_Q_SCHEMA,
	CONFIG_Q_SNAPSHOT,
	CONFIG_Q_BEGIN,
	/* A config.db made before destinations.allow_internal. */
	CONFIG_Q_DEST_ALLOW_COL,
	CONFIG_Q_DEST_GET_OLD,
	CONFIG_Q_DEST_LIST_OLD,
	/* config/cache.c's: the version and what a snapshot holds. */
	CONFIG_Q_VERSIONED,
	CONFIG_Q_CACHE_VERSION,
	CONFIG_Q_CACHE_ENDPOINTS,
	CONFIG_Q_CACHE_SECRETS,
	CONFIG_Q_CACHE_SECRETS_OF,
	CONFIG_Q_CACHE_TENANTS,
	CONFIG_Q_CACHE_JOB,
	CONFIG_Q_CACHE_JOBS,
	/* config/map.c's: a mapped endpoint's mapping. */
	CONFIG_Q_ENDPOINT_SET_MAPPING,
	CONFIG_Q_MAPPED_OF_TENANT,
	/* config/registrar.c's. */
	CONFIG_Q_REGISTRAR_ADD,
	CONFIG_Q_REGISTRAR_DEL,
	CONFIG_Q_REGISTRAR_HAS,
	CONFIG_Q_REGISTRAR_LIST,
	CONFIG_Q__N
};

/* The statement texts, indexed by enum config_q. */
extern const struct db_text config_text[CONFIG_Q__N];

/* The schema of a new config.db, run once by config_create(). */
extern const char config_schema[];

/*
 * The stored names of enum config_kind and enum config_auth, indexed by
 * them; the schema's CHECKs allow exactly these.
 */
#define CONFIG_KIND_N	3
#define CONFIG_AUTH_N	4
extern const char *const config_kind_names[CONFIG_KIND_N];
extern const char *const config_auth_names[CONFIG_AUTH_N];

/* The index of s in names[0..n-1], or -1. */
int config_name_parse(const char *s, const char *const *names, size_t n);

/*
 * Maps a db/db.h result to a status: a unique key to CONFIG_EXISTS, a
 * foreign key to CONFIG_REFUSED, another constraint to CONFIG_INVALID
 * (the kind c's connection classified, db_constraint(); c NULL: invalid);
 * a lock, a timeout and a server out of reach to CONFIG_BUSY; a write
 * not this user's or role's to make to CONFIG_DENIED.
 */
enum config_status config_status_of(const struct config *c, enum db_rc rc);

/*
 * Steps q, a read of one row and one integer, into *v: CONFIG_OK, or
 * CONFIG_ERROR for no row, or the failure's status.
 */
enum config_status config_scalar(struct config *c, enum config_q q,
    int64_t *v);

/*
 * Which of two statements over destinations fits c's file: q when it has
 * the column allow_internal, old when it was made before it and no writer
 * has added it since (old reads every destination as allowing nothing,
 * as then they all did).  Until the column is there, each call looks
 * again, so that a running reader sees it once a writer has added it.
 */
enum config_status config_dest_q(struct config *c, enum config_q q,
    enum config_q old, enum config_q *out);

/*
 * How a reader (writable 0) or a writer opens config.db, with busy_ms as
 * its busy budget and a server's connection bound: into *conf.
 */
void config_conf(struct db_conf *conf, int writable, int busy_ms);

/*
 * A row's columns into a struct, checked as every read checks them:
 * CONFIG_OK, CONFIG_INVALID (a validator refuses it) or CONFIG_ERROR (a
 * value too long, a kind or auth of no name).  The columns are those of
 * CONFIG_Q_TENANT_GET and CONFIG_Q_ENDPOINT_GET, and CONFIG_Q_JOB_GET's
 * from column col on.  An endpoint's row holds its mapping in column 6:
 * there for kind mapped, and for it alone (else CONFIG_INVALID); its
 * text is checked by those who parse it (config/map.c, the cache).
 */
enum config_status config_row_tenant(struct db_stmt *, struct config_tenant *);
enum config_status config_row_endpoint(struct db_stmt *,
    struct config_endpoint *);
enum config_status config_row_job(struct db_stmt *, int col,
    struct config_job *);

/*
 * 1 when c's file has the version (config/cache.h) and every trigger
 * that keeps it, 0 when not, -1 with *rc when it cannot be told.
 */
int config_versioned(struct config *c, enum config_status *rc);

/*
 * The first mapped endpoint of tenant (by name) whose mapping sends its
 * actions to destination dest, into name (len bytes): CONFIG_OK, or
 * CONFIG_NOTFOUND when none does.  A mapping that does not parse names
 * nothing.  (config/config.c: config/admin.c's removals and config/edit.c's
 * look-ups ask it, below config/map.c.)
 */
enum config_status config_dest_mapped_by(struct config *c, const char *tenant,
    const char *dest, char *name, size_t len);

/*
 * mapping_parse() (provider/mapping.h) of text (len bytes, at most
 * MAPPING_TEXT_MAX), its failure as a status: a mapping (the caller
 * frees it with mapping_free()), or NULL with *rc CONFIG_INVALID or
 * CONFIG_NOMEM and why (whylen bytes) saying what is wrong.
 */
struct mapping *config_mapping_parse(const char *text, size_t len,
    enum config_status *rc, char *why, size_t whylen);

/* The status of c's last failure (db_last()). */
enum config_status config_last(const struct config *c);

/*
 * The statement for q, ready to bind, or NULL with *rc set to the
 * failure's status.
 */
struct db_stmt *config_stmt(struct config *c, enum config_q q,
    enum config_status *rc);

/*
 * Steps a bound write that returns no row (db_step_alone()): a refused
 * row (a key that exists, a reference to nothing) leaves the transaction
 * usable, so that a bulk import can report one line and go on.
 */
enum config_status config_write(struct config *c, struct db_stmt *st);

/*
 * The validators: each returns the name of the first field that breaks
 * its rule (static storage), or NULL.  The admin writes refuse such a
 * row, and every read refuses it again (CONFIG_INVALID), so that a
 * config.db written by anything but this code cannot put a CR, a LF or
 * a second ':' into a header, a URL or an action id.
 */
const char *config_tenant_invalid(const struct config_tenant *);
const char *config_endpoint_invalid(const struct config_endpoint *);
const char *config_destination_invalid(const struct config_destination *);
const char *config_job_invalid(const struct config_job *);
/*
 * The tool's policy for a destination it writes, beyond the validators:
 * its URL and status URL may not be internal addresses (net/addr.h) unless
 * it allows them.  Returns what is refused (static storage), or NULL.
 * (config/check.c.)
 */
const char *config_destination_refused(const struct config_destination *);
/* Non-zero for an API key that can go into a header: printable ASCII,
   no spaces, at most CONFIG_SECRET_MAX bytes. */
int config_valid_api_key(const unsigned char *, size_t);

/* The tool's writes (config/admin.c, config/edit.c, config/bulk.c). */

/* Returns CONFIG_INVALID from the calling write, with *why, when v is not
 * NULL: v names what is wrong. */
#define REFUSE_IF(v) do {						\
	if ((*why = (v)) != NULL)					\
		return CONFIG_INVALID;					\
} while (0)

/* CONFIG_OK when c was opened for writing (*why cleared), else CONFIG_ERROR. */
enum config_status config_writable(struct config *c, const char **why);

/*
 * Binds a destination's columns that its add and its update share:
 * ?1 tenant, ?2 name, ?3 url, ?4 idempotent, ?5 status URL, ?6 whether
 * it allows internal addresses.
 */
enum db_rc config_bind_destination(struct db_stmt *st,
    const struct config_destination *d);

/* Binds a count, or NULL (none) when it is not above 0. */
enum db_rc config_bind_count(struct db_stmt *st, int idx, int64_t v);

/*
 * Binds a destination's delivery policy from ?idx on: retry_for_s,
 * max_in_flight, rate, circuit_failures, cooldown_s.
 */
enum db_rc config_bind_policy(struct db_stmt *st, int idx,
    const struct config_destination *d);

/*
 * Inserts an endpoint's row, checked already, with its mapping's
 * canonical text (NULL for none): CONFIG_EXISTS when its name is taken.
 * (config/admin.c.)
 */
enum config_status config_endpoint_insert(struct config *c,
    const struct config_endpoint *e, const char *mapping);

/* Binds len bytes at b as a blob, or NULL when there are none. */
enum db_rc config_bind_blob(struct db_stmt *st, int idx,
    const unsigned char *b, size_t len);

#endif
