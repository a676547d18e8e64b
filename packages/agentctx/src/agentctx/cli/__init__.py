"""The typer CLI: one module per command (or sub-app), each with `register(app)`, listed in `app.py`."""
