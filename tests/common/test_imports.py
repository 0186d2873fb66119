"""The rooms' import rules (docs/architecture.md): `market/<a>` and `algorithms/<a>` import no
other family, only `common`; `market/` imports no `algorithms/`; neither imports Ray, MLflow,
Hydra or OmegaConf; `sweep/` and `hydra_plugins/` name no family. `arena/` (docs/arena.md)
composes families: it may import any family's `market/` and `algorithms/`, but not the engine
(`sweep/`, `hydra_plugins/`), `reproduction/` or the frameworks, and nothing imports it but its
reproduction, its tests and the engine's `family.module`."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS = {"ray", "mlflow", "hydra", "omegaconf"}
FAMILIES = sorted(p.stem for p in (ROOT / "conf" / "family").glob("*.yaml"))


def imports(path: Path) -> list[str]:
    """Absolute module names a file imports (relative imports resolved against its package)."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names += [module] if node.module else [f"{module}.{alias.name}" for alias in node.names]
    return names


def files(room: str) -> list[Path]:
    return sorted((ROOT / room).rglob("*.py"))


@pytest.mark.parametrize("room", ["market", "algorithms", "arena"])
def test_no_framework_imports(room):
    for path in files(room):
        for name in imports(path):
            assert name.split(".")[0] not in FRAMEWORKS, f"{path.relative_to(ROOT)} imports {name}"


@pytest.mark.parametrize("room", ["market", "algorithms"])
def test_a_family_imports_no_other_family(room):
    for path in files(room):
        parts = path.relative_to(ROOT / room).parts
        own = parts[0] if len(parts) > 1 else None  # market/__init__.py belongs to no family
        for name in imports(path):
            top = name.split(".")
            if top[0] in ("market", "algorithms") and len(top) > 1 and top[1] in FAMILIES:
                assert top[1] == own, f"{path.relative_to(ROOT)} ({own or 'common'}) imports {name}"
            if own == "common":
                assert not (top[0] in ("market", "algorithms") and len(top) > 1 and top[1] in FAMILIES), (
                    f"{path.relative_to(ROOT)}: common code imports the family module {name}"
                )


def test_the_arena_imports_families_but_not_the_engine():
    for path in files("arena"):
        for name in imports(path):
            assert name.split(".")[0] not in ("sweep", "hydra_plugins", "reproduction"), (
                f"{path.relative_to(ROOT)} imports {name}"
            )
    for room in ("market", "algorithms", "sweep", "hydra_plugins"):
        for path in files(room):
            assert not [n for n in imports(path) if n.split(".")[0] == "arena"], path


def test_market_imports_no_algorithms():
    for path in files("market"):
        assert not [n for n in imports(path) if n.split(".")[0] == "algorithms"], path


@pytest.mark.parametrize("room", ["sweep", "hydra_plugins"])
def test_the_engine_names_no_family(room):
    pattern = re.compile(r"\b(" + "|".join(FAMILIES) + r")\b")
    for path in files(room):
        for name in imports(path):
            top = name.split(".")  # a family's package, not a namesake such as hydra.core
            assert not (top[0] in ("market", "algorithms", "reproduction") and len(top) > 1 and top[1] in FAMILIES), (
                f"{path.relative_to(ROOT)} imports {name}"
            )
        code = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("#"))
        strings = [
            node.value
            for node in ast.walk(ast.parse(code))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and not _is_docstring(node, code)
        ]
        named = [s for s in strings if pattern.search(s)]
        assert not named, f"{path.relative_to(ROOT)} names a family in code: {named[:3]}"


def _is_docstring(node: ast.Constant, code: str) -> bool:
    return "\n" in node.value or len(node.value) > 80


def test_the_rule_catches_a_cross_family_import(tmp_path):
    fake = ROOT / "algorithms" / "auction" / "_probe_cross_import.py"
    fake.write_text("from algorithms.spot.registry import expand\n")
    try:
        with pytest.raises(AssertionError, match="imports algorithms.spot.registry"):
            test_a_family_imports_no_other_family("algorithms")
    finally:
        fake.unlink()
