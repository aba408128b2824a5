/*
 * hookbox: the operator's command-line tool.
 *
 * It parses arguments, reads secrets from files or standard input (never
 * from argv), calls the library and prints.  Exit codes (sysexits style):
 *   0  success
 *   1  operation refused or failed
 *   2  usage error
 *   75 temporarily unavailable (database busy); try again
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider/auth.h"
#include "disorder.h"
#include "base/util.h"
#include "intake/webhook.h"
#include "net/http.h"
#include "provider/mapping.h"
#include "run/super.h"

#include "cli.h"

/* ---- dispatch table and main -------------------------------------- */

/*
 * Every command, its usage and its help: the one place that says what a
 * command takes.  A help line is "  OPTION  what it does (default X)";
 * the defaults come from the constants the commands use.
 */
/* What a command needs of the data directory (checked before it runs). */
#define NONE		(-1)	/* init makes the files */
#define NOLOC		(-2)	/* needs no data location at all */
#define R_CONFIG	SETTINGS_NEED_CONFIG_READ
#define W_CONFIG	SETTINGS_NEED_CONFIG_WRITE
#define W_STATE		SETTINGS_NEED_STATE_WRITE	/* SQLite writes to read */

/* The options every read-out takes, and their help. */
#define LIST_USAGE	"[--since WHEN] [--limit N] [--json]"
#define LIST_HELP \
	"  --since WHEN           only rows from WHEN on: a duration back" \
	" (30m, 24h, 7d)\n" \
	"                         or a UTC date (YYYY-MM-DD[THH:MM:SSZ])" \
	" (default all)\n" \
	"  --limit N              rows, 1.." HB_STR(LIST_LIMIT_MAX) \
	" (default " HB_STR(LIST_LIMIT_DEFAULT) "); when more\n" \
	"                         exist, a note on stderr says so\n" \
	"  --json                 a JSON array, times in unix milliseconds" \
	" (default an\n" \
	"                         aligned table, times in UTC)\n"
#define TENANT_FILTER_HELP \
	"  --tenant T             only tenant T's rows (default all)\n"

/* endpoint add's help says the most a mapping file holds. */
_Static_assert(MAPPING_TEXT_MAX == 16 * 1024, "endpoint add's help");

static const struct cli_command cmds[] = {
	{ "init", NULL, cmd_init, NONE,
	    "[--grant ROLE]... [--grant-registrar ROLE]...",
	    "  --grant ROLE           PostgreSQL: let ROLE serve (read"
	    " hookbox_config, write\n"
	    "                         hookbox_state), as `hookbox grants`"
	    " prints; repeatable\n"
	    "                         (default no grants)\n"
	    "  --grant-registrar ROLE PostgreSQL: let ROLE, the registrar"
	    " service's, register\n"
	    "                         jobs and nothing else; repeatable"
	    " (default none)\n"
	    "                         Run again, it upgrades a configuration"
	    " made by an older\n"
	    "                         hookbox to this one's schema (as its"
	    " owner).\n" },
	{ "grants", NULL, cmd_grants, NOLOC, "[--registrar] ROLE",
	    "  ROLE                   the PostgreSQL role the responder and"
	    " dispatcher\n"
	    "                         connect as; prints its GRANT lines for"
	    " a DBA to run\n"
	    "  --registrar            ROLE is the registrar service's:"
	    " jobs alone\n"
	    "                         (default a serving role)\n" },
	{ "tenant", "add", cmd_edit, W_CONFIG,
	    "[--inactive] [--status-base URL] [--api-key-file FILE|-] ID",
	    "  --inactive             add the tenant inactive (default active)\n"
	    "  --status-base URL      base of the provider's status API, for"
	    " poll (default none)\n"
	    "  --api-key-file FILE|-  the status API's key, from a file or"
	    " standard input\n"
	    "                         (default none)\n" },
	{ "tenant", "set", cmd_edit, W_CONFIG,
	    "[--active|--inactive] [--status-base URL]"
	    " [--api-key-file FILE|-] ID",
	    "  --active, --inactive   let it in, or refuse its requests"
	    " (default unchanged)\n"
	    "  --status-base URL      base of the provider's status API"
	    " (default unchanged)\n"
	    "  --api-key-file FILE|-  a new API key, from a file or standard"
	    " input\n"
	    "                         (default unchanged)\n"
	    "                         At least one option; the rest stays as"
	    " it is.\n" },
	{ "tenant", "list", cmd_list, R_CONFIG, "[--tenant ID] " LIST_USAGE,
	    "  --tenant ID            only that tenant (default all)\n"
	    LIST_HELP },
	{ "tenant", "remove", cmd_edit, W_CONFIG, "ID",
	    "" },
	{ "endpoint", "add", cmd_edit, W_CONFIG,
	    "--tenant T\n"
	    "       [--kind tornado-job|tornado-org|mapped]"
	    " [--mapping FILE|-]\n"
	    "       [--auth hmac|key|standard] [--header H] [--tolerance S]\n"
	    "       --secret-file FILE|- [--expires WHEN] NAME",
	    "  --tenant T             the tenant the endpoint belongs to"
	    " (required)\n"
	    "  --kind K               tornado-job, tornado-org, or mapped with"
	    " --mapping\n"
	    "                         (default tornado-job)\n"
	    "  --mapping FILE|-       kind mapped: where each field of an event"
	    " is and which\n"
	    "                         types make which step, a JSON file of at"
	    " most 16 KiB;\n"
	    "                         its destination must be the tenant's"
	    " (required with\n"
	    "                         --kind mapped)\n"
	    "  --auth A               hmac, key or standard (default hmac)\n"
	    "  --header H             the key's header (required with --auth"
	    " key); for hmac,\n"
	    "                         the signature's (default "
	    WEBHOOK_HMAC_HEADER ")\n"
	    "  --key-header H         the same as --header\n"
	    "  --tolerance S          timestamp tolerance in seconds, 1..86400"
	    " (default " HB_STR(AUTH_TOLERANCE_DEFAULT) ")\n"
	    "  --secret-file FILE|-   the first secret, from a file or standard"
	    " input (required):\n"
	    "                         hmac at least 16 bytes; standard"
	    " whsec_BASE64\n"
	    "  --expires WHEN         when the secret stops being accepted:"
	    " UNIXTIME,\n"
	    "                         YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ (UTC)"
	    " or +30d, +24h,\n"
	    "                         +90m (default never)\n"
	    "  NAME                   not starting with '_' (_health and"
	    " _metrics are taken)\n" },
	{ "endpoint", "set", cmd_edit, W_CONFIG,
	    "[--tolerance S] [--header H]\n"
	    "       [--mapping FILE|-] NAME",
	    "  --tolerance S          timestamp tolerance in seconds, 1..86400"
	    " (default\n"
	    "                         unchanged)\n"
	    "  --header H             the key's header, or the hmac signature's"
	    " (default\n"
	    "                         unchanged)\n"
	    "  --mapping FILE|-       a mapped endpoint's new mapping, in force"
	    " for the next\n"
	    "                         request (default unchanged)\n"
	    "                         At least one option; the rest stays as"
	    " it is.\n" },
	{ "endpoint", "secret", cmd_endpoint_secret, W_CONFIG,
	    "add --secret-file FILE|- [--expires WHEN]\n"
	    "       [--retire-others-after DURATION] NAME\n"
	    "       hookbox [-d DIR] endpoint secret list [--json] NAME\n"
	    "       hookbox [-d DIR] endpoint secret revoke NAME ID\n"
	    "       hookbox [-d DIR] endpoint secret --secret-file FILE|-"
	    " [--expires WHEN] NAME",
	    "  add                    adds a secret; the others stay valid"
	    " until they expire\n"
	    "                         or are revoked (the form without a verb"
	    " is add)\n"
	    "  --secret-file FILE|-   the new secret, from a file or standard"
	    " input (required)\n"
	    "  --expires WHEN         when it stops being accepted: UNIXTIME,"
	    " YYYY-MM-DD,\n"
	    "                         YYYY-MM-DDTHH:MM:SSZ or +30d, +24h, +90m"
	    " (default never)\n"
	    "  --retire-others-after DURATION\n"
	    "                         every other secret expires after"
	    " DURATION (24h, 90m,\n"
	    "                         7d, 0 for at once) unless it expires"
	    " sooner (default\n"
	    "                         they stay)\n"
	    "  list                   ids, created, expiry and whether active;"
	    " never a secret\n"
	    "  --json                 list as JSON (default a table)\n"
	    "  revoke                 deletes secret ID (not the endpoint's"
	    " last active one)\n" },
	{ "endpoint", "list", cmd_list, R_CONFIG, "[--tenant T] " LIST_USAGE,
	    TENANT_FILTER_HELP LIST_HELP },
	{ "endpoint", "show", cmd_endpoint_show, R_CONFIG, "[--mapping] NAME",
	    "  NAME                   the endpoint, as one JSON object with its"
	    " mapping\n"
	    "  --mapping              its mapping alone, canonical, as"
	    " --mapping takes it\n"
	    "                         (default the whole endpoint)\n" },
	{ "endpoint", "remove", cmd_edit, W_CONFIG, "NAME",
	    "" },
	{ "destination", "add", cmd_edit, W_CONFIG,
	    "--tenant T --url URL [--idempotent] [--status-url URL]\n"
	    "       [--secret-file FILE|-] [--timeout-ms N]"
	    " [--max-attempts N]\n"
	    "       [--retry-for DURATION] [--max-in-flight N] [--rate N]\n"
	    "       [--circuit-failures N] [--cool-down DURATION]\n"
	    "       [--allow-internal] NAME",
	    "  --tenant T             the tenant it belongs to (required)\n"
	    "  --url URL              where actions are sent, http or https"
	    " (required)\n"
	    "  --idempotent           it honours Idempotency-Key, so a"
	    " delivery may be resent\n"
	    "                         (default not)\n"
	    "  --status-url URL       where to ask an unknown delivery's"
	    " outcome (default none)\n"
	    "  --secret-file FILE|-   the signing secret for deliveries,"
	    " whsec_BASE64 of at\n"
	    "                         least 16 bytes, from a file or standard"
	    " input\n"
	    "                         (default none)\n"
	    "  --timeout-ms N         per-request timeout, 1..600000 (default "
	    HB_STR(DEST_TIMEOUT_MS_DEFAULT) ")\n"
	    "  --max-attempts N       attempts before dead, 1..1000, as well as"
	    " the horizon\n"
	    "                         (default none: the horizon alone)\n"
	    "  --retry-for DURATION   how long an action is retried before"
	    " it is dead,\n"
	    "                         not counting the time the destination"
	    " was open or\n"
	    "                         paused: 90s, 30m, 24h, 3d"
	    " (default " HB_STR(HB_RETRY_FOR_S_DEFAULT) "s, three days)\n"
	    "  --max-in-flight N      requests to it at once, across"
	    " dispatchers, 0..10000\n"
	    "                         (0: no limit; default 0)\n"
	    "  --rate N               requests started a second, 1..10000"
	    " (0: no limit;\n"
	    "                         default 0)\n"
	    "  --circuit-failures N   failures in a row (no answer, 408,"
	    " 5xx) that open its\n"
	    "                         circuit, 0..10000 (0: never; default " HB_STR(HB_CIRCUIT_FAILURES_DEFAULT) ")\n"
	    "  --cool-down DURATION   how long its circuit stays open before"
	    " a probe, 1s..10m,\n"
	    "                         doubled after each failed probe"
	    " (default " HB_STR(HB_COOLDOWN_S_DEFAULT) "s)\n"
	    "  --allow-internal       its URLs may go to internal addresses:"
	    " link-local\n"
	    "                         (169.254.0.0/16, fe80::/10) and cloud"
	    " metadata\n"
	    "                         services (169.254.169.254,"
	    " metadata.google.internal...)\n"
	    "                         (default refused; loopback is always"
	    " allowed)\n" },
	{ "destination", "set", cmd_edit, W_CONFIG,
	    "--tenant T [--url URL] [--timeout-ms N]\n"
	    "       [--max-attempts N|--no-max-attempts]"
	    " [--retry-for DURATION]\n"
	    "       [--max-in-flight N] [--rate N] [--circuit-failures N]\n"
	    "       [--cool-down DURATION]\n"
	    "       [--idempotent|--not-idempotent]"
	    " [--status-url URL|--no-status-url]\n"
	    "       [--allow-internal|--no-allow-internal]"
	    " [--secret-file FILE|-] NAME",
	    "  --tenant T             the tenant it belongs to (required)\n"
	    "  --url URL              where actions are sent (default"
	    " unchanged)\n"
	    "  --timeout-ms N         per-request timeout, 1..600000 (default"
	    " unchanged)\n"
	    "  --max-attempts N, --no-max-attempts\n"
	    "                         attempts before dead, 1..1000, or none:"
	    " the horizon\n"
	    "                         alone (default unchanged)\n"
	    "  --retry-for DURATION   how long an action is retried before"
	    " it is dead,\n"
	    "                         not counting the time the destination"
	    " was open or\n"
	    "                         paused: 90s, 30m, 24h, 3d"
	    " (default unchanged)\n"
	    "  --max-in-flight N      requests to it at once, across"
	    " dispatchers, 0..10000\n"
	    "                         (0: no limit; default unchanged)\n"
	    "  --rate N               requests started a second, 1..10000"
	    " (0: no limit;\n"
	    "                         default unchanged)\n"
	    "  --circuit-failures N   failures in a row (no answer, 408,"
	    " 5xx) that open its\n"
	    "                         circuit, 0..10000 (0: never; default unchanged)\n"
	    "  --cool-down DURATION   how long its circuit stays open before"
	    " a probe, 1s..10m,\n"
	    "                         doubled after each failed probe"
	    " (default unchanged)\n"
	    "  --idempotent, --not-idempotent\n"
	    "                         whether it honours Idempotency-Key"
	    " (default unchanged)\n"
	    "  --status-url URL, --no-status-url\n"
	    "                         set or drop the status URL (default"
	    " unchanged)\n"
	    "  --secret-file FILE|-   a new signing secret, whsec_BASE64"
	    " (default unchanged)\n"
	    "  --allow-internal, --no-allow-internal\n"
	    "                         whether its URLs may go to link-local"
	    " and cloud\n"
	    "                         metadata addresses (default unchanged)\n"
	    "                         At least one option besides --tenant.\n"
	    },
	{ "destination", "list", cmd_list, R_CONFIG, "[--tenant T] " LIST_USAGE,
	    TENANT_FILTER_HELP LIST_HELP },
	{ "destination", "remove", cmd_edit, W_CONFIG, "--tenant T NAME",
	    "  --tenant T             the tenant it belongs to (required)\n" },
	{ "destination", "pause", cmd_destination_pause, R_CONFIG | W_STATE,
	    "--tenant T NAME",
	    "  --tenant T             the tenant it belongs to (required)\n"
	    "                         Nothing is sent to it until resume; its"
	    " actions'\n"
	    "                         retry horizon does not run"
	    " meanwhile.\n" },
	{ "destination", "resume", cmd_destination_pause, R_CONFIG | W_STATE,
	    "--tenant T NAME",
	    "  --tenant T             the tenant it belongs to (required)\n" },
	{ "job", "add", cmd_edit, W_CONFIG,
	    "--tenant T --attempt A --step S --destination D\n"
	    "       [--source-url URL] [--output JSON] JOB_ID",
	    "  --tenant T             the tenant that owns the job (required)\n"
	    "  --attempt A            the attempt id (required)\n"
	    "  --step S               the step to create when it completes"
	    " (required)\n"
	    "  --destination D        where that step's action goes"
	    " (required)\n"
	    "  --source-url URL       carried in the action (default none)\n"
	    "  --output JSON          a JSON object, carried in the action"
	    " (default none)\n"
	    "                         One job per tenant, attempt and step.\n"
	    },
	{ "job", "list", cmd_list, R_CONFIG, "[--tenant T] " LIST_USAGE,
	    TENANT_FILTER_HELP LIST_HELP },
	{ "job", "import", cmd_job_import, W_CONFIG,
	    "[--tenant T] [--batch N] [FILE|-]",
	    "  FILE|-                 JSON Lines, one job per line with the"
	    " fields of job add:\n"
	    "                         tenant, job_id, attempt, step,"
	    " destination, source_url,\n"
	    "                         output (default standard input)\n"
	    "  --tenant T             the tenant of lines that name none"
	    " (default none)\n"
	    "  --batch N              lines per transaction, 1..100000"
	    " (default " HB_STR(IMPORT_BATCH_DEFAULT) ")\n"
	    "                         a bad line is reported and skipped;"
	    " exit 1 if any\n" },
	{ "job", "remove", cmd_edit, W_CONFIG, "--tenant T JOB_ID",
	    "  --tenant T             the tenant that owns the job"
	    " (required)\n" },
	{ "registrar", "add", cmd_registrar_edit, W_CONFIG, "--tenant T USER",
	    "  --tenant T             a tenant whose jobs USER may register,"
	    " list and\n"
	    "                         remove (required; once per tenant)\n" },
	{ "registrar", "list", cmd_list, R_CONFIG, "[--tenant T] " LIST_USAGE,
	    TENANT_FILTER_HELP LIST_HELP },
	{ "registrar", "remove", cmd_registrar_edit, W_CONFIG,
	    "[--tenant T] USER",
	    "  --tenant T             only this tenant (default all of USER's)\n"
	    "                         The jobs USER registered stay.\n" },
	{ "registrar", "serve", cmd_registrar_serve, R_CONFIG,
	    "[--listen PATH]",
	    "  --listen PATH          the socket to listen on, for any local"
	    " user (default\n"
	    "                         one connection on standard input,"
	    " systemd's Accept=yes)\n"
	    "                         A job command run by any user but root"
	    " goes to\n"
	    "                         $HOOKBOX_REGISTRAR (default "
	    REGISTRAR_SOCKET_DEFAULT ")\n"
	    "                         when a socket is there.\n" },
	{ "observe", NULL, cmd_observe, R_CONFIG | W_STATE,
	    "--tenant T < status.json",
	    "  --tenant T             the tenant the document is for"
	    " (required)\n" },
	{ "sign", NULL, cmd_sign, R_CONFIG,
	    "--endpoint E [--timestamp UNIXTIME] [--private-key FILE]\n"
	    "    [--query Q] < body",
	    "  --endpoint E           the endpoint whose secret signs"
	    " (required)\n"
	    "  --timestamp UNIXTIME   the time signed (default now)\n"
	    "  --private-key FILE|-   an ed25519 scheme's signing key\n"
	    "  --query Q              the query string of the URL signed\n" },
	{ "disorder", NULL, cmd_disorder, W_CONFIG | W_STATE,
	    "--endpoint E --url BASE [--sample FILE [--undo FILE]]\n"
	    "    [--sink URL] [--at-once N] [--timeout-ms N]",
	    "  --endpoint E           the endpoint whose format is tried"
	    " (required)\n"
	    "  --url BASE             the instance, as providers reach it:"
	    " BASE/hooks/...\n"
	    "                         (required)\n"
	    "  --sample FILE          a body of a type that takes effect"
	    " (mapped endpoints)\n"
	    "  --undo FILE            a body of a type that undoes"
	    " (default none)\n"
	    "  --sink URL             the test destination (default a"
	    " closed loopback port)\n"
	    "  --at-once N            requests sent together, 2.."
	    HB_STR(HTTP_BATCH_MAX) " (default "
	    HB_STR(DISORDER_AT_ONCE_DEFAULT) ")\n"
	    "  --timeout-ms N         each request's, 1..600000 (default "
	    HB_STR(DISORDER_TIMEOUT_MS_DEFAULT) ")\n" },
	{ "status", NULL, cmd_status, W_STATE, "[--json]",
	    "  --json                 one JSON object (default text)\n" },
	{ "dispatch", NULL, cmd_dispatch, R_CONFIG | W_STATE,
	    "[--once] [--workers N]",
	    "  --once                 deliver what is due within a second,"
	    " then exit\n"
	    "                         (default run until SIGTERM)\n"
	    "  --workers N            worker processes, 1.."
	    HB_STR(SUPER_WORKERS_MAX) " (default 1)\n" },
	{ "poll", NULL, cmd_poll, R_CONFIG | W_STATE,
	    "[--limit N] [--timeout-ms N]",
	    "  --limit N              jobs asked about, 1..100000 (default "
	    HB_STR(POLL_LIMIT_DEFAULT) ")\n"
	    "  --timeout-ms N         per-request timeout, 1..600000 (default "
	    HB_STR(POLL_TIMEOUT_MS_DEFAULT) ")\n" },
	{ "list", NULL, cmd_list_state, W_STATE,
	    "[--state pending|leased|delivered|dead|unknown|all]\n"
	    "       [--tenant T] [--destination D] " LIST_USAGE,
	    "  --state S              pending, leased, delivered, dead,"
	    " unknown or all\n"
	    "                         (default all)\n"
	    TENANT_FILTER_HELP
	    "  --destination D        only actions for destination D"
	    " (default all)\n"
	    LIST_HELP },
	{ "attempts", NULL, cmd_attempts, W_STATE, LIST_USAGE " ACTION",
	    LIST_HELP },
	{ "requeue", NULL, cmd_requeue, W_STATE,
	    "ACTION\n"
	    "       hookbox requeue [--dry-run] [--state dead|unknown]"
	    " [--tenant T]\n"
	    "       [--destination D] [--since WHEN] [--until WHEN]",
	    "  ACTION                 one dead or unknown action, sent again\n"
	    "  --dry-run              list what would be requeued, move"
	    " nothing\n"
	    "  --state S              the actions in state dead or unknown"
	    " (default dead)\n"
	    "  --tenant T             only tenant T's (default all)\n"
	    "  --destination D        only those for destination D (default"
	    " all)\n"
	    "  --since WHEN, --until WHEN\n"
	    "                         only those that went to that state at"
	    " or after WHEN,\n"
	    "                         or before it: a duration ago (30m, 24h,"
	    " 7d) or a UTC\n"
	    "                         date (YYYY-MM-DD or"
	    " YYYY-MM-DDTHH:MM:SSZ; default no bound)\n"
	    "                         A filter is at least one of these"
	    " but --dry-run.\n" },
	{ "reconcile", NULL, cmd_reconcile, W_STATE,
	    "--delivered|--resend ACTION",
	    "  --delivered            the action did arrive: mark it"
	    " delivered\n"
	    "  --resend               it did not: send it again\n" },
	{ "conflicts", NULL, cmd_conflicts, W_STATE,
	    "[--all] [--tenant T] " LIST_USAGE,
	    "  --all                  resolved ones too (default open"
	    " only)\n"
	    TENANT_FILTER_HELP
	    LIST_HELP },
	{ "resolve", NULL, cmd_resolve, W_STATE, "[--note TEXT] ID",
	    "  --note TEXT            recorded with it (default \""
	    RESOLVE_NOTE_DEFAULT "\")\n" },
	{ "prune", NULL, cmd_prune, W_STATE,
	    "[--receipts-days N] [--actions-days N] [--keep-jobs]",
	    "  --receipts-days N      keep receipts this many days, 0..36500"
	    " (default " HB_STR(PRUNE_RECEIPTS_DAYS_DEFAULT) ")\n"
	    "  --actions-days N       the redelivery window: keep delivered"
	    " actions, and jobs\n"
	    "                         that completed or failed, this many"
	    " days, 1..36500\n"
	    "                         (default " HB_STR(PRUNE_ACTIONS_DAYS_DEFAULT)
	    ")\n"
	    "  --keep-jobs            leave ended jobs alone, for a user who"
	    " cannot write\n"
	    "                         config.db (default prune them too)\n" },
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

/* The lines every command's help ends with. */
#define COMMON_HELP \
	"  -d DIR|CONNINFO        the data directory, or a PostgreSQL" \
	" database\n" \
	"                         (postgresql://... or key=value ...)," \
	" before or after\n" \
	"                         the command (default $HOOKBOX_DB, else" \
	" $HOOKBOX_DIR)\n" \
	"  -h, --help             this help\n"

static void
print_version(void)
{
	printf("hookbox %s\n", HB_VERSION);
}

/* The command list; to f, as help (stdout) or as a usage error (stderr). */
static void
print_main(FILE *f)
{
	const char	*prev = "";
	size_t		 i;

	fputs("usage: hookbox [-d DIR] COMMAND [ARGS]\n"
	    "       hookbox help [COMMAND]\n"
	    "       hookbox --version\n\ncommands:\n", f);
	/* A group's commands are adjacent in the table: one line each. */
	for (i = 0; i < NCMDS; i++) {
		if (cmds[i].sub == NULL)
			fprintf(f, "  %s\n", cmds[i].name);
		else if (strcmp(cmds[i].name, prev) != 0)
			fprintf(f, "  %s {%s", cmds[i].name, cmds[i].sub);
		else
			fprintf(f, "|%s", cmds[i].sub);
		if (cmds[i].sub != NULL && (i + 1 == NCMDS ||
		    strcmp(cmds[i + 1].name, cmds[i].name) != 0))
			fputs("}\n", f);
		prev = cmds[i].name;
	}
	fputs("\nDIR (or $HOOKBOX_DIR) holds state.db and config.db; a"
	    " PostgreSQL conninfo\n(-d, or $HOOKBOX_DB, which wins over"
	    " $HOOKBOX_DIR) names a database instead.\n-d may"
	    " also follow the command.  `hookbox help COMMAND` or"
	    " `hookbox COMMAND --help` shows its\noptions and defaults.\n"
	    "Exit codes: 0 success, 1 refused or failed, 2 usage,"
	    " 75 temporarily\nunavailable.\n", f);
}

static int
main_usage(void)
{
	print_main(stderr);
	return EXIT_USAGE;
}

/* c's help: its usage, then every option with its default, to stdout. */
static int
cmd_help(const struct cli_command *c)
{
	cli_print_usage(stdout, "usage:", c);
	printf("\noptions:\n%s%s", c->help, COMMON_HELP);
	return EXIT_OK;
}

/* Non-zero when name is the first word of two-word commands. */
static int
is_group(const char *name)
{
	size_t	i;

	for (i = 0; i < NCMDS; i++)
		if (cmds[i].sub != NULL && strcmp(cmds[i].name, name) == 0)
			return 1;
	return 0;
}

/* The usage of every command of group name, to f. */
static void
group_usage(FILE *f, const char *name)
{
	size_t	i;
	int	first = 1;

	for (i = 0; i < NCMDS; i++) {
		if (cmds[i].sub == NULL || strcmp(cmds[i].name, name) != 0)
			continue;
		cli_print_usage(f, first ? "usage:" : "      ", &cmds[i]);
		first = 0;
	}
	fprintf(f, "\n`hookbox %s COMMAND --help` shows its options.\n", name);
}

/*
 * The command that argv's first words name (argv[0], and argv[1] for a
 * two-word command), or NULL; *words is how many it took.
 */
static const struct cli_command *
find_cmd(int argc, char **argv, int *words)
{
	size_t	i;

	for (i = 0; i < NCMDS; i++) {
		if (strcmp(argv[0], cmds[i].name) != 0)
			continue;
		*words = cmds[i].sub != NULL ? 2 : 1;
		if (*words == 2 && (argc < 2 ||
		    strcmp(argv[1], cmds[i].sub) != 0))
			continue;
		return &cmds[i];
	}
	return NULL;
}

/* Reports words that name no command; the usage error's exit code. */
static int
unknown(int argc, char **argv)
{
	cli_warn("unknown command: %s%s%s", argv[0], argc > 1 ? " " : "",
	    argc > 1 ? argv[1] : "");
	if (is_group(argv[0])) {
		group_usage(stderr, argv[0]);
		return EXIT_USAGE;
	}
	return main_usage();
}

/* Non-zero for `endpoint secret`'s third word (help shows them all). */
static int
is_secret_verb(const struct cli_command *c, const char *w)
{
	return c->fn == cmd_endpoint_secret && (strcmp(w, "add") == 0 ||
	    strcmp(w, "list") == 0 || strcmp(w, "revoke") == 0);
}

/* hookbox help [TOPIC...]: help to stdout, or an unknown topic. */
static int
help(int argc, char **argv)
{
	const struct cli_command	*c;
	int			 words;

	if (argc == 0 || strcmp(argv[0], "help") == 0 ||
	    strcmp(argv[0], "version") == 0) {
		print_main(stdout);
		return EXIT_OK;
	}
	if ((c = find_cmd(argc, argv, &words)) != NULL && (argc == words ||
	    (argc == words + 1 && is_secret_verb(c, argv[words]))))
		return cmd_help(c);
	if (argc == 1 && is_group(argv[0])) {
		group_usage(stdout, argv[0]);
		return EXIT_OK;
	}
	return unknown(argc, argv);
}

/*
 * Takes -d DIR (or -dDIR) out of a command's arguments (argv[0] is the
 * command's last word, kept), wherever it stands before "--", into *dir:
 * so -d may follow the command as well as precede it, and the last wins.
 * Returns the new argc, or -1 when -d lacks its value.
 * XXX an option value that is itself "-d..." must be written --opt=-d...
 */
static int
take_dir(int argc, char **argv, const char **dir)
{
	int	i, j;

	for (i = j = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < argc)
				argv[j++] = argv[i++];
			break;
		}
		if (strncmp(argv[i], "-d", 2) != 0) {
			argv[j++] = argv[i];
			continue;
		}
		if (argv[i][2] != '\0')
			*dir = argv[i] + 2;
		else if (i + 1 < argc)
			*dir = argv[++i];
		else
			return -1;
	}
	argv[j] = NULL;
	return j;
}

/* Non-zero when a command's arguments ask for help (before "--"). */
static int
wants_help(int argc, char **argv)
{
	int	i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

static int
env_setup(struct settings *e, const char *dir, int need_dir)
{
	const char	*why;

	if (settings_load(e, dir, -1, need_dir, &why) != 0) {
		cli_warn("%s", why);
		return -1;
	}
	/* Said, not refused: the command line is already in ps(1). */
	if (e->argv_password)
		cli_warn("warning: -d holds a password, which any user can"
		    " read in ps(1); put it in ~/.pgpass (or PGPASSFILE), and"
		    " the conninfo in HOOKBOX_DB");
	return 0;
}

/*
 * Reports a data directory c cannot use; -1 then, else 0.  argv is the
 * command's (argv[0] its last word): `endpoint secret list` only reads,
 * where its siblings add and revoke write.
 */
static int
check_dir(const struct settings *e, const struct cli_command *c, int argc,
    char **argv)
{
	char	why[PATH_MAX + 128];
	int	need;

	if ((need = c->need) == NONE || need == NOLOC)
		return 0;
	if (c->fn == cmd_endpoint_secret && argc > 1 &&
	    strcmp(argv[1], "list") == 0)
		need = R_CONFIG;
	if (settings_check_dir(e, need, why, sizeof(why)) != SETTINGS_DIR_OK) {
		cli_warn("%s", why);
		return -1;
	}
	return 0;
}

int
cli_run_registrar(struct settings *e, int argc, char **argv)
{
	const char	*dir = NULL;
	int		 words;

	if ((cli_cmd = find_cmd(argc, argv, &words)) == NULL ||
	    strcmp(cli_cmd->name, "job") != 0) {
		cli_warn("a registrar runs job add, list, import and remove,"
		    " and nothing else");
		return EXIT_USAGE;
	}
	argc -= words - 1;
	argv += words - 1;
	if (wants_help(argc, argv))
		return cmd_help(cli_cmd);
	if ((argc = take_dir(argc, argv, &dir)) < 0 || dir != NULL) {
		cli_warn("the registrar service keeps its own configuration:"
		    " no -d");
		return EXIT_USAGE;
	}
	if (check_dir(e, cli_cmd, argc, argv) != 0)
		return EXIT_FAIL;
	optind = 0;
	return cli_cmd->fn(e, argc, argv);
}

/*
 * A job command run by any user but root, with no -d, goes to the
 * registrar service when its socket is there (argv: the command's last
 * word on): its exit code, or -1 to run it here.
 */
static int
registrar_route(int argc, char **argv)
{
	const char	*path = getenv("HOOKBOX_REGISTRAR");
	const char	*words[REGISTRAR_ARGS_MAX + 2];
	struct stat	 st;
	int		 i;

	if (strcmp(cli_cmd->name, "job") != 0 || geteuid() == 0)
		return -1;
	if (path == NULL)
		path = REGISTRAR_SOCKET_DEFAULT;
	if (path[0] == '\0' || (lstat(path, &st) != 0 && errno == ENOENT))
		return -1;
	if (argc > REGISTRAR_ARGS_MAX) {
		cli_warn("too many arguments for the registrar service");
		return EXIT_USAGE;
	}
	words[0] = cli_cmd->name;
	for (i = 0; i < argc; i++)
		words[i + 1] = argv[i];
	words[argc + 1] = NULL;
	return cli_registrar_forward(path, argc + 1, words);
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct settings	 e;
	const char	*dir = NULL;
	int		 ch, words;

	while ((ch = getopt_long(argc, argv, "+d:hV", opts, NULL)) != -1)
		switch (ch) {
		case 'd':
			dir = optarg;
			break;
		case 'h':
			print_main(stdout);
			return EXIT_OK;
		case 'V':
			print_version();
			return EXIT_OK;
		default:
			return main_usage();
		}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return main_usage();
	if (strcmp(argv[0], "help") == 0)
		return help(argc - 1, argv + 1);
	if (strcmp(argv[0], "version") == 0 && argc == 1) {
		print_version();
		return EXIT_OK;
	}
	if ((cli_cmd = find_cmd(argc, argv, &words)) == NULL) {
		if (argc == 1 && is_group(argv[0])) {
			group_usage(stdout, argv[0]);
			return EXIT_OK;
		}
		return unknown(argc, argv);
	}
	argc -= words - 1;
	argv += words - 1;
	if (wants_help(argc, argv))
		return cmd_help(cli_cmd);
	if ((argc = take_dir(argc, argv, &dir)) < 0)
		return cli_usage();
	if (dir == NULL && (words = registrar_route(argc, argv)) >= 0)
		return words;
	if (util_init() != 0) {
		cli_warn("libsodium failed to initialise");
		return EXIT_FAIL;
	}
	if (env_setup(&e, dir, cli_cmd->need != NOLOC) != 0)
		return EXIT_USAGE;
	if (check_dir(&e, cli_cmd, argc, argv) != 0)
		return EXIT_FAIL;
	optind = 0;	/* reset getopt for the subcommand */
	return cli_cmd->fn(&e, argc, argv);
}
