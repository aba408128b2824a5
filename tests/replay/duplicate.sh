#!/bin/sh
# The same completed callback twice: one action.
. "$(dirname "$0")/common.sh"
job=$(new_job)
before=$(actions)
post "$endpoint" "$(completed "$job")"
eq "first callback status" 200 "$code"
eq "first callback result" accepted "$result"
eq "action id" "$(action_of "$job")" "$(jget action "$reply")"
post "$endpoint" "$(completed "$job")"
eq "second callback status" 200 "$code"
eq "second callback result" duplicate "$result"
eq "one new action" $((before + 1)) "$(actions)"
live "the action" "$(action_of "$job")"
finish duplicate
