"""The run stage: one shard's command (command), its process tree under a deadline (process), its
output spool (spool), what the run amounted to (classify) and its artifact folder (shard_output),
driven by runner (``runner.run_shard``, the stage's front door)."""
