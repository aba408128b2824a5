#!/bin/sh
# Progress arriving after completion, and out of order: nothing undone.
. "$(dirname "$0")/common.sh"
job=$(new_job)
progress() {
	printf '{"type":"job_progress","job_id":"%s","stage":"%s","progress":%s}' \
	    "$job" "$1" "$2"
}
before=$(actions)
post "$endpoint" "$(progress muxing 40)"
eq "muxing" recorded "$result"
post "$endpoint" "$(progress downloading 10)"
eq "older stage is stale" stale "$result"
post "$endpoint" "$(completed "$job")"
eq "completion" accepted "$result"
post "$endpoint" "$(progress uploading 90)"
eq "progress after completion status" 200 "$code"
eq "progress after completion" stale "$result"
eq "one new action" $((before + 1)) "$(actions)"
live "the action" "$(action_of "$job")"
finish progress-after-completion
