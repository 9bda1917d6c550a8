#!/usr/bin/env bash
# hack/watchload.sh CMD [ARG...]: runs CMD (a probegate run) while watching, cluster-wide with
# kubectl, what a scenario's observers watch in their namespace — pods of the target (app=target),
# the target Service's EndpointSlices, every Event, the target Deployment — and prints, for each
# namespace whose name starts with pg- (the scenarios'), the events and bytes (compact JSON, as a
# JSON watch sends them, ±) of each kind over the command's run, and per second. It measures the
# API server's watch load of one scenario's observers (docs/scale.md). Needs KUBECONFIG and jq.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 CMD [ARG...]" >&2; exit 2; }
dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

# watch KIND ARGS...: every watch event of KIND, as kubectl prints them (a stream of JSON objects).
watch() {
  local kind=$1; shift
  kubectl get "$kind" -A "$@" --watch-only --output-watch-events -o json >"$dir/$kind" &
  pids+=($!)
}
watch pods -l app=target
watch endpointslices -l kubernetes.io/service-name=target
watch events
watch deployments --field-selector metadata.name=target
sleep 2 # the watches are open before the command starts

start=$(date +%s.%N)
rc=0
"$@" || rc=$?
end=$(date +%s.%N)
sleep 2 # the last events arrive
for kind in pods endpointslices events deployments; do
  jq -c --arg k "$kind" '[$k, .object.metadata.namespace, (tojson | length)]' "$dir/$kind"
done | jq -rs --argjson secs "$(awk -v s="$start" -v e="$end" 'BEGIN { print e - s }')" '
    map(select(.[1] | startswith("pg-"))) | group_by(.[1])[] |
    "namespace \(.[0][1]) over \($secs | floor) s: " + (group_by(.[0]) | map(
      "\(.[0][0]) \(length) events \(map(.[2]) | add) bytes") | join(", ")) +
    "; total \(length) events (\(length / $secs * 100 | round / 100)/s), \(map(.[2]) | add) bytes (\(map(.[2]) | add / $secs | round) B/s)"'
exit "$rc"
