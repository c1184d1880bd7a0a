"""ssewire's benchmarks: ``python -m benchmarks`` (see benchmarks/README.md) and ``pytest benchmarks/``."""
