/*
 * registrar add, remove and serve, and a job command's way to the
 * registrar service.
 *
 * A registrar is a user that may register, list and remove the jobs of
 * the tenants root names for it, and nothing else (config/registrar.h).
 * It does so through the registrar service, `hookbox registrar serve`,
 * run as root: the service learns the user from the kernel (SO_PEERCRED,
 * run/peer.h), runs the job command for it with the configuration
 * narrowed to that registrar, and answers with what the command printed
 * and its exit code.  A registrar runs hookbox as it would as root:
 * `hookbox job add ...` run by any user but root goes to the service
 * when its socket is there.
 *
 * The request: one line of JSON, {"argv": [the words and arguments]},
 * then, for job import, the lines to import, until the client shuts its
 * side.  A file named on the command line is read by the client, as the
 * user: the service opens nothing a request names.  The answer: one JSON
 * object, {"exit": N, "stdout": "...", "stderr": "..."}.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/peer.h"

#include "cli.h"

#define REQUEST_LINE_MAX	(64 * 1024)	/* the request's first line */
#define ANSWER_MAX		(256 * 1024 * 1024)	/* what a command
							   printed */
#define PEER_TIMEOUT_S		60	/* a silent peer is dropped */
#define REGISTRAR_CONNS_MAX	16	/* requests served at once
					   (hookbox-registrar.socket's
					   MaxConnections=) */

/* ---- registrar add, remove ---------------------------------------- */

#define ADD	0x1
#define REMOVE	0x2

struct registrar_edit {
	const char	*name, *tenant;
};

#define CLI_ROWS_OF	struct registrar_edit
static const struct cli_opt registrar_opts[] = {
	CLI_OPT_PTR("tenant", ADD | REMOVE, tenant, 0),
};

static const char *
registrar_tenant(const void *p)
{
	return ((const struct registrar_edit *)p)->tenant;
}

static int
add_check(void *p, char **operands)
{
	struct registrar_edit	*a = p;

	(void)operands;
	if (a->tenant == NULL)
		return cli_usage();
	if (!config_registrar_name_valid(a->name)) {
		cli_warn("registrar add: \"%s\" is not a user name this"
		    " takes (1-%d of a-z, 0-9, _ and -, not first a digit"
		    " or -)", a->name, CONFIG_REGISTRAR_MAX);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static int
add_work(struct config *cfg, void *p)
{
	struct registrar_edit	*a = p;
	struct config_tenant	 t;
	enum config_status	 rc;
	const char		*why = NULL;

	if ((rc = config_tenant_get(cfg, a->tenant, &t)) == CONFIG_NOTFOUND) {
		cli_warn("registrar add: tenant %s does not exist", a->tenant);
		return EXIT_FAIL;
	}
	if (rc == CONFIG_OK)
		rc = config_registrar_add(cfg, a->name, a->tenant, &why);
	if (rc == CONFIG_EXISTS) {
		printf("registrar %s of tenant %s present already\n", a->name,
		    a->tenant);
		return EXIT_OK;
	}
	return cli_config_done(rc, a->name, &why);
}

static int
remove_work(struct config *cfg, void *p)
{
	struct registrar_edit	*a = p;
	enum config_status	 rc;

	if ((rc = config_registrar_remove(cfg, a->name, a->tenant)) ==
	    CONFIG_NOTFOUND) {
		cli_warn("registrar remove: %s may register no jobs%s%s",
		    a->name, a->tenant != NULL ? " of tenant " : "",
		    a->tenant != NULL ? a->tenant : "");
		return EXIT_FAIL;
	}
	return cli_config_done(rc, a->name, NULL);
}

int
cmd_registrar_edit(struct settings *e, int argc, char **argv)
{
	static const struct cli_edit	add = {
		"registrar", "add", CLI_OPTIONS(registrar_opts), .cmd = ADD,
		.operand = CLI_OPT_PTR("user", 0, name, 0), .noperands = 1,
		.done = "added", .check = add_check, .work = add_work,
		.tenant = registrar_tenant,
	}, rm = {
		"registrar", "remove", CLI_OPTIONS(registrar_opts),
		.cmd = REMOVE,
		.operand = CLI_OPT_PTR("user", 0, name, 0), .noperands = 1,
		.done = "removed", .work = remove_work,
		.tenant = registrar_tenant,
	};
	struct registrar_edit	a;

	return cli_edit(e, argc, argv, strcmp(cli_cmd->sub, "add") == 0 ?
	    &add : &rm, &a, sizeof(a));
}
#undef CLI_ROWS_OF

/* ---- the service -------------------------------------------------- */

/* Reads the request's first line into buf: its length, or -1. */
static ssize_t
read_line(int fd, char *buf, size_t max)
{
	size_t	n = 0;
	ssize_t	r;

	while (n < max) {
		if ((r = read(fd, buf + n, 1)) < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return (ssize_t)n;
		}
		n++;
	}
	return -1;
}

/* Everything fd holds from its start, NUL-terminated, or NULL. */
static char *
slurp(int fd, size_t *len)
{
	struct stat	 st;
	char		*buf;
	size_t		 n;
	ssize_t		 r;

	if (fstat(fd, &st) != 0 || st.st_size < 0 ||
	    (size_t)st.st_size > ANSWER_MAX ||
	    (buf = malloc((size_t)st.st_size + 1)) == NULL)
		return NULL;
	for (n = 0; n < (size_t)st.st_size; n += (size_t)r)
		if ((r = pread(fd, buf + n, (size_t)st.st_size - n,
		    (off_t)n)) <= 0) {
			free(buf);
			return NULL;
		}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Sends the answer: the exit code and what the command printed. */
static int
answer(int sock, int code, const char *out, const char *err)
{
	cJSON	*o;
	char	*s;
	int	 rc = -1;

	if ((o = cJSON_CreateObject()) != NULL &&
	    cJSON_AddNumberToObject(o, "exit", code) != NULL &&
	    cJSON_AddStringToObject(o, "stdout", out) != NULL &&
	    cJSON_AddStringToObject(o, "stderr", err) != NULL &&
	    (s = cJSON_PrintUnformatted(o)) != NULL) {
		rc = peer_write_all(sock, s, strlen(s));
		cJSON_free(s);
	}
	cJSON_Delete(o);
	return rc;
}

/*
 * Non-zero when user is in the group that reads the configuration's
 * file (its secrets): the service's own user, never a registrar.
 */
static int
reads_secrets(const struct settings *e, const struct passwd *pw)
{
	struct stat	st;
	gid_t		groups[256];
	int		n = 256, i;

	if (e->server || stat(e->config_path, &st) != 0)
		return 0;
	if (pw->pw_gid == st.st_gid)
		return 1;
	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0)
		return 1;	/* too many to tell: refused */
	for (i = 0; i < n; i++)
		if (groups[i] == st.st_gid)
			return 1;
	return 0;
}

/* Why the service serves no user pw, or NULL when it may ask. */
static const char *
refusal(const struct settings *e, const struct passwd *pw)
{
	if (pw->pw_uid == 0)
		return "root changes the configuration itself";
	if (!config_registrar_name_valid(pw->pw_name))
		return "its name is not one a registrar can have";
	if (reads_secrets(e, pw))
		return "it reads the configuration's secrets (the service's"
		    " user), and the responder must not write what it trusts";
	return NULL;
}

/* The request's words, checked, into argv (pointers into req). */
static int
request_args(cJSON *req, char **argv, int max)
{
	const cJSON	*a = cJSON_GetObjectItemCaseSensitive(req, "argv");
	const cJSON	*w;
	int		 n = 0;

	if (!cJSON_IsArray(a))
		return -1;
	cJSON_ArrayForEach(w, a) {
		if (!cJSON_IsString(w) || n >= max)
			return -1;
		argv[n++] = w->valuestring;
	}
	argv[n] = NULL;
	return n;
}

/* Logs one request to the service's own standard error. */
static void __attribute__((format(printf, 2, 3)))
said(int fd, const char *fmt, ...)
{
	va_list	ap;
	char	line[1024];
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* A log gone is no reason to keep the answer back. */
	if (peer_write_all(fd, line, (size_t)n) != 0)
		errno = 0;
}

/*
 * One connection: who, what, then the command with its standard output
 * and error caught, and the answer.  Runs in a process of its own: it
 * moves standard input, output and error.  Returns the process's exit
 * status.
 */
static int
serve_one(struct settings *e, int sock)
{
	struct timeval	 tv = { PEER_TIMEOUT_S, 0 };
	struct passwd	*pw;
	cJSON		*req = NULL;
	const char	*refused, *shown;
	char		 line[REQUEST_LINE_MAX + 1], name[CONFIG_REGISTRAR_MAX + 1];
	char		*argv[REGISTRAR_ARGS_MAX + 1], *out = NULL, *err = NULL;
	size_t		 olen = 0, elen = 0;
	uid_t		 uid;
	int		 argc, code, logfd, ofd = -1, efd = -1;

	logfd = dup(STDERR_FILENO);
	(void)setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* The request's line first: an answer then finds the client reading. */
	if (read_line(sock, line, REQUEST_LINE_MAX) < 0 ||
	    (req = cJSON_Parse(line)) == NULL ||
	    (argc = request_args(req, argv, REGISTRAR_ARGS_MAX)) < 1) {
		(void)answer(sock, EXIT_USAGE, "", "hookbox: registrar: a"
		    " request is a line of JSON, {\"argv\": [...]}\n");
		cJSON_Delete(req);
		return EXIT_USAGE;
	}
	if (peer_uid(sock, &uid) != 0 || (pw = getpwuid(uid)) == NULL) {
		(void)answer(sock, EXIT_FAIL, "", "hookbox: registrar: who"
		    " is asking cannot be told\n");
		cJSON_Delete(req);
		return EXIT_FAIL;
	}
	if ((refused = refusal(e, pw)) != NULL) {
		shown = config_registrar_name_valid(pw->pw_name) ?
		    pw->pw_name : "(a name no registrar has)";
		said(logfd, "registrar: user %s (uid %lu) refused: %s", shown,
		    (unsigned long)uid, refused);
		(void)snprintf(line, sizeof(line), "hookbox: user %s may not"
		    " register jobs: %s\n", shown, refused);
		(void)answer(sock, EXIT_FAIL, "", line);
		cJSON_Delete(req);
		return EXIT_FAIL;
	}
	(void)snprintf(name, sizeof(name), "%s", pw->pw_name);
	/* The rest of the request is the command's standard input. */
	if ((ofd = memfd_create("stdout", MFD_CLOEXEC)) < 0 ||
	    (efd = memfd_create("stderr", MFD_CLOEXEC)) < 0 ||
	    fflush(NULL) != 0 || dup2(sock, STDIN_FILENO) < 0 ||
	    dup2(ofd, STDOUT_FILENO) < 0 || dup2(efd, STDERR_FILENO) < 0) {
		(void)answer(sock, EXIT_FAIL, "", "hookbox: registrar: out of"
		    " resources\n");
		cJSON_Delete(req);
		return EXIT_FAIL;
	}
	cli_registrar = name;
	code = cli_run_registrar(e, argc, argv);
	(void)fflush(NULL);
	said(logfd, "registrar %s: %s %s: exit %d", name, argv[0],
	    argc > 1 ? argv[1] : "", code);
	if ((out = slurp(ofd, &olen)) == NULL ||
	    (err = slurp(efd, &elen)) == NULL)
		code = EXIT_FAIL;
	(void)answer(sock, code, out != NULL ? out : "", err != NULL ? err :
	    "hookbox: registrar: the command's output was too long\n");
	free(out);
	free(err);
	cJSON_Delete(req);
	return code;
}

int
cmd_registrar_serve(struct settings *e, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*path = NULL;
	char		 why[512];
	int		 ch, fd, c, live = 0;
	pid_t		 pid;

	while ((ch = cli_next_opt(argc, argv, opts)) != -1)
		switch (ch) {
		case 'l':
			path = optarg;
			break;
		default:
			return cli_usage();
		}
	if (optind != argc)
		return cli_usage();
	if (geteuid() != 0 && !e->server) {
		cli_warn("registrar serve: run as root, who alone writes %s",
		    settings_config_name(e));
		return EXIT_FAIL;
	}
	if (path == NULL) {
		/* One connection on standard input (systemd's Accept=yes). */
		if ((c = dup(STDIN_FILENO)) < 0 || peer_uid(c, &(uid_t){ 0 }) !=
		    0) {
			cli_warn("registrar serve: standard input is no"
			    " connected socket: give --listen PATH");
			return EXIT_USAGE;
		}
		return serve_one(e, c);
	}
	if ((fd = peer_listen(path, why, sizeof(why))) < 0) {
		cli_warn("registrar serve: %s", why);
		return EXIT_FAIL;
	}
	for (;;) {
		/* At most REGISTRAR_CONNS_MAX at once, as the socket unit. */
		while (live > 0 && waitpid(-1, NULL, live >=
		    REGISTRAR_CONNS_MAX ? 0 : WNOHANG) > 0)
			live--;
		if ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			cli_warn("registrar serve: accept: %s",
			    strerror(errno));
			return EXIT_FAIL;
		}
		if ((pid = fork()) == 0) {
			(void)close(fd);
			_exit(serve_one(e, c));
		}
		if (pid < 0)
			cli_warn("registrar serve: fork: %s", strerror(errno));
		else
			live++;
		(void)close(c);
	}
}

/* ---- the client --------------------------------------------------- */

/* Sends fd's bytes to sock: 0, or -1. */
static int
send_file(int sock, int fd)
{
	char	buf[65536];
	ssize_t	n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || peer_write_all(sock, buf, (size_t)n) != 0)
			return -1;
	}
	return 0;
}

/* The answer, read whole: NULL when it is not one. */
static cJSON *
read_answer(int sock)
{
	char	*buf = NULL, *p;
	size_t	 len = 0, cap = 0;
	ssize_t	 n;
	cJSON	*o;

	for (;;) {
		if (len + 65536 + 1 > cap) {
			if (cap > ANSWER_MAX * 2 ||
			    (p = realloc(buf, cap = cap * 2 + 65536 + 1)) ==
			    NULL) {
				free(buf);
				return NULL;
			}
			buf = p;
		}
		if ((n = read(sock, buf + len, 65536)) < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (buf == NULL)
		return NULL;
	buf[len] = '\0';
	o = cJSON_Parse(buf);
	free(buf);
	return o;
}

int
cli_registrar_forward(const char *path, int argc, const char *const *argv)
{
	const cJSON	*code, *out, *err;
	cJSON		*req, *words, *ans;
	char		 why[PATH_MAX + 256], *s;
	const char	*file = NULL;
	int		 sock, fd = -1, i, sent, rc;

	/* job import FILE: read here, as this user, and sent as "-". */
	if (argc > 2 && strcmp(argv[1], "import") == 0 &&
	    argv[argc - 1][0] != '-' && strcmp(argv[argc - 2], "--tenant") !=
	    0 && strcmp(argv[argc - 2], "--batch") != 0)
		file = argv[argc - 1];
	if (file != NULL && (fd = open(file, O_RDONLY | O_CLOEXEC)) < 0) {
		cli_warn("%s: %s", file, strerror(errno));
		return EXIT_FAIL;
	}
	if ((sock = peer_connect(path, why, sizeof(why))) < 0) {
		cli_warn("the registrar service: %s", why);
		if (fd >= 0)
			(void)close(fd);
		return EXIT_FAIL;
	}
	rc = EXIT_FAIL;
	if ((req = cJSON_CreateObject()) == NULL ||
	    (words = cJSON_AddArrayToObject(req, "argv")) == NULL)
		goto out;
	for (i = 0; i < argc; i++)
		if (!cJSON_AddItemToArray(words, cJSON_CreateString(
		    file != NULL && i == argc - 1 ? "-" : argv[i])))
			goto out;
	if ((s = cJSON_PrintUnformatted(req)) == NULL)
		goto out;
	sent = peer_write_all(sock, s, strlen(s)) == 0 &&
	    peer_write_all(sock, "\n", 1) == 0 &&
	    (strcmp(argv[1], "import") != 0 ||
	    send_file(sock, fd >= 0 ? fd : STDIN_FILENO) == 0);
	cJSON_free(s);
	(void)shutdown(sock, SHUT_WR);
	/* Refused before it read it all, the service still answers. */
	if ((ans = read_answer(sock)) == NULL) {
		cli_warn("the registrar service at %s gave no answer%s", path,
		    sent ? "" : " (the request could not be sent whole)");
		goto out;
	}
	code = cJSON_GetObjectItemCaseSensitive(ans, "exit");
	out = cJSON_GetObjectItemCaseSensitive(ans, "stdout");
	err = cJSON_GetObjectItemCaseSensitive(ans, "stderr");
	if (cJSON_IsNumber(code) && code->valueint >= 0 &&
	    code->valueint <= 255 && cJSON_IsString(out) &&
	    cJSON_IsString(err)) {
		(void)fputs(out->valuestring, stdout);
		(void)fputs(err->valuestring, stderr);
		rc = code->valueint;
	} else
		cli_warn("the registrar service at %s gave no answer", path);
	cJSON_Delete(ans);
out:
	cJSON_Delete(req);
	if (fd >= 0)
		(void)close(fd);
	(void)close(sock);
	return rc;
}
