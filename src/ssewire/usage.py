"""One usage model for every provider: :class:`Usage`, built from the provider's own usage object.

Whatever the provider counts, the fields mean the same thing:

- ``input_tokens``: every prompt token, cached ones included (Gemini's tool-use prompt tokens too);
- ``cached_input_tokens``: prompt tokens read from a cache; ``cache_write_tokens``: prompt tokens written to one;
- ``output_tokens``: every generated token, reasoning included; ``reasoning_tokens``: the reasoning share
  (``None`` where the provider does not report it, e.g. Anthropic);
- ``total_tokens`` = ``input_tokens + output_tokens``, always; ``raw`` is the provider's object, untouched;
- ``partial``: True when the stream ended early, so the counts are the best seen, not final.

The provider's shape is recognised from its keys (and, for Chat Completions, from whether ``total_tokens``
counts reasoning separately, as xAI does), so no provider name is needed.
"""

from __future__ import annotations

from typing import Any, Optional

__all__ = ["Usage"]


def _int(value: Any) -> int:
    return value if type(value) is int else 0


def _detail(raw: dict[str, Any], group: str, key: str) -> int:
    details = raw.get(group)
    return _int(details.get(key)) if isinstance(details, dict) else 0


class Usage:
    """Token counts with one meaning across providers (see the module docstring)."""

    __slots__ = (
        "cache_write_tokens",
        "cached_input_tokens",
        "input_tokens",
        "output_tokens",
        "partial",
        "raw",
        "reasoning_tokens",
        "total_tokens",
    )

    def __init__(
        self,
        input_tokens: int = 0,
        output_tokens: int = 0,
        *,
        cached_input_tokens: int = 0,
        cache_write_tokens: int = 0,
        reasoning_tokens: Optional[int] = 0,
        raw: Optional[dict[str, Any]] = None,
        partial: bool = False,
    ) -> None:
        self.input_tokens = input_tokens
        self.cached_input_tokens = cached_input_tokens
        self.cache_write_tokens = cache_write_tokens
        self.output_tokens = output_tokens
        self.reasoning_tokens = reasoning_tokens
        self.total_tokens = input_tokens + output_tokens
        self.raw = raw
        self.partial = partial

    @classmethod
    def _gemini(
        cls, raw: dict[str, Any], partial: bool, prompt: str, tool_prompt: str, output: str, thoughts: str, cached: str
    ) -> Usage:
        """Gemini's counts, named by the API's keys: thoughts are output (and reasoning), tool prompts input."""
        reasoning = _int(raw.get(thoughts))
        return cls(
            _int(raw.get(prompt)) + _int(raw.get(tool_prompt)),
            _int(raw.get(output)) + reasoning,
            cached_input_tokens=_int(raw.get(cached)),
            reasoning_tokens=reasoning,
            raw=raw,
            partial=partial,
        )

    @classmethod
    def from_raw(cls, raw: dict[str, Any], *, partial: bool = False) -> Usage:
        """The :class:`Usage` a provider's usage object describes (an unknown shape counts zero, raw kept)."""
        if "promptTokenCount" in raw or "candidatesTokenCount" in raw or "totalTokenCount" in raw:  # Gemini
            candidates = "candidatesTokenCount" if "candidatesTokenCount" in raw else "responseTokenCount"  # Live
            return cls._gemini(
                raw, partial, "promptTokenCount", "toolUsePromptTokenCount", candidates, "thoughtsTokenCount",
                "cachedContentTokenCount",
            )  # fmt: skip
        if "total_input_tokens" in raw or "total_output_tokens" in raw:  # Gemini Interactions
            return cls._gemini(
                raw, partial, "total_input_tokens", "total_tool_use_tokens", "total_output_tokens",
                "total_thought_tokens", "total_cached_tokens",
            )  # fmt: skip
        if "prompt_tokens" in raw or "completion_tokens" in raw:  # Chat Completions
            prompt = _int(raw.get("prompt_tokens"))
            completion = _int(raw.get("completion_tokens"))
            reasoning = _detail(raw, "completion_tokens_details", "reasoning_tokens")
            # OpenAI counts reasoning inside completion_tokens; xAI does not (its total adds it separately)
            if reasoning and _int(raw.get("total_tokens")) == prompt + completion + reasoning:
                completion += reasoning
            return cls(
                prompt,
                completion,
                cached_input_tokens=_detail(raw, "prompt_tokens_details", "cached_tokens"),
                cache_write_tokens=_detail(raw, "prompt_tokens_details", "cache_write_tokens"),
                reasoning_tokens=reasoning,
                raw=raw,
                partial=partial,
            )
        if (
            "cache_read_input_tokens" in raw
            or "cache_creation_input_tokens" in raw
            or ("input_tokens" in raw and "total_tokens" not in raw and "input_tokens_details" not in raw)
        ):  # Anthropic: input_tokens excludes both cache counts
            read = _int(raw.get("cache_read_input_tokens"))
            written = _int(raw.get("cache_creation_input_tokens"))
            return cls(
                _int(raw.get("input_tokens")) + read + written,
                _int(raw.get("output_tokens")),
                cached_input_tokens=read,
                cache_write_tokens=written,
                reasoning_tokens=None,
                raw=raw,
                partial=partial,
            )
        # OpenAI / xAI Responses
        return cls(
            _int(raw.get("input_tokens")),
            _int(raw.get("output_tokens")),
            cached_input_tokens=_detail(raw, "input_tokens_details", "cached_tokens"),
            cache_write_tokens=_detail(raw, "input_tokens_details", "cache_write_tokens"),
            reasoning_tokens=_detail(raw, "output_tokens_details", "reasoning_tokens"),
            raw=raw,
            partial=partial,
        )

    def to_dict(self) -> dict[str, Any]:
        """The counts as a dict (``raw`` included)."""
        return {name: getattr(self, name) for name in self.__slots__}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Usage):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"Usage(input_tokens={self.input_tokens}, output_tokens={self.output_tokens}, "
            f"cached_input_tokens={self.cached_input_tokens}, cache_write_tokens={self.cache_write_tokens}, "
            f"reasoning_tokens={self.reasoning_tokens}, total_tokens={self.total_tokens}, partial={self.partial})"
        )
