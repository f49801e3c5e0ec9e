"""The data every stage shares, split by contract: the plan (``plan``: plan.json, and which shard runs a
test), one shard's outcome with its test cases and totals (``outcome``), the failure records
(``failures``), the item<->test matcher they share (``matching``) and the fields their JSON forms are
read with (``fields``); ``planfile`` is the one reader of plan.json.

These are the contracts between the stages in code (the files are described in docs/planning.md,
docs/run.md and docs/aggregate.md). Each type has a JSON form (``to_json`` / ``from_json``)
that is the file format; readers accept unknown keys (newer writers) and reject missing required
ones with a ``ValueError`` naming the key, which the IO edge turns into an ``InputError``.
Nothing here but ``planfile`` touches files, the clock or the environment.
"""
