#!/usr/bin/env python3
"""Does batching or running parallel sessions embed faster, and does it change vectors?
Python onnxruntime on docfuse's model and tokenizer (truncation 256, mean pooling over the
attention mask, L2 normalisation), the first N texts of TEXTS.jsonl (one JSON string per
line, as scripts/bench-embed writes them), against one session with 2 threads embedding
one text per call. Prints chunks/s and whether each route's vectors are bit-identical.

  PYTHONPATH=DIR python3 embed_batching.py TEXTS.jsonl MODEL_DIR [N]

Needs onnxruntime==1.31.1, tokenizers and numpy (pip install --target DIR ...).
"""
import json
import sys
import threading
import time
from collections import defaultdict

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def main():
    model = sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    texts = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][:n]
    tok = Tokenizer.from_file(model + "/tokenizer.json")
    tok.enable_truncation(256)
    tok.no_padding()
    encs = [tok.encode(t) for t in texts]

    def session(threads):
        o = ort.SessionOptions()
        o.intra_op_num_threads = threads
        o.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(model + "/model.onnx", o, providers=["CPUExecutionProvider"])

    def run(s, idxs):
        width = max(len(encs[i].ids) for i in idxs)
        ids = np.zeros((len(idxs), width), np.int64)
        mask = np.zeros((len(idxs), width), np.int64)
        for r, i in enumerate(idxs):
            k = len(encs[i].ids)
            ids[r, :k] = encs[i].ids
            mask[r, :k] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        out = s.run(None, feeds)[0]
        m = mask[..., None].astype(np.float32)
        v = (out * m).sum(1) / np.maximum(m.sum(1), 1.0)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def timed(label, fill, base=None):
        out = np.zeros((len(texts), 384), np.float32)
        t = time.perf_counter()
        fill(out)
        s = time.perf_counter() - t
        same = "—" if base is None else ("bit-identical" if (out == base).all() else f"differ (max {abs(out - base).max():.2g})")
        print(f"| {label} | {len(texts) / s:.1f} | {same} |")
        return out

    print("| route | chunks/s | vectors vs the first row |")
    print("| --- | ---: | --- |")
    two = session(2)
    run(two, [0])

    def one_by_one(s):
        def fill(out):
            for i in range(len(texts)):
                out[i] = run(s, [i])[0]
        return fill

    base = timed("one session, 2 threads, one text per call", one_by_one(two))
    single = session(1)
    run(single, [0])
    timed("one session, 1 thread, one text per call", one_by_one(single), base)
    pair = [session(1), session(1)]
    for s in pair:
        run(s, [0])

    def parallel(out):
        def work(s, idx):
            for i in idx:
                out[i] = run(s, [i])[0]
        th = [threading.Thread(target=work, args=(s, range(k, len(texts), 2))) for k, s in enumerate(pair)]
        for t in th:
            t.start()
        for t in th:
            t.join()

    timed("two 1-thread sessions in parallel, one text per call each", parallel, base)
    by_len = defaultdict(list)
    for i, e in enumerate(encs):
        by_len[len(e.ids)].append(i)

    def equal(out):
        for idx in by_len.values():
            for k in range(0, len(idx), 16):
                b = idx[k:k + 16]
                out[b] = run(two, b)

    timed("batches of 16 texts of equal token counts", equal, base)
    order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))

    def padded(out):
        for k in range(0, len(order), 16):
            b = order[k:k + 16]
            out[b] = run(two, b)

    timed("batches of 16 length-sorted texts, padded", padded, base)


if __name__ == "__main__":
    main()
