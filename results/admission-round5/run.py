#!/usr/bin/env python3
"""run.py SCHED[;SCHED...] --loads 1.3,1.5 --nodes 100 --seeds 1-4 : runs missing cells, caches in adm/cache.jsonl"""
import json, subprocess, sys, os, argparse
os.environ["OPENBLAS_NUM_THREADS"]="1"
ROOT="/tmp/explore-adm"; CACHE=ROOT+"/adm/cache.jsonl"
KEEP=["unschedulable","unschedulable_after_grace","high_prio_pending_p95_censored_ms","sla_any_per_1k","unschedulable_mem_gib","preemptions"]
def load_cache():
    c={}
    if os.path.exists(CACHE):
        for l in open(CACHE):
            r=json.loads(l); c[(r["sched"],r["load"],r["nodes"],r["seed"],r["window"])]=r
    return c
def seeds(s):
    a,b=s.split("-") if "-" in s else (s,s); return list(range(int(a),int(b)+1))
def run(scheds,loads,nodes,seedl,windows=("20h-22h","22h-24h")):
    c=load_cache()
    with open(CACHE,"a") as f:
        for sc in scheds:
          for L in loads:
            for N in nodes:
              for sd in seedl:
                for w in windows:
                    assert w in ("20h-22h","22h-24h")
                    k=(sc,L,N,sd,w)
                    if k in c: continue
                    out=subprocess.run([ROOT+"/bin/kubesim","replay","--trace",ROOT+"/data/default-trace","--window",w,"--nodes",str(N),"--load-factor",str(L),"--seed",str(sd),"--scheduler",sc,"--grace","30m","--json"],capture_output=True,text=True,check=True).stdout
                    j=json.loads(out.strip().splitlines()[-1])
                    r={"sched":sc,"load":L,"nodes":N,"seed":sd,"window":w}
                    for kk in KEEP: r[kk]=j[kk]
                    f.write(json.dumps(r)+"\n"); f.flush(); c[k]=r
    return c
if __name__=="__main__":
    ap=argparse.ArgumentParser(); ap.add_argument("scheds"); ap.add_argument("--loads",default="1.3,1.5"); ap.add_argument("--nodes",default="100"); ap.add_argument("--seeds",default="1-4")
    a=ap.parse_args()
    run(a.scheds.split(";"),[float(x) for x in a.loads.split(",")],[int(x) for x in a.nodes.split(",")],seeds(a.seeds))
