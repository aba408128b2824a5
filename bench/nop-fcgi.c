/*
 * bench/nop-fcgi.c: the ceiling of the nginx + libfcgi path.  A FastCGI
 * responder that does no work: N threads in FCGX_Accept_r on one socket,
 * each reads the request body and answers 200 with a tiny JSON body.
 * Bench only; built by bench/http.sh.
 *
 *     nop-fcgi SOCKET THREADS
 */
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fcgiapp.h>

#define NOP_THREADS_MAX	64

static int	nop_fd = -1;

static void *
nop_serve(void *arg)
{
	FCGX_Request	 req;
	char		 buf[4096];

	(void)arg;
	if (FCGX_InitRequest(&req, nop_fd, 0) != 0)
		return NULL;
	while (FCGX_Accept_r(&req) >= 0) {
		/* Drain the body, as a real responder must. */
		while (FCGX_GetStr(buf, sizeof(buf), req.in) > 0)
			continue;
		FCGX_PutS("Status: 200 OK\r\n"
		    "Content-Type: application/json\r\n\r\n"
		    "{\"result\":\"ok\"}\n", req.out);
		/* Read to its end: closed at once, as hookbox-fcgi does. */
		if (FCGX_HasSeenEOF(req.in) == EOF)
			(void)FCGX_Detach(&req);
		FCGX_Finish_r(&req);
	}
	return NULL;
}

int
main(int argc, char *argv[])
{
	pthread_t	 tid[NOP_THREADS_MAX];
	char		*end;
	long		 n;
	int		 i;

	if (argc != 3)
		errx(2, "usage: nop-fcgi SOCKET THREADS");
	errno = 0;
	n = strtol(argv[2], &end, 10);
	if (errno != 0 || *end != '\0' || n < 1 || n > NOP_THREADS_MAX)
		errx(2, "THREADS: 1 to %d", NOP_THREADS_MAX);
	if (FCGX_Init() != 0)
		errx(1, "FCGX_Init");
	/* libfcgi catches SIGTERM to end the accept loop gracefully, which
	 * threads blocked in accept() never see: let it end the process. */
	signal(SIGTERM, SIG_DFL);
	umask(077);
	if ((nop_fd = FCGX_OpenSocket(argv[1], 128)) < 0)
		errx(1, "%s: cannot listen", argv[1]);
	for (i = 0; i < n; i++)
		if (pthread_create(&tid[i], NULL, nop_serve, NULL) != 0)
			errx(1, "pthread_create");
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	return 0;
}
