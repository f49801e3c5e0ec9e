"""Cobertura XML (``coverage.xml``) and ``lcov.info`` from a ``CoverageArtifact``: pure, plain data in, text out.

Both come from the same folded data as coverage.json, so Codecov, Coveralls and IDEs see the same
lines. A partial artifact is marked in both: a comment and ``partial`` in the Cobertura root's
attributes, and the lcov test name (``TN:``), so an uploader never passes a slice for the whole.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable
from xml.sax.saxutils import quoteattr

from ci_shards.coverage.artifact import CoverageArtifact, FileCoverage, Totals


def _rate(done: int, whole: int) -> str:
    return f"{done / whole:.4g}" if whole else "1"


def _branch_counts(f: FileCoverage) -> dict[int, tuple[int, int]]:
    """Per source line of a branch: (arcs taken, arcs possible)."""
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for arc in f.branches_executed or ():
        counts[arc[0]][0] += 1
        counts[arc[0]][1] += 1
    for arc in f.branches_missed or ():
        counts[arc[0]][1] += 1
    return {line: (c[0], c[1]) for line, c in counts.items()}


def _line_elements(f: FileCoverage) -> Iterable[str]:
    branches = _branch_counts(f)
    hits = dict.fromkeys(f.missed, 0) | dict.fromkeys(f.executed, 1)
    for line in sorted(hits):
        if line in branches:
            taken, possible = branches[line]
            pct = int(100 * taken / possible) if possible else 100
            yield (
                f'<line number="{line}" hits="{hits[line]}" branch="true" '
                f'condition-coverage="{pct}% ({taken}/{possible})"/>'
            )
        else:
            yield f'<line number="{line}" hits="{hits[line]}"/>'


def cobertura(artifact: CoverageArtifact, *, timestamp_ms: int = 0) -> str:
    """Cobertura 4 XML, one package per directory, as coverage.py writes it."""
    totals = artifact.totals
    packages: dict[str, list[FileCoverage]] = defaultdict(list)
    for f in sorted(artifact.files, key=lambda f: f.path):
        packages[posixpath.dirname(f.path).replace("/", ".") or "."].append(f)
    out = ['<?xml version="1.0" ?>']
    out.append(f"<!-- ci-shards: {_comment(artifact.label)} -->")
    out.append(
        f'<coverage version={quoteattr(artifact.tool_version)} timestamp="{timestamp_ms}" '
        f'lines-valid="{totals.statements}" lines-covered="{totals.executed}" '
        f'line-rate="{_rate(totals.executed, totals.statements)}" '
        f'branches-valid="{totals.branches}" branches-covered="{totals.branches_executed}" '
        f'branch-rate="{_rate(totals.branches_executed, totals.branches)}" complexity="0" '
        f'ci-shards-state="{"complete" if artifact.completeness.complete else "partial"}">'
    )
    out.append("\t<sources>\n\t\t<source>.</source>\n\t</sources>\n\t<packages>")
    for name, files in packages.items():
        t = Totals.of(files)
        out.append(
            f'\t\t<package name={quoteattr(name)} line-rate="{_rate(t.executed, t.statements)}" '
            f'branch-rate="{_rate(t.branches_executed, t.branches)}" complexity="0">\n\t\t\t<classes>'
        )
        for f in files:
            ft = Totals.of([f])
            out.append(
                f"\t\t\t\t<class name={quoteattr(posixpath.basename(f.path))} filename={quoteattr(f.path)} "
                f'complexity="0" line-rate="{_rate(ft.executed, ft.statements)}" '
                f'branch-rate="{_rate(ft.branches_executed, ft.branches)}">\n\t\t\t\t\t<methods/>\n\t\t\t\t\t<lines>'
            )
            out.extend(f"\t\t\t\t\t\t{line}" for line in _line_elements(f))
            out.append("\t\t\t\t\t</lines>\n\t\t\t\t</class>")
        out.append("\t\t\t</classes>\n\t\t</package>")
    out.append("\t</packages>\n</coverage>\n")
    return "\n".join(out)


def _comment(text: str) -> str:
    return text.replace("--", "- -")


def lcov(artifact: CoverageArtifact) -> str:
    """lcov tracefile: SF/FN/FNDA/DA/BRDA records per file."""
    name = "ci_shards" if artifact.completeness.complete else f"ci_shards_partial_{artifact.completeness.counted}_of_"
    name += "" if artifact.completeness.complete else str(artifact.completeness.total)
    out: list[str] = []
    for f in sorted(artifact.files, key=lambda f: f.path):
        out += [f"TN:{name}", f"SF:{f.path}"]
        executed = set(f.executed)
        for fn in f.functions:
            out.append(f"FN:{fn.start},{fn.end},{fn.name}")
        for fn in f.functions:
            hit = any(fn.start <= n <= fn.end for n in executed)
            out.append(f"FNDA:{1 if hit else 0},{fn.name}")
        out.append(f"FNF:{len(f.functions)}")
        out.append(f"FNH:{sum(any(fn.start <= n <= fn.end for n in executed) for fn in f.functions)}")
        for line in sorted(set(f.executed) | set(f.missed)):
            out.append(f"DA:{line},{1 if line in executed else 0}")
        arcs = [(a, 1) for a in f.branches_executed or ()] + [(a, 0) for a in f.branches_missed or ()]
        for number, ((src, _dst), taken) in enumerate(sorted(arcs)):
            count = "1" if taken else ("0" if src in executed else "-")  # "-": the branch line never ran
            out.append(f"BRDA:{src},0,{number},{count}")
        if arcs:
            out += [f"BRF:{len(arcs)}", f"BRH:{sum(t for _a, t in arcs)}"]
        out += [f"LF:{f.statements}", f"LH:{len(f.executed)}", "end_of_record"]
    return "\n".join(out) + ("\n" if out else "")
