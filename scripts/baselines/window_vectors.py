#!/usr/bin/env python3
"""Would embedding a long chunk as several windows help the vector side?

MiniLM reads at most 256 word pieces; a chunk's embedding input past that is never seen (on
the Cargo book 855 of 2,431 chunks, 26 % of all word pieces). Simulation over an index's own
chunk vectors, vector mode, section level (a section's score is its best chunk's cosine):
a chunk over 256 word pieces is cut at line ends into windows of at most LIMIT word pieces,
each prefixed with the chunk's title and heading path, embedded with Python onnxruntime and
docfuse's model, then scored by the windows' normalised mean vector, by the best window, or
by max(truncated, mean of window cosines). Prints MRR@10 and the share with no hit in the
top 10 (labels matched on path and last heading).

  docfuse chunks --index DIR > chunks.jsonl
  PYTHONPATH=PYDIR python3 window_vectors.py chunks.jsonl DIR QUERIES.jsonl [LIMIT] [MODEL_DIR]
"""
import glob, json, sys, time
import numpy as np, onnxruntime as ort
from tokenizers import Tokenizer
M=sys.argv[5] if len(sys.argv)>5 else 'models/all-MiniLM-L6-v2'
tok=Tokenizer.from_file(M+'/tokenizer.json'); tok.no_padding(); tok.no_truncation()
so=ort.SessionOptions(); so.intra_op_num_threads=2
s=ort.InferenceSession(M+'/model.onnx',so,providers=['CPUExecutionProvider'])
def emb_ids(ids):
    ids=np.array([ids],dtype=np.int64)
    v=s.run(None,{'input_ids':ids,'attention_mask':np.ones_like(ids),'token_type_ids':np.zeros_like(ids)})[0][0].mean(0)
    return v/np.linalg.norm(v)
def emb(t):
    ids=tok.encode(t).ids
    return emb_ids(ids[:255]+[ids[-1]] if len(ids)>256 else ids)
def header(c):
    stem=c['path'].rsplit('/',1)[-1].rsplit('.',1)[0]
    title=c['title'] if c['title']!=stem else ''
    path=' › '.join(c['heading_path'])
    if path and path!=title: return (title+'\n'+path).strip()
    return title
def windows(c, limit):
    h=header(c); hn=len(tok.encode(h).ids)
    lines=c['text'].split('\n'); out=[]; cur=[]; n=hn
    for ln in lines:
        k=len(tok.encode(ln,add_special_tokens=False).ids)+1
        if cur and n+k>limit:
            out.append(h+'\n\n'+'\n'.join(cur).strip()); cur=[]; n=hn
        cur.append(ln); n+=k
    if cur: out.append(h+'\n\n'+'\n'.join(cur).strip())
    return out
chunks=[json.loads(l) for l in open(sys.argv[1])]
gen=sorted(glob.glob(sys.argv[2]+'/gen-*/vectors.f32'))[-1]
V=np.fromfile(gen,dtype=np.float32).reshape(len(chunks),-1)
qs=[json.loads(l) for l in open(sys.argv[3]) if l.strip()]
Q=np.stack([emb(q['query']) for q in qs])
limit=int(sys.argv[4]) if len(sys.argv)>4 else 250
t=time.time(); long=[]
for i,c in enumerate(chunks):
    if len(tok.encode(header(c)+'\n\n'+c['text']).ids)>256: long.append(i)
W={}
for i in long:
    W[i]=np.stack([emb(w) for w in windows(chunks[i],limit)])
print('long',len(long),'windows',sum(len(w) for w in W.values()),'s',round(time.time()-t),file=sys.stderr)
secs={}
for i,c in enumerate(chunks): secs.setdefault((c['path'],tuple(c['heading_path'])),[]).append(i)
keys=list(secs)
def rel(q,k): return any(k[0]==r['path'] and k[1] and k[1][-1]==r['heading'] for r in q['relevant'])
def report(label,CS):
    S=np.stack([CS[:,secs[k]].max(1) for k in keys]).T
    rr=0;none=0;r5=0
    for qi,q in enumerate(qs):
        top=np.argsort(-S[qi],kind='stable')[:10]
        f=next((r for r,j in enumerate(top) if rel(q,keys[j])),None)
        rr+=0 if f is None else 1/(f+1); none+=f is None
    print(f'{label:12} MRR@10 {rr/len(qs):.4f} none@10 {none/len(qs):.3f}')
base=Q@V.T; report('base',base)
for name in ('mean','max','first+mean'):
    CS=base.copy()
    for i,w in W.items():
        sims=Q@w.T
        if name=='max': CS[:,i]=sims.max(1)
        elif name=='mean':
            m=w.mean(0); m/=np.linalg.norm(m); CS[:,i]=Q@m
        else: CS[:,i]=np.maximum(base[:,i],sims.mean(1))
    report(name,CS)
# the chunk's own vector, or a tail window's cosine less a margin, whichever is higher
for d in (0.0,0.02,0.05,0.1,0.15):
    CS=base.copy()
    for i,w in W.items():
        if len(w)>1: CS[:,i]=np.maximum(base[:,i],(Q@w[1:].T).max(1)-d)
    report(f'tail-{d}',CS)
# one vector per chunk: the first window's vector plus beta times the tail windows' mean,
# renormalised (no second vector set; tested 2026-12-05)
for beta in (0.1,0.2,0.3,0.5):
    CS=base.copy()
    for i,w in W.items():
        if len(w)>1:
            v=w[0]+beta*w[1:].mean(0); v/=np.linalg.norm(v); CS[:,i]=Q@v
    report(f'blend-{beta}',CS)
