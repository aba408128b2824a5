# tests/lib.sh: assertions for the shell test scripts (sourced).
# Each script calls ok/fail through these and ends with `finish NAME`,
# which prints "NAME: N passed, N failed" and sets the exit status.

passed=0
failed=0

pass() {
	passed=$((passed + 1))
}

fail() {
	failed=$((failed + 1))
	echo "FAIL: $*" >&2
}

# eq WHAT EXPECTED ACTUAL
eq() {
	if [ "$2" = "$3" ]; then pass; else fail "$1: expected '$2', got '$3'"; fi
}

# contains WHAT NEEDLE HAYSTACK
contains() {
	case "$3" in
	*"$2"*) pass ;;
	*) fail "$1: '$2' not in '$3'" ;;
	esac
}

# lacks WHAT NEEDLE HAYSTACK
lacks() {
	case "$3" in
	*"$2"*) fail "$1: '$2' unexpectedly in output" ;;
	*) pass ;;
	esac
}

# jget PATH DOCUMENT: prints one field of a JSON document ("result",
# "outbox.pending"), using sqlite3's JSON functions.
jget() {
	_doc=$(printf '%s' "$2" | sed "s/'/''/g")
	sqlite3 :memory: "SELECT json_extract('$_doc', '\$.$1')" 2>/dev/null ||
	    true
}

# wait_locked DB: waits (at most 20 s) until another connection holds DB's
# write lock, as a probe that gives up at once finds it busy.  A fixed
# sleep after asking for the lock races a loaded machine.
wait_locked() {
	_i=0
	while sqlite3 "$1" ".timeout 0" "BEGIN IMMEDIATE; ROLLBACK;" \
	    >/dev/null 2>&1; do
		_i=$((_i + 1))
		[ $_i -ge 400 ] && { fail "$1 never became locked"; return 1; }
		sleep 0.05
	done
}

finish() {
	echo "$1: $passed passed, $failed failed"
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}
