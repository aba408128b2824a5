/*
 * run/peer.c: a local service's Unix socket (run/peer.h).
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "run/peer.h"

/* path into a sockaddr_un: 0, or -1 when it does not fit. */
static int
addr_of(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (path[0] == '\0' || strlen(path) >= sizeof(sa->sun_path))
		return -1;
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

int
peer_listen(const char *path, char *why, size_t len)
{
	struct sockaddr_un	sa;
	struct stat		st;
	int			fd;

	if (addr_of(path, &sa) != 0) {
		(void)snprintf(why, len, "%s: not a socket's name (at most %zu"
		    " bytes)", path, sizeof(sa.sun_path) - 1);
		return -1;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
			(void)snprintf(why, len, "%s: there is %s there, which"
			    " is not a socket of this user's: move it away",
			    path, S_ISLNK(st.st_mode) ? "a symbolic link" :
			    "something");
			return -1;
		}
		if (unlink(path) != 0 && errno != ENOENT) {
			(void)snprintf(why, len, "%s: %s", path,
			    strerror(errno));
			return -1;
		}
	} else if (errno != ENOENT) {
		(void)snprintf(why, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		(void)snprintf(why, len, "socket: %s", strerror(errno));
		return -1;
	}
	/* Made 0666 by its mode, not after it: no moment with another. */
	if (fchmod(fd, 0666) != 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(path, 0666) != 0 || listen(fd, 64) != 0) {
		(void)snprintf(why, len, "%s: %s", path, strerror(errno));
		(void)close(fd);
		return -1;
	}
	return fd;
}

/* Non-zero when st is root's and no one else may write it. */
static int
owned(const struct stat *st)
{
	return st->st_uid == 0 && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

int
peer_connect(const char *path, char *why, size_t len)
{
	struct sockaddr_un	sa;
	struct stat		st, dst;
	char			dir[PATH_MAX];
	int			fd, e;

	if (addr_of(path, &sa) != 0 || path[0] != '/') {
		(void)snprintf(why, len, "%s: not an absolute socket name of"
		    " at most %zu bytes", path, sizeof(sa.sun_path) - 1);
		errno = EINVAL;
		return -1;
	}
	if (lstat(path, &st) != 0) {
		e = errno;
		(void)snprintf(why, len, "%s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	(void)snprintf(dir, sizeof(dir), "%s", path);
	if (!S_ISSOCK(st.st_mode) || st.st_uid != 0 ||
	    lstat(dirname(dir), &dst) != 0 || !S_ISDIR(dst.st_mode) ||
	    !owned(&dst)) {
		(void)snprintf(why, len, "%s: not a socket of root's in a"
		    " directory only root may write: refused (something"
		    " planted there would hear the request)", path);
		errno = EPERM;
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		e = errno;
		(void)snprintf(why, len, "%s: %s", path, strerror(e));
		if (fd >= 0)
			(void)close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int
peer_uid(int fd, uid_t *uid)
{
	struct ucred	cr;
	socklen_t	n = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) != 0 ||
	    n != sizeof(cr))
		return -1;
	*uid = cr.uid;
	return 0;
}

int
peer_write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		/* A peer gone is EPIPE, never SIGPIPE; a file is written. */
		if ((n = send(fd, p, len, MSG_NOSIGNAL)) < 0 &&
		    errno == ENOTSOCK)
			n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
