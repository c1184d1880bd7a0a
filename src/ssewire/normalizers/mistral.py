"""Mistral ``/v1/chat/completions`` streams -> Unified: the Chat Completions rules (see :mod:`.chat`: they read
Mistral's typed content chunks, ``text`` and ``thinking``, and Mistral's finish reasons, ``model_length`` ->
max_tokens and ``error`` -> failed, which are in the one chat stop table). Tool calls come whole (one chunk per
call) and take the chat start -> delta -> done path. Auto-detection reads a Mistral stream as Chat Completions and
gives the same result (the same events and stop table); ``provider="mistral"`` only names it.
"""

from __future__ import annotations

from .chat import CHAT_STOP, ChatCompletionsNormalizer, ChatRules

__all__ = ["MISTRAL_STOP", "MistralNormalizer", "MistralRules"]

#: Mistral ``finish_reason`` -> unified stop reason: the chat table, which holds Mistral's own values
#: (``model_length``, ``error``) so that auto-detection maps them alike.
MISTRAL_STOP: dict[str, str] = CHAT_STOP


class MistralRules(ChatRules):
    """The Chat Completions rules, under Mistral's name (auto-detection reads a Mistral stream as Chat Completions)."""

    provider = "mistral"


class MistralNormalizer(ChatCompletionsNormalizer):
    """Mistral chat chunks -> Unified (see the module docstring)."""

    provider = "mistral"
    rules = MistralRules
    stops = MISTRAL_STOP
