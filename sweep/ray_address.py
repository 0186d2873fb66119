"""Where a driver joining a Ray cluster connects, and whether a Ray port answers there, before ``ray.init``.

``ray.init`` on an address where nothing answers does not fail for many minutes (Ray 2.60: still
waiting after 120 s; ray/_private/node.py ``_init_gcs_client`` makes 20 attempts of ~45 s each,
with warnings about the node IP it put in place of ``127.0.0.1``), and Ctrl-C does not stop it. So
the driver first resolves the address as ``ray.init`` would and connects there over TCP, within
``runner.connect_timeout``. A Ray GCS and a Ray Client server are gRPC servers: sent the HTTP/2
preface (the bytes Ray's own gRPC client sends first), they answer with an HTTP/2 SETTINGS frame,
which tells a Ray port from a web server (the dashboard's 8265) or from a port that accepts and never
answers. With TLS (RAY_USE_TLS) only the TCP connection is checked.
"""

from __future__ import annotations

import importlib.util
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import ConfigError

HELP = (
    "start one with `ray start --head` (then runner.address=auto) or give the head node's HOST:PORT "
    "(the address `ray start --head` prints; ray://HOST:10001 for Ray Client)"
)
_GCS_PORT = "its GCS port (6379 unless `ray start --head --port` said otherwise)"
_CLIENT_PORT = "the Ray Client server's port (10001 unless changed)"
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # + an empty SETTINGS
_H2_SETTINGS = 0x4


class NoRayCluster(ConfigError, ConnectionError):
    """No Ray cluster answers at runner.address: bad input (the run stops with ``Error:`` and status 2),
    and a ConnectionError like the one ``ray.init`` raises."""


@dataclass(frozen=True)
class Endpoint:
    """Where the driver connects for ``runner.address``."""

    label: str  # how errors name it: "runner.address=..." and, for auto, what was found
    shown: str  # the address as the label shows it
    host: str  # as Ray connects: 127.0.0.1 / localhost become this machine's node IP
    port: int
    client: bool = False  # a Ray Client server (ray://), else the cluster's GCS

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def resolve(address: str | None, environ: Mapping[str, str], temp_dir: str | None = None) -> Endpoint | None:
    """The endpoint ``ray.init(address=address)`` connects to, ConfigError when there is none, or
    None when this Ray's internals cannot tell (then ``ray.init`` decides alone).

    Ray's order (ray/_private/worker.py ``init``, services.py ``canonicalize_bootstrap_address``):
    ``auto`` takes RAY_ADDRESS when set; an address with ``://`` is Ray Client; ``auto`` is
    otherwise the cluster ``ray start`` recorded (``ray_current_cluster`` in Ray's temp dir) or a
    raylet running on this machine; 127.0.0.1, ::1 and localhost become this machine's node IP.
    """
    given = address or "auto"
    label = f"runner.address={given}"
    if given == "auto" and environ.get("RAY_ADDRESS", "") not in ("", "auto"):
        given = environ["RAY_ADDRESS"]
        label = f"runner.address=auto (RAY_ADDRESS={given})"
        if given == "local":  # ray.init starts a new local instance: nothing to reach
            return None
    elif given == "auto":
        found = _running_cluster(label, temp_dir)
        if found is None:
            return None
        given, label = found
    if "://" in given:
        scheme, inner = given.split("://", 1)
        if scheme != "ray":
            raise ConfigError(
                f"{label}: {scheme}:// is not a Ray cluster address (http://HOST:8265 is the "
                f"dashboard's, for `ray job submit`); give the head node's HOST:PORT, {_GCS_PORT}, "
                f"or ray://HOST:10001 for Ray Client"
            )
        _require_ray_client(label)
        host, port = _host_port(inner, label)
        return Endpoint(label, given, host, port, client=True)
    host, port = _host_port(given, label)
    return Endpoint(label, given, _node_ip_for(host), port)


def probe(endpoint: Endpoint, timeout: float, environ: Mapping[str, str]) -> None:
    """NoRayCluster unless a Ray port (a gRPC server) answers at ``endpoint`` within ``timeout`` seconds.

    A refused connection fails at once; a host that does not reply, a name that does not resolve or
    a port that accepts but stays silent fail when the time is up.
    """
    deadline = time.monotonic() + timeout
    at = "" if endpoint.shown == endpoint.address else f" at {endpoint.address} (Ray's address for {endpoint.shown})"
    within = f"within {timeout:g} s (runner.connect_timeout)"
    tls = environ.get("RAY_USE_TLS", "0").lower() in ("1", "true")
    failures: list[str] = []
    for family, kind, proto, _, sockaddr in _lookup(endpoint, deadline, within):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        with socket.socket(family, kind, proto) as sock:
            sock.settimeout(left)
            try:
                sock.connect(sockaddr)
            except TimeoutError:
                failures.append(
                    f"no reply to the connection {within} (a host that is down, a firewall or a wrong address)"
                )
                continue
            except ConnectionRefusedError:
                failures.append("connection refused, nothing listens there")
                continue
            except OSError as err:
                failures.append(f"cannot connect ({err.strerror or err})")
                continue
            if tls:
                return
            answer = _http2_answer(sock, deadline)
        if answer is not None and len(answer) >= 9 and answer[3] == _H2_SETTINGS:
            return
        raise NoRayCluster(
            f"{endpoint.label}: {_not_ray(answer, within, at)}; give the head node's HOST:PORT with "
            f"{_CLIENT_PORT if endpoint.client else _GCS_PORT}"
        )
    reason = failures[0] if failures else f"no connection {within}"
    raise NoRayCluster(f"{endpoint.label}: no Ray cluster answered{at}: {reason}; {HELP}")


def reachable_or_error(address: str | None, timeout: float, environ: Mapping[str, str]) -> Endpoint | None:
    """Resolve ``address`` and probe it: the endpoint when a Ray port answers there, else ConfigError."""
    endpoint = resolve(address, environ)
    if endpoint is not None:
        probe(endpoint, timeout, environ)
    return endpoint


def join_failure(endpoint: Endpoint | None, address: str | None, err: BaseException) -> NoRayCluster | None:
    """``ray.init``'s "Failed to connect to Ray cluster" after the probe found a gRPC server there (another
    service's, or a GCS that stopped meanwhile; Ray gives up after ~20 s): the error to report, with
    Ray's last connection error. None for any other error."""
    if not isinstance(err, ConnectionError) or not str(err).startswith("Failed to connect to Ray cluster"):
        return None
    cause = err.__cause__ or err.__context__
    lines = [line.strip() for line in str(cause or "").splitlines() if line.strip()]
    reason = f"{err} ({lines[-1]})" if lines else str(err)
    label = endpoint.label if endpoint is not None else f"runner.address={address}"
    port = _CLIENT_PORT if endpoint is not None and endpoint.client else _GCS_PORT
    return NoRayCluster(
        f"{label}: a server answers there but Ray could not join it as a cluster: {reason}; "
        f"give the head node's HOST:PORT with {port}"
    )


def _http2_answer(sock: socket.socket, deadline: float) -> bytes | None:
    """The first bytes the server sends back to the HTTP/2 preface: b"" when it closes the connection,
    None when it stays silent until the deadline."""
    received = b""
    try:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        sock.sendall(_H2_PREFACE)
        while len(received) < 9:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            data = sock.recv(64)
            if not data:
                break
            received += data
    except TimeoutError:
        return received or None
    except OSError:  # reset by the peer
        pass
    return received


def _not_ray(answer: bytes | None, within: str, at: str) -> str:
    """What answered instead of a Ray port (a gRPC server)."""
    if answer is None:
        return f"no Ray cluster answered{at}: the port accepts connections but sends nothing {within}"
    if answer.startswith((b"HTTP/", b"<")):
        return f"not a Ray cluster's port{at}: a web server answers there (the dashboard's port?)"
    if not answer:
        return f"not a Ray cluster's port{at}: it closed the connection without an answer"
    return f"not a Ray cluster's port{at}: something other than Ray answers there"


def _lookup(endpoint: Endpoint, deadline: float, within: str) -> list:
    """getaddrinfo within the deadline (a resolver that does not answer would wait out its own timeouts)."""
    found: dict[str, object] = {}

    def lookup() -> None:
        try:
            found["infos"] = socket.getaddrinfo(endpoint.host, endpoint.port, type=socket.SOCK_STREAM)
        except OSError as err:
            found["error"] = err

    worker = threading.Thread(target=lookup, name="ray-address-lookup", daemon=True)
    worker.start()
    worker.join(max(deadline - time.monotonic(), 0.0))
    if "error" in found:
        err = found["error"]
        raise NoRayCluster(
            f"{endpoint.label}: the host {endpoint.host} is not known ({getattr(err, 'strerror', None) or err}); {HELP}"
        )
    if "infos" not in found:
        raise NoRayCluster(
            f"{endpoint.label}: no Ray cluster answered: the name {endpoint.host} did not resolve {within}; {HELP}"
        )
    return found["infos"]  # type: ignore[return-value]


def _host_port(address: str, label: str) -> tuple[str, int]:
    host, sep, port = address.strip().rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{label}: not a Ray cluster address (auto, HOST:PORT or ray://HOST:PORT)")
    return host, int(port)


def _node_ip_for(host: str) -> str:
    """The host Ray connects to (services.resolve_ip_for_localhost): this machine's node IP for
    127.0.0.1, ::1 and localhost, others as given."""
    try:
        from ray._private.services import resolve_ip_for_localhost

        return resolve_ip_for_localhost(host)
    except Exception:  # an older or newer Ray: probe the host as given
        return host


def _running_cluster(label: str, temp_dir: str | None) -> tuple[str, str] | None:
    """What ``auto`` means without RAY_ADDRESS, found as Ray finds it: (address, label), or None
    when this Ray's internals differ."""
    try:
        from ray._private import services
        from ray._private.utils import get_ray_address_file, read_ray_address

        services.find_gcs_addresses.cache_clear()  # as ray.init does: a raylet may have started since
        recorded = get_ray_address_file(temp_dir)
        try:
            found = services.get_ray_address_from_environment("auto", temp_dir)
        except ConnectionError:  # Ray's "Could not find any running Ray instance"
            found = None
        where = (
            f"recorded by `ray start` in {recorded}"
            if found and found == read_ray_address(temp_dir)
            else "a raylet running on this machine"
        )
    except (ImportError, AttributeError, TypeError):
        return None
    if not found:
        raise NoRayCluster(
            f"{label}: no Ray cluster is running on this machine (no RAY_ADDRESS, no cluster "
            f"recorded by `ray start` in {recorded}, no raylet process); {HELP}"
        )
    return found, f"runner.address=auto ({found}, {where})"


def _require_ray_client(label: str) -> None:
    if importlib.util.find_spec("grpc") is None:  # what Ray Client needs (ray/_private/utils.py)
        raise ConfigError(
            f"{label}: Ray Client (ray://) needs the package ray[client], not installed here "
            f"(pip install 'ray[client]'); or give the head node's HOST:PORT, {_GCS_PORT}"
        ) from None
