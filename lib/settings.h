/*
 * settings.h: what every hookbox program takes from its environment and
 * its command line, read in one place by one loader.
 *
 *   HOOKBOX_DIR      the data directory (state.db, config.db); -d wins
 *   HOOKBOX_BUSY_MS  bound on waiting for a lock, 0..600000; -b wins
 *   HOOKBOX_SYNC     "full" (the default: an acknowledged action survives
 *                    power loss) or "normal" (the documented opt-in)
 *
 * A value the loader does not understand is refused, never taken for the
 * default: a typo in HOOKBOX_SYNC must not silently mean something else.
 *
 * Transactions: none; no database.
 */
#ifndef HB_SETTINGS_H
#define HB_SETTINGS_H

#include <limits.h>

#include "hb.h"

struct settings {
	char	dir[PATH_MAX];		/* "" when neither -d nor HOOKBOX_DIR */
	char	state_path[PATH_MAX];	/* dir/state.db */
	char	config_path[PATH_MAX];	/* dir/config.db */
	int	busy_ms;
	int	sync_normal;
};

/*
 * Fills s from the environment over the defaults; dir and busy_ms are the
 * command line's (NULL and -1 when not given) and win over it.  Returns
 * 0, or -1 with *why a sentence naming the variable (static storage).
 * With need_dir, a missing data directory is an error too.
 */
HB_API int settings_load(struct settings *s, const char *dir, int busy_ms,
    int need_dir, const char **why) HB_MUST_CHECK;

#endif
