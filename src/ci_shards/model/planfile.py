"""Reading plan.json: the one place every stage (matrix, run, aggregate) turns a plan file into a ``Plan``.

Every way a plan file can be bad is one ``InputError`` naming the file and the problem (exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path

from ci_shards.common import json_text
from ci_shards.common.errors import InputError
from ci_shards.model.plan import Plan


def load_plan(path: str | Path) -> Plan:
    try:
        data = json_text.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, "no such plan file") from None
    except OSError as err:
        raise InputError(path, f"cannot read the plan: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise InputError(path, f"not valid JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None
    except UnicodeDecodeError as err:
        raise InputError(path, f"not UTF-8 text (byte {err.start})") from None
    if not isinstance(data, dict):
        raise InputError(path, "not a plan (expected a JSON object)")
    try:
        return Plan.from_json(data)
    except (ValueError, TypeError, KeyError) as err:
        raise InputError(path, f"not a valid plan: {err}") from None
