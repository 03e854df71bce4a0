check:
	.venv/bin/ruff format --check .
	.venv/bin/ruff check .
	.venv/bin/pyright
	.venv/bin/lint-imports
	.venv/bin/python -m pytest -q -n 2 --dist loadfile

.PHONY: check
