"""The files ``ci-shards init`` writes, rendered from ``templates/ci/`` (pure: a ``Setup`` in, texts out).

Every value that came from the project (an install command, test paths, globs, a version) is written as a YAML
scalar that reads back as exactly that string (``yaml_scalar``), and none may hold ``${{``: GitHub evaluates
expressions in ``with:`` values and ``run:`` scripts alike, so a test path could otherwise run code in the
workflow (the script-injection rule action.yml keeps).
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from dataclasses import dataclass
from typing import Final

from ci_shards.common import templating
from ci_shards.common.console import strip_control
from ci_shards.common.errors import UsageError
from ci_shards.init.detect import Ci, Finding, Setup, command_line

WORKFLOW: Final = ".github/workflows/tests.yml"
COMMENT_WORKFLOW: Final = ".github/workflows/ci-shards-comment.yml"
GITLAB: Final = ".gitlab-ci.yml"
# a plain YAML scalar that cannot start a structure, a comment, a tag, an alias or a quoted string
_PLAIN: Final = re.compile(r"[A-Za-z0-9_./~$(][\w ./~$=+,'\"()\[\]<>{}@^*|&;:-]*")
# what YAML 1.1 (PyYAML) or 1.2 would read as a boolean, null or number: 1:20 is sexagesimal 80, 0o17 octal
_AMBIGUOUS: Final = re.compile(
    r"(?i)(true|false|yes|no|y|n|on|off|null|~|[-+]?[\d._]+(e[-+]?\d+)?|[-+]?\d[\d_]*(:[0-5]?\d)+(\.\d*)?"
    r"|[-+]?0[xob][\da-f_]+|[-+]?\.(inf|nan))"
)

_NOT_AS_IS: Final = frozenset({0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF})


@dataclass(frozen=True)
class InitFile:
    path: str  # relative to the repository root
    text: str


def yaml_scalar(value: str, *, always: bool = False) -> str:
    """``value`` as a YAML scalar: plain when it reads back as this string, else JSON-quoted (valid YAML).
    ``always``: quoted even when plain would do (a version such as 3.10 would read back as the number 3.1)."""
    import yaml  # noqa: PLC0415 (here, not at the top: every ci-shards process imports this module, ~20 ms of yaml)

    plain = (
        not always
        and _PLAIN.fullmatch(value) is not None
        and not _AMBIGUOUS.fullmatch(value)
        and ": " not in value
        and " #" not in value
        and not value.endswith((":", " "))
        and yaml.safe_load(f"key: {value}\n") == {"key": value}  # whatever the checks above missed
    )
    return value if plain else _double_quoted(value)


def _double_quoted(value: str) -> str:
    """A YAML double-quoted scalar: ``\\uXXXX`` for every character YAML would not take as it is (controls, line
    separators, surrogates, non-characters; YAML 1.2 §5.1 and §5.4), so it reads back as ``value`` exactly."""
    out = []
    for char in value:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF or code in _NOT_AS_IS:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _inert(setup: Setup) -> None:
    values = [*setup.install, *setup.pytest_args, *setup.globs, setup.python_version, setup.node_version_file]
    for value in values:
        if "${{" in value or "\n" in value:
            msg = f"init: {value!r} would be a GitHub expression or a second line in the workflow; init writes none"
            raise UsageError(msg)


def _one_line(text: str) -> str:
    """Text for a ``#`` comment line of the header: one line, whatever the project's files held."""
    return " ".join(strip_control(text).split())


def _gitlab_commands(setup: Setup) -> dict[str, str]:
    request = setup.request
    args = " ".join(shlex.quote(word) for word in setup.pytest_args)
    tail = f" -- {args}" if args else ""
    plan = ["ci-shards plan", f"--shards {request.shards}"]
    if setup.durations:
        plan.append(f"--durations {shlex.quote(setup.durations)}")
    if request.select_changed:
        plan.append("--select changed")
    workers = [f"--workers {shlex.quote(setup.workers)}"] if setup.workers else []
    plan += workers
    run = ["ci-shards run --plan plan.json --shard auto --timeout 20m --pytest", *workers]
    run += ["--coverage"] * request.coverage
    aggregate = ["ci-shards aggregate --plan plan.json --junit-out merged.xml --summary summary.md"]
    if request.coverage:
        aggregate.append("--coverage-out coverage")
    return {
        "plan_command": " ".join([*plan, "--pytest --output plan.json"]) + tail,
        "run_command": " ".join(run) + tail,
        "aggregate_command": " ".join([*aggregate, "ci-shards-results"]),
    }


def render(setup: Setup) -> tuple[InitFile, ...]:
    """The files for ``setup``: the workflow (or pipeline), and the fork-safe comment workflow when asked for."""
    _inert(setup)
    shown = dataclasses.replace(
        setup,
        findings=tuple(Finding(*map(_one_line, (f.subject, f.value, f.why))) for f in setup.findings),
        notes=tuple(map(_one_line, setup.notes)),
    )
    env = templating.environment("ci")
    env.filters["q"] = yaml_scalar
    context = {"setup": shown, "command": command_line(setup.request)}
    if setup.request.ci is Ci.GITLAB:
        text = env.get_template("gitlab-ci.yml.j2").render(**context, **_gitlab_commands(setup))
        return (InitFile(GITLAB, text),)
    files = [InitFile(WORKFLOW, env.get_template("github.yml.j2").render(**context))]
    if setup.request.comment_workflow:
        files.append(InitFile(COMMENT_WORKFLOW, env.get_template("comment.yml.j2").render(**context)))
    return tuple(files)
