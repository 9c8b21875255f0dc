# CG on the 5-point Laplacian (m x m, Dirichlet), b = 1, as the GPU does it:
# f32 vectors, f64 dot products; classic CG (the persistent kernel) and
# Chronopoulos-Gear (the fused one). Records the recursive and the true residual.
import numpy as np, scipy.sparse as sp, sys
def lap(m):
    e=np.ones(m); T=sp.diags([-e[:-1],2*e,-e[:-1]],[-1,0,1])
    I=sp.identity(m); return (sp.kron(I,T)+sp.kron(T,I)).tocsr().astype(np.float32)
def classic(A,b,tol,maxit):
    n=A.shape[0]; x=np.zeros(n,np.float32); r=b.copy(); p=np.zeros(n,np.float32)
    r1=float(np.dot(r.astype(np.float64),r)); k=0; r0=0
    while r1>tol*tol and k<maxit:
        beta=np.float32(0 if k==0 else r1/r0); k+=1
        p=(r+beta*p).astype(np.float32); ap=(A@p).astype(np.float32)
        alpha=np.float32(r1/float(np.dot(p.astype(np.float64),ap)))
        x=(x+alpha*p).astype(np.float32); r=(r-alpha*ap).astype(np.float32)
        r0=r1; r1=float(np.dot(r.astype(np.float64),r))
    tr=np.linalg.norm(b.astype(np.float64)-A.astype(np.float64)@x.astype(np.float64))
    return k, r1**0.5, tr
def cg_chrono(A,b,tol,maxit):
    n=A.shape[0]; x=np.zeros(n,np.float32); r=b.copy(); p=np.zeros(n,np.float32); s=np.zeros(n,np.float32)
    k=0; rr_old=0; alpha_old=0; breakdown=0
    while True:
        w=(A@r).astype(np.float32)
        rr=float(np.dot(r.astype(np.float64),r)); wr=float(np.dot(w.astype(np.float64),r))
        if rr<=tol*tol or k>=maxit: break
        if k==0: beta=0.0; alpha=rr/wr
        else:
            beta=rr/rr_old; d=wr-beta*rr/alpha_old
            if d<=0: breakdown+=1
            alpha=rr/d
        p=(r+np.float32(beta)*p).astype(np.float32); s=(w+np.float32(beta)*s).astype(np.float32)
        x=(x+np.float32(alpha)*p).astype(np.float32); r=(r-np.float32(alpha)*s).astype(np.float32)
        rr_old=rr; alpha_old=alpha; k+=1
    tr=np.linalg.norm(b.astype(np.float64)-A.astype(np.float64)@x.astype(np.float64))
    return k, rr**0.5, tr, breakdown
for m in [int(a) for a in sys.argv[1:]]:
    A=lap(m); b=np.ones(m*m,np.float32)
    for rel in [1e-4,1e-5,1e-6,1e-7]:
        tol=rel*m  # relative to ||b|| = m
        c=classic(A,b,tol,20000); f=cg_chrono(A,b,tol,20000)
        print(f"m={m} rel={rel:.0e}: classic it={c[0]} rec={c[1]/m:.2e} true={c[2]/m:.2e} | CG-chrono it={f[0]} rec={f[1]/m:.2e} true={f[2]/m:.2e} breakdowns={f[3]}",flush=True)
