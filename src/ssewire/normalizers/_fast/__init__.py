"""The fast paths of the normalisers: delta rules and typed decoding (:mod:`.typed`) and the compiled delta reader
(``deltas_c``, C declared in ``json_fields.pxd``). Every path gives the same events as the full decode."""
