"""Keeping the registry equal to the folders: watch, import, reconcile (internal)."""
