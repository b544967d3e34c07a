# linksim: the two set-up commands of the README, and what they build on.
#   make demo   create .venv, install linksim, start the local Neo4j and print where it is
#   make test   install the current tree into .venv and run unit + integration tests
PYTHON ?= python3
VENV ?= .venv
PIP := $(VENV)/bin/pip

.PHONY: install demo test unit clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# A regular (not editable) install: the tests run against what a user's pip install gives.
install: $(VENV)/bin/python
	$(PIP) install --quiet --upgrade '.[test]'

demo: install
	$(VENV)/bin/linksim demo

test: install
	$(VENV)/bin/pytest

unit: install
	$(VENV)/bin/pytest tests/unit

clean:
	rm -rf $(VENV) build *.egg-info
