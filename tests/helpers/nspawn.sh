# tests/helpers/nspawn.sh: a container of this machine's OS booted with
# systemd as PID 1 (systemd-nspawn), for the scripts that test what
# systemd does with hookbox's units and package (sourced, after lib.sh).
#
# ct_can NAME CMD...: whether a container can be booted here, with each
# CMD on PATH beside systemd-nspawn and nsenter: as root only (else NAME
# is skipped, said), and a missing command is NAME's failure.  The
# caller finishes NAME and exits when it returns non-zero.
# ct_boot NAME LOG NSPAWN_ARGS...: boots the container NAME in the
# background (-b, a network of its own, BPF allowed for systemd's IP
# firewall), its console in LOG.  Without systemd on this host its
# cgroups go in a directory of their own, removed by ct_stop; the
# unified hierarchy inside lets systemd attach its IP firewall.
# ct_up SECONDS TARGET: waits for the container's systemd and for TARGET
# to be active; sets ct_leader.  in_ct CMD...: CMD inside the container;
# in_net CMD...: CMD in its network only, with this machine's files.
# ct_journal UNIT: the unit's last lines, for a failure's message.
# ct_stop: stops the container (SIGTERM, then SIGKILL after 30 s) and
# removes what nspawn left on the host.

ct_pid="" ct_name="" ct_cg="" ct_leader=""

ct_can() {
	_who=$1
	shift
	if [ "$(id -u)" -ne 0 ]; then
		echo "$_who: skipped (needs root to boot a container)"
		return 1
	fi
	for _c in systemd-nspawn nsenter "$@"; do
		if ! command -v "$_c" >/dev/null 2>&1; then
			fail "$_c not found (make deps installs it)"
			return 1
		fi
	done
}

ct_boot() {
	ct_name=$1
	_log=$2
	shift 2
	_keep=""
	if [ ! -d /run/systemd/system ]; then
		for _m in /sys/fs/cgroup /sys/fs/cgroup/unified; do
			if [ "$(stat -f -c %T "$_m" 2>/dev/null)" = cgroup2fs ]
			then
				ct_cg="$_m/$ct_name"
				break
			fi
		done
		[ -n "$ct_cg" ] && mkdir "$ct_cg"
		_keep="--keep-unit --register=no"
	fi
	# shellcheck disable=SC2086
	SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 sh -c '
		[ -z "$1" ] || echo $$ > "$1/cgroup.procs" || exit 1
		shift
		exec "$@"' sh "$ct_cg" \
	    systemd-nspawn -M "$ct_name" $_keep --private-network \
	    --capability=CAP_BPF --system-call-filter=bpf --console=pipe \
	    "$@" < /dev/null > "$_log" 2>&1 &
	ct_pid=$!
}

ct_find_leader() {
	for _p in $(pgrep -P "$ct_pid"); do
		if [ "$(cat "/proc/$_p/comm" 2>/dev/null)" = systemd ]; then
			ct_leader=$_p
			return 0
		fi
	done
	return 1
}

ct_target_up() {
	[ "$(in_ct systemctl is-active "$1" 2>/dev/null)" = active ]
}

ct_up() {
	until_true "$1" ct_find_leader && until_true "$1" ct_target_up "$2"
}

in_ct() { nsenter -t "$ct_leader" -a "$@"; }
in_net() { nsenter -t "$ct_leader" -n "$@"; }

ct_journal() {
	in_ct journalctl --no-pager -o cat -u "$1" 2>&1 | tail -n 20
}

ct_stop() {
	if [ -n "$ct_pid" ] && kill -0 "$ct_pid" 2>/dev/null; then
		kill -TERM "$ct_pid" 2>/dev/null
		until_true 30 sh -c "! kill -0 $ct_pid 2>/dev/null" ||
		    kill -KILL "$ct_pid" 2>/dev/null
	fi
	wait "$ct_pid" 2>/dev/null
	# nspawn mirrors the directory in the legacy hierarchies too.
	if [ -n "$ct_cg" ]; then
		for _h in /sys/fs/cgroup /sys/fs/cgroup/*; do
			[ -d "$_h/$ct_name" ] && find "$_h/$ct_name" -depth \
			    -type d -exec rmdir {} + 2>/dev/null
		done
	fi
	[ -z "$ct_name" ] || rm -rf "/run/systemd/nspawn/propagate/$ct_name"
	ct_pid=""
}
