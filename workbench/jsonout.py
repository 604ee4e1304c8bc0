"""JSON output that is always JSON: no ``NaN``, ``Infinity`` or ``-Infinity``.

Python's ``json.dumps`` writes non-finite floats as ``NaN``/``Infinity``, which
RFC 8259 does not allow and strict parsers (``jq``, JavaScript's
``JSON.parse``) reject. Every JSON the workbench prints goes through ``dumps``:
a non-finite number becomes ``null`` (an undefined value, e.g. an nDCG whose
gains overflowed).
"""

from __future__ import annotations

import math
from typing import Any


def json_safe(value: Any) -> Any:
    """``value`` with every non-finite float (nan, inf, -inf) replaced by None, recursively.

    Example:
        >>> json_safe({"a": float("nan"), "b": [1.0, float("inf")]})
        {'a': None, 'b': [1.0, None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` of ``json_safe(value)``, refusing any non-finite number left (``allow_nan=False``).

    Example:
        >>> dumps({"x": float("inf")})
        '{"x": null}'
    """
    import json  # here: printing a table imports no JSON encoder

    default = kwargs.pop("default", None)
    if default is not None:  # objects turned into JSON by ``default`` are made safe too
        kwargs["default"] = lambda o: json_safe(default(o))
    return json.dumps(json_safe(value), allow_nan=False, **kwargs)
