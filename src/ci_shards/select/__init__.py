"""Change-based test selection (docs/selection.md): which planned items a change can break.

Pure cores: ``diff`` (git's name-status output), ``paths`` (path globs), ``imports`` (the static import
map), ``maps`` (touchfiles and coverage maps), ``settings`` (the config), ``decide`` (the decision),
``narrow`` (the functions a change touched) and ``report`` (what the selection did, shadow mode's misses).
Thin I/O: ``git`` (the repository), ``ci`` (the CI's
environment and event payload) and ``apply`` (reads everything and decides, for ``plan --select``).
"""
