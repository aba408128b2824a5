/*
 * base/log.h: one line per event, to standard error, for journald:
 *
 *   ts=2026-11-30T21:03:04.123Z level=info event=request key=value ...
 *
 * Keys are the caller's constants ([a-z_]).  A value is written bare
 * when it is made of printable ASCII other than space, '"', '=' and '\';
 * otherwise (and when empty) it is quoted, with '"' and '\' escaped as
 * \" and \\, control bytes as \n, \r, \t or \xNN, and every byte past
 * ASCII as \xNN (so no C1 control or bidirectional mark reaches a
 * terminal as it was sent).  A value longer than LOG_VALUE_MAX bytes is cut,
 * and ends "...".  Never pass a secret, a signature or a body.
 *
 * A line is built in the caller's struct log_line (on its stack) and
 * written with one write(2) of at most LOG_LINE_MAX bytes: lines from
 * several threads or processes never interleave.  A line that would be
 * longer loses its last keys and ends with truncated=1.
 *
 * Transactions: none; no database.
 */
#ifndef HB_LOG_H
#define HB_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hb.h"

/* PIPE_BUF: a write to a pipe this long is atomic. */
#define LOG_LINE_MAX	4096
#define LOG_VALUE_MAX	512

enum log_level {
	LOG_LV_INFO = 0,
	LOG_LV_WARN,
	LOG_LV_ERROR
};

struct log_line {
	char	buf[LOG_LINE_MAX];
	size_t	len;
	int	full;		/* a key was left out */
};

/* Starts a line: ts=, level= and event= (a constant, written as is). */
HB_API void log_begin(struct log_line *, enum log_level, const char *event);

/* Adds key=value, escaped; a NULL value is left out. */
HB_API void log_str(struct log_line *, const char *key, const char *val);

HB_API void log_int(struct log_line *, const char *key, long long val);

/* Adds key=value formatted, then escaped like log_str(). */
HB_API void log_fmt(struct log_line *, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Ends the line and writes it with one write(2).  Errors are ignored. */
HB_API void log_end(struct log_line *);

/*
 * One line of string pairs: log_event(LOG_LV_INFO, "start", "version",
 * v, "dir", d, (char *)NULL).  A NULL value leaves its key out: the list
 * ends at a NULL key.
 */
HB_API void log_event(enum log_level, const char *event, ...);

/*
 * Where lines go: standard error (2) unless a test says otherwise.  Set
 * before threads start.  Returns the previous descriptor.
 */
HB_API int log_set_fd(int fd);

#endif
