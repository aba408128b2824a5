/*
 * check_tornado.c: tests of lib/provider/tornado.c, every payload shape of the
 * Tornado provider (hookbox-fcgi(8), Formats), valid and broken, through
 * the three parsers.
 *
 * Every body is handed to the parser in an exact-size heap copy, not
 * NUL-terminated, so that the sanitizer build catches a read past len.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "base/fault.h"
#include "base/text.h"
#include "base/util.h"
#include "provider/obs.h"
#include "provider/tornado.h"
#include "testutil.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

typedef enum tornado_err (*parse_fn)(const char *, size_t, struct obs *,
    char *, size_t);

#define CB	tornado_parse_callback
#define EV	tornado_parse_event
#define ST	tornado_parse_poll

/* Not a value of any enum under test: proves a field was written. */
#define JUNK	0x5a

static char	 why[256];

static Suite	*tornado_suite(void);

/* Runs fn on an exact-size copy of the len bytes at body. */
static enum tornado_err
run_len(parse_fn fn, const char *body, size_t len, struct obs *o)
{
	enum tornado_err	 rc;
	char			*copy;

	copy = malloc(len > 0 ? len : 1);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, body, len);
	memset(why, 0, sizeof(why));
	rc = fn(copy, len, o, why, sizeof(why));
	free(copy);
	return rc;
}

static enum tornado_err
run(parse_fn fn, const char *body, struct obs *o)
{
	return run_len(fn, body, strlen(body), o);
}

/* Fills an obs with garbage, so that a field not set shows. */
static void
dirty(struct obs *o)
{
	memset(o, JUNK, sizeof(*o));
}

/* Returns prefix, n copies of unit and suffix, in memory the caller frees. */
static char *
build(const char *prefix, const char *unit, size_t n, const char *suffix)
{
	size_t	 plen = strlen(prefix), ulen = strlen(unit);
	size_t	 slen = strlen(suffix), i;
	char	*s;

	s = malloc(plen + ulen * n + slen + 1);
	ck_assert_ptr_nonnull(s);
	memcpy(s, prefix, plen);
	for (i = 0; i < n; i++)
		memcpy(s + plen + i * ulen, unit, ulen);
	memcpy(s + plen + ulen * n, suffix, slen + 1);
	return s;
}

/* Asserts a successful parse of an observation of a job. */
static void
ck_job(const struct obs *o, enum obs_source src, const char *job_id,
    enum obs_status st, enum obs_stage stage)
{
	ck_assert_int_eq(o->source, src);
	ck_assert_int_eq(o->event, OBS_EV_JOB);
	ck_assert_int_eq(o->status, st);
	ck_assert_int_eq(o->stage, stage);
	ck_assert_str_eq(o->job_id, job_id);
}

/* The strings of struct obs, for ck_empty(). */
#define E_TYPE		0x01
#define E_JOB		0x02
#define E_DELIVERY	0x04
#define E_KEY		0x08
#define E_URL		0x10
#define E_ERROR		0x20
#define E_ALL		0x3f

/* Asserts that the strings of o named in which are empty. */
static void
ck_empty(const struct obs *o, int which)
{
	if (which & E_TYPE)
		ck_assert_str_eq(o->type, "");
	if (which & E_JOB)
		ck_assert_str_eq(o->job_id, "");
	if (which & E_DELIVERY)
		ck_assert_str_eq(o->delivery_id, "");
	if (which & E_KEY)
		ck_assert_str_eq(o->file_key, "");
	if (which & E_URL)
		ck_assert_str_eq(o->file_url, "");
	if (which & E_ERROR)
		ck_assert_str_eq(o->error, "");
}

/*
 * Per-job callbacks, current format
 */

START_TEST(test_cb_completed)
{
	struct obs	o;

	dirty(&o);
	ck_assert_int_eq(run(CB, "{\"type\":\"job_completed\","
	    "\"job_id\":\"job-1\",\"status\":\"completed\","
	    "\"url\":\"https://cdn.example/v/1.mp4\",\"key\":\"v/1.mp4\","
	    "\"folder\":\"shows\",\"title\":\"Pilot\",\"description\":\"d\","
	    "\"release_date\":\"2024-01-01\",\"subtitle_key\":\"v/1.vtt\","
	    "\"extra\":{\"nested\":[1,2,{\"x\":null}]},\"n\":1.5}", &o),
	    TORNADO_OK);
	ck_job(&o, OBS_SRC_JOB, "job-1", OBS_ST_COMPLETED,
	    OBS_STAGE_COMPLETED);
	ck_assert_str_eq(o.type, "job_completed");
	ck_assert_str_eq(o.file_key, "v/1.mp4");
	ck_assert_str_eq(o.file_url, "https://cdn.example/v/1.mp4");
	ck_empty(&o, E_DELIVERY | E_ERROR);
}
END_TEST

START_TEST(test_cb_failed)
{
	struct obs	o;

	dirty(&o);
	ck_assert_int_eq(run(CB, "{\"type\":\"job_failed\",\"job_id\":\"j2\","
	    "\"status\":\"failed\",\"error\":\"source unreachable: 404\"}", &o),
	    TORNADO_OK);
	ck_assert_int_eq(o.source, OBS_SRC_JOB);
	ck_assert_int_eq(o.event, OBS_EV_JOB);
	ck_assert_int_eq(o.status, OBS_ST_FAILED);
	ck_assert_str_eq(o.job_id, "j2");
	ck_assert_str_eq(o.type, "job_failed");
	ck_assert_str_eq(o.error, "source unreachable: 404");
	ck_assert_int_ne(o.stage, OBS_STAGE_COMPLETED);
	ck_empty(&o, E_DELIVERY | E_KEY | E_URL);
}
END_TEST

START_TEST(test_cb_skipped)
{
	struct obs	o;

	dirty(&o);
	ck_assert_int_eq(run(CB, "{\"type\":\"job_skipped\",\"job_id\":\"j3\","
	    "\"status\":\"skipped\",\"reason\":\"already downloaded\"}", &o),
	    TORNADO_OK);
	ck_assert_int_eq(o.event, OBS_EV_JOB);
	ck_assert_int_eq(o.status, OBS_ST_SKIPPED);
	ck_assert_str_eq(o.job_id, "j3");
	/* The reason lands in error. */
	ck_assert_str_eq(o.error, "already downloaded");
	ck_assert_int_ne(o.stage, OBS_STAGE_COMPLETED);
	ck_empty(&o, E_DELIVERY | E_KEY | E_URL);
}
END_TEST

/*
 * Per-job callbacks, legacy format
 */

START_TEST(test_cb_legacy_completed)
{
	struct obs	o;

	dirty(&o);
	ck_assert_int_eq(run(CB, "{\"type\":\"job_completed\","
	    "\"job_id\":\"L1\",\"status\":\"Completed\","
	    "\"s3_key\":\"bucket/L1.mkv\","
	    "\"s3_url\":\"https://s3.example/bucket/L1.mkv\","
	    "\"file_size_bytes\":123456789}", &o), TORNADO_OK);
	ck_job(&o, OBS_SRC_JOB, "L1", OBS_ST_COMPLETED, OBS_STAGE_COMPLETED);
	ck_assert_str_eq(o.file_key, "bucket/L1.mkv");
	ck_assert_str_eq(o.file_url, "https://s3.example/bucket/L1.mkv");
	ck_empty(&o, E_DELIVERY | E_ERROR);

	/* The current names win over the legacy ones. */
	ck_assert_int_eq(run(CB, "{\"type\":\"job_completed\","
	    "\"job_id\":\"L1\",\"status\":\"completed\",\"key\":\"new\","
	    "\"s3_key\":\"old\",\"url\":\"u-new\",\"s3_url\":\"u-old\"}", &o),
	    TORNADO_OK);
	ck_assert_str_eq(o.file_key, "new");
	ck_assert_str_eq(o.file_url, "u-new");
}
END_TEST

START_TEST(test_cb_legacy_failed)
{
	static const char *const spellings[] = { "Failed", "FAILED",
	    "failed", "fAiLeD" };
	struct obs		 o;
	char			 body[256];
	size_t			 i;

	for (i = 0; i < NELEM(spellings); i++) {
		ck_assert_int_lt(snprintf(body, sizeof(body),
		    "{\"type\":\"job_completed\",\"job_id\":\"L2\","
		    "\"status\":\"%s\",\"error\":\"mux error\","
		    "\"file_size_bytes\":0}", spellings[i]), (int)sizeof(body));
		dirty(&o);
		ck_assert_int_eq(run(CB, body, &o), TORNADO_OK);
		ck_assert_msg(o.status == OBS_ST_FAILED, "\"%s\": status %d",
		    spellings[i], (int)o.status);
		ck_assert_int_eq(o.event, OBS_EV_JOB);
		ck_assert_str_eq(o.job_id, "L2");
		ck_assert_str_eq(o.error, "mux error");
		ck_assert_int_ne(o.stage, OBS_STAGE_COMPLETED);
	}

	/* Completed and Skipped in any case too. */
	ck_assert_int_eq(run(CB, "{\"type\":\"job_completed\",\"job_id\":\"L2\","
	    "\"status\":\"COMPLETED\"}", &o), TORNADO_OK);
	ck_assert_int_eq(o.status, OBS_ST_COMPLETED);
	ck_assert_int_eq(run(CB, "{\"type\":\"job_completed\",\"job_id\":\"L2\","
	    "\"status\":\"Skipped\",\"reason\":\"dup\"}", &o), TORNADO_OK);
	ck_assert_int_eq(o.status, OBS_ST_SKIPPED);
	ck_assert_str_eq(o.error, "dup");
	/* The type is compared in any case too, and kept as sent. */
	ck_assert_int_eq(run(CB, "{\"type\":\"Job_Failed\",\"job_id\":\"L2\"}",
	    &o), TORNADO_OK);
	ck_assert_int_eq(o.status, OBS_ST_FAILED);
	ck_assert_str_eq(o.type, "Job_Failed");
}
END_TEST

/*
 * Batch and progress callbacks, and unknown types
 */

START_TEST(test_cb_batch)
{
	struct obs	o;

	dirty(&o);
	ck_assert_int_eq(run(CB, "{\"type\":\"batch_completed\","
	    "\"batch_id\":\"b-7\",\"completed\":9,\"failed\":1,\"total\":10}",
	    &o), TORNADO_OK);
	ck_assert_int_eq(o.source, OBS_SRC_JOB);
	ck_assert_int_eq(o.event, OBS_EV_BATCH);
	ck_assert_int_eq(o.status, OBS_ST_NONE);
	ck_assert_str_eq(o.type, "batch_completed");
	ck_empty(&o, E_ALL & ~E_TYPE);

	/* A job id in a batch summary is not kept: it is no job's event. */
	ck_assert_int_eq(run(CB, "{\"type\":\"batch_completed\","
	    "\"batch_id\":\"b-7\",\"job_id\":\"j1\",\"total\":1}", &o),
	    TORNADO_OK);
	ck_assert_int_eq(o.event, OBS_EV_BATCH);
	ck_assert_str_eq(o.job_id, "");
}
END_TEST

START_TEST(test_cb_progress)
{
	static const struct {
		const char	*name;
		enum obs_stage	 stage;
	} stages[] = {
		{ "downloading", OBS_STAGE_DOWNLOADING },
		{ "download_complete", OBS_STAGE_DOWNLOAD_COMPLETE },
		{ "muxing", OBS_STAGE_MUXING },
		{ "mux_complete", OBS_STAGE_MUX_COMPLETE },
		{ "uploading", OBS_STAGE_UPLOADING },
		{ "Uploading", OBS_STAGE_UPLOADING },
	};
	struct obs		 o;
	char			 body[256];
	size_t			 i;

	dirty(&o);
	ck_assert_int_eq(run(CB, "{\"type\":\"job_progress\","
	    "\"job_id\":\"p1\",\"stage\":\"muxing\"}", &o), TORNADO_OK);
	ck_job(&o, OBS_SRC_JOB, "p1", OBS_ST_NONE, OBS_STAGE_MUXING);
	ck_empty(&o, E_ALL & ~(E_TYPE | E_JOB));

	/* "step" instead of "stage", with a progress number. */
	dirty(&o);
	ck_assert_int_eq(run(CB, "{\"type\":\"progress\",\"job_id\":\"p1\","
	    "\"step\":\"uploading\",\"progress\":42}", &o), TORNADO_OK);
	ck_job(&o, OBS_SRC_JOB, "p1", OBS_ST_NONE, OBS_STAGE_UPLOADING);
	ck_assert_str_eq(o.type, "progress");

	for (i = 0; i < NELEM(stages); i++) {
		ck_assert_int_lt(snprintf(body, sizeof(body),
		    "{\"type\":\"job_progress\",\"job_id\":\"p2\","
		    "\"stage\":\"%s\",\"progress\":%zu.5}", stages[i].name,
		    i * 10), (int)sizeof(body));
		dirty(&o);
		ck_assert_int_eq(run(CB, body, &o), TORNADO_OK);
		ck_job(&o, OBS_SRC_JOB, "p2", OBS_ST_NONE, stages[i].stage);
	}
}
END_TEST

START_TEST(test_cb_unknown)
{
	struct obs	o;

	/* Progress with a stage nobody knows: recorded, not an error. */
	dirty(&o);
	ck_assert_int_eq(run(CB, "{\"type\":\"job_progress\","
	    "\"job_id\":\"p1\",\"stage\":\"transcoding\",\"progress\":5}", &o),
	    TORNADO_OK);
	ck_assert_int_eq(o.event, OBS_EV_UNKNOWN);
	ck_assert_int_eq(o.status, OBS_ST_NONE);

	/* Progress without a stage. */
	ck_assert_int_eq(run(CB, "{\"type\":\"job_progress\","
	    "\"job_id\":\"p1\",\"progress\":5}", &o), TORNADO_OK);
	ck_assert_int_eq(o.event, OBS_EV_UNKNOWN);

	/* An unknown type. */
	dirty(&o);
	ck_assert_int_eq(run(CB, "{\"type\":\"job_archived\","
	    "\"job_id\":\"a1\",\"archived_at\":1700000000}", &o), TORNADO_OK);
	ck_assert_int_eq(o.source, OBS_SRC_JOB);
	ck_assert_int_eq(o.event, OBS_EV_UNKNOWN);
	ck_assert_int_eq(o.status, OBS_ST_NONE);
	ck_assert_str_eq(o.type, "job_archived");
	ck_empty(&o, E_ALL & ~(E_TYPE | E_JOB));

	/* An unknown type with nothing else. */
	ck_assert_int_eq(run(CB, "{\"type\":\"ping\"}", &o), TORNADO_OK);
	ck_assert_int_eq(o.event, OBS_EV_UNKNOWN);
	ck_assert_str_eq(o.type, "ping");
}
END_TEST

START_TEST(test_cb_null_absent)
{
	struct obs	o;

	/* JSON null for an optional field is the field left out. */
	dirty(&o);
	ck_assert_int_eq(run(CB, "{\"type\":\"job_completed\","
	    "\"job_id\":\"n1\",\"status\":\"completed\",\"key\":null,"
	    "\"url\":null,\"error\":null,\"reason\":null,\"progress\":null,"
	    "\"stage\":null,\"step\":null,\"batch_id\":null,"
	    "\"file_size_bytes\":null,\"completed\":null,\"failed\":null,"
	    "\"total\":null}", &o), TORNADO_OK);
	ck_job(&o, OBS_SRC_JOB, "n1", OBS_ST_COMPLETED, OBS_STAGE_COMPLETED);
	ck_empty(&o, E_ALL & ~(E_TYPE | E_JOB));

	/* A null current name falls back to the legacy one. */
	ck_assert_int_eq(run(CB, "{\"type\":\"job_completed\","
	    "\"job_id\":\"n1\",\"status\":\"Completed\",\"key\":null,"
	    "\"s3_key\":\"k\",\"url\":null,\"s3_url\":\"u\"}", &o),
	    TORNADO_OK);
	ck_assert_str_eq(o.file_key, "k");
	ck_assert_str_eq(o.file_url, "u");

	/* A null stage falls back to step. */
	ck_assert_int_eq(run(CB, "{\"type\":\"job_progress\","
	    "\"job_id\":\"n1\",\"stage\":null,\"step\":\"muxing\"}", &o),
	    TORNADO_OK);
	ck_job(&o, OBS_SRC_JOB, "n1", OBS_ST_NONE, OBS_STAGE_MUXING);

	/* A null error leaves room for the reason. */
	ck_assert_int_eq(run(CB, "{\"type\":\"job_failed\",\"job_id\":\"n1\","
	    "\"status\":null,\"error\":null,\"reason\":\"r\"}", &o),
	    TORNADO_OK);
	ck_assert_int_eq(o.status, OBS_ST_FAILED);
	ck_assert_str_eq(o.error, "r");
}
END_TEST

/*
 * Organization events
 */

START_TEST(test_ev_completed)
{
	static const char *const types[] = { "job_completed", "job.completed",
	    "Job.Completed", "JOB_COMPLETED" };
	struct obs		 o;
	char			 body[512];
	size_t			 i;

	for (i = 0; i < NELEM(types); i++) {
		ck_assert_int_lt(snprintf(body, sizeof(body),
		    "{\"delivery_id\":\"dlv-%zu\",\"type\":\"%s\","
		    "\"created_at\":\"2024-05-01T10:00:00Z\",\"data\":{"
		    "\"job_id\":\"org-1\",\"status\":\"completed\","
		    "\"key\":\"o/1.mp4\",\"url\":\"https://cdn.example/o/1.mp4\","
		    "\"title\":\"t\"}}", i, types[i]), (int)sizeof(body));
		dirty(&o);
		ck_assert_int_eq(run(EV, body, &o), TORNADO_OK);
		ck_job(&o, OBS_SRC_ORG, "org-1", OBS_ST_COMPLETED,
		    OBS_STAGE_COMPLETED);
		ck_assert_str_eq(o.type, types[i]);	/* as sent */
		ck_assert_str_eq(o.file_key, "o/1.mp4");
		ck_assert_str_eq(o.file_url, "https://cdn.example/o/1.mp4");
		ck_assert_str_eq(o.error, "");
		ck_assert_int_eq(strncmp(o.delivery_id, "dlv-", 4), 0);
		ck_assert_uint_eq(strlen(o.delivery_id), 5);
	}
}
END_TEST

START_TEST(test_ev_shapes)
{
	struct obs	o;

	/* The job id as "id" inside data. */
	dirty(&o);
	ck_assert_int_eq(run(EV, "{\"delivery_id\":\"d1\","
	    "\"type\":\"job.failed\",\"created_at\":1700000000,"
	    "\"data\":{\"id\":\"org-2\",\"status\":\"failed\","
	    "\"error\":\"boom\"}}", &o), TORNADO_OK);
	ck_assert_int_eq(o.source, OBS_SRC_ORG);
	ck_assert_int_eq(o.event, OBS_EV_JOB);
	ck_assert_int_eq(o.status, OBS_ST_FAILED);
	ck_assert_str_eq(o.job_id, "org-2");
	ck_assert_str_eq(o.delivery_id, "d1");
	ck_assert_str_eq(o.error, "boom");

	/* Skipped, with the reason. */
	ck_assert_int_eq(run(EV, "{\"delivery_id\":\"d2\","
	    "\"type\":\"job.skipped\",\"data\":{\"job_id\":\"org-3\","
	    "\"reason\":\"exists\"}}", &o), TORNADO_OK);
	ck_assert_int_eq(o.status, OBS_ST_SKIPPED);
	ck_assert_str_eq(o.error, "exists");

	/* Legacy data inside the envelope. */
	ck_assert_int_eq(run(EV, "{\"delivery_id\":\"d3\","
	    "\"type\":\"job_completed\",\"data\":{\"job_id\":\"org-4\","
	    "\"status\":\"Failed\",\"s3_key\":\"k\"}}", &o), TORNADO_OK);
	ck_assert_int_eq(o.status, OBS_ST_FAILED);
	ck_assert_str_eq(o.file_key, "k");

	/* The envelope's type is authoritative over one inside data. */
	ck_assert_int_eq(run(EV, "{\"delivery_id\":\"d4\","
	    "\"type\":\"job.completed\",\"data\":{\"type\":\"job_failed\","
	    "\"job_id\":\"org-5\"}}", &o), TORNADO_OK);
	ck_assert_int_eq(o.status, OBS_ST_COMPLETED);
	ck_assert_str_eq(o.type, "job.completed");

	/* Progress. */
	ck_assert_int_eq(run(EV, "{\"delivery_id\":\"d5\","
	    "\"type\":\"job.progress\",\"data\":{\"job_id\":\"org-6\","
	    "\"step\":\"download_complete\",\"progress\":50}}", &o),
	    TORNADO_OK);
	ck_job(&o, OBS_SRC_ORG, "org-6", OBS_ST_NONE,
	    OBS_STAGE_DOWNLOAD_COMPLETE);
	ck_assert_str_eq(o.delivery_id, "d5");

	/* Batch. */
	ck_assert_int_eq(run(EV, "{\"delivery_id\":\"d6\","
	    "\"type\":\"batch.completed\",\"data\":{\"batch_id\":\"b1\"}}",
	    &o), TORNADO_OK);
	ck_assert_int_eq(o.event, OBS_EV_BATCH);
	ck_assert_str_eq(o.job_id, "");
	ck_assert_str_eq(o.delivery_id, "d6");
}
END_TEST

START_TEST(test_ev_unknown)
{
	struct obs	o;

	/* An unknown type without data: recorded, with its delivery id. */
	dirty(&o);
	ck_assert_int_eq(run(EV, "{\"delivery_id\":\"d-9\","
	    "\"type\":\"organization.updated\","
	    "\"created_at\":\"2024-05-01T10:00:00Z\"}", &o), TORNADO_OK);
	ck_assert_int_eq(o.source, OBS_SRC_ORG);
	ck_assert_int_eq(o.event, OBS_EV_UNKNOWN);
	ck_assert_int_eq(o.status, OBS_ST_NONE);
	ck_assert_str_eq(o.delivery_id, "d-9");
	ck_assert_str_eq(o.type, "organization.updated");
	ck_empty(&o, E_ALL & ~(E_TYPE | E_DELIVERY));

	/* data: null is data left out. */
	dirty(&o);
	ck_assert_int_eq(run(EV, "{\"delivery_id\":\"d-9\","
	    "\"type\":\"job.archived\",\"created_at\":null,\"data\":null}",
	    &o), TORNADO_OK);
	ck_assert_int_eq(o.event, OBS_EV_UNKNOWN);
	ck_assert_str_eq(o.delivery_id, "d-9");

	/* An unknown type with data. */
	ck_assert_int_eq(run(EV, "{\"delivery_id\":\"d-9\","
	    "\"type\":\"job.archived\",\"data\":{\"job_id\":\"x\"}}", &o),
	    TORNADO_OK);
	ck_assert_int_eq(o.event, OBS_EV_UNKNOWN);

	/* data's null job_id falls back to its id. */
	ck_assert_int_eq(run(EV, "{\"delivery_id\":\"d-9\","
	    "\"type\":\"job.completed\",\"data\":{\"job_id\":null,"
	    "\"id\":\"j-alt\"}}", &o), TORNADO_OK);
	ck_assert_str_eq(o.job_id, "j-alt");
	ck_assert_int_eq(o.status, OBS_ST_COMPLETED);
}
END_TEST

/*
 * The status API
 */

/* -1: not checked. */
#define ANY	(-1)

static const struct statuscase {
	const char	*status;
	const char	*step;		/* NULL: no step field */
	enum obs_event	 event;
	enum obs_status	 st;
	int		 stage;
} statuscases[] = {
	{ "Completed", "Finished", OBS_EV_JOB, OBS_ST_COMPLETED,
	    OBS_STAGE_COMPLETED },
	{ "Completed", NULL, OBS_EV_JOB, OBS_ST_COMPLETED, OBS_STAGE_COMPLETED },
	{ "COMPLETED", NULL, OBS_EV_JOB, OBS_ST_COMPLETED, OBS_STAGE_COMPLETED },
	{ "completed", "Finished", OBS_EV_JOB, OBS_ST_COMPLETED,
	    OBS_STAGE_COMPLETED },
	{ "Failed", "Muxing", OBS_EV_JOB, OBS_ST_FAILED, ANY },
	{ "FAILED", NULL, OBS_EV_JOB, OBS_ST_FAILED, ANY },
	{ "Warning", "Finished", OBS_EV_JOB, OBS_ST_WARNING, ANY },
	{ "warning", NULL, OBS_EV_JOB, OBS_ST_WARNING, ANY },
	{ "Skipped", NULL, OBS_EV_JOB, OBS_ST_SKIPPED, ANY },
	{ "sKiPpEd", "Queued", OBS_EV_JOB, OBS_ST_SKIPPED, ANY },
	{ "Pending", "Queued", OBS_EV_JOB, OBS_ST_NONE, OBS_STAGE_QUEUED },
	{ "Pending", NULL, OBS_EV_JOB, OBS_ST_NONE, OBS_STAGE_QUEUED },
	{ "pending", "downloading", OBS_EV_JOB, OBS_ST_NONE,
	    OBS_STAGE_DOWNLOADING },
	{ "Processing", "Queued", OBS_EV_JOB, OBS_ST_NONE, OBS_STAGE_QUEUED },
	{ "Processing", "Downloading", OBS_EV_JOB, OBS_ST_NONE,
	    OBS_STAGE_DOWNLOADING },
	{ "Processing", "Muxing", OBS_EV_JOB, OBS_ST_NONE, OBS_STAGE_MUXING },
	{ "Processing", "Uploading", OBS_EV_JOB, OBS_ST_NONE,
	    OBS_STAGE_UPLOADING },
	{ "Processing", "Finished", OBS_EV_JOB, OBS_ST_NONE,
	    OBS_STAGE_COMPLETED },
	{ "PROCESSING", "MUXING", OBS_EV_JOB, OBS_ST_NONE, OBS_STAGE_MUXING },
	{ "processing", "finished", OBS_EV_JOB, OBS_ST_NONE,
	    OBS_STAGE_COMPLETED },
	{ "Processing", NULL, OBS_EV_JOB, OBS_ST_NONE, OBS_STAGE_QUEUED },
	{ "Exploded", NULL, OBS_EV_UNKNOWN, OBS_ST_NONE, ANY },
	{ "Cancelled", "Muxing", OBS_EV_UNKNOWN, OBS_ST_NONE, ANY },
	{ "Complete", NULL, OBS_EV_UNKNOWN, OBS_ST_NONE, ANY },
};

START_TEST(test_status)
{
	const struct statuscase	*c = &statuscases[_i];
	struct obs		 o;
	char			 body[256], step[64];

	step[0] = '\0';
	if (c->step != NULL)
		ck_assert_int_lt(snprintf(step, sizeof(step),
		    ",\"step\":\"%s\"", c->step), (int)sizeof(step));
	ck_assert_int_lt(snprintf(body, sizeof(body), "{\"id\":\"poll-1\","
	    "\"status\":\"%s\"%s,\"finished_at\":1700000000000,"
	    "\"created_at\":\"x\"}", c->status, step), (int)sizeof(body));
	dirty(&o);
	ck_assert_int_eq(run(ST, body, &o), TORNADO_OK);
	ck_assert_int_eq(o.source, OBS_SRC_POLL);
	ck_assert_msg(o.event == c->event, "%s: event %d", body, (int)o.event);
	ck_assert_msg(o.status == c->st, "%s: status %d", body, (int)o.status);
	if (c->stage != ANY)
		ck_assert_msg((int)o.stage == c->stage, "%s: stage %d", body,
		    (int)o.stage);
	else if (c->st != OBS_ST_COMPLETED)
		/* No file, no completion stage. */
		ck_assert_int_ne(o.stage, OBS_STAGE_COMPLETED);
	ck_assert_str_eq(o.job_id, "poll-1");
	ck_empty(&o, E_ALL & ~(E_TYPE | E_JOB));
}
END_TEST

START_TEST(test_status_fields)
{
	struct obs	o;

	dirty(&o);
	ck_assert_int_eq(run(ST, "{\"id\":\"poll-2\",\"status\":\"Failed\","
	    "\"step\":\"Muxing\",\"error\":\"ffmpeg exited 1\","
	    "\"finished_at\":1700000000123}", &o), TORNADO_OK);
	ck_assert_int_eq(o.status, OBS_ST_FAILED);
	ck_assert_str_eq(o.error, "ffmpeg exited 1");

	dirty(&o);
	ck_assert_int_eq(run(ST, "{\"id\":\"poll-3\",\"status\":\"Completed\","
	    "\"step\":\"Finished\",\"s3_key\":\"k/3\",\"s3_url\":\"u/3\"}",
	    &o), TORNADO_OK);
	ck_job(&o, OBS_SRC_POLL, "poll-3", OBS_ST_COMPLETED,
	    OBS_STAGE_COMPLETED);
	ck_assert_str_eq(o.file_key, "k/3");
	ck_assert_str_eq(o.file_url, "u/3");
	ck_empty(&o, E_DELIVERY | E_ERROR);

	/* Nulls are absent. */
	dirty(&o);
	ck_assert_int_eq(run(ST, "{\"id\":\"poll-4\",\"status\":\"Warning\","
	    "\"step\":null,\"error\":null,\"key\":null,\"url\":null,"
	    "\"finished_at\":null}", &o), TORNADO_OK);
	ck_assert_int_eq(o.status, OBS_ST_WARNING);
	ck_assert_str_eq(o.job_id, "poll-4");
	ck_empty(&o, E_ALL & ~(E_TYPE | E_JOB));
}
END_TEST

/*
 * Broken payloads
 */

static const struct badcase {
	parse_fn		 fn;
	const char		*body;
	enum tornado_err	 want;
	const char		*field;		/* must appear in why */
	const char		*value;		/* must not; or NULL */
} badcases[] = {
	/* Not JSON. */
	{ CB, "not json", TORNADO_NOT_JSON, "body", NULL },
	{ CB, "", TORNADO_NOT_JSON, "body", NULL },
	{ CB, "   ", TORNADO_NOT_JSON, "body", NULL },
	{ CB, "{", TORNADO_NOT_JSON, "body", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j", TORNADO_NOT_JSON,
	    "body", NULL },
	{ CB, "{\"type\":\"job_completed\"", TORNADO_NOT_JSON, "body", NULL },
	{ CB, "{\"type\":\"job_completed\",}", TORNADO_NOT_JSON, "body",
	    NULL },
	{ CB, "{'type':'job_completed'}", TORNADO_NOT_JSON, "body", NULL },
	{ CB, "{} x", TORNADO_NOT_JSON, "body", NULL },
	{ CB, "{}}", TORNADO_NOT_JSON, "body", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j1\"}{}",
	    TORNADO_NOT_JSON, "body", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j1\"} ,",
	    TORNADO_NOT_JSON, "body", NULL },
	{ EV, "", TORNADO_NOT_JSON, "body", NULL },
	{ EV, "{\"delivery_id\":\"d\",\"type\":\"t\"} x", TORNADO_NOT_JSON,
	    "body", NULL },
	{ ST, "<html>502 Bad Gateway</html>", TORNADO_NOT_JSON, "body", NULL },
	{ ST, "{\"id\":\"j\",\"status\":\"Completed\"", TORNADO_NOT_JSON,
	    "body", NULL },
	{ ST, "{} x", TORNADO_NOT_JSON, "body", NULL },
	/* JSON, but no object. */
	{ CB, "[]", TORNADO_INVALID, "body", NULL },
	{ CB, "[{\"type\":\"job_completed\",\"job_id\":\"j1\"}]",
	    TORNADO_INVALID, "body", NULL },
	{ CB, "\"job_completed\"", TORNADO_INVALID, "body", NULL },
	{ CB, "42", TORNADO_INVALID, "body", NULL },
	{ CB, "null", TORNADO_INVALID, "body", NULL },
	{ CB, "true", TORNADO_INVALID, "body", NULL },
	{ EV, "[]", TORNADO_INVALID, "body", NULL },
	{ EV, "\"x\"", TORNADO_INVALID, "body", NULL },
	{ ST, "[{\"id\":\"j\",\"status\":\"Completed\"}]", TORNADO_INVALID,
	    "body", NULL },
	{ ST, "\"Completed\"", TORNADO_INVALID, "body", NULL },
	/* type. */
	{ CB, "{}", TORNADO_INVALID, "type", NULL },
	{ CB, "{\"job_id\":\"j1\",\"status\":\"completed\"}", TORNADO_INVALID,
	    "type", NULL },
	{ CB, "{\"type\":null,\"job_id\":\"j1\"}", TORNADO_INVALID, "type",
	    NULL },
	{ CB, "{\"type\":42,\"job_id\":\"j1\"}", TORNADO_INVALID, "type",
	    NULL },
	{ CB, "{\"type\":true}", TORNADO_INVALID, "type", NULL },
	{ CB, "{\"type\":[\"job_completed\"]}", TORNADO_INVALID, "type", NULL },
	{ CB, "{\"type\":{}}", TORNADO_INVALID, "type", NULL },
	{ CB, "{\"type\":\"\"}", TORNADO_INVALID, "type", NULL },
	{ CB, "{\"type\":\"job\\ncompleted\"}", TORNADO_INVALID, "type",
	    NULL },
	/* job_id. */
	{ CB, "{\"type\":\"job_completed\",\"job_id\":42}", TORNADO_INVALID,
	    "job_id", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":[\"j\"]}",
	    TORNADO_INVALID, "job_id", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"\"}", TORNADO_INVALID,
	    "job_id", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"\\u0001evil\"}",
	    TORNADO_INVALID, "job_id", "evil" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"ev\\u001fil\"}",
	    TORNADO_INVALID, "job_id", "ev" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"ev\\u007fil\"}",
	    TORNADO_INVALID, "job_id", "ev" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"a\\tb\"}",
	    TORNADO_INVALID, "job_id", NULL },
	/* A raw tab is no JSON at all (see test_raw_control). */
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"a\tb\"}",
	    TORNADO_NOT_JSON, "body", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"evil\xff\xfe\"}",
	    TORNADO_INVALID, "job_id", "evil" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"\xc0\x80\"}",
	    TORNADO_INVALID, "job_id", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"\xed\xa0\x80\"}",
	    TORNADO_INVALID, "job_id", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\xc3\"}",
	    TORNADO_INVALID, "job_id", NULL },
	/* A terminal type needs a job. */
	{ CB, "{\"type\":\"job_completed\",\"status\":\"completed\","
	    "\"key\":\"k\"}", TORNADO_INVALID, "job_id", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":null}", TORNADO_INVALID,
	    "job_id", NULL },
	{ CB, "{\"type\":\"job_failed\",\"error\":\"e\"}", TORNADO_INVALID,
	    "job_id", NULL },
	{ CB, "{\"type\":\"job_skipped\",\"reason\":\"r\"}", TORNADO_INVALID,
	    "job_id", NULL },
	/* status. */
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j1\","
	    "\"status\":\"exploded\"}", TORNADO_INVALID, "status", "exploded" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j1\","
	    "\"status\":\"completed!\"}", TORNADO_INVALID, "status", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j1\",\"status\":1}",
	    TORNADO_INVALID, "status", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j1\",\"status\":\"\"}",
	    TORNADO_INVALID, "status", NULL },
	/* Other fields of the wrong type. */
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j1\",\"key\":1}",
	    TORNADO_INVALID, "key", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j1\",\"s3_key\":1}",
	    TORNADO_INVALID, "s3_key", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j1\",\"url\":{}}",
	    TORNADO_INVALID, "url", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j1\",\"s3_url\":[]}",
	    TORNADO_INVALID, "s3_url", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j1\","
	    "\"url\":\"bad\xff\"}", TORNADO_INVALID, "url", NULL },
	{ CB, "{\"type\":\"job_failed\",\"job_id\":\"j1\",\"error\":[]}",
	    TORNADO_INVALID, "error", NULL },
	{ CB, "{\"type\":\"job_failed\",\"job_id\":\"j1\",\"error\":\"\xff\"}",
	    TORNADO_INVALID, "error", NULL },
	{ CB, "{\"type\":\"job_skipped\",\"job_id\":\"j1\",\"reason\":false}",
	    TORNADO_INVALID, "reason", NULL },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j1\","
	    "\"file_size_bytes\":\"12\"}", TORNADO_INVALID, "file_size_bytes",
	    NULL },
	/* Progress. */
	{ CB, "{\"type\":\"job_progress\",\"job_id\":\"j1\","
	    "\"stage\":\"muxing\",\"progress\":\"42\"}", TORNADO_INVALID,
	    "progress", "42" },
	{ CB, "{\"type\":\"job_progress\",\"job_id\":\"j1\","
	    "\"stage\":\"muxing\",\"progress\":true}", TORNADO_INVALID,
	    "progress", NULL },
	{ CB, "{\"type\":\"job_progress\",\"job_id\":\"j1\",\"stage\":3}",
	    TORNADO_INVALID, "stage", NULL },
	{ CB, "{\"type\":\"job_progress\",\"job_id\":\"j1\",\"step\":3}",
	    TORNADO_INVALID, "step", NULL },
	{ CB, "{\"type\":\"job_progress\",\"job_id\":\"j1\",\"stage\":\"\"}",
	    TORNADO_INVALID, "stage", NULL },
	/* Batch. */
	{ CB, "{\"type\":\"batch_completed\",\"completed\":1,\"failed\":0,"
	    "\"total\":1}", TORNADO_INVALID, "batch_id", NULL },
	{ CB, "{\"type\":\"batch_completed\",\"batch_id\":\"\"}",
	    TORNADO_INVALID, "batch_id", NULL },
	{ CB, "{\"type\":\"batch_completed\",\"batch_id\":7}", TORNADO_INVALID,
	    "batch_id", NULL },
	{ CB, "{\"type\":\"batch_completed\",\"batch_id\":\"b\","
	    "\"completed\":\"1\"}", TORNADO_INVALID, "completed", NULL },
	{ CB, "{\"type\":\"batch_completed\",\"batch_id\":\"b\","
	    "\"failed\":[]}", TORNADO_INVALID, "failed", NULL },
	{ CB, "{\"type\":\"batch_completed\",\"batch_id\":\"b\","
	    "\"total\":\"1\"}", TORNADO_INVALID, "total", NULL },
	/* Organization envelopes. */
	{ EV, "{\"type\":\"job.completed\",\"data\":{\"job_id\":\"j1\"}}",
	    TORNADO_INVALID, "delivery_id", NULL },
	{ EV, "{\"delivery_id\":null,\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"j1\"}}", TORNADO_INVALID, "delivery_id",
	    NULL },
	{ EV, "{\"delivery_id\":\"\",\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"j1\"}}", TORNADO_INVALID, "delivery_id",
	    NULL },
	{ EV, "{\"delivery_id\":5,\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"j1\"}}", TORNADO_INVALID, "delivery_id",
	    NULL },
	{ EV, "{\"delivery_id\":\"d\\u0002\",\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"j1\"}}", TORNADO_INVALID, "delivery_id",
	    NULL },
	{ EV, "{\"delivery_id\":\"d1\",\"data\":{\"job_id\":\"j1\"}}",
	    TORNADO_INVALID, "type", NULL },
	{ EV, "{\"delivery_id\":\"d1\",\"type\":7}", TORNADO_INVALID, "type",
	    NULL },
	{ EV, "{\"delivery_id\":\"d1\",\"type\":\"job.completed\","
	    "\"data\":[{\"job_id\":\"j1\"}]}", TORNADO_INVALID, "data", NULL },
	{ EV, "{\"delivery_id\":\"d1\",\"type\":\"job.completed\","
	    "\"data\":\"{\\\"job_id\\\":\\\"j1\\\"}\"}", TORNADO_INVALID,
	    "data", NULL },
	{ EV, "{\"delivery_id\":\"d1\",\"type\":\"job.completed\","
	    "\"data\":1}", TORNADO_INVALID, "data", NULL },
	{ EV, "{\"delivery_id\":\"d1\",\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":1}}", TORNADO_INVALID, "job_id", NULL },
	{ EV, "{\"delivery_id\":\"d1\",\"type\":\"job.completed\","
	    "\"data\":{\"id\":1}}", TORNADO_INVALID, "id", NULL },
	{ EV, "{\"delivery_id\":\"d1\",\"type\":\"job.completed\"}",
	    TORNADO_INVALID, "job_id", NULL },
	{ EV, "{\"delivery_id\":\"d1\",\"type\":\"job.completed\","
	    "\"data\":{}}", TORNADO_INVALID, "job_id", NULL },
	{ EV, "{\"delivery_id\":\"d1\",\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"j1\",\"status\":\"exploded\"}}",
	    TORNADO_INVALID, "status", "exploded" },
	{ EV, "{\"delivery_id\":\"d1\",\"type\":\"job.progress\","
	    "\"data\":{\"job_id\":\"j1\",\"stage\":\"muxing\","
	    "\"progress\":\"42\"}}", TORNADO_INVALID, "progress", NULL },
	{ EV, "{\"delivery_id\":\"d1\",\"type\":\"batch.completed\","
	    "\"data\":{}}", TORNADO_INVALID, "batch_id", NULL },
	/* The status API. */
	{ ST, "{\"status\":\"Completed\"}", TORNADO_INVALID, "id", NULL },
	{ ST, "{\"id\":null,\"status\":\"Completed\"}", TORNADO_INVALID, "id",
	    NULL },
	{ ST, "{\"id\":\"\",\"status\":\"Completed\"}", TORNADO_INVALID, "id",
	    NULL },
	{ ST, "{\"id\":12,\"status\":\"Completed\"}", TORNADO_INVALID, "id",
	    NULL },
	{ ST, "{\"id\":\"j\\u0001\",\"status\":\"Completed\"}",
	    TORNADO_INVALID, "id", NULL },
	{ ST, "{\"id\":\"j1\"}", TORNADO_INVALID, "status", NULL },
	{ ST, "{\"id\":\"j1\",\"status\":null}", TORNADO_INVALID, "status",
	    NULL },
	{ ST, "{\"id\":\"j1\",\"status\":\"\"}", TORNADO_INVALID, "status",
	    NULL },
	{ ST, "{\"id\":\"j1\",\"status\":3}", TORNADO_INVALID, "status", NULL },
	{ ST, "{\"id\":\"j1\",\"status\":\"Processing\",\"step\":2}",
	    TORNADO_INVALID, "step", NULL },
	{ ST, "{\"id\":\"j1\",\"status\":\"Failed\",\"error\":{}}",
	    TORNADO_INVALID, "error", NULL },
	{ ST, "{\"id\":\"j1\",\"status\":\"Completed\","
	    "\"finished_at\":\"yesterday\"}", TORNADO_INVALID, "finished_at",
	    NULL },
	{ ST, "{\"id\":\"j1\",\"status\":\"Completed\",\"key\":[]}",
	    TORNADO_INVALID, "key", NULL },
};

START_TEST(test_bad)
{
	const struct badcase	*c = &badcases[_i];
	struct obs		 o;
	enum tornado_err	 rc;

	dirty(&o);
	rc = run(c->fn, c->body, &o);
	ck_assert_msg(rc == c->want, "case %d (%s): %s, want %s", _i, c->body,
	    tornado_strerror(rc), tornado_strerror(c->want));
	ck_assert_msg(strstr(why, c->field) != NULL,
	    "case %d (%s): why \"%s\" does not name \"%s\"", _i, c->body, why,
	    c->field);
	if (c->value != NULL)
		ck_assert_msg(strstr(why, c->value) == NULL,
		    "case %d: why \"%s\" repeats the value", _i, why);
}
END_TEST

/* A value of len bytes, then the same plus one, for each long field. */
static const struct longcase {
	parse_fn	 fn;
	const char	*prefix;
	const char	*suffix;
	size_t		 max;
	const char	*field;
	size_t		 off;		/* where the value lands */
} longcases[] = {
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"", "\"}", HB_ID_MAX,
	    "job_id", offsetof(struct obs, job_id) },
	{ CB, "{\"type\":\"", "\",\"job_id\":\"j\"}", HB_ID_MAX,
	    "type", offsetof(struct obs, type) },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\",\"url\":\"",
	    "\"}", HB_TEXT_MAX, "url", offsetof(struct obs, file_url) },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\",\"s3_url\":\"",
	    "\"}", HB_TEXT_MAX, "s3_url", offsetof(struct obs, file_url) },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\",\"key\":\"",
	    "\"}", HB_TEXT_MAX, "key", offsetof(struct obs, file_key) },
	{ CB, "{\"type\":\"batch_completed\",\"batch_id\":\"", "\"}",
	    HB_ID_MAX, "batch_id", (size_t)-1 },
	{ CB, "{\"type\":\"job_progress\",\"job_id\":\"j\",\"stage\":\"",
	    "\"}", HB_ID_MAX, "stage", (size_t)-1 },
	{ EV, "{\"type\":\"x\",\"delivery_id\":\"", "\"}", HB_ID_MAX,
	    "delivery_id", offsetof(struct obs, delivery_id) },
	{ EV, "{\"type\":\"job.completed\",\"delivery_id\":\"d\","
	    "\"data\":{\"job_id\":\"", "\"}}", HB_ID_MAX, "job_id",
	    offsetof(struct obs, job_id) },
	{ EV, "{\"type\":\"job.completed\",\"delivery_id\":\"d\","
	    "\"data\":{\"job_id\":\"j\",\"url\":\"", "\"}}", HB_TEXT_MAX,
	    "url", offsetof(struct obs, file_url) },
	{ ST, "{\"status\":\"Completed\",\"id\":\"", "\"}", HB_ID_MAX, "id",
	    offsetof(struct obs, job_id) },
	{ ST, "{\"status\":\"Completed\",\"id\":\"j\",\"url\":\"", "\"}",
	    HB_TEXT_MAX, "url", offsetof(struct obs, file_url) },
	{ ST, "{\"status\":\"Processing\",\"id\":\"j\",\"step\":\"", "\"}",
	    HB_ID_MAX, "step", (size_t)-1 },
};

START_TEST(test_long)
{
	const struct longcase	*c = &longcases[_i];
	struct obs		 o;
	char			*body, *val;

	/* Exactly max bytes: accepted and copied whole. */
	body = build(c->prefix, "v", c->max, c->suffix);
	dirty(&o);
	ck_assert_msg(run(c->fn, body, &o) == TORNADO_OK,
	    "%s of %zu bytes: %s", c->field, c->max, why);
	if (c->off != (size_t)-1) {
		val = (char *)&o + c->off;
		ck_assert_uint_eq(strlen(val), c->max);
		ck_assert_int_eq(strspn(val, "v"), c->max);
	}
	free(body);

	/* One byte more: refused, naming the field. */
	body = build(c->prefix, "v", c->max + 1, c->suffix);
	ck_assert_int_eq(run(c->fn, body, &o), TORNADO_INVALID);
	ck_assert_msg(strstr(why, c->field) != NULL,
	    "why \"%s\" does not name %s", why, c->field);
	free(body);
}
END_TEST

/*
 * Texts that are cut, not refused
 */

static const struct cutcase {
	parse_fn	 fn;
	const char	*prefix;
	const char	*suffix;
} cutcases[] = {
	{ CB, "{\"type\":\"job_failed\",\"job_id\":\"j\",\"error\":\"", "\"}" },
	{ CB, "{\"type\":\"job_skipped\",\"job_id\":\"j\",\"reason\":\"",
	    "\"}" },
	{ EV, "{\"type\":\"job.failed\",\"delivery_id\":\"d\","
	    "\"data\":{\"job_id\":\"j\",\"error\":\"", "\"}}" },
	{ ST, "{\"id\":\"j\",\"status\":\"Failed\",\"error\":\"", "\"}" },
};

START_TEST(test_cut)
{
	static const char *const units[] = { "e", "\xc3\xa9", "\xe2\x82\xac",
	    "\xf0\x9f\x98\x80" };
	const struct cutcase	*c = &cutcases[_i];
	struct obs		 o;
	char			 prefix[512], *body;
	size_t			 u, lead, ulen, n, want, len;

	/* 0-3 ASCII bytes, then characters of 1-4 bytes, past the limit. */
	for (u = 0; u < NELEM(units); u++) {
		ulen = strlen(units[u]);
		for (lead = 0; lead < 4; lead++) {
			ck_assert_int_lt(snprintf(prefix, sizeof(prefix),
			    "%s%.*s", c->prefix, (int)lead, "abc"),
			    (int)sizeof(prefix));
			n = (HB_TEXT_MAX - lead) / ulen + 20;
			body = build(prefix, units[u], n, c->suffix);
			dirty(&o);
			ck_assert_msg(run(c->fn, body, &o) == TORNADO_OK,
			    "unit %zu lead %zu: %s", u, lead, why);
			/* The longest whole-character prefix that fits. */
			want = lead + (HB_TEXT_MAX - lead) / ulen * ulen;
			len = strlen(o.error);
			ck_assert_msg(len == want, "unit %zu lead %zu: %zu "
			    "bytes, want %zu", u, lead, len, want);
			ck_assert_uint_le(len, HB_TEXT_MAX);
			ck_assert_int_ne(text_valid_utf8(o.error, len), 0);
			ck_assert_int_eq(memcmp(o.error, body + strlen(c->prefix),
			    len), 0);
			free(body);
		}
	}
}
END_TEST

START_TEST(test_cut_edges)
{
	struct obs	 o;
	char		*body;

	/* Exactly the limit: kept whole. */
	body = build("{\"type\":\"job_failed\",\"job_id\":\"j\",\"error\":\"",
	    "x", HB_TEXT_MAX, "\"}");
	ck_assert_int_eq(run(CB, body, &o), TORNADO_OK);
	ck_assert_uint_eq(strlen(o.error), HB_TEXT_MAX);
	free(body);

	/* Far past it (the body limit): cut. */
	body = build("{\"type\":\"job_failed\",\"job_id\":\"j\",\"error\":\"",
	    "\xe2\x82\xac", 20000, "\"}");
	ck_assert_int_eq(run(CB, body, &o), TORNADO_OK);
	ck_assert_uint_eq(strlen(o.error), HB_TEXT_MAX / 3 * 3);
	ck_assert_int_ne(text_valid_utf8(o.error, strlen(o.error)), 0);
	free(body);

	/* Bad UTF-8 inside the part kept is still refused. */
	body = build("{\"type\":\"job_failed\",\"job_id\":\"j\",\"error\":\""
	    "bad\xc3(", "x", HB_TEXT_MAX, "\"}");
	ck_assert_int_eq(run(CB, body, &o), TORNADO_INVALID);
	ck_assert_ptr_nonnull(strstr(why, "error"));
	free(body);

	/* Escapes count once decoded: 2048 escaped euro signs are 6144. */
	body = build("{\"type\":\"job_failed\",\"job_id\":\"j\",\"error\":\"",
	    "\\u20ac", HB_TEXT_MAX, "\"}");
	ck_assert_int_eq(run(CB, body, &o), TORNADO_OK);
	ck_assert_uint_eq(strlen(o.error), HB_TEXT_MAX / 3 * 3);
	ck_assert_int_eq(memcmp(o.error, "\xe2\x82\xac\xe2\x82\xac", 6), 0);
	free(body);
}
END_TEST

/*
 * The body is read only up to len
 */

START_TEST(test_len)
{
	static const char	 obj[] = "{\"type\":\"job_completed\","
	    "\"job_id\":\"j-len\",\"status\":\"completed\"}";
	static const char	 tails[][16] = { "GARBAGE", "}", ",{\"x\":1}",
	    "\x00\xff", "{}" };
	struct obs		 o;
	char			*buf;
	size_t			 i, olen = sizeof(obj) - 1;

	/* The object, then garbage that the parser must not see. */
	buf = malloc(olen + 16);
	ck_assert_ptr_nonnull(buf);
	for (i = 0; i < NELEM(tails); i++) {
		memcpy(buf, obj, olen);
		memcpy(buf + olen, tails[i], 16);
		dirty(&o);
		ck_assert_int_eq(CB(buf, olen, &o, why, sizeof(why)),
		    TORNADO_OK);
		ck_job(&o, OBS_SRC_JOB, "j-len", OBS_ST_COMPLETED,
		    OBS_STAGE_COMPLETED);
		ck_assert_int_eq(EV(buf, olen, &o, why, sizeof(why)),
		    TORNADO_INVALID);	/* parsed, but no delivery_id */
		/* One byte of the tail more: now it is seen. */
		ck_assert_int_eq(CB(buf, olen + 1, &o, why, sizeof(why)),
		    TORNADO_NOT_JSON);
	}
	free(buf);

	/* A valid document cut by len is not JSON. */
	ck_assert_int_eq(run_len(CB, obj, olen - 1, &o), TORNADO_NOT_JSON);
	ck_assert_int_eq(run_len(CB, obj, 1, &o), TORNADO_NOT_JSON);
	ck_assert_int_eq(run_len(CB, obj, 0, &o), TORNADO_NOT_JSON);
	ck_assert_int_eq(run_len(ST, "{\"id\":\"j\",\"status\":\"Completed\"}",
	    20, &o), TORNADO_NOT_JSON);
	/* len ending inside a string value. */
	ck_assert_int_eq(run_len(CB, obj, 17, &o), TORNADO_NOT_JSON);

	/* White space after the object, within len, is fine. */
	buf = build(obj, " \t\r\n", 3, "");
	ck_assert_int_eq(run(CB, buf, &o), TORNADO_OK);
	ck_assert_str_eq(o.job_id, "j-len");
	free(buf);
	/* And before it. */
	ck_assert_int_eq(run(CB, "\n  {\"type\":\"ping\"}", &o), TORNADO_OK);
	ck_assert_int_eq(o.event, OBS_EV_UNKNOWN);
}
END_TEST

/*
 * out is reset on every call
 */

START_TEST(test_reset)
{
	struct obs	o;

	/* From garbage: everything not in the payload is empty. */
	dirty(&o);
	ck_assert_int_eq(run(CB, "{\"type\":\"job_completed\","
	    "\"job_id\":\"r1\",\"status\":\"completed\",\"key\":\"k1\","
	    "\"url\":\"u1\"}", &o), TORNADO_OK);
	ck_assert_str_eq(o.file_key, "k1");
	ck_assert_str_eq(o.file_url, "u1");
	ck_empty(&o, E_DELIVERY | E_ERROR);

	/* Progress after completion: no key, url, status or stage left. */
	ck_assert_int_eq(run(CB, "{\"type\":\"job_progress\","
	    "\"job_id\":\"r2\",\"stage\":\"downloading\"}", &o), TORNADO_OK);
	ck_job(&o, OBS_SRC_JOB, "r2", OBS_ST_NONE, OBS_STAGE_DOWNLOADING);
	ck_empty(&o, E_ALL & ~(E_TYPE | E_JOB));

	/* An event sets a delivery id and an error... */
	ck_assert_int_eq(run(EV, "{\"delivery_id\":\"dr\","
	    "\"type\":\"job.failed\",\"data\":{\"job_id\":\"r3\","
	    "\"error\":\"e3\"}}", &o), TORNADO_OK);
	ck_assert_str_eq(o.delivery_id, "dr");
	ck_assert_str_eq(o.error, "e3");

	/* ...that a callback does not inherit. */
	ck_assert_int_eq(run(CB, "{\"type\":\"job_completed\","
	    "\"job_id\":\"r4\",\"status\":\"completed\"}", &o), TORNADO_OK);
	ck_job(&o, OBS_SRC_JOB, "r4", OBS_ST_COMPLETED, OBS_STAGE_COMPLETED);
	ck_empty(&o, E_ALL & ~(E_TYPE | E_JOB));

	/* Nor a batch its job id. */
	ck_assert_int_eq(run(CB, "{\"type\":\"batch_completed\","
	    "\"batch_id\":\"b\"}", &o), TORNADO_OK);
	ck_empty(&o, E_ALL & ~E_TYPE);

	/* A poll after a failure: no error left over. */
	ck_assert_int_eq(run(ST, "{\"id\":\"r5\",\"status\":\"Failed\","
	    "\"error\":\"e5\"}", &o), TORNADO_OK);
	ck_assert_str_eq(o.error, "e5");
	ck_assert_int_eq(run(ST, "{\"id\":\"r6\",\"status\":\"Processing\","
	    "\"step\":\"Muxing\"}", &o), TORNADO_OK);
	ck_job(&o, OBS_SRC_POLL, "r6", OBS_ST_NONE, OBS_STAGE_MUXING);
	ck_empty(&o, E_ALL & ~(E_TYPE | E_JOB));

	/* A failed parse leaves nothing of the previous one. */
	ck_assert_int_eq(run(EV, "{\"delivery_id\":\"dr\","
	    "\"type\":\"job.completed\",\"data\":{\"job_id\":\"r7\","
	    "\"key\":\"k7\",\"url\":\"u7\",\"error\":\"e7\"}}", &o),
	    TORNADO_OK);
	ck_assert_int_eq(run(CB, "nope", &o), TORNADO_NOT_JSON);
	ck_empty(&o, E_ALL);
	ck_assert_int_eq(o.status, OBS_ST_NONE);
	ck_assert_int_eq(run(ST, "{\"id\":\"r8\",\"status\":\"Completed\","
	    "\"key\":\"k8\"}", &o), TORNADO_OK);
	ck_assert_int_eq(run(EV, "{\"type\":\"x\"}", &o), TORNADO_INVALID);
	ck_empty(&o, E_ALL);
	ck_assert_int_eq(o.status, OBS_ST_NONE);
}
END_TEST

/*
 * why
 */

START_TEST(test_why)
{
	struct obs	o;
	char		small[8];

	/* No buffer at all. */
	ck_assert_int_eq(CB("{}", 2, &o, NULL, 0), TORNADO_INVALID);
	ck_assert_int_eq(CB("x", 1, &o, NULL, 0), TORNADO_NOT_JSON);
	ck_assert_int_eq(ST("{}", 2, &o, NULL, 0), TORNADO_INVALID);
	ck_assert_int_eq(EV("{}", 2, &o, NULL, 0), TORNADO_INVALID);

	/* A small one is filled, terminated, and not overrun. */
	memset(small, 'Z', sizeof(small));
	ck_assert_int_eq(CB("{}", 2, &o, small, 4), TORNADO_INVALID);
	ck_assert_uint_eq(strlen(small), 3);
	ck_assert_int_eq(small[4], 'Z');
	ck_assert_int_eq(small[7], 'Z');

	/* Every status has a distinct sentence. */
	ck_assert_str_ne(tornado_strerror(TORNADO_OK),
	    tornado_strerror(TORNADO_NOT_JSON));
	ck_assert_str_ne(tornado_strerror(TORNADO_NOT_JSON),
	    tornado_strerror(TORNADO_INVALID));
	ck_assert_str_ne(tornado_strerror(TORNADO_INVALID),
	    tornado_strerror(TORNADO_NOMEM));
	ck_assert_ptr_nonnull(tornado_strerror((enum tornado_err)42));
}
END_TEST

/*
 * Embedded NUL
 */

/*
 * cJSON decodes the escape \u0000 into a NUL byte inside valuestring, so
 * "job-1\u0000evil" would read as the job id "job-1": two identifiers as
 * sent would map to one, and a NUL would pass where \u0001 does not.  The
 * parser refuses any body whose strings hold \u0000, before cJSON sees
 * it, and says so.  An escaped backslash followed by "u0000" is plain
 * text and still parses (see test_escaped_backslash_u0000).
 */
static const struct nulcase {
	parse_fn	 fn;
	const char	*body;
} nulcases[] = {
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"job-1\\u0000evil\","
	    "\"status\":\"completed\"}" },
	{ CB, "{\"type\":\"job_\\u0000completed\",\"job_id\":\"j\"}" },
	{ EV, "{\"delivery_id\":\"d-1\\u0000x\",\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"j\"}}" },
	{ ST, "{\"id\":\"job-1\\u0000evil\",\"status\":\"Completed\"}" },
};

START_TEST(test_embedded_nul)
{
	const struct nulcase	*c = &nulcases[_i];
	struct obs		 o;
	enum tornado_err	 rc;

	rc = run(c->fn, c->body, &o);
	ck_assert_msg(rc == TORNADO_INVALID, "%s: %s (job_id \"%s\", "
	    "type \"%s\"), want invalid", c->body, tornado_strerror(rc),
	    o.job_id, o.type);
	ck_assert_ptr_nonnull(strstr(why, "\\u0000"));
}
END_TEST

START_TEST(test_escaped_backslash_u0000)
{
	static const char	body[] = "{\"type\":\"job_completed\","
	    "\"job_id\":\"j\",\"key\":\"a\\\\u0000b\"}";
	struct obs		o;

	ck_assert_int_eq(run(CB, body, &o), TORNADO_OK);
	ck_assert_str_eq(o.file_key, "a\\u0000b");
}
END_TEST

/*
 * Raw control bytes (hookbox-fcgi(8), HTTP CONTRACT)
 */

/*
 * RFC 8259 allows no byte below 0x20 inside a string: such a body is not
 * JSON, whichever field the string is, even one hookbox ignores, and even
 * a key.  cJSON copies them through (a raw NUL cut "job-4<NUL>-x" to the
 * job id "job-4" while the receipt kept every byte), so the parser checks
 * the raw bytes itself.  '@' in a template stands for the byte under test.
 */
static const struct ctrlcase {
	parse_fn	 fn;
	const char	*tmpl;
} ctrlcases[] = {
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"job-4@-x\","
	    "\"status\":\"completed\"}" },
	{ CB, "{\"type\":\"job_completed@\",\"job_id\":\"j\"}" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\",\"key\":\"k@\"}" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\","
	    "\"s3_key\":\"@k\"}" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\","
	    "\"url\":\"https://x/@y\"}" },
	{ CB, "{\"type\":\"job_failed\",\"job_id\":\"j\",\"error\":\"a@b\"}" },
	{ CB, "{\"type\":\"job_skipped\",\"job_id\":\"j\",\"reason\":\"@\"}" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\","
	    "\"title\":\"t@\"}" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\","
	    "\"ti@tle\":\"t\"}" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\","
	    "\"extra\":{\"a\":[\"x\",\"@\"]}}" },
	{ EV, "{\"delivery_id\":\"d@\",\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"j\"}}" },
	{ EV, "{\"delivery_id\":\"d\",\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"j@\"}}" },
	{ EV, "{\"delivery_id\":\"d\",\"type\":\"job.failed\","
	    "\"data\":{\"job_id\":\"j\",\"error\":\"e@\"}}" },
	{ ST, "{\"id\":\"j@\",\"status\":\"Completed\"}" },
	{ ST, "{\"id\":\"j\",\"status\":\"Failed\",\"error\":\"@e\"}" },
};

/* Returns tmpl with each '@' replaced by c; *len is its length. */
static char *
subst(const char *tmpl, char c, size_t *len)
{
	char	*s;
	size_t	 i;

	*len = strlen(tmpl);
	s = malloc(*len + 1);
	ck_assert_ptr_nonnull(s);
	for (i = 0; i <= *len; i++)
		s[i] = tmpl[i] == '@' ? c : tmpl[i];
	return s;
}

START_TEST(test_raw_control)
{
	static const char	 bytes[] = { 0x00, '\r', '\n', 0x1b, '\t',
	    0x01, 0x1f, 0x08, 0x0c };
	const struct ctrlcase	*c = &ctrlcases[_i];
	struct obs		 o;
	enum tornado_err	 rc;
	char			*body;
	size_t			 i, len;

	/* With a harmless byte in place, the template itself is fine. */
	body = subst(c->tmpl, 'x', &len);
	ck_assert_msg(run_len(c->fn, body, len, &o) == TORNADO_OK, "%s: %s",
	    body, why);
	free(body);

	for (i = 0; i < sizeof(bytes); i++) {
		body = subst(c->tmpl, bytes[i], &len);
		dirty(&o);
		rc = run_len(c->fn, body, len, &o);
		ck_assert_msg(rc == TORNADO_NOT_JSON, "%s with byte 0x%02x: "
		    "%s (job_id \"%s\"), want not JSON", c->tmpl,
		    (unsigned)bytes[i], tornado_strerror(rc), o.job_id);
		ck_assert_msg(strstr(why, "control") != NULL,
		    "byte 0x%02x: why \"%s\"", (unsigned)bytes[i], why);
		ck_empty(&o, E_ALL);
		free(body);
	}
}
END_TEST

/*
 * Outside strings only JSON's white space (space, tab, LF, CR) may stand
 * between tokens; cJSON skips every byte up to 0x20 there.
 */
START_TEST(test_raw_control_between)
{
	static const char	 tmpl[] = "@{@\"type\"@:@\"job_completed\"@,"
	    "\"job_id\":\"j\"@}@";
	static const char	 bad[] = { 0x00, 0x01, 0x0b, 0x0c, 0x1b, 0x1f };
	static const char	 good[] = { ' ', '\t', '\n', '\r' };
	struct obs		 o;
	char			*body;
	size_t			 i, len;

	for (i = 0; i < sizeof(bad); i++) {
		body = subst(tmpl, bad[i], &len);
		ck_assert_msg(run_len(CB, body, len, &o) == TORNADO_NOT_JSON,
		    "byte 0x%02x between tokens was accepted",
		    (unsigned)bad[i]);
		free(body);
	}
	for (i = 0; i < sizeof(good); i++) {
		body = subst(tmpl, good[i], &len);
		ck_assert_msg(run_len(CB, body, len, &o) == TORNADO_OK,
		    "white space 0x%02x: %s", (unsigned)good[i], why);
		ck_assert_str_eq(o.job_id, "j");
		free(body);
	}
}
END_TEST

/*
 * Decoded control characters (escapes such as \u001b, \r, \n) in an
 * identifier: refused, naming the field and not repeating the value.
 * '@' stands for the escape under test.
 */
static const struct idcase {
	parse_fn	 fn;
	const char	*tmpl;
	const char	*field;
} idcases[] = {
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"evil@x\"}", "job_id" },
	{ CB, "{\"type\":\"job_completed@\",\"job_id\":\"j\"}", "type" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\","
	    "\"status\":\"completed@\"}", "status" },
	{ CB, "{\"type\":\"job_progress\",\"job_id\":\"j\","
	    "\"stage\":\"muxing@\"}", "stage" },
	{ CB, "{\"type\":\"job_progress\",\"job_id\":\"j\","
	    "\"step\":\"@muxing\"}", "step" },
	{ CB, "{\"type\":\"batch_completed\",\"batch_id\":\"b@\"}",
	    "batch_id" },
	{ EV, "{\"delivery_id\":\"evil@x\",\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"j\"}}", "delivery_id" },
	{ EV, "{\"delivery_id\":\"d\",\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"evil@x\"}}", "job_id" },
	{ EV, "{\"delivery_id\":\"d\",\"type\":\"job.completed\","
	    "\"data\":{\"id\":\"evil@x\"}}", "id" },
	{ ST, "{\"id\":\"evil@x\",\"status\":\"Completed\"}", "id" },
	{ ST, "{\"id\":\"j\",\"status\":\"Processing\",\"step\":\"Mux@\"}",
	    "step" },
};

/* Builds tmpl with '@' replaced by the string esc. */
static char *
subst_str(const char *tmpl, const char *esc)
{
	const char	*at = strchr(tmpl, '@');
	char		*s;
	size_t		 pre, elen = strlen(esc);

	ck_assert_ptr_nonnull(at);
	pre = (size_t)(at - tmpl);
	s = malloc(strlen(tmpl) + elen);
	ck_assert_ptr_nonnull(s);
	memcpy(s, tmpl, pre);
	memcpy(s + pre, esc, elen);
	memcpy(s + pre + elen, at + 1, strlen(at + 1) + 1);
	return s;
}

static const char *const ctrl_escapes[] = { "\\u001b", "\\u001B[31m",
    "\\r", "\\n", "\\r\\n", "\\t", "\\b", "\\f", "\\u0001", "\\u007f",
    "\\u000a" };

START_TEST(test_decoded_control_id)
{
	const struct idcase	*c = &idcases[_i];
	struct obs		 o;
	enum tornado_err	 rc;
	char			*body;
	size_t			 i;

	body = subst_str(c->tmpl, "");
	ck_assert_msg(run(c->fn, body, &o) == TORNADO_OK, "%s: %s", body, why);
	free(body);
	for (i = 0; i < NELEM(ctrl_escapes); i++) {
		body = subst_str(c->tmpl, ctrl_escapes[i]);
		rc = run(c->fn, body, &o);
		ck_assert_msg(rc == TORNADO_INVALID, "%s: %s, want invalid",
		    body, tornado_strerror(rc));
		ck_assert_msg(strstr(why, c->field) != NULL,
		    "%s: why \"%s\" does not name %s", body, why, c->field);
		ck_assert_msg(strstr(why, "evil") == NULL,
		    "why \"%s\" repeats the value", why);
		free(body);
	}
}
END_TEST

/*
 * File locations (key, url) are handed downstream and may end up in
 * request lines, headers and logs: a decoded control character there is
 * refused like in an identifier.
 */
static const struct idcase loccases[] = {
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\",\"key\":\"v/@1\"}",
	    "key" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\","
	    "\"s3_key\":\"v/1@\"}", "s3_key" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\","
	    "\"url\":\"https://x/@\"}", "url" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\","
	    "\"s3_url\":\"@https://x/\"}", "s3_url" },
	{ EV, "{\"delivery_id\":\"d\",\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"j\",\"key\":\"k@\"}}", "key" },
	{ ST, "{\"id\":\"j\",\"status\":\"Completed\",\"url\":\"u@\"}", "url" },
};

START_TEST(test_decoded_control_location)
{
	const struct idcase	*c = &loccases[_i];
	struct obs		 o;
	enum tornado_err	 rc;
	char			*body;
	size_t			 i;

	body = subst_str(c->tmpl, "");
	ck_assert_msg(run(c->fn, body, &o) == TORNADO_OK, "%s: %s", body, why);
	free(body);
	for (i = 0; i < NELEM(ctrl_escapes); i++) {
		body = subst_str(c->tmpl, ctrl_escapes[i]);
		rc = run(c->fn, body, &o);
		ck_assert_msg(rc == TORNADO_INVALID, "%s: %s, want invalid",
		    body, tornado_strerror(rc));
		ck_assert_msg(strstr(why, c->field) != NULL,
		    "%s: why \"%s\" does not name %s", body, why, c->field);
		free(body);
	}
}
END_TEST

/*
 * Free text (error, reason) is the provider's to word: a multi-line error
 * must not make a failure unrecordable.  Each decoded control character
 * becomes one space, so that no observation ever carries one into the
 * database or a log; the raw body in the receipt keeps the original.
 */
static const struct idcase textcases[] = {
	{ CB, "{\"type\":\"job_failed\",\"job_id\":\"j\",\"error\":\"a@b\"}",
	    "error" },
	{ CB, "{\"type\":\"job_skipped\",\"job_id\":\"j\",\"reason\":\"a@b\"}",
	    "reason" },
	{ EV, "{\"delivery_id\":\"d\",\"type\":\"job.failed\","
	    "\"data\":{\"job_id\":\"j\",\"error\":\"a@b\"}}", "error" },
	{ ST, "{\"id\":\"j\",\"status\":\"Failed\",\"error\":\"a@b\"}",
	    "error" },
};

START_TEST(test_decoded_control_text)
{
	static const struct {
		const char	*esc;
		const char	*want;
	} texts[] = {
		{ "\\n", "a b" },
		{ "\\r\\n", "a  b" },
		{ "\\u001b[31m", "a [31mb" },
		{ "\\t", "a b" },
		{ "\\u0000", NULL },	/* still refused: see test_embedded_nul */
		{ "\\u007f", "a b" },
		{ "\\u0001\\u001f", "a  b" },
		{ "\\u00e9\\n", "a\xc3\xa9 b" },
		{ "\\\\n", "a\\nb" },	/* an escaped backslash, then n */
		/* C1 controls (CSI), bidi overrides, zero-width: one space. */
		{ "\\u009b[0m", "a [0mb" },
		{ "\\u0085\\u0080", "a  b" },
		{ "\\u202e\\u200b\\ufeff", "a   b" },
		{ "\\u2028\\u061c\\u2066", "a   b" },
		{ "\\u00a0\\u00e9", "a\xc2\xa0\xc3\xa9" "b" },	/* not hidden */
	};
	const struct idcase	*c = &textcases[_i];
	struct obs		 o;
	enum tornado_err	 rc;
	char			*body;
	size_t			 i;

	for (i = 0; i < NELEM(texts); i++) {
		body = subst_str(c->tmpl, texts[i].esc);
		dirty(&o);
		rc = run(c->fn, body, &o);
		if (texts[i].want == NULL) {
			ck_assert_int_eq(rc, TORNADO_INVALID);
			free(body);
			continue;
		}
		ck_assert_msg(rc == TORNADO_OK, "%s: %s", body, why);
		ck_assert_msg(strcmp(o.error, texts[i].want) == 0,
		    "%s: error \"%s\", want \"%s\"", body, o.error,
		    texts[i].want);
		ck_assert_int_ne(text_valid_line(o.error, HB_TEXT_MAX), 0);
		free(body);
	}
}
END_TEST

/*
 * Duplicate keys (hookbox-fcgi(8), HTTP CONTRACT)
 */

/*
 * cJSON keeps both members and reads the first; a last-key-wins reader
 * of the stored receipt would read the other.  Any object naming a key
 * twice makes the body malformed: at the top level, in the envelope's
 * data, and in nested objects hookbox does not read today (the receipt
 * keeps them, and whoever reads it next may).  Keys compare as decoded,
 * case-sensitively.
 */
static const struct dupcase {
	parse_fn	 fn;
	const char	*body;
} dupcases[] = {
	{ CB, "{\"job_id\":\"J1\",\"job_id\":\"J2\",\"type\":\"job_completed\","
	    "\"status\":\"completed\"}" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"J1\","
	    "\"status\":\"completed\",\"job_id\":\"J2\"}" },
	{ CB, "{\"type\":\"job_completed\",\"type\":\"job_failed\","
	    "\"job_id\":\"j\"}" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\","
	    "\"status\":\"completed\",\"status\":\"failed\"}" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\",\"key\":\"a\","
	    "\"key\":\"b\"}" },
	/* The same key, spelled with an escape. */
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"J1\","
	    "\"job\\u005fid\":\"J2\"}" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"J1\","
	    "\"\\u006a\\u006f\\u0062_id\":\"J2\"}" },
	/* null counts: the key is there twice. */
	{ CB, "{\"type\":\"job_completed\",\"job_id\":null,"
	    "\"job_id\":\"J2\"}" },
	/* A field hookbox ignores. */
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\",\"title\":\"a\","
	    "\"title\":\"b\"}" },
	/* Nested objects, read or not. */
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\","
	    "\"extra\":{\"a\":1,\"a\":2}}" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\","
	    "\"extra\":[{\"x\":{\"b\":1,\"c\":2,\"b\":3}}]}" },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\","
	    "\"extra\":{},\"extra\":{}}" },
	/* Organization events: the envelope and data. */
	{ EV, "{\"delivery_id\":\"d1\",\"delivery_id\":\"d2\","
	    "\"type\":\"job.completed\",\"data\":{\"job_id\":\"j\"}}" },
	{ EV, "{\"delivery_id\":\"d\",\"type\":\"job.completed\","
	    "\"type\":\"job.failed\",\"data\":{\"job_id\":\"j\"}}" },
	{ EV, "{\"delivery_id\":\"d\",\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"J1\",\"job_id\":\"J2\"}}" },
	{ EV, "{\"delivery_id\":\"d\",\"type\":\"job.completed\","
	    "\"data\":{\"id\":\"J1\",\"status\":\"completed\",\"id\":\"J2\"}}" },
	{ EV, "{\"delivery_id\":\"d\",\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"j\"},\"data\":{\"job_id\":\"k\"}}" },
	{ EV, "{\"delivery_id\":\"d\",\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"j\",\"meta\":{\"k\":1,\"k\":1}}}" },
	/* The status API. */
	{ ST, "{\"id\":\"j1\",\"id\":\"j2\",\"status\":\"Completed\"}" },
	{ ST, "{\"id\":\"j\",\"status\":\"Processing\","
	    "\"status\":\"Completed\"}" },
	{ ST, "{\"id\":\"j\",\"status\":\"Completed\",\"finished_at\":1,"
	    "\"finished_at\":2}" },
};

START_TEST(test_dup_keys)
{
	const struct dupcase	*c = &dupcases[_i];
	struct obs		 o;
	enum tornado_err	 rc;

	dirty(&o);
	rc = run(c->fn, c->body, &o);
	ck_assert_msg(rc == TORNADO_INVALID, "%s: %s (job_id \"%s\"), want "
	    "invalid", c->body, tornado_strerror(rc), o.job_id);
	ck_assert_msg(strstr(why, "duplicate") != NULL, "why \"%s\"", why);
	ck_empty(&o, E_ALL);
}
END_TEST

START_TEST(test_dup_keys_not)
{
	struct obs	o;

	/* The same key in different objects is no duplicate. */
	ck_assert_int_eq(run(EV, "{\"delivery_id\":\"d\","
	    "\"type\":\"job.completed\",\"job_id\":\"top\","
	    "\"data\":{\"job_id\":\"j\",\"type\":\"x\",\"data\":{\"data\":1}},"
	    "\"x\":[{\"a\":1},{\"a\":2}]}", &o), TORNADO_OK);
	ck_assert_str_eq(o.job_id, "j");

	/* Keys differ in case: two keys. */
	ck_assert_int_eq(run(CB, "{\"type\":\"job_completed\","
	    "\"job_id\":\"j1\",\"Job_id\":\"j2\",\"JOB_ID\":\"j3\"}", &o),
	    TORNADO_OK);
	ck_assert_str_eq(o.job_id, "j1");

	/* A key that is a prefix of another. */
	ck_assert_int_eq(run(CB, "{\"type\":\"job_completed\","
	    "\"job_id\":\"j1\",\"job_id2\":\"j2\",\"job\":\"j3\"}", &o),
	    TORNADO_OK);
	ck_assert_str_eq(o.job_id, "j1");

}
END_TEST

/* Thousands of keys in one object: distinct ones parse, one repeat does not. */
START_TEST(test_dup_keys_many)
{
	enum { N = 6000 };
	struct obs	 o;
	char		*body;
	size_t		 i, off, cap = N * 16 + 128;

	body = malloc(cap);
	ck_assert_ptr_nonnull(body);
	off = (size_t)snprintf(body, cap,
	    "{\"type\":\"job_completed\",\"job_id\":\"j\"");
	for (i = 0; i < N; i++)
		off += (size_t)snprintf(body + off, cap - off, ",\"k%zu\":%zu",
		    (N - i) * 7919 % 100003, i);
	ck_assert_uint_lt(off + 16, cap);
	memcpy(body + off, "}", 2);
	ck_assert_msg(run(CB, body, &o) == TORNADO_OK, "%s", why);
	ck_assert_str_eq(o.job_id, "j");

	/* Repeat the first key generated, last. */
	(void)snprintf(body + off, cap - off, ",\"k%d\":1}",
	    (int)((size_t)N * 7919 % 100003));
	ck_assert_int_eq(run(CB, body, &o), TORNADO_INVALID);
	ck_assert_ptr_nonnull(strstr(why, "duplicate"));
	free(body);
}
END_TEST

/*
 * Out of memory (hookbox-fcgi(8), HTTP CONTRACT)
 */

/* Fails allocation number n (from 0) that reaches FAULT_ALLOC. */
struct failnth {
	long	n;
	long	seen;
	int	fired;
};

static int
fail_nth(enum fault_point p, void *arg)
{
	struct failnth	*f = arg;

	(void)p;
	if (f->seen++ != f->n)
		return 0;
	f->fired = 1;
	return 1;
}

/*
 * cJSON answers NULL for a failed allocation as for bad input.  Failing
 * each allocation of a parse in turn, the parser must answer "out of
 * memory" every time (never "not JSON" or "invalid": the sender would
 * stop retrying a callback that was never recorded), leave out empty,
 * and give the normal answer once no allocation fails.  Bodies that are
 * malformed after the failure point are NOMEM too: nothing was decided.
 */
static const struct nomemcase {
	parse_fn		 fn;
	const char		*body;
	enum tornado_err	 want;	/* with memory */
} nomemcases[] = {
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"job-1\","
	    "\"status\":\"completed\",\"url\":\"https://cdn.example/v/1.mp4\","
	    "\"key\":\"v/1.mp4\",\"title\":\"Pilot\","
	    "\"extra\":{\"nested\":[1,2,{\"x\":null}]}}", TORNADO_OK },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"L2\","
	    "\"status\":\"Failed\",\"error\":\"mux error\","
	    "\"file_size_bytes\":0}", TORNADO_OK },
	{ CB, "{\"type\":\"job_progress\",\"job_id\":\"p1\","
	    "\"step\":\"uploading\",\"progress\":42}", TORNADO_OK },
	{ EV, "{\"delivery_id\":\"d1\",\"type\":\"job.completed\","
	    "\"created_at\":\"2024-05-01T10:00:00Z\",\"data\":{"
	    "\"job_id\":\"org-1\",\"status\":\"completed\",\"key\":\"k\"}}",
	    TORNADO_OK },
	{ ST, "{\"id\":\"poll-2\",\"status\":\"Failed\",\"step\":\"Muxing\","
	    "\"error\":\"ffmpeg exited 1\",\"finished_at\":1700000000123}",
	    TORNADO_OK },
	/* Malformed, but only found out after allocations. */
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\",\"key\":\"k\","
	    "\"job_id\":\"k\"}", TORNADO_INVALID },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":42,\"key\":\"k\"}",
	    TORNADO_INVALID },
	{ CB, "{\"type\":\"job_completed\",\"job_id\":\"j\",\"key\":\"k\"",
	    TORNADO_NOT_JSON },
	{ EV, "{\"delivery_id\":\"d\",\"type\":\"job.completed\","
	    "\"data\":{\"job_id\":\"J1\",\"job_id\":\"J2\"}}",
	    TORNADO_INVALID },
};

START_TEST(test_nomem_parse)
{
	const struct nomemcase	*c = &nomemcases[_i];
	struct failnth		 f;
	struct obs		 o;
	enum tornado_err	 rc;

	for (f.n = 0;; f.n++) {
		f.seen = 0;
		f.fired = 0;
		dirty(&o);
		fault_set(FAULT_ALLOC, fail_nth, &f);
		rc = run(c->fn, c->body, &o);
		fault_set(FAULT_ALLOC, NULL, NULL);
		if (!f.fired)
			break;
		ck_assert_msg(rc == TORNADO_NOMEM, "%s, allocation %ld failed: "
		    "%s, want out of memory", c->body, f.n,
		    tornado_strerror(rc));
		ck_assert_msg(strstr(why, "memory") != NULL, "why \"%s\"", why);
		ck_empty(&o, E_ALL);
		ck_assert_int_eq(o.status, OBS_ST_NONE);
	}
	ck_assert_msg(rc == c->want, "%s: %s with memory", c->body,
	    tornado_strerror(rc));
	/* The loop went through every allocation; there are several. */
	ck_assert_msg(f.n >= 4, "%s: only %ld allocations", c->body, f.n);
	if (c->want == TORNADO_OK)
		ck_assert_int_ne(text_valid_id(o.job_id, HB_ID_MAX), 0);
}
END_TEST

static int
always_fail(enum fault_point p, void *arg)
{
	struct failnth	*f = arg;

	(void)p;
	f->seen++;
	return 1;
}

/* Allocations that fail for good: the same answer, whatever comes next. */
START_TEST(test_nomem_parse_all)
{
	struct failnth	f = { 0, 0, 0 };
	struct obs	o;
	size_t		i;

	for (i = 0; i < NELEM(nomemcases); i++) {
		f.n = 0;
		f.seen = 0;
		fault_set(FAULT_ALLOC, always_fail, &f);
		ck_assert_int_eq(run(nomemcases[i].fn, nomemcases[i].body, &o),
		    TORNADO_NOMEM);
		fault_set(FAULT_ALLOC, NULL, NULL);
		ck_assert_int_gt(f.seen, 0);
	}
	/* Bodies refused before any allocation are refused as before. */
	fault_set(FAULT_ALLOC, always_fail, &f);
	ck_assert_int_eq(run_len(CB, "{\"type\":\"a\0\"}", 12, &o),
	    TORNADO_NOT_JSON);
	ck_assert_int_eq(run(CB, "{\"type\":\"a\\u0000\"}", &o),
	    TORNADO_INVALID);
	ck_assert_int_eq(run(CB, "", &o), TORNADO_NOT_JSON);
	fault_set(FAULT_ALLOC, NULL, NULL);
}
END_TEST

static Suite *
tornado_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("tornado");

	tc = tcase_create("callback");
	tcase_add_test(tc, test_cb_completed);
	tcase_add_test(tc, test_cb_failed);
	tcase_add_test(tc, test_cb_skipped);
	tcase_add_test(tc, test_cb_legacy_completed);
	tcase_add_test(tc, test_cb_legacy_failed);
	tcase_add_test(tc, test_cb_batch);
	tcase_add_test(tc, test_cb_progress);
	tcase_add_test(tc, test_cb_unknown);
	tcase_add_test(tc, test_cb_null_absent);
	suite_add_tcase(s, tc);

	tc = tcase_create("event");
	tcase_add_test(tc, test_ev_completed);
	tcase_add_test(tc, test_ev_shapes);
	tcase_add_test(tc, test_ev_unknown);
	suite_add_tcase(s, tc);

	tc = tcase_create("status");
	tcase_add_loop_test(tc, test_status, 0, (int)NELEM(statuscases));
	tcase_add_test(tc, test_status_fields);
	suite_add_tcase(s, tc);

	tc = tcase_create("broken");
	tcase_add_loop_test(tc, test_bad, 0, (int)NELEM(badcases));
	tcase_add_loop_test(tc, test_long, 0, (int)NELEM(longcases));
	tcase_add_loop_test(tc, test_cut, 0, (int)NELEM(cutcases));
	tcase_add_test(tc, test_cut_edges);
	tcase_add_test(tc, test_len);
	tcase_add_test(tc, test_reset);
	tcase_add_test(tc, test_why);
	tcase_add_test(tc, test_escaped_backslash_u0000);
	tcase_add_loop_test(tc, test_embedded_nul, 0, (int)NELEM(nulcases));
	suite_add_tcase(s, tc);

	tc = tcase_create("control");
	tcase_add_loop_test(tc, test_raw_control, 0, (int)NELEM(ctrlcases));
	tcase_add_test(tc, test_raw_control_between);
	tcase_add_loop_test(tc, test_decoded_control_id, 0,
	    (int)NELEM(idcases));
	tcase_add_loop_test(tc, test_decoded_control_location, 0,
	    (int)NELEM(loccases));
	tcase_add_loop_test(tc, test_decoded_control_text, 0,
	    (int)NELEM(textcases));
	suite_add_tcase(s, tc);

	tc = tcase_create("duplicate");
	tcase_add_loop_test(tc, test_dup_keys, 0, (int)NELEM(dupcases));
	tcase_add_test(tc, test_dup_keys_not);
	tcase_add_test(tc, test_dup_keys_many);
	suite_add_tcase(s, tc);

	tc = tcase_create("nomem");
	tcase_add_loop_test(tc, test_nomem_parse, 0, (int)NELEM(nomemcases));
	tcase_add_test(tc, test_nomem_parse_all);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	if (util_init() != 0)
		return 1;
	return test_run_pure(tornado_suite);
}
