#!/bin/sh
# Drives a sharded `packbot optimize` on Kubernetes (docs/scale.md): the plan Job, then for each
# rung its Indexed Job of shards and its merge Job, until the merge that ends the search (whose
# log is the result's table; best.yaml, trials.json and report.html are in /data/out).
#   deploy/k8s/optimize/drive.sh           apply and wait, rung after rung
#   deploy/k8s/optimize/drive.sh print R   print rung R's two Jobs (nothing applied; offline)
# A rung's Jobs are the same manifests with RUNG set (kubectl set env --local); each is deleted
# before the next is applied, since a Job's pod template cannot be changed in place.
set -eu
here=$(dirname "$0")

# The manifest `file` with the environment variables given, as YAML (kubectl, offline).
render() {
  file=$1
  shift
  kubectl set env --local -f "$file" -o yaml "$@"
}

# Waits for job/$1 to complete; fails as soon as it has failed (kubectl wait would sit until its timeout).
wait_job() {
  while :; do
    state=$(kubectl get "job/$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type} {end}')
    case " $state " in
      *" Complete "*) return 0 ;;
      *" Failed "*)
        echo "drive.sh: job/$1 failed: kubectl logs job/$1" >&2
        return 1
        ;;
    esac
    sleep 5
  done
}

# Applies the manifest `file` (Job `name`) with the variables given, and waits for it.
run_job() {
  file=$1
  name=$2
  shift 2
  kubectl delete job "$name" --ignore-not-found --wait=true >/dev/null
  render "$file" "$@" | kubectl apply -f - >/dev/null
  wait_job "$name"
}

if [ "${1:-}" = print ]; then
  rung=${2:?usage: drive.sh print RUNG}
  render "$here/rung-job.yaml" "RUNG=$rung"
  echo ---
  render "$here/merge-job.yaml" "RUNG=$rung"
  exit 0
fi

kubectl apply -f "$here/pvc.yaml" >/dev/null
run_job "$here/plan-job.yaml" packbot-optimize-plan
kubectl logs job/packbot-optimize-plan
rung=1
while :; do
  run_job "$here/rung-job.yaml" packbot-optimize-rung "RUNG=$rung"
  run_job "$here/merge-job.yaml" packbot-optimize-merge "RUNG=$rung"
  log=$(kubectl logs job/packbot-optimize-merge)
  printf '%s\n' "$log"
  case $log in
    "next: rung "*) rung=$((rung + 1)) ;;
    *) break ;;
  esac
done
