"""An address where no Ray cluster answers stops the run within `runner.connect_timeout` (sweep/ray_address.py).

`ray.init` there waits for many minutes (Ray 2.60: 20 attempts of ~40 s on a refused port), so the
driver resolves the address as Ray would and checks that a Ray port (a gRPC server) answers before
calling it. The unit tests use local sockets: one answering like a gRPC server, one refused, one
silent, one a web server, one whose accept queue is full (the kernel drops the connection attempt,
as a firewall would); the CLI tests check the one `Error:` line, the exit status and that nothing is
left in the working directory.
"""

from __future__ import annotations

import http.server
import importlib.util
import math
import socket
import threading
import time

import pytest

from sweep import ray_address, ray_auth, task_queue
from sweep.errors import ConfigError
from sweep.ray_address import Endpoint, NoRayCluster, join_failure, probe, resolve
from sweep.schema import RunnerConfig

from .conftest import run_cli

pytestmark = pytest.mark.sweeps

H2_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # what a gRPC server sends first


class Server:
    """A local TCP port for the probe: `grpc` answers the HTTP/2 preface as a Ray GCS does, `silent`
    accepts and never answers, `http` is a web server."""

    def __init__(self, kind: str):
        self.kind, self.stop = kind, threading.Event()
        if kind == "http":
            self.httpd = http.server.HTTPServer(("0.0.0.0", 0), http.server.BaseHTTPRequestHandler)
            self.port = self.httpd.server_port
            threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
            return
        self.sock = socket.socket()
        self.sock.bind(("0.0.0.0", 0))  # Ray (and the probe) connect to this machine's node IP for 127.0.0.1
        self.port = self.sock.getsockname()[1]
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        held = []
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            held.append(conn)
            if self.kind == "grpc":
                conn.settimeout(5)
                try:
                    conn.recv(64)
                    conn.sendall(H2_SETTINGS)
                except OSError:
                    pass

    def close(self) -> None:
        self.stop.set()
        if self.kind == "http":
            self.httpd.shutdown()
            self.httpd.server_close()
        else:
            self.sock.close()


@pytest.fixture
def server():
    made: list[Server] = []

    def make(kind: str) -> Server:
        made.append(Server(kind))
        return made[-1]

    yield make
    for one in made:
        one.close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens once it is closed


def local(port: int, client: bool = False) -> Endpoint:
    return Endpoint(f"runner.address=127.0.0.1:{port}", f"127.0.0.1:{port}", "127.0.0.1", port, client)


# --- the probe, on local sockets ------------------------------------------------------------------


def test_a_port_answering_like_a_ray_gcs_passes_and_a_closed_one_fails_at_once(server):
    probe(local(server("grpc").port), 5, {})
    port = closed_port()
    started = time.monotonic()
    with pytest.raises(NoRayCluster) as err:
        probe(local(port), 5, {})
    assert time.monotonic() - started < 2  # refused: no need to wait out the timeout
    assert str(err.value).startswith(
        f"runner.address=127.0.0.1:{port}: no Ray cluster answered: connection "
        f"refused, nothing listens there; start one with `ray start --head`"
    )
    assert isinstance(err.value, ConfigError) and isinstance(err.value, ConnectionError)


def test_a_ray_client_address_is_probed_the_same_way(server):
    probe(local(server("grpc").port, client=True), 5, {})
    with pytest.raises(NoRayCluster, match="no Ray cluster answered: connection refused"):
        probe(local(closed_port(), client=True), 5, {})


def test_a_silent_port_fails_when_the_timeout_is_up(server):
    port = server("silent").port
    started = time.monotonic()
    with pytest.raises(
        NoRayCluster,
        match=r"the port accepts connections but sends nothing within 0.5 s "
        r"\(runner.connect_timeout\)",
    ):
        probe(local(port), 0.5, {})
    assert 0.4 < time.monotonic() - started < 3


def test_a_connection_attempt_without_reply_fails_when_the_timeout_is_up(monkeypatch):
    """A host that drops the attempt (down, or a firewall): the connection times out."""

    class Dropped(socket.socket):
        def connect(self, address):
            time.sleep(self.gettimeout())
            raise TimeoutError("timed out")

    monkeypatch.setattr(socket, "socket", Dropped)
    started = time.monotonic()
    with pytest.raises(NoRayCluster, match=r"no reply to the connection within 0.5 s \(runner.connect_timeout\)"):
        probe(local(closed_port()), 0.5, {})
    assert 0.4 < time.monotonic() - started < 3


def test_a_web_server_is_not_a_ray_port(server):
    endpoint = local(server("http").port)
    with pytest.raises(
        NoRayCluster,
        match=r"not a Ray cluster's port: a web server answers there \(the dashboard's "
        r"port\?\); give the head node's HOST:PORT with its GCS port",
    ):
        probe(endpoint, 5, {})
    probe(endpoint, 5, {"RAY_USE_TLS": "1"})  # TLS: only the TCP connection is checked


def test_an_unknown_host_is_named():
    endpoint = Endpoint(
        "runner.address=no-such-host.invalid:6379", "no-such-host.invalid:6379", "no-such-host.invalid", 6379
    )
    with pytest.raises(NoRayCluster, match="the host no-such-host.invalid is not known"):
        probe(endpoint, 5, {})


# --- the address, resolved as ray.init resolves it ------------------------------------------------


def test_explicit_addresses_resolve_as_ray_connects():
    from ray._private.services import resolve_ip_for_localhost

    endpoint = resolve("127.0.0.1:6379", {})
    assert (endpoint.host, endpoint.port, endpoint.client) == (resolve_ip_for_localhost("127.0.0.1"), 6379, False)
    assert endpoint.label == "runner.address=127.0.0.1:6379"
    assert resolve("10.1.2.3:6379", {"RAY_ADDRESS": "10.9.9.9:1"}).host == "10.1.2.3"  # RAY_ADDRESS: only for auto
    assert (resolve("[fe80::1]:6379", {}).host, resolve("[fe80::1]:6379", {}).address) == ("fe80::1", "[fe80::1]:6379")


@pytest.mark.parametrize(
    "address, message",
    [
        ("127.0.0.1", r"runner.address=127.0.0.1: not a Ray cluster address \(auto, HOST:PORT or ray://HOST:PORT\)"),
        ("host:0", "not a Ray cluster address"),
        ("host:port", "not a Ray cluster address"),
        ("http://127.0.0.1:8265", r"http:// is not a Ray cluster address \(http://HOST:8265 is the dashboard's"),
    ],
)
def test_malformed_addresses_are_config_errors(address, message):
    with pytest.raises(ConfigError, match=message):
        resolve(address, {})


def test_ray_client_addresses_need_ray_client_and_keep_their_host(monkeypatch):
    if importlib.util.find_spec("grpc") is None:
        with pytest.raises(ConfigError, match=r"Ray Client \(ray://\) needs the package ray\[client\]"):
            resolve("ray://127.0.0.1:10001", {})
    monkeypatch.setattr(ray_address, "_require_ray_client", lambda label: None)
    endpoint = resolve("ray://127.0.0.1:10001", {})
    assert (endpoint.host, endpoint.port, endpoint.client) == ("127.0.0.1", 10001, True)


def test_auto_takes_ray_address_first():
    endpoint = resolve("auto", {"RAY_ADDRESS": "10.1.2.3:6379"})
    assert (endpoint.host, endpoint.port) == ("10.1.2.3", 6379)
    assert endpoint.label == "runner.address=auto (RAY_ADDRESS=10.1.2.3:6379)"
    assert resolve("auto", {"RAY_ADDRESS": "local"}) is None  # ray.init starts its own instance


@pytest.fixture
def no_running_raylet(monkeypatch):
    """Ray's discovery of `auto` without the raylets of other Ray instances on this machine."""
    from ray._private import services

    def find_gcs_addresses():
        return frozenset()

    find_gcs_addresses.cache_clear = lambda: None
    monkeypatch.setattr(services, "find_gcs_addresses", find_gcs_addresses)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)


def test_auto_without_a_cluster_says_so(tmp_path, no_running_raylet):
    with pytest.raises(NoRayCluster) as err:
        resolve("auto", {}, temp_dir=str(tmp_path))
    assert str(err.value).startswith(
        f"runner.address=auto: no Ray cluster is running on this machine (no RAY_ADDRESS, no cluster recorded by "
        f"`ray start` in {tmp_path / 'ray_current_cluster'}, no raylet process); start one with `ray start --head`"
    )


def test_auto_finds_the_cluster_ray_start_recorded(tmp_path, no_running_raylet):
    port = closed_port()
    (tmp_path / "ray_current_cluster").write_text(f"127.0.0.1:{port}\n")
    endpoint = resolve("auto", {}, temp_dir=str(tmp_path))
    assert endpoint.port == port
    assert endpoint.label == (
        f"runner.address=auto (127.0.0.1:{port}, recorded by `ray start` in {tmp_path / 'ray_current_cluster'})"
    )
    with pytest.raises(NoRayCluster, match="no Ray cluster answered.*connection refused"):  # a stopped cluster
        probe(endpoint, 5, {})


# --- connect() and the config ---------------------------------------------------------------------


@pytest.fixture
def fake_init(monkeypatch):
    """connect() with ray.init recorded instead of run."""
    calls = []
    monkeypatch.setattr(task_queue.ray, "is_initialized", lambda: False)
    monkeypatch.setattr(task_queue, "_POOL", task_queue._POOL)  # restored afterwards
    monkeypatch.setattr(ray_auth, "present_token", lambda env: None)
    monkeypatch.setattr(task_queue.ray, "init", lambda **kwargs: calls.append(kwargs))
    monkeypatch.setattr(task_queue.ray, "cluster_resources", lambda: {"CPU": 2})
    monkeypatch.setattr(task_queue.connect, "_target", "unknown", raising=False)  # restored afterwards
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    return calls


def test_connect_probes_before_ray_init(server, fake_init, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    runner = RunnerConfig(kind="cluster", address=f"127.0.0.1:{closed_port()}", ship_code=False)
    with pytest.raises(NoRayCluster, match=f"runner.address={runner.address}: no Ray cluster answered"):
        task_queue.connect(runner)
    assert fake_init == []  # Ray was never asked
    runner.address = f"127.0.0.1:{server('grpc').port}"
    assert task_queue.connect(runner) == 2
    assert fake_init[0]["address"] == runner.address  # ray.init is given the address as it was


def test_ray_failing_to_join_a_port_that_answered_is_a_config_error():
    try:
        try:
            raise RuntimeError(
                "Failed to connect to GCS. Last connection error: Traceback ...\n"
                "ray.exceptions.RpcError: RPC error: Received http2 header with status: 404\n"
            )
        except RuntimeError as cause:
            raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.5:6379") from cause
    except ConnectionError as err:
        failure = join_failure(None, "10.0.0.5:6379", err)
    assert isinstance(failure, NoRayCluster)
    assert str(failure) == (
        "runner.address=10.0.0.5:6379: a server answers there but Ray could not join it as a cluster: Failed to "
        "connect to Ray cluster at 10.0.0.5:6379 (ray.exceptions.RpcError: RPC error: Received http2 header with "
        "status: 404); give the head node's HOST:PORT with its GCS port (6379 unless `ray start --head --port` "
        "said otherwise)"
    )
    assert join_failure(None, "10.0.0.5:6379", RuntimeError("something else")) is None


@pytest.mark.parametrize("value", [0, -1, -0.5, math.inf, math.nan, True])
def test_connect_timeout_must_be_a_positive_number(value):
    with pytest.raises(ConfigError, match=r"^runner\.connect_timeout must be a positive number of seconds"):
        RunnerConfig(kind="cluster", address="auto", connect_timeout=value).check()
    RunnerConfig(kind="cluster", address="auto", connect_timeout=0.25).check()


@pytest.mark.parametrize("value", ["0", "-3"])
def test_the_cli_names_a_bad_connect_timeout(tmp_path, value):
    proc = run_cli(
        "runner=cluster", "runner.address=127.0.0.1:1", f"runner.connect_timeout={value}", cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines()[-1].startswith("Error: runner.connect_timeout must be a positive number")
    assert list(tmp_path.iterdir()) == []


# --- the command line -----------------------------------------------------------------------------


def assert_stopped_cleanly(proc, seconds: float, cwd, names: str) -> None:
    assert proc.returncode == 2, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: ") and names in last, proc.stderr[-3000:]
    assert [line for line in proc.stderr.splitlines() if line.startswith("Error:")] == [last]
    assert "Traceback" not in proc.stderr and "rpc_client" not in proc.stderr and "gcs_client" not in proc.stderr
    assert seconds < 60
    assert sorted(path.name for path in cwd.iterdir()) == []  # no outputs/, multirun/, mlflow.db, mlartifacts/


@pytest.mark.parametrize("multirun", [False, True], ids=["single", "multirun"])
@pytest.mark.parametrize("tracking", ["sqlite", "off"])
def test_a_refused_address_stops_the_run_at_once_leaving_nothing(tmp_path, multirun, tracking):
    started = time.monotonic()
    proc = run_cli(
        *(["-m", "job.deadline=8,9"] if multirun else []),
        "runner=cluster",
        "runner.address=127.0.0.1:1",
        f"tracking={tracking}",
        cwd=tmp_path,
        timeout=120,
    )
    assert_stopped_cleanly(proc, time.monotonic() - started, tmp_path, "runner.address=127.0.0.1:1")
    assert "no Ray cluster answered" in proc.stderr and "ray start --head" in proc.stderr


def test_auto_with_ray_address_pointing_nowhere(tmp_path):
    started = time.monotonic()
    proc = run_cli(
        "runner=cluster", "runner.address=auto", cwd=tmp_path, timeout=120, env={"RAY_ADDRESS": "127.0.0.1:1"}
    )
    assert_stopped_cleanly(proc, time.monotonic() - started, tmp_path, "runner.address=auto (RAY_ADDRESS=127.0.0.1:1)")


@pytest.mark.slow
def test_a_port_without_reply_stops_the_run_after_the_timeout(tmp_path, server):
    port = server("silent").port
    started = time.monotonic()
    proc = run_cli(
        "-m",
        "job.deadline=8,9",
        "runner=cluster",
        f"runner.address=127.0.0.1:{port}",
        "runner.connect_timeout=3",
        cwd=tmp_path,
        timeout=120,
    )
    seconds = time.monotonic() - started
    assert_stopped_cleanly(proc, seconds, tmp_path, f"runner.address=127.0.0.1:{port}")
    assert "within 3 s (runner.connect_timeout)" in proc.stderr
    assert seconds > 3
