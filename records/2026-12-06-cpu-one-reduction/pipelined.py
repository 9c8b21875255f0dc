import numpy as np, sys, time
def A(v, m, dt):
    u = v.reshape(m, m)
    o = 4*u
    o[1:, :] -= u[:-1, :]; o[:-1, :] -= u[1:, :]
    o[:, 1:] -= u[:, :-1]; o[:, :-1] -= u[:, 1:]
    return o.reshape(-1).astype(dt)
def d(a, b): return float(np.dot(a.astype(np.float64), b.astype(np.float64)))
def classic(m, tol, dt, maxit=20000):
    n=m*m; b=np.ones(n,dt); x=np.zeros(n,dt); r=b.copy(); p=np.zeros(n,dt)
    r1=d(r,r); k=0; r0=0
    while r1>tol*tol and k<maxit:
        beta=dt(0 if k==0 else r1/r0); k+=1
        p=(r+beta*p).astype(dt); ap=A(p,m,dt)
        alpha=dt(r1/d(p,ap))
        x=(x+alpha*p).astype(dt); r=(r-alpha*ap).astype(dt)
        r0=r1; r1=d(r,r)
    return k, np.linalg.norm(1-A(x.astype(np.float64),m,np.float64))/m
def gv(m, tol, dt, maxit=20000, rr_every=0):
    n=m*m; b=np.ones(n,dt); x=np.zeros(n,dt); r=b.copy(); w=A(r,m,dt)
    z=np.zeros(n,dt); s=np.zeros(n,dt); p=np.zeros(n,dt)
    k=0; g0=0; a0=0
    while True:
        g=d(r,r); de=d(w,r)
        if g<=tol*tol or k>=maxit: break
        q=A(w,m,dt)
        if k==0: beta=0.0; alpha=g/de
        else: beta=g/g0; alpha=g/(de-beta*g/a0)
        B=dt(beta); al=dt(alpha)
        z=(q+B*z).astype(dt); s=(w+B*s).astype(dt); p=(r+B*p).astype(dt)
        x=(x+al*p).astype(dt); r=(r-al*s).astype(dt); w=(w-al*z).astype(dt)
        g0=g; a0=alpha; k+=1
        if rr_every and k%rr_every==0:
            w=A(r,m,dt)   # replace w by A r only
    return k, np.linalg.norm(1-A(x.astype(np.float64),m,np.float64))/m
for m in [int(a) for a in sys.argv[1:]]:
    tol=1e-5*m
    t=time.time()
    c64=classic(m,tol,np.float64); c32=classic(m,tol,np.float32)
    g32=gv(m,tol,np.float32); g64=gv(m,tol,np.float64)
    g32w=gv(m,tol,np.float32,rr_every=50)
    print(f"m={m}: classic f64 {c64[0]} | classic f32 {c32[0]} true {c32[1]:.1e} | GV f64 {g64[0]} | GV f32 {g32[0]} true {g32[1]:.1e} | GV f32 w=Ar/50 {g32w[0]} true {g32w[1]:.1e}  ({time.time()-t:.0f}s)", flush=True)
