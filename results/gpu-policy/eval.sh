#!/bin/bash
# The trained GPU policy (best.ckpt) beside fgd on the same arrivals, on the 1,213 GPU nodes at 1.3x:
# the default pod list with seeds 42-51, four held-out lists with seeds 42-44; one JSON line per run
# and scheduler, tagged with its pod list and seed, into eval.jsonl. Run from the repository root
# after `make build`; each list is converted once from ../shared/traces/openb into data/openb-LIST.
set -euo pipefail
out=results/gpu-policy/eval.jsonl
: > "$out"
run() { # list seed
  local l=$1 s=$2
  if [ ! -d "data/openb-$l" ]; then
    mkdir -p "data/openb-src-$l"
    ln -sf "$PWD/../shared/traces/openb/openb_node_list_gpu_node.csv" "$PWD/../shared/traces/openb/openb_pod_list_$l.csv" "data/openb-src-$l/"
    bin/kubesim convert --in "data/openb-src-$l" --out "data/openb-$l" > /dev/null
  fi
  nice -n 15 bin/kubesim eval --checkpoint results/gpu-policy/best.ckpt --trace "data/openb-$l" --scheduler fgd \
    --inflate 1.3 --seed "$s" --json | sed "s/^{/{\"pod_list\":\"$l\",\"seed\":$s,/" >> "$out"
}
for s in 42 43 44 45 46 47 48 49 50 51; do run default "$s"; done
for l in gpushare100 multigpu50 gpuspec33 cpu250; do
  for s in 42 43 44; do run "$l" "$s"; done
done
