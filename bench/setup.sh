# bench/setup.sh: sourced by the benchmarks.  bench_data NJOBS makes the
# data directory $HOOKBOX_DIR with tenant "bench", the key-mode endpoint
# "keyed" (header X-Hook-Key, key "bench-shared-key"), the destination
# "sink" and NJOBS jobs job-0 .. job-(NJOBS-1), written straight into
# config.db in one statement (bench only: the tool adds one at a time).
bench_data() {
	"$HB" init >/dev/null
	"$HB" tenant add bench
	printf 'bench-shared-key' | "$HB" endpoint add keyed --tenant bench \
	    --auth key --header X-Hook-Key --secret-file -
	"$HB" destination add sink --tenant bench --url http://127.0.0.1:9/sink
	sqlite3 "$HOOKBOX_DIR/config.db" "WITH RECURSIVE n(i) AS (SELECT 0
	    UNION ALL SELECT i + 1 FROM n WHERE i < $1 - 1)
	    INSERT INTO jobs(tenant, job_id, attempt, step, destination,
	    created_at) SELECT 'bench', 'job-' || i, 'att-' || i, 'analyze-v1',
	    'sink', unixepoch() FROM n;"
}
