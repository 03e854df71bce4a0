check:
	.venv/bin/ruff format --check .
	.venv/bin/ruff check .
	.venv/bin/pyright
	.venv/bin/python -m pytest -q

.PHONY: check
