# linksim: the two set-up commands of the README, and what they build on.
#   make demo   create .venv, install linksim, run `linksim demo` (Neo4j, Wikispeedia, related pages)
#   make docs   build the documentation site into site/ (warnings are errors)
#   make test   install the current tree into .venv and run unit + integration tests (with the
#               headless-browser test: Debian's chromium and chromium-driver are installed if missing)
PYTHON ?= python3
VENV ?= .venv
PIP := $(VENV)/bin/pip

.PHONY: install browser demo test unit docs docs-picture jars-lock clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# A regular (not editable) install: the tests run against what a user's pip install gives.
# setuptools stages the package in build/ and keeps what an earlier build left there: a module
# moved or removed since would still be installed, hiding a broken import. Start from nothing.
install: $(VENV)/bin/python
	rm -rf build
	$(PIP) install --quiet --upgrade '.[test,docs]'

demo: install
	$(VENV)/bin/linksim demo

# Debian's Chromium and ChromeDriver for the Neo4j Browser test (no browser download at test time).
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing Debian's chromium and chromium-driver for the browser test"; \
	  apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null && apt-get install -y -q chromium chromium-driver >/dev/null; }; \
	else echo "no chromium: the browser test will say so (install chromium and chromium-driver)"; fi

# Two workers (pytest-xdist): one runs the integration tests in their order against one Neo4j
# (tests/conftest.py schedules them as one unit), the other the unit tests beside them.
test: install browser
	$(VENV)/bin/pytest -n 2

# The docs site into site/, strict: a broken link, a missing reference or any warning fails it. The
# console script, not `python -m mkdocs`, so the API reference reads the installed package.
docs: install
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(VENV)/bin/mkdocs build --strict

# The README's picture of Neo4j Browser: the Browser test's screenshot of a page's related pages,
# taken against a real server by headless Chromium.
docs-picture: install browser
	$(VENV)/bin/pytest -n 0 -p no:cacheprovider tests/integration/browser -k related_pages
	cp test-output/browser/related-pages.png docs/images/related-pages.png

unit: install
	$(VENV)/bin/pytest tests/unit

# server/jars.lock, after a change of the Neo4j or Browser version (linksim.server.settings): the
# jars Maven resolves for the local server, which a first start downloads side by side.
jars-lock: install
	$(VENV)/bin/python -P -c "from pathlib import Path; from linksim.server.artifacts import write_jar_lock; \
	print(write_jar_lock(Path('server/jars.lock')), 'jars in server/jars.lock')"

clean:
	rm -rf $(VENV) build site *.egg-info
