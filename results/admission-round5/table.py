#!/usr/bin/env python3
"""table.py SCHED[;...] --loads --nodes --seeds [--ref auto]: means per cell, paired diff vs best heuristic"""
import json, sys, argparse, math, statistics as st
sys.path.insert(0,"/tmp/explore-adm/adm"); from run import load_cache, seeds
HEUR=["holes","kube-default","best-fit","tetris"]
ap=argparse.ArgumentParser(); ap.add_argument("scheds"); ap.add_argument("--loads",default="1.3,1.5"); ap.add_argument("--nodes",default="100"); ap.add_argument("--seeds",default="1-4"); ap.add_argument("--md",action="store_true")
a=ap.parse_args(); c=load_cache(); sl=seeds(a.seeds); W=("20h-22h","22h-24h")
T={4:3.182,8:2.365,3:4.303,2:12.71}
def cell(sc,L,N):
    rows=[c.get((sc,L,N,s,w)) for s in sl for w in W]
    if any(r is None for r in rows): return None
    m=lambda k: sum(r[k] for r in rows)/len(rows)
    per=[sum(c[(sc,L,N,s,w)]["unschedulable"] for w in W) for s in sl]
    p95=[sum(c[(sc,L,N,s,w)]["high_prio_pending_p95_censored_ms"] for w in W)/2000 for s in sl]
    return dict(u=m("unschedulable"),g=m("unschedulable_after_grace"),p=m("high_prio_pending_p95_censored_ms")/1000,sla=m("sla_any_per_1k"),gib=m("unschedulable_mem_gib"),per=per,p95=per and p95)
def ci(x):
    n=len(x); mu=sum(x)/n; sd=st.stdev(x) if n>1 else 0; return mu, T.get(n,2.0)*sd/math.sqrt(n)
for L in [float(x) for x in a.loads.split(",")]:
  for N in [int(x) for x in a.nodes.split(",")]:
    hs={h:cell(h,L,N) for h in HEUR}; hs={h:v for h,v in hs.items() if v}
    best=min(hs,key=lambda h:hs[h]["u"]) if hs else None
    print(f"\n== load {L} nodes {N}  seeds {a.seeds}  best heuristic: {best}")
    print(f"{'sched':42s} {'unsch':>7s} {'grace':>7s} {'p95s':>7s} {'sla/1k':>6s} {'memGiB':>7s} | {'dU vs best (per seed-pair sum/2)':>26s} {'%':>6s} | dP95s")
    for sc in HEUR+[s for s in a.scheds.split(";") if s and s not in HEUR]:
        r=cell(sc,L,N)
        if not r: continue
        extra=""
        if best:
            b=hs[best]; du=[(x-y)/2 for x,y in zip(r["per"],b["per"])]; dp=[(x-y) for x,y in zip(r["p95"],b["p95"])]
            mu,hw=ci(du); mp,hp=ci(dp)
            extra=f"{mu:+9.1f} ±{hw:6.1f} {100*(r['u']-b['u'])/max(b['u'],1e-9):+6.1f}% | {mp:+7.0f} ±{hp:5.0f}"
        print(f"{sc:42s} {r['u']:7.1f} {r['g']:7.1f} {r['p']:7.0f} {r['sla']:6.1f} {r['gib']:7.0f} | {extra}")
