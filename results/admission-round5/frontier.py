#!/usr/bin/env python3
"""Oracle frontier: for each workload, the fewest pods a pending set can have when it must hold at
least M GiB (the pending memory) and have at most A = n_hi - ceil(0.95 n_hi) high-priority pods older
than W (so that the censored high-priority p95 is <= W). Pods are the measured pods of the workload
(from an ADM_DUMP of any scheduler: arrivals are the scheduler's input)."""
import sys, math, json, os
sys.path.insert(0,"/tmp/explore-adm/adm"); from run import load_cache
def load(fn):
    P=[l.split() for l in open(fn) if l.startswith("ADMPOD")]
    return [dict(pr=int(a[2]),at=int(a[3])/1000,mem=int(a[4])/1024,bound=a[5]=="true",wait=int(a[6])/1000) for a in P if a[7]=="false"]
def mincount(P, end, W, M):
    hi=[p for p in P if p["pr"]>=1]; n=len(hi); A=n-math.ceil(0.95*n)
    old=sorted([p["mem"] for p in hi if end-p["at"]>W],reverse=True)[:A]
    young=[p["mem"] for p in P if end-p["at"]<=W or p["pr"]<1]  # low-prio pods never enter the hi tail
    c=sorted(old+young,reverse=True); s=0
    for k,m in enumerate(c):
        s+=m
        if s>=M: return k+1
    return None

if __name__=="__main__":
    c=load_cache(); HEUR=["holes","kube-default","best-fit","tetris"]
    ENDS={"20h-22h":7200.0,"22h-24h":7200.0}
    print("cell | ref | sum ref count | 0.9x | oracle min count at p95<=ref, M = ref pending mem x1.0 / x0.9 / x0.8 / min observed | old-slots A (mean)")
    for L in (1.3,1.5):
      for N in (20,100,200):
        means={h:sum(c[(h,L,N,s,w)]["unschedulable"] for s in range(1,9) for w in ENDS) for h in HEUR}
        ref=min(means,key=means.get)
        tot={f:0 for f in ("1.0","0.9","0.8","obs")}; As=[]; chk=[]
        for s in range(1,9):
          for w,end in ENDS.items():
            P=load(f"adm/dumps/holes_{L}_{N}_{s}_{w}.txt")
            assert max(p["at"] for p in P)<end and all(abs(end-p["at"]-p["wait"])<1e-6 for p in P if not p["bound"])
            r=c[(ref,L,N,s,w)]; W=r["high_prio_pending_p95_censored_ms"]/1000; M=r["unschedulable_mem_gib"]
            Mobs=min(v["unschedulable_mem_gib"] for k,v in c.items() if k[1:]==(L,N,s,w))
            hi=[p for p in P if p["pr"]>=1]; As.append(len(hi)-math.ceil(0.95*len(hi)))
            for f,m in (("1.0",M),("0.9",0.9*M),("0.8",0.8*M),("obs",Mobs)):
                k=mincount(P,end,W,m); tot[f]+= k if k is not None else 10**6
        print(f"{L} {N:3d} | {ref} | {means[ref]} | {0.9*means[ref]:.0f} | {tot['1.0']} / {tot['0.9']} / {tot['0.8']} / {tot['obs']} | {sum(As)/len(As):.1f}")
    # break-even: the largest common factor f on the reference's pending memory at which the oracle
    # still reaches 0.9x the reference's count (a rule must leave <= f x the memory pending)
    print("\ncell | f such that oracle min count (p95 <= ref per workload) = 0.9 x ref count")
    for L in (1.3,1.5):
      for N in (20,100,200):
        means={h:sum(c[(h,L,N,s,w)]["unschedulable"] for s in range(1,9) for w in ENDS) for h in HEUR}
        ref=min(means,key=means.get); wl=[]
        for s in range(1,9):
          for w,end in ENDS.items():
            r=c[(ref,L,N,s,w)]; wl.append((load(f"adm/dumps/holes_{L}_{N}_{s}_{w}.txt"),end,r["high_prio_pending_p95_censored_ms"]/1000,r["unschedulable_mem_gib"]))
        def tot(f): return sum(mincount(P,e,W,f*M) or 10**6 for P,e,W,M in wl)
        lo,hi_=0.5,1.2
        for _ in range(30):
            mid=(lo+hi_)/2
            if tot(mid)<=0.9*means[ref]: lo=mid
            else: hi_=mid
        # also: oracle at p95 unconstrained (A = all old pods allowed) at f=1
        print(f"{L} {N:3d} | {ref} | f = {lo:.3f}")
