"""The GitHub Action's logic, so action.yml only wires steps: ``inputs`` maps the action's inputs to ci-shards
argv (pure), ``steps`` runs one stage in-process and writes the step outputs and job summary (the I/O edge), and
``bootstrap`` checks the inputs and installs ci-shards before ci-shards exists (standard library only)."""
