"""The fast paths of the normalisers: delta rules and typed decoding (:mod:`.typed`), the compiled delta reader
(``deltas_c``, C declared in ``json_fields.pxd``) and Bedrock's chunk unwrapping (:mod:`.bedrock_chunks`: one
source, ``bedrock_chunks_py.py``, compiled as ``bedrock_chunks_c``). Every path gives the same events as the full
decode."""
