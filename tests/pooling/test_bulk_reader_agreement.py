"""The bulk run-file reader (DuckDB, ``read_run_tops``) agrees with the strict reader (``formats.trec.read_run``).

For each input both readers either give the same run (top ``depth`` under the
canonical rule) or the same ``file:line`` error; DuckDB's own error text never
reaches the user.
"""

from __future__ import annotations

import pytest

from workbench.errors import InputFormatError
from workbench.formats.trec import read_run
from workbench.ranking import ranked
from workbench.services.runs.pooling import pool_from_files
from workbench.store.runs import read_run_tops

GOOD = "1 Q0 d1 1 3.5 t\n1 Q0 d2 2 2.0 t\n2 Q0 d9 1 -1e-3 t\n"


def _top(run, depth):
    return {t: {sd.doc_id: sd.score for sd in ranked(scores)[:depth]} for t, scores in run.items()}


def _strict_error(path) -> str:
    with pytest.raises(InputFormatError) as e:
        read_run(path)
    return str(e.value)


def _bulk_error(path) -> str:
    with pytest.raises(InputFormatError) as e:
        read_run_tops([path], 10)
    return str(e.value)


BAD = {
    "underscore score": GOOD + "2 Q0 d8 2 1_000 t\n",
    "two tags": GOOD + "2 Q0 d8 2 1.0 other\n",
    "float rank": GOOD + "2 Q0 d8 6.0 1.0 t\n",
    "nan score": GOOD + "2 Q0 d8 2 nan t\n",
    "inf score": GOOD + "2 Q0 d8 2 inf t\n",
    "overflow score": GOOD + "2 Q0 d8 2 1e999 t\n",
    "hex score": GOOD + "2 Q0 d8 2 0x10 t\n",
    "five columns": GOOD + "2 Q0 d8 2 1.0\n",
    "seven columns": GOOD + "2 Q0 d8 2 1.0 t x\n",
    "tab seven columns": GOOD.replace(" ", "\t") + "2\tQ0\td8\t2\t1.0\tt\tx\n",
    "tag differs on another topic": "1 Q0 d1 1 3.5 a\n2 Q0 d2 1 2.0 b\n",
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bulk_gives_the_strict_error(write, case):
    p = write(f"{case.replace(' ', '_')}.trec", BAD[case])
    strict = _strict_error(p)
    assert _bulk_error(p) == strict
    assert "CSV Error" not in strict


def test_non_utf8_byte(tmp_path):
    p = tmp_path / "latin.trec"
    p.write_bytes(GOOD.encode() + b"2 Q0 d\xe9 2 1.0 t\n")
    strict = _strict_error(p)
    assert strict == f"{p}:4: expected UTF-8 text, found byte 0xe9 at column 7. Re-save the file as UTF-8."
    assert _bulk_error(p) == strict


def test_empty_file_among_good_ones(write):
    good, empty = write("good.trec", GOOD), write("empty.trec", "\n\n")
    with pytest.raises(InputFormatError) as e:
        read_run_tops([good, empty], 10)
    assert str(e.value) == _strict_error(empty)


GOOD_VARIANTS = {
    "huge integer rank": GOOD + "2 Q0 d8 99999999999999999999999 1.0 t\n",
    "tabs and runs of spaces": "1\tQ0\td1  1   3.5\tt\n1 Q0 d2 2 2.0 t\n",
    "leading and trailing whitespace": "  1 Q0 d1 1 3.5 t  \n1 Q0 d2 2 2.0 t\n",
    "crlf": GOOD.replace("\n", "\r\n"),
    "bom": "\ufeff" + GOOD,
    "plus sign and bare dot": "1 Q0 d1 +1 +3. t\n1 Q0 d2 2 .5 t\n",
    "duplicate doc": GOOD + "1 Q0 d1 3 9.0 t\n",
    # a 2 MB line that is valid: the longest id allowed (1,000 characters) and a long run of spaces
    "long line": GOOD + f"2 Q0 {'x' * 1_000}{' ' * 2_000_000} 2 1.0 t\n",
}


@pytest.mark.parametrize("case", sorted(GOOD_VARIANTS))
def test_bulk_equals_strict_on_valid_files(write, case):
    p = write(f"{case.replace(' ', '_')}.trec", GOOD_VARIANTS[case])
    expected = _top(read_run(p).run, 2)
    got = read_run_tops([p], 2)[p.stem]
    assert got == expected
    # pool_from_files goes through the same reader
    assert pool_from_files([p], 2).to_pool().documents() == {t: set(d) for t, d in expected.items()}
