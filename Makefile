# kc: a keychain for the command line.
#   make install   install what is missing, build, install kc, its man page and completions
#   make test      install what the tests need, then run every test (unit, end-to-end, FTP)
#   make bench     print the benchmark figures
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(DESTDIR)$(PREFIX)/bin
MANDIR = $(DESTDIR)$(PREFIX)/share/man/man1
BASHDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHDIR = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d

SHELL := /bin/bash
SWIFT ?= swift
PYTHON ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BUILD_PACKAGES = libsodium-dev libcurl4-openssl-dev pkg-config
TEST_PACKAGES = curl openssl git procps util-linux strace zsh fish man-db
PYTHON_MODULES = pytest pexpect pyftpdlib OpenSSL
PYTHON_PACKAGES = pytest pexpect pyftpdlib pyopenssl
DEBUG_BIN = .build/debug/kc
RELEASE_BIN = .build/release/kc

.PHONY: all build release install uninstall deps test-deps test unit-test e2e-test bench docs fuzz fuzz-smoke stress clean

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
	$(call apt_install,$(TEST_PACKAGES))
	@$(PYTHON) -c "import $(shell echo $(PYTHON_MODULES) | tr ' ' ',')" 2>/dev/null || \
	  $(PYTHON) -m pip install --quiet --disable-pip-version-check $(PYTHON_PACKAGES)

build: deps
	$(SWIFT) build --product kc

release: deps
	$(SWIFT) build -c release --product kc

install: release
	install -d $(BINDIR) $(MANDIR) $(BASHDIR) $(ZSHDIR) $(FISHDIR)
	install -m 0755 $(RELEASE_BIN) $(BINDIR)/kc
	install -m 0644 Docs/kc.1 $(MANDIR)/kc.1
	install -m 0644 completions/kc.bash $(BASHDIR)/kc
	install -m 0644 completions/_kc $(ZSHDIR)/_kc
	install -m 0644 completions/kc.fish $(FISHDIR)/kc.fish

uninstall:
	rm -f $(BINDIR)/kc $(MANDIR)/kc.1 $(BASHDIR)/kc $(ZSHDIR)/_kc $(FISHDIR)/kc.fish

# Regenerates the man page and completions from the command table (tests check they match).
docs: build
	$(DEBUG_BIN) __man > Docs/kc.1
	$(DEBUG_BIN) __completion bash > completions/kc.bash
	$(DEBUG_BIN) __completion zsh > completions/_kc
	$(DEBUG_BIN) __completion fish > completions/kc.fish

unit-test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-swift-testing

e2e-test: test-deps build
	KC_BIN=$(CURDIR)/$(DEBUG_BIN) $(PYTHON) -m pytest -q Tests/e2e

# Every phase's output is kept in $(TEST_LOGS); the last line totals them ("N passed, N failed").
TEST_LOGS = .build/test-logs
test: test-deps
	@mkdir -p $(TEST_LOGS)
	set -o pipefail; $(MAKE) --no-print-directory unit-test 2>&1 | tee $(TEST_LOGS)/unit.log
	set -o pipefail; $(MAKE) --no-print-directory e2e-test 2>&1 | tee $(TEST_LOGS)/e2e.log
	set -o pipefail; $(MAKE) --no-print-directory fuzz-smoke 2>&1 | tee $(TEST_LOGS)/fuzz.log
	@$(PYTHON) Tests/summary.py $(TEST_LOGS)

# Fuzzing (issue 3, test 10): libFuzzer targets in Tests/Fuzz (vault parser, CLI parser), seeded
# with Docs/vectors and Tests/Fuzz/corpus. `make fuzz` runs each for FUZZ_SECONDS and merges new
# interesting inputs into Tests/Fuzz/corpus (commit them); `make test` runs fuzz-smoke, 60 s each.
FUZZ_SECONDS ?= 300
fuzz: deps
	Tests/Fuzz/run.sh -t $(FUZZ_SECONDS) --merge

fuzz-smoke: deps
	Tests/Fuzz/run.sh -t 60

# Issue 3 at release scale: the vault tests of Tests/e2e/vault with KC_STRESS=1 (20,000 kills,
# ~2,500 truncation lengths, 3,000 bit flips, 16 x 200 concurrent adds, 1,000 failed reads each). Uses the debug build,
# which has the test-only fault seam. Each test prints its figure in the summary.
stress: test-deps build
	KC_STRESS=1 KC_BIN=$(CURDIR)/$(DEBUG_BIN) $(PYTHON) -m pytest -q Tests/e2e/vault

bench: release
	$(PYTHON) Tests/bench/bench.py $(RELEASE_BIN)

clean:
	rm -rf .build
