"""xAI streams -> Unified: one instance handles any xAI endpoint by dispatching each payload on its shape.

- Chat Completions chunks (``object == "chat.completion.chunk"``, or ``choices`` / ``error`` without ``type``) and
  ``[DONE]`` -> a :class:`~ssewire.normalizers.chat.ChatCompletionsNormalizer` delegate (reasoning in
  ``delta.reasoning_content``; each tool call arrives whole in one chunk; usage in a ``choices: []`` chunk).
- ``response.*`` events -> an :class:`XAIResponsesNormalizer` delegate: OpenAI's Responses normaliser (its rules,
  citations from ``url_citation`` annotations included) with xAI's rule for who runs a call. Client-defined tools
  are ``function`` tools (docs.x.ai "Function calling"), so only ``function_call`` items are client calls; every
  other call item is one of xAI's server-side tools, which xAI runs itself before answering in the same response
  (docs.x.ai "Tools overview": built-in tools "execute automatically"): X search (``custom_tool_call`` named
  ``x_keyword_search``, ``x_semantic_search``, ``x_user_search``, ``x_thread_fetch``, ``view_x_video`` ...), web
  search, code execution, collections / file search, MCP (``*_call`` items) -> ``server=True``, never ``tool_use``.
- Anthropic event names (``message_start``, ``content_block_*`` ...) -> an
  :class:`~ssewire.normalizers.anthropic.AnthropicNormalizer` delegate (which tolerates xAI's missing ``index``).
- ``error`` goes to the delegate in use (the Responses one when none is yet).

``done``, ``usage`` and :meth:`finish` reflect the delegate actually used (``delegate``).
"""

from __future__ import annotations

from typing import Any, Optional

from ..events import SSEEvent, Unified
from .anthropic import AnthropicNormalizer, AnthropicRules
from .chat import ChatCompletionsNormalizer, ChatRules
from .contract import DelegatingNormalizer, Normalizer, not_a_payload
from .openai import OpenAINormalizer, ResponsesRules

__all__ = ["XAINormalizer", "XAIResponsesNormalizer"]


class XAIResponsesNormalizer(OpenAINormalizer):
    """xAI ``/v1/responses`` events: OpenAI's Responses normaliser with xAI's rule for who runs a call. A tool the
    client defines is always a ``function`` tool, so only ``function_call`` items are client calls; xAI runs every
    other call item itself (its server-side tools arrive as ``custom_tool_call`` -- ``x_keyword_search``,
    ``x_semantic_search``, ``view_x_video`` ... -- or as ``web_search_call``, ``code_interpreter_call``,
    ``mcp_call`` ... items, with the answer that used them later in the same response)."""

    client_items = frozenset({"function_call"})


class XAINormalizer(DelegatingNormalizer):
    """Any xAI stream -> Unified, through the delegate its payloads call for (see the module docstring)."""

    provider = "xai"
    terminal = "terminal event ([DONE], response.completed or message_stop)"
    #: A stream's deltas take the fast paths of the delegate in use (it changes with the payloads' shapes);
    #: everything else is routed by :meth:`payload`.
    fast_delegates = (ChatCompletionsNormalizer, XAIResponsesNormalizer, AnthropicNormalizer)
    delegate_changes = True

    # The delegates, made when a payload of theirs first comes; ``delegate`` (DelegatingNormalizer): the one that
    # handled the last payload, None before the first.
    chat: Optional[ChatCompletionsNormalizer] = None
    responses: Optional[OpenAINormalizer] = None
    messages: Optional[AnthropicNormalizer] = None

    def _chat(self) -> ChatCompletionsNormalizer:
        if self.chat is None:
            self.chat = ChatCompletionsNormalizer()
        return self.chat

    def _responses(self) -> OpenAINormalizer:
        if self.responses is None:
            self.responses = XAIResponsesNormalizer()
        return self.responses

    def _messages(self) -> AnthropicNormalizer:
        if self.messages is None:
            self.messages = AnthropicNormalizer()
        return self.messages

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Route one payload to the delegate whose provider claims it (see the module docstring)."""
        if not isinstance(obj, dict):
            raise not_a_payload(obj)
        delegate: Optional[Normalizer]
        if ChatRules.claims(obj):
            delegate = self.chat or self._chat()  # the bulk of a chat stream: no call once it exists
        elif ResponsesRules.claims(obj, event):
            delegate = self._responses()
        elif AnthropicRules.claims(obj, event):
            delegate = self._messages()
        elif obj.get("type") == "error" or (type(obj.get("type")) is not str and event == "error"):
            delegate = self.delegate if self.delegate is not None else self._responses()
        elif type(obj.get("type")) is not str and "error" in obj:
            delegate = self.chat or self._chat()
        else:
            delegate = None
        if delegate is None:
            return [Unified("raw", raw=obj)]
        self.delegate = delegate
        return delegate.payload(obj, event)

    def held_skip(self, event: Optional[str] = None) -> Any:
        """The member the delegate in use decodes a large payload without."""
        return None if self.delegate is None else self.delegate.held_skip(event)

    def sentinel(self, ev: SSEEvent) -> list[Unified]:
        """``[DONE]`` ends a chat stream; with the other endpoints (no chat chunk seen) it is swallowed."""
        chat = self.chat
        if chat is None:
            return []
        self.delegate = chat
        return chat.sentinel(ev)

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The tool calls every delegate still has open."""
        out: list[dict[str, Any]] = []
        for delegate in (self.chat, self.responses, self.messages):
            if delegate is not None:
                out += delegate.incomplete_tool_calls()
        return out
