"""Ray's token authentication, as a driver of this project meets it.

Ray >= 2.52 turns token authentication on for ``ray start --head`` and for a new local instance
when a token exists (a local ``ray.init()`` writes ``~/.ray/auth_token``), but a driver joining an
explicit address presents the token only with ``RAY_AUTH_MODE=token`` (docs/usage.md, "A Ray
cluster"; docs/scaling.md, "Two nodes"): without help, the documented cluster recipe failed with
InvalidAuthToken. Here the driver decides from its environment alone whether and how it presents
a token (``driver_auth``), turns a cluster's refusal into a message that says what to set
(``auth_failure_message``), and keeps a local Ray's authentication on without Ray's advice to turn
it off (``token_auth_for_local_ray``). ``sweep.task_queue.connect`` applies the decisions; only
``present_token`` touches Ray.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ray.exceptions import AuthenticationError

from .errors import ConfigError

# The variable that makes ray.init present the token when it joins an address (ray/_private/worker.py: init).
AUTH_MODE = "RAY_AUTH_MODE"
_TOKEN_HELP = (
    "give this driver the cluster's token, which `ray get-auth-token` prints on the head node: in ~/.ray/auth_token, "
    "or in a file named by RAY_AUTH_TOKEN_PATH, or in RAY_AUTH_TOKEN (Ray takes the first of RAY_AUTH_TOKEN, "
    "RAY_AUTH_TOKEN_PATH, ~/.ray/auth_token)"
)


def auth_token_source(environ: Mapping[str, str], home: str | os.PathLike | None) -> str | None:
    """Where Ray would read its auth token from, or None when no source holds one.

    Ray's order (AuthenticationTokenLoader::TryLoadTokenFromSources): the RAY_AUTH_TOKEN variable, else the
    file named by RAY_AUTH_TOKEN_PATH (unreadable or empty is an error, not a fall-through), else
    $HOME/.ray/auth_token; a file counts by its first line, stripped. Raises ConfigError for a bad
    RAY_AUTH_TOKEN_PATH, which Ray itself would abort on.
    """
    if environ.get("RAY_AUTH_TOKEN", "").strip():
        return "the RAY_AUTH_TOKEN environment variable"
    named = environ.get("RAY_AUTH_TOKEN_PATH", "")
    if named:
        if not _first_line(Path(named)):
            raise ConfigError(
                f"RAY_AUTH_TOKEN_PATH={named}: the file cannot be read or is empty (it must hold "
                f"the Ray cluster's auth token)"
            )
        return f"{named} (RAY_AUTH_TOKEN_PATH)"
    default = Path(home or ".") / ".ray" / "auth_token"  # Ray's fallback without HOME is ./.ray/auth_token
    return str(default) if _first_line(default) else None


def _first_line(path: Path) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline().strip()
    except OSError:
        return ""


def driver_auth(environ: Mapping[str, str], home: str | os.PathLike | None) -> tuple[dict[str, str], str | None]:
    """How a driver joining a cluster presents Ray's auth token: (variables to set, the token's source).

    RAY_AUTH_MODE unset and a token available: set RAY_AUTH_MODE=token, as Ray itself does for
    ``ray start --head`` and ``ray.init(address="auto")``. RAY_AUTH_MODE set: respected as it is (never
    changed), but ``token`` without a token is a ConfigError. No token and no mode: nothing is set
    (a cluster without authentication accepts the driver).
    """
    mode = environ.get(AUTH_MODE)
    if mode is not None and mode.lower() != "token":
        return {}, None  # the user's explicit choice
    source = auth_token_source(environ, home)
    if source is None:
        if mode is not None:
            raise ConfigError(f"{AUTH_MODE}={mode} is set but no Ray auth token was found; {_TOKEN_HELP}")
        return {}, None
    return ({} if mode is not None else {AUTH_MODE: "token"}), source


def auth_failure_message(address: str, environ: Mapping[str, str], source: str | None) -> str:
    """What to set when the cluster at ``address`` refused the driver (InvalidAuthToken)."""
    refused = f"runner.address={address}: the Ray cluster refused this driver (InvalidAuthToken)"
    if source is not None:
        return f"{refused}: its token is not the one from {source}; {_TOKEN_HELP}"
    mode = environ.get(AUTH_MODE)
    if mode is not None:
        return (
            f"{refused}: it requires token authentication and {AUTH_MODE}={mode} is set here; unset it or "
            f"set {AUTH_MODE}=token, and {_TOKEN_HELP}"
        )
    return f"{refused}: it requires token authentication and no auth token was found here; {_TOKEN_HELP}"


def is_auth_failure(err: BaseException) -> bool:
    seen = 0
    while err is not None and seen < 10:  # ray.init wraps the GCS client's AuthenticationError in two errors
        if isinstance(err, AuthenticationError) or "InvalidAuthToken" in str(err):
            return True
        err, seen = err.__cause__ or err.__context__, seen + 1
    return False


def present_token(env: dict[str, str]) -> None:
    os.environ.update(env)
    try:  # Ray caches the mode read from the environment; refresh it as ray start --head does
        from ray._raylet import Config

        Config.initialize("")
    except (ImportError, AttributeError):  # a Ray without the cache: the environment is enough
        pass


def token_auth_for_local_ray() -> None:
    """A new local Ray turns token authentication on by default (Ray >= 2.52: it sets
    RAY_AUTH_MODE=token for this process) and warns how to turn it off. Doing the same first keeps
    authentication on and every run's output free of that advice; an explicit RAY_AUTH_MODE is
    the user's and left as it is."""
    if AUTH_MODE not in os.environ:
        present_token({AUTH_MODE: "token"})
