"""Pinned floating-point arithmetic, so that a run gives the same bits on every x86-64-v3 CPU.

Measured on the spot family (Fig. 5 ARIMA, Fig. 9 cells): its numbers depend on the CPU through
two libraries that pick their code at run time:

* OpenBLAS (numpy's and scipy's) picks a kernel per CPU (Haswell on AVX2 CPUs and AMD Zen,
  SkylakeX on AVX-512 Intel CPUs, ...): the market's AR(1) paths (a matrix product) and
  statsmodels' ARIMA fits change in the last bits;
* numpy dispatches its ufuncs (exp, cos, log, ...) to AVX-512 code where the CPU has it.

A last-bit change in a world's prices moves ARIMA's fitted parameters by up to 1e-4 and flips
AHAP's threshold decisions in some worlds, so report means move in the 4th-5th significant digit.
`pin()` fixes both choices to the x86-64-v3 (AVX2 + FMA) code: OpenBLAS's Haswell kernel and
numpy's dispatch up to X86_V3. The committed reports were made with that arithmetic. Numba's
kernels, CP-SAT (one worker) and OpenBLAS's thread count were measured not to change any bit.

The variables act when numpy (OpenBLAS) is first loaded, so `pin()` runs when `sweep` is
imported (sweep/__init__.py), before numpy: in the sweep driver, in Ray workers (a local Ray
inherits the driver's environment; a cluster's workers import `sweep` before numpy) and in
`python -m reproduction`. A variable already set is kept; SWEEP_NATIVE_MATH=1 turns the pins off
(each CPU's fastest code, results reproducible only on the same kind of CPU). CPUs without
AVX2/FMA and other architectures are left as they are (Haswell kernels would not run there).

A simulation worker also runs its math libraries on one thread each (`pin_worker_threads`): the
pool already has one worker per CPU, and a library's extra threads only compete with the other
workers (OpenBLAS's idle threads spin). Ray sets OMP_NUM_THREADS=1 for a one-CPU actor, which
OpenBLAS follows; the pins make that hold whatever OMP_NUM_THREADS says, and for Numba. A thread
variable the user set is kept.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping, MutableMapping

OPT_OUT = "SWEEP_NATIVE_MATH"
OPENBLAS = {"OPENBLAS_CORETYPE": "Haswell"}
# numpy 2.4's dispatch targets above X86_V3 (numpy._core._multiarray_umath.__cpu_dispatch__).
# Disabling a target the CPU lacks is allowed (NPY_ENABLE_CPU_FEATURES would raise instead).
NUMPY = {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
V3_FLAGS = frozenset({"avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "movbe", "abm"})


def cpu_flags() -> frozenset[str]:
    """The CPU's flags from /proc/cpuinfo (empty where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def applies(flags: frozenset[str] | None = None) -> bool:
    """Whether this CPU runs the pinned code: x86-64 with the x86-64-v3 flags."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    return V3_FLAGS <= (cpu_flags() if flags is None else flags)


def pin(environ: MutableMapping[str, str] = os.environ, flags: frozenset[str] | None = None) -> dict[str, str]:
    """Set the pinned variables that are not set yet in `environ`; return those it set.

    Acts only before numpy is imported. Nothing when SWEEP_NATIVE_MATH is set or the CPU
    is not x86-64-v3; the numpy pin is skipped when NPY_ENABLE_CPU_FEATURES is set (numpy
    refuses both)."""
    if environ.get(OPT_OUT) or not applies(flags):
        return {}
    wanted = dict(OPENBLAS)
    if "NPY_ENABLE_CPU_FEATURES" not in environ:
        wanted.update(NUMPY)
    added = {key: value for key, value in wanted.items() if key not in environ}
    environ.update(added)
    return added


# One thread each in a simulation worker; OMP_NUM_THREADS is Ray's (and the user's) to set.
WORKER_THREADS = {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


def worker_threads(environ: Mapping[str, str]) -> dict[str, str]:
    """The thread variables a simulation worker sets: those of WORKER_THREADS not set yet."""
    return {key: value for key, value in WORKER_THREADS.items() if key not in environ}


def pin_worker_threads() -> dict[str, str]:
    """In a simulation worker: one thread for each math library, unless its variable is set.

    The variables act on libraries loaded later (a family's scipy, Numba); the BLAS libraries
    already loaded (numpy's OpenBLAS) are limited through threadpoolctl. Returns the variables
    it set. Never run in the driver: a user's own numpy keeps its threads."""
    added = worker_threads(os.environ)
    os.environ.update(added)
    if "OPENBLAS_NUM_THREADS" in added:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1, user_api="blas")  # stays in force (not used as a context manager)
    return added


def in_force() -> bool:
    """After numpy's import: whether this process computes with the pinned code."""
    import numpy as np  # noqa: F401  (loads OpenBLAS)
    from numpy._core._multiarray_umath import __cpu_features__ as features
    from threadpoolctl import threadpool_info

    kernels = {info.get("architecture") for info in threadpool_info() if info.get("internal_api") == "openblas"}
    above = [name for name in NUMPY["NPY_DISABLE_CPU_FEATURES"].split() if features.get(name)]
    return kernels == {OPENBLAS["OPENBLAS_CORETYPE"]} and not above and bool(features.get("X86_V3"))


pin()
