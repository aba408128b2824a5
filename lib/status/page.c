/*
 * status/page.c: the status page (status/page.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>
#include <sodium.h>

#include "status/page.h"

/* The page's one style sheet; the CSP names it by its hash. */
static const char style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}"
    "h1{font-size:1.4em;margin:0}h2{font-size:1.1em;margin:1.2em 0 .4em}"
    "table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}"
    "th{background:#f3f3f3}td.t,th.t{text-align:left}"
    ".ok{color:#1a7f37}.bad{color:#b42318;font-weight:bold}"
    ".muted{color:#666}.err{max-width:40em;overflow-wrap:anywhere}"
    "svg{display:block;margin:.3em 0}"
    ".key{display:inline-block;margin-right:1em}"
    ".key svg{display:inline;margin:0 .3em 0 0}";

/* Colours of the chart's words; others are grey. */
static const struct {
	const char	*word, *colour;
} colours[] = {
	{ "accepted", "#1a7f37" }, { "delivered", "#1a7f37" },
	{ "duplicate", "#6e9fd4" }, { "recorded", "#8fbc8f" },
	{ "stale", "#b8a04a" }, { "ignored", "#aaaaaa" },
	{ "conflict", "#e07b00" }, { "retry", "#e07b00" },
	{ "action_conflict", "#c4581c" }, { "unknown", "#7a4fb5" },
	{ "unauthorized", "#d4453a" }, { "malformed", "#b42318" },
	{ "unknown_job", "#9c2a1f" }, { "dead", "#7f1d1d" },
	{ "unavailable", "#5a1111" },
};

#define CHART_W		720	/* 60 bars of 12 */
#define CHART_H		120

/* s as text or an attribute's value: every markup character escaped. */
static void
esc(const struct status_out *p, const char *s)
{
	const char	*e;
	size_t		 n;

	if (s == NULL)
		return;
	while (*s != '\0') {
		n = strcspn(s, "&<>\"'");
		if (n > 0)
			p->put(p->arg, s, n);
		s += n;
		switch (*s) {
		case '&': e = "&amp;"; break;
		case '<': e = "&lt;"; break;
		case '>': e = "&gt;"; break;
		case '"': e = "&quot;"; break;
		case '\'': e = "&#39;"; break;
		default: return;
		}
		p->put(p->arg, e, strlen(e));
		s++;
	}
}

/* ms as "2026-12-02 13:45:07Z", or "never" for 0. */
static void
when(const struct status_out *p, int64_t ms)
{
	struct tm	tm;
	time_t		t = (time_t)(ms / 1000);
	char		buf[32];

	if (ms <= 0 || gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%SZ", &tm) == 0) {
		status_outf(p, "<span class=\"muted\">never</span>");
		return;
	}
	status_outf(p, "<time>%s</time>", buf);
}

static const char *
colour(const char *word)
{
	size_t	i;

	for (i = 0; i < sizeof(colours) / sizeof(colours[0]); i++)
		if (strcmp(colours[i].word, word) == 0)
			return colours[i].colour;
	return "#999999";
}

static char	csp[192];
static pthread_once_t csp_once = PTHREAD_ONCE_INIT;

static void
csp_make(void)
{
	unsigned char	h[crypto_hash_sha256_BYTES];
	char		b64[sodium_base64_ENCODED_LEN(sizeof(h),
			    sodium_base64_VARIANT_ORIGINAL)];

	(void)crypto_hash_sha256(h, (const unsigned char *)style,
	    sizeof(style) - 1);
	(void)sodium_bin2base64(b64, sizeof(b64), h, sizeof(h),
	    sodium_base64_VARIANT_ORIGINAL);
	(void)snprintf(csp, sizeof(csp), "default-src 'none'; style-src"
	    " 'sha256-%s'; base-uri 'none'; form-action 'none';"
	    " frame-ancestors 'none'", b64);
}

const char *
status_page_csp(void)
{
	(void)pthread_once(&csp_once, csp_make);
	return csp;
}

static void
health(const struct status_out *p, const struct status_view *v, const char *why)
{
	int64_t	age;

	status_outf(p, "<h2>Health</h2><p>Callbacks: ");
	if (why == NULL)
		status_outf(p, "<span id=\"health\" class=\"ok\">ok</span>");
	else {
		status_outf(p, "<span id=\"health\" class=\"bad\">unavailable</span>: ");
		esc(p, why);
	}
	status_outf(p, "</p><p>Dispatcher heartbeat: ");
	when(p, v->heartbeat_ms);
	if (v->heartbeat_ms > 0) {
		age = store_age(v->heartbeat_ms, v->now_ms);
		status_outf(p, " (<span id=\"heartbeat-age\">%lld</span> s ago%s)",
		    (long long)age, age > STATUS_HEARTBEAT_STALE_S ?
		    ", <span class=\"bad\">no"
		    " dispatcher is recording</span>" : "");
	}
	status_outf(p, "</p>\n");
}

static void
actions(const struct status_out *p, const struct status_view *v)
{
	const struct store_counts	*c = &v->counts;
	enum store_state		 i;

	status_outf(p, "<h2>Actions</h2><table><tr>");
	for (i = 0; i < STORE_STATE__N; i++)
		status_outf(p, "<th>%s</th>", store_state_name(i));
	status_outf(p, "<th>oldest pending</th><th>open conflicts</th></tr><tr>");
	for (i = 0; i < STORE_STATE__N; i++)
		status_outf(p, "<td id=\"outbox-%s\">%lld</td>", store_state_name(i),
		    (long long)c->outbox[i]);
	status_outf(p, "<td><span id=\"oldest-pending\">%lld</span> s</td>"
	    "<td id=\"conflicts-open\">%lld</td></tr></table>\n",
	    (long long)store_counts_age(c, v->now_ms),
	    (long long)c->conflicts_open);
	status_outf(p, "<p>Unknown outcomes awaiting reconciliation: <span"
	    " id=\"unknown-outcomes\"%s>%lld</span>.</p>\n",
	    c->outbox[STORE_UNKNOWN] > 0 ? " class=\"bad\"" : "",
	    (long long)c->outbox[STORE_UNKNOWN]);
}

static void
destinations(const struct status_out *p, const struct status_view *v)
{
	const struct store_dest_gauge	*g;
	int				 i;

	status_outf(p, "<h2>Destinations</h2>");
	if (v->ndests == 0) {
		status_outf(p, "<p class=\"muted\">None with actions or deliveries"
		    " yet.</p>\n");
		return;
	}
	status_outf(p, "<table><tr><th class=\"t\">destination</th><th>backlog</th>"
	    "<th>oldest pending</th><th>unknown</th><th>dead</th>"
	    "<th class=\"t\">last delivery</th><th class=\"t\">last error"
	    "</th></tr>\n");
	for (i = 0; i < v->ndests; i++) {
		g = &v->dests[i].g;
		status_outf(p, "<tr><td class=\"t\" id=\"dest-%d-name\">", i);
		esc(p, g->destination);
		status_outf(p, "</td><td id=\"dest-%d-backlog\">%lld</td>"
		    "<td><span id=\"dest-%d-oldest\">%lld</span> s</td>"
		    "<td id=\"dest-%d-unknown\">%lld</td>"
		    "<td id=\"dest-%d-dead\">%lld</td><td class=\"t\">", i,
		    (long long)(g->n[STORE_PENDING] + g->n[STORE_LEASED]), i,
		    (long long)store_age(g->oldest_ms, v->now_ms), i,
		    (long long)g->n[STORE_UNKNOWN], i,
		    (long long)g->n[STORE_DEAD]);
		when(p, v->dests[i].delivered_ms);
		status_outf(p, "</td><td class=\"t err\" id=\"dest-%d-error\">", i);
		if (g->error_ms > 0) {
			esc(p, g->error);
			status_outf(p, " <span class=\"muted\">(");
			when(p, g->error_ms);
			status_outf(p, ")</span>");
		}
		status_outf(p, "</td></tr>\n");
	}
	status_outf(p, "</table>\n");
}

/* A string member of a JSON row, or "". */
static const char *
str(const cJSON *row, const char *name)
{
	const cJSON	*x = cJSON_GetObjectItemCaseSensitive(row, name);

	return cJSON_IsString(x) ? x->valuestring : "";
}

/* A number member of a JSON row, or 0. */
static int64_t
num(const cJSON *row, const char *name)
{
	const cJSON	*x = cJSON_GetObjectItemCaseSensitive(row, name);

	return cJSON_IsNumber(x) ? (int64_t)x->valuedouble : 0;
}

/* The destinations held back or failing: circuit, pause, hold, in flight. */
static void
circuits(const struct status_out *p, const struct status_view *v)
{
	const cJSON	*row;
	int		 i = 0;

	status_outf(p, "<h2>Circuits and pauses</h2>");
	if (cJSON_GetArraySize(v->circuits) == 0) {
		status_outf(p, "<p class=\"muted\">Every destination's circuit"
		    " is closed, none paused, none failing.</p>\n");
		return;
	}
	status_outf(p, "<p>A destination's circuit opens after failures in a"
	    " row: nothing but a probe goes to it until one succeeds, and its"
	    " actions' retry horizon does not run (<code>hookbox destination"
	    " pause</code> and <code>resume</code> do the same by hand)."
	    "</p><table><tr><th class=\"t\">destination</th>"
	    "<th class=\"t\">tenant</th><th class=\"t\">circuit</th>"
	    "<th>failures</th><th>in flight</th><th class=\"t\">next probe"
	    "</th><th class=\"t\">held until</th><th class=\"t\">paused"
	    "</th></tr>\n");
	cJSON_ArrayForEach(row, v->circuits) {
		status_outf(p, "<tr><td class=\"t\" id=\"circuit-%d-name\">",
		    i);
		esc(p, str(row, "destination"));
		status_outf(p, "</td><td class=\"t\">");
		esc(p, str(row, "tenant"));
		status_outf(p, "</td><td class=\"t\" id=\"circuit-%d-state\">",
		    i);
		esc(p, str(row, "circuit"));
		status_outf(p, "</td><td id=\"circuit-%d-failures\">%lld</td>"
		    "<td id=\"circuit-%d-in-flight\">%lld</td><td class=\"t\">",
		    i, (long long)num(row, "failures"), i,
		    (long long)num(row, "in_flight"));
		when(p, num(row, "probe_at"));
		status_outf(p, "</td><td class=\"t\">");
		when(p, num(row, "held_until"));
		status_outf(p, "</td><td class=\"t\" id=\"circuit-%d-paused\">",
		    i);
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(row,
		    "paused")))
			when(p, num(row, "paused_at"));
		else
			status_outf(p, "no");
		status_outf(p, "</td></tr>\n");
		i++;
	}
	status_outf(p, "</table>\n");
}

/*
 * The oldest of the actions an operator must settle, rows (id prefix
 * kind: "dead", "unknown"), of total, under title, with what to run
 * (HTML) for them.
 */
static void
unsettled(const struct status_out *p, const char *title, const char *kind,
    const cJSON *rows, int64_t total, const char *todo)
{
	const cJSON	*row, *n;
	int		 i = 0;

	status_outf(p, "<h2>%s</h2>", title);
	if (cJSON_GetArraySize(rows) == 0) {
		status_outf(p, "<p class=\"muted\">None.</p>\n");
		return;
	}
	status_outf(p, "<p>The oldest %d of %lld (<code>hookbox list --state %s"
	    "</code> lists them all; %s).</p><table><tr><th class=\"t\">action"
	    "</th><th class=\"t\">destination</th><th>attempts</th>"
	    "<th class=\"t\">last error</th></tr>\n",
	    cJSON_GetArraySize(rows), (long long)total, kind, todo);
	cJSON_ArrayForEach(row, rows) {
		n = cJSON_GetObjectItemCaseSensitive(row, "attempts");
		status_outf(p, "<tr><td class=\"t\" id=\"%s-%d-action\">",
		    kind, i);
		esc(p, str(row, "action"));
		status_outf(p, "</td><td class=\"t\">");
		esc(p, str(row, "destination"));
		status_outf(p, "</td><td>%lld</td><td class=\"t err\""
		    " id=\"%s-%d-error\">", cJSON_IsNumber(n) ?
		    (long long)n->valuedouble : 0LL, kind, i);
		esc(p, str(row, "last_error"));
		status_outf(p, "</td></tr>\n");
		i++;
	}
	status_outf(p, "</table>\n");
}

/* One stacked bar per minute of kind's words, and a key with totals. */
static void
chart(const struct status_out *p, const struct status_view *v, const char *kind,
    const char *title)
{
	struct status_hour	*h;
	struct tm		 tm;
	time_t			 t;
	int64_t			 top = 0, sum;
	char			 hm[8];
	int			 i, w, y, bar;

	if ((h = malloc(sizeof(*h))) == NULL)
		return;
	status_hour(v, kind, h);
	for (i = 0; i < METRICS_MINUTES; i++) {
		for (sum = 0, w = 0; w < h->nwords; w++)
			sum += h->counts[i][w];
		if (sum > top)
			top = sum;
	}
	status_outf(p, "<h3>%s per minute</h3>", title);
	status_outf(p, "<svg id=\"chart-%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0"
	    " %d %d\" role=\"img\" aria-label=\"%s per minute, the last"
	    " hour\"><rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\""
	    " fill=\"#fafafa\" stroke=\"#ddd\"/>", kind, CHART_W, CHART_H + 16,
	    CHART_W, CHART_H + 16, title, CHART_W, CHART_H);
	for (i = 0; top > 0 && i < METRICS_MINUTES; i++) {
		y = CHART_H;
		t = (time_t)((h->first + i) * 60);
		if (gmtime_r(&t, &tm) == NULL ||
		    strftime(hm, sizeof(hm), "%H:%M", &tm) == 0)
			hm[0] = '\0';
		for (w = 0; w < h->nwords; w++) {
			if (h->counts[i][w] == 0)
				continue;
			bar = (int)(h->counts[i][w] * (CHART_H - 4) / top);
			if (bar < 1)
				bar = 1;
			y -= bar;
			status_outf(p, "<rect x=\"%d\" y=\"%d\" width=\"10\""
			    " height=\"%d\" fill=\"%s\"><title>%s ", i * 12 + 1,
			    y, bar, colour(h->words[w]), hm);
			esc(p, h->words[w]);
			status_outf(p, ": %lld</title></rect>",
			    (long long)h->counts[i][w]);
		}
	}
	status_outf(p, "<text x=\"0\" y=\"%d\" font-size=\"11\">-60 min</text>"
	    "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">"
	    "now (top: %lld)</text></svg>\n<p>", CHART_H + 13, CHART_W,
	    CHART_H + 13, (long long)top);
	if (h->nwords == 0)
		status_outf(p, "<span class=\"muted\">None in the last hour.</span>");
	for (w = 0; w < h->nwords; w++) {
		status_outf(p, "<span class=\"key\"><svg width=\"10\" height=\"10\""
		    "><rect width=\"10\" height=\"10\""
		    " fill=\"%s\"/></svg>", colour(h->words[w]));
		esc(p, h->words[w]);
		status_outf(p, ": <span id=\"%s-", kind);
		esc(p, h->words[w]);
		status_outf(p, "\">%lld</span></span>", (long long)h->total[w]);
	}
	status_outf(p, "</p>\n");
	free(h);
}

void
status_page(const struct status_view *v, const char *why, status_put_fn put,
    void *arg)
{
	const struct status_out	 p = { put, arg };

	status_outf(&p, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta"
	    " charset=\"utf-8\"><meta name=\"viewport\" content=\"width="
	    "device-width\"><meta http-equiv=\"refresh\" content=\"30\">"
	    "<title>hookbox status</title><style>");
	put(arg, style, sizeof(style) - 1);
	status_outf(&p, "</style></head><body>\n<h1>hookbox %s</h1><p class=\"muted\">"
	    "As of ", HB_VERSION);
	when(&p, v->now_ms);
	status_outf(&p, "; this page refreshes every 30 s.</p>\n");
	health(&p, v, why);
	actions(&p, v);
	destinations(&p, v);
	circuits(&p, v);
	unsettled(&p, "Dead actions", "dead", v->dead,
	    v->counts.outbox[STORE_DEAD], "<code>hookbox requeue</code> sends"
	    " one again, or every one a filter names: <code>hookbox requeue"
	    " --dry-run --destination D</code>");
	unsettled(&p, "Unknown outcomes", "unknown", v->unknown,
	    v->counts.outbox[STORE_UNKNOWN], "each was sent, and its answer"
	    " never came: ask the destination, then <code>hookbox reconcile"
	    " --delivered ACTION</code> if it has it, <code>--resend"
	    " ACTION</code> if not, or <code>hookbox requeue --state unknown"
	    " --dry-run</code> for many");
	status_outf(&p, "<h2>The last hour</h2>");
	chart(&p, v, "requests", "Requests by result");
	chart(&p, v, "deliveries", "Deliveries by outcome");
	status_outf(&p, "</body></html>\n");
}
