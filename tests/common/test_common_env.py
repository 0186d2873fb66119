"""sweep/common_env.py: the pinned arithmetic (OpenBLAS Haswell kernel, numpy dispatch up to X86_V3)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sweep import common_env

V3 = common_env.V3_FLAGS


def test_pin_sets_both_variables_on_an_x86_64_v3_cpu(monkeypatch):
    monkeypatch.setattr(common_env.platform, "machine", lambda: "x86_64")
    env = {}
    assert common_env.pin(env, V3) == {**common_env.OPENBLAS, **common_env.NUMPY} == env


def test_pin_keeps_what_is_set_and_never_sets_both_numpy_variables(monkeypatch):
    monkeypatch.setattr(common_env.platform, "machine", lambda: "x86_64")
    env = {"OPENBLAS_CORETYPE": "Zen", "NPY_ENABLE_CPU_FEATURES": "X86_V3"}
    assert common_env.pin(env, V3) == {}
    assert env == {"OPENBLAS_CORETYPE": "Zen", "NPY_ENABLE_CPU_FEATURES": "X86_V3"}


@pytest.mark.parametrize(
    "env, flags, machine",
    [({"SWEEP_NATIVE_MATH": "1"}, V3, "x86_64"), ({}, V3 - {"avx2"}, "x86_64"), ({}, V3, "aarch64")],
)
def test_pin_does_nothing_when_opted_out_or_on_another_cpu(monkeypatch, env, flags, machine):
    monkeypatch.setattr(common_env.platform, "machine", lambda: machine)
    assert common_env.pin(env, flags) == {} and "OPENBLAS_CORETYPE" not in env


@pytest.mark.skipif(not common_env.applies(), reason="not an x86-64-v3 CPU")
def test_a_process_that_imports_sweep_first_computes_with_the_pinned_code():
    code = "import sweep, numpy; from sweep.common_env import in_force; print(in_force())"
    env = {
        k: v
        for k, v in __import__("os").environ.items()
        if k not in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES", "SWEEP_NATIVE_MATH")
    }
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_the_test_session_computes_with_the_pinned_arithmetic():
    """tests/conftest.py imports sweep.common_env before anything loads numpy."""
    from sweep import common_env

    if not common_env.applies() or os.environ.get(common_env.OPT_OUT):
        pytest.skip("this CPU is not x86-64-v3, or the pins are turned off")
    assert common_env.in_force()
