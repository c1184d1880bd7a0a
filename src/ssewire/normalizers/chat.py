"""PLACEHOLDER - to be written."""

from __future__ import annotations

from typing import Any, Optional

from ..events import Unified
from ._base import Normalizer


class ChatCompletionsNormalizer(Normalizer):
    provider = "openai-chat"

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        return [Unified("raw", raw=obj)]
