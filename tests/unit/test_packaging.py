"""What the wheel holds: pyproject.toml lists every package under src/ci_shards and every folder of templates/
(it cannot find them: templates/ is mapped into the package from the top level), its package data covers every
template, and no template is left under src/ (tests/e2e/test_wheel.py installs a built wheel and renders)."""

from __future__ import annotations

from pathlib import Path

from ci_shards.common import toml_text

REPO = Path(__file__).resolve().parents[2]


def _setuptools() -> dict[str, object]:
    config: dict[str, object] = toml_text.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    return config


def test_every_package_and_template_folder_is_listed() -> None:
    src = REPO / "src"
    packages = {p.parent.relative_to(src).as_posix().replace("/", ".") for p in src.rglob("__init__.py")}
    templates = {
        ".".join(("ci_shards", "templates", *d.relative_to(REPO / "templates").parts))
        for d in [REPO / "templates", *(p for p in (REPO / "templates").rglob("*") if p.is_dir())]
        if d.name != "__pycache__"
    }
    assert sorted(_setuptools()["packages"]) == sorted(packages | templates)  # type: ignore[call-overload]


def test_package_data_covers_every_template() -> None:
    data = _setuptools()["package-data"]
    assert isinstance(data, dict)
    for template in (REPO / "templates").rglob("*.j2"):
        package = ".".join(("ci_shards", *template.parent.relative_to(REPO).parts))
        assert "*.j2" in data.get(package, []), f"{template.relative_to(REPO)} is not package data"


def test_no_template_is_left_under_src() -> None:
    assert sorted(str(p.relative_to(REPO)) for p in (REPO / "src").rglob("*.j2")) == []
    assert (REPO / "templates" / "report" / "verdict.md.j2").is_file()
