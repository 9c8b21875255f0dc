import numpy as np, sys
exec(open('variants.py').read().split("for m in")[0])
f=np.float32
def v2(m,tol,fresh_ap, maxit=20000):
    n=m*m; x=np.zeros(n,f); r=np.ones(n,f); p=np.zeros(n,f); s=np.zeros(n,f)
    k=0; g0=0
    while True:
        w=A_csr(r,m,f)
        g=d(r,r); de=d(w,r); ep=d(r,s); ze=d(p,s)
        if g<=tol*tol or k>=maxit: break
        beta=0.0 if k==0 else g/g0
        pap=de+2*beta*ep+beta*beta*ze
        alpha=g/pap
        B=f(beta); al=f(alpha)
        p=(r+B*p).astype(f)
        s=A_csr(p,m,f) if fresh_ap else (w+B*s).astype(f)
        x=(x+al*p).astype(f); r=(r-al*s).astype(f)
        g0=g; k+=1
    return k
m=int(sys.argv[1]); tol=1e-5*m
print(m, "V2 (1 spmv, 4 dots)", v2(m,tol,False), flush=True)
print(m, "V1 (2 spmv, 4 dots)", v2(m,tol,True), flush=True)
