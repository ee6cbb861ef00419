#!/usr/bin/env python3
"""Callee fan-out of `show --callgraph` on 150 functions of a repository.

Usage: graph-fanout.py LODE ROOT. Prints totals: callees listed, name-only edges,
crowded sites and the edges they would have made (sites x definitions)."""
import collections, json, subprocess, sys, tempfile
lode,root=sys.argv[1],sys.argv[2]
cache=tempfile.mkdtemp()
def run(*a):
    r=subprocess.run([lode,*a,'--root',root,'--cache-dir',cache,'--json'],capture_output=True,text=True)
    return json.loads(r.stdout) if r.stdout.strip() else None
run('index')
# functions: take outline of a dir
o=run('outline','.', '--max-symbols','100000')
syms=[]
for f in o['files']:
    for s in f['symbols']:
        if s['kind'] in('function','method'): syms.append(f"{f['path']}:{s['line']}")
syms=syms[::max(1,len(syms)//150)][:150]
tot=collections.Counter()
for s in syms:
    v=run('show',s,'--callgraph')
    if not v or 'callees' not in v: continue
    tot['symbols']+=1
    ce=v['callees']; tot['callees']+=len(ce); tot['name_edges']+=sum(1 for c in ce if c['resolution']=='name')
    for c in v.get('crowded_callees',[]):
        tot['crowded_sites']+=len(c['sites']); tot['crowded_edges_before']+=len(c['sites'])*c['definitions']
    big=len(ce)+sum(len(c['sites'])*c['definitions'] for c in v.get('crowded_callees',[]))
    tot['max_before']=max(tot['max_before'],big); tot['max_after']=max(tot['max_after'],len(ce))
    ca=v['callers']; tot['callers']+=len(ca)
    for c in v.get('crowded_callers',[]): tot['crowded_caller_sites']+=len(c['sites'])
print(dict(tot))
