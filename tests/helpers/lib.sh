# tests/helpers/lib.sh: assertions for the shell test scripts (sourced).
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

# until_true SECONDS CMD...: runs CMD every 50 ms until it succeeds, for
# at most SECONDS (a generous bound: the machine may be loaded); returns
# CMD's last status.  CMD's arguments are expanded once, by the caller:
# what must be read again each time goes in a function (is_state, ...).
until_true() {
	_end=$(( $(date +%s) + $1 + 1 ))
	shift
	until "$@"; do
		[ "$(date +%s)" -ge "$_end" ] && return 1
		sleep 0.05
	done
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

# nginx_start SOCKET DATADIR [NAME]: nginx in front of the responder's
# SOCKET, rendered into $tmp/NAME (default nginx) by scripts/nginx-conf.sh
# on a random loopback port (tried five times, should one be taken).  An
# empty DATADIR (PostgreSQL) sends no HOOKBOX_DIR.  Sets $port and $base,
# or prints why and exits 1.  Needs $top and $tmp.
nginx_start() {
	_started=0
	_name=${3:-nginx}
	for _try in 1 2 3 4 5; do
		port=$(( (($(od -An -N2 -tu2 /dev/urandom) % 20000)) + 20000 ))
		_conf=$(sh "$top/scripts/nginx-conf.sh" "$tmp/$_name" "$port" \
		    "$1" "$2")
		if nginx -p "$tmp/$_name" -c "$_conf" \
		    -e "$tmp/$_name/error.log" 2>>"$tmp/$_name.start"; then
			_started=1
			break
		fi
	done
	[ $_started -eq 1 ] || { echo "nginx did not start";
	    cat "$tmp/$_name.start"; exit 1; }
	base="http://127.0.0.1:$port"
}
