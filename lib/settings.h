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

/* What a program needs of the data directory at start-up. */
#define SETTINGS_NEED_CONFIG_READ	0x1	/* config.db readable */
#define SETTINGS_NEED_CONFIG_WRITE	0x2	/* config.db writable */
#define SETTINGS_NEED_STATE_WRITE	0x4	/* state.db (-wal, -shm) writable */

enum settings_dir {
	SETTINGS_DIR_OK = 0,
	SETTINGS_DIR_UNSET,	/* neither -d nor a non-empty HOOKBOX_DIR */
	SETTINGS_DIR_MISSING,	/* the directory does not exist */
	SETTINGS_DIR_NOTDIR,	/* it exists and is not a directory */
	SETTINGS_DIR_UNINIT,	/* a file that need names is missing */
	SETTINGS_DIR_DENIED,	/* the running user may not use a file */
	SETTINGS_DIR_ERROR	/* stat failed otherwise */
};

/*
 * Checks, as the effective user, that s's data directory is one this
 * program can use: it is a searchable directory holding the files that
 * need (SETTINGS_NEED_*) names, with the access it asks for.  Call
 * it before opening anything; later failures keep their own reports.
 * On failure why (len bytes, caller's) holds one line naming the
 * directory or file, the user, and what to do.  The check is advice, not
 * a lock: the files can change after it.
 */
HB_API enum settings_dir settings_check_dir(const struct settings *s,
    int need, char *why, size_t len) HB_MUST_CHECK;

/* A sentence for st (static storage). */
HB_API const char *settings_dir_strerror(enum settings_dir st);

#endif
