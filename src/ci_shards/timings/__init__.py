"""The timings store (JSON): per-test durations and per-shard overhead (``store``), read by ``plan`` and written
back by ``aggregate --timings-out`` and ``timings import/merge``. Its test history section is ``history``'s."""
