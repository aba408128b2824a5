#!/bin/sh
# A body over the limit (64 KiB): 413 with a JSON body, nothing written.
. "$(dirname "$0")/common.sh"
job=$(new_job)
r0=$(receipts)
pad=$(head -c 70000 /dev/zero | tr '\0' 'x')
# Too large for `hookbox sign` too: nginx refuses it before any check.
printf '{"type":"job_completed","job_id":"%s","status":"completed","title":"%s"}' \
    "$job" "$pad" > "$scratch/body"
raw_post "$endpoint" -H "X-Tornado-Signature: t=$(date +%s),v1=00"
eq "oversized status" 413 "$code"
eq "oversized result" payload_too_large "$result"
eq "nothing written" "$r0" "$(receipts)"
finish oversized
