"""examples/workflows/ are ``ci-shards init``'s output: each is rendered again here, in a small project with the
files its header names, and must match byte for byte (``CI_SHARDS_REGEN_GOLDEN=1`` rewrites them, as for every
golden file). check-jsonschema validates every file init writes (tests/unit/gha/test_action_yml.py validates the
examples themselves, with the other workflows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_shards.cli import build_parser
from ci_shards.commands.init import request_from
from ci_shards.init import plan_init
from tests.unit.gha.test_action_yml import schema_check
from tests.unit.golden import check_golden

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"
PYTEST_PROJECT = {
    "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    ".test_durations": "{}\n",
    "tests/test_a.py": "def test_a():\n    pass\n",
}
JEST_PROJECT = {
    "package.json": '{"devDependencies": {"jest": "^29", "jest-junit": "^16"}}\n',
    "package-lock.json": "{}\n",
    "src/sum.test.ts": "",
    "src/ui/button.test.tsx": "",
}
NODE_PROJECT = {
    "package.json": '{"scripts": {"test": "node --test"}}\n',
    "package-lock.json": "{}\n",
    "junit-reporter.mjs": "",
    "test/parse.test.mjs": "",
    "test/format.test.mjs": "",
}
# example (relative to examples/) -> (init's flags, the project's files, which of init's files it is)
CASES: dict[str, tuple[list[str], dict[str, str], str]] = {
    "workflows/pytest.yml": ([], PYTEST_PROJECT, ".github/workflows/tests.yml"),
    "workflows/jest.yml": (["--shards", "auto"], JEST_PROJECT, ".github/workflows/tests.yml"),
    "workflows/go.yml": (
        ["--shards", "6"],
        {"go.mod": "module example.com/m\n\ngo 1.22\n"},
        ".github/workflows/tests.yml",
    ),
    "workflows/node.yml": (["--shards", "3"], NODE_PROJECT, ".github/workflows/tests.yml"),
    "workflows/comment.yml": (["--comment-workflow"], PYTEST_PROJECT, ".github/workflows/ci-shards-comment.yml"),
    "gitlab/.gitlab-ci.yml": (["--ci", "gitlab"], PYTEST_PROJECT, ".gitlab-ci.yml"),
}
SCHEMAS = {".gitlab-ci.yml": "vendor.gitlab-ci"}


def write_project(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def rendered(flags: list[str], project: Path) -> dict[str, str]:
    args = build_parser().parse_args(["init", *flags])
    return {f.path: f.text for f in plan_init(request_from(args), project).files}


@pytest.mark.parametrize("example", sorted(CASES))
def test_the_example_is_what_init_writes(example: str, tmp_path: Path) -> None:
    flags, files, written = CASES[example]
    check_golden(EXAMPLES / example, rendered(flags, write_project(tmp_path, files))[written])


@pytest.mark.parametrize("example", sorted(CASES))
def test_what_init_writes_is_schema_valid(example: str, tmp_path: Path) -> None:
    flags, files, _ = CASES[example]
    for path, text in rendered(flags, write_project(tmp_path / "project", files)).items():
        target = tmp_path / Path(path).name
        target.write_text(text)
        code, output = schema_check(SCHEMAS.get(Path(path).name, "vendor.github-workflows"), target)
        assert code == 0, f"{path}: {output}"


def test_every_example_workflow_is_rendered() -> None:
    found = {p.relative_to(EXAMPLES).as_posix() for p in (EXAMPLES / "workflows").glob("*.yml")}
    assert found <= set(CASES)
