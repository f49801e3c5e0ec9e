"""The small helpers every stage shares: exit codes and error types (``errors``), everything said to people
(``console``: stderr, workflow commands fenced), ``-o`` and atomic writes (``outfile``), the one file-pattern
matcher (``globs``), the runner facts of outcome.json (``facts``) and which Python runs pytest (``interpreter``)."""
