"""Citations as data: one shape for what every provider says its answer cites.

A :class:`Citation` is built by the provider's normaliser from its own citation object (OpenAI and xAI
``url_citation`` / ``file_citation`` annotations, Anthropic ``citations_delta``, Gemini grounding supports,
Cohere ``citation-start`` events, Perplexity ``search_results``), carried on the event that brought it
(``Unified.citations``) and gathered in stream order in :attr:`~ssewire.StreamResult.citations`.
"""

from __future__ import annotations

from typing import Any, Optional

__all__ = ["Citation"]


class Citation:
    """One cited source.

    - ``kind``: the provider's own type of citation (``"url_citation"``, ``"web_search_result_location"``,
      ``"grounding_support"``, ``"search_result"`` ...);
    - ``url``, ``title``: the source, where the provider names it;
    - ``cited_text``: the words of the source that are quoted, or the answer's words that cite it (the provider
      says which: see its module);
    - ``start``, ``end``: the span the citation covers, as the provider counts it: of the answer (characters of a
      content part for OpenAI, UTF-8 bytes of the candidate's text for Gemini, characters for Cohere), or of the
      cited document (Anthropic: characters, pages or content blocks, end exclusive); ``None`` where it gives none;
    - ``raw``: the provider's citation object, untouched.
    """

    __slots__ = ("cited_text", "end", "kind", "raw", "start", "title", "url")

    def __init__(
        self,
        kind: str,
        url: Optional[str] = None,
        title: Optional[str] = None,
        cited_text: Optional[str] = None,
        start: Optional[int] = None,
        end: Optional[int] = None,
        raw: Any = None,
    ) -> None:
        self.kind = kind
        self.url = url
        self.title = title
        self.cited_text = cited_text
        self.start = start
        self.end = end
        self.raw = raw

    def to_dict(self, *, with_raw: bool = True) -> dict[str, Any]:
        """The citation as a JSON-ready dict (``raw`` left out unless ``with_raw``)."""
        out = {name: getattr(self, name) for name in ("kind", "url", "title", "cited_text", "start", "end")}
        if with_raw:
            out["raw"] = self.raw
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Citation):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"Citation(kind={self.kind!r}, url={self.url!r}, title={self.title!r}, cited_text={self.cited_text!r}, "
            f"start={self.start!r}, end={self.end!r})"
        )
