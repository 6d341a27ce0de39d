# kc: a keychain for the command line.
#   make install   install what is missing, build, install kc, its man page and completions
#   make test      install what the tests need, then run every test (unit, end-to-end, FTP, fuzz smoke)
#   make bench     install what the benchmark needs, build the release binary, measure kc beside
#                  pass and secret-tool (bench/results/; Docs/bench.md and Docs/bench.svg)
#   make deb       a Debian package of the release binary (.build/packages/kc_VERSION_ARCH.deb)
#   make dist      a release tarball that needs no Swift (.build/packages/kc-VERSION-linux-ARCH.tar.gz)
# Only `deps`, `test-deps`, `bench-deps` and the first three commands above install system packages (apt); `build`,
# `release`, `unit-test` and the other targets never do. The tests' Python packages go into a
# virtual environment under .build/, never into the system Python.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(DESTDIR)$(PREFIX)/bin
MANDIR = $(DESTDIR)$(PREFIX)/share/man/man1
BASHDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHDIR = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
# Holds `security`, a link to kc, for scripts written for macOS: on PATH only where a user puts it.
SECURITYDIR = $(DESTDIR)$(PREFIX)/lib/kc/security-compat

SHELL := /bin/bash
SWIFT ?= swift
PYTHON ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BUILD_PACKAGES = libsodium-dev libzxcvbn-dev libcurl4-openssl-dev libssl-dev pkg-config
TEST_PACKAGES = dpkg-dev lintian curl openssl git git-filter-repo procps util-linux strace zsh fish man-db mandoc python3-venv xvfb xclip xsel wl-clipboard sway keepassxc faketime
# The benchmark's tools and the peers it measures kc beside (make test runs it once on a tiny vault).
BENCH_PACKAGES = hyperfine time gnuplot-nox pass gnupg libsecret-tools gnome-keyring dbus python3-dbus
VENV = .build/venv
VENV_PYTHON = $(VENV)/bin/python3
DEBUG_BIN = .build/debug/kc
RELEASE_BIN = .build/release/kc
# The one release build (install, the e2e tests, deb, dist): the Swift runtime linked in statically,
# and no RUNPATH ($ORIGIN): the binary runs on a Debian 12 machine without the toolchain
# (Tests/packaging/check-binary.sh checks it; Docs/PACKAGING.md).
RELEASE_FLAGS = -c release --static-swift-stdlib --disable-local-rpath
PACKAGES_DIR = .build/packages

.PHONY: all build release install uninstall deps test-deps bench-deps venv test unit-test e2e-test bench docs fuzz fuzz-smoke stress clean deb dist check-release

all: release

# Installs the Debian packages in $(1) that are not installed yet.
define apt_install
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; fi
endef

deps:
	$(call apt_install,$(BUILD_PACKAGES))

test-deps: deps
	$(call apt_install,$(TEST_PACKAGES) $(BENCH_PACKAGES))
	@$(MAKE) --no-print-directory venv

# The tests' Python packages (Tests/e2e/requirements.txt), in a virtual environment.
venv: $(VENV)/.installed
$(VENV)/.installed: Tests/e2e/requirements.txt
	@$(PYTHON) -c "import ensurepip" 2>/dev/null || { echo "python3-venv is missing: run make test-deps" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(VENV_PYTHON) -m pip install --quiet --disable-pip-version-check -r Tests/e2e/requirements.txt
	@touch $@

build:
	$(SWIFT) build --product kc

release:
	$(SWIFT) build $(RELEASE_FLAGS) --product kc

# Fails unless the release binary has no RUNPATH, needs no glibc newer than Debian 12's (2.36)
# and no Swift runtime library.
check-release: release
	Tests/packaging/check-binary.sh $(RELEASE_BIN)

# Packages (Docs/PACKAGING.md): both strip the release binary and check it with check-binary.sh.
# Building the .deb needs dpkg-dev (make test-deps installs it and lintian, which the tests run).
deb: release
	packaging/deb.sh $(RELEASE_BIN) $(PACKAGES_DIR)

dist: release
	packaging/dist.sh $(RELEASE_BIN) $(PACKAGES_DIR)

install: deps
	@$(MAKE) --no-print-directory release
	install -d $(BINDIR) $(MANDIR) $(BASHDIR) $(ZSHDIR) $(FISHDIR) $(SECURITYDIR)
	install -m 0755 $(RELEASE_BIN) $(BINDIR)/kc
	ln -sfn kc $(BINDIR)/git-credential-kc
	ln -sfn $(PREFIX)/bin/kc $(SECURITYDIR)/security
	install -m 0644 Docs/kc.1 $(MANDIR)/kc.1
	install -m 0644 completions/kc.bash $(BASHDIR)/kc
	install -m 0644 completions/_kc $(ZSHDIR)/_kc
	install -m 0644 completions/kc.fish $(FISHDIR)/kc.fish

uninstall:
	rm -f $(BINDIR)/kc $(BINDIR)/git-credential-kc $(MANDIR)/kc.1 $(BASHDIR)/kc $(ZSHDIR)/_kc $(FISHDIR)/kc.fish
	rm -f $(SECURITYDIR)/security
	-rmdir $(SECURITYDIR) $(DESTDIR)$(PREFIX)/lib/kc 2>/dev/null

# Regenerates the man page and completions from the command table (tests check they match).
docs: build
	$(DEBUG_BIN) __man > Docs/kc.1
	$(DEBUG_BIN) completions bash > completions/kc.bash
	$(DEBUG_BIN) completions zsh > completions/_kc
	$(DEBUG_BIN) completions fish > completions/kc.fish

# UNIT_XML / E2E_XML / FUZZ_RESULTS: where the runners write their own summaries (make test reads them).
unit-test:
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-swift-testing --parallel --num-workers 2 $(if $(UNIT_XML),--xunit-output $(UNIT_XML))

# The debug build (with the test-only fault seam) under test; the release build too, for the test
# that it has no fault seam, and the packages made from it (test_packages.py installs and runs them).
e2e-test: venv build release deb dist
	KC_BIN=$(CURDIR)/$(DEBUG_BIN) KC_RELEASE_BIN=$(CURDIR)/$(RELEASE_BIN) KC_PACKAGES=$(CURDIR)/$(PACKAGES_DIR) $(VENV_PYTHON) -m pytest -q Tests/e2e $(if $(E2E_XML),--junitxml=$(E2E_XML))

# Runs every phase even when one fails, keeping each one's output, exit status and the runner's own
# summary (xUnit/JUnit XML from swift test and pytest, a results file from the fuzz run) in
# $(TEST_LOGS); Tests/summary.py decides from the exit statuses and those summaries (never from log
# text), prints each phase's outcome and the totals ("kc: N passed, N failed, N skipped") and fails
# when any phase failed.
TEST_LOGS = .build/test-logs
test: test-deps
	@rm -rf $(TEST_LOGS); mkdir -p $(TEST_LOGS)
	@$(MAKE) --no-print-directory unit-test UNIT_XML=$(CURDIR)/$(TEST_LOGS)/unit.xml > >(tee $(TEST_LOGS)/unit.log) 2>&1; echo $$? > $(TEST_LOGS)/unit.status
	@$(MAKE) --no-print-directory e2e-test E2E_XML=$(CURDIR)/$(TEST_LOGS)/e2e.xml > >(tee $(TEST_LOGS)/e2e.log) 2>&1; echo $$? > $(TEST_LOGS)/e2e.status
	@FUZZ_RESULTS=$(CURDIR)/$(TEST_LOGS)/fuzz.tsv $(MAKE) --no-print-directory fuzz-smoke > >(tee $(TEST_LOGS)/fuzz.log) 2>&1; echo $$? > $(TEST_LOGS)/fuzz.status
	@$(VENV_PYTHON) Tests/summary.py $(TEST_LOGS)

# Fuzzing: libFuzzer targets in Tests/Fuzz (vault parser, CLI parser), seeded
# with Docs/vectors and Tests/Fuzz/corpus. `make fuzz` runs each for FUZZ_SECONDS and merges new
# interesting inputs into Tests/Fuzz/corpus (commit them); `make test` runs fuzz-smoke, 60 s each.
FUZZ_SECONDS ?= 300
fuzz:
	Tests/Fuzz/run.sh -t $(FUZZ_SECONDS) --merge

fuzz-smoke:
	Tests/Fuzz/run.sh -t 60

# Release scale: the vault tests of Tests/e2e/vault with KC_STRESS=1 (20,000 kills,
# ~2,500 truncation lengths, 3,000 bit flips, 16 x 200 concurrent adds, 1,000 failed reads each), the merge's
# properties on 100 random histories (10,000 checks), 3,000 random sync scenarios against the model (20 more
# through the built kc and real git), and kill -9 before and after every git command and file step of `kc sync`. Uses the debug build,
# which has the test-only fault seam. Each test prints its figure in the summary.
stress: venv build
	KC_STRESS=1 KC_SYNC_E2E_SCENARIOS=20 KC_BIN=$(CURDIR)/$(DEBUG_BIN) $(VENV_PYTHON) -m pytest -q Tests/e2e/vault Tests/e2e/test_sync_crash.py Tests/e2e/test_sync_random.py
	KC_SYNC_WORLDS=100 KC_SYNC_CHECKS=100 swift test --disable-swift-testing --filter KCSyncTests.MergePropertyTests
	KC_SYNC_MODEL_SCENARIOS=3000 swift test --skip-build --disable-swift-testing --filter KCSyncTests.SyncModelTests

bench-deps: deps
	$(call apt_install,$(BENCH_PACKAGES))

# Vaults of BENCH_SIZES items (default 1000,10000,100000; about 6 minutes on 2 cores). The latest table
# and curves are copied to Docs/ for the README.
bench: bench-deps
	@$(MAKE) --no-print-directory release
	$(PYTHON) Tests/bench/bench.py $(RELEASE_BIN) --out bench/results
	cp bench/results/latest.md Docs/bench.md
	cp bench/results/latest.svg Docs/bench.svg

clean:
	rm -rf .build
