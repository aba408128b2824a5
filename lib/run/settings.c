/*
 * run/settings.c: the one reader of hookbox's environment.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/text.h"
#include "base/util.h"
#include "db/db.h"
#include "run/settings.h"
#include "store/store.h"

#define BUSY_MS_MAX	600000
#define CONFIG_NEEDS	(SETTINGS_NEED_CONFIG_READ | SETTINGS_NEED_CONFIG_WRITE)

/*
 * A PostgreSQL location: the same conninfo for both "paths", and the
 * form shown, rebuilt from libpq's reading of it with every password
 * masked.  One libpq cannot read (it fails later, when opened) or too
 * long to show is shown as a phrase, and may hold a password.
 */
static int
load_server(struct settings *s, const char *conninfo, int from_argv,
    const char **why)
{
	int	n;

	if (snprintf(s->dir, sizeof(s->dir), "%s", conninfo) >=
	    (int)sizeof(s->dir)) {
		*why = "PostgreSQL connection string: too long";
		return -1;
	}
	memcpy(s->state_path, s->dir, sizeof(s->dir));
	memcpy(s->config_path, s->dir, sizeof(s->dir));
	s->server = 1;
	if ((n = db_conninfo_redact(conninfo, s->shown, sizeof(s->shown))) <
	    0) {
		if (s->shown[0] == '\0')
			(void)snprintf(s->shown, sizeof(s->shown),
			    "(a PostgreSQL database)");
		n = 1;
	}
	s->argv_password = from_argv && n > 0;
	return 0;
}

/*
 * One of the dispatcher's timings, the variable name: unset leaves *out
 * 0 (its default); else 1 ms to 2^61 (sums of them stay in range), or
 * *why is bad.
 */
static int
timing(const char *name, const char *bad, int64_t *out, const char **why)
{
	const char	*v;
	long long	 n;

	if ((v = getenv(name)) == NULL)
		return 0;
	if (util_parse_num(v, 1, INT64_MAX / 4, &n) != UTIL_NUM_OK) {
		*why = bad;
		return -1;
	}
	*out = n;
	return 0;
}

/*
 * HOOKBOX_PROXY: a URL of a scheme libcurl proxies with, of printable
 * ASCII, short enough to keep; else *why.
 */
static int
proxy(struct settings *s, const char *v, const char **why)
{
	static const char *const schemes[] = {
		"http://", "https://", "socks4://", "socks4a://", "socks5://",
		"socks5h://", NULL
	};
	const char *const	*k;

	for (k = schemes; *k != NULL; k++)
		if (strncmp(v, *k, strlen(*k)) == 0 && v[strlen(*k)] != '\0')
			break;
	if (*k == NULL || !text_valid_line(v, sizeof(s->proxy) - 1) ||
	    strchr(v, ' ') != NULL) {
		*why = "HOOKBOX_PROXY: not a proxy URL (http://HOST:PORT,"
		    " https://, socks5h://, ...)";
		return -1;
	}
	(void)snprintf(s->proxy, sizeof(s->proxy), "%s", v);
	return 0;
}

/* Its variables, and what is said of a bad value. */
#define TIMING(var) var, var ": not a number of milliseconds from 1"

int
settings_load(struct settings *s, const char *dir, int busy_ms, int need_dir,
    const char **why)
{
	const char	*v;
	long long	 n;
	int		 from_argv = 0;

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
	if (timing(TIMING("HOOKBOX_BACKOFF_MS"), &s->backoff_ms, why) != 0 ||
	    timing(TIMING("HOOKBOX_BACKOFF_MAX_MS"), &s->backoff_max_ms,
	    why) != 0 ||
	    timing(TIMING("HOOKBOX_LEASE_MARGIN_MS"), &s->lease_margin_ms,
	    why) != 0 ||
	    timing(TIMING("HOOKBOX_RECHECK_MS"), &s->recheck_ms, why) != 0)
		return -1;
	if ((v = getenv("HOOKBOX_PROXY")) != NULL && *v != '\0' &&
	    proxy(s, v, why) != 0)
		return -1;
	if ((v = getenv("HOOKBOX_SYNC")) != NULL) {
		if (strcmp(v, "normal") == 0)
			s->sync_normal = 1;
		else if (strcmp(v, "full") != 0) {
			*why = "HOOKBOX_SYNC: full or normal";
			return -1;
		}
	}
	if (dir != NULL && *dir != '\0')
		from_argv = 1;
	else if ((v = getenv("HOOKBOX_DB")) != NULL && *v != '\0') {
		if (!(db_location_caps(v) & DB_CAP_SERVER)) {
			*why = "HOOKBOX_DB: not a PostgreSQL connection string"
			    " (postgresql://... or key=value ...); a directory"
			    " goes in HOOKBOX_DIR";
			return -1;
		}
		dir = v;
	} else if ((v = getenv("HOOKBOX_DIR")) != NULL && *v != '\0')
		dir = v;
	if (dir == NULL || *dir == '\0') {
		if (!need_dir)
			return 0;
		*why = "no data location: give -d DIR or set HOOKBOX_DIR"
		    " (or HOOKBOX_DB for PostgreSQL)";
		return -1;
	}
	s->backend = db_location_name(dir);
	if (db_location_caps(dir) & DB_CAP_SERVER)
		return load_server(s, dir, from_argv, why);
	if (snprintf(s->dir, sizeof(s->dir), "%s", dir) >=
	    (int)sizeof(s->dir) ||
	    snprintf(s->shown, sizeof(s->shown), "%s", dir) >=
	    (int)sizeof(s->shown) ||
	    snprintf(s->state_path, sizeof(s->state_path), "%s/state.db",
	    dir) >= (int)sizeof(s->state_path) ||
	    snprintf(s->config_path, sizeof(s->config_path), "%s/config.db",
	    dir) >= (int)sizeof(s->config_path)) {
		*why = "data directory: path too long";
		return -1;
	}
	return 0;
}

const char *
settings_state_name(const struct settings *s)
{
	return s->server ? s->shown : s->state_path;
}

const char *
settings_config_name(const struct settings *s)
{
	return s->server ? s->shown : s->config_path;
}

static const char *const dir_msgs[] = {
	[SETTINGS_DIR_OK] = "usable",
	[SETTINGS_DIR_UNSET] = "no data location: give -d DIR or set"
	    " HOOKBOX_DIR (or HOOKBOX_DB for PostgreSQL)",
	[SETTINGS_DIR_MISSING] = "no such directory",
	[SETTINGS_DIR_NOTDIR] = "not a directory",
	[SETTINGS_DIR_UNINIT] = "not initialised, run `hookbox init`",
	[SETTINGS_DIR_DENIED] = "permission denied",
	[SETTINGS_DIR_PLANTED] = "a database's journal is not its owner's",
	[SETTINGS_DIR_ERROR] = "cannot be examined",
};

/* A sentence for st (static storage). */
static const char *
settings_dir_strerror(enum settings_dir st)
{
	if ((unsigned)st >= sizeof(dir_msgs) / sizeof(dir_msgs[0]))
		return "unknown data directory status";
	return dir_msgs[st];
}

/* "DIR: sentence" into why; returns st. */
static enum settings_dir
dir_fail(enum settings_dir st, const char *path, char *why, size_t len)
{
	if (st == SETTINGS_DIR_UNSET)
		snprintf(why, len, "%s", settings_dir_strerror(st));
	else
		snprintf(why, len, "%s: %s", path, settings_dir_strerror(st));
	return st;
}

/* "PATH: permission denied for user NAME" into why. */
static enum settings_dir
dir_denied(const char *path, char *why, size_t len)
{
	struct passwd	*pw;
	uid_t		 uid = geteuid();

	if ((pw = getpwuid(uid)) != NULL && pw->pw_name != NULL)
		snprintf(why, len, "%s: permission denied for user %s",
		    path, pw->pw_name);
	else
		snprintf(why, len, "%s: permission denied for uid %lu", path,
		    (unsigned long)uid);
	return SETTINGS_DIR_DENIED;
}

/*
 * "PATH is read-only for user NAME, ..." into why: config.db that the
 * user may read but not write.
 */
static enum settings_dir
config_readonly(const char *path, char *why, size_t len)
{
	struct passwd	*pw;
	uid_t		 uid = geteuid();

	if ((pw = getpwuid(uid)) != NULL && pw->pw_name != NULL)
		snprintf(why, len, "%s is read-only for user %s, who may not"
		    " change the configuration", path, pw->pw_name);
	else
		snprintf(why, len, "%s is read-only for uid %lu, who may not"
		    " change the configuration", path, (unsigned long)uid);
	return SETTINGS_DIR_DENIED;
}

/* 0 when the effective user has mode on path, else errno. */
static int
may(const char *path, int mode)
{
	return faccessat(AT_FDCWD, path, mode, AT_EACCESS) == 0 ? 0 : errno;
}

/*
 * A database's companions (-journal, -wal, -shm): absent, or one SQLite
 * may use (db_companion_ok()); else why names the file, its owner, and
 * what to do.
 */
static enum settings_dir
check_companions(const char *db, char *why, size_t len)
{
	struct stat	 sb, owner;
	struct passwd	*pw;
	char		 path[PATH_MAX + 16], who[64];
	size_t		 i;

	if (stat(db, &owner) != 0)
		return SETTINGS_DIR_OK;		/* the open says the rest */
	for (i = 0; i < DB_COMPANIONS; i++) {
		if (snprintf(path, sizeof(path), "%s%s", db,
		    db_companion_sfx[i]) >= (int)sizeof(path))
			return dir_fail(SETTINGS_DIR_ERROR, db, why, len);
		if (lstat(path, &sb) != 0 || db_companion_ok(&sb, owner.st_uid))
			continue;
		if ((pw = getpwuid(sb.st_uid)) != NULL && pw->pw_name != NULL)
			(void)snprintf(who, sizeof(who), "user %s",
			    pw->pw_name);
		else
			(void)snprintf(who, sizeof(who), "uid %lu",
			    (unsigned long)sb.st_uid);
		if (S_ISLNK(sb.st_mode))
			(void)snprintf(why, len, "%s is a symbolic link, which"
			    " SQLite does not follow: look at it, then remove"
			    " it", path);
		else if (!S_ISREG(sb.st_mode) || sb.st_nlink != 1)
			(void)snprintf(why, len, "%s is not a plain file of one"
			    " name (a hard link?), which SQLite would write"
			    " through: look at it, then remove it", path);
		else
			(void)snprintf(why, len, "%s belongs to %s, not to the"
			    " database's owner: SQLite would play it into the"
			    " database, and refuses it; look at it, then remove"
			    " it", path, who);
		return SETTINGS_DIR_PLANTED;
	}
	return SETTINGS_DIR_OK;
}

/* state.db's -wal or -shm: when it exists, it must be writable too. */
static enum settings_dir
check_side(const struct settings *s, const char *suffix, char *why,
    size_t len)
{
	char	path[PATH_MAX + 8];

	if (snprintf(path, sizeof(path), "%s%s", s->state_path, suffix) >=
	    (int)sizeof(path))
		return dir_fail(SETTINGS_DIR_ERROR, s->state_path, why, len);
	if (access(path, F_OK) != 0 && errno == ENOENT)
		return SETTINGS_DIR_OK;
	if (may(path, R_OK | W_OK) != 0)
		return dir_denied(path, why, len);
	return SETTINGS_DIR_OK;
}

enum settings_dir
settings_check_dir(const struct settings *s, int need, char *why,
    size_t len)
{
	struct stat		sb;
	enum settings_dir	st;

	if (s->dir[0] == '\0')
		return dir_fail(SETTINGS_DIR_UNSET, s->dir, why, len);
	/* Nothing on disk: the server answers for the rest. */
	if (s->server)
		return SETTINGS_DIR_OK;
	if (stat(s->dir, &sb) != 0) {
		if (errno == ENOENT)
			return dir_fail(SETTINGS_DIR_MISSING, s->dir, why,
			    len);
		if (errno == ENOTDIR)
			return dir_fail(SETTINGS_DIR_NOTDIR, s->dir, why,
			    len);
		if (errno == EACCES)
			return dir_denied(s->dir, why, len);
		return dir_fail(SETTINGS_DIR_ERROR, s->dir, why, len);
	}
	if (!S_ISDIR(sb.st_mode))
		return dir_fail(SETTINGS_DIR_NOTDIR, s->dir, why, len);
	if (may(s->dir, X_OK) != 0)
		return dir_denied(s->dir, why, len);
	/* Only the files need names: `hookbox sign` works without state.db. */
	if (((need & CONFIG_NEEDS) && access(s->config_path, F_OK) != 0) ||
	    ((need & SETTINGS_NEED_STATE_WRITE) &&
	    access(s->state_path, F_OK) != 0))
		return dir_fail(SETTINGS_DIR_UNINIT, s->dir, why, len);
	if ((need & SETTINGS_NEED_CONFIG_READ) &&
	    may(s->config_path, R_OK) != 0)
		return dir_denied(s->config_path, why, len);
	if ((need & SETTINGS_NEED_CONFIG_WRITE) &&
	    may(s->config_path, R_OK | W_OK) != 0)
		return may(s->config_path, R_OK) == 0 ?
		    config_readonly(s->config_path, why, len) :
		    dir_denied(s->config_path, why, len);
	if (need & SETTINGS_NEED_STATE_WRITE) {
		if (may(s->state_path, R_OK | W_OK) != 0)
			return dir_denied(s->state_path, why, len);
		if ((st = check_side(s, "-wal", why, len)) != SETTINGS_DIR_OK ||
		    (st = check_side(s, "-shm", why, len)) != SETTINGS_DIR_OK)
			return st;
	}
	/* Last: what this user may not use is said as such first. */
	if ((need & CONFIG_NEEDS) &&
	    (st = check_companions(s->config_path, why, len)) !=
	    SETTINGS_DIR_OK)
		return st;
	if ((need & SETTINGS_NEED_STATE_WRITE) &&
	    (st = check_companions(s->state_path, why, len)) !=
	    SETTINGS_DIR_OK)
		return st;
	return SETTINGS_DIR_OK;
}
