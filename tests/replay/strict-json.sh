#!/bin/sh
# Signed bodies that break the strict JSON rules: a raw control byte inside
# a string, a key twice, a decoded control character in an identifier or a
# file location.  Each is 400 malformed and writes nothing; a multi-line
# error text is recorded.
. "$(dirname "$0")/common.sh"

# post_file ENDPOINT: signs $scratch/body for ENDPOINT and POSTs it as it
# is, NUL bytes included (a shell variable cannot hold one).
post_file() {
	_ep=$1
	"$HOOKBOX" sign --endpoint "$_ep" < "$scratch/body" \
	    > "$scratch/headers" || exit 2
	set --
	while IFS= read -r _h; do set -- "$@" -H "$_h"; done < "$scratch/headers"
	raw_post "$_ep" "$@"
}

job=$(new_job)
r0=$(receipts)
p0=$(actions)

# The issue's example: a raw NUL once cut the job id at the NUL.
printf '{"type":"job_completed","job_id":"%s\000-x","status":"completed"}' \
    "$job" > "$scratch/body"
post_file "$endpoint"
eq "raw NUL in the job id" 400 "$code"
eq "raw NUL in the job id: result" malformed "$result"

# Raw CR, LF, ESC, TAB, SOH (octal) inside strings, identifiers or not.
for o in 015 012 033 011 001; do
	printf '{"type":"job_completed","job_id":"%s","key":"out/\'"$o"'1"}' \
	    "$job" > "$scratch/body"
	post_file "$endpoint"
	eq "raw byte octal $o in the key" 400 "$code"
	printf '{"type":"job_failed","job_id":"%s","error":"a\'"$o"'b"}' \
	    "$job" > "$scratch/body"
	post_file "$endpoint"
	eq "raw byte octal $o in the error" 400 "$code"
done

# A key twice, at the top and in a nested object.
post "$endpoint" "{\"job_id\":\"$job\",\"job_id\":\"other\",\
\"type\":\"job_completed\",\"status\":\"completed\"}"
eq "job_id twice" 400 "$code"
eq "job_id twice: detail" "job_id: duplicate key" "$(jget detail "$reply")"
post "$endpoint" "{\"type\":\"job_completed\",\"job_id\":\"$job\",\
\"extra\":{\"a\":1,\"a\":2}}"
eq "a key twice in a nested object" 400 "$code"

# Decoded control characters in an identifier and a location.
post "$endpoint" "{\"type\":\"job_completed\",\"job_id\":\"$job\\u001b[2J\"}"
eq "escaped ESC in the job id" 400 "$code"
post "$endpoint" "{\"type\":\"job_completed\",\"job_id\":\"$job\",\
\"url\":\"https://cdn.example/a\\r\\nX-Injected: 1\"}"
eq "escaped CR LF in the url" 400 "$code"
contains "detail names the url" url "$(jget detail "$reply")"

eq "nothing written" "$r0" "$(receipts)"
eq "no action" "$p0" "$(actions)"

# An escaped newline in an error text is recorded (as a space).
post "$endpoint" "{\"type\":\"job_failed\",\"job_id\":\"$job\",\
\"error\":\"ffmpeg: exit 1\\nmore\"}"
eq "multi-line error" 200 "$code"
eq "multi-line error: result" recorded "$result"
finish strict-json
