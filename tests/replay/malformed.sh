#!/bin/sh
# Signed but malformed bodies: 400 with a JSON body naming the problem.
. "$(dirname "$0")/common.sh"
r0=$(receipts)
post "$endpoint" '{"type":"job_completed","job_id":'
eq "truncated JSON" 400 "$code"
eq "truncated JSON result" malformed "$result"
post "$endpoint" '{"type":"job_completed","job_id":42}'
eq "job id of the wrong type" 400 "$code"
contains "detail names the field" job_id "$(jget detail "$reply")"
post "$endpoint" '{"type":"job_completed","job_id":""}'
eq "empty job id" 400 "$code"
printf '%s' '{"type":"job_completed"}' > "$scratch/body"
ctype=text/plain raw_post "$endpoint"
eq "not JSON content type" 415 "$code"
eq "nothing written" "$r0" "$(receipts)"
finish malformed
