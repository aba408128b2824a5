#!/bin/sh
# Timestamps outside the tolerance, in either direction: 401.
. "$(dirname "$0")/common.sh"
job=$(new_job)
now=$(date +%s)
r0=$(receipts)
post "$endpoint" "$(completed "$job")" --timestamp $((now - 3600))
eq "an hour old" 401 "$code"
eq "an hour old result" unauthorized "$result"
post "$endpoint" "$(completed "$job")" --timestamp $((now + 3600))
eq "an hour ahead" 401 "$code"
eq "nothing written" "$r0" "$(receipts)"
post "$endpoint" "$(completed "$job")" --timestamp $((now - 60))
eq "a minute old is within tolerance" 200 "$code"
eq "and accepted" accepted "$result"
live "the action" "$(action_of "$job")"
finish timestamps
