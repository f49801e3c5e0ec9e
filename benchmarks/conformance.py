"""Conformance on real suites: does ci-shards run exactly what plain ``python -m pytest`` runs?

    .venv/bin/python benchmarks/conformance.py --work /tmp/conf26            # every project
    .venv/bin/python benchmarks/conformance.py --work /tmp/conf26 --only attrs,boltons

Each project lives in its own venv under ``--work`` (``venvs/<name>``: pytest, the project's test
dependencies, the project and ci-shards installed; the sdists unpacked under ``sdists/``; the setup
commands are in docs/benchmarks.md). For each project: plain ``python -m pytest ARGS`` once, with
``conformance_recorder`` counting every report in pytest's own words; then ``ci-shards local --shards 4``
in every mode a user meets: ``--discover`` and ``--pytest``, without timings (writing
``--timings-out``) and then with the timings of that previous sharded run, from the project root
and, for a ``--pyargs`` suite, from a neutral folder. Each ci-shards run is read back from its shard
folders' ``junit.xml`` (the ids and outcomes aggregate accounts) and compared with plain pytest's:
the multiset of test ids and the count per outcome (passed, failed, error, skipped, xfailed,
xpassed), per test; a collector's skip (a module or a folder's conftest.py skipping at collection) is
one skipped test, as pytest's summary line and its --junitxml count it (before session 15 it was no test
on either side: ci-shards did not count it). Prints a Markdown table with date,
machine and load for docs/benchmarks.md, and the first differing ids of every mismatch. Run 2 added
six projects (``--only pygments,click,babel,parso,marshmallow,pint``; setup in docs/benchmarks.md), run 3 six more
(``--only faker,jsonschema,trio,jaraco_functools,inflect,sqlalchemy``), run 4 eleven more
(the projects after sqlalchemy in ``PROJECTS``, with ``--work /tmp/disc9``), run 5 seven more (``--only
pyparsing,pyyaml,pyyaml_sub,natsort,starlette,aiofiles,coverage --work /tmp/conf5``; pyyaml_sub is pyyaml's
suite run from its tests/ folder, in pyyaml's venv), run 6 six more (``--only sqlparse,sqlparse_sub,tomlkit,
dateutil,dateutil_above,markdown,wrapt,wrapt_sub,execnet,execnet_doc,execnet_doc_k --work /tmp/conf6``; the
``_sub``, ``_above`` and ``_doc`` entries run a project's suite from another folder, in its venv), run 7 seven
more (``--only humanize,astroid,mpmath,mpmath_mods,black,anyio,jedi,
zope_interface --work /tmp/conf7``; mpmath_mods is a second --pyargs run of mpmath's modules, in its venv), run 8
seven more, suites made or steered by pytest plugins (``--only pytest_cases,syrupy,pyrsistent,pyrsistent_repeat,
pytest_dependency,pytest_order,bdd_demo --work /tmp/conf8``; bdd_demo is benchmarks/bdd_demo copied to
``sdists/bdd-demo``). Since run 8 the exit codes are compared too: a verdict that fails where plain pytest passes (or
the reverse) is a mismatch even when every test's outcome is the same. Run 9 seven more, pytest-asyncio,
pytest-rerunfailures, pytest-randomly, pytest-timeout, doctest globs, unittest, ``pytest_plugins`` and -k/-m
(``--only asgiref,asgiref_k,asgiref_none,typing_extensions,pyhamcrest,parse,multidict,sphinx --work /tmp/conf9``;
asgiref_k and asgiref_none are asgiref's suite under a -k, in its venv). Run 10 six more, pytest-xdist in addopts, a
coverage gate in .coveragerc, pytester-heavy plugin suites, tests in an installed numpy (``--only yarl,propcache,
propcache_sub,pytest_mock,pytest_asyncio,numpy,numpy_ids --work /tmp/conf10``; propcache_sub is propcache's suite
from its tests/ folder, numpy_ids numpy's under --pyargs of node ids, each in its project's venv). Run 11 six
more, pytest-relaxed's spec modules, pytest 9's native [tool.pytest] table, pytest-regressions, a C extension,
pytest-django (``--only invoke,hpack,hpack_sub,markdown_it,markupsafe,django_filter,tqdm --work /tmp/conf11``;
hpack_sub is hpack's suite from its tests/ folder, in its venv); hpack and markdown_it also with ``--workers 2``. Run
12 six more, a conftest's collect_ignore computed from the optional packages installed, under --doctest-modules from
the sdist and by --pyargs, no pytest settings, tests in a package's _tests folder, collect_ignore_glob by the Python
version, setup.cfg's [tool:pytest] (``--only networkx_src,networkx_pyargs,h11,wsproto,exceptiongroup,sniffio,outcome
--work /tmp/conf12``; networkx_pyargs is networkx's suite by --pyargs from a neutral folder, in its venv);
networkx_src, h11, wsproto and exceptiongroup also with ``--workers 2``. Run 13 (``--ci``) runs the stages as a CI
does, ``plan``, each shard's ``run`` and ``aggregate`` one after another, instead of ``local``: since session 22 a
first plan deals its files over the shards, which only that path does (``local``'s shards share one working tree).
Run 14 seven more, with ``--ci`` and again with ``--ci --workers 2`` (``--only chardet,jmespath,iniconfig,six,idna,
charset_normalizer,packaging_all --work /tmp/conf14``; packaging_all is packaging's whole suite, 64,207 tests, in its
venv).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ci_shards.junit import parse_junit
from ci_shards.model.outcome import CaseResult, Totals

HERE = Path(__file__).resolve().parent
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


@dataclass(frozen=True)
class Project:
    name: str
    shape: str  # what it exercises, for the table
    source: str  # the folder under sdists/ that is the project root ("" for an installed package only)
    args: tuple[str, ...]  # the user's pytest arguments from the project root
    pyargs: tuple[str, ...] = ()  # tests inside the installed package: these arguments from a neutral folder
    venv: str = ""  # the venv under venvs/ when not the one named like the project (a second folder of one project)
    # plain pytest's own flags: the cache off, so no earlier run's .pytest_cache orders this one; kept on for a
    # project whose addopts need it (coverage.py's --failed-first is unknown to pytest without the cacheprovider)
    plain_flags: tuple[str, ...] = ("-p", "no:cacheprovider")


PROJECTS = (
    Project("attrs", "src layout, computed collect_ignore, hypothesis, xdist installed", "attrs-26.1.0", ("tests",)),
    Project(
        "packaging",
        "src layout, parametrized ids with [ ], escaped unicode and tabs; --ignore",
        "packaging-26.4",
        # its two largest files (51,524 and 5,417 of 64,207 tests) left out: the campaign runs in minutes
        ("tests", "--ignore=tests/test_version.py", "--ignore=tests/test_requirements.py"),
    ),
    Project("jinja2", "src layout, testpaths, filterwarnings=error", "jinja2-3.1.6", ()),
    Project("more_itertools", "flat layout, unittest TestCase with subTest", "more_itertools-11.2.1", ("tests",)),
    Project("boltons", "flat layout, --doctest-modules", "boltons-26.2.0", ("--doctest-modules", "boltons", "tests")),
    Project(
        "toolz",
        "tests inside the package (testpaths), also --pyargs from a neutral folder",
        "toolz-1.2.0",
        (),
        pyargs=("--pyargs", "toolz"),
    ),
    Project(
        "networkx",
        "tests inside the installed package, --pyargs of sub-packages",
        "",
        (),
        pyargs=("--pyargs", "networkx.algorithms.approximation", "networkx.algorithms.flow", "networkx.readwrite"),
    ),
    # run 2: shapes the seven above do not have
    Project(
        "pygments",
        'conftest pytest_collect_file makes .txt snippet and example files tests, items named "" (x.txt::)',
        "pygments-2.21.0",
        ("tests",),
    ),
    Project(
        "click",
        "src layout, testpaths, addopts -m 'not stress' deselects 31,000 parametrized cases",
        "click-8.5.1",
        (),
    ),
    Project(
        "babel",
        "root conftest pytest_collect_file makes the package's .py files doctest modules; "
        "pytest_generate_tests over all locales; package-scoped parametrized fixture",
        "babel-2.19.0",
        ("babel", "tests"),
    ),
    Project(
        "parso",
        "testpaths of the package and test/, addopts --doctest-modules, usefixtures, root conftest "
        "pytest_generate_tests over data files",
        "parso-0.8.7",
        (),
    ),
    Project("marshmallow", "src layout, parametrized ids, a norecursedirs path", "marshmallow-4.4.0", ("tests",)),
    Project(
        "pint",
        "tests inside the package as a folder path, addopts --import-mode=importlib, xfail_strict, pythonpath; "
        "--ignore of its benchmarks/ (pytest-benchmark's fixture)",
        "pint-0.25.3",
        ("pint/testsuite", "--ignore=pint/testsuite/benchmarks"),
    ),
    # run 3: shapes the thirteen above do not have
    Project(
        "faker",
        "python_files = tests/*.py (a pattern with a folder), addopts --verbose, the project's own pytest11 plugin "
        "(its faker fixture), a conftest per provider folder",
        "faker-40.63.0",
        (),
    ),
    Project(
        "jsonschema",
        "tests inside the package given as a folder, unittest TestCases built in loops from JSON files at import "
        "(ids from their descriptions), no pytest settings at all",
        "jsonschema-4.26.0",
        ("jsonschema",),
    ),
    Project(
        "trio",
        "tests inside the package (src/trio/_tests, _core/_tests); addopts -p of a plugin module inside the package, "
        "--import-mode=importlib, --strict-config, filterwarnings=error, xfail_strict; from a neutral folder the "
        "plugin given by hand, as trio's ci.sh does",
        "trio-0.35.0",
        ("src/trio",),
        pyargs=("-p", "trio._tests.pytest_plugin", "--pyargs", "trio"),
    ),
    # jaraco's project skeleton, as hundreds of PyPI projects have it
    Project(
        "jaraco_functools",
        "a namespace package (jaraco/, no __init__.py) with consider_namespace_packages, addopts --doctest-modules "
        "--import-mode importlib, a test module and conftest.py at the root, docs/conf.py",
        "jaraco_functools-4.6.0",
        (),
    ),
    Project(
        "inflect",
        "the same skeleton around a regular package: doctests of the package beside tests/, xfail cases",
        "inflect-7.6.0",
        (),
    ),
    Project(
        "sqlalchemy",
        "its own pytest plugin loaded by test/conftest.py (pytest_plugins), classes generated per backend in "
        "pytest_pycollect_makeitem, addopts -p warnings -p logging --maxfail=250; its test/base folder",
        "sqlalchemy-2.1.9",
        ("test/base",),
    ),
    # run 4 (the venvs and sdists of issue 25's disc9 campaign: docs/benchmarks.md, "Run 9")
    Project(
        "arrow",
        "addopts with pytest-cov (--cov-fail-under=99) and its own --junitxml=junit.xml",
        "arrow-1.4.0",
        ("tests",),
    ),
    Project("cattrs", "src layout, hypothesis, collect_ignore by the Python version", "cattrs-26.2.1", ("tests",)),
    Project("freezegun", "flat layout, unittest and pytest tests mixed", "freezegun-1.5.5", ("tests",)),
    Project("icalendar", "tests inside the package (src/icalendar/tests), hypothesis", "icalendar-7.3.2", ()),
    Project("pluggy", "testpaths = testing, pytest-benchmark", "pluggy-1.7.0", ()),
    Project("structlog", "--import-mode=importlib, --strict-config, pytest-asyncio", "structlog-26.1.0", ("tests",)),
    Project("typeguard", "an import hook a conftest installs (instrumented modules)", "typeguard-4.6.1", ("tests",)),
    Project("werkzeug", "src layout, servers started by fixtures, pytest-timeout", "werkzeug-3.1.9", ("tests",)),
    Project("wcwidth", "testpaths of a test folder and the package, optional C extension", "wcwidth-0.9.4", ()),
    Project("simplejson", "tests inside the package, unittest", "simplejson-4.3.0", ("simplejson/tests",)),
    Project("tenacity", "asyncio, tornado and trio tests", "tenacity-9.2.1", ("tests",)),
    Project(
        "pyparsing",
        "unittest TestCase with self.subTest (2,107 subtest reports), two test folders",
        "pyparsing-3.3.3",
        ("tests", "examples/tiny/tests"),
    ),
    Project(
        "pyyaml",
        "conftest pytest_pycollect_makeitem: a collector per test function, an item per data set located at its data "
        "file; pytest_ignore_collect leaves two modules of many",
        "pyyaml-6.0.4",
        ("tests",),
    ),
    Project(
        "pyyaml_sub",
        "the same suite run from its tests/ folder (rootdir the project root, by its pyproject.toml)",
        "pyyaml-6.0.4/tests",
        (),
        venv="pyyaml",
    ),
    Project(
        "natsort",
        "rst files named on the command line (doctests), hypothesis; pytest-randomly and pytest-rerunfailures "
        "installed, --reruns 2; no en_US locale here, so 59 errors, each rerun",
        "natsort-8.4.0",
        ("README.rst", "docs/examples.rst", "tests", "--reruns", "2"),
    ),
    Project(
        "starlette",
        "anyio's pytest plugin, tests parametrized [asyncio]/[trio], filterwarnings=error, strict",
        "starlette-1.10.0",
        ("tests",),
    ),
    Project("aiofiles", "pytest-asyncio, asyncio_mode = auto", "aiofiles-25.1.0", ("tests",)),
    Project(
        "coverage",
        "[tool.pytest] (pytest 9's own table): addopts -n auto --dist loadgroup, --failed-first, flaky; "
        "python_classes *Test; a C extension; 11 of its test files",
        "coverage-7.18.0",
        tuple(
            f"tests/test_{name}.py"
            for name in [
                "numbits",
                "results",
                "templite",
                "parser",
                "html",
                "arcs",
                "api",
                "config",
                "data",
                "xml",
                "coverage",
            ]
        ),
        plain_flags=(),
    ),
    # run 6
    Project(
        "sqlparse",
        "parametrized ids of SQL text: spaces, quotes, brackets, backslashes, newlines and '::' inside [ ]",
        "sqlparse-0.6.1",
        ("tests",),
    ),
    Project(
        "sqlparse_sub",
        "the same suite run from its tests/ folder (the rootdir the project root, by its pyproject.toml without a "
        "pytest table)",
        "sqlparse-0.6.1/tests",
        (),
        venv="sqlparse",
    ),
    Project(
        "tomlkit",
        "toml-test data files parametrized by their paths (ids with '/'), control characters escaped in ids",
        "tomlkit-0.15.3",
        ("tests",),
    ),
    Project(
        "dateutil",
        "src layout; python_files with *_solution.py (a test file in docs/exercises/solutions), filterwarnings=error, "
        "xfail_strict, hypothesis, freezegun, importorskip in tests, a conftest's collection_modifyitems; "
        "its test_tzfile.py (2,916 tests) left out",
        "python_dateutil-4.0.0",
        ("tests", "docs", "--ignore=tests/test_tzfile.py"),
    ),
    Project(
        "dateutil_above",
        "the same files named from the folder above the project (its settings found from the arguments, as pytest "
        "finds them)",
        ".",
        (
            "python_dateutil-4.0.0/tests",
            "python_dateutil-4.0.0/docs",
            "--ignore=python_dateutil-4.0.0/tests/test_tzfile.py",
        ),
        venv="dateutil",
    ),
    Project(
        "markdown",
        "unittest TestCases, legacy tests generated from data files by a metaclass, subTest; test_legacy.py turns "
        "every warning into an error at import (so its test_syntax/ folder is named first, as plain pytest "
        "collects in argument order)",
        "markdown-3.11.3",
        (
            "tests/test_syntax",
            "tests/test_apis.py",
            "tests/test_extensions.py",
            "tests/test_legacy.py",
            "tests/test_meta.py",
        ),
    ),
    Project(
        "wrapt",
        "src layout, a C extension; conftest pytest_collect_file collects tests/conftest.py itself as a file of mypy "
        "items (tests/conftest.py::mypy_*, skipped: no mypy), pytest_pycollect_makemodule returns empty collectors "
        "for files of later Pythons",
        "wrapt-2.5.2",
        ("tests",),
    ),
    Project(
        "wrapt_sub",
        "the same suite run from its tests/ folder (the rootdir the project root, by its pyproject.toml)",
        "wrapt-2.5.2/tests",
        (),
        venv="wrapt",
    ),
    Project(
        "execnet",
        "tox.ini [pytest] with testpaths and pytest-timeout's timeout; conftest pytest_addoption (--gx) and "
        "pytest_generate_tests (indirect gw parameters), pytest_plugins = pytester, doctest; subprocess gateways",
        "execnet-2.1.2",
        (),
    ),
    Project(
        "execnet_doc",
        "four of its test files named from its doc/ folder (../testing/test_x.py; the rootdir the project root)",
        "execnet-2.1.2/doc",
        tuple(f"../testing/test_{name}.py" for name in ("basics", "serializer", "threadpool", "rsync")),
        venv="execnet",
    ),
    Project(
        "execnet_doc_k",
        "its testing/ folder named from doc/ (../testing), with -k choosing four files' tests",
        "execnet-2.1.2/doc",
        ("../testing", "-k", "basics or serializer or threadpool or rsync"),
        venv="execnet",
    ),
    # run 7
    Project(
        "humanize",
        "[tool.pytest] (pytest 9's table) with minversion 9.0, addopts --doctest-modules over testpaths src and "
        "tests (doctests of a src-layout package), filterwarnings=error; pytest-benchmark installed",
        "humanize-4.17.0",
        (),
    ),
    Project(
        "astroid",
        "[tool.pytest] with dotted keys (ini_options.addopts = -m 'not acceptance', ini_options.python_files = "
        "*test_*.py), testpaths, filterwarnings=error, xfail_strict; subTest; optional dependencies absent (skips)",
        "astroid-4.4.0",
        (),
    ),
    Project(
        "mpmath",
        "tests inside the package; a root conftest's collect_ignore of package modules; addopts --doctest-modules "
        "--doctest-glob='*.rst' (quotes inside addopts) and --durations; .rst files and package modules named as "
        "doctests; also --pyargs of test modules from a neutral folder",
        "mpmath-1.4.1",
        (
            *(
                f"mpmath/tests/test_{name}.py"
                for name in [
                    "basic_ops",
                    "bitwise",
                    "convert",
                    "division",
                    "pickle",
                    "power",
                    "str",
                    "trig",
                    "matrices",
                    "interval",
                    "identify",
                    "module",
                    "levin",
                ]
            ),
            "docs/basics.rst",
            "docs/matrices.rst",
            "docs/general.rst",
            "mpmath/ctx_mp.py",
            "mpmath/identification.py",
        ),
        pyargs=(
            "--pyargs",
            *(f"mpmath.tests.test_{name}" for name in ("bitwise", "convert", "matrices", "interval", "levin")),
        ),
    ),
    Project(
        "mpmath_mods",
        "--pyargs of six of its test modules from a neutral folder, ones whose outcomes do not depend on the tests "
        "run before them without the sdist's root conftest (its autouse fixture resets mpmath's precision)",
        "",
        (),
        pyargs=(
            "--pyargs",
            *(f"mpmath.tests.test_{name}" for name in ("pickle", "str", "identify", "division", "trig", "matrices")),
        ),
        venv="mpmath",
    ),
    Project(
        "black",
        "data files under tests/data read by parametrize (ids of their names), a plugin module tests/optional.py "
        "with an ini list optional-tests and a --run-optional option, filterwarnings=error (its config.inicfg use "
        "needs -W ignore::pytest.PytestRemovedIn10Warning under pytest 9.2), subTest",
        "black-26.10.1",
        ("-W", "ignore::pytest.PytestRemovedIn10Warning"),
    ),
    Project(
        "anyio",
        "[tool.pytest] addopts -p anyio (its own plugin, by entry point) -p pytest_mock -p timeout -p no:asyncio, "
        "every async test parametrized by the anyio_backend fixture ([asyncio], [asyncio+uvloop], [trio]), "
        "anyio_mode=auto, pytester; testpaths with only --ignore given (its socket tests need IPv6 and a network)",
        "anyio-4.16.0",
        ("--ignore=tests/test_sockets.py",),
    ),
    Project(
        "jedi",
        "pytest.ini with testpaths jedi and test, addopts --doctest-modules, usefixtures, norecursedirs of paths; a "
        "root conftest's pytest_generate_tests over integration files (test/completion/*.py cases as parameters) "
        "and its own options",
        "jedi-0.20.1",
        (),
    ),
    Project(
        "zope_interface",
        "unittest TestCases inside a package of a namespace package (zope/, no __init__.py) in a src layout, no "
        "pytest settings, a C extension; src/ from the root, --pyargs zope.interface from a neutral folder",
        "zope_interface-8.7",
        ("src",),
        pyargs=("--pyargs", "zope.interface"),
    ),
    # run 8: tests made or steered by pytest plugins
    Project(
        "pytest_cases",
        "pytest-cases' own suite under pytest 8.4 (its 3.10.1 fails to import under 9.2): parametrize_with_cases "
        "from case modules and classes, fixture unions, fixture_ref parameters, ids made by the plugin "
        "(test_x[a-fixture_union/b]), pytest-steps and pytest-harvest",
        "pytest_cases-3.10.1",
        ("tests",),
    ),
    Project(
        "syrupy",
        "syrupy's own snapshot tests (__snapshots__/*.ambr, custom extensions and snapshot folders), addopts -p "
        "syrupy -p pytester --doctest-modules, xfail_strict; the unused-snapshot report at the session's end; its "
        "tests/syrupy and tests/examples folders (tests/integration's pytester runs take minutes)",
        "syrupy-7.0.1",
        ("tests/syrupy", "tests/examples"),
    ),
    Project(
        "pyrsistent",
        "hypothesis stateful tests (RuleBasedStateMachine.TestCase), *_test.py files, a C extension",
        "pyrsistent-0.20.0",
        ("tests",),
    ),
    Project(
        "pyrsistent_repeat",
        "the same suite under pytest-repeat's --count 2 (ids test_x[1-2], test_y[a-2-2], each test twice)",
        "pyrsistent-0.20.0",
        ("tests", "--count", "2"),
        venv="pyrsistent",
    ),
    Project(
        "pytest_dependency",
        "pytest-dependency's documented examples named as files (none matches python_files): dependencies by "
        "name, class, parameter and node id, scope 'session' across two modules, tests that fail or skip on purpose",
        "pytest-dependency-0.6.1",
        tuple(
            f"doc/examples/{name}.py"
            for name in [
                "all_params",
                "basic",
                "debugging",
                "dyn-parametrized",
                "group-fixture",
                "group-fixture2",
                "mark-class",
                "named",
                "nodeid",
                "or_dependency",
                "parametrized",
                "runtime",
                "scope_class",
                "scope_module",
                "scope_session_mod_01",
                "scope_session_mod_02",
                "testclass",
            ]
        ),
    ),
    Project(
        "pytest_order",
        "pytest-order's documented examples: order marks by number, first/last, before/after tests of other "
        "modules and classes, with pytest-dependency installed",
        "pytest_order-1.5.0",
        ("example",),
    ),
    Project(
        "bdd_demo",
        "written for run 8 (no PyPI project found that ships pytest-bdd scenarios in its sdist; pytest-bdd's own suite "
        "runs them inside pytester): pytest-bdd 9.0.1, scenarios() over two .feature files under "
        "bdd_features_base_dir, a Background, a Scenario Outline's examples as parameters (test_x[12-5-7]), a title "
        "with brackets, quotes and '::', a tag as a mark, @scenario by name, a step that skips, an undefined step",
        "bdd-demo",
        (),
        venv="pytest_bdd",
    ),
    # run 9: pytest-asyncio, rerunfailures, randomly, timeout, doctest globs, unittest, plugins by pytest_plugins
    Project(
        "asgiref",
        "pytest-asyncio in strict mode (asyncio_mode = strict, a function loop scope) in setup.cfg's [tool:pytest], "
        "testpaths; pytest-randomly installed (each run, each shard, its own seed); pytest-timeout's timeout ini value "
        "given as -o timeout=60 (asgiref sets none); threads and event loops in sync_to_async/async_to_sync",
        "asgiref-3.13.0",
        ("-o", "timeout=60"),
    ),
    Project(
        "asgiref_k",
        "the same suite under -k 'wsgi or local' (the tests of three files and a few more: the discovery plan's other "
        "files are deselected whole, a shard may run none) and --runxfail (its one xfail marker ignored)",
        "asgiref-3.13.0",
        ("-o", "timeout=60", "-k", "wsgi or local", "--runxfail"),
        venv="asgiref",
    ),
    Project(
        "asgiref_none",
        "the same suite under a -k that deselects every test (plain pytest: 'N deselected', exit 5)",
        "asgiref-3.13.0",
        ("-k", "no_such_test_anywhere"),
        venv="asgiref",
    ),
    Project(
        "typing_extensions",
        "a unittest suite in one 9,000-line module beside the package (src/test_typing_extensions.py): TestCase "
        "classes with setUpClass, skipUnless by version, expectedFailure, subTest (1,444 subtest reports); no pytest "
        "settings; pytest-randomly and pytest-rerunfailures installed",
        "typing_extensions-4.16.0",
        ("src",),
    ),
    Project(
        "pyhamcrest",
        "tox.ini [pytest] with testpaths, xfail_strict and filterwarnings; *_test.py files of unittest TestCases in a "
        "src layout; two tests that fail here (numpy 2's types) rerun by pytest-rerunfailures' --reruns 1; "
        "pytest-randomly installed; its tests/type-hinting (pytest-mypy-plugins' YAML cases, mypy per case) left out",
        "pyhamcrest-2.1.0",
        ("--ignore=tests/type-hinting", "--reruns", "1"),
    ),
    Project(
        "parse",
        "addopts --doctest-modules --doctest-glob=README.rst (the README at the root a doctest file beside the "
        "package's modules) and pytest-cov's --cov=parse --cov-append --cov-branch with its report; no testpaths",
        "parse-1.22.4",
        (),
    ),
    Project(
        "multidict",
        "pytest.ini addopts -m 'not hypothesis' (two files deselected whole), --doctest-modules, --strict-markers, "
        "pytest-cov with --cov-context=test, xfail_strict, faulthandler_timeout, filterwarnings=error; conftest "
        "pytest_generate_tests over the implementations and its own --c-extensions option, whose "
        "pytest_collection_modifyitems deselects the C variants (--no-c-extensions: no C extension built here); "
        "-k 'not thread' (its threaded tests hang on 2 loaded cores); 13 of its files",
        "multidict-7.2.1",
        (
            "-o",
            "faulthandler_timeout=60",
            "--no-c-extensions",
            *(
                f"tests/test_{name}.py"
                for name in (
                    "abc",
                    "copy",
                    "guard",
                    "istr",
                    "pickle",
                    "to_dict",
                    "types",
                    "update_marks",
                    "version",
                    "mutable_multidict",
                    "multidict",
                    "hypothesis_views",
                    "hypothesis_multidict",
                )
            ),
            "-k",
            "not thread",
        ),
    ),
    Project(
        "sphinx",
        "pytest_plugins = ['sphinx.testing.fixtures'] in tests/conftest.py (the app, make_app and rootdir fixtures, "
        "its sphinx marker and test roots), collect_ignore of the roots, tests importing tests.utils (a package "
        "tests/); eight of its test folders and files (the whole suite takes over 10 minutes here)",
        "sphinx-9.0.4",
        (
            "tests/test_util",
            "tests/test_config",
            "tests/test_markup",
            "tests/test_pycode",
            "tests/test_ext_napoleon",
            "tests/test_roles.py",
            "tests/test_events.py",
            "tests/test_directives",
            "tests/test_environment",
        ),
    ),
    # run 10: pytest-xdist in addopts with collection errors, a coverage gate in .coveragerc, -m from a subfolder,
    # pytester-heavy plugin suites, testpaths with *_example.py docs, tests inside an installed numpy
    Project(
        "yarl",
        "pytest.ini addopts --numprocesses=auto (pytest-xdist: 2 workers here, in every shard too), --doctest-modules, "
        "-p pytest_cov --cov --cov-context=test, --strict-markers, xfail_strict, empty_parameter_set_mark = xfail, "
        "filterwarnings=error; three test modules import the C extension from the unbuilt source tree and fail to "
        "collect, which pytest-xdist runs past (3 errors beside the other tests)",
        "yarl-1.25.1",
        (),
    ),
    Project(
        "propcache",
        "src layout; addopts --numprocesses=auto then --numprocesses=0 (the last wins: no xdist), pytest-cov with "
        "--cov-context=test and fail_under = 50 in .coveragerc (a gate each shard's part misses: given "
        "--cov-fail-under=0, as docs/coverage.md says); a session fixture parametrized with a c_extension mark",
        "propcache-0.5.4",
        ("--cov-fail-under=0",),
    ),
    Project(
        "propcache_sub",
        "the same suite from its tests/ folder (rootdir and pytest.ini one folder up) under -m 'not c_extension' and "
        "-k 'not benchmark'",
        "propcache-0.5.4/tests",
        ("--cov-fail-under=0", "-m", "not c_extension", "-k", "not benchmark"),
        venv="propcache",
    ),
    Project(
        "pytest_mock",
        "a pytest plugin's suite: pytester (runpytest in-process and subprocess) in most tests, tox.ini [pytest] with "
        "asyncio_mode = auto (pytest-asyncio installed), src layout",
        "pytest_mock-3.17.0",
        ("tests",),
    ),
    Project(
        "pytest_asyncio",
        "a pytest plugin's suite: testpaths = docs and tests, python_files adds *_example.py (the docs' examples are "
        "tests), tests/ a package, pytest_plugins = 'pytester' in its conftest, asyncio_mode = auto, hypothesis",
        "pytest_asyncio-1.5.0",
        (),
    ),
    Project(
        "numpy",
        "tests inside the installed numpy 2.4.6 wheel, --pyargs of two sub-packages from a neutral folder (numpy's "
        "conftest.py above them, hypothesis installed)",
        "",
        (),
        pyargs=("--pyargs", "numpy.linalg", "numpy.fft"),
    ),
    Project(
        "numpy_ids",
        "the same numpy under --pyargs of a test module and of two modules' node ids (module::Class, "
        "module::Class::test[param]) from the neutral folder",
        "",
        (),
        pyargs=(
            "--pyargs",
            "numpy.fft.tests.test_helper",
            "numpy.linalg.tests.test_linalg::TestSVD",
            "numpy.linalg.tests.test_linalg::TestDet::test_types[complex128]",
        ),
        venv="numpy",
    ),
    # run 11: a plugin's own file collection (pytest-relaxed), pytest 9's native [tool.pytest] table, data-file
    # parametrize with pytest-regressions, a small C extension, pytest-django with --ds
    Project(
        "invoke",
        "pytest-relaxed installed (its pytest11 plugin collects every .py file of tests/ but conftest.py and names "
        "starting with _, and in them every class and function not named _*, nested classes as spec scopes), no pytest "
        "settings in the sdist; -s as the project's own settings give it (its tests read stdin); 20 of its tests need "
        "a terminal (pty) and fail here",
        "invoke-3.0.3",
        ("tests", "-s"),
    ),
    Project(
        "hpack",
        "src layout, pytest 9's native [tool.pytest] table in pyproject.toml (testpaths a TOML list), hypothesis, "
        "pytest-xdist and pytest-cov installed (not enabled)",
        "hpack-4.2.0",
        (),
    ),
    Project(
        "hpack_sub",
        "the same suite from its tests/ folder (the [tool.pytest] table one folder up) under -k 'not huffman'",
        "hpack-4.2.0/tests",
        ("-k", "not huffman"),
        venv="hpack",
    ),
    Project(
        "markdown_it",
        "tests/ a package, parametrize over cases read from data files at import (read_fixture_file), "
        "pytest-regressions' data_regression/file_regression fixtures against .yml/.html files beside the tests, "
        "pytest-timeout's timeout = 10 and xfail_strict in [tool.pytest.ini_options]; a test that builds the sdist",
        "markdown_it_py-4.3.0",
        (),
    ),
    Project(
        "markupsafe",
        "src layout with a small C extension built at install (speedups), tests parametrized over the native and "
        "the C implementation by a conftest fixture; filterwarnings = error",
        "markupsafe-3.0.4",
        (),
    ),
    Project(
        "django_filter",
        "a Django app's suite run with pytest-django (--ds=tests.settings given on the command line: the project "
        "runs its own runtests.py), unittest-style Django TestCases with subTest, tests/ a package with "
        "tests/rest_framework inside, no pytest settings",
        "django_filter-26.2",
        ("--ds=tests.settings", "tests"),
    ),
    Project(
        "tqdm",
        "python_files = tests_*.py and tests_*.ipynb (no notebook plugin installed), tests/ a package, addopts -v "
        "-W=error --durations=0 --asyncio-mode=strict with pytest-asyncio, pytest-timeout's timeout = 30; a module "
        "skipped at import by importorskip (tests_pandas.py: numpy not installed, a collector skip) and tests that "
        "importorskip numpy, rich or dask; -k 'not perf' as its tox.ini runs it",
        "tqdm-4.70.1",
        ("-k", "not perf"),
    ),
    # run 12: a conftest's collect_ignore computed from the optional packages installed (networkx with numpy only)
    # under --doctest-modules from the sdist and by --pyargs, no pytest settings at all (h11: the root walked),
    # tests inside the package in a _tests folder (sniffio), collect_ignore_glob by the Python version
    # (exceptiongroup), setup.cfg [tool:pytest] with asyncio_mode = strict (outcome)
    Project(
        "networkx_src",
        "tests inside the package (networkx/*/tests), its networkx/conftest.py computes collect_ignore from the "
        "optional packages installed (numpy only here: the scipy, pandas, matplotlib ... modules and tests ignored) "
        "and skips @slow tests in pytest_collection_modifyitems; --doctest-modules networkx from the sdist root, no "
        "pytest settings",
        "networkx-3.6.1",
        ("--doctest-modules", "networkx"),
        venv="networkx",
    ),
    Project(
        "networkx_pyargs",
        "the same networkx (installed editable from the sdist) under --doctest-modules --pyargs networkx from a "
        "neutral folder, as its CI runs it",
        "",
        (),
        pyargs=("--doctest-modules", "--pyargs", "networkx"),
        venv="networkx",
    ),
    Project(
        "h11",
        "tests inside the package (h11/tests, a package with helpers.py and data files), no pytest settings and no "
        "argument: pytest walks the whole sdist root (docs/, fuzz/)",
        "h11-0.16.0",
        (),
    ),
    Project("wsproto", "src layout, testpaths as a TOML list in [tool.pytest.ini_options]", "wsproto-1.3.2", ()),
    Project(
        "exceptiongroup",
        "addopts -rsfE --tb=short --strict-config --strict-markers, testpaths; tests/conftest.py sets "
        "collect_ignore_glob = ['*_py311.py'] below Python 3.11 (not here: 3.11)",
        "exceptiongroup-1.3.1",
        (),
    ),
    Project(
        "sniffio",
        "tests inside the package in a folder named _tests (relative imports from ..), no pytest settings and no "
        "argument; curio installed",
        "sniffio-1.3.1",
        (),
    ),
    Project(
        "outcome",
        "src layout, setup.cfg [tool:pytest] asyncio_mode = strict with pytest-asyncio, a module-level "
        "pytestmark = pytest.mark.asyncio, tests/type_tests.py not a test file",
        "outcome-1.3.0.post0",
        (),
    ),
    # run 14
    Project(
        "chardet",
        "setup.cfg python_files = test.py and norecursedirs = *: one test file at the root, its cases parametrized "
        "over the data files under tests/ (ids are their paths); addopts -v",
        "chardet-5.2.0",
        (),
    ),
    Project("jmespath", "no pytest settings, compliance cases built from JSON files", "jmespath-1.0.1", ()),
    Project(
        "packaging_all",
        "src layout, 64,000 parametrized tests, addopts -m 'not property' with --strict-markers and --strict-config",
        "packaging-26.4",
        (),
        venv="packaging",
    ),
    Project(
        "iniconfig",
        "pytest 9's [tool.pytest] table with a dotted ini_options.testpaths key; the package installed from its wheel",
        "iniconfig-2.3.1",
        (),
    ),
    Project(
        "six", "setup.cfg [tool:pytest] with minversion only, test_six.py beside six.py at the root", "six-1.17.0", ()
    ),
    Project(
        "idna",
        "tests/ holding fuzz_*.py modules that are not test files, unittest TestCases, the subtests fixture",
        "idna-3.21",
        (),
    ),
    Project(
        "charset_normalizer",
        "src layout run against the installed wheel, filterwarnings = error, log_level = DEBUG, a data/ folder",
        "charset_normalizer-3.5.3",
        (),
    ),
)


@dataclass(frozen=True)
class Seen:
    """One run's tests: each id as many times as it was reported, and the count per outcome."""

    ids: Counter[str]
    counts: dict[str, int]
    subtests: int = 0
    note: str = ""
    exit_code: int = 0  # the command's: a verdict that fails where plain pytest passes (or passes where it fails)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_SHARDS_", "PYTEST_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as on a user's machine
    return env


def _run(argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[int, float, float]:
    """(exit code, wall seconds, CPU seconds of the children) of one command, its output into ``log``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        rc = subprocess.run(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return rc, time.monotonic() - start, cpu


def _per_test(lines: list[dict[str, object]]) -> Seen:
    """pytest's reports → one outcome per run of a test, as ci-shards counts (and pytest's line, but for a
    test that fails and then errors in teardown, which pytest counts twice). A run ends at its teardown
    report: items that share a node id (pyyaml 6.0.4's three ``test_yaml.py::test_yaml.py``) are counted
    each, as pytest's summary and its --junitxml do; a run pytest-rerunfailures repeats (a ``rerun``
    report) is not a test of its own."""
    order = {"error": 3, "failed": 2}
    running: dict[str, str] = {}  # id → the worst word of its run so far
    finished: list[tuple[str, str]] = []
    subtests = 0
    for line in lines:
        test_id, category = str(line["id"]), str(line["category"])
        if line.get("subtest") or category.startswith("subtests "):
            subtests += 1
            continue
        word = "error" if category in ("error", "errors") else category
        if line["when"] == "collect":  # a collector's skip: one each, two for a file skipped as a doctest module and
            finished.append((test_id, word))  # as a test module under --doctest-modules (networkx, run 12)
            continue
        if word == "rerun":  # the attempt ends here, its teardown never reported; the next one counts
            running.pop(test_id, None)
            continue
        worst = running.setdefault(test_id, "")
        if (line["when"] == "call" or word not in ("passed", "")) and order.get(word, 0) >= order.get(worst, 0):
            running[test_id] = word
        if line["when"] == "teardown":
            final = running.pop(test_id)
            if final:
                finished.append((test_id, final))
    finished += [(test_id, word) for test_id, word in running.items() if word]
    counts = Counter(word for _, word in finished)
    return Seen(ids=Counter(i for i, _ in finished), counts={k: counts[k] for k in OUTCOMES}, subtests=subtests)


def plain(
    args: tuple[str, ...], venv: Path, cwd: Path, work: Path, flags: tuple[str, ...]
) -> tuple[Seen, str, float, float]:
    reports = work / "plain.jsonl"
    # the recorder alone on the path: benchmarks/ also holds coverage.py, which would shadow coverage.py the
    # package for a project whose addopts load pytest-cov (arrow)
    plugin = work / "recorder"
    plugin.mkdir(exist_ok=True)
    shutil.copy(HERE / "conformance_recorder.py", plugin)
    env = _env() | {"CONFORMANCE_REPORTS": str(reports), "PYTHONPATH": str(plugin)}
    argv = [str(venv / "bin" / "python"), "-m", "pytest", "-p", "conformance_recorder", *flags]
    rc, wall, cpu = _run([*argv, *args], cwd, env, work / "plain.log")
    lines = [json.loads(x) for x in reports.read_text(encoding="utf-8").splitlines() if x.strip()]
    tail = (work / "plain.log").read_text(encoding="utf-8", errors="replace").strip().splitlines()
    summary = re.sub(r"\s*in [\d.]+s.*$", "", tail[-1].strip("= ")) if tail else ""
    seen = _per_test(lines)
    return Seen(seen.ids, seen.counts, seen.subtests, exit_code=rc), summary, wall, cpu


def sharded(
    mode: list[str], venv: Path, cwd: Path, out: Path, args: tuple[str, ...], *, workers: int = 1, ci: bool = False
) -> tuple[Seen, str, float, float]:
    shutil.rmtree(out, ignore_errors=True)
    if ci:
        rc, wall, cpu = _as_ci(mode, venv, cwd, out, args, workers=workers)
    else:
        argv = [str(venv / "bin" / "python"), "-m", "ci_shards", "local", "--shards", "4", "--out", str(out), *mode]
        argv += ["--workers", str(workers)] if workers > 1 else []
        rc, wall, cpu = _run([*argv, "--pytest", "--", *args], cwd, _env(), out.with_suffix(".log"))
    cases = _once_per_cut_file(out, [parse_junit(path) for path in sorted(out.glob("shard-*/junit.xml"))])
    totals = Totals.of(cases)
    counted = [c for c in cases if c.counted_as != "left-out"]
    counts = {
        "passed": totals.passed,
        "failed": totals.failed,
        "error": totals.errors,
        "skipped": totals.skipped,
        "xfailed": totals.xfailed,
        "xpassed": totals.xpassed,
    }
    log = out.with_suffix(".log").read_text(encoding="utf-8", errors="replace")
    headline = next((ln for ln in log.splitlines() if ln.startswith(("ci-shards: PASSED", "ci-shards: FAILED"))), "")
    plan = out / "plan.json"
    unknown = json.loads(plan.read_text(encoding="utf-8")).get("unknown_items", "?") if plan.exists() else "no plan"
    note = f"exit {rc}, {unknown} of the plan's items unknown to the timings"
    note += f", {totals.left_out} left out" if totals.left_out else ""
    if not headline:
        note += ": " + (log.strip().splitlines() or [""])[-1][:160]
    seen = Seen(ids=Counter(c.test_id for c in counted), counts=counts, note=note, exit_code=rc)
    return seen, headline, wall, cpu


def _flag(words: list[str], flag: str) -> list[str]:
    """``flag`` and its value as ``words`` give them, else nothing."""
    return words[words.index(flag) : words.index(flag) + 2] if flag in words else []


def _as_ci(
    mode: list[str], venv: Path, cwd: Path, out: Path, args: tuple[str, ...], *, workers: int
) -> tuple[int, float, float]:
    """The stages as a CI runs them, one after another (``--ci``): ``plan``, each shard's ``run``, ``aggregate``
    (whose exit code is the verdict), their output in one log. ``local`` keeps whole files where a CI plan deals
    them (docs/planning.md, *The first plan: every file dealt*), so only this path runs a dealt first plan."""
    python = [str(venv / "bin" / "python"), "-m", "ci_shards"]
    durations, timings_out = _flag(mode, "--durations"), _flag(mode, "--timings-out")
    plan = out / "plan.json"
    k = ["--workers", str(workers)] if workers > 1 else []
    how = ["--discover"] if "--discover" in mode else ["--pytest"]
    steps = [[*python, "plan", *how, "--shards", "4", "-o", str(plan), *durations, *k, "--", *args]]
    steps += [[*python, "run", "--plan", str(plan), "--shard", f"{i}/4", "--out", str(out), "--pytest", "--", *args]
              for i in range(1, 5)]  # fmt: skip
    steps.append([*python, "aggregate", "--plan", str(plan), str(out), *timings_out])
    out.mkdir(parents=True)
    log = out.with_suffix(".log")
    rc, wall, cpu, text = 0, 0.0, 0.0, []
    for n, argv in enumerate(steps):
        rc, step_wall, step_cpu = _run(argv, cwd, _env(), out / f"step-{n}.log")
        wall, cpu = wall + step_wall, cpu + step_cpu
        text.append((out / f"step-{n}.log").read_text(encoding="utf-8", errors="replace"))
        if n == 0 and rc != 0:
            break
    log.write_text("\n".join(text), encoding="utf-8")
    return rc, wall, cpu


def _once_per_cut_file(out: Path, shards: list[list[CaseResult]]) -> list[CaseResult]:
    """Every shard's cases, a file's collector (its collection error or skip) counted once where the plan cut that
    file over several shards, each of which reports it, as aggregate counts it (``report.aggregate``, since
    ``2883fc2``); before run 10 the harness counted it in every shard (yarl's cut hypothesis module: 4 errors, 1)."""
    plan = out / "plan.json"
    items = (
        [i for s in json.loads(plan.read_text(encoding="utf-8"))["shards"] for i in s["items"]] if plan.exists() else []
    )
    cut = {i.split("::", 1)[0] for i in items if "::" in i}
    told: dict[str, int] = {}  # the collector's id -> the shard that told it (twice under --doctest-modules: run 12)
    cases = []
    for n, case in ((n, c) for n, shard in enumerate(shards) for c in shard):
        collector = "::" not in case.test_id and case.test_id in cut
        if collector and case.outcome.value in ("error", "failed", "skipped") and told.setdefault(case.test_id, n) != n:
            continue
        cases.append(case)
    return cases


def compare(reference: Seen, seen: Seen) -> tuple[str, list[str]]:
    missing = reference.ids - seen.ids
    extra = seen.ids - reference.ids
    diffs = [
        f"{k} {seen.counts[k]} vs {reference.counts[k]}" for k in OUTCOMES if seen.counts[k] != reference.counts[k]
    ]
    if (seen.exit_code == 0) != (reference.exit_code == 0):  # since run 8: the verdict, not only the counts
        diffs.append(f"exit {seen.exit_code} vs {reference.exit_code}")
    details = [f"missing {i}" for i in sorted(missing)[:5]] + [f"extra {i}" for i in sorted(extra)[:5]]
    if not (missing or extra or diffs):
        return "same", details
    parts = []
    if missing:
        parts.append(f"{sum(missing.values())} ids missing")
    if extra:
        parts.append(f"{sum(extra.values())} ids extra")
    return "; ".join(parts + diffs), details


def folders(project: Project, work: Path) -> list[tuple[str, Path, tuple[str, ...]]]:
    """(where, folder, the user's arguments): the project root, and a neutral folder for a --pyargs suite."""
    root = [("root", work / "sdists" / project.source, project.args)] if project.source else []
    return root + ([("neutral", work / "neutral" / project.name, project.pyargs)] if project.pyargs else [])


def modes(where: str, work: Path) -> list[tuple[str, list[str]]]:
    """(label, ci-shards flags) in run order: each timed run reads the timings its untimed twin wrote."""
    result = []
    for plan in ("discover", "pytest"):
        timings = work / f"{where}-{plan}.timings.json"
        flag = ["--discover"] if plan == "discover" else []
        result.append((f"{plan}, {where}, untimed", [*flag, "--timings-out", str(timings)]))
        result.append((f"{plan}, {where}, timed", [*flag, "--durations", str(timings)]))
    return result


def _campaign(
    project: Project,
    venv: Path,
    *,
    where: str,
    folder: Path,
    args: tuple[str, ...],
    work: Path,
    workers: int = 1,
    ci: bool = False,
) -> list[str]:
    """Plain pytest from ``folder``, then every ci-shards mode from there; prints the rows, returns the mismatches."""
    problems = []
    reference, summary, wall, cpu = plain(args, venv, folder, work, project.plain_flags)
    sub = f"; {reference.subtests} subtest reports" if reference.subtests else ""
    sub += f" (exit {reference.exit_code})"
    print(f"| {project.name} | {project.shape} | plain `pytest {' '.join(args)}` from the {where} folder | "
          f"{sum(reference.ids.values())} | {summary}{sub} | (reference) | {wall:.0f} | {cpu:.0f} |")  # fmt: skip
    for n, (label, flags) in enumerate(modes(where, work)):
        seen, _headline, wall, cpu = sharded(flags, venv, folder, work / f"mode{n}", args, workers=workers, ci=ci)
        verdict, details = compare(reference, seen)
        words = ", ".join(f"{seen.counts[k]} {k}" for k in OUTCOMES if seen.counts[k])
        print(f"| {project.name} | | {label} | {sum(seen.ids.values())} | {words} ({seen.note}) | {verdict} | "
              f"{wall:.0f} | {cpu:.0f} |", flush=True)  # fmt: skip
        if verdict != "same":
            problems.append(f"{project.name}, {label}: {verdict}: " + "; ".join(details))
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/conf26"))
    parser.add_argument("--only", default="", help="comma-separated project names (default: all)")
    parser.add_argument(
        "--workers", type=int, default=1, help="each shard as K pytest-xdist workers (the venvs need pytest-xdist)"
    )
    parser.add_argument(
        "--ci", action="store_true", help="plan, run each shard and aggregate as a CI does, instead of local"
    )
    ns = parser.parse_args()
    wanted = {n for n in ns.only.split(",") if n}
    load = os.getloadavg()
    print(f"date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; machine: {' '.join(platform.uname())}; "
          f"nproc {os.cpu_count()}; load at start {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
          f"--workers {ns.workers}{'; --ci' if ns.ci else ''}")  # fmt: skip
    print("\n| project | shape | mode | tests | outcomes (pytest's words) | vs plain pytest | wall s | CPU s |")
    print("|---|---|---|---:|---|---|---:|---:|")
    problems: list[str] = []
    for project in PROJECTS:
        if wanted and project.name not in wanted:
            continue
        venv = ns.work / "venvs" / (project.venv or project.name)
        for where, folder, args in folders(project, ns.work):
            work = ns.work / "runs" / f"{project.name}-{where}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            folder.mkdir(parents=True, exist_ok=True)
            problems += _campaign(
                project, venv, where=where, folder=folder, args=args, work=work, workers=ns.workers, ci=ns.ci
            )
    load = os.getloadavg()
    print(f"\nload at end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    for line in problems:
        print(f"- {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
