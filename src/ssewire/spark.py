"""``ssewire.spark``: the public home of :mod:`ssewire.batch.spark` (Spark DataFrames of stored streams)."""

from .batch.spark import RESULT_STRUCT, output_struct, parse

__all__ = ["RESULT_STRUCT", "output_struct", "parse"]
