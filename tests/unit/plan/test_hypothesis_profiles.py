"""The examples a project's hypothesis profile sets, read from its conftest.py files (never imported)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ci_shards.plan.discover import discover_items
from ci_shards.plan.first_weights import read_units
from ci_shards.plan.hypothesis_profiles import ProfileReader, Profiles, default_examples, profiles_in
from ci_shards.plan.static_count import EXAMPLE_TESTS, HYPOTHESIS_EXAMPLES


def _profiles(source: str) -> Profiles:
    return profiles_in(textwrap.dedent(source))


def test_registered_and_loaded_profiles():
    found = _profiles(
        """
        import os
        from datetime import timedelta
        from hypothesis import HealthCheck, settings

        settings.register_profile("ci", max_examples=1000)
        settings.register_profile("dev", settings(max_examples=10))        # through a parent
        settings.register_profile("nested", parent=settings(max_examples=25), deadline=None)
        settings.register_profile("patience", deadline=timedelta(milliseconds=400))  # attrs: no max_examples
        settings.register_profile(NAME, max_examples=5)                  # a name the text does not give
        settings.register_profile("bad", max_examples=0)
        settings.load_profile(os.getenv("HYPOTHESIS_PROFILE", "dev"))
        """
    )
    assert found == Profiles({"ci": 1000, "dev": 10, "nested": 25}, loaded="dev")


@pytest.mark.parametrize(
    ("conftests", "chosen", "expected"),
    [
        ([Profiles({"ci": 1000}, "ci")], "", 1000),
        ([Profiles({"ci": 1000}, "ci")], "dev", None),  # --hypothesis-profile names one without max_examples
        ([Profiles({"ci": 1000, "dev": 5}, "ci")], "dev", 5),
        ([Profiles({"ci": 1000}, "ci"), Profiles({}, "patience")], "", None),  # the nearest load wins
        ([Profiles({"ci": 1000}), Profiles({}, "ci")], "", 1000),  # registered above, loaded below
        ([Profiles({}, "patience")], "", None),
        ([], "", None),
    ],
)
def test_the_default_examples(conftests: list[Profiles], chosen: str, expected: int | None):
    assert default_examples(conftests, chosen) == expected


def test_discovery_prices_given_tests_at_the_loaded_profile(tmp_path: Path):
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    (tmp_path / "tests" / "deep").mkdir(parents=True)
    (tmp_path / "tests" / "conftest.py").write_text(
        "from hypothesis import settings\nsettings.register_profile('ci', max_examples=10)\n"
        "settings.register_profile('many', max_examples=500)\nsettings.load_profile('ci')\n"
    )
    given = "from hypothesis import given, settings, strategies as st\n@given(st.integers())\ndef test_g(x): pass\n"
    given += "@settings(max_examples=3)\n@given(st.integers())\ndef test_own(x): pass\n"
    (tmp_path / "tests" / "test_a.py").write_text(given)
    (tmp_path / "tests" / "deep" / "test_b.py").write_text(given)
    found, _notes = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=[], globs=(), timings={})
    per_file = {f: sum(v for k, v in found.estimates.items() if k.startswith(f)) for f in found.new_files}
    assert per_file == {"tests/deep/test_b.py": 13 * EXAMPLE_TESTS, "tests/test_a.py": 13 * EXAMPLE_TESTS}
    chosen, _notes = discover_items(
        cwd=tmp_path, pytest_files=True, pytest_args=["--hypothesis-profile", "many"], globs=(), timings={}
    )
    assert sum(chosen.estimates.values()) == 2 * (500 + 3) * EXAMPLE_TESTS
    (tmp_path / "tests" / "conftest.py").write_text("def broken(:\n")  # pytest will say why; the count does not stop
    default, _notes = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=[], globs=(), timings={})
    assert sum(default.estimates.values()) == 2 * (HYPOTHESIS_EXAMPLES + 3) * EXAMPLE_TESTS


def test_the_reader_stops_at_the_rootdir(tmp_path: Path):
    (tmp_path / "conftest.py").write_text(
        "from hypothesis import settings\nsettings.register_profile('x', max_examples=7)\n"
    )
    (tmp_path / "root" / "tests").mkdir(parents=True)
    (tmp_path / "root" / "conftest.py").write_text("from hypothesis import settings\nsettings.load_profile('x')\n")
    assert ProfileReader(tmp_path / "root").examples(tmp_path / "root" / "tests") is None  # 'x' is above it
    assert ProfileReader(tmp_path).examples(tmp_path / "root" / "tests") == 7
    assert ProfileReader(tmp_path / "root").examples(tmp_path / "elsewhere") is None


def test_collection_weighs_given_tests_at_the_same_profile(tmp_path: Path):
    (tmp_path / "conftest.py").write_text(
        "from hypothesis import settings\nsettings.register_profile('ci', max_examples=10)\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text("from hypothesis import settings\nsettings.load_profile('ci')\n")
    test = tmp_path / "tests" / "test_a.py"
    test.write_text("from hypothesis import given, strategies as st\n@given(st.integers())\ndef test_g(x): pass\n")
    units_of = read_units({"tests/test_a.py": str(test)}, ProfileReader(tmp_path))
    assert units_of("tests/test_a.py") == {"test_g": 10 * EXAMPLE_TESTS}
    assert read_units({"tests/test_a.py": str(test)})("tests/test_a.py") == {
        "test_g": HYPOTHESIS_EXAMPLES * EXAMPLE_TESTS
    }
