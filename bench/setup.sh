# bench/setup.sh: sourced by the benchmarks; defines functions only.
# The callers set $top (the source tree), $tmp (their temporary
# directory), and for rps $secs and $conns.
#
# bench_data NJOBS makes the data directory $HOOKBOX_DIR (or, with
# HOOKBOX_DB set, the PostgreSQL database) with tenant
# "bench", the key-mode endpoint "keyed" (header X-Hook-Key, key
# "bench-shared-key"), the destination "sink" and NJOBS jobs job-0 ..
# job-(NJOBS-1), written straight into config.db in one statement (bench
# only: the tool adds one at a time).
bench_data() {
	"$HB" init >/dev/null
	"$HB" tenant add bench
	printf 'bench-shared-key' | "$HB" endpoint add keyed --tenant bench \
	    --auth key --header X-Hook-Key --secret-file -
	"$HB" destination add sink --tenant bench --url http://127.0.0.1:9/sink
	if [ -n "${HOOKBOX_DB:-}" ]; then
		psql "$HOOKBOX_DB" -X -q -v ON_ERROR_STOP=1 -c "INSERT INTO
		    hookbox_config.jobs(tenant, job_id, attempt, step,
		    destination, created_at) SELECT 'bench', 'job-' || i,
		    'att-' || i, 'analyze-v1', 'sink',
		    extract(epoch FROM now())::bigint
		    FROM generate_series(0, $1 - 1) AS i"
		return
	fi
	sqlite3 "$HOOKBOX_DIR/config.db" "WITH RECURSIVE n(i) AS (SELECT 0
	    UNION ALL SELECT i + 1 FROM n WHERE i < $1 - 1)
	    INSERT INTO jobs(tenant, job_id, attempt, step, destination,
	    created_at) SELECT 'bench', 'job-' || i, 'att-' || i, 'analyze-v1',
	    'sink', unixepoch() FROM n;"
}

# bench_need COMMAND PACKAGE: installs PACKAGE with apt when COMMAND is
# missing (the benches run on demand, on machines set up for the build).
bench_need() {
	command -v "$1" >/dev/null 2>&1 || apt-get install -y -qq "$2" >/dev/null
}

# bench_load: the first line of a report, the machine's load and cores
# (a shared machine's figures are read against them).
bench_load() {
	echo "bench/${0##*/}: load $(cut -d' ' -f1-3 /proc/loadavg) at start," \
	    "$(nproc) cores"
}

# wait_for TEST...: runs TEST until it succeeds, at most 100 times, 0.1 s
# apart (a server started in the background is not ready at once).
wait_for() {
	i=0
	until "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -ge 100 ] && { echo "bench/${0##*/}: gave up on: $*" >&2;
		    exit 1; }
		sleep 0.1
	done
}

# bench_port: a random loopback port, 20000-39999 (a fixed one would
# collide with a second bench running on the machine).
bench_port() {
	echo $(( $(od -An -N2 -tu2 /dev/urandom) % 20000 + 20000 ))
}

# nginx_start PREFIX PORT SOCKET DATADIR: nginx in PREFIX serving the site
# snippet (scripts/nginx-conf.sh) on 127.0.0.1:PORT, passing to SOCKET,
# without the access log (its write per request is not what is measured).
# nginx_stop PREFIX...: stops those that were started.
nginx_start() {
	_conf=$(sh "$top/scripts/nginx-conf.sh" "$1" "$2" "$3" "$4")
	sed -i 's|access_log .*;|access_log off;|' "$_conf"
	nginx -p "$1" -c "$_conf" -e "$1/error.log"
}
nginx_stop() {
	for _p in "$@"; do
		[ -f "$_p/nginx.pid" ] && kill "$(cat "$_p/nginx.pid")" 2>/dev/null
	done
	return 0
}

# fresh_lua FIRST: prints the wrk script of the fresh traffic, a new
# registered job completed on every request, to the "keyed" endpoint.
# Each wrk thread takes its own range of job ids from FIRST on ("base" is
# set per thread, 100000 ids each: jobs up to FIRST + 200000 must exist
# for two threads).
fresh_lua() {
	cat <<LUA
local counter = 0
local nthreads = 0
function setup(thread)
	thread:set("base", $1 + nthreads * 100000)
	nthreads = nthreads + 1
end
LUA
	cat <<'LUA'
function request()
	counter = counter + 1
	local body = string.format(
	    '{"type":"job_completed","job_id":"job-%d","status":"completed","key":"k"}',
	    base + counter)
	return wrk.format("POST", nil, {["Content-Type"] = "application/json",
	    ["X-Hook-Key"] = "bench-shared-key"}, body)
end
LUA
}

# rss PID...: VmRSS in kB of each process, joined with "+".
# tree_rss PID: the same for PID and its children (a supervisor and its
# workers).
rss() {
	for _p in "$@"; do
		awk '$1 == "VmRSS:" { print $2 }' "/proc/$_p/status" 2>/dev/null
	done | paste -sd+ -
}
tree_rss() {
	# shellcheck disable=SC2046
	rss "$1" $(pgrep -P "$1")
}

# tree_ticks PID: the CPU time (user + system, all threads) PID and its
# children have used, in clock ticks: fields 14 and 15 of /proc/PID/stat,
# counted after the command name, which may hold spaces.
tree_ticks() {
	# shellcheck disable=SC2046
	for _p in "$1" $(pgrep -P "$1"); do
		sed 's/.*) //' "/proc/$_p/stat" 2>/dev/null
	done | awk '{ t += $12 + $13 } END { print t + 0 }'
}

# rps URL SCRIPT [ARGS...]: one wrk run of $secs seconds on $conns
# connections with the Lua SCRIPT and its ARGS; prints "req/s p99 non-2xx
# exhausted requests" (exhausted: what a script's done() reports as
# "exhausted N"; requests: wrk's total, answered or not).
rps() {
	u=$1 s=$2
	shift 2
	wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$s" "$u" -- "$@" \
	    > "$tmp/out" 2>&1
	r=$(awk '/Requests\/sec/ { print $2 }' "$tmp/out")
	p99=$(awk '$1 == "99%" { print $2 }' "$tmp/out")
	non2xx=$(awk '/Non-2xx/ { print $NF }' "$tmp/out")
	ex=$(awk '$1 == "exhausted" { print $2 }' "$tmp/out")
	n=$(awk '/ requests in / { print $1 }' "$tmp/out")
	echo "${r:-0} ${p99:-?} ${non2xx:-0} ${ex:-0} ${n:-0}"
}

# rps_pair PID1 PID2 URL1 SCRIPT1 URL2 SCRIPT2: two wrk runs at once, on
# half the connections each (two hosts); prints what rps_cpu does, summed
# (p99: the larger), the CPU time over both process trees.
rps_pair() {
	_a=$1 _b=$2 _u1=$3 _s1=$4 _u2=$5 _s2=$6
	_t0=$(( $(tree_ticks "$_a") + $(tree_ticks "$_b") ))
	_c=$conns
	conns=$((_c / 2))
	_tmp=$tmp
	mkdir -p "$_tmp/p1" "$_tmp/p2"
	(tmp="$_tmp/p1"; rps "$_u1" "$_s1" > "$_tmp/pair1") &
	_w=$!
	(tmp="$_tmp/p2"; rps "$_u2" "$_s2" > "$_tmp/pair2")
	wait "$_w"
	conns=$_c
	_t1=$(( $(tree_ticks "$_a") + $(tree_ticks "$_b") ))
	cat "$_tmp/pair1" "$_tmp/pair2" | awk -v t="$((_t1 - _t0))" \
	    -v hz="$(getconf CLK_TCK)" '{
		r += $1; n += $5; x += $3
		p = $2; v = p + 0
		if (p ~ /us$/) v /= 1000; else if (p ~ /s$/ && p !~ /ms$/) v *= 1000
		if (v > pmax) { pmax = v; pw = p }
	} END {
		ms = n > 0 ? sprintf("%.3f", t * 1000 / hz / n) : "-"
		printf "%.2f %s %d 0 %d %s\n", r, pw, x, n, ms
	}'
}

# rps_cpu PID URL SCRIPT [ARGS...]: rps, and a sixth field: the CPU time
# the process tree of PID used over the run per request wrk reported, in
# ms ("-" when none was).
rps_cpu() {
	_pid=$1
	shift
	_t0=$(tree_ticks "$_pid")
	# shellcheck disable=SC2046
	set -- $(rps "$@")
	_t1=$(tree_ticks "$_pid")
	if [ "$5" -gt 0 ]; then
		_ms=$(echo "($_t1 - $_t0) * 1000 / $(getconf CLK_TCK) / $5" |
		    bc -l)
		_ms=$(printf '%.3f' "$_ms")
	else
		_ms=-
	fi
	echo "$* $_ms"
}
