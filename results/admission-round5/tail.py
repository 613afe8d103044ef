import sys, math, collections
sys.path.insert(0,"/tmp/explore-adm/adm"); from frontier import load
# tail composition (pods with wait >= the workload's p95) summed over workloads
for tag in sys.argv[1:]:
    T=collections.Counter(); pend=collections.Counter(); n=0; old=0
    for s in range(1,9):
        for w in ("20h-22h","22h-24h"):
            P=load(f"adm/dumps/{tag}_1.3_100_{s}_{w}.txt"); hi=[p for p in P if p["pr"]>=1]
            p95=sorted(p["wait"] for p in hi)[math.ceil(0.95*len(hi))-1]
            for p in hi:
                if p["wait"]>=p95 and p["wait"]>0:
                    T[("bound" if p["bound"] else "pending", "huge>=48" if p["mem"]>=40 else "mid24-30" if p["mem"]>=20 else "small")]+=1
            for p in P:
                if not p["bound"]:
                    pend[("huge>=48" if p["mem"]>=40 else "mid24-30" if p["mem"]>=20 else "small", "young<30m" if 7200-p["at"]<1800 else "old")]+=1
            n+=1
    print(tag, "tail per workload:", {k:round(v/n,1) for k,v in sorted(T.items())})
    print("   pending per workload:", {k:round(v/n,1) for k,v in sorted(pend.items())})
