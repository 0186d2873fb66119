"""The docs' Ray cluster recipe (docs/usage.md, "A Ray cluster") with Ray's token authentication.

Ray >= 2.59 turns token authentication on for `ray start --head` when a token exists (a local
`ray.init()` writes ~/.ray/auth_token), while a driver joining an explicit address presents the
token only with RAY_AUTH_MODE=token: the recipe failed with InvalidAuthToken. The slow test runs the
recipe with the `ray` CLI; the others check the driver's decision and its error messages without
starting Ray.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from sweep import ray_auth, task_queue
from sweep.errors import ConfigError
from sweep.ray_auth import auth_failure_message, driver_auth
from sweep.schema import RunnerConfig

from .conftest import free_port, run_cli
from .ray_nodes import started_by, stop

pytestmark = pytest.mark.sweeps

RAY = Path(sys.executable).parent / "ray"
TOKEN_VARS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


def write_token(home: Path, token: str = "3f1c0ffee0ddba11") -> Path:
    path = home / ".ray" / "auth_token"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(token + "\n")
    return path


# --- the decision, without Ray -------------------------------------------------------------------


def test_a_token_in_the_default_file_turns_token_mode_on(tmp_path):
    path = write_token(tmp_path)
    assert driver_auth({}, tmp_path) == ({"RAY_AUTH_MODE": "token"}, str(path))


def test_the_token_sources_in_rays_order(tmp_path):
    write_token(tmp_path)
    named = tmp_path / "elsewhere"
    named.write_text("abc\n")
    assert driver_auth({"RAY_AUTH_TOKEN": "abc"}, tmp_path) == (
        {"RAY_AUTH_MODE": "token"},
        "the RAY_AUTH_TOKEN environment variable",
    )
    assert driver_auth({"RAY_AUTH_TOKEN_PATH": str(named)}, tmp_path) == (
        {"RAY_AUTH_MODE": "token"},
        f"{named} (RAY_AUTH_TOKEN_PATH)",
    )
    assert driver_auth({"RAY_AUTH_TOKEN": "abc", "RAY_AUTH_TOKEN_PATH": str(named)}, tmp_path)[1] == (
        "the RAY_AUTH_TOKEN environment variable"
    )


@pytest.mark.parametrize("content", [None, "", " \n"])
def test_a_bad_token_path_is_a_config_error(tmp_path, content):
    named = tmp_path / "token"
    if content is not None:
        named.write_text(content)
    write_token(tmp_path)  # Ray does not fall back to ~/.ray/auth_token: it aborts
    with pytest.raises(ConfigError, match=f"RAY_AUTH_TOKEN_PATH={named}: the file cannot be read or is empty"):
        driver_auth({"RAY_AUTH_TOKEN_PATH": str(named)}, tmp_path)


def test_no_token_sets_nothing(tmp_path):
    assert driver_auth({}, tmp_path) == ({}, None)
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("\n")
    assert driver_auth({}, tmp_path) == ({}, None)


def test_an_explicit_mode_is_never_changed(tmp_path):
    path = write_token(tmp_path)
    assert driver_auth({"RAY_AUTH_MODE": "disabled"}, tmp_path) == ({}, None)
    assert driver_auth({"RAY_AUTH_MODE": "token"}, tmp_path) == ({}, str(path))


def test_token_mode_without_a_token_says_what_to_set(tmp_path):
    with pytest.raises(ConfigError) as err:
        driver_auth({"RAY_AUTH_MODE": "token"}, tmp_path)
    message = str(err.value)
    assert message.startswith("RAY_AUTH_MODE=token is set but no Ray auth token was found; ")
    for where in ("~/.ray/auth_token", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_TOKEN", "ray get-auth-token"):
        assert where in message


def test_the_refusal_messages():
    head = "runner.address=10.0.0.5:6379: the Ray cluster refused this driver (InvalidAuthToken): "
    assert auth_failure_message("10.0.0.5:6379", {}, None).startswith(
        head + "it requires token authentication and no auth token was found here; give this driver the "
        "cluster's token, which `ray get-auth-token` prints on the head node: in ~/.ray/auth_token"
    )
    assert auth_failure_message("10.0.0.5:6379", {"RAY_AUTH_MODE": "disabled"}, None).startswith(
        head + "it requires token authentication and RAY_AUTH_MODE=disabled is set here; unset it or set "
        "RAY_AUTH_MODE=token, and give"
    )
    token_file = "tokens/auth_token"  # any path: the message names the file the token came from
    assert auth_failure_message("10.0.0.5:6379", {}, token_file).startswith(
        head + f"its token is not the one from {token_file}; give"
    )


@pytest.fixture
def fake_ray(monkeypatch):
    """connect() with ray.init replaced; records what the driver set before calling it."""
    seen = {}
    monkeypatch.setattr(task_queue.ray, "is_initialized", lambda: False)
    monkeypatch.setattr(task_queue, "_POOL", task_queue._POOL)  # restored afterwards
    monkeypatch.setattr(ray_auth, "present_token", lambda env: seen.setdefault("env", env))
    monkeypatch.setattr(task_queue, "_probe_cluster", lambda runner: None)  # no cluster answers at the fake address
    for name in TOKEN_VARS:
        monkeypatch.delenv(name, raising=False)
    return seen


def test_connect_presents_the_token_and_turns_a_refusal_into_a_config_error(tmp_path, monkeypatch, fake_ray):
    monkeypatch.setenv("HOME", str(tmp_path))
    write_token(tmp_path)

    def refused(**kwargs):
        fake_ray["kwargs"] = kwargs
        try:  # what ray.init raises (ray/_private/worker.py, ray/_private/node.py)
            raise RuntimeError(
                "Failed to connect to GCS. Last connection error: ... ray.exceptions."
                "AuthenticationError: RPC error: InvalidAuthToken: Authentication token is missing"
            )
        except RuntimeError as err:
            raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.5:6379") from err

    monkeypatch.setattr(task_queue.ray, "init", refused)
    with pytest.raises(
        ConfigError,
        match=r"^runner.address=10.0.0.5:6379: the Ray cluster refused this driver "
        r"\(InvalidAuthToken\): its token is not the one from ",
    ):
        task_queue.connect(RunnerConfig(kind="cluster", address="10.0.0.5:6379", ship_code=False))
    assert fake_ray["env"] == {"RAY_AUTH_MODE": "token"}
    assert fake_ray["kwargs"]["address"] == "10.0.0.5:6379"


def test_connect_leaves_local_runs_and_other_errors_alone(tmp_path, monkeypatch, fake_ray):
    monkeypatch.setenv("HOME", str(tmp_path))
    write_token(tmp_path)

    def down(**kwargs):
        fake_ray["kwargs"] = kwargs
        raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.5:6379")

    monkeypatch.setattr(task_queue.ray, "init", down)
    with pytest.raises(ConnectionError):  # not an authentication problem: Ray's own error
        task_queue.connect(RunnerConfig(kind="cluster", address="10.0.0.5:6379", ship_code=False))
    fake_ray.clear()
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    with pytest.raises(ConnectionError):
        task_queue.connect(RunnerConfig(kind="local"))
    assert "env" not in fake_ray and fake_ray["kwargs"]["address"] == "local"


def test_a_local_ray_keeps_token_authentication_without_the_opt_out_advice(tmp_path, monkeypatch, fake_ray):
    """Ray >= 2.52 turns token authentication on for a new local instance and warns how to turn
    it off; the driver does what Ray does (RAY_AUTH_MODE=token) first, so Ray says nothing. A
    mode the user set is left alone."""
    monkeypatch.setattr(task_queue.ray, "init", lambda **kwargs: fake_ray.setdefault("kwargs", kwargs))
    monkeypatch.setattr(task_queue.ray, "cluster_resources", lambda: {"CPU": 2})
    assert task_queue.connect(RunnerConfig(kind="local")) == 2
    assert fake_ray["env"] == {"RAY_AUTH_MODE": "token"} and fake_ray["kwargs"]["address"] == "local"
    fake_ray.clear()
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    task_queue.connect(RunnerConfig(kind="local"))
    assert "env" not in fake_ray


@pytest.mark.parametrize("multirun", [True, False])
def test_the_cli_reports_a_missing_token_as_an_error_message(tmp_path, monkeypatch, multirun):
    for name in TOKEN_VARS:
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "out"
    proc = run_cli(
        *(["-m", "experiment=smoke"] if multirun else []),
        "runner=cluster",
        "runner.address=127.0.0.1:1",
        "tracking=off",
        f"hydra.{'sweep' if multirun else 'run'}.dir={out}",
        timeout=120,
        env={"HOME": str(tmp_path), "RAY_AUTH_MODE": "token"},
    )  # no token in this HOME
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Error: RAY_AUTH_MODE=token is set but no Ray auth token was found; " in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


# --- the recipe, with the ray CLI ---------------------------------------------------------------


@pytest.mark.slow
def test_the_docs_recipe_on_a_head_started_with_ray_start(tmp_path, monkeypatch):
    # A short temp dir: Ray's Unix sockets live under it (at most 107 bytes in a socket path;
    # pytest-xdist's worker folders make tmp_path_factory's paths too long).
    temp_dir = Path(tempfile.mkdtemp(prefix="rc"))
    home = tmp_path / "home"  # the token of a local ray.init(), here written by the test
    write_token(home)
    for name in TOKEN_VARS + ("RAY_ADDRESS",):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")  # no report to usage-stats.ray.io
    port = free_port()
    head = subprocess.Popen(
        [str(RAY), "start", "--head", f"--port={port}", "--num-cpus=2", f"--temp-dir={temp_dir}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        started = head.communicate(timeout=120)[0]
        assert head.returncode == 0, started[-3000:]
        assert "Token authentication is enabled for this Ray cluster" in started  # the case that failed

        address = f"127.0.0.1:{port}"
        sweep_dir = tmp_path / "sweep"
        proc = run_cli(
            "-m",
            "experiment=smoke",
            "runner=cluster",
            f"runner.address={address}",
            "tracking=off",
            f"hydra.sweep.dir={sweep_dir}",
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert f"presenting the Ray auth token from {home / '.ray' / 'auth_token'} to {address}" in proc.stdout
        assert "Done: 4 cells, 240 simulations" in proc.stdout
        df = pd.read_parquet(sweep_dir / "results.parquet")
        assert len(df) == 240 and df["cell"].nunique() == 4
        assert len(pd.read_csv(sweep_dir / "summary.csv")) == 12  # 4 cells x 3 mechanisms

    finally:
        if head.poll() is None:
            head.kill()
        stop(head.pid, temp_dir)
    assert not started_by(head.pid, temp_dir), "processes of the head are still running"
    shutil.rmtree(temp_dir, ignore_errors=True)


def test_ship_code_sends_the_rooms_the_configs_declare(tmp_path, monkeypatch, fake_ray):
    """The core packages and the top-level package of every family.module in conf/family/, plus
    the families a sweep names besides (shipped if they live in the project)."""
    monkeypatch.setenv("HOME", str(tmp_path))

    def accepted(**kwargs):
        fake_ray["kwargs"] = kwargs

    monkeypatch.setattr(task_queue.ray, "init", accepted)
    monkeypatch.setattr(task_queue.ray, "cluster_resources", lambda: {"CPU": 2})
    monkeypatch.setattr(task_queue.connect, "_target", "unknown", raising=False)  # restored afterwards
    runner = RunnerConfig(kind="cluster", address="10.0.0.5:6379", ship_code=True)
    task_queue.connect(runner)
    shipped = [Path(path).name for path in fake_ray["kwargs"]["runtime_env"]["py_modules"]]
    assert shipped == ["market", "algorithms", "sweep", "arena"]
    task_queue.connect(runner, ["tests.engine.node_family", "elsewhere.family"])
    shipped = [Path(path).name for path in fake_ray["kwargs"]["runtime_env"]["py_modules"]]
    assert shipped == ["market", "algorithms", "sweep", "arena", "tests"]  # elsewhere: the user's runtime_env
    assert task_queue.shipped_packages(RunnerConfig(kind="cluster", address="10.0.0.5:6379", ship_code=False)) == []
    assert task_queue.shipped_packages(RunnerConfig(kind="local", ship_code=True)) == []


def test_the_rooms_come_from_family_modules_not_from_the_folders(tmp_path):
    (tmp_path / "conf" / "family").mkdir(parents=True)
    (tmp_path / "conf" / "family" / "new.yaml").write_text("# @package _global_\nfamily:\n  module: newroom.family\n")
    (tmp_path / "conf" / "family" / "other.yaml").write_text("family:\n  name: other\n")  # no module: nothing
    for room in ("newroom", "undeclared"):
        (tmp_path / room).mkdir()
        (tmp_path / room / "__init__.py").write_text("")
        (tmp_path / room / "family.py").write_text("")
    (tmp_path / "single.py").write_text("")
    declared = task_queue.declared_family_modules(tmp_path)
    assert declared == ["newroom.family"]
    packages = task_queue.worker_packages([*declared, "algorithms.spot.family", "single", "absent.family"], tmp_path)
    assert [path.name for path in packages] == ["market", "algorithms", "sweep", "newroom", "single.py"]


def test_the_launcher_rejoins_when_a_cell_names_a_family_it_did_not_ship():
    from hydra_plugins.ray_queue_launcher.ray_queue_launcher import _ships_every_family

    cluster = RunnerConfig(kind="cluster", address="10.0.0.5:6379", ship_code=True)
    assert _ships_every_family(cluster, [], ["algorithms.spot.family", "arena.family"])  # declared in conf/family
    assert not _ships_every_family(cluster, ["algorithms.spot.family"], ["tests.engine.node_family"])
    assert _ships_every_family(cluster, ["tests.engine.node_family"], ["tests.engine.node_family", "elsewhere.family"])
    assert _ships_every_family(RunnerConfig(kind="local"), [], ["tests.engine.node_family"])  # nothing shipped
