"""``python -m ci_shards.coverage.launch -m pytest ARGS...``: run pytest under coverage.py.

What ``coverage run -m pytest`` does, plus the settings ci-shards needs whatever the project's own
configuration says (``coverage run`` has no flag for the first two):

- ``relative_files``: the data names files relative to the source root, so runners' absolute paths
  never matter when the shards are folded;
- ``parallel`` with a unique suffix per process, into ``$CI_SHARDS_COVERAGE_DIR``;
- ``patch = subprocess``: Python subprocesses are measured too (coverage.py hands them this
  configuration through ``COVERAGE_PROCESS_CONFIG``).

The project's ``.coveragerc`` / ``setup.cfg`` / ``tox.ini`` / ``[tool.coverage]`` is read as usual
(branch, source, omit, exclusions): only those three settings are overridden.
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

DATA_DIR_ENV: Final = "CI_SHARDS_COVERAGE_DIR"
DATA_STEM: Final = "coverage-py"  # not hidden: upload-artifact leaves dot-files out by default
SAVED_STEM: Final = "saved-"  # one marker per launched process that saved its data
# the map plugin's contexts (pytest_map): "test" (each test's node id) or "file" (each test file's path)
MAP_PER_ENV: Final = "CI_SHARDS_COVERAGE_MAP_PER"


def main(argv: Sequence[str]) -> int:
    args = list(argv)
    if args[:1] != ["-m"] or len(args) < 2:
        print("usage: python -m ci_shards.coverage.launch -m MODULE [ARGS...]", file=sys.stderr)
        return 2
    module, rest = args[1], args[2:]
    data_dir = Path(os.environ.get(DATA_DIR_ENV) or ".")
    import coverage  # noqa: PLC0415  (before the measured code, after our own imports)

    try:
        cov = coverage.Coverage(data_file=str(data_dir / DATA_STEM), data_suffix=True, config_file=True)
    except (coverage.exceptions.CoverageException, ValueError, OSError) as err:
        # a settings file coverage.py cannot read (bytes that are no UTF-8 raise UnicodeDecodeError from inside
        # it): one line, in the shard's output, not a traceback of this launcher's
        where = os.environ.get("COVERAGE_RCFILE") or ".coveragerc, setup.cfg, tox.ini or pyproject.toml"
        print(f"ci-shards: coverage.py cannot read the coverage settings ({where}): {err}", file=sys.stderr)
        return 2
    cov.set_option("run:relative_files", True)
    cov.set_option("run:parallel", True)
    patch = list(cov.get_option("run:patch") or [])  # type: ignore[arg-type]
    if "subprocess" not in patch:
        cov.set_option("run:patch", [*patch, "subprocess"])
    if cov.config.config_file is None:
        # patch=subprocess asserts a config file, though children get the serialized settings
        # (COVERAGE_PROCESS_CONFIG) and never read it: a project without one must still be measured
        cov.config.config_file = ""
    # pytest loads ci_shards as a plugin and wants to import it itself (to rewrite its asserts): left in
    # sys.modules by this launcher's own import, it would warn "Module already imported" in every run
    for name in [n for n in sys.modules if n == "ci_shards" or n.startswith("ci_shards.")]:
        del sys.modules[name]
    sys.argv = [module, *rest]
    code: int | str | None = 0
    cov.start()
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exit_:
        code = exit_.code
    finally:
        cov.stop()
        cov.save()
        # a marker the run stage counts: a subprocess' data file alone must not pass for the main one
        (data_dir / f"{SAVED_STEM}{os.getpid()}").touch()
    if isinstance(code, str):
        print(code, file=sys.stderr)
        return 1
    return int(code or 0)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
