#!/usr/bin/env python3
"""PageRank values that src/graph/pagerank.rs's test pins, computed independently with
networkx (`pip install networkx`): nx.pagerank(G, alpha=0.85, tol=1e-6) on a DiGraph
(duplicate edges count once). Usage: python3 scripts/baselines/pagerank_networkx.py"""
import networkx as nx

# 0 -> 1, 0 -> 2, 1 -> 2, 2 -> 0, 3 -> 2, 5 -> 4 (4 dangling), duplicate 0 -> 1
EDGES = [(0, 1), (0, 2), (1, 2), (2, 0), (3, 2), (5, 4), (0, 1)]
g = nx.DiGraph()
g.add_nodes_from(range(6))
g.add_edges_from(EDGES)
# networkx's pure-Python implementation (nx.pagerank itself needs numpy and scipy)
from networkx.algorithms.link_analysis.pagerank_alg import _pagerank_python
pr = _pagerank_python(g, alpha=0.85, tol=1e-6)
print("[" + ", ".join(f"{pr[i]:.12f}" for i in range(6)) + "]")
