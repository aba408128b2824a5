/*
 * provider/obs.c: names of observation states and stages.
 */
#include <string.h>

#include "base/text.h"
#include "base/util.h"
#include "provider/obs.h"

static const char *const status_names[] = {
	[OBS_ST_NONE] = "none",
	[OBS_ST_COMPLETED] = "completed",
	[OBS_ST_FAILED] = "failed",
	[OBS_ST_SKIPPED] = "skipped",
	[OBS_ST_WARNING] = "warning",
};

static const char *const stage_names[] = {
	[OBS_STAGE_QUEUED] = "queued",
	[OBS_STAGE_DOWNLOADING] = "downloading",
	[OBS_STAGE_DOWNLOAD_COMPLETE] = "download_complete",
	[OBS_STAGE_MUXING] = "muxing",
	[OBS_STAGE_MUX_COMPLETE] = "mux_complete",
	[OBS_STAGE_UPLOADING] = "uploading",
	[OBS_STAGE_COMPLETED] = "completed",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *
obs_status_name(enum obs_status s)
{
	return (unsigned)s < NELEM(status_names) ? status_names[s] : "none";
}

const char *
obs_stage_name(enum obs_stage s)
{
	return (unsigned)s < NELEM(stage_names) ? stage_names[s] : "queued";
}

int
obs_stage_parse(const char *s, enum obs_stage *out)
{
	size_t	i;

	for (i = 0; i < NELEM(stage_names); i++)
		if (text_eqi(s, stage_names[i])) {
			*out = (enum obs_stage)i;
			return 0;
		}
	return -1;
}

int
obs_status_parse(const char *s, enum obs_status *out)
{
	size_t	i;

	for (i = 0; i < NELEM(status_names); i++)
		if (strcmp(s, status_names[i]) == 0) {
			*out = (enum obs_status)i;
			return 0;
		}
	return -1;
}
