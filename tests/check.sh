#!/bin/sh
# tests/check.sh: every test, in the normal and the sanitizer build, and
# the code that runs threads in the ThreadSanitizer build.  Run by `make
# check` after the three builds; its closing line "check: N passed, N
# failed" counts individual checks and names every run that failed, with
# its failing tests and the start of each one's message: Check's
# "file:line:F|E|S:case:test:iteration: message" lines (S: in
# a fixture, or the test's process exiting non-zero after it, as one does
# on a sanitizer's report: "(null):-1:S:..."), the sanitizers' SUMMARY
# lines and the scripts' "FAIL: what" lines.
set -u
cd "$(dirname "$0")/.."
log=$(mktemp)
failures=""
# No one suite or script runs longer than this many seconds; the longest
# takes about 150 s on an idle 2-core machine.
limit=${HOOKBOX_TEST_LIMIT:-1200}

# run NAME CMD...: runs one suite or script, shows and keeps its output
# and how long it took, and notes it in $failures when it exits non-zero
# or reports a failing test (a timeout in Check is an error, not a
# failure: both count).
run() {
	_name=$1
	shift
	echo "== $_name"
	_t0=$(date +%s)
	# A hang is a failure with a name, not the end of the whole run.
	timeout -k 10 "$limit" "$@" > "$log.one" 2>&1
	_rc=$?
	[ "$_rc" -ne 124 ] || echo "FAIL: $_name: still running after" \
	    "$limit s, stopped" >> "$log.one"
	cat "$log.one"
	echo "-- $_name: $(($(date +%s) - _t0)) s"
	cat "$log.one" >> "$log"
	_what=$(sed -n \
	    -e 's/^[^ :]*:-\{0,1\}[0-9]*:[FES]:\([^:]*:[^:]*\):[0-9]*: \(.\{1,100\}\).*/\1: \2/p' \
	    -e 's/^SUMMARY: \([A-Za-z]*Sanitizer: .\{1,120\}\).*/\1/p' \
	    -e 's/^FAIL: \(.\{1,80\}\).*/\1/p' "$log.one" | sort -u |
	    paste -sd ';' - | sed 's/;/; /g')
	if [ "$_rc" -ne 0 ] || [ -n "$_what" ]; then
		status=1
		failures="$failures${failures:+, }$_name${_what:+ ($_what)}"
		[ -n "$_what" ] || failures="$failures (exit $_rc)"
	fi
	rm -f "$log.one"
}
# A private PostgreSQL server for the suites that run on both backends
# (tests/helpers/pglib.sh): its socket directory must be reachable by its owner.
pgtmp=$(mktemp -d)
chmod 0755 "$pgtmp"
. tests/helpers/pglib.sh
trap 'pg_stop "$pgtmp/pg"; rm -rf "$log" "$log".* "$pgtmp"' EXIT
status=0
# A language other than English for the server's messages, which the
# suites ask of a database of their own (its lc_messages), so that a
# failure is seen classified by its code, not its words.
if pg_locale; then
	HOOKBOX_TEST_PG_LOCALE=$pg_locale
	export HOOKBOX_TEST_PG_LOCALE
else
	echo "check: the locale $pg_locale cannot be made; the tests in" \
	    "another language will fail" >&2
fi
if pg_start "$pgtmp/pg" nosync; then
	HOOKBOX_TEST_PG=$pg_uri
	export HOOKBOX_TEST_PG
else
	echo "check: PostgreSQL did not start; its tests will fail" >&2
fi

# Two lanes at once, so that the waits of one (a script's nginx, a lease
# that must expire) are the other's time: the Check suites of the three
# builds, one at a time, for they share this PostgreSQL server (a suite
# may set its synchronous standby), then a few scripts; and the other
# shell tests, one at a time, each starting what it needs (its own
# nginx, its own server, its own container or namespace).  Each
# lane's output, log and failures go to its own files, printed in turn
# once both are done.
suites() {
	for build in build build-san; do
		for t in "$build"/tests/check_*; do
			case "$t" in *.o) continue ;; esac
			[ -x "$t" ] || continue
			run "$t" "$t"
			# A suite that died with the standby setting on leaves it.
			if [ -n "${HOOKBOX_TEST_PG:-}" ] &&
			    ! pg_standby "$pgtmp/pg"; then
				echo "check: $t left synchronous_standby_names set"
				status=1
				failures="$failures${failures:+, }$t (standby not reset)"
			fi
		done
	done
	# ThreadSanitizer: the suites whose code runs threads (the group's
	# writer, the config.db pool, the JSON allocation flag).  A race is
	# a failure: Check counts the suite's exit status 66.
	for t in check_group check_accept check_respond check_json; do
		run "build-tsan/tests/$t" "build-tsan/tests/$t"
	done
	# Then the scripts that need neither PostgreSQL nor a network of
	# their own, so that the two lanes take about as long: the tool's
	# commands and read-outs, and (the normal build only) the status
	# page in Chromium (check_store renders it under the sanitizers),
	# the install, the manual pages and completion.
	for build in build build-san; do
		for script in "cli.sh $build/hookbox" \
		    "output.sh $build/hookbox"; do
			# shellcheck disable=SC2086
			run "tests/e2e/$script" sh tests/e2e/$script
		done
	done
	# And the presets against their providers' libraries (libfaketime
	# preloaded, which the sanitizers' runtime will not follow), and
	# the Debian package, built, linted and installed in a container:
	# the normal build's.
	for script in page install mandrift completion providers deb; do
		run "tests/e2e/$script.sh build" sh "tests/e2e/$script.sh" build
	done
}

scripts() {
	for build in build build-san; do
		for script in "admin.sh $build/hookbox" "e2e.sh $build" \
		    "trust.sh $build" "dispatch.sh $build" \
		    "internal.sh $build" "group.sh $build" \
		    "registrar.sh $build"; do
			# shellcheck disable=SC2086
			run "tests/e2e/$script" sh tests/e2e/$script
		done
	done
	# The systemd units started in a container, an upgrade from the
	# previous release, the server set-up script, the demo, two hosts
	# on one PostgreSQL, a destination's outage and limits (timed to
	# the cool-downs it sets; its own PostgreSQL server): the normal
	# build's programs only.
	for script in upgrade setup run hosts pgfail units outage; do
		run "tests/e2e/$script.sh build" sh "tests/e2e/$script.sh" build
	done
	# The responder's threads under load and a kill, under
	# ThreadSanitizer: group.sh looks for a report in the log.
	run "tests/e2e/group.sh build-tsan" sh tests/e2e/group.sh build-tsan
}

# lane NAME FUNCTION: runs it with a log of its own; its output, failures
# and status in $log.NAME.out, .failures and .status.
lane() {
	(
		log="$log.$1"
		: > "$log"
		failures="" status=0
		$2 > "$log.out" 2>&1
		printf '%s' "$failures" > "$log.failures"
		echo "$status" > "$log.status"
	)
}
echo "check: the Check suites and the shell tests run side by side;" \
    "their output follows once both are done"
lane suites suites &
lane_suites=$!
lane scripts scripts &
wait "$lane_suites"
wait
for l in suites scripts; do
	cat "$log.$l.out"
	cat "$log.$l" >> "$log"
	f=$(cat "$log.$l.failures" 2>/dev/null)
	failures="$failures${failures:+${f:+, }}$f"
	[ "$(cat "$log.$l.status" 2>/dev/null)" = 0 ] || status=1
	rm -f "$log.$l" "$log.$l.out" "$log.$l.failures" "$log.$l.status"
done

# A short fuzzing run of every parser, where clang's libFuzzer is here.
probe=$(mktemp -d)
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)' \
    '{ (void)d; (void)n; return 0; }' > "$probe/p.c"
if command -v clang >/dev/null 2>&1 &&
    clang -fsanitize=fuzzer -o "$probe/p" "$probe/p.c" >/dev/null 2>&1; then
	echo "== make fuzz"
	if make -s -j2 fuzz FUZZ_RUNS=20000 > "$log.fuzz" 2>&1; then
		n=$(grep -c '^fuzz_.*Done' "$log.fuzz")
		echo "fuzz: $n passed, 0 failed" | tee -a "$log"
	else
		status=1
		failures="$failures${failures:+, }make fuzz"
		echo "fuzz: 0 passed, 1 failed" | tee -a "$log"
	fi
	cat "$log.fuzz"
	rm -f "$log.fuzz"
else
	echo "== make fuzz: skipped (no clang with libFuzzer)"
fi
rm -rf "$probe"

# Sum Check's "Checks: N, Failures: F, Errors: E" and our "N passed, N failed".
totals=$(awk '
/Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+/ {
	gsub(/[,%:]/, " ")
	for (i = 1; i <= NF; i++) {
		if ($i == "Checks") n = $(i + 1)
		if ($i == "Failures") f = $(i + 1)
		if ($i == "Errors") e = $(i + 1)
	}
	pass += n - f - e; fail += f + e
}
/^[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed$/ {
	pass += $2; fail += $4
}
END { printf "%d %d\n", pass, fail }' "$log")
set -- $totals
# A failure while a lock was waited for: the shared server's log says who
# held it (pglib.sh logs every wait past a second, and each line names
# its client), just above the closing line, which is all some runners
# keep of the output.
if [ "$status" -ne 0 ] || [ "$2" -ne 0 ]; then
	grep -A2 'still waiting for\|due to lock timeout' \
	    "$pgtmp/pg/server.log" 2>/dev/null | tail -n 40
fi
echo "check: $1 passed, $2 failed${failures:+: $failures}"
[ "$status" -eq 0 ] && [ "$2" -eq 0 ] && [ "$1" -gt 0 ]
