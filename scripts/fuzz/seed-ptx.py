#!/usr/bin/env python3
"""Seeds the PTX fuzz corpus with PTX exactly as NVRTC emits it.

Compiles every reference solution, the simulator's test kernels and the inline
`asm` seeds of fuzz/seeds/ (with and without -lineinfo, as the grader does on
the simulator) and writes one file per result into fuzz/corpus/ptx_load/.
NVRTC copies an `asm` block's text into the PTX untouched, so the asm seeds are
how arbitrary student-written PTX reaches the parser.

    LD_LIBRARY_PATH=/opt/nvrtc/nvidia/cuda_nvrtc/lib python3 scripts/fuzz/seed-ptx.py
"""
import ctypes
import glob
import hashlib
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "fuzz", "corpus", "ptx_load")


def nvrtc():
    for name in ("libnvrtc.so.12", "libnvrtc.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    sys.exit("NVRTC not found: set LD_LIBRARY_PATH to the folder of libnvrtc.so.12")


def compile_ptx(lib, path, extra):
    src = open(path, "rb").read()
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src, os.path.basename(path).encode(), 0, None, None):
        return None
    opts = [b"--gpu-architecture=compute_75"] + extra
    arr = (ctypes.c_char_p * len(opts))(*opts)
    ok = lib.nvrtcCompileProgram(prog, len(opts), arr) == 0
    out = None
    if ok:
        size = ctypes.c_size_t()
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, buf)
        out = buf.value
    else:
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, buf)
        print(f"  {path}: {buf.value.decode(errors='replace').strip()[:300]}", file=sys.stderr)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return out


def main():
    lib = nvrtc()
    os.makedirs(OUT, exist_ok=True)
    sources = sorted(
        glob.glob(os.path.join(ROOT, "reference", "*", "kernels", "*.cu"))
        + glob.glob(os.path.join(ROOT, "ptx-sim", "tests", "kernels", "*.cu"))
        + glob.glob(os.path.join(ROOT, "fuzz", "seeds", "*.cu"))
    )
    written = 0
    for path in sources:
        for extra in ([], [b"-lineinfo"]):
            ptx = compile_ptx(lib, path, extra)
            if ptx is None:
                continue
            name = os.path.splitext(os.path.basename(path))[0]
            tag = "-lineinfo" if extra else ""
            digest = hashlib.sha256(ptx).hexdigest()[:8]
            with open(os.path.join(OUT, f"{name}{tag}-{digest}.ptx-seed"), "wb") as f:
                f.write(ptx)
            written += 1
    print(f"{written} PTX files from {len(sources)} sources in {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
