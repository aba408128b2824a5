#!/bin/sh
# tests/check.sh: every test, in the normal and the sanitizer build, and
# the code that runs threads in the ThreadSanitizer build.  Run by `make
# check` after the three builds; prints one closing line "check: N
# passed, N failed" counting individual checks.
set -u
cd "$(dirname "$0")/.."
log=$(mktemp)
# A private PostgreSQL server for the suites that run on both backends
# (tests/pglib.sh): its socket directory must be reachable by its owner.
pgtmp=$(mktemp -d)
chmod 0755 "$pgtmp"
. tests/pglib.sh
trap 'pg_stop "$pgtmp/pg"; rm -rf "$log" "$pgtmp"' EXIT
status=0
if pg_start "$pgtmp/pg" nosync; then
	HOOKBOX_TEST_PG=$pg_uri
	export HOOKBOX_TEST_PG
else
	echo "check: PostgreSQL did not start; its tests will fail" >&2
fi

for build in build build-san; do
	for t in "$build"/tests/check_*; do
		case "$t" in *.o) continue ;; esac
		[ -x "$t" ] || continue
		echo "== $t"
		if ! "$t" > "$log.one" 2>&1; then
			status=1
		fi
		cat "$log.one"
		cat "$log.one" >> "$log"
	done
	for script in "tests/cli.sh $build/hookbox" \
	    "tests/admin.sh $build/hookbox" "tests/output.sh $build/hookbox" \
	    "tests/e2e.sh $build" \
	    "tests/trust.sh $build" "tests/dispatch.sh $build" \
	    "tests/group.sh $build"; do
		echo "== $script"
		# shellcheck disable=SC2086
		if ! sh $script > "$log.one" 2>&1; then
			status=1
		fi
		cat "$log.one"
		cat "$log.one" >> "$log"
	done
done

# `make install` and its systemd units (rated, then started in a
# container), and the server set-up script: the normal build's programs
# only.
for script in install setup run hosts pgfail units; do
	echo "== tests/$script.sh build"
	if ! sh "tests/$script.sh" build > "$log.one" 2>&1; then
		status=1
	fi
	cat "$log.one"
	cat "$log.one" >> "$log"
done

# ThreadSanitizer: the suites whose code runs threads (the group's writer,
# the config.db pool, the JSON allocation flag), and the responder's
# threads under load and a kill.  A race is a failure: Check counts the
# suite's exit status 66, group.sh looks for the report in the log.
for run in "build-tsan/tests/check_group" "build-tsan/tests/check_accept" \
    "build-tsan/tests/check_respond" "build-tsan/tests/check_json" \
    "sh tests/group.sh build-tsan"; do
	echo "== $run"
	# shellcheck disable=SC2086
	if ! $run > "$log.one" 2>&1; then
		status=1
	fi
	cat "$log.one"
	cat "$log.one" >> "$log"
done
rm -f "$log.one"

# A short fuzzing run of every parser, where clang's libFuzzer is here.
probe=$(mktemp -d)
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)' \
    '{ (void)d; (void)n; return 0; }' > "$probe/p.c"
if command -v clang >/dev/null 2>&1 &&
    clang -fsanitize=fuzzer -o "$probe/p" "$probe/p.c" >/dev/null 2>&1; then
	echo "== make fuzz"
	if make -s fuzz FUZZ_RUNS=20000 > "$log.one" 2>&1; then
		n=$(grep -c '^fuzz_.*Done' "$log.one")
		echo "fuzz: $n passed, 0 failed" | tee -a "$log"
	else
		status=1
		echo "fuzz: 0 passed, 1 failed" | tee -a "$log"
	fi
	cat "$log.one"
	rm -f "$log.one"
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
echo "check: $1 passed, $2 failed"
[ "$status" -eq 0 ] && [ "$2" -eq 0 ] && [ "$1" -gt 0 ]
