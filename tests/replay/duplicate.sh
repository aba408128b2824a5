#!/bin/sh
# The same completed callback twice: one action.
. "$(dirname "$0")/common.sh"
job=$(new_job)
before=$(pending)
post "$endpoint" "$(completed "$job")"
eq "first callback status" 200 "$code"
eq "first callback result" accepted "$result"
eq "action id" "$tenant:att-$job:replay-v1" "$(jget action "$reply")"
post "$endpoint" "$(completed "$job")"
eq "second callback status" 200 "$code"
eq "second callback result" duplicate "$result"
eq "one new pending action" $((before + 1)) "$(pending)"
finish duplicate
