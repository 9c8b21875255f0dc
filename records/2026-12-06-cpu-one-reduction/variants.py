import numpy as np, sys
f=np.float32
def A_csr(v, m, dt):
    # CSR order: up, left, centre, right, down; each product then added in dt
    u=v.reshape(m,m).astype(dt); z=np.zeros((m,m),dt)
    up=np.zeros_like(u); up[1:,:]=u[:-1,:]
    lf=np.zeros_like(u); lf[:,1:]=u[:,:-1]
    rt=np.zeros_like(u); rt[:,:-1]=u[:,1:]
    dn=np.zeros_like(u); dn[:-1,:]=u[1:,:]
    s=z
    s=(s+dt(-1)*up).astype(dt); s=(s+dt(-1)*lf).astype(dt); s=(s+dt(4)*u).astype(dt); s=(s+dt(-1)*rt).astype(dt); s=(s+dt(-1)*dn).astype(dt)
    return s.reshape(-1)
def A64(v,m): return A_csr(v.astype(np.float64),m,np.float64)
def d(a,b): return float(np.dot(a.astype(np.float64),b.astype(np.float64)))
def classic(m,tol,dt,vdt=None):
    n=m*m; b=np.ones(n,dt); x=np.zeros(n,dt); r=b.copy(); p=np.zeros(n,dt)
    r1=d(r,r); k=0; r0=0
    while r1>tol*tol and k<20000:
        beta=dt(0 if k==0 else r1/r0); k+=1
        p=(r+beta*p).astype(dt); ap=A_csr(p,m,dt)
        alpha=dt(r1/d(p,ap))
        x=(x+alpha*p).astype(dt); r=(r-alpha*ap).astype(dt)
        r0=r1; r1=d(r,r)
    return k
def chrono(m,tol,dts):
    # dts: dict vector->dtype for x r p s w
    n=m*m; V={k:np.zeros(n,dts[k]) for k in 'xrpsw'}; V['r'][:]=1
    k=0; g0=0; a0=0
    while True:
        V['w'][:]=A_csr(V['r'],m,dts['w'])
        g=d(V['r'],V['r']); de=d(V['w'],V['r'])
        if g<=tol*tol or k>=20000: break
        if k==0: beta=0.0; alpha=g/de
        else: beta=g/g0; alpha=g/(de-beta*g/a0)
        for (a,b2,c) in [('p','r',None)]: pass
        V['p'][:]=V['r']+dts['p'](beta)*V['p']
        V['s'][:]=V['w']+dts['s'](beta)*V['s']
        V['x'][:]=V['x']+dts['x'](alpha)*V['p']
        V['r'][:]=V['r']-dts['r'](alpha)*V['s']
        g0=g; a0=alpha; k+=1
    return k
for m in [int(a) for a in sys.argv[1:]]:
    tol=1e-5*m
    F={k:np.float32 for k in 'xrpsw'}; D={k:np.float64 for k in 'xrpsw'}
    out=[f"m={m}: classic64 {classic(m,tol,np.float64)} classic32(csr order) {classic(m,tol,np.float32)}",
         f"chrono32 {chrono(m,tol,F)} chrono64 {chrono(m,tol,D)}"]
    for v in 'rps':
        G=dict(F); G[v]=np.float64; out.append(f"chrono32+{v}64 {chrono(m,tol,G)}")
    G=dict(F); G['r']=np.float64; G['s']=np.float64; out.append(f"chrono32+rs64 {chrono(m,tol,G)}")
    print(" | ".join(out), flush=True)
