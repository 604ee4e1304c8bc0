"""The workbench's git commit is found from the package's own location (a trial found it never was after
the package moved to services/evaluation/: the root was taken one folder too low, and every evaluation
recorded an empty commit)."""

import re
import subprocess
from pathlib import Path

import pytest

import workbench
from workbench.services.evaluation import provenance

CHECKOUT = Path(workbench.__file__).resolve().parent.parent


def test_the_root_is_the_folder_holding_the_package():
    assert provenance._ROOT == CHECKOUT and (provenance._ROOT / "workbench" / "__init__.py").is_file()


@pytest.mark.skipif(not (CHECKOUT / ".git").exists(), reason="not run from a git checkout")
def test_a_checkout_records_its_commit():
    head = subprocess.run(["git", "-C", str(CHECKOUT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    provenance.git_commit.cache_clear()
    got = provenance.git_commit()
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", got) and got.split("-")[0] == head
