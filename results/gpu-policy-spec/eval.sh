#!/bin/bash
# A trained GPU policy beside fgd on the same arrivals, on the 1,213 GPU nodes at 1.3x (kubesim eval):
#   results/gpu-policy-spec/eval.sh CKPT TRAIN_SEED "SEEDS" [POD_LIST ...]
# e.g. results/gpu-policy-spec/eval.sh results/gpu-policy-spec/s1/best.ckpt 1 "42 43 44"
# (no POD_LIST: all 17). JOBS runs (default 2) go at once (xargs -P); each (pod list, seed) writes one
# file in OUT/cells (OUT default results/gpu-policy-spec), two JSON lines (fgd, ppo) tagged with
# train_seed, pod_list, seed and wall_s (the eval's wall time, both rows); a cell already written is
# skipped, so an interrupted evaluation continues. At the end OUT/eval.jsonl is every cell of every
# training seed, in order. Run from the repository root after `make build`; each list is converted once
# from ../shared/traces/openb into data/openb-LIST.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 CKPT TRAIN_SEED \"SEEDS\" [POD_LIST ...]" >&2; exit 2; }
ckpt=$1 ts=$2 seeds=$3
shift 3
lists=("$@")
[ ${#lists[@]} -gt 0 ] || lists=(default cpu050 cpu100 cpu200 cpu250 gpushare100 gpushare40 gpushare60 gpushare80
  gpuspec10 gpuspec20 gpuspec25 gpuspec33 multigpu20 multigpu30 multigpu40 multigpu50)
out=${OUT:-results/gpu-policy-spec}
cells=$out/cells
[ -f "$ckpt" ] || { echo "$0: no checkpoint $ckpt" >&2; exit 1; }
[ -x bin/kubesim ] || { echo "$0: no bin/kubesim (make build)" >&2; exit 1; }
mkdir -p "$cells"
for l in "${lists[@]}"; do
  if [ ! -d "data/openb-$l" ]; then
    src=$PWD/../shared/traces/openb
    [ -f "$src/openb_pod_list_$l.csv" ] || { echo "$0: no pod list $src/openb_pod_list_$l.csv" >&2; exit 1; }
    mkdir -p "data/openb-src-$l"
    ln -sf "$src/openb_node_list_gpu_node.csv" "$src/openb_pod_list_$l.csv" "data/openb-src-$l/"
    bin/kubesim convert --in "data/openb-src-$l" --out "data/openb-$l" > /dev/null
  fi
done
one() { # pod_list seed
  local l=$1 s=$2 f=$cells/ts$ts-$1-$2.jsonl
  [ -s "$f" ] && return 0
  local t0 t1
  t0=$(date +%s.%N)
  nice -n 10 bin/kubesim eval --checkpoint "$ckpt" --trace "data/openb-$l" --scheduler fgd \
    --inflate 1.3 --seed "$s" --json > "$f.tmp" || { echo "train seed $ts $l $s: eval failed" >&2; rm -f "$f.tmp"; return 1; }
  t1=$(date +%s.%N)
  local w
  w=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
  sed "s/^{/{\"train_seed\":$ts,\"pod_list\":\"$l\",\"seed\":$s,\"wall_s\":$w,/" "$f.tmp" > "$f"
  rm -f "$f.tmp"
  echo "train seed $ts $l $s: ${w}s" >&2
}
export -f one
export ckpt ts cells
for l in "${lists[@]}"; do for s in $seeds; do echo "$l $s"; done; done |
  xargs -P "${JOBS:-2}" -n 2 bash -c 'one "$@"' _ || echo "$0: some runs failed (rerun to retry them)" >&2
# every cell, ordered by training seed, pod list (as above) and seed
all=(default cpu050 cpu100 cpu200 cpu250 gpushare100 gpushare40 gpushare60 gpushare80
  gpuspec10 gpuspec20 gpuspec25 gpuspec33 multigpu20 multigpu30 multigpu40 multigpu50)
: > "$out/eval.jsonl"
for t in $(ls "$cells" | sed -n 's/^ts\([0-9]*\)-.*/\1/p' | sort -nu); do
  for l in "${all[@]}"; do
    for f in $(ls "$cells" | grep "^ts$t-$l-[0-9]*\.jsonl$" | sort -t- -k3 -n); do
      cat "$cells/$f" >> "$out/eval.jsonl"
    done
  done
done
