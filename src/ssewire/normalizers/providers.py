"""The one ordered list of providers: adding a provider is one module and one entry here.

Each entry is a normaliser class (the provider's name is its ``provider``). The order is the order in which
auto-detection, usage recognition and metadata lookup consult the classes' recognition ``rules`` (``claims``,
``claims_error``, ``usage_from``, ``meta_from``; see :class:`.contract.Recognition`): the first that recognises a
payload wins. ``detect=False`` entries are
never chosen by auto-detection (their payloads look like another provider's, or they have no byte stream).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from ..errors import DetectionError
from ..usage import Usage
from .anthropic import AnthropicNormalizer
from .bedrock import BedrockAnthropicNormalizer, BedrockConverseNormalizer
from .chat import ChatCompletionsNormalizer
from .cohere import CohereNormalizer
from .contract import Normalizer
from .gemini import GeminiNormalizer
from .gemini_live import GeminiLiveNormalizer
from .mistral import MistralNormalizer
from .ollama import OllamaNormalizer
from .openai import OpenAINormalizer
from .realtime import OpenAIRealtimeNormalizer
from .vercel_ui import VercelUINormalizer
from .xai import XAINormalizer

__all__ = ["ENTRIES", "Entry", "Meta", "detect_provider", "error_provider", "meta_from", "usage_from", "wrong_provider"]


class Entry(NamedTuple):
    """One provider: its normaliser class, whether auto-detection may choose it, and the other providers whose
    streams its normaliser also reads (by delegation). Its name (what ``provider=`` takes) is the class's
    ``provider``."""

    cls: type[Normalizer]
    detect: bool = True
    also_reads: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The provider's name: its normaliser's ``provider``."""
        return self.cls.provider


ENTRIES: tuple[Entry, ...] = (
    Entry(GeminiNormalizer),  # first: Interactions events are told apart by event_type / event name
    Entry(OpenAIRealtimeNormalizer),  # before openai: event_id, never a sequence_number
    Entry(OpenAINormalizer, also_reads=("openai-chat",)),  # one instance for either OpenAI API
    Entry(AnthropicNormalizer),
    Entry(ChatCompletionsNormalizer),  # after the typed event streams: "choices" is its mark
    Entry(OllamaNormalizer),  # a boolean "done" beside "message" or "response"
    Entry(CohereNormalizer),  # hyphenated event types (message-start, content-delta ...)
    Entry(VercelUINormalizer),  # hyphenated chunk types of its own; before Bedrock: camelCase usage with details
    Entry(BedrockConverseNormalizer),  # camelCase event names (contentBlockDelta ...)
    Entry(BedrockAnthropicNormalizer),  # chunk events holding base64 Anthropic events
    # xAI sends OpenAI's and Anthropic's shapes
    Entry(XAINormalizer, detect=False, also_reads=("openai", "openai-chat", "anthropic")),
    Entry(MistralNormalizer, detect=False, also_reads=("openai-chat",)),  # chat chunks, typed content
    Entry(GeminiLiveNormalizer, detect=False),  # WebSocket frames, fed one by one
)

_DETECTABLE = tuple(entry for entry in ENTRIES if entry.detect)
#: Each detectable provider's name and recognition rule, in registry order (what detection asks, once per stream).
_CLAIMS = tuple((entry.name, entry.cls.rules.claims) for entry in _DETECTABLE)


def detect_provider(obj: dict[str, Any], event: Optional[str] = None) -> Optional[str]:
    """The name of the provider whose normaliser claims ``obj``; ``None`` for a bare error payload (any provider
    could have sent it, and an empty object: a keep-alive, ``event: ping`` + ``data: {}``, says nothing);
    :class:`~ssewire.DetectionError` for a payload no provider sends (never a guess)."""
    if not obj:
        return None
    for name, claims in _CLAIMS:
        if claims(obj, event):
            return name
    if obj.get("type") == "error" or "error" in obj:
        return None
    sample = ", ".join(sorted(obj)[:8])
    raise DetectionError(f"cannot tell which provider sent a payload with keys: {sample}")


def error_provider(obj: dict[str, Any]) -> str:
    """The provider whose error shape a bare error payload has (a tie-breaker: any of them reports it)."""
    for entry in _DETECTABLE:
        if entry.cls.rules.claims_error(obj):
            return entry.name
    return "openai-chat"


#: Each detectable provider's usage reader, in registry order.
_USAGE_READERS = tuple(entry.cls.rules.usage_from for entry in _DETECTABLE)


def usage_from(raw: dict[str, Any], partial: bool = False) -> Optional[Usage]:
    """The first provider's reading of a usage object, in registry order (``None`` when none recognises it)."""
    for read in _USAGE_READERS:
        usage = read(raw, partial)
        if usage is not None:
            return usage
    return None


#: Each provider's recognition rules by the name a usage object it read gives as its ``source``.
_RULES_BY_SOURCE = {entry.cls.rules.provider: entry.cls.rules for entry in ENTRIES}


def billed_usage(usage: Usage) -> Usage:
    """The counts the provider that read ``usage`` bills (its rules' ``billed``): ``usage`` itself for most."""
    rules = _RULES_BY_SOURCE.get(usage.source or "")
    return usage if rules is None else rules.billed(usage)


def streams_on(obj: dict[str, Any]) -> bool:
    """Whether a body that is only the JSON object ``obj`` is a stream's first chunk, cut after it (some provider's
    rules say so: an Ollama line with ``"done": false``), rather than a whole response."""
    return any(entry.cls.rules.streams_on(obj) for entry in ENTRIES)


def media_counts(usage: Usage) -> dict[str, tuple[int, int, int]]:
    """Every modality in ``usage`` billed at rates of its own, as the provider that read it counts them (its rules'
    ``media``): by name, ``(prompt, cached, generated)`` tokens; empty where it counts none."""
    rules = _RULES_BY_SOURCE.get(usage.source or "")
    raw = usage.raw
    return {} if rules is None or type(raw) is not dict else rules.media(raw)


_READS = {entry.name: {entry.name, *entry.also_reads} for entry in ENTRIES}


def wrong_provider(provider: str, obj: dict[str, Any], event: Optional[str] = None) -> Optional[str]:
    """The provider auto-detection recognises in ``obj`` (a stream's first payload) when the normaliser named
    ``provider`` does not read that provider's streams; None when it does, or when no provider claims ``obj``
    (an error payload, an unknown shape)."""
    reads = _READS.get(provider)
    if reads is None or not obj:  # "auto", or a normaliser instance of the caller's own; an empty keep-alive
        return None
    for entry in _DETECTABLE:
        if entry.cls.rules.claims(obj, event):
            return None if entry.name in reads else entry.name
    return None


class Meta(NamedTuple):
    """What a payload says the stream is, as the provider that claims it reads it; ``names_response_id`` /
    ``names_model``: whether that provider ever names one (False: nothing should wait for it)."""

    response_id: Optional[str]
    model: Optional[str]
    names_response_id: bool = True
    names_model: bool = True


def meta_from(obj: dict[str, Any]) -> Meta:
    """The :class:`Meta` of a payload, read by the provider that claims it."""
    for entry in _DETECTABLE:
        cls = entry.cls
        if cls.rules.claims(obj):
            return Meta(*cls.rules.meta_from(obj), cls.names_response_id, cls.names_model)
    return Meta(None, None)
