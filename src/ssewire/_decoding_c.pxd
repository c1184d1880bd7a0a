# The C types of _decoding_py.py, which the build compiles as _decoding_c (see setup.py): Cython reads this file
# beside the copy it compiles, so the decoder's calls into the accumulator are C calls and both keep their state in
# typed slots. Keep it in step with the .py (every attribute of both classes is declared here).

cimport cython


cdef class Accumulator:
    cdef list _text, _reasoning, _order
    cdef tuple _parts
    cdef dict _calls
    cdef object _result, _usage, _meta_reader
    cdef readonly object _sink
    cdef bint _done, _meta_found
    cdef readonly bint has_meta
    cdef readonly Py_ssize_t events, deltas

    cpdef _call(self, event)
    cpdef _sinks_fragments(self, call)
    cpdef add(self, event)
    cpdef _add_other(self, str kind, event)
    cpdef take(self, events)
    cpdef _compact(self)
    cpdef adopt_meta(self, response_id, model)
    cpdef text_sink(self)
    cpdef take_run(self, list events, sink)
    cpdef _meta(self, raw)


cdef class StreamDecoder:
    cdef object _body, _first, _head, _ids, _reader, _replay, _run_id, _scan, _sequence
    cdef object _encoding, _framing, _inflated, _max_buffer, _max_inflated
    cdef Py_ssize_t _run_length
    cdef bint _first_cut, _plain, _runs, _sniff
    cdef readonly object normalizer
    cdef public object scanner

    cpdef _start_body(self)
    cpdef _replan(self)
    cpdef _sniffed(self, chunk)
    cpdef list feed(self, chunk)
    cpdef bint stepped(self, chunk)
    cpdef events(self, chunk)
    cpdef list _feed_bytes(self, chunk)
    cpdef list _normalize(self, list events)
    cpdef feed_into(self, chunk, Accumulator accumulator)
    cpdef _feed_bytes_into(self, chunk, Accumulator accumulator)
    cpdef _settled(self)
    cpdef _normalize_into(self, list events, Accumulator accumulator)
    cpdef close_into(self, Accumulator accumulator)
    cpdef list _framed(self, chunk)
    cpdef _keep_first(self, event)
    cpdef _count_ids(self, list events)
    cpdef list ended(self)
    cpdef list close(self)


cdef class UnifiedEvents:
    cdef object _chunks, _provider, _framing, _max_buffer, _content_encoding, _max_inflated, _events
    cdef bint _started

    cpdef _generator(self)
    cpdef StreamDecoder _decoder(self)
    cpdef close(self)
    cpdef bint collect_into(self, Accumulator accumulator)


# The normaliser's reading loop (the one home of Normalizer.normalize_into and normalize_reading): the accumulator
# it feeds is typed, so its calls into it are C calls.
cpdef list normalize_events(normalizer, events)
cdef list _normalize_events(normalizer, list events)
cpdef normalize_into(normalizer, events, Accumulator accumulator)
cdef _normalize_batch(normalizer, list events, Accumulator accumulator)
cpdef list decode_event(normalizer, ev)
cpdef list normalize_decoding(normalizer, events)
cpdef Py_ssize_t read_deltas_into(normalizer, list events, Accumulator accumulator) except -1
cpdef Py_ssize_t read_run(reader, list events, Accumulator accumulator, take=*, rule=*) except -1
cdef Py_ssize_t _read_deltas(normalizer, list events, Accumulator accumulator) except -1


cpdef list normalize_reading(normalizer, events, reader, still_reading=*)


@cython.locals(into=Accumulator, index=Py_ssize_t, end=Py_ssize_t, after=Py_ssize_t)
cdef list _reading(normalizer, events, reader, still_reading, take, rule)


cdef class TapMetrics:
    cdef public Py_ssize_t bytes, chunks, events
    cdef public object first_byte_at, first_event_at, first_token_at, last_delta_at, done_at, ended_at
    cdef public list gaps


cdef class StreamTap:
    cdef Accumulator _accumulator
    cdef StreamDecoder _decoder
    cdef TapMetrics _metrics
    cdef object _clock, _failure, _started, _final
    cdef readonly list _noted
    cdef Py_ssize_t _noted_bytes
    cdef public bint closed

    cpdef feed(self, chunk)
    cpdef _parse_noted(self)
    cpdef _observed(self, Py_ssize_t events, Py_ssize_t deltas, now)
    cpdef _fail(self, exc)
    cpdef close(self)


cpdef delegated_normalize(normalizer, events)
cpdef delegated_deltas_into(normalizer, list events, Accumulator accumulator)
