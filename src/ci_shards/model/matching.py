"""Which planned item a reported test belongs to: the one matcher (``owning_item``) that run, aggregate
and the pytest plugin all use (docs/rules.md)."""

from __future__ import annotations

from collections.abc import Container, Iterable


def item_file(item: str) -> str:
    """The file an item belongs to: the part before the first ``::``."""
    return item.split("::", 1)[0]


def item_candidates(test_id: str) -> list[str]:
    """Every item that would cover ``test_id``, most specific first (how aggregate decides that a planned item ran).

    ``f.py::C::t[a::b]`` → ``f.py::C::t[a::b]``, ``f.py::C::t``, ``f.py::C``, ``f.py``. The brackets of
    a parametrized id may hold anything, ``::`` and ``[`` included, so they are cut off before the id is
    split into its parts; a ``[`` in the file part (``tests/[x]/t.py``) is part of the path.
    """
    candidates = [test_id]
    sep = test_id.find("::")
    head = test_id
    if sep >= 0:
        bracket = test_id.find("[", sep)
        if bracket > 0:
            head = test_id[:bracket]
            candidates.append(head)
    parts = head.split("::")
    candidates.extend("::".join(parts[:end]) for end in range(len(parts) - 1, 0, -1))
    return list(dict.fromkeys(candidates))


def owning_item(test_id: str, planned: Container[str]) -> str | None:
    """The most specific planned item that covers ``test_id``, or None: the one matcher that run,
    aggregate and the pytest plugin all use to decide that a reported test belongs to a planned item."""
    if test_id in planned:  # the most specific candidate, and a plan by test's every case: no list to build
        return test_id
    for candidate in item_candidates(test_id):
        if candidate in planned:
            return candidate
    return None


def collector_files(ids: Iterable[str], files: Iterable[str]) -> dict[str, str]:
    """{pytest's dotted name of a module collector: the one file of ``files`` it names}. pytest's --junitxml writes a
    module that skipped (``pytest.importorskip``) or failed at collection as ``classname=""`` and the module's
    dotted name (``tests.test_np`` for ``tests/test_np.py``), which no file item covers. An id that names no file,
    or two (``a/b.py`` and ``a.b.py``), is left out, as is every id with a ``::``."""
    by_module: dict[str, list[str]] = {}
    for file in dict.fromkeys(files):
        if file.endswith(".py"):
            by_module.setdefault(dotted_module(file), []).append(file)
    return {i: by_module[i][0] for i in ids if "::" not in i and len(by_module.get(i, ())) == 1}


def dotted_module(file: str) -> str:
    """``tests/test_a.py`` → ``tests.test_a``: how pytest's --junitxml spells a module (its ``classname``, and the
    name of a module collector); "" for a file that is no Python module."""
    return file.removesuffix(".py").replace("/", ".") if file.endswith(".py") else ""


def file_under(file: str, folder: str) -> bool:
    """Whether ``file`` (a POSIX path) is ``folder`` or below it."""
    return file == folder or file.startswith(folder.rstrip("/") + "/")
