"""Every jinja2 template ci-shards renders: ``report/`` (the job summary and PR comment, test history, coverage)
and ``ci/`` (the CI configurations ``ci-shards init`` writes).

This folder sits at the repository's top level and is installed as the package ``ci_shards.templates``
(pyproject.toml's ``package-dir``). This file is what makes it a regular package: setuptools' editable
install finds a mapped folder only by its ``__init__.py`` (a folder without one is found in a built
wheel but not in ``pip install -e``). Rendering lives in ``ci_shards.common.templating``.
"""
