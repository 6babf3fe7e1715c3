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
#   make lazystubs  rewrite the stubs of the libraries loaded at first use (core/lazylib.h)
#   make deb        the Debian package, into build/deb/ (debian/, dpkg-buildpackage)
#   make soak       crash-consistency soak (kill -9 cycles; SOAK_CYCLES, SOAK_PG_CYCLES)

CC       ?= cc
PREFIX   ?= /usr/local
DESTDIR  ?=
PKGS     := libmicrohttpd jansson sqlite3 libpq libcurl libpng zlib libzstd libbrotlienc openssl libzip cairo pangocairo fontconfig \
            icu-uc icu-i18n libsodium cjose nettle
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
# Loaded at their first use, not linked (core/lazylib.h: an idle server maps only what
# it uses; docs/benchmarks.md "Idle memory"): their headers are used, their functions
# are the stubs `make lazystubs` writes. debian/control names their packages.
LAZY_PKGS := libpq libcurl openssl libzip cairo pangocairo fontconfig cjose icu-uc icu-i18n
PKG_LIBS   = $(shell pkg-config --libs $(filter-out $(LAZY_PKGS),$(PKGS)) 2>/dev/null)
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

.PHONY: lazystubs print-link-pkgs all release run check editor-bundle bench fuzz print-pkgs install clean unit deps valgrind soak deb cluster-test FORCE
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

# The stubs of the libraries loaded at first use (tools/lazystubs.py; committed, so a
# build needs no Python). A new function of one of them: add it here, `make lazystubs`.
LAZY_CURL   := curl_easy_cleanup,curl_easy_escape,+curl_easy_getinfo,curl_easy_init,curl_easy_perform,curl_easy_reset,+curl_easy_setopt,curl_easy_strerror,curl_escape,curl_free,curl_getdate,curl_global_cleanup,curl_global_init,curl_share_cleanup,curl_share_init,+curl_share_setopt,curl_slist_append,curl_slist_free_all,curl_url,curl_url_cleanup,curl_url_get,curl_url_set
LAZY_PQ     := PQbackendPID,PQclear,PQcmdTuples,PQconnectdb,PQconnectdbParams,PQconninfoFree,PQconninfoParse,PQconsumeInput,PQerrorMessage,PQescapeIdentifier,PQexec,PQexecParams,PQexecPrepared,PQfinish,PQfreemem,PQgetResult,PQgetisnull,PQgetlength,PQgetvalue,PQnotifies,PQntuples,PQprepare,PQputCopyData,PQputCopyEnd,PQreset,PQresultErrorField,PQresultStatus,PQsendQuery,PQsetNoticeProcessor,PQsetSingleRowMode,PQsocket,PQstatus,PQtransactionStatus
LAZY_CRYPTO := CRYPTO_memcmp,EVP_DecodeBlock,EVP_DecodeFinal,EVP_DecodeInit,EVP_DecodeUpdate,EVP_DigestFinal_ex,EVP_DigestInit_ex,EVP_DigestUpdate,EVP_ENCODE_CTX_free,EVP_ENCODE_CTX_new,EVP_EncodeBlock,EVP_MD_CTX_free,EVP_MD_CTX_new,EVP_MD_fetch,EVP_sha256,HMAC,OPENSSL_cleanse,RAND_bytes,SHA256
LAZY_ZIP    := zip_close,zip_discard,zip_error_fini,zip_error_init,zip_error_strerror,zip_file_add,zip_open_from_source,zip_source_buffer,zip_source_buffer_create,zip_source_close,zip_source_free,zip_source_keep,zip_source_open,zip_source_read,zip_source_stat,zip_strerror
LAZY_CAIRO  := cairo_create,cairo_destroy,cairo_move_to,cairo_pdf_surface_create_for_stream,cairo_pdf_surface_set_metadata,cairo_set_source_rgb,cairo_show_page,cairo_status_to_string,cairo_surface_destroy,cairo_surface_finish,cairo_surface_status
LAZY_PANGO  := pango_attr_list_insert,pango_attr_list_new,pango_attr_list_unref,pango_attr_style_new,pango_attr_weight_new,pango_font_description_free,pango_font_description_from_string,pango_font_description_get_size,pango_font_description_set_absolute_size,pango_font_description_set_weight,pango_font_map_create_context,pango_layout_get_iter,pango_layout_get_line_count,pango_layout_get_line_readonly,pango_layout_get_pixel_size,pango_layout_iter_free,pango_layout_iter_get_baseline,pango_layout_iter_get_line_extents,pango_layout_iter_get_line_readonly,pango_layout_iter_next_line,pango_layout_new,pango_layout_set_alignment,pango_layout_set_attributes,pango_layout_set_font_description,pango_layout_set_text,pango_layout_set_width,pango_layout_set_wrap
LAZY_PANGOCAIRO := pango_cairo_font_map_new,pango_cairo_show_layout,pango_cairo_show_layout_line,pango_cairo_update_context
LAZY_GOBJECT := g_object_unref
LAZY_FC     := FcConfigBuildFonts,FcConfigDestroy,FcConfigParseAndLoadFromMemory,FcConfigSetCurrent,FcInitLoadConfig
LAZY_ICUUC  := u_getVersion,u_hasBinaryProperty,u_strFoldCase,u_strFromUTF8WithSub,u_strFromUTF8,u_strToUTF8,u_versionToString,ubrk_close,ubrk_first,ubrk_getRuleStatus,ubrk_next,ubrk_open,ubrk_setText,ubrk_setUText,unorm2_getNFCInstance,unorm2_normalize,utext_close,utext_openUTF8
LAZY_ICUI18N := ucol_close,ucol_getSortKey,ucol_open
LAZY_CJOSE  := cjose_header_get,cjose_jwk_import_json,cjose_jwk_release,cjose_jws_get_plaintext,cjose_jws_get_protected,cjose_jws_import,cjose_jws_release,cjose_jws_verify
lazystubs:
	tools/lazystubs.py src/core/curl_lazy.c libcurl curl/curl.h libcurl \
	  libcurl.so.4@curl_lazy_init:$(LAZY_CURL)
	tools/lazystubs.py src/store/pg_lazy.c libpq libpq-fe.h libpq libpq.so.5:$(LAZY_PQ)
	tools/lazystubs.py src/core/crypto_lazy.c "OpenSSL's libcrypto" \
	  'openssl/crypto.h openssl/evp.h openssl/hmac.h openssl/rand.h openssl/sha.h' openssl \
	  libcrypto.so.3:$(LAZY_CRYPTO)
	tools/lazystubs.py src/export/export_lazy.c "the exports' libraries" \
	  'zip.h cairo.h cairo-pdf.h pango/pangocairo.h fontconfig/fontconfig.h' \
	  'libzip cairo pangocairo fontconfig' libzip.so.4:$(LAZY_ZIP) libcairo.so.2:$(LAZY_CAIRO) \
	  libpango-1.0.so.0:$(LAZY_PANGO) libpangocairo-1.0.so.0:$(LAZY_PANGOCAIRO) \
	  libgobject-2.0.so.0:$(LAZY_GOBJECT) libfontconfig.so.1:$(LAZY_FC)
	tools/lazystubs.py src/auth/cjose_lazy.c cjose cjose/cjose.h cjose libcjose.so.0:$(LAZY_CJOSE)
	tools/lazystubs.py src/core/icu_lazy.c ICU \
	  'unicode/ubrk.h unicode/ucol.h unicode/uchar.h unicode/unorm2.h unicode/ustring.h unicode/utext.h unicode/uversion.h' \
	  'icu-uc icu-i18n' '"libicuuc.so." U_ICU_VERSION_SHORT:$(LAZY_ICUUC)' \
	  '"libicui18n.so." U_ICU_VERSION_SHORT:$(LAZY_ICUI18N)'

# The pkg-config packages the program links (for tests/fuzz/run.sh, which builds with
# clang on its own): one list, here.
print-pkgs:
	@echo $(PKGS)

# ... of which these are linked (the others are loaded at first use: LAZY_PKGS)
print-link-pkgs:
	@echo $(filter-out $(LAZY_PKGS),$(PKGS))

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
