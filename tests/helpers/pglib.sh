# tests/helpers/pglib.sh: a private PostgreSQL server for the tests (sourced).
#
# pg_start DIR [nosync] initialises a cluster in DIR/data with the distribution's
# initdb, as an unprivileged user (postgres when run as root, else the
# caller), and starts it listening on a unix socket in DIR only (no TCP
# port, so it cannot clash with another server on this machine).  It sets
#   pg_host   the socket directory (libpq's host=)
#   pg_uri    a conninfo for the superuser "postgres" and database
#             "hookbox" (tests/helpers/hostlib.sh makes the README's own roles)
# With nosync the server runs with fsync=off: the suites create a database
# per test, and each CREATE DATABASE flushes the new files; a crash of a
# test server loses nothing anyone keeps.  Without it fsync stays on (a
# benchmark measures the commits' real cost).  $PG_SERVER_OPTS, when set,
# adds to the server's options (a benchmark's
# "-c shared_preload_libraries=pg_stat_statements").
# pg_locale [LOCALE] makes LOCALE (default de_DE.UTF-8) where this machine
# lacks it, with localedef (as root; Debian's locales package has its
# sources), so that a server may write its messages in that language
# (lc_messages), and sets pg_locale to its name; 1 when it cannot.  A
# server started before the locale was made does not see it: call it
# before pg_start.
# pg_stop DIR stops it (fast shutdown) and is safe to call twice.
# pg_standby DIR [NAMES] sets its synchronous_standby_names to NAMES, a
# standby no test starts (every COMMIT of a transaction that wrote then
# waits for it, for ever as the server sees it), or resets it without
# NAMES; it returns once a COMMIT shows the change in force (at most about
# 30 s; 1 when it never does).  The suites share a server: whoever sets
# it resets it, and tests/check.sh resets it after every suite, should
# one have died first.

pg_bindir() {
	for _d in "$(pg_config --bindir 2>/dev/null)" \
	    /usr/lib/postgresql/*/bin; do
		[ -x "$_d/initdb" ] && [ -x "$_d/pg_ctl" ] && {
			echo "$_d"
			return 0
		}
	done
	return 1
}

# pg_as CMD...: runs CMD as the cluster's owner.
pg_as() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

pg_start() {
	_pgdir=$1
	_fsync=on
	[ "${2:-}" = nosync ] && _fsync=off
	_bin=$(pg_bindir) || {
		echo "pg_start: no initdb (apt-get install postgresql)" >&2
		return 1
	}
	mkdir -p "$_pgdir"
	[ "$(id -u)" -eq 0 ] && chown postgres "$_pgdir"
	pg_as "$_bin/initdb" -D "$_pgdir/data" -U postgres -A trust \
	    -E UTF8 --locale=C.UTF-8 --no-sync >"$_pgdir/initdb.log" 2>&1 || {
		echo "pg_start: initdb failed:" >&2
		cat "$_pgdir/initdb.log" >&2
		return 1
	}
	# Every lock waited for past a second is logged, with the client
	# (its application_name) on each line: a test that timed out on a
	# lock can be told who held it.
	_opts="-k $_pgdir -c listen_addresses='' -c fsync=$_fsync"
	_opts="$_opts -c log_lock_waits=on -c log_line_prefix='%m [%p] %a '"
	_opts="$_opts ${PG_SERVER_OPTS:-}"
	pg_as "$_bin/pg_ctl" -D "$_pgdir/data" -l "$_pgdir/server.log" -w \
	    -t 60 -o "$_opts" start >/dev/null 2>&1 || {
		echo "pg_start: the server did not start:" >&2
		cat "$_pgdir/server.log" >&2
		return 1
	}
	pg_host=$_pgdir
	pg_as "$_bin/createdb" -h "$pg_host" -U postgres hookbox || return 1
	pg_uri="host=$pg_host user=postgres dbname=hookbox"
}

pg_locale() {
	pg_locale=${1:-de_DE.UTF-8}
	# locale -a spells the codeset its own way (de_DE.utf8).
	_want=$(printf '%s' "$pg_locale" | tr -d '-' | tr 'A-Z' 'a-z')
	locale -a 2>/dev/null | tr 'A-Z' 'a-z' | grep -qx "$_want" && return 0
	localedef -i "${pg_locale%%.*}" -c -f UTF-8 "$pg_locale" \
	    >/dev/null 2>&1
	locale -a 2>/dev/null | tr 'A-Z' 'a-z' | grep -qx "$_want"
}

pg_stop() {
	_bin=$(pg_bindir) || return 0
	[ -f "$1/data/postmaster.pid" ] || return 0
	pg_as "$_bin/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null 2>&1
}

pg_standby() {
	_c="host=$1 user=postgres dbname=hookbox"
	if [ -n "${2:-}" ]; then
		_sql="ALTER SYSTEM SET synchronous_standby_names = '$2'"
	else
		_sql="ALTER SYSTEM RESET synchronous_standby_names"
	fi
	psql "$_c" -X -Atq -c "$_sql" -c "SELECT pg_reload_conf()" \
	    >/dev/null || return 1
	# The probe: a COMMIT of a transaction that wrote to the WAL, which
	# waits (cut by timeout(1): exit 124) while the standby is missing.
	# The reload reaches the server's processes in their own time.
	_end=$(( $(date +%s) + 30 ))
	while :; do
		timeout 5 psql "$_c" -X -Atq -c "BEGIN" -c "SELECT
		    pg_logical_emit_message(true, 'hookbox-test', 'probe')" \
		    -c "COMMIT" >/dev/null 2>&1
		_rc=$?
		if [ -n "${2:-}" ]; then
			[ $_rc -eq 124 ] && return 0
		else
			[ $_rc -eq 0 ] && return 0
		fi
		[ "$(date +%s)" -ge "$_end" ] && return 1
		sleep 0.1
	done
}
