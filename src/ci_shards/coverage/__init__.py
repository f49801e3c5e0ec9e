"""Coverage across shards (docs/coverage.md).

- ``collect``: the run stage's side: the shard's command runs under coverage.py (``launch``, with the
  per-test context map of ``pytest_map``) or with ``NODE_V8_COVERAGE``; the data lands in
  ``<shard folder>/coverage/`` and outcome.json names it.
- ``fold``: the aggregate stage's side: every shard's data combined into one ``coverage.json``
  (``ci-shards/coverage@1``), with ``completeness`` saying whether every shard contributed.
- ``fold_contexts``: the map's side of the fold (each context's lines from the data files' SQLite), kept in
  ``context_map``'s compact form (a context table, per file groups of lines: pure).
- ``artifact`` (the data types), ``writers`` (Cobertura, lcov), ``query`` (line answers, freshness),
  ``diffcov`` (coverage of the changed lines), ``summary`` (the Markdown section): pure cores.

The third-party ``coverage`` package is imported only by the modules that need it, and only when
coverage is asked for: it is an optional extra (``ci-shards[coverage]``).
"""
