# The verbs a person types. Each sets up .venv first (once), so a fresh clone
# needs nothing but Python 3.10+ and make.
PYTHON ?= python3
# the PDF's paper: letter or a4 (make pdf PAPER=a4)
PAPER ?= letter
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JB     := $(BIN)/jupyter-book
# Debian packages for the PDF (TeX Live with XeTeX, latexmk, xindy, FreeFont and DejaVu:
# Greek and symbols) and for the tests that read it (poppler-utils) and open the HTML pages
# in a browser (chromium), the sandbox `make grade` runs each submission in
# (bubblewrap), the PostgreSQL server the gradebook tests start (postgresql), and the
# course hub (make hub): Debian's Python with venv for the users' environment (python3-venv)
# (npm, for JupyterHub's proxy and MathJax, is checked below).
# `make system-deps` installs the missing ones, as root.
SYSTEM_PACKAGES := texlive-xetex texlive-latex-recommended texlive-latex-extra \
	texlive-fonts-recommended latexmk xindy fonts-freefont-otf fonts-dejavu-core \
	poppler-utils chromium bubblewrap postgresql python3-venv acl

.PHONY: help setup system-deps mathjax book pdf test test-fast lint docs lab bench clean check class-list assignments calibrate grade export \
	hub hub-stop hub-clear-exchange publish

help:
	@echo "make book   build the HTML book into _build/html (executes every chapter)"
	@echo "make pdf    build the PDF book into _build/latex/memcourse.pdf (needs TeX Live;"
	@echo "            US Letter, or PAPER=a4)"
	@echo "make test   run every test, the book build included (CI runs this)"
	@echo "make test-fast  the maintainer's loop: memkit, the derivations, the chapters' numbers, the questions, the grader's units"
	@echo "make docs   the documentation of docs/ as a site in _build/docs (strict, links checked)"
	@echo "make lab    open JupyterLab; chapters open as notebooks, widgets are live (ROLE=instructor)"
	@echo "make check  run the visible tests of your notebooks (NB=exercises/session-3/exit-test.ipynb; ID=alice sets your student id;"
	@echo "            GRADE=1 NB=... grades it with the course's grader: right or wrong per question)"
	@echo "make class-list  every student's seat (ADD=\"alice bob\" seats new students)"
	@echo "make assignments  regenerate exercises/ and the session pages from solutions/"
	@echo "make calibrate  before a term: every graded question tried on 200 ids, honest answers and slips (IDS=, SEEDS=, JOBS=)"
	@echo "make grade  autograde submitted/ (ASSIGNMENTS=, SUBMITTED=, ZIP=, TIMEOUT=, JOBS=, SCHEDULER=, LMS= ROSTER=)"
	@echo "make export LMS=canvas|moodle ROSTER=roster.csv  the grades as the LMS's import CSV"
	@echo "make hub   the course on a local JupyterHub (as root): users, exchange, lab; HUB_PORT="
	@echo "           (ONE_UNIX_USER=1: every student's server as one Unix user, as on Kubernetes)"
	@echo "make hub-stop  stop it"
	@echo "make publish  (on the hub, in the instructor's ~/memcourse) a changed schedule, extensions or chapter to the gradebook and the students"
	@echo "make bench  time every figure's update (Python, then key press to picture in the lab), weigh the heaviest page, time class grading,"
	@echo "            Lighthouse on a phone: the start page and the three heaviest chapters"
	@echo "make clean  remove _build (the execution cache included)"
	@echo "make system-deps  install the Debian packages that pdf and test need (as root)"

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# Missing Debian packages are installed when run as root; otherwise listed, and make stops.
system-deps:
	@missing=""; \
	for p in $(SYSTEM_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	command -v npm >/dev/null || missing="$$missing npm"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "Missing Debian packages:$$missing"; \
	  echo "Install them as root: apt-get install --no-install-recommends$$missing"; \
	  exit 1; \
	fi; \
	echo "Installing Debian packages:$$missing"; \
	apt-get update -q && \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing

# MathJax from the npm registry into _build/offline, served by the HTML book itself
mathjax:
	$(PYTHON) -m tools.book.vendor_mathjax

book: $(STAMP) mathjax
	$(BIN)/python -m tools.book.execution_cache
	$(JB) build . --builder html -W --keep-going

# from a clean _build/latex: a failed build leaves it looking up to date to the next one;
# MathJax too, as the HTML book: the configuration names its folder (html_extra_path)
pdf: $(STAMP) system-deps mathjax
	rm -rf _build/latex
	$(BIN)/python -m tools.book.execution_cache
	MEMCOURSE_PAPER=$(PAPER) $(JB) build . --builder pdflatex -W --keep-going
	@echo "PDF: _build/latex/memcourse.pdf"

test: $(STAMP) system-deps mathjax lint
	$(BIN)/python -m pytest

# every test without a slow marker (tests/conftest.py): no book build, browser, hub,
# sandboxed class, cluster or nbgrader round trip
test-fast: $(STAMP) lint
	$(BIN)/python -m pytest -m "not (book or pdf or browser or hub or sandbox or cluster or slow)"

lint: $(STAMP)
	$(BIN)/ruff check .

# docs/*.md as a small site (Sphinx and MyST), every warning an error: a broken link or
# heading anchor fails it
docs: $(STAMP)
	$(BIN)/python -m sphinx -W --keep-going -q -b html docs _build/docs
	@echo "docs: _build/docs/index.html"

# the course folder as JupyterLab's root (book/ and exercises/ both reachable), opened on
# book/, with the course's configuration (jupyter/, see tools/lab/launch.py): chapters drawn as
# the book and saved unchanged; ROLE=instructor adds nbgrader's instructor tools.
ROLE ?= student
lab: $(STAMP)
	$(BIN)/python -m tools.lab.launch --role $(ROLE)

# The student's loop: run the visible tests; NB= one or more notebooks (default: the
# notebooks under exercises/ you changed, or all of them). ID= sets your student id once
# (the exit tests draw your own numbers from it), then stops. GRADE=1 (a clone with
# solutions/, after trying): NB= graded by the course's own grader for your id, right or
# wrong per question, and its feedback page (tools/lab/self_grade.py).
check: $(STAMP)
	$(BIN)/python -m $(if $(ID),tools.lab.notebook_check --id $(ID),$(if $(GRADE),tools.lab.self_grade,tools.lab.notebook_check) $(NB))

# The class list (class-list.csv): ADD="alice bob" gives new students the next seats (the
# order of their options, balanced over the class); without ADD, every student's seat.
class-list: $(STAMP)
	$(BIN)/python -m memkit.class_list $(if $(ADD),add $(ADD),show)

# exercises/ (nbgrader's release) and book/session-N.md, generated from solutions/
assignments: $(STAMP)
	$(BIN)/python -m tools.release

# Before a term: every graded question calibrated (tools/grading/calibration): the reference
# method for IDS= student ids (default 200), SEEDS= honest answers per id of a Monte Carlo
# answer (default 10), plausible slips; the report in _build/calibration/ (calibration.csv,
# slips.csv, calibration.html). JOBS= worker processes (default 2). Exits 1 on a failure
# the catalog does not list.
calibrate: $(STAMP)
	$(BIN)/python -m tools.grading.calibration $(if $(IDS),--ids $(IDS)) $(if $(SEEDS),--seeds $(SEEDS)) \
	  $(if $(JOBS),--jobs $(JOBS))

# The instructor's loop: autograde every submission (submitted/<student>/<assignment>/, or
# ZIP= a class archive as nbgrader zip_collect expects), feedback, grades.csv, a report.
# ASSIGNMENTS= which (default all), SUBMITTED= another tree, TIMEOUT= seconds per cell,
# JOBS= workers of the local Dask cluster (default one per core), SCHEDULER= the address
# of an existing Dask cluster instead (tcp://host:8786; the gradebook must then be a
# PostgreSQL server, MEMCOURSE_DB_URL), GRADE_ARGS= more options (python -m tools.grading -h).
# Every kernel runs in a bubblewrap sandbox (tools/grading/box.py; README, "Grading safely").
grade: $(STAMP)
	$(BIN)/python -m tools.grading $(ASSIGNMENTS) \
	  $(if $(SUBMITTED),--submitted $(SUBMITTED)) $(if $(ZIP),--zip $(ZIP)) \
	  $(if $(TIMEOUT),--cell-timeout $(TIMEOUT)) $(if $(JOBS),--jobs $(JOBS)) \
	  $(if $(SCHEDULER),--scheduler $(SCHEDULER)) $(if $(LMS),--lms $(LMS) --roster $(ROSTER)) \
	  $(GRADE_ARGS)

# The class's grades as the LMS's import file (tools/grading/lms.py, nbgrader export plugins):
# LMS=canvas|moodle, ROSTER= the CSV of students the LMS exports (its gradebook export).
export: $(STAMP)
	$(BIN)/python -m tools.grading.lms $(LMS) $(ROSTER)

# The course on a local JupyterHub on 127.0.0.1 (tools/hub/local.py, tools/hub/jupyterhub_config.py),
# as root: Unix users mc-instructor, mc-student1, mc-student2 (passwords printed), nbgrader's
# exchange /srv/nbgrader/exchange (a file system of its own, EXCHANGE_MB=, default 1024; its
# course folders the instructor's; submissions of at most SUBMISSION_MB=, default 20), the
# users' environment /srv/memcourse/venv; HUB_PORT= (default 8000, or a free port); each
# user's limits HUB_LIMITS=memory_mb=2048,pids=256,cpus=1.0,home_mb=1024,... (docs/hub.md).
# TAS="mc-ta1 mc-ta2": teaching assistants, graders of the course (tools/hub/staff.py).
# ONE_UNIX_USER=1: every student's server runs as one Unix user, mc-pod, as pods do on
# Kubernetes; the exchange is then the course's service behind the hub's authentication
# (tools/hub/hub_exchange.py).
# make hub-stop stops it by PID, then every process of its users, and removes their files
# from /tmp, /dev/shm and /run/lock.
hub: $(STAMP) system-deps
	$(BIN)/python -m tools.hub start $(if $(HUB_PORT),--port $(HUB_PORT)) $(if $(TAS),--tas "$(TAS)") \
	  $(if $(EXCHANGE_MB),--exchange-size $(EXCHANGE_MB)) \
	  $(if $(SUBMISSION_MB),--submission-size $(SUBMISSION_MB)) \
	  $(if $(HUB_LIMITS),--limits $(HUB_LIMITS)) $(if $(ONE_UNIX_USER),--one-unix-user)

# On the course hub, in the instructor's course folder (~/memcourse, the one to edit once the
# hub exists): a changed schedule.yml or extensions.yml carried everywhere it shows: the
# due dates and extensions into nbgrader's gradebook (Formgrader), the start page, then the
# book, start page and schedule published to the repository the students pull (nbgitpuller;
# tools/hub/course_repo.py). nbgrader's `alembic` must be on PATH for a new gradebook.
publish: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m tools.grading.lateness
	$(BIN)/python -m tools.release.start_page
	$(BIN)/python -m tools.hub.course_repo

hub-stop: $(STAMP)
	$(BIN)/python -m tools.hub stop

# A new term: the exchange emptied (released assignments, every student's share, feedback).
hub-clear-exchange: $(STAMP)
	$(BIN)/python -m tools.hub clear-exchange

# figure updates in Python, key press to new picture in the lab (a real browser), the first
# load of the heaviest page of the HTML book (built first), class grading against plain
# sequential nbgrader, then Lighthouse's mobile audit of the start page and the three
# heaviest chapters, which fails the bench when a page misses a target
bench: $(STAMP) book
	$(BIN)/python benchmarks/figures.py
	$(BIN)/python benchmarks/lab_figures.py
	$(BIN)/python benchmarks/book_weight.py
	$(BIN)/python benchmarks/grading.py
	$(BIN)/python benchmarks/lighthouse.py

clean:
	rm -rf _build
