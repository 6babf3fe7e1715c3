# inkwell — plain Makefile. Honours CC, CFLAGS, LDFLAGS, PREFIX, DESTDIR.
#   make            build ./build/inkwell (a test build: with the test controls,
#                   core/testhooks.h; TEST_HOOKS=0 leaves them out)
#   make release    build ./build/release/inkwell without the test controls
#   make run        install missing Debian packages, build the release, serve on 127.0.0.1:8080
#   make install    install the release build
#   make check      install test dependencies, build, run every suite
#   make bench      wrk benchmark (not part of check)
#   make SANITIZE=address,undefined check   the unit and HTTP suites under ASan + UBSan
#   make SANITIZE=thread check      the unit tests and the threaded HTTP files under TSan
#   make fuzz       libFuzzer targets, each for FUZZ_SECONDS
#   make deb        the Debian package, into build/deb/ (debian/, dpkg-buildpackage)
#   make soak       crash-consistency soak (kill -9 cycles; SOAK_CYCLES, SOAK_PG_CYCLES)

CC       ?= cc
PREFIX   ?= /usr/local
DESTDIR  ?=
PKGS     := libmicrohttpd jansson sqlite3 libpq libcurl libpng zlib libzstd libbrotlienc openssl libzip cairo pangocairo fontconfig \
            icu-uc icu-i18n libsodium cjose
SANITIZE ?=
CFLAGS   ?= -O2 -g
WARN     := -std=c17 -Wall -Wextra -Werror -Wshadow -Wvla -Wformat=2 -Wno-unused-parameter
CPPFLAGS += -D_GNU_SOURCE -Isrc
# The test controls (core/testhooks.h: the test clock, kill and hold hooks) are compiled
# into test builds only, as SQLite's SQLITE_TEST: `make`, `make check` and the sanitizer
# builds have them; `make release` (and so run, install, deb) does not.
# (Their flag is a variable of its own, not CPPFLAGS: dh exports CPPFLAGS, and a variable
# from the environment that a make changes goes down to its sub-makes changed, so the
# release sub-make of `make deb` got the test build's -DINK_TEST_HOOKS.)
TEST_HOOKS ?= 1
ifeq ($(TEST_HOOKS),1)
HOOK_FLAGS := -DINK_TEST_HOOKS
else
HOOK_FLAGS :=
endif
RELEASE  := build/release
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
LIBS     := -lpthread -lm

ifneq ($(findstring thread,$(SANITIZE)),)
# ThreadSanitizer cannot be combined with ASan: its own build directory
BUILD    ?= build/tsan
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
else ifneq ($(SANITIZE),)
BUILD    ?= build/san
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD    ?= build
SANFLAGS :=
endif

SRCS      := $(shell find src -name '*.c' | sort)
LIB_SRCS  := $(filter-out src/main.c,$(SRCS))
# Static files compiled into the binary (core/assets.h), as URL=FILE: every file under
# web/ is served at its path below web/; others are listed by hand.
WEB_FILES := $(sort $(shell find web -type f 2>/dev/null))
ASSETS    := $(foreach f,$(WEB_FILES),$(patsubst web/%,/%,$(f))=$(f)) \
             /api/v1/openapi.json=src/api/openapi.json
ASSET_FILES := $(foreach a,$(ASSETS),$(word 2,$(subst =, ,$(a))))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/gen/assets.o
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
HELPER_SRCS := $(filter-out $(UNIT_SRCS),$(wildcard tests/unit/*.c))
ALL_CFLAGS = $(WARN) $(CPPFLAGS) $(HOOK_FLAGS) $(PKG_CFLAGS) $(CFLAGS) $(SANFLAGS)
ALL_LDFLAGS = $(LDFLAGS) $(SANFLAGS)

.PHONY: all release run check editor-bundle bench fuzz print-pkgs install clean unit deps valgrind soak deb cluster-test FORCE
BENCH_SRCS := $(sort $(wildcard bench/bench_*.c))
BENCH_BINS := $(BENCH_SRCS:bench/bench_%.c=$(BUILD)/bench-%)

all: $(BUILD)/inkwell $(UNIT_BINS) $(BUILD)/bench-baseline $(BENCH_BINS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# The web app's editor (CodeMirror 6), rebuilt from editor/ with its pinned lock file;
# the bundle is committed (make check compares its recorded sha256 with the sources).
editor-bundle:
	editor/build.sh

$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Werror -o $@ $< -lz

# Rewritten when a file or the list changes (the list is kept in assets.list).
$(BUILD)/gen/assets.list: FORCE
	@mkdir -p $(dir $@)
	@echo '$(ASSETS)' | cmp -s - $@ || echo '$(ASSETS)' > $@

$(BUILD)/gen/assets.c: $(BUILD)/tools/embed $(BUILD)/gen/assets.list $(ASSET_FILES)
	$(BUILD)/tools/embed $@ $(ASSETS)

$(BUILD)/gen/assets.o: $(BUILD)/gen/assets.c
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/libinkwell.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/inkwell: $(BUILD)/src/main.o $(BUILD)/libinkwell.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(HELPER_SRCS) $(BUILD)/libinkwell.a tests/unit/test.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(HELPER_SRCS) $(BUILD)/libinkwell.a $(ALL_LDFLAGS) $(PKG_LIBS) $(LIBS)

$(BUILD)/bench-baseline: bench/baseline.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS) $(PKG_LIBS) $(LIBS)

$(BUILD)/bench-%: bench/bench_%.c $(BUILD)/libinkwell.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libinkwell.a $(ALL_LDFLAGS) $(PKG_LIBS) $(LIBS)

deps:
	@scripts/deps.sh build

# The binary people run: no test controls, its own objects (build/release).
release:
	@$(MAKE) --no-print-directory BUILD=$(RELEASE) TEST_HOOKS=0 SANITIZE= $(RELEASE)/inkwell

run: deps
	@$(MAKE) --no-print-directory release
	@BUILD=$(RELEASE) scripts/run.sh

# What `make check` runs (tests/run.sh; docs/testing.md says why each pass runs what):
# every group plainly; the sanitizer passes the unit tests and the HTTP suite (the
# browser and OpenAPI checks drive the same server code through the same routes), and
# under ThreadSanitizer only the HTTP files whose servers run threads against each
# other: streams, jobs, revisions, leases, the record cache, several processes.
ifneq ($(findstring thread,$(SANITIZE)),)
SUITES     ?= units http
# test_openai drives the provider's HTTP client against a fake server on one thread, with
# the fake's timing: nothing of inkwell's threads against each other, and TSan's slowness
# only moves its timing
UNIT_SKIP  ?= test_openai
HTTP_TESTS ?= test_stream.py test_jobs.py test_revisions.py test_leases.py test_actions.py \
              test_idempotency.py test_documents.py test_pg_stream.py test_pg_events.py \
              test_pg_revisions.py test_pg_actions.py test_pg_multi.py test_pg_drain.py \
              test_webhooks.py test_pg_webhooks.py
else ifneq ($(SANITIZE),)
SUITES     ?= units http
HTTP_TESTS ?=
UNIT_SKIP  ?=
# the HTTP suite on PostgreSQL only: every route and the PostgreSQL store; SQLite's
# store is the valgrind pass's (`make valgrind`), so CI stays under its hour
# (BACKENDS="sqlite postgres" runs both)
BACKENDS   ?= postgres
else
SUITES     ?= units http web openapi
HTTP_TESTS ?=
UNIT_SKIP  ?=
endif

check:
	@scripts/deps.sh test
	@scripts/check-editor-bundle.sh
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) SUITES="$(SUITES)" HTTP_TESTS="$(HTTP_TESTS)" UNIT_SKIP="$(UNIT_SKIP)" BACKENDS="$(or $(BACKENDS),sqlite postgres)" tests/run.sh

unit: $(UNIT_BINS)
	@for t in $(UNIT_BINS); do $$t || exit 1; done

bench:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) bench/run.sh

fuzz:
	@scripts/deps.sh test
	@tests/fuzz/run.sh

# The pkg-config packages the program links (for tests/fuzz/run.sh, which builds with
# clang on its own): one list, here.
print-pkgs:
	@echo $(PKGS)

# Crash-consistency soak (tests/soak/soak.py): SOAK_CYCLES kill -9 cycles on SQLite
# (default 100), SOAK_PG_CYCLES on PostgreSQL (default 20, every fourth killing the
# database), then a full disk. Needs root for the tmpfs. Not part of check.
soak:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory all
	@INKWELL_BIN=$(CURDIR)/$(BUILD)/inkwell INKWELL_TEST_LOGDIR=$$(mktemp -d /tmp/inkwell-soak.XXXXXX) \
		python3 tests/soak/soak.py

# The whole black-box suite (SQLite) with every server under valgrind: any memory
# error or definite leak makes a server exit 99 and its test fail. Through tests/run.sh,
# so two workers share its modules (a server under valgrind mostly waits, as the suite's
# tests do: one at a time left a core idle for half an hour of CI).
valgrind:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory all
	@INKWELL_TEST_VALGRIND=1 BUILD=$(BUILD) SUITES=http BACKENDS=sqlite HTTP_TESTS="$(HTTP_TESTS)" tests/run.sh

install: release
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(RELEASE)/inkwell $(DESTDIR)$(PREFIX)/bin/inkwell

# The Debian package: the source (tracked and new files, not build/) is copied to
# build/deb/inkwell-VERSION and built there, so every output lands in build/deb/.
VERSION := $(shell sed -n 's/.*INKWELL_VERSION "\(.*\)"/\1/p' src/core/version.h)
DEB_DIR := build/deb
deb:
	@scripts/deps.sh deb
	@rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/inkwell-$(VERSION)
	@if git rev-parse --git-dir >/dev/null 2>&1; then \
	  git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} sh -c 'test -e "{}" && printf "%s\0" "{}"' | \
	    tar --null -T - -cf - | tar -C $(DEB_DIR)/inkwell-$(VERSION) -xf - ; \
	else tar --exclude=./build -cf - . | tar -C $(DEB_DIR)/inkwell-$(VERSION) -xf - ; fi
	cd $(DEB_DIR)/inkwell-$(VERSION) && dpkg-buildpackage -us -uc -b
	@ls -1 $(DEB_DIR)/*.deb

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# A real deployment on 127.0.0.1 under load with faults (tests/cluster/cluster.py):
# nginx, three servers, PgBouncer (transaction pooling), a PostgreSQL primary and a
# synchronous standby; a rolling restart, kill -9, a failover, a PgBouncer restart.
# Prints the figures of each; under 10 minutes. Not part of check.
cluster-test:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory $(BUILD)/inkwell
	@INKWELL_BIN=$(CURDIR)/$(BUILD)/inkwell timeout 600 python3 tests/cluster/cluster.py
