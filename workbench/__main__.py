"""``python -m workbench``: the ``workbench`` command line (``workbench.cli.main``), same arguments and exit codes."""

from workbench.cli import run

if __name__ == "__main__":
    run()
