"""The Streamlit judging app (edge): ``streamlit_app.py`` plus ``app_pages/``.

Started by ``workbench ui``; the database path comes from ``WORKBENCH_DB``.
Pages are thin views over ``workbench.services.judging.assessments``.
"""

from pathlib import Path

APP_PATH = Path(__file__).with_name("streamlit_app.py")
"""The entrypoint file passed to ``streamlit run``."""

STORE_LINGER_S = 2.0
"""Seconds the app keeps the database file open after its last operation, so
bursts of short operations (every rerun reads the queue) do not reopen the
file each time; the store still hands the file over within 50 ms to a waiting
process (a lead's CLI command). See ``workbench.store.core``."""
