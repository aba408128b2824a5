#!/bin/sh
# Completed, then failed: a conflict for reconciliation, no new action.
. "$(dirname "$0")/common.sh"
job=$(new_job)
before=$(actions)
c0=$(conflicts)
post "$endpoint" "$(completed "$job")"
eq "completion" accepted "$result"
post "$endpoint" "$(printf '{"type":"job_failed","job_id":"%s","status":"failed","error":"late"}' "$job")"
eq "failure status" 200 "$code"
eq "failure after completion" conflict "$result"
eq "conflict recorded" $((c0 + 1)) "$(conflicts)"
eq "still one new action" $((before + 1)) "$(actions)"
live "the action" "$(action_of "$job")"
finish completed-then-failed
