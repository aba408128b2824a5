#!/bin/sh
# A valid signature is not permission to attach another tenant's job.
. "$(dirname "$0")/common.sh"
other="$tenant-other"
add_tenant "$other"
job=$(new_job "$other")
r0=$(receipts)
post "$endpoint" "$(completed "$job")"
eq "another tenant's job status" 422 "$code"
eq "another tenant's job result" unknown_job "$result"
eq "nothing written" "$r0" "$(receipts)"
eq "nothing written for the other tenant" 0 \
    "$(sql "SELECT count(*) FROM receipts WHERE tenant = '$other'")"
finish other-tenant
