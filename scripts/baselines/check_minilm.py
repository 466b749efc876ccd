#!/usr/bin/env python3
"""Check that the provisioned all-MiniLM-L6-v2 files really work (reference baseline).

What it does, on the files laid out by `scripts/provision-models`:
  1. loads the provisioned libonnxruntime with ctypes and asks it for its version
     (OrtGetApiBase()->GetVersionString(), which must be 1.31.1);
  2. runs model.onnx with the Python onnxruntime (same version) and the tokenizer
     from tokenizer.json: truncation at 256 tokens (sentence-transformers'
     max_seq_length; tokenizer.json itself says 128), mean pooling over the
     attention mask, L2 normalisation;
  3. compares cosine similarities against reference values, and checks that the
     embedding does not depend on padding (tokenizer.json pads every input to a
     fixed 128 tokens; without mask-aware pooling the [PAD] positions would leak in).

Python packages needed: onnxruntime==1.31.1, tokenizers, numpy. Nothing is
installed globally; either provide them yourself (PYTHONPATH / a venv) or pass
--temp-deps, which pip-installs them into a temporary folder (--target), re-runs
this script with it, and removes the folder afterwards.

  python3 scripts/baselines/check_minilm.py --temp-deps
  python3 scripts/baselines/check_minilm.py --model-dir DIR --ort-dylib FILE

Defaults: DOCFUSE_MODEL_DIR / DOCFUSE_ORT_DYLIB if set, else models/ of this repo.
Exit status: 0 all checks passed, 1 a check failed, 2 setup problem.
"""

import argparse
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORT_VERSION = "1.31.1"
MAX_LENGTH = 256
ANCHOR = "That is a happy person"
# (other sentence, expected cosine with ANCHOR). These are the float32 reference values of
# sentence-transformers/all-MiniLM-L6-v2; the int8 model.onnx lands within ~0.004 of them
# (measured 0.6961, 0.9417, 0.2608), hence the default tolerance of 0.01.
EXPECTED = [
    ("That is a happy dog", 0.6945),
    ("That is a very happy person", 0.9429),
    ("Today is a sunny day", 0.2568),
]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model-dir", default=os.environ.get("DOCFUSE_MODEL_DIR")
                   or os.path.join(ROOT, "models", "all-MiniLM-L6-v2"),
                   help="folder with model.onnx and tokenizer.json")
    p.add_argument("--ort-dylib", default=os.environ.get("DOCFUSE_ORT_DYLIB")
                   or os.path.join(ROOT, "models", "onnxruntime", "libonnxruntime.so." + ORT_VERSION),
                   help="libonnxruntime shared library to sanity-check ('' to skip)")
    p.add_argument("--tolerance", type=float, default=0.01,
                   help="allowed |cosine - expected| (default 0.01)")
    p.add_argument("--temp-deps", action="store_true",
                   help="pip install onnxruntime/tokenizers into a temp folder for this run only")
    return p.parse_args()


def rerun_with_temp_deps():
    tmp = tempfile.mkdtemp(prefix="check-minilm-deps.")
    try:
        print(f"installing onnxruntime=={ORT_VERSION} and tokenizers into {tmp} (temporary)", flush=True)
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                            "--target", tmp, f"onnxruntime=={ORT_VERSION}", "tokenizers"])
        if r.returncode != 0:
            print("error: pip install of the check's dependencies failed", file=sys.stderr)
            return 2
        env = dict(os.environ)
        env.setdefault("PIP_ROOT_USER_ACTION", "ignore")
        env["PYTHONPATH"] = tmp + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        argv = [a for a in sys.argv[1:] if a != "--temp-deps"]
        return subprocess.run([sys.executable, os.path.abspath(__file__), *argv], env=env).returncode
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_dylib(path):
    class OrtApiBase(ctypes.Structure):
        _fields_ = [("GetApi", ctypes.c_void_p),
                    ("GetVersionString", ctypes.CFUNCTYPE(ctypes.c_char_p))]

    lib = ctypes.CDLL(path)
    lib.OrtGetApiBase.restype = ctypes.POINTER(OrtApiBase)
    version = lib.OrtGetApiBase().contents.GetVersionString().decode()
    return version


def main():
    args = parse_args()
    if args.temp_deps:
        return rerun_with_temp_deps()

    try:
        import numpy as np
        import onnxruntime as ort
        from tokenizers import Tokenizer
    except ImportError as e:
        print(f"error: {e}; run with --temp-deps, or put onnxruntime=={ORT_VERSION}, "
              "tokenizers and numpy on PYTHONPATH", file=sys.stderr)
        return 2

    failures = []

    if args.ort_dylib:
        if not os.path.isfile(args.ort_dylib):
            print(f"error: no ONNX Runtime library at {args.ort_dylib} (run scripts/provision-models)",
                  file=sys.stderr)
            return 2
        v = check_dylib(args.ort_dylib)
        ok = v == ORT_VERSION
        print(f"{'ok  ' if ok else 'FAIL'} {args.ort_dylib}: OrtGetApiBase()->GetVersionString() = {v}")
        if not ok:
            failures.append(f"dylib version {v} != {ORT_VERSION}")

    model = os.path.join(args.model_dir, "model.onnx")
    tok_file = os.path.join(args.model_dir, "tokenizer.json")
    for f in (model, tok_file):
        if not os.path.isfile(f):
            print(f"error: {f} is missing (run scripts/provision-models)", file=sys.stderr)
            return 2
    if ort.__version__ != ORT_VERSION:
        print(f"note: python onnxruntime is {ort.__version__}, not {ORT_VERSION}")

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    input_names = {i.name for i in sess.get_inputs()}

    tok_padded = Tokenizer.from_file(tok_file)          # as shipped: pads to a fixed 128
    tok_padded.enable_truncation(MAX_LENGTH)
    tok_plain = Tokenizer.from_file(tok_file)
    tok_plain.no_padding()
    tok_plain.enable_truncation(MAX_LENGTH)

    def embed(tok, texts):
        encs = tok.encode_batch(texts)
        n = max(len(e.ids) for e in encs)
        pad = lambda xs: xs + [0] * (n - len(xs))  # noqa: E731 (batch padding; mask marks it)
        feeds = {
            "input_ids": np.array([pad(e.ids) for e in encs], dtype=np.int64),
            "attention_mask": np.array([pad(e.attention_mask) for e in encs], dtype=np.int64),
            "token_type_ids": np.array([pad(e.type_ids) for e in encs], dtype=np.int64),
        }
        feeds = {k: v for k, v in feeds.items() if k in input_names}
        hidden = sess.run(None, feeds)[0]                       # (batch, seq, 384)
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True), encs

    texts = [ANCHOR] + [t for t, _ in EXPECTED]
    emb, encs = embed(tok_padded, texts)
    emb_plain, _ = embed(tok_plain, texts)
    print(f"model {model}: {emb.shape[1]}-d embeddings; tokenizer pads to {len(encs[0].ids)} tokens, "
          f"'{ANCHOR}' has {sum(encs[0].attention_mask)} real tokens")

    for i, (text, want) in enumerate(EXPECTED, start=1):
        got = float(emb[0] @ emb[i])
        ok = abs(got - want) <= args.tolerance
        print(f"{'ok  ' if ok else 'FAIL'} cos({ANCHOR!r}, {text!r}) = {got:.4f} (expected {want:.4f}, delta {got - want:+.4f})")
        if not ok:
            failures.append(f"cosine for {text!r}: {got:.4f} vs {want:.4f}")

    drift = float(np.abs(emb - emb_plain).max())
    ok = drift < 1e-4
    print(f"{'ok  ' if ok else 'FAIL'} padding-independence: max |padded - unpadded| = {drift:.2e}")
    if not ok:
        failures.append("embeddings depend on padding")

    long_text = " ".join(["word"] * 400)
    n_long = len(tok_plain.encode(long_text).ids)
    ok = n_long == MAX_LENGTH
    print(f"{'ok  ' if ok else 'FAIL'} truncation: a 400-word text becomes {n_long} tokens (max {MAX_LENGTH})")
    if not ok:
        failures.append("truncation length")
    embed(tok_padded, [long_text])  # the model accepts 256 positions

    if failures:
        print("FAILED: " + "; ".join(failures), file=sys.stderr)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
