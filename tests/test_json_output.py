"""Every JSON the workbench prints goes through ``workbench.jsonout`` (no NaN/Infinity, RFC 8259).

``json.dumps`` writes ``NaN``/``Infinity`` for non-finite floats, which strict
parsers (``jq``, ``JSON.parse``) refuse; ``allow_nan=False`` instead raises a
ValueError that would end the command with a traceback. The renderers and CLI
modules therefore call ``jsonout.dumps`` (non-finite -> null) only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from workbench import jsonout

ROOT = Path(__file__).resolve().parents[1] / "workbench"
PRINTERS = sorted([*ROOT.glob("reports*.py"), *(ROOT / "cli").glob("*.py"), ROOT / "formats" / "judgments.py"])
BARE_DUMP = re.compile(r"\bjson\.dumps?\(")


@pytest.mark.parametrize("path", PRINTERS, ids=lambda p: str(p.relative_to(ROOT.parent)))
def test_output_modules_write_json_through_jsonout(path):
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        quoted_in_a_message = "{json.dumps(" in line and "found" in line  # an error quoting the bad value
        if BARE_DUMP.search(line) and not quoted_in_a_message:
            pytest.fail(f"{path.relative_to(ROOT.parent)}:{lineno}: JSON output through json.dumps; "
                        "use workbench.jsonout.dumps (no NaN/Infinity)")


def test_jsonout_turns_every_non_finite_number_into_null_and_parses_strictly():
    text = jsonout.dumps({"tau": float("nan"), "rows": [{"r2": float("inf")}, (1.5, float("-inf"))]}, indent=2)

    def refuse(constant: str) -> float:
        raise AssertionError(f"{constant} in JSON output")

    assert json.loads(text, parse_constant=refuse) == {"tau": None, "rows": [{"r2": None}, [1.5, None]]}


def test_jsonout_makes_objects_from_default_safe_too():
    class Cost:
        ms = float("nan")

    assert jsonout.dumps({"c": Cost()}, default=lambda o: {"ms": o.ms}) == '{"c": {"ms": null}}'
