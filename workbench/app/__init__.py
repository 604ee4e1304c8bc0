"""The Streamlit judging app (edge): ``streamlit_app.py`` plus ``app_pages/``.

Started by ``workbench ui``; the database path comes from ``WORKBENCH_DB``.
Pages are thin views over ``workbench.services.judging``.
"""

from pathlib import Path

APP_PATH = Path(__file__).with_name("streamlit_app.py")
"""The entrypoint file passed to ``streamlit run``."""
