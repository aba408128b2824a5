/*
 * run/settings.h: what every hookbox program takes from its environment and
 * its command line, read in one place by one loader.
 *
 *   HOOKBOX_DB       a PostgreSQL database: a postgresql:// URI or a
 *                    key=value conninfo; -d wins
 *   HOOKBOX_DIR      the data directory (state.db, config.db); -d and
 *                    HOOKBOX_DB win
 *   HOOKBOX_BUSY_MS  bound on waiting for a lock, 0..600000; -b wins
 *   HOOKBOX_SYNC     "full" (the default: an acknowledged action survives
 *                    power loss) or "normal" (the documented opt-in)
 *   HOOKBOX_PROXY    the proxy outgoing requests go through (an http://,
 *                    https:// or socks URL); unset, none, whatever
 *                    http_proxy and the like say
 *   HOOKBOX_BACKOFF_MS, HOOKBOX_BACKOFF_MAX_MS, HOOKBOX_LEASE_MARGIN_MS,
 *   HOOKBOX_RECHECK_MS
 *                    the dispatcher's timings (delivery/dispatch.h),
 *                    milliseconds from 1 to 2^61; unset, its defaults
 *
 * A value the loader does not understand is refused, never taken for the
 * default: a typo in HOOKBOX_SYNC must not silently mean something else.
 *
 * Transactions: none; no database.
 */
#ifndef HB_SETTINGS_H
#define HB_SETTINGS_H

#include <limits.h>

#include "base/hb.h"

/*
 * The data location chooses the backend: a directory means files of this
 * host (dir/config.db and dir/state.db, SQLite's); a PostgreSQL conninfo
 * means a server, one database holding both, and then config_path and
 * state_path are that same conninfo: config_open(), config_create() and
 * store_open() open either.  The conninfo may hold a password: show
 * `shown` in every log line and message, never dir or the paths.
 */
struct settings {
	char	dir[PATH_MAX];		/* the location; "" when none given */
	char	state_path[PATH_MAX];	/* dir/state.db, or the conninfo */
	char	config_path[PATH_MAX];	/* dir/config.db, or the conninfo */
	char	shown[PATH_MAX];	/* dir, passwords masked */
	/*
	 * dir names a server, not a directory: nothing on this host to make
	 * or check, roles and grants guard it, and it may be out of reach.
	 */
	int	server;
	const char *backend;		/* its name for a log line; static */
	int	argv_password;		/* the command line's one holds a
					   password: ps(1) shows it */
	int	busy_ms;
	int	sync_normal;
	char	proxy[PATH_MAX];	/* HOOKBOX_PROXY, "" when none; may
					   hold a password: shown redacted */
	/* The dispatcher's timings (struct dispatch_opts); 0: its default. */
	int64_t	backoff_ms;
	int64_t	backoff_max_ms;
	int64_t	lease_margin_ms;
	int64_t	recheck_ms;
};

/*
 * Fills s from the environment over the defaults; dir and busy_ms are the
 * command line's (NULL and -1 when not given) and win over it.  The
 * location is dir, else HOOKBOX_DB (which must be a conninfo), else
 * HOOKBOX_DIR.  Returns 0, or -1 with *why a sentence naming the variable
 * (static storage).  With need_dir, a missing location is an error too.
 */
HB_API int settings_load(struct settings *s, const char *dir, int busy_ms,
    int need_dir, const char **why) HB_MUST_CHECK;

/*
 * The state's and the configuration's names for a message: the file's
 * path on SQLite, the masked conninfo on PostgreSQL.  Point into s.
 */
HB_API const char *settings_state_name(const struct settings *s);
HB_API const char *settings_config_name(const struct settings *s);

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
	SETTINGS_DIR_PLANTED,	/* a database's journal, WAL or WAL index
				   that is not its owner's (nor ours), a
				   link, or a file of several names */
	SETTINGS_DIR_ERROR	/* stat failed otherwise */
};

/*
 * Checks, as the effective user, that s's data directory is one this
 * program can use: it is a searchable directory holding the files that
 * need (SETTINGS_NEED_*) names, with the access it asks for, and beside
 * each of them no journal, WAL or WAL index that SQLite would refuse
 * (db/sqlite.c: one another user planted, which SQLite would otherwise
 * play back into the database, or a link), so that the refusal is told
 * with the file's name and owner, and what to do.  Call
 * it before opening anything; later failures keep their own reports.
 * On failure why (len bytes, caller's) holds one line naming the
 * directory or file, the user, and what to do.  The check is advice, not
 * a lock: the files can change after it.  A PostgreSQL location has
 * nothing on this machine to check: SETTINGS_DIR_OK (connecting says the
 * rest).
 */
HB_API enum settings_dir settings_check_dir(const struct settings *s,
    int need, char *why, size_t len) HB_MUST_CHECK;

#endif
