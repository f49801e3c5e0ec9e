"""pytest plugin: selects one shard's node ids from plan.json at collection time (built by the run issue).

Loaded through the ``pytest11`` entry point; inert unless its options are given.
"""
