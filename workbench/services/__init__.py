"""Services: orchestration shared by the CLI and the Streamlit app (store + pure rules)."""
