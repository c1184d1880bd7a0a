"""The command line: ``ssewire [STREAM]`` (:mod:`.main`) and ``ssewire batch`` (:mod:`ssewire.batch.command`),
which share the options of :mod:`.options`."""

from .main import console, main

__all__ = ["console", "main"]
