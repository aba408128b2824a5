#!/bin/sh
# A valid signature is not permission to attach another tenant's job.
. "$(dirname "$0")/common.sh"
other="replay-other-$$"
"$HOOKBOX" tenant add "$other" || exit 2
job=$(new_job "$other")
r0=$(receipts)
post "$endpoint" "$(completed "$job")"
eq "another tenant's job status" 422 "$code"
eq "another tenant's job result" unknown_job "$result"
eq "nothing written" "$r0" "$(receipts)"
"$HOOKBOX" job remove "$job" --tenant "$other"
"$HOOKBOX" destination remove replay-sink --tenant "$other"
"$HOOKBOX" tenant remove "$other"
finish other-tenant
