"""One interruption path for SIGINT, SIGTERM and SIGHUP (docs/usage.md, "Stopping, resuming and
extending a sweep").

The handler only records the signal. The engine looks at the record at safe points (between
Ray waits of at most ``POLL_SECONDS``, between cells being composed, before the sweep's files
are rebuilt) and raises :class:`Interrupted` there, so one signal stops a sweep within about a
second, whatever it was doing, and no file is left half written. No exception is raised inside
an arbitrary frame: CPython drops a KeyboardInterrupt raised inside a weakref callback, and a
single Ctrl-C could be lost that way. A second signal while stopping (a second later or more)
ends the process at once.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
POLL_SECONDS = 0.5
# Signals within this time of the first are the same request: `timeout` sends its signal to the
# process and then to its process group, so the driver receives it twice at once.
REPEAT_SECONDS = 1.0

_requested: int | None = None
_requested_at = 0.0
_active = 0  # nesting depth of `handling()`; the handlers are ours while it is positive
_previous: dict[int, object] = {}


class Interrupted(KeyboardInterrupt):
    """A stop signal arrived: raised at the engine's next safe point (a KeyboardInterrupt, so a
    caller of the Python API sees what Ctrl-C gives it)."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signal_name(signum))
        self.signum = int(signum)

    @property
    def name(self) -> str:
        return signal_name(self.signum)

    @property
    def exit_code(self) -> int:
        """128 + the signal's number, as a shell reports a process ended by it (130, 143, 129)."""
        return 128 + self.signum


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def as_interrupted(err: KeyboardInterrupt) -> Interrupted:
    """``err`` itself, or a plain KeyboardInterrupt (Python's own SIGINT handler) as SIGINT."""
    return err if isinstance(err, Interrupted) else Interrupted(signal.SIGINT)


def _record(signum: int, frame) -> None:
    global _requested, _requested_at
    if _requested is not None:
        if time.monotonic() - _requested_at < REPEAT_SECONDS:
            return
        os.write(
            2, f"\nInterrupted ({signal_name(signum)}) again: stopping at once; complete cells are kept\n".encode()
        )
        os._exit(128 + signum)
    _requested, _requested_at = signum, time.monotonic()


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def install() -> None:
    """Make the three signals ours for the rest of the process (the command line's entry point)."""
    global _active
    if not _in_main_thread():
        return
    _active += 1
    for signum in SIGNALS:
        _previous.setdefault(signum, signal.getsignal(signum))
        signal.signal(signum, _record)


@contextmanager
def handling() -> Iterator[None]:
    """The signals are ours inside the block (the Python API's ``run_cells``), restored after it
    unless ``install`` made them ours for good; outside the main thread, nothing changes."""
    global _active, _requested
    if not _in_main_thread():
        yield
        return
    outermost = _active == 0
    saved = {signum: signal.getsignal(signum) for signum in SIGNALS} if outermost else {}
    install()
    try:
        yield
    finally:
        _active -= 1
        if outermost:
            for signum, handler in saved.items():
                signal.signal(signum, handler)
            _requested = None


def reclaim() -> None:
    """Take the signals back after a library replaced a handler (``ray.init`` sets a SIGTERM
    handler that calls ``sys.exit``, and Ray's C++ core prints a stack dump on SIGTERM)."""
    if _active and _in_main_thread():
        for signum in SIGNALS:
            signal.signal(signum, _record)


def requested() -> int | None:
    """The signal received and not yet acted on, if any."""
    return _requested


def check() -> None:
    """Raise :class:`Interrupted` if a stop signal arrived."""
    if _requested is not None:
        raise Interrupted(_requested)


def ends(code: object) -> bool:
    """Whether exit status ``code`` is the one of the stop signal this process received."""
    return _requested is not None and code == 128 + _requested


def exit_now(code: int) -> None:
    """End the process with ``code`` once its output is flushed, without waiting for other
    threads (an MLflow store still opening, Ray's shutdown): every file the sweep writes is
    complete or absent, and a local Ray's processes share the driver's fate."""
    import logging
    import sys

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def reset() -> None:
    """Forget a recorded signal (tests)."""
    global _requested
    _requested = None


@contextmanager
def around_ray_init() -> Iterator[None]:
    """``ray.init`` replaces the SIGTERM handler with one that calls ``sys.exit(15)``: a SIGTERM
    during it becomes :class:`Interrupted`, and the handlers are ours again after it."""
    try:
        yield
    except SystemExit as stop:
        if _active and stop.code == signal.SIGTERM:
            raise Interrupted(signal.SIGTERM) from None
        raise
    finally:
        reclaim()
