"""The default behaviour source: the policy a fresh runtime activates (see manifest.json)."""

__all__: list[str] = []
