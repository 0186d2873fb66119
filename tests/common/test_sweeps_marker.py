"""The `sweeps` marker: a test module that starts a sweep says so with
`pytestmark = pytest.mark.sweeps`, so that `-m "not sweeps"` leaves out every test that starts
Ray, a subprocess sweep or an MLflow server (tests/conftest.py).

Reading the modules' source suffices here: the check is that the marker is declared wherever a
sweep visibly starts, not which tests run together. It finds the calls that start one (`run_cli`,
`batch_run`, `run_cells`, `ray.init`, `task_queue.connect`), a `[sys.executable, "-m", "sweep"]`
or `"-m", "reproduction"` command and the `mlflow_server` fixture; a module that starts a sweep
some other way (`make smoke` in tests/engine/test_make_smoke.py) is marked by hand."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
CALLS = {"run_cli", "batch_run", "run_cells"}  # by their last name: `sweep.batch_run`, `worker.run_cells`
DOTTED_CALLS = {"ray.init", "task_queue.connect"}
MODULES = {"sweep", "reproduction"}


def dotted(node: ast.AST) -> str:
    """`a.b.c` for a chain of names, '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


def constant(node: ast.AST) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def sweep_starts(tree: ast.Module) -> list[str]:
    """What in the module starts a sweep, as `line: what`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            last = func.attr if isinstance(func, ast.Attribute) else dotted(func)
            if last in CALLS or dotted(func) in DOTTED_CALLS:
                found.append(f"{node.lineno}: {dotted(func) or last}()")
        elif isinstance(node, ast.List | ast.Tuple):
            words = node.elts
            for i in range(1, len(words) - 1):
                if dotted(words[i - 1]) == "sys.executable" and constant(words[i]) == "-m":
                    if constant(words[i + 1]) in MODULES:
                        found.append(f"{node.lineno}: python -m {constant(words[i + 1])}")
        elif isinstance(node, ast.FunctionDef):
            if "mlflow_server" in [arg.arg for arg in node.args.args]:
                found.append(f"{node.lineno}: the mlflow_server fixture")
    return sorted(found, key=lambda where: int(where.split(":")[0]))


def marked(tree: ast.Module) -> bool:
    """Whether a module-level `pytestmark` holds `pytest.mark.sweeps` (alone or in a list)."""
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and "pytestmark" in [dotted(t) for t in statement.targets]:
            return any(dotted(node) == "pytest.mark.sweeps" for node in ast.walk(statement.value))
    return False


def test_every_module_that_starts_a_sweep_carries_the_marker():
    missing = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not marked(tree) and (starts := sweep_starts(tree)):
            missing[path.relative_to(TESTS.parent).as_posix()] = starts
    assert not missing, f"add `pytestmark = pytest.mark.sweeps` to: {missing}"


def test_the_check_finds_each_way_of_starting_a_sweep():
    source = """
def test_cli(mlflow_server):
    run_cli("-m", "experiment=smoke")
    sweep.batch_run(None)
    SimulationWorker().run_cells([])
    ray.init()
    task_queue.connect(runner)
    subprocess.run([sys.executable, "-m", "reproduction", "spot"])
"""
    assert len(sweep_starts(ast.parse(source))) == 7
    quiet = 'argv = ["-m", "sweep"]\nsubprocess.run([sys.executable, "-c", "print(1)"])\n"run_cli(" and ray.init'
    assert sweep_starts(ast.parse(quiet)) == []
    assert marked(ast.parse("pytestmark = [pytest.mark.slow, pytest.mark.sweeps]"))
    assert not marked(ast.parse("pytestmark = pytest.mark.slow"))


def test_the_marker_is_registered(pytestconfig):
    assert any(line.startswith("sweeps:") for line in pytestconfig.getini("markers"))
