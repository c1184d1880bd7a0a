"""Mistral ``/v1/chat/completions`` streams -> Unified: the Chat Completions rules (see :mod:`.chat`: they read
Mistral's typed content chunks, ``text`` and ``thinking``, too) and Mistral's finish reasons: ``model_length`` ->
max_tokens and ``error`` -> failed. Tool calls come whole (one chunk per call) and take the chat start -> delta ->
done path. Auto-detection reads a Mistral stream as Chat Completions (the same events but for those two finish
reasons): ask for ``"mistral"``.
"""

from __future__ import annotations

from typing import ClassVar

from .chat import CHAT_STOP, ChatCompletionsNormalizer

__all__ = ["MISTRAL_STOP", "MistralNormalizer"]

#: Mistral ``finish_reason`` -> unified stop reason (anything else maps to ``other``).
MISTRAL_STOP: dict[str, str] = {**CHAT_STOP, "model_length": "max_tokens", "error": "failed"}


class MistralNormalizer(ChatCompletionsNormalizer):
    """Mistral chat chunks -> Unified (see the module docstring)."""

    provider = "mistral"
    stops: ClassVar[dict[str, str]] = MISTRAL_STOP
