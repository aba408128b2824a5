#!/bin/sh
# An organization event and a per-job callback for one job: one action.
. "$(dirname "$0")/common.sh"
job=$(new_job)
before=$(actions)
ev=$(printf '{"delivery_id":"dlv-%s","type":"job_completed",'\
'"created_at":"2026-11-30T12:00:00Z","data":{"job_id":"%s",'\
'"status":"completed","key":"out/%s.mp4"}}' "$job" "$job" "$job")
post "$org_endpoint" "$ev"
eq "organization event status" 200 "$code"
eq "organization event result" accepted "$result"
post "$endpoint" "$(completed "$job")"
eq "per-job callback status" 200 "$code"
eq "per-job callback result" duplicate "$result"
post "$org_endpoint" "$ev"
eq "same delivery again" duplicate "$result"
eq "one new action" $((before + 1)) "$(actions)"
live "the action" "$(action_of "$job")"
finish org-and-callback
