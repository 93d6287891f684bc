"""Peer: the NuMax authors' MATLAB code (github.com/image-science-lab/NuMax) under GNU Octave, on the
suite's NuMax and point-form NuMax-Class instances.

Setup (what ``peer`` checks; ``grade_peers.py`` compiles the MEX files itself):

    git clone https://github.com/image-science-lab/NuMax /path/to/NuMax   # or --numax-code PATH
    apt-get install -y octave octave-statistics liboctave-dev   # Debian/Ubuntu; liboctave-dev: mkoctfile
    python benchmarks/grade_peers.py --numax-code /path/to/NuMax

minFunc (bundled with the code) calls its C routines ``lbfgsC``, ``lbfgsAddC``, ``lbfgsProdC`` and
``mcholC`` as MEX files; the shipped binaries are MATLAB's, so their C sources (``minFunc/mex/``) are
compiled with ``mkoctfile --mex`` into a build directory placed first on Octave's path.

What runs (``numax_octave.m``): a secant-form NuMax instance goes to ``NuMax.m`` with the parameters
of the authors' ``demo_numax.m`` (L-BFGS inner solver, 1000 outer iterations, its default stopping
tolerance 1e-4 on its relative residuals); a point-form instance to the authors' wrapper
``numax_wrapper_function.m`` — ``NuMax_CG.m`` (NuMax) or ``NuMax_CG_Directional.m`` (NuMax-Class),
column generation over all pairs. Secant-form NuMax-Class instances are skipped (exit 3): the
authors' classification code takes points and labels, not two secant sets. The tighter setting sets
``opt.tol = 1e-8`` and allows ten times the iterations. The solution is the P the code returns.

    python benchmarks/peers/numax_octave.py --code DIR --mex DIR [--tight] INSTANCE SOLUTION

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. The SDPs (4) and (15), Algorithms 1 and 2.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

try:
    from . import Options, Peer, Setting, script_command
except ImportError:                      # run as the graded program
    pass
try:
    from . import _npz
except ImportError:
    import _npz

URL = "https://github.com/image-science-lab/NuMax"
HERE = Path(__file__).resolve().parent
MEX_SOURCES = ("lbfgsC", "lbfgsAddC", "lbfgsProdC", "mcholC")


def compile_mex(code: Path, build: Path) -> str | None:
    """Compile minFunc's C sources into ``build`` (once); None, or why it failed."""
    build.mkdir(parents=True, exist_ok=True)
    for name in MEX_SOURCES:
        target = build / f"{name}.mex"
        if target.exists():
            continue
        proc = subprocess.run(["mkoctfile", "--mex", "-o", str(target), str(code / "minFunc" / "mex" / f"{name}.c")],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return f"mkoctfile --mex {name}.c failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}"
    return None


def peer(options: Options) -> Peer:
    code = Path(options.numax_code) if options.numax_code else None
    build = Path(tempfile.gettempdir()) / "sdpembed-numax-mex"
    missing = None
    if code is None:
        missing = f"no checkout of {URL} (git clone it and pass --numax-code DIR)"
    elif not (code / "functions" / "NuMax.m").is_file():
        missing = f"{code}/functions/NuMax.m does not exist"
    elif shutil.which(options.octave) is None:
        missing = "GNU Octave is not installed (apt-get install octave octave-statistics)"
    elif shutil.which("mkoctfile") is None:
        missing = "mkoctfile is not installed (apt-get install liboctave-dev): minFunc's MEX files need it"
    else:
        missing = compile_mex(code, build)
    args = ["--code", str(code), "--mex", str(build), "--octave", options.octave]
    return Peer("NuMax authors' MATLAB code, GNU Octave", "numax,numax_class", "ADMM (NuMax.m, NuMax_CG*.m)",
                (Setting("defaults", "demo_numax.m / numax_wrapper_function.m parameters (tol 1e-4)",
                         script_command(options.python, "numax_octave", *args)),
                 Setting("tighter", "opt.tol 1e-8, ten times the iterations",
                         script_command(options.python, "numax_octave", *args, "--tight"))),
                missing=missing)


def main(argv: list[str] | None = None) -> int:
    from scipy.io import loadmat, savemat

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", required=True)
    parser.add_argument("--mex", required=True)
    parser.add_argument("--octave", default="octave")
    parser.add_argument("--tight", action="store_true")
    parser.add_argument("instance")
    parser.add_argument("solution")
    args = parser.parse_args(argv)
    inst = _npz.read_instance(args.instance)
    if inst["problem"] == "numax" and "secants" in inst:
        data = {"mode": "secants", "secants": inst["secants"].T}
    elif "X" in inst:
        data = {"mode": "points" if inst["problem"] == "numax" else "points_class", "data": inst["X"].T,
                "labels": inst["y"].astype(float) if "y" in inst else np.zeros(1)}
    else:
        _npz.skip("the authors' NuMax-Class code takes points and labels, not secant sets")
    with tempfile.TemporaryDirectory() as tmp:
        infile, outfile = Path(tmp) / "in.mat", Path(tmp) / "out.mat"
        savemat(infile, {**data, "delta": float(inst["delta"])})
        call = (f"numax_octave('{args.code}', '{args.mex}', '{infile}', '{outfile}', {int(args.tight)})")
        proc = subprocess.run([args.octave, "--no-gui", "--quiet", "--norc", "--path", str(HERE), "--eval", call])
        if proc.returncode != 0 or not outfile.exists():
            print(f"octave exited with status {proc.returncode}", file=sys.stderr)
            return 1
        P = loadmat(outfile)["P"]
    _npz.write_solution(args.solution, P=P)
    return 0


if __name__ == "__main__":
    sys.exit(main())
