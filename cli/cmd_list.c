/*
 * The list commands: `tenant list`, `endpoint list`, `destination list`,
 * `job list` over config.db, and the way every read-out prints: an
 * aligned table with UTC times by default, or JSON with --json (times in
 * unix milliseconds), at most --limit rows with a note when more exist.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/admin.h"
#include "config/bulk.h"

#include "cli.h"
#include "table.h"

/* The config.db table a command's first word names. */
int
cli_table_of(const char *name, enum config_table *t)
{
	static const char *const names[] = {
		[CONFIG_TENANTS] = "tenant",
		[CONFIG_ENDPOINTS] = "endpoint",
		[CONFIG_DESTINATIONS] = "destination",
		[CONFIG_JOBS] = "job",
		[CONFIG_REGISTRARS] = "registrar",
	};
	size_t	i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0) {
			*t = (enum config_table)i;
			return 0;
		}
	return -1;
}

/* ---- times -------------------------------------------------------- */

/* "2026-11-30 21:04:05Z" for unix ms, UTC. */
void
cli_list_time(int64_t ms, char *buf, size_t len)
{
	struct tm	tm;
	time_t		t = (time_t)(ms / 1000);

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%d %H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "%lld", (long long)ms);
}

/* ---- printing a read-out ------------------------------------------ */

/* A cell's text for one JSON value (buf: room for numbers and times). */
static const char *
cell_text(const cJSON *v, enum cli_list_kind k, char *buf, size_t len)
{
	char	*p;

	buf[0] = '\0';
	if (v == NULL || cJSON_IsNull(v))
		return "";
	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v) ? "yes" : "no";
	if (cJSON_IsNumber(v)) {
		if (k == CLI_LIST_TIME)
			cli_list_time((int64_t)v->valuedouble, buf, len);
		else
			snprintf(buf, len, "%.0f", v->valuedouble);
		return buf;
	}
	if (!cJSON_IsString(v))
		return "";
	/* A control character would break the line or move the cursor. */
	snprintf(buf, len, "%s", v->valuestring);
	for (p = buf; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	return buf;
}

/*
 * Prints a read-out (and frees it): JSON with json, else a table of the
 * columns given.  With limit > 0, arr may hold limit + 1 rows: the extra
 * one only says that more exist, which a note on stderr states.
 */
int
cli_list_print(cJSON *arr, const struct cli_list_col *cols, size_t n, int json,
    int limit)
{
	struct table_col	 tc[TABLE_COLS_MAX];
	struct table		*t = NULL;
	const cJSON		*row;
	const char		*cells[TABLE_COLS_MAX];
	char			*bufs[TABLE_COLS_MAX];
	size_t			 i;
	int			 more = 0, rc = EXIT_FAIL;

	memset(bufs, 0, sizeof(bufs));
	if (limit > 0 && cJSON_GetArraySize(arr) > limit) {
		cJSON_DeleteItemFromArray(arr, limit);
		more = 1;
	}
	if (json) {
		rc = cli_print_json(arr);
		arr = NULL;
		goto out;
	}
	if (n > TABLE_COLS_MAX)
		goto out;
	for (i = 0; i < n; i++) {
		tc[i].head = cols[i].head;
		tc[i].align = cols[i].kind == CLI_LIST_NUMBER ? TABLE_RIGHT :
		    TABLE_LEFT;
		tc[i].max = cols[i].max;
		if ((bufs[i] = malloc(HB_TEXT_MAX + 1)) == NULL)
			goto nomem;
	}
	if ((t = table_new(tc, n)) == NULL)
		goto nomem;
	cJSON_ArrayForEach(row, arr) {
		for (i = 0; i < n; i++)
			cells[i] = cell_text(cJSON_GetObjectItemCaseSensitive(
			    row, cols[i].key), cols[i].kind, bufs[i],
			    HB_TEXT_MAX + 1);
		if (table_add(t, cells) != 0)
			goto nomem;
	}
	table_print(t, stdout);
	rc = EXIT_OK;
	goto out;
nomem:
	cli_warn("out of memory");
out:
	if (rc == EXIT_OK && more)
		fprintf(stderr, "(%d rows shown; more exist: --limit N)\n",
		    limit);
	for (i = 0; i < TABLE_COLS_MAX; i++)
		free(bufs[i]);
	table_free(t);
	cJSON_Delete(arr);
	return rc;
}

/* ---- unknown names in filters ------------------------------------- */

/* EXIT_OK when the tenant exists, else reported. */
int
cli_known_tenant(struct config *cfg, const char *tenant)
{
	struct config_tenant	t;
	enum config_status	rc;

	if ((rc = config_tenant_get(cfg, tenant, &t)) == CONFIG_NOTFOUND) {
		cli_warn("tenant %s: no such tenant", tenant);
		return EXIT_FAIL;
	}
	return cli_config_done(rc, tenant, NULL);
}

/* EXIT_OK when a destination of that name exists (for tenant, if given). */
int
cli_known_destination(struct config *cfg, const char *tenant, const char *name)
{
	struct config_list_filter	 f;
	cJSON				*arr = NULL;
	const cJSON			*row, *v;
	int				 rc;

	memset(&f, 0, sizeof(f));
	f.tenant = tenant;
	if ((rc = cli_config_done(config_list(cfg, CONFIG_DESTINATIONS,
	    &f, &arr), "destination", NULL)) != EXIT_OK)
		return rc;
	rc = EXIT_FAIL;
	cJSON_ArrayForEach(row, arr) {
		v = cJSON_GetObjectItemCaseSensitive(row, "name");
		if (cJSON_IsString(v) && strcmp(v->valuestring, name) == 0)
			rc = EXIT_OK;
	}
	cJSON_Delete(arr);
	if (rc != EXIT_OK)
		cli_warn("destination %s: no such destination", name);
	return rc;
}

/* ---- tenant, endpoint, destination, job list ---------------------- */

static const struct cli_list_col tenant_cols[] = {
	{ "id", "ID", CLI_LIST_TEXT, 0 },
	{ "active", "ACTIVE", CLI_LIST_TEXT, 0 },
	{ "status_base", "STATUS BASE", CLI_LIST_TEXT, 50 },
	{ "api_key", "API KEY", CLI_LIST_TEXT, 0 },
	{ "created_at", "CREATED", CLI_LIST_TIME, 0 },
};
static const struct cli_list_col endpoint_cols[] = {
	{ "name", "NAME", CLI_LIST_TEXT, 0 },
	{ "tenant", "TENANT", CLI_LIST_TEXT, 0 },
	{ "kind", "KIND", CLI_LIST_TEXT, 0 },
	{ "auth", "AUTH", CLI_LIST_TEXT, 0 },
	{ "key_header", "HEADER", CLI_LIST_TEXT, 30 },
	{ "tolerance_s", "TOLERANCE_S", CLI_LIST_NUMBER, 0 },
	{ "secrets", "SECRETS", CLI_LIST_NUMBER, 0 },
	{ "created_at", "CREATED", CLI_LIST_TIME, 0 },
};
static const struct cli_list_col destination_cols[] = {
	{ "tenant", "TENANT", CLI_LIST_TEXT, 0 },
	{ "name", "NAME", CLI_LIST_TEXT, 0 },
	{ "url", "URL", CLI_LIST_TEXT, 60 },
	{ "idempotent", "IDEMPOTENT", CLI_LIST_TEXT, 0 },
	{ "signed", "SIGNED", CLI_LIST_TEXT, 0 },
	{ "allow_internal", "INTERNAL", CLI_LIST_TEXT, 0 },
	{ "timeout_ms", "TIMEOUT_MS", CLI_LIST_NUMBER, 0 },
	{ "max_attempts", "ATTEMPTS", CLI_LIST_NUMBER, 0 },
	{ "retry_for_s", "RETRY_FOR_S", CLI_LIST_NUMBER, 0 },
	{ "max_in_flight", "IN_FLIGHT", CLI_LIST_NUMBER, 0 },
	{ "rate", "RATE", CLI_LIST_NUMBER, 0 },
	{ "circuit_failures", "FAILURES", CLI_LIST_NUMBER, 0 },
	{ "cooldown_s", "COOLDOWN_S", CLI_LIST_NUMBER, 0 },
	{ "created_at", "CREATED", CLI_LIST_TIME, 0 },
	{ "status_url", "STATUS URL", CLI_LIST_TEXT, 60 },
};
static const struct cli_list_col job_cols[] = {
	{ "tenant", "TENANT", CLI_LIST_TEXT, 0 },
	{ "job_id", "JOB", CLI_LIST_TEXT, 40 },
	{ "attempt", "ATTEMPT", CLI_LIST_TEXT, 0 },
	{ "step", "STEP", CLI_LIST_TEXT, 0 },
	{ "destination", "DESTINATION", CLI_LIST_TEXT, 0 },
	{ "created_at", "CREATED", CLI_LIST_TIME, 0 },
	{ "source_url", "SOURCE URL", CLI_LIST_TEXT, 40 },
	{ "output", "OUTPUT", CLI_LIST_TEXT, 40 },
};

static const struct cli_list_col registrar_cols[] = {
	{ "name", "USER", CLI_LIST_TEXT, 0 },
	{ "tenant", "TENANT", CLI_LIST_TEXT, 0 },
	{ "created_at", "CREATED", CLI_LIST_TIME, 0 },
};

/* What the lists read from their options. */
struct list_args {
	struct cli_list_opts	 o;
	const char		*tenant;
};

#define CLI_ROWS_OF	struct list_args
static const struct cli_opt list_rows[] = {
	CLI_OPT_LIST(1, o),
	CLI_OPT_PTR("tenant", 1, tenant, 0),
};
#undef CLI_ROWS_OF

int
cmd_list(struct settings *e, int argc, char **argv)
{
	static const struct {
		const struct cli_list_col	*cols;
		size_t			 n;
	} views[] = {
#define VIEW(c)	{ (c), sizeof(c) / sizeof((c)[0]) }
		[CONFIG_TENANTS] = VIEW(tenant_cols),
		[CONFIG_ENDPOINTS] = VIEW(endpoint_cols),
		[CONFIG_DESTINATIONS] = VIEW(destination_cols),
		[CONFIG_JOBS] = VIEW(job_cols),
		[CONFIG_REGISTRARS] = VIEW(registrar_cols),
#undef VIEW
	};
	struct config_list_filter	 f;
	struct list_args		 a;
	struct config			*cfg = NULL;
	cJSON				*arr = NULL;
	enum config_table		 t;
	int				 rc;

	memset(&a, 0, sizeof(a));
	a.o.limit = LIST_LIMIT_DEFAULT;
	if ((rc = cli_parse(argc, argv, CLI_ROWS(list_rows), 1, &a, NULL,
	    0)) != EXIT_OK)
		return rc;
	if (cli_table_of(cli_cmd->name, &t) != 0)
		return cli_usage();
	memset(&f, 0, sizeof(f));
	f.tenant = a.tenant;
	f.since_ms = a.o.since;
	f.limit = a.o.limit + 1;	/* one more says more exist */
	if ((rc = cli_open_config(e, CONFIG_READ, &cfg)) != EXIT_OK)
		return rc;
	if (f.tenant == NULL ||
	    (rc = cli_known_tenant(cfg, f.tenant)) == EXIT_OK)
		rc = cli_config_done(config_list(cfg, t, &f, &arr),
		    cli_cmd->name, NULL);
	config_close(cfg);
	if (rc != EXIT_OK)
		return rc;
	return cli_list_print(arr, views[t].cols, views[t].n, a.o.json,
	    a.o.limit);
}
