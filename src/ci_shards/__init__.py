"""ci-shards: balanced CI shards that every planned test runs in exactly once, or loudly not."""

__version__ = "0.1.0"
