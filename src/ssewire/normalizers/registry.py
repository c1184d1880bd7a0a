"""Provider name -> normaliser: :data:`PROVIDERS` (every entry of :mod:`.providers`, plus ``auto``) and
:func:`normalizer_for`."""

from __future__ import annotations

from ..errors import UnknownProviderError, unknown_name
from .auto import AutoNormalizer
from .contract import Normalizer
from .providers import ENTRIES, detect_provider, usage_from

__all__ = ["PROVIDERS", "detect_provider", "normalizer_for", "usage_from"]

#: Every provider name ``normalizer_for`` accepts (each class's ``provider``), with the class it builds.
_CLASSES: tuple[type[Normalizer], ...] = (*(entry.cls for entry in ENTRIES), AutoNormalizer)
PROVIDERS: dict[str, type[Normalizer]] = {cls.provider: cls for cls in _CLASSES}
if len(PROVIDERS) != len(ENTRIES) + 1:  # two classes naming one provider: a mistake in ENTRIES
    raise RuntimeError(f"provider names repeat in the registry: {[entry.name for entry in ENTRIES]}")


def normalizer_for(provider: str) -> Normalizer:
    """A fresh normaliser for one stream of ``provider`` (one of :data:`PROVIDERS`); otherwise
    :class:`~ssewire.errors.UnknownProviderError` (a ``ValueError``) naming the closest known name."""
    try:
        cls = PROVIDERS[provider]
    except (KeyError, TypeError):
        raise UnknownProviderError(unknown_name("provider", provider, PROVIDERS)) from None
    return cls()
