/*
 * run/peer.h: a local service's Unix socket, and who is at its other end.
 *
 * The registrar service (hookbox(1), REGISTRARS) listens on a socket any
 * local user may connect to, and decides by the kernel's word on the
 * connecting process's user (SO_PEERCRED), never by anything the
 * process says.  A client talks to it only through a socket root owns,
 * in a directory root owns that no one else may write: a socket another
 * user planted at the name would hear what the client sends.
 *
 * Transactions: none.
 */
#ifndef HB_RUN_PEER_H
#define HB_RUN_PEER_H

#include <sys/types.h>

#include "base/hb.h"

/*
 * Listens on a new socket at path, mode 0666 (access is decided per
 * connection).  What is at path already is replaced only when it is a
 * socket of this user's; anything else (a file, a link, another user's
 * socket) is refused.  Returns the descriptor, or -1 with why.
 */
HB_API int peer_listen(const char *path, char *why, size_t len)
    HB_MUST_CHECK;

/*
 * Connects to the socket at path when it is root's, in a directory of
 * root's that no one else may write.  Returns the descriptor, or -1 with
 * why; errno ENOENT when there is nothing at path.
 */
HB_API int peer_connect(const char *path, char *why, size_t len)
    HB_MUST_CHECK;

/* The user at the other end of connected socket fd: 0, or -1. */
HB_API int peer_uid(int fd, uid_t *uid) HB_MUST_CHECK;

/* Writes all of buf to fd, a socket (a peer gone: EPIPE, no signal) or a
   file: 0, or -1 (errno). */
HB_API int peer_write_all(int fd, const void *buf, size_t len)
    HB_MUST_CHECK;

#endif
