/*
 * config/bulk.c: config.db in bulk, for the admin tool: the lists, whole or
 * filtered (their SQL is in config/config.c, run by statement enum) and the job
 * import's parser and writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "base/json.h"
#include "base/text.h"
#include "base/util.h"
#include "config/admin.h"
#include "config/bulk.h"
#include "config/config_int.h"

/* Masks the credentials in a row's URL field name, if it has one. */
static enum config_status
redact_field(cJSON *row, const char *name)
{
	cJSON	*v = cJSON_GetObjectItemCaseSensitive(row, name), *n;
	char	*buf;
	size_t	 len;

	if (!cJSON_IsString(v))
		return CONFIG_OK;
	len = strlen(v->valuestring) * 5 + 8;	/* text_url_redact()'s bound */
	if ((buf = malloc(len)) == NULL)
		return CONFIG_NOMEM;
	if (text_url_redact(v->valuestring, buf, len) != 0 ||
	    (n = cJSON_CreateString(buf)) == NULL) {
		free(buf);
		return CONFIG_NOMEM;
	}
	free(buf);
	return cJSON_ReplaceItemInObjectCaseSensitive(row, name, n) ?
	    CONFIG_OK : CONFIG_NOMEM;
}

/*
 * An endpoint's mapping, stored as text, shown as the JSON it is; a text
 * that does not parse (written past the tool) stays a string.
 */
static enum config_status
mapping_field(cJSON *row)
{
	cJSON			*v, *o = NULL;
	enum json_status	 jrc;

	v = cJSON_GetObjectItemCaseSensitive(row, "mapping");
	if (!cJSON_IsString(v))
		return CONFIG_OK;
	jrc = json_parse_strict(v->valuestring, strlen(v->valuestring), &o,
	    NULL, 0);
	if (jrc == JSON_NOMEM)
		return CONFIG_NOMEM;
	if (jrc != JSON_OK)
		return CONFIG_OK;
	if (!cJSON_ReplaceItemInObjectCaseSensitive(row, "mapping", o)) {
		cJSON_Delete(o);
		return CONFIG_NOMEM;
	}
	return CONFIG_OK;
}

enum config_status
config_list(struct config *c, enum config_table t,
    const struct config_list_filter *f, cJSON **out)
{
	static const enum config_q	 list[] = { CONFIG_Q_TENANT_LIST,
	    CONFIG_Q_ENDPOINT_LIST, CONFIG_Q_DEST_LIST, CONFIG_Q_JOB_LIST,
	    CONFIG_Q_REGISTRAR_LIST };
	static const struct config_list_filter	 all;
	struct db_stmt		*st;
	cJSON			*row;
	enum config_status	 rc;
	enum config_q		 q;

	*out = NULL;
	if ((unsigned)t > CONFIG_REGISTRARS)
		return CONFIG_ERROR;
	if (f == NULL)
		f = &all;
	q = list[t];
	if (t == CONFIG_DESTINATIONS && (rc = config_dest_q(c,
	    CONFIG_Q_DEST_LIST, CONFIG_Q_DEST_LIST_OLD, &q)) != CONFIG_OK)
		return rc;
	if ((st = config_stmt(c, q, &rc)) == NULL)
		return rc;
	if (db_bind_opt(st, 1, f->tenant) != DB_OK ||
	    db_bind_int64(st, 2, f->since_ms) != DB_OK ||
	    db_bind_int64(st, 3, f->limit > 0 ? f->limit : -1) != DB_OK ||
	    (t == CONFIG_JOBS && (c->scoped ? db_bind_opt(st, 4,
	    c->registrar) : db_bind_null(st, 4)) != DB_OK))
		return CONFIG_NOMEM;
	if ((rc = config_status_of(c, db_json_rows(st, out))) != CONFIG_OK ||
	    (t != CONFIG_DESTINATIONS && t != CONFIG_ENDPOINTS))
		return rc;
	cJSON_ArrayForEach(row, *out)
		if ((t == CONFIG_ENDPOINTS &&
		    (rc = mapping_field(row)) != CONFIG_OK) ||
		    (t == CONFIG_DESTINATIONS &&
		    ((rc = redact_field(row, "url")) != CONFIG_OK ||
		    (rc = redact_field(row, "status_url")) != CONFIG_OK))) {
			cJSON_Delete(*out);
			*out = NULL;
			return rc;
		}
	return CONFIG_OK;
}

/* Copies a string field of an import line into dst; "" when absent. */
static enum config_status
job_field(const cJSON *o, const char *name, int required, char *dst,
    size_t len, char *why, size_t whylen)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(o, name);

	if (v == NULL || cJSON_IsNull(v)) {
		if (!required)
			return CONFIG_OK;
		snprintf(why, whylen, "missing \"%s\"", name);
		return CONFIG_INVALID;
	}
	if (!cJSON_IsString(v)) {
		snprintf(why, whylen, "\"%s\" is not a string", name);
		return CONFIG_INVALID;
	}
	if (strlen(v->valuestring) >= len) {
		snprintf(why, whylen, "\"%s\" is longer than %zu bytes", name,
		    len - 1);
		return CONFIG_INVALID;
	}
	memcpy(dst, v->valuestring, strlen(v->valuestring) + 1);
	return CONFIG_OK;
}

/* Non-zero for a short name of [A-Za-z0-9_.-] only. */
static int
plain(const char *s)
{
	size_t	n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789_.-");

	return n > 0 && n <= 40 && s[n] == '\0';
}

enum config_status
config_job_parse(const char *line, size_t len, const char *tenant,
    struct config_job *j, char *why, size_t whylen)
{
	static const char *const known[] = { "tenant", "job_id", "attempt",
	    "step", "destination", "source_url", "output" };
	cJSON			*o = NULL, *v;
	char			*out = NULL;
	enum json_status	 jrc;
	enum config_status	 rc = CONFIG_INVALID;
	size_t			 i;

	memset(j, 0, sizeof(*j));
	if (whylen > 0)
		why[0] = '\0';
	if ((jrc = json_parse_strict(line, len, &o, NULL, 0)) != JSON_OK) {
		if (jrc == JSON_NOMEM)
			return CONFIG_NOMEM;
		snprintf(why, whylen, "%s", json_strerror(jrc));
		return CONFIG_INVALID;
	}
	if (!cJSON_IsObject(o)) {
		snprintf(why, whylen, "not a JSON object");
		goto out;
	}
	cJSON_ArrayForEach(v, o) {
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strcmp(v->string, known[i]) == 0)
				break;
		if (i == sizeof(known) / sizeof(known[0])) {
			/* Named only when it is plain: no bytes echoed blind. */
			snprintf(why, whylen, "unknown field%s%.40s%s (the"
			    " fields are tenant, job_id, attempt, step,"
			    " destination, source_url, output)",
			    plain(v->string) ? " \"" : "",
			    plain(v->string) ? v->string : "",
			    plain(v->string) ? "\"" : "");
			goto out;
		}
	}
	if (job_field(o, "tenant", tenant == NULL, j->tenant,
	    sizeof(j->tenant), why, whylen) != CONFIG_OK ||
	    job_field(o, "job_id", 1, j->job_id, sizeof(j->job_id), why,
	    whylen) != CONFIG_OK ||
	    job_field(o, "attempt", 1, j->attempt, sizeof(j->attempt), why,
	    whylen) != CONFIG_OK ||
	    job_field(o, "step", 1, j->step, sizeof(j->step), why,
	    whylen) != CONFIG_OK ||
	    job_field(o, "destination", 1, j->destination,
	    sizeof(j->destination), why, whylen) != CONFIG_OK ||
	    job_field(o, "source_url", 0, j->source_url,
	    sizeof(j->source_url), why, whylen) != CONFIG_OK)
		goto out;
	if (tenant != NULL) {
		if (j->tenant[0] != '\0' && strcmp(j->tenant, tenant) != 0) {
			snprintf(why, whylen, "\"tenant\" is not %s", tenant);
			goto out;
		}
		if (strlen(tenant) >= sizeof(j->tenant)) {
			snprintf(why, whylen, "tenant too long");
			goto out;
		}
		memcpy(j->tenant, tenant, strlen(tenant) + 1);
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "output");
	if (v != NULL && !cJSON_IsNull(v)) {
		if (!cJSON_IsObject(v)) {
			snprintf(why, whylen, "\"output\" is not a JSON object");
			goto out;
		}
		if ((out = cJSON_PrintUnformatted(v)) == NULL) {
			rc = CONFIG_NOMEM;
			goto out;
		}
		if (strlen(out) >= sizeof(j->output)) {
			snprintf(why, whylen, "\"output\" is longer than %zu"
			    " bytes", sizeof(j->output) - 1);
			goto out;
		}
		memcpy(j->output, out, strlen(out) + 1);
	}
	rc = CONFIG_OK;
out:
	cJSON_free(out);
	cJSON_Delete(o);
	return rc;
}

enum config_status
config_job_import(struct config *c, const struct config_job *j,
    int *present, const char **why)
{
	struct config_job	have;
	enum config_status	rc;

	*present = 0;
	if ((rc = config_job_add(c, j, why)) != CONFIG_EXISTS)
		return rc;
	if ((rc = config_job_get(c, j->tenant, j->job_id, &have)) !=
	    CONFIG_OK)
		return rc == CONFIG_NOTFOUND ? CONFIG_EXISTS : rc;
	*why = strcmp(have.attempt, j->attempt) != 0 ? "attempt" :
	    strcmp(have.step, j->step) != 0 ? "step" :
	    strcmp(have.destination, j->destination) != 0 ? "destination" :
	    strcmp(have.source_url, j->source_url) != 0 ? "source_url" :
	    strcmp(have.output, j->output) != 0 ? "output" : NULL;
	if (*why != NULL)
		return CONFIG_EXISTS;
	*present = 1;
	return CONFIG_OK;
}
