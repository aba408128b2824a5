#!/bin/sh
# Bad, missing and foreign signatures: 401 and nothing written.
. "$(dirname "$0")/common.sh"
job=$(new_job)
r0=$(receipts)
p0=$(actions)
printf '%s' "$(completed "$job")" > "$scratch/body"
raw_post "$endpoint"
eq "no signature" 401 "$code"
eq "no signature result" unauthorized "$result"
raw_post "$endpoint" -H "X-Tornado-Signature: t=$(date +%s),v1=$(printf '%064d' 0)"
eq "wrong signature" 401 "$code"
raw_post "$endpoint" -H "X-Tornado-Signature: garbage"
eq "malformed header" 401 "$code"
# Signed for another body.
"$HOOKBOX" sign --endpoint "$endpoint" < /dev/null > "$scratch/h"
raw_post "$endpoint" -H "$(cat "$scratch/h")"
eq "signature of another body" 401 "$code"
lacks "reply never echoes the signature" "$(sed 's/.*v1=//' "$scratch/h")" "$reply"
eq "no receipt written" "$r0" "$(receipts)"
eq "no action" "$p0" "$(actions)"
finish bad-signature
