"""Readers and field checks shared by the families' worlds."""
