"""``ssewire.arrow``: the public home of :mod:`ssewire.batch.arrow` (Arrow record batches of stored streams)."""

from .batch.arrow import SCHEMA, kept_columns, map_batches, output_schema, parse_batch, parse_table

__all__ = ["SCHEMA", "kept_columns", "map_batches", "output_schema", "parse_batch", "parse_table"]
