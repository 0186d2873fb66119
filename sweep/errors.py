"""Errors the engine reports to the user instead of a traceback."""


class ConfigError(ValueError):
    """A config value or input file is invalid; the message names the key or file and line."""
