# bench/setup.sh: sourced by the benchmarks; defines functions only.
# The callers set $top (the source tree), $tmp (their temporary
# directory), and for rps $secs and $conns.
#
# bench_data NJOBS makes the data directory $HOOKBOX_DIR (or, with
# HOOKBOX_DB set, the PostgreSQL database) with tenant
# "bench", the key-mode endpoint "keyed" (header X-Hook-Key, key
# "bench-shared-key"), the destination "sink" and NJOBS jobs job-0 ..
# job-(NJOBS-1) (bench_jobs).
bench_data() {
	"$HB" init >/dev/null
	"$HB" tenant add bench
	printf 'bench-shared-key' | "$HB" endpoint add keyed --tenant bench \
	    --auth key --header X-Hook-Key --secret-file -
	"$HB" destination add sink --tenant bench --url http://127.0.0.1:9/sink
	bench_jobs 0 "$1"
}

# bench_jobs FIRST COUNT registers the jobs job-FIRST ..
# job-(FIRST+COUNT-1) of tenant "bench" (attempt att-i, step analyze-v1,
# destination "sink"), written straight into the configuration in one
# statement (bench only: the tool adds one at a time).
bench_jobs() {
	if [ -n "${HOOKBOX_DB:-}" ]; then
		psql "$HOOKBOX_DB" -X -q -v ON_ERROR_STOP=1 -c "INSERT INTO
		    hookbox_config.jobs(tenant, job_id, attempt, step,
		    destination, created_at) SELECT 'bench', 'job-' || i,
		    'att-' || i, 'analyze-v1', 'sink',
		    extract(epoch FROM now())::bigint
		    FROM generate_series($1, $1 + $2 - 1) AS i"
		return
	fi
	sqlite3 "$HOOKBOX_DIR/config.db" "WITH RECURSIVE n(i) AS (SELECT $1
	    UNION ALL SELECT i + 1 FROM n WHERE i < $1 + $2 - 1)
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

# fresh_lua FIRST [RANGE]: prints the wrk script of the fresh traffic, a
# new registered job completed on every request, to the "keyed" endpoint.
# Each wrk thread takes its own range of RANGE job ids (default 100000)
# from FIRST on ("base" is set per thread: jobs up to FIRST + 2 * RANGE
# must exist for two threads).  A thread that runs past its range sends
# the next one's ids, which are no longer fresh: done() prints
# "exhausted N", N the requests made past the ranges.
fresh_lua() {
	cat <<LUA
local range = ${2:-100000}
local threads = {}
local nthreads = 0
function setup(thread)
	thread:set("base", $1 + nthreads * range)
	nthreads = nthreads + 1
	table.insert(threads, thread)
end
LUA
	cat <<'LUA'
counter = 0
function request()
	counter = counter + 1
	local body = string.format(
	    '{"type":"job_completed","job_id":"job-%d","status":"completed","key":"k"}',
	    base + counter)
	return wrk.format("POST", nil, {["Content-Type"] = "application/json",
	    ["X-Hook-Key"] = "bench-shared-key"}, body)
end
function done(summary, latency, requests)
	local s = 0
	for _, t in ipairs(threads) do
		local c = t:get("counter")
		if c > range then s = s + c - range end
	end
	io.write(string.format("exhausted %d\n", s))
end
LUA
}

# dup_lua JOB: prints the wrk script of the duplicate traffic, the same
# callback again and again: JOB completed, to the "keyed" endpoint (once
# accepted, every answer is "duplicate").
dup_lua() {
	cat <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Hook-Key"] = "bench-shared-key"
wrk.body = '{"type":"job_completed","job_id":"$1","status":"completed","key":"k"}'
LUA
}

# mixed_lua FILE THREADS: prints the wrk script of the mixed traffic:
# FILE holds pre-signed requests (sign_bodies: lines "d|n <TAB> signature
# <TAB> body", d repeats an accepted job, n is new); every other request
# is a d one, the others the n ones in order, thread i of THREADS taking
# the new bodies i, i + THREADS, ...  When they run out it sends
# duplicates and counts them: done() prints "exhausted N".
mixed_lua() {
	cat <<LUA
local file, step = "$1", $2
LUA
	cat <<'LUA'
local threads = {}
local nthreads = 0
function setup(thread)
	thread:set("id", nthreads)
	nthreads = nthreads + 1
	table.insert(threads, thread)
end
local dup, new = {}, {}
local n, next_new = 0, 0
spent = 0
function init(args)
	for line in io.lines(file) do
		local kind, sig, body = line:match("^(%a)\t([^\t]*)\t(.*)$")
		if kind == "d" then
			dup[#dup + 1] = { sig, body }
		else
			new[#new + 1] = { sig, body }
		end
	end
	next_new = id + 1
end
function request()
	local r
	n = n + 1
	if n % 2 == 0 or next_new > #new then
		if n % 2 == 1 then spent = spent + 1 end
		r = dup[(n % #dup) + 1]
	else
		r = new[next_new]
		next_new = next_new + step
	end
	return wrk.format("POST", nil, {["Content-Type"] = "application/json",
	    ["X-Tornado-Signature"] = r[1]}, r[2])
end
function done(summary, latency, requests)
	local s = 0
	for _, t in ipairs(threads) do s = s + t:get("spent") end
	io.write(string.format("exhausted %d\n", s))
end
LUA
}

# sign_bodies FIRST COUNT NDUP DUPFIRST OUT: writes OUT for mixed_lua,
# NDUP duplicate bodies (jobs DUPFIRST ..) and COUNT new ones (jobs
# FIRST ..), each about 600 bytes, signed now with the secret in $secret:
# t=<unix>,v1=HMAC-SHA256(secret, "<t>.<body>").
sign_bodies() {
	rm -rf "$tmp/bodies"
	mkdir "$tmp/bodies"
	t=$(date +%s)
	awk -v first="$1" -v count="$2" -v ndup="$3" -v dfirst="$4" -v t="$t" \
	    -v dir="$tmp/bodies" 'BEGIN {
		pad = sprintf("%0280d", 0); gsub(/0/, "a", pad)
		for (i = 0; i < ndup + count; i++) {
			job = i < ndup ? dfirst + i : first + i - ndup
			b = sprintf("{\"type\":\"job_completed\",\"job_id\":\"job-%d\"," \
			    "\"status\":\"completed\",\"key\":\"outputs/bench/job-%d/" \
			    "%s.mp4\",\"url\":\"https://storage.example.com/" \
			    "outputs/bench/job-%d/render.mp4?sig=%s\"," \
			    "\"file_size_bytes\":104857600}", job, job,
			    substr(pad, 1, 120), job, substr(pad, 1, 160))
			f = sprintf("%s/%07d", dir, i)
			printf "%s", t "." b > f
			close(f)
		}
	}'
	(cd "$tmp/bodies" && ls | xargs openssl dgst -sha256 -hmac "$secret" -r) |
	    awk -v ndup="$3" -v t="$t" -v dir="$tmp/bodies" '{
		f = substr($2, 2)
		getline msg < (dir "/" f)
		close(dir "/" f)
		sub(/^[0-9]+\./, "", msg)
		printf "%s\tt=%s,v1=%s\t%s\n", (NR <= ndup ? "d" : "n"), t, $1, msg
	}' > "$5"
	rm -rf "$tmp/bodies"
}

# accept_dups URL FILE: the duplicate bodies of FILE (sign_bodies) POSTed
# once to URL, so that the mixed traffic's repeats are duplicates.
accept_dups() {
	awk -F '\t' '$1 == "d"' "$2" |
	while IFS="$(printf '\t')" read -r kind sig body; do
		code=$(curl -s -o /dev/null -w '%{http_code}' \
		    -H 'Content-Type: application/json' \
		    -H "X-Tornado-Signature: $sig" --data-binary "$body" "$1")
		[ "$code" = 200 ] ||
		    echo "bench/${0##*/}: pre-accept: $code" >&2
	done
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
# "exhausted N"; requests: wrk's total, answered or not).  A request
# unanswered after $wrk_timeout (default wrk's 2s) is not counted but
# reported by wrk as a timeout, in $tmp/out.
rps() {
	u=$1 s=$2
	shift 2
	wrk -t$((conns < 2 ? 1 : 2)) -c"$conns" -d"${secs}s" --timeout "${wrk_timeout:-2s}" \
	    --latency -s "$s" "$u" -- "$@" > "$tmp/out" 2>&1
	r=$(awk '/Requests\/sec/ { print $2 }' "$tmp/out")
	p99=$(awk '$1 == "99%" { print $2 }' "$tmp/out")
	non2xx=$(awk '/Non-2xx/ { print $NF }' "$tmp/out")
	ex=$(awk '$1 == "exhausted" { print $2 }' "$tmp/out")
	n=$(awk '/ requests in / { print $1 }' "$tmp/out")
	echo "${r:-0} ${p99:-?} ${non2xx:-0} ${ex:-0} ${n:-0}"
}

# rps_pair PID1 PID2 URL1 SCRIPT1 URL2 SCRIPT2: two wrk runs at once, on
# half the connections each (two hosts); prints what rps_cpu does, summed
# (p99: the larger), the CPU time over both process trees.  wrk's outputs
# are left in $tmp/p1/out and $tmp/p2/out.
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
		r += $1; n += $5; x += $3; e += $4
		p = $2; v = p + 0
		if (p ~ /us$/) v /= 1000; else if (p ~ /s$/ && p !~ /ms$/) v *= 1000
		if (v > pmax) { pmax = v; pw = p }
	} END {
		ms = n > 0 ? sprintf("%.3f", t * 1000 / hz / n) : "-"
		printf "%.2f %s %d %d %d %s\n", r, pw, x, e, n, ms
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
