"""From the project's facts and the user's flags to the CI configuration's choices (pure).

Every choice comes with a ``Finding``: what was chosen and why (the file it came from, or the flag), which
``ci-shards init`` prints and the written file repeats in its header. The rules, in order:

- runner: ``--runner``; else pytest settings (pytest.toml, pytest.ini, tox.ini, setup.cfg, pyproject.toml) mean pytest;
  else package.json with jest (a dependency, or its test script) means jest, with ``node --test`` in the test script
  node; else go.mod means go; else a Python project (pyproject.toml, setup.cfg, setup.py, requirements*.txt) pytest;
  else a file pytest's default names collect (``test_*.py``, ``*_test.py``) pytest;
- install (pytest): ``--install``; else the first of the ``test``, ``tests``, ``dev`` extras (pyproject.toml or
  setup.cfg), else of those PEP 735 dependency groups, else of Poetry's groups (or its ``dev-dependencies``),
  installed by Poetry into the job's Python, else the requirements files named for tests or dev (and
  requirements.txt beside them), else pytest alone; an installable project (``[project]``, ``[build-system]``,
  setup.cfg, setup.py) is installed with ``-e .`` too. Node: ``npm ci`` with a lockfile, else ``npm install``;
- Python: ``--python-version``; else ``.python-version``; else the newest known version ``requires-python``
  (or Poetry's ``python`` dependency) allows; else 3.12;
- test paths: pytest's ``testpaths``; timings: ``.test_durations`` when committed; Node test files by jest's and
  ``node --test``'s naming conventions, one glob per folder and suffix.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import PurePosixPath
from typing import Any, Final

from ci_shards.common.errors import UsageError
from ci_shards.common.tables import table_at
from ci_shards.init.facts import LOCKFILES, NODE_TEST_FILE, PYTHON_PROJECT_FILES, REQUIREMENTS_FILE, ProjectFacts
from ci_shards.init.pyversion import allowed_pythons, from_poetry, minor_of
from ci_shards.plan.pytest_args import last_value, maxfail_in, xdist_workers_in
from ci_shards.run.workers import parse_workers

DEFAULT_PYTHON: Final = "3.12"
DEFAULT_NODE: Final = "22"
TEST_EXTRAS: Final = ("test", "tests", "dev")
NODE_VERSION_FILES: Final = (".nvmrc", ".node-version")
NODE_REPORTER: Final = "junit-reporter.mjs"  # the test command of --runner node names it (templates/ci/github.yml.j2)
# pip learned --group (PEP 735 dependency groups) in 25.1
PIP_FOR_GROUPS: Final = "python -m pip install 'pip>=25.1'"
POETRY_SETUP: Final = ("python -m pip install poetry", "poetry config virtualenvs.create false")


class Ci(Enum):
    GITHUB = "github"
    GITLAB = "gitlab"


class Runner(Enum):
    PYTEST = "pytest"
    JEST = "jest"
    NODE = "node"
    GO = "go"


@dataclass(frozen=True, kw_only=True)
class InitRequest:
    """The flags of ``ci-shards init`` (None: detect it)."""

    ci: Ci = Ci.GITHUB
    runner: Runner | None = None
    shards: str = "4"  # a count, or "auto"
    target_seconds: int = 300  # with shards auto: how long the slowest shard may take
    coverage: bool = False
    select_changed: bool = False
    comment_workflow: bool = False
    python_version: str | None = None
    install: str | None = None
    workers: str | None = None  # K or auto: pytest-xdist workers per shard (issue 23), on the plan and run steps


@dataclass(frozen=True)
class Finding:
    subject: str  # "runner", "install", ...
    value: str
    why: str


@dataclass(frozen=True, kw_only=True)
class Setup:
    """Everything the templates render from."""

    request: InitRequest
    runner: Runner
    python_version: str
    install: tuple[str, ...]  # shell commands of the test job, in order
    pytest_args: tuple[str, ...] = ()
    durations: str = ""
    globs: tuple[str, ...] = ()
    node_version: str = DEFAULT_NODE
    node_version_file: str = ""
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()  # what the user still has to do
    workers: str = ""  # pytest-xdist workers per shard, "" for one pytest process (the action's default)


def _deps(package_json: Mapping[str, Any]) -> set[str]:
    names: set[str] = set()
    for key in ("dependencies", "devDependencies"):
        value = package_json.get(key)
        if isinstance(value, dict):
            names.update(value)
    return names


def _test_script(package_json: Mapping[str, Any]) -> str:
    scripts = package_json.get("scripts")
    value = scripts.get("test") if isinstance(scripts, dict) else None
    return value if isinstance(value, str) else ""


def detect_runner(facts: ProjectFacts) -> Finding | None:
    if facts.pytest_source:
        return Finding("runner", "pytest", f"pytest settings in {facts.pytest_source}")
    if facts.package_json:
        script = _test_script(facts.package_json)
        if "jest" in _deps(facts.package_json) or re.search(r"\bjest\b", script):
            return Finding("runner", "jest", "jest in package.json")
        if "node --test" in script:
            return Finding("runner", "node", "node --test in package.json's test script")
    if facts.has_go_mod:
        return Finding("runner", "go", "go.mod")
    python = [name for name in PYTHON_PROJECT_FILES if name in facts.files] + _requirements(facts.files)
    if python:
        return Finding("runner", "pytest", f"a Python project ({python[0]})")
    if facts.pytest_test_file:  # a folder of tests and no project file: what plain `pytest` would run here
        return Finding("runner", "pytest", f"pytest's test files ({facts.pytest_test_file})")
    return None


def _requirements(files: frozenset[str]) -> list[str]:
    """The root's requirements files a test job installs: those named for tests or dev, with requirements.txt
    first when it is there too; else requirements.txt alone."""
    named = sorted(f for f in files if REQUIREMENTS_FILE.fullmatch(f) and re.search("test|dev", f))
    base = ["requirements.txt"] if "requirements.txt" in files else []
    return base + named


def _table(data: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    """The table at ``keys``; a missing one (or a value of another kind) reads as empty: nothing detected there."""
    return table_at(data, *keys) or {}


def _installable(facts: ProjectFacts) -> bool:
    """pip can build it: PEP 621 metadata, a PEP 517 build backend (Poetry's ``[tool.poetry]`` projects name
    poetry-core there), or setuptools' files."""
    return (
        any(_table(facts.pyproject, key) for key in ("project", "build-system"))
        or "setup.py" in facts.files
        or "setup.cfg" in facts.files
    )


_Install = tuple[tuple[str, ...], str]  # the shell commands and why


def _extra_install(facts: ProjectFacts) -> _Install | None:
    pep621 = _table(facts.pyproject, "project", "optional-dependencies")
    extra = next((name for name in TEST_EXTRAS if name in set(pep621) | set(facts.setup_cfg_extras)), None)
    if extra is None or not _installable(facts):
        return None
    where = "pyproject.toml" if extra in pep621 else "setup.cfg"
    return (f"python -m pip install -e '.[{extra}]'",), f"the {extra} extra of {where}"


def _group_install(facts: ProjectFacts) -> _Install | None:
    group = next((name for name in TEST_EXTRAS if name in _table(facts.pyproject, "dependency-groups")), None)
    if group is None:
        return None
    project = " -e ." if _installable(facts) else ""
    return (PIP_FOR_GROUPS, f"python -m pip install{project} --group {group}"), "a PEP 735 dependency group"


def _poetry_install(facts: ProjectFacts) -> _Install | None:
    """Poetry's groups (``[tool.poetry.group.<name>]``, Poetry 1.2+) or its older ``dev-dependencies``: pip
    cannot install either, so Poetry installs them into the job's own Python (no virtualenv of its own, so the
    run step's ``python -m pytest`` sees them; https://python-poetry.org/docs/configuration/)."""
    poetry = _table(facts.pyproject, "tool", "poetry")
    group = next((name for name in TEST_EXTRAS if name in _table(poetry, "group")), None)
    if group is None and "dev-dependencies" not in poetry:
        return None
    with_group = f" --with {group}" if group else ""  # dev-dependencies are installed by default
    why = f"the {group} group of Poetry" if group else "Poetry's dev-dependencies"
    return (*POETRY_SETUP, f"poetry install{with_group}"), why


def _requirements_install(facts: ProjectFacts) -> _Install | None:
    requirements = _requirements(facts.files)
    if not requirements:
        return None
    project = " -e ." if _installable(facts) else ""
    files = " ".join(f"-r {name}" for name in requirements)
    return (f"python -m pip install{project} {files}",), "requirements files"


def python_install(facts: ProjectFacts, *, xdist: bool = False) -> tuple[tuple[str, ...], Finding]:
    """The first rule that finds the project's test dependencies (the module's docstring gives the order);
    ``xdist``: the shards run pytest-xdist, which the fallback installs too."""
    for rule in (_extra_install, _group_install, _poetry_install, _requirements_install):
        found = rule(facts)
        if found is not None:
            commands, why = found
            break
    else:
        project = " -e ." if _installable(facts) else ""
        plugins = settings_plugins(facts.pytest_keys, facts.addopts)
        if xdist and "pytest-xdist" not in plugins.values():
            plugins["--workers"] = "pytest-xdist"
        commands = (" ".join([f"python -m pip install{project} pytest", *sorted(set(plugins.values()))]),)
        named = ", ".join(f"{what} → {package}" for what, package in plugins.items())
        why = "no test extra, dependency group or requirements file found: pytest"
        why += f" and the plugins its settings need ({named}), add yours" if plugins else " only, add yours"
    return commands, Finding("install", " && ".join(commands), why)


# pytest settings and options that only a plugin understands: without it, pytest stops at start-up ("unrecognized
# arguments: --nomigrations", django-extensions 4.1) or ignores the setting (PytestConfigWarning)
PLUGIN_SETTINGS: Final = {
    "DJANGO_SETTINGS_MODULE": "pytest-django", "django_find_project": "pytest-django",
    "asyncio_mode": "pytest-asyncio", "asyncio_default_fixture_loop_scope": "pytest-asyncio",
    "timeout": "pytest-timeout", "timeout_method": "pytest-timeout", "mock_use_standalone_module": "pytest-mock",
    "env": "pytest-env", "reruns": "pytest-rerunfailures", "qt_api": "pytest-qt", "bdd_features_base_dir": "pytest-bdd",
}  # fmt: skip
PLUGIN_OPTIONS: Final = {
    "--cov": "pytest-cov", "--no-cov": "pytest-cov", "-n": "pytest-xdist", "--numprocesses": "pytest-xdist",
    "--dist": "pytest-xdist", "--reruns": "pytest-rerunfailures", "--timeout": "pytest-timeout",
    "--benchmark": "pytest-benchmark", "--ds": "pytest-django", "--nomigrations": "pytest-django",
    "--reuse-db": "pytest-django", "--create-db": "pytest-django", "--randomly": "pytest-randomly",
    "--doctest-plus": "pytest-doctestplus", "--mypy": "pytest-mypy", "--asyncio-mode": "pytest-asyncio",
}  # fmt: skip


def settings_plugins(keys: Sequence[str], addopts: Sequence[str]) -> dict[str, str]:
    """The plugins the pytest settings need, each with the setting or option that names it first."""
    found = {key: PLUGIN_SETTINGS[key] for key in keys if key in PLUGIN_SETTINGS}
    for word in addopts:
        option = word.split("=", 1)[0]
        stem = next((o for o in PLUGIN_OPTIONS if option == o or option.startswith(f"{o}-")), None)
        if stem is None and option.startswith("-n") and not option.startswith("--") and len(option) > 2:
            stem = "-n"  # -n4, -nauto
        if stem is not None and PLUGIN_OPTIONS[stem] not in found.values():
            found[option] = PLUGIN_OPTIONS[stem]
    return found


def python_version(facts: ProjectFacts, request: InitRequest) -> Finding:
    if request.python_version:
        return Finding("python", request.python_version, "--python-version")
    if facts.python_version_file:
        minor = minor_of(facts.python_version_file)
        if minor:
            return Finding("python", minor, f".python-version says {facts.python_version_file}")
    spec, source = _table(facts.pyproject, "project").get("requires-python"), "requires-python"
    poetry_python = _table(facts.pyproject, "tool", "poetry", "dependencies").get("python")
    if not isinstance(spec, str) and isinstance(poetry_python, str):
        spec, source = from_poetry(poetry_python), f"Poetry's python = {poetry_python}, that is"
    if isinstance(spec, str) and spec.strip():
        allowed, unread = allowed_pythons(spec)
        if allowed and not unread:
            return Finding("python", allowed[-1], f"the newest that {source} {spec!s} allows")
    return Finding("python", DEFAULT_PYTHON, "no .python-version or readable requires-python: the default")


def glob_for(path: str) -> str:
    """The glob that finds this test file and its kind where it lives: ``src/a/b.test.ts`` → ``src/**/*.test.ts``."""
    parts = PurePosixPath(path).parts
    top = f"{parts[0]}/**/" if len(parts) > 1 else ""
    name = parts[-1]
    match = NODE_TEST_FILE.search(name)
    if match is None:  # a file under __tests__/
        return f"{top}__tests__/**/*{PurePosixPath(name).suffix}"
    marker = match.group(0)
    if marker == name:  # test-parse.mjs, test_x.js: the prefix form
        return f"{top}{name[:5]}*{PurePosixPath(name).suffix}"
    return f"{top}*{marker}"


def node_setup(facts: ProjectFacts) -> tuple[tuple[str, ...], tuple[str, ...], Finding, Finding]:
    lock = next((name for name in LOCKFILES if name in facts.files), None)
    install = ("npm ci",) if lock else ("npm install",)
    found = Finding("install", install[0], lock or "no package-lock.json")
    globs = tuple(sorted({glob_for(path) for path in facts.node_test_files}))
    where = Finding("tests", " ".join(globs) or "none", f"{len(facts.node_test_files)} test files by name")
    return install, globs, found, where


def check_request(request: InitRequest, runner: Runner) -> None:
    if request.shards != "auto" and not (request.shards.isdigit() and int(request.shards) >= 1):
        msg = f"--shards: expected a count of at least 1 or auto, got {request.shards!r}"
        raise UsageError(msg)
    if request.target_seconds < 1 or (
        request.target_seconds != InitRequest().target_seconds and request.shards != "auto"
    ):
        msg = f"--target-seconds {request.target_seconds}: it sizes --shards auto, and must be at least 1"
        raise UsageError(msg)
    if request.ci is Ci.GITLAB:
        if request.shards == "auto":
            msg = "--shards auto needs GitHub's dynamic matrix; GitLab's parallel: is a fixed count (give --shards N)"
            raise UsageError(msg)
        if request.comment_workflow:
            msg = "--comment-workflow is GitHub's fork-safe workflow_run recipe; GitLab has no such workflow"
            raise UsageError(msg)
        if runner is not Runner.PYTEST:
            msg = f"--ci gitlab writes pytest pipelines only so far; for {runner.value} see docs/other-ci.md"
            raise UsageError(msg)
    if request.workers is not None:
        parse_workers(request.workers)  # K ≥ 1 or auto: a UsageError naming --workers otherwise
        if runner is not Runner.PYTEST:
            msg = f"--workers runs each shard's pytest under pytest-xdist; {runner.value} shards run as their command"
            raise UsageError(msg)
    if request.coverage and runner is Runner.GO:
        msg = "--coverage measures Python (coverage.py) and Node (V8) shards, not go test"
        raise UsageError(msg)


def decide(facts: ProjectFacts, request: InitRequest) -> Setup:
    """The choices for ``facts`` under ``request``; a request that cannot be met is a ``UsageError``."""
    found = Finding("runner", request.runner.value, "--runner") if request.runner else detect_runner(facts)
    if found is None:
        msg = "cannot tell the test runner: no pytest settings, package.json, go.mod, Python project or test_*.py "
        msg += "here; give --runner"
        raise UsageError(msg)
    runner = Runner(found.value)
    check_request(request, runner)
    findings = [found, _shards_finding(request)]
    setup = (
        _pytest_setup(facts, request, findings)
        if runner is Runner.PYTEST
        else _other_setup(facts, request, runner, findings)
    )
    if facts.repository_root:
        where = f"this folder is inside the repository at {facts.repository_root}: CI reads its configuration "
        setup = dataclasses.replace(setup, notes=(*setup.notes, where + "only at the root"))
    return setup


def _shards_finding(request: InitRequest) -> Finding:
    default = InitRequest()
    if request.shards == "auto":
        why = f"--shards auto: as many as it takes for {request.target_seconds} s each"
        return Finding("shards", "auto", why)
    return Finding("shards", request.shards, "the default" if request.shards == default.shards else "--shards")


def _pytest_setup(facts: ProjectFacts, request: InitRequest, findings: list[Finding]) -> Setup:
    workers = _workers(facts, request)
    install, how = python_install(facts, xdist=workers is not None)
    if request.install:
        install, how = (request.install,), Finding("install", request.install, "--install")
    version = python_version(facts, request)
    findings += [how, version, *([workers] if workers else [])]
    if facts.testpaths:
        findings.append(Finding("tests", " ".join(facts.testpaths), f"testpaths in {facts.pytest_source}"))
    durations = ".test_durations" if ".test_durations" in facts.files else ""
    if durations:
        findings.append(Finding("timings", durations, "used until the cache holds measured timings"))
    return Setup(
        request=request,
        runner=Runner.PYTEST,
        python_version=version.value,
        install=install,
        pytest_args=facts.testpaths,
        durations=durations,
        findings=tuple(findings),
        notes=addopts_notes(facts.addopts, facts.pytest_source, request.ci, coverage_gate=facts.coverage_gate)
        + _xdist_note(install, workers),
        workers=workers.value if workers else "",
    )


def _workers(facts: ProjectFacts, request: InitRequest) -> Finding | None:
    """pytest-xdist workers per shard: ``--workers``, else the ``-n`` of the project's addopts (its shards would
    run that many anyway, and a plan for one worker misprices them: run says so), else none (one process)."""
    if request.workers is not None:
        return Finding("workers", request.workers, "--workers: pytest-xdist in each shard, planned for them")
    given = xdist_workers_in(facts.addopts)
    if given:
        return Finding("workers", given, f"-n {given} in addopts in {facts.pytest_source}: planned for them")
    return None


def _xdist_note(install: Sequence[str], workers: Finding | None) -> tuple[str, ...]:
    """--workers over an install init did not write (an extra, a group, requirements: they may lack it)."""
    if workers is None or not workers.why.startswith("--workers") or any("pytest-xdist" in c for c in install):
        return ()
    return (f"the shards run pytest-xdist ({workers.value} workers): have pytest-xdist in your test dependencies",)


def addopts_notes(
    addopts: Sequence[str], source: str, ci: Ci, *, coverage_gate: tuple[str, str] = ("", "")
) -> tuple[str, ...]:
    """What in the project's addopts works unsharded and not per shard, with the words that undo it for the
    shards (pytest keeps an option's last value, and the shards' own words come after addopts). arrow 1.4.0's
    --cov-fail-under=99 failed every shard (docs/coverage.md); -x stops each shard at its first failure;
    ``coverage_gate``, coverage.py's own fail_under (facts.coverage_gate), is the gate pytest-cov applies when
    addopts turn it on and give no --cov-fail-under (propcache 0.5.4's .coveragerc, conformance run 10)."""
    notes = []
    words = "pytest-args" if ci is Ci.GITHUB else "the test job's pytest words (after `--`)"
    stop = maxfail_in(addopts)
    if stop:
        notes.append(
            f"addopts in {source} stop pytest after failures ({stop}): each shard would stop at its own and report"
            f" its other tests as never run; add --maxfail=0 to {words} to run every test"
        )
    gate = last_value(addopts, "--cov-fail-under")
    if gate and gate.strip() not in ("0", "0.0"):
        notes.append(
            f"addopts in {source} gate coverage at {gate}% (--cov-fail-under): each shard covers only its own"
            f" tests' code and would fail it; add --cov-fail-under=0 to {words} and gate the merged coverage"
            " (docs/coverage.md)"
        )
    elif not gate and _gates(coverage_gate[1]) and _covers(addopts):  # pytest-cov's option, even 0, wins
        notes.append(
            f"{coverage_gate[0]} gates coverage at {coverage_gate[1]}% (fail_under), which pytest-cov applies with"
            f" --cov in addopts in {source}: each shard covers only its own tests' code and would fail it; add"
            f" --cov-fail-under=0 to {words} and gate the merged coverage (docs/coverage.md)"
        )
    return tuple(notes)


def _gates(value: str) -> bool:
    """Whether a fail_under value asks for any coverage (coverage.py reads it as a float; 0 is no gate)."""
    try:
        return float(value) > 0
    except ValueError:
        return False


def _covers(addopts: Sequence[str]) -> bool:
    """Whether addopts turn pytest-cov on (``--cov``, ``--cov=SOURCE``) without ``--no-cov``, which turns it off
    wherever it stands."""
    return any(w == "--cov" or w.startswith("--cov=") for w in addopts) and "--no-cov" not in addopts


def _other_setup(facts: ProjectFacts, request: InitRequest, runner: Runner, findings: list[Finding]) -> Setup:
    notes: list[str] = []
    if runner is Runner.GO:
        return Setup(
            request=request, runner=runner, python_version=DEFAULT_PYTHON, install=(), findings=tuple(findings)
        )
    install, globs, how, where = node_setup(facts)
    if request.install:
        install, how = (request.install,), Finding("install", request.install, "--install")
    if not globs:
        globs = ("src/**/*.test.js",)
        notes.append(f"no test files found by name: the plan globs {globs[0]}; edit the glob: input")
    if runner is Runner.NODE and NODE_REPORTER not in facts.files:
        notes.append(
            f"add {NODE_REPORTER} (examples/node/ of ci-shards) at the root: node's junit reporter names no files"
        )
    if runner is Runner.JEST and facts.package_json and "jest-junit" not in _deps(facts.package_json):
        notes.append(
            "jest-junit is not in package.json: npm install --save-dev jest-junit (JUnit is how ci-shards counts tests)"
        )
    version_file = next((name for name in NODE_VERSION_FILES if name in facts.files), "")
    findings += [how, where, Finding("node", version_file or DEFAULT_NODE, version_file or "the default")]
    return Setup(
        request=request,
        runner=runner,
        python_version=DEFAULT_PYTHON,
        install=install,
        globs=globs,
        node_version_file=version_file,
        findings=tuple(findings),
        notes=tuple(notes),
    )


def command_line(request: InitRequest) -> str:
    """The ``ci-shards init`` command that asks for ``request`` (its flags that differ from the defaults)."""
    words = ["ci-shards", "init"]
    default = InitRequest()
    pairs: Sequence[tuple[str, object, object]] = (
        ("--ci", request.ci.value, default.ci.value),
        ("--runner", request.runner.value if request.runner else None, None),
        ("--shards", request.shards, default.shards),
        ("--target-seconds", request.target_seconds, default.target_seconds),
        ("--python-version", request.python_version, None),
        ("--workers", request.workers, None),
    )
    words += [f"{flag} {value}" for flag, value, usual in pairs if value != usual]
    words += [
        flag for flag, on in (("--coverage", request.coverage), ("--comment-workflow", request.comment_workflow)) if on
    ]
    if request.select_changed:
        words.append("--select changed")
    if request.install:
        words.append(f"--install {_shell_quote(request.install)}")
    return " ".join(words)


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
