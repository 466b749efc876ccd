#!/usr/bin/env python3
"""How often made-up queries are answered with semantic neighbours.

Usage: python3 scripts/noise_probe_check.py [--docfuse BIN] [--n 100] INDEX...

Generates N random made-up queries (syllables and keyboard runs, seeded: the same
queries every run, none of them docfuse's own NOISE_PROBES) and searches each index in
its default mode. Prints, per index, how many were answered with results that share no
word of the query (neighbours by meaning alone); the rest got no results (exit 1) or
matched a real word by chance. The model is found as docfuse finds it (set
DOCFUSE_MODEL_DIR / DOCFUSE_ORT_DYLIB for a copied binary).
"""
import argparse
import json
import random
import subprocess


def made_up(rng):
    consonants, vowels = "bcdfghjklmnpqrstvwxz", "aeiouy"
    if rng.random() < 0.2:
        return "".join(rng.choice("qwertyuiopasdfghjklzxcvbnm") for _ in range(rng.randint(3, 7)))
    syllables = rng.randint(2, 4)
    return "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(syllables)) + rng.choice(consonants)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docfuse", default="target/release/docfuse")
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("index", nargs="+")
    a = ap.parse_args()
    rng = random.Random(123)
    queries = [" ".join(made_up(rng) for _ in range(rng.randint(1, 3))) for _ in range(a.n)]
    for idx in a.index:
        answered, empty, worded = [], 0, 0
        for q in queries:
            o = subprocess.run([a.docfuse, "search", "--index", idx, "--json", "--limit", "3", q],
                               capture_output=True, text=True)
            v = json.loads(o.stdout)
            if not v["results"]:
                empty += 1
            elif any(r.get("matched_terms") for r in v["results"]):
                worded += 1
            else:
                answered.append(q)
        print(f"{idx}: {len(queries)} made-up queries: {empty} no results, {worded} matched a real word, "
              f"{len(answered)} answered with neighbours {answered[:5]}")


if __name__ == "__main__":
    main()
