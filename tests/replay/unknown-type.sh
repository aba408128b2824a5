#!/bin/sh
# An event type we do not know: recorded and acknowledged.
. "$(dirname "$0")/common.sh"
r0=$(receipts)
post "$endpoint" '{"type":"job_archived","job_id":"whatever","archived_at":1}'
eq "unknown type status" 200 "$code"
eq "unknown type result" ignored "$result"
eq "receipt recorded" $((r0 + 1)) "$(receipts)"
finish unknown-type
