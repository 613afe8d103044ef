#!/bin/bash
# the trained GPU policy beside fgd and best-fit: default list seeds 42-51, four other lists seeds 42-44
cd /work/wt-gpu-policy
out=results/gpu-policy/eval.jsonl
: > $out
for s in 42 43 44 45 46 47 48 49 50 51; do
  nice -n 15 bin/kubesim eval --checkpoint results/gpu-policy/best.ckpt --trace data/openb-default --scheduler fgd --inflate 1.3 --seed $s --json | sed "s/^{/{\"pod_list\":\"default\",\"seed\":$s,/" >> $out
done
for l in gpushare100 multigpu50 gpuspec33 cpu250; do
  for s in 42 43 44; do
    nice -n 15 bin/kubesim eval --checkpoint results/gpu-policy/best.ckpt --trace data/openb-$l --scheduler fgd --inflate 1.3 --seed $s --json | sed "s/^{/{\"pod_list\":\"$l\",\"seed\":$s,/" >> $out
  done
done
echo done >> /dev/null
