#!/bin/sh
# tests/e2e/output.sh: the tool's read-outs (tables, --json, filters, --limit,
# redaction, unknown rows), job import at volume, and prune of ended jobs,
# on real files.
# Usage: tests/e2e/output.sh PATH_TO_HOOKBOX
set -u
HB=$(readlink -f "${1:?usage: output.sh HOOKBOX}")
here=$(dirname "$0")
. "$here/../helpers/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOOKBOX_DIR="$tmp/data"

# JSON is checked with sqlite3's JSON functions (sqlite3 is needed
# anyway), on the file $tmp/json.

# Exit 0 when $tmp/json is one JSON document.
valid_json() {
	[ "$(sqlite3 :memory: "SELECT json_valid(readfile('$tmp/json'))")" = 1 ]
}

# Exit 0 when every field named *_at of every row of the JSON array in
# $tmp/json is null or an integer count of unix milliseconds within a day
# of now, and at least one is.
ms_times() {
	_now=$(($(date +%s) * 1000))
	sqlite3 :memory: "SELECT sum(f.type != 'integer' OR
	    abs(f.value - $_now) > 86400000), count(*)
	    FROM json_each(readfile('$tmp/json')) r, json_each(r.value) f
	    WHERE f.key LIKE '%\\_at' ESCAPE '\\' AND f.type != 'null'" |
	    grep -qx '0|[1-9][0-9]*'
}

# The length of the JSON array in $tmp/json.
json_len() {
	sqlite3 :memory: "SELECT json_array_length(readfile('$tmp/json'))"
}

# Exit 0 when every column of the table on standard input starts at the
# same offset on every line as in its heading: for each heading word that
# starts a column, the character before it is a space (or it is the first)
# and, on every row, the character there is not a space (the column's
# cells in this test are all filled).  "…" counts as one character.
aligned() {
	sed 's/…/~/g' | awk '
	NR == 1 {
		n = 0
		for (i = 1; i <= length($0); i++) {
			c = substr($0, i, 1)
			if (c != " " && (i == 1 || substr($0, i - 2, 2) == "  "))
				start[++n] = i
		}
		next
	}
	{
		for (k = 1; k <= n; k++) {
			i = start[k]
			if (substr($0, i, 1) == " " ||
			    (i > 1 && substr($0, i - 1, 1) != " "))
				bad = 1
		}
	}
	END { exit bad || n < 2 }'
}

"$HB" init >/dev/null
"$HB" tenant add acme
"$HB" tenant add --status-base https://api.example.com/v1 beta-tenant
"$HB" destination add sink --tenant acme --url http://127.0.0.1:9/sink
printf 'hmac-secret-0123' | "$HB" endpoint add tornado --tenant acme \
    --secret-file -
"$HB" destination add creds --tenant acme \
    --url 'https://user:pass@host/x?token=abc&a=1' \
    --status-url 'https://h/status?API_Key=k1&sig=s2&page=3'
"$HB" destination add bsink --tenant beta-tenant --url http://127.0.0.1:9/b
"$HB" job add j1 --tenant acme --attempt att-1 --step s1 --destination sink \
    --source-url https://src.example.com/a --output '{"k":1}'
"$HB" job add job-with-a-longer-id --tenant acme --attempt att-22 \
    --step step-two --destination creds \
    --source-url https://src.example.com/a/very/long/path/that/is/cut/short \
    --output '{"k":22}'
"$HB" job add bj --tenant beta-tenant --attempt b --step s \
    --destination bsink --source-url https://b.example.com/ --output '{}'

# ---- tables -----------------------------------------------------------
out=$("$HB" job list)
contains "job list: a heading" "TENANT" "$out"
contains "job list: a UTC time" "$(date -u +%Y-%m-%d) " "$out"
printf '%s\n' "$out" | aligned
eq "job list: every column starts at its heading's offset" 0 $?
printf '%s\n' "$out" | grep -q ' $'
eq "job list: no trailing spaces" 1 $?
contains "a long cell is cut with an ellipsis" "https://src.example.com/a/very/long/pat…" "$out"
lacks "and not printed whole" "cut/short" "$out"
printf 'x  y\nab  c\n' | aligned
eq "the alignment check itself fails on a ragged table" 1 $?
for c in "tenant list" "endpoint list" "destination list"; do
	# shellcheck disable=SC2086
	out=$("$HB" $c)
	eq "$c: no trailing spaces" "" "$(printf '%s\n' "$out" | grep ' $')"
done
out=$("$HB" tenant list)
printf '%s\n' "$out" | sed -n '1p;3p' | aligned
eq "tenant list: columns line up" 0 $?

# Actions, attempts and a conflict to read: a completion observed, one
# failed delivery (port 9 refuses), and a contradicting failure.
printf '%s' '{"id":"j1","status":"Completed"}' |
    "$HB" observe --tenant acme >/dev/null
printf '%s' '{"id":"bj","status":"Completed"}' |
    "$HB" observe --tenant beta-tenant >/dev/null
out=$("$HB" list --state pending)
eq "list before any attempt: empty number cells leave no trailing spaces" "" \
    "$(printf '%s\n' "$out" | grep ' $')"
"$HB" dispatch --once >/dev/null 2>&1
printf '%s' '{"id":"j1","status":"Failed"}' |
    "$HB" observe --tenant acme >/dev/null
out=$("$HB" list --state pending)
contains "list: the action in full" "acme:att-1:s1" "$out"
contains "list: its destination" "sink" "$out"
eq "list: a heading and two rows" 3 "$(printf '%s\n' "$out" | wc -l)"
eq "list: no trailing spaces" "" "$(printf '%s\n' "$out" | grep ' $')"
out=$("$HB" attempts acme:att-1:s1)
contains "attempts: a table" "STARTED" "$out"
contains "attempts: the refused connection" "1  " "$out"
out=$("$HB" conflicts)
contains "conflicts: a table" "RECORDED" "$out"
contains "conflicts: the job" "j1" "$out"

# ---- --json: valid, times in unix milliseconds ------------------------
for c in "tenant list" "endpoint list" "destination list" "job list" \
    "list --state pending" "attempts acme:att-1:s1" "conflicts"; do
	# shellcheck disable=SC2086
	"$HB" $c --json > "$tmp/json"; rc=$?
	eq "$c --json: exit" 0 $rc
	valid_json
	eq "$c --json: valid JSON" 0 $?
	ms_times
	eq "$c --json: times in unix ms" 0 $?
done

# ---- filters --------------------------------------------------------
out=$("$HB" job list --tenant beta-tenant)
contains "job list --tenant: its job" "bj" "$out"
lacks "job list --tenant: no other tenant's" "j1" "$out"
out=$("$HB" list --state pending --destination bsink --json)
contains "list --destination: its action" "beta-tenant:b:s" "$out"
lacks "list --destination: no other destination's" "acme:" "$out"
out=$("$HB" list --state pending --tenant acme --json)
lacks "list --tenant: no other tenant's" "beta-tenant" "$out"
out=$("$HB" job list --since 1h --json)
contains "--since 1h: today's jobs" '"j1"' "$out"
out=$("$HB" job list --since 2099-01-01 --json)
eq "--since a later date: none" "[]" "$out"
out=$("$HB" list --state pending --since 2099-01-01T00:00:00Z --json)
eq "--since a later time: none" "[]" "$out"
out=$("$HB" conflicts --since 2000-01-01 --json)
contains "--since an earlier date: all" '"j1"' "$out"
"$HB" job list --since yesterday 2>"$tmp/err"; eq "--since bogus" 2 $?
contains "--since says what it takes" "YYYY-MM-DD" "$(cat "$tmp/err")"
# A day its month has not is no date (the one date parser's rule).
"$HB" job list --since 2026-02-31 2>"$tmp/err"; eq "--since no such day" 2 $?

# ---- --limit and the cap ----------------------------------------------
seq 1 150 | awk '{printf "{\"job_id\":\"many-%03d\",\"attempt\":\"m%d\",\"step\":\"s\",\"destination\":\"sink\"}\n", $1, $1}' |
    "$HB" job import --tenant acme - >/dev/null
"$HB" job list >"$tmp/out" 2>"$tmp/err"
eq "the default cap: 100 rows and a heading" 101 "$(wc -l < "$tmp/out")"
contains "the cap is stated" "(100 rows shown; more exist: --limit N)" \
    "$(cat "$tmp/err")"
"$HB" job list --limit 2 --json >"$tmp/json" 2>"$tmp/err"
eq "--limit 2 --json: two rows" 2 "$(json_len)"
contains "--limit 2: stated" "(2 rows shown; more exist" "$(cat "$tmp/err")"
"$HB" job list --limit 1000 >"$tmp/out" 2>"$tmp/err"
eq "--limit 1000: all 153 rows" 154 "$(wc -l < "$tmp/out")"
eq "--limit 1000: no note" "" "$(cat "$tmp/err")"
"$HB" list --state pending --limit 1 >/dev/null 2>"$tmp/err"
contains "list --limit 1: stated" "(1 rows shown" "$(cat "$tmp/err")"
"$HB" conflicts --all --limit 1 >/dev/null 2>"$tmp/err"; eq "conflicts --limit" 0 $?
"$HB" attempts --limit 1 acme:att-1:s1 >/dev/null 2>&1
eq "attempts --limit" 0 $?
"$HB" job list --limit 0 2>/dev/null; eq "--limit 0 refused" 2 $?

# ---- redaction --------------------------------------------------------
for f in "" --json; do
	out=$("$HB" destination list $f)
	contains "destination list $f: user:pass@ masked" "https://***@host/x?token=***&a=1" "$out"
	lacks "destination list $f: no password" "pass@" "$out"
	lacks "destination list $f: no token" "abc" "$out"
	contains "destination list $f: status URL masked" "API_Key=***&sig=***&page=3" "$out"
	lacks "destination list $f: no status key" "k1" "$out"
done
out=$("$HB" destination list)
contains "destination list: plain URLs as they are" "http://127.0.0.1:9/sink" "$out"

# ---- unknown rows exit 1 ----------------------------------------------
"$HB" attempts nosuch 2>"$tmp/err"; eq "attempts nosuch" 1 $?
eq "attempts nosuch says so" "hookbox: action nosuch: no such action" \
    "$(cat "$tmp/err")"
"$HB" requeue nosuch 2>"$tmp/err"; eq "requeue nosuch" 1 $?
eq "requeue nosuch says so" "hookbox: action nosuch: no such action" \
    "$(cat "$tmp/err")"
"$HB" reconcile --delivered nosuch 2>"$tmp/err"; eq "reconcile --delivered nosuch" 1 $?
contains "reconcile nosuch says so" "no such action" "$(cat "$tmp/err")"
"$HB" reconcile --resend nosuch 2>"$tmp/err"; eq "reconcile --resend nosuch" 1 $?
contains "reconcile --resend nosuch says so" "no such action" "$(cat "$tmp/err")"
"$HB" requeue acme:att-1:s1 2>"$tmp/err"; eq "requeue of a pending action" 1 $?
eq "says what it is" "hookbox: action acme:att-1:s1: pending, not dead or unknown" \
    "$(cat "$tmp/err")"
"$HB" resolve 999 2>"$tmp/err"; eq "resolve 999" 1 $?
eq "resolve 999 says so" "hookbox: conflict 999: no such conflict" "$(cat "$tmp/err")"
"$HB" conflicts --json > "$tmp/json"
id=$(sqlite3 :memory: "SELECT json_extract(readfile('$tmp/json'), '\$[0].id')")
"$HB" resolve "$id"; eq "resolve an open conflict" 0 $?
"$HB" resolve "$id" 2>"$tmp/err"; eq "resolve it again" 1 $?
contains "already resolved" "already resolved" "$(cat "$tmp/err")"
"$HB" job list --tenant nosuch 2>"$tmp/err"; eq "job list --tenant nosuch" 1 $?
eq "says so" "hookbox: tenant nosuch: no such tenant" "$(cat "$tmp/err")"
"$HB" list --state pending --destination nosuch 2>"$tmp/err"
eq "list --destination nosuch" 1 $?
eq "says so" "hookbox: destination nosuch: no such destination" "$(cat "$tmp/err")"
"$HB" list --state pending --tenant beta-tenant --destination sink 2>/dev/null
eq "list --destination of another tenant" 1 $?
"$HB" conflicts --tenant nosuch 2>/dev/null; eq "conflicts --tenant nosuch" 1 $?
"$HB" endpoint list --tenant nosuch 2>/dev/null; eq "endpoint list --tenant nosuch" 1 $?

# ---- job import -------------------------------------------------------
cat > "$tmp/bad.jsonl" <<'EOF'
{"tenant":"acme","job_id":"i1","attempt":"ia","step":"s1","destination":"sink","output":{"k":"v"}}

{"tenant":"acme","job_id":"i2","attempt":"ia","destination":"sink"}
not json
{"tenant":"acme","job_id":"i3","attempt":"ia","step":"s3","destination":"nowhere"}
{"tenant":"acme","job_id":"i4","attempt":"ia","step":"s4","destination":"sink","colour":"red"}
{"tenant":"acme","job_id":"i5","attempt":"ia","step":"s5","destination":"sink","output":"x"}
{"tenant":"acme","job_id":"i6","attempt":"bad name","step":"s6","destination":"sink"}
{"job_id":"i7","attempt":"ia","step":"s7","destination":"sink"}
{"tenant":"acme","job_id":"i8","attempt":"ia","step":"s8","destination":"sink","source_url":"https://s/8"}
EOF
out=$("$HB" job import "$tmp/bad.jsonl" 2>"$tmp/err"); rc=$?
eq "bad lines: exit 1" 1 $rc
eq "bad lines: the good ones count" "imported 2 jobs, 0 already present, 7 bad lines" "$out"
err=$(cat "$tmp/err")
contains "line 3: missing step" "line 3: missing \"step\"" "$err"
contains "line 4: not JSON" "line 4: not JSON" "$err"
contains "line 5: no such destination" "line 5: job i3: tenant acme has no destination nowhere" "$err"
contains "line 6: unknown field" "line 6: unknown field \"colour\"" "$err"
contains "line 7: output not an object" "line 7: \"output\" is not a JSON object" "$err"
contains "line 8: invalid attempt" "line 8: job i6: invalid attempt" "$err"
contains "line 9: no tenant" "line 9: missing \"tenant\"" "$err"
eq "the good lines were committed" "i1 i8" \
    "$(sqlite3 "$HOOKBOX_DIR/config.db" "SELECT group_concat(job_id, ' ') FROM jobs WHERE job_id LIKE 'i%' ORDER BY job_id")"
eq "output stored as JSON" '{"k":"v"}' \
    "$(sqlite3 "$HOOKBOX_DIR/config.db" "SELECT output FROM jobs WHERE job_id = 'i1'")"
printf '%s\n' '{"tenant":"acme","job_id":"i1","attempt":"ia","step":"other","destination":"sink"}' |
    "$HB" job import >/dev/null 2>"$tmp/err"
eq "the same job with other fields: bad" 1 $?
contains "and names the difference" 'line 1: job i1: exists already with step "s1", not "other"' "$(cat "$tmp/err")"
# One job per tenant, attempt and step, as job add has it: a line whose
# action another job holds (stored, or an earlier line) is bad.
printf '%s\n' '{"tenant":"acme","job_id":"i9","attempt":"ia","step":"s1","destination":"sink"}' \
    '{"tenant":"acme","job_id":"i10","attempt":"ib","step":"s","destination":"sink"}' \
    '{"tenant":"acme","job_id":"i11","attempt":"ib","step":"s","destination":"sink"}' |
    "$HB" job import > "$tmp/out" 2>"$tmp/err"
eq "a second job for an action: bad" 1 $?
eq "the other line is taken" "imported 1 jobs, 0 already present, 2 bad lines" \
    "$(cat "$tmp/out")"
contains "a stored job's action: says whose" \
    "line 1: job i9: attempt ia and step s1 of tenant acme already belong to job i1" \
    "$(cat "$tmp/err")"
contains "an earlier line's action: says whose" \
    "line 3: job i11: attempt ib and step s of tenant acme already belong to job i10" \
    "$(cat "$tmp/err")"
eq "the config.db has the index the look-up uses" 1 \
    "$(sqlite3 "$HOOKBOX_DIR/config.db" "SELECT count(*) FROM sqlite_master WHERE name = 'jobs_action'")"
printf '%s\n' '{"tenant":"beta-tenant","job_id":"x","attempt":"a","step":"s","destination":"bsink"}' |
    "$HB" job import --tenant acme - >/dev/null 2>"$tmp/err"
eq "a line of another tenant than --tenant" 1 $?
contains "and says so" "line 1: \"tenant\" is not acme" "$(cat "$tmp/err")"
"$HB" job import --tenant nosuch "$tmp/bad.jsonl" >/dev/null 2>&1
eq "import --tenant nosuch" 1 $?
"$HB" job import "$tmp/none.jsonl" >/dev/null 2>&1
eq "import of a missing file" 1 $?
# A NUL byte is a bad line of its own: the lines after it are read.
printf '%s\n' '{"tenant":"acme","job_id":"n1","attempt":"na","step":"s1","destination":"sink"}' > "$tmp/nul.jsonl"
printf '{"tenant":"acme","job_id":"n2",\000"attempt":"nb","step":"s1","destination":"sink"}\n' >> "$tmp/nul.jsonl"
printf '%s\n' '{"tenant":"acme","job_id":"n3","attempt":"nc","step":"s1","destination":"sink"}' \
    '{"tenant":"acme","job_id":"n4","attempt":"nd","step":"s1","destination":"sink"}' >> "$tmp/nul.jsonl"
out=$("$HB" job import "$tmp/nul.jsonl" 2>"$tmp/err"); rc=$?
eq "a NUL byte: exit 1" 1 $rc
eq "a NUL byte: the other lines count" "imported 3 jobs, 0 already present, 1 bad lines" "$out"
eq "a NUL byte: named, with its line" "hookbox: $tmp/nul.jsonl: line 2: holds a NUL byte" "$(cat "$tmp/err")"
eq "a NUL byte: the line after it is in" "n1 n3 n4" \
    "$(sqlite3 "$HOOKBOX_DIR/config.db" "SELECT group_concat(job_id, ' ') FROM (SELECT job_id FROM jobs WHERE job_id LIKE 'n_' ORDER BY job_id)")"

# Lines at the limit (16,384 bytes without the newline) and past it; the
# last line needs no newline.
j5='{"tenant":"acme","job_id":"n5","attempt":"ne","step":"s1","destination":"sink"}'
j6='{"tenant":"acme","job_id":"n6","attempt":"nf","step":"s1","destination":"sink"}'
{
	printf '%s%*s\n' "$j5" $((16384 - ${#j5})) ''
	printf '%s%*s\n' "$j6" $((16385 - ${#j6})) ''
	printf '%s' '{"tenant":"acme","job_id":"n7","attempt":"ng","step":"s1","destination":"sink"}'
} > "$tmp/long.jsonl"
out=$("$HB" job import "$tmp/long.jsonl" 2>"$tmp/err"); rc=$?
eq "a line past the limit: exit 1" 1 $rc
eq "a line past the limit: the others count" "imported 2 jobs, 0 already present, 1 bad lines" "$out"
eq "a line past the limit: named" "hookbox: $tmp/long.jsonl: line 2: longer than 16384 bytes" "$(cat "$tmp/err")"
eq "a line at the limit, and a last one without a newline, are in" "n5 n7" \
    "$(sqlite3 "$HOOKBOX_DIR/config.db" "SELECT group_concat(job_id, ' ') FROM (SELECT job_id FROM jobs WHERE job_id IN ('n5', 'n6', 'n7') ORDER BY job_id)")"

# 100,000 jobs: one transaction per 1,000 lines.  The time is printed, not
# judged: a loaded machine may take ten times as long (bench/ measures).
"$HB" destination add bulk --tenant beta-tenant --url http://127.0.0.1:9/bulk
seq 1 100000 | awk '{printf "{\"job_id\":\"bulk-%d\",\"attempt\":\"a%d\",\"step\":\"s\",\"destination\":\"bulk\",\"output\":{\"n\":%d}}\n", $1, $1, $1}' > "$tmp/big.jsonl"
t0=$(date +%s%N)
out=$("$HB" job import --tenant beta-tenant "$tmp/big.jsonl"); rc=$?
t1=$(date +%s%N)
eq "100,000 jobs: exit 0" 0 $rc
eq "100,000 jobs: counted" "imported 100000 jobs, 0 already present, 0 bad lines" "$out"
eq "100,000 jobs: stored" 100000 \
    "$(sqlite3 "$HOOKBOX_DIR/config.db" "SELECT count(*) FROM jobs WHERE destination = 'bulk'")"
ms=$(( (t1 - t0) / 1000000 ))
echo "job import: 100,000 jobs in $ms ms"
out=$("$HB" job import --tenant beta-tenant "$tmp/big.jsonl"); rc=$?
eq "again: exit 0" 0 $rc
eq "again: all present" "imported 0 jobs, 100000 already present, 0 bad lines" "$out"
# A bad line in the middle of a batch: the batch's other lines stay.
sed -n '1,10000p' "$tmp/big.jsonl" | sed '5500s/"step":"s",//' |
    sed -e 's/bulk-/again-/' -e 's/"attempt":"a/"attempt":"b/' |
    "$HB" job import --tenant beta-tenant --batch 1000 - >"$tmp/out" 2>"$tmp/err"
eq "one bad line of 10,000: exit 1" 1 $?
eq "it names its line" "hookbox: standard input: line 5500: missing \"step\"" "$(cat "$tmp/err")"
eq "and the rest are in" "imported 9999 jobs, 0 already present, 1 bad lines" "$(cat "$tmp/out")"
eq "its batch's other lines too" 999 \
    "$(sqlite3 "$HOOKBOX_DIR/config.db" "SELECT count(*) FROM jobs WHERE job_id LIKE 'again-%' AND CAST(substr(job_id, 7) AS INTEGER) BETWEEN 5001 AND 6000")"

# ---- prune: jobs that ended before the redelivery window -------------
old=$(( ($(date +%s) - 100 * 86400) * 1000 ))
new=$(( $(date +%s) * 1000 ))
sqlite3 "$HOOKBOX_DIR/state.db" ".timeout 5000" "
    INSERT INTO job_state(tenant, job_id, stage, terminal, updated_at) VALUES
    ('acme', 'many-001', 3, 'completed', $old),
    ('acme', 'many-002', 3, 'failed', $old),
    ('acme', 'many-003', 3, 'none', $old),
    ('acme', 'many-004', 3, 'completed', $new);
    INSERT INTO polls(tenant, job_id, polled_at) VALUES
    ('acme', 'many-001', $old), ('acme', 'many-003', $old);"
out=$("$HB" prune --keep-jobs); rc=$?
eq "prune --keep-jobs: exit 0" 0 $rc
contains "prune --keep-jobs: no ended jobs" "0 ended jobs, 0 poll marks" "$out"
eq "prune --keep-jobs: the jobs stay" 4 \
    "$(sqlite3 "$HOOKBOX_DIR/config.db" "SELECT count(*) FROM jobs WHERE job_id IN ('many-001','many-002','many-003','many-004')")"
out=$("$HB" prune); rc=$?
eq "prune: exit 0" 0 $rc
contains "prune: counts the ended jobs" "2 ended jobs, 1 poll marks" "$out"
eq "ended jobs left config.db" "many-003 many-004" \
    "$(sqlite3 "$HOOKBOX_DIR/config.db" "SELECT group_concat(job_id, ' ') FROM jobs WHERE job_id IN ('many-001','many-002','many-003','many-004') ORDER BY job_id")"
eq "and their job_state" "many-003 many-004" \
    "$(sqlite3 "$HOOKBOX_DIR/state.db" "SELECT group_concat(job_id, ' ') FROM job_state WHERE job_id LIKE 'many-%' ORDER BY job_id")"
eq "and their poll marks" "many-003" \
    "$(sqlite3 "$HOOKBOX_DIR/state.db" "SELECT group_concat(job_id, ' ') FROM polls WHERE job_id LIKE 'many-%'")"
out=$("$HB" prune --actions-days 1)
contains "nothing more in a second prune" "0 ended jobs" "$out"
# Metrics series of an endpoint and a destination that are gone go too;
# the configured ones, unknown, _health and _metrics stay.
sqlite3 "$HOOKBOX_DIR/state.db" ".timeout 5000" "
    INSERT INTO metrics(name, l1, l2, value) VALUES
    ('requests', 'tornado', 'accepted', 5),
    ('requests', 'gone-endpoint', 'accepted', 7),
    ('requests', 'unknown', 'method_not_allowed', 1),
    ('requests', '_health', 'ok', 2),
    ('deliveries', 'sink', 'test-outcome', 3),
    ('deliveries', 'gone-dest', 'retry', 4),
    ('delivery_le', 'gone-dest', '0.5', 4),
    ('delivery_count', 'gone-dest', '', 4),
    ('polls', '', 'answered', 9)"
out=$("$HB" prune); rc=$?
eq "prune with series of removed names: exit 0" 0 $rc
contains "prune: counts the series" "4 metrics series" "$out"
eq "the configured and the fixed series stay" \
    "deliveries/sink polls/ requests/_health requests/tornado requests/unknown" \
    "$(sqlite3 "$HOOKBOX_DIR/state.db" "SELECT group_concat(name || '/' || l1, ' ') FROM (SELECT name, l1 FROM metrics WHERE (l1 IN ('tornado', 'gone-endpoint', 'unknown', '_health', 'gone-dest', '') AND name <> 'heartbeat_ms') OR l2 = 'test-outcome' ORDER BY name, l1)")"
# A config.db it cannot write: the rest is pruned, the jobs are not, and
# the exit status says so.
mv "$HOOKBOX_DIR/config.db" "$tmp/config.db"
printf 'not a database' > "$HOOKBOX_DIR/config.db"
out=$("$HB" prune 2>"$tmp/err"); rc=$?
eq "prune with config.db unusable: exit 1" 1 $rc
contains "and says why" "ended jobs not pruned" "$(cat "$tmp/err")"
contains "after the rest" "pruned 0 receipts" "$out"
"$HB" prune --keep-jobs >/dev/null; eq "--keep-jobs needs no config.db" 0 $?
mv "$tmp/config.db" "$HOOKBOX_DIR/config.db"

# ---- list without --state: every state, filters kept ------------------
export HOOKBOX_DIR="$tmp/all"
"$HB" init >/dev/null
"$HB" tenant add acme
"$HB" tenant add other
"$HB" destination add once --tenant acme --url http://127.0.0.1:9/x \
    --max-attempts 1
"$HB" destination add osink --tenant other --url http://127.0.0.1:9/o
"$HB" job add d1 --tenant acme --attempt a1 --step s --destination once
"$HB" job add o1 --tenant other --attempt o1 --step s --destination osink
printf '%s' '{"id":"d1","status":"Completed"}' |
    "$HB" observe --tenant acme >/dev/null
"$HB" dispatch --once >/dev/null 2>&1
printf '%s' '{"id":"o1","status":"Completed"}' |
    "$HB" observe --tenant other >/dev/null
eq "list --state dead: the refused one" 1 \
    "$("$HB" list --state dead --json | grep -c '"acme:a1:s"')"
"$HB" list --json > "$tmp/json"; eq "list without --state: exit" 0 $?
eq "list without --state: both rows" 2 "$(json_len)"
contains "list without --state: the dead one" '"state":	"dead"' \
    "$(cat "$tmp/json")"
contains "list without --state: the pending one" '"state":	"pending"' \
    "$(cat "$tmp/json")"
eq "list --state all: the same" "$(cat "$tmp/json")" \
    "$("$HB" list --state all --json)"
out=$("$HB" list)
contains "list without --state: a table" "other:o1:s" "$out"
contains "list without --state: the state column" "dead" "$out"
out=$("$HB" list --tenant other --json)
contains "list --tenant: its action" "other:o1:s" "$out"
lacks "list --tenant: no other tenant's" "acme:a1:s" "$out"
out=$("$HB" list --state all --destination once --json)
contains "list --destination: its action" "acme:a1:s" "$out"
lacks "list --destination: no other's" "other:o1:s" "$out"
"$HB" list --limit 1 >/dev/null 2>"$tmp/err"
contains "list --limit 1: stated" "(1 rows shown" "$(cat "$tmp/err")"
eq "list --since a later date: none" "[]" \
    "$("$HB" list --since 2099-01-01 --json)"
"$HB" list --state bogus 2>"$tmp/err"; eq "list --state bogus" 2 $?
contains "list --state bogus: names all" "unknown or all" "$(cat "$tmp/err")"

finish output
