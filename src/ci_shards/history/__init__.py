"""Test history: per test, its outcomes in the last runs (``outcomes``), kept as a section of the timings store
and read by the aggregate stage's triage (docs/aggregate.md, "Test history")."""
