/*
 * settings.c: the one reader of hookbox's environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings.h"
#include "store.h"
#include "util.h"

#define BUSY_MS_MAX	600000

int
settings_load(struct settings *s, const char *dir, int busy_ms, int need_dir,
    const char **why)
{
	const char	*v;
	long long	 n;

	memset(s, 0, sizeof(*s));
	s->busy_ms = STORE_BUSY_MS_DEFAULT;
	if (busy_ms >= 0)
		s->busy_ms = busy_ms;
	else if ((v = getenv("HOOKBOX_BUSY_MS")) != NULL) {
		if (util_parse_num(v, 0, BUSY_MS_MAX, &n) != UTIL_NUM_OK) {
			*why = "HOOKBOX_BUSY_MS: not a number of milliseconds"
			    " in 0..600000";
			return -1;
		}
		s->busy_ms = (int)n;
	}
	if ((v = getenv("HOOKBOX_SYNC")) != NULL) {
		if (strcmp(v, "normal") == 0)
			s->sync_normal = 1;
		else if (strcmp(v, "full") != 0) {
			*why = "HOOKBOX_SYNC: full or normal";
			return -1;
		}
	}
	if (dir == NULL && (v = getenv("HOOKBOX_DIR")) != NULL && *v != '\0')
		dir = v;
	if (dir == NULL || *dir == '\0') {
		if (!need_dir)
			return 0;
		*why = "no data directory: give -d DIR or set HOOKBOX_DIR";
		return -1;
	}
	if (snprintf(s->dir, sizeof(s->dir), "%s", dir) >=
	    (int)sizeof(s->dir) ||
	    snprintf(s->state_path, sizeof(s->state_path), "%s/state.db",
	    dir) >= (int)sizeof(s->state_path) ||
	    snprintf(s->config_path, sizeof(s->config_path), "%s/config.db",
	    dir) >= (int)sizeof(s->config_path)) {
		*why = "data directory: path too long";
		return -1;
	}
	return 0;
}
