"""The typer CLI. Each `cmd_<group>.py` module registers its commands through `register(app)`."""
