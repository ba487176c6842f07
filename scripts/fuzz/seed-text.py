#!/usr/bin/env python3
"""Seeds the ptx-build fuzz corpora with real inputs.

include_scan: the references, the stubs and the hostile submissions' .cu files.
diagnostics:  `source \\0 log` for every source NVRTC rejects (the hostile
              corpus and broken variants of the references), NVRTC's own log.

    LD_LIBRARY_PATH=/opt/nvrtc/nvidia/cuda_nvrtc/lib python3 scripts/fuzz/seed-text.py [OUT]

Files are named by their SHA-1 and are not committed (.gitignore): OUT
(default: fuzz/corpus) gets one folder per corpus. scripts/fuzz/run.sh runs
this before every fuzz run; only named seeds live in git.
"""
import ctypes
import glob
import hashlib
import os
import sys
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


sys.path.insert(0, os.path.join(ROOT, "grader", "tests", "corpus"))
import corpus  # noqa: E402  (a hostile case kept as an edit, FILE.cu.diff, read as its kernel)

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "fuzz", "corpus")


def put(corpus, data):
    out = os.path.join(OUT, corpus)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def nvrtc_log(lib, src):
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"kernels/k.cu", 0, None, None):
        return None
    opts = [b"--gpu-architecture=compute_75"]
    ok = lib.nvrtcCompileProgram(prog, 1, (ctypes.c_char_p * 1)(*opts)) == 0
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, buf)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return None if ok else buf.value


def main():
    sources = sorted(
        glob.glob(os.path.join(ROOT, "reference", "*", "kernels", "*.cu"))
        + glob.glob(os.path.join(ROOT, "exercises", "*", "kernels", "*.cu"))
        + glob.glob(os.path.join(ROOT, "grader", "tests", "hostile", "*", "exercises", "*", "kernels", "*.cu"))
        + glob.glob(os.path.join(ROOT, "grader", "tests", "hostile", "*", "exercises", "*", "kernels", "*.cu.diff"))
    )
    texts = {path: corpus.kernel_text(Path(path)).encode() if path.endswith(".diff") else open(path, "rb").read() for path in sources}
    for path in sources:
        put("include_scan", texts[path])
    lib = ctypes.CDLL("libnvrtc.so.12")
    broken = []
    for path in sources:
        src = texts[path]
        # Includes never reach NVRTC (the policy refuses them first); the bombs
        # take minutes to compile on purpose.
        if b"#include" in src or "bomb" in path:
            continue
        broken.append(src)
        broken.append(src.replace(b";", b"", 1))  # a syntax error
        broken.append(src.replace(b"float", b"flaot", 2))  # unknown types
        broken.append(b"template <typename T> T f(T x) { return x.y; }\n" + src + b"\nint z = f(1);\n")
    logs = 0
    for src in broken:
        log = nvrtc_log(lib, src)
        if log:
            put("diagnostics", src + b"\0" + log)
            logs += 1
    print(f"{len(sources)} sources for include_scan, {logs} logs for diagnostics")


if __name__ == "__main__":
    main()
