# hookbox: a webhook acceptance boundary for media pipelines.
#
#   make            build the programs into $(O)/ (needs no Check)
#   make tests      build the test programs too (SAN=1: with ASan and
#                   UBSan, into $(O)-san; TSAN=1: with ThreadSanitizer,
#                   into $(O)-tsan)
#   make check      install what is missing, build, run every test
#   make run        install what the programs need (not Check), build, start
#                   a demo on 127.0.0.1 (HOOKBOX_PORT, default 8088)
#   make install    install the programs, the systemd units, the nginx
#                   snippet and the rest (hookbox(7), INSTALLATION) into
#                   $(DESTDIR)$(PREFIX) (needs no root with DESTDIR)
#   make deb        build the Debian package, $(O)/deb/hookbox_VERSION_ARCH.deb
#                   (HB_VERSION= another version), from a clean copy of
#                   the tree, without root
#   make uninstall  remove what `make install` installed (the same PREFIX,
#                   DESTDIR and directories); never the data directory
#
# Local overrides go in config.mk (not tracked).

-include config.mk

PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
UNITDIR	?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
DATADIR	?= $(PREFIX)/share/hookbox
MANDIR	?= $(PREFIX)/share/man
COMPDIR	?= $(PREFIX)/share/bash-completion/completions
O	?= build
CC	?= cc
# The build directory as given; the sanitizer builds go to $(BUILD)-san
# (ASan + UBSan) and $(BUILD)-tsan (ThreadSanitizer).
BUILD	:= $(O)

# pkg-config, asked once and only when a rule needs the answer (so that
# `make deps` and `make check` can install the packages first).  A package
# that is missing stops the build with pkg-config's own message.
pkgconf = $(eval $(1) := $(shell pkg-config $(2) || echo __failed__))$(if \
	$(findstring __failed__,$($(1))),$(error pkg-config $(2) failed; \
	`make deps` installs the Debian packages))$($(1))
PKGS	 = sqlite3 libsodium libcjson libcurl libpq
PKG_CFLAGS = $(call pkgconf,PKG_CFLAGS,--cflags $(PKGS))
PKG_LIBS   = $(call pkgconf,PKG_LIBS,--libs $(PKGS))
CHECK_CFLAGS = $(call pkgconf,CHECK_CFLAGS,--cflags check)
CHECK_LIBS   = $(call pkgconf,CHECK_LIBS,--libs check)

OPT	?= -O2 -g
WARN	 = -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes \
	   -Wmissing-prototypes -Wpointer-arith -Wcast-qual -Wno-format-nonliteral
CFLAGS	?= $(OPT)
CFLAGS	+= -std=c11 $(WARN) -fvisibility=hidden -fstack-protector-strong -pthread
CPPFLAGS += -D_GNU_SOURCE -D_FORTIFY_SOURCE=2 -Ilib $(PKG_CFLAGS)
# make HB_VERSION=1.2.3: the version the programs report (else
# lib/base/hb.h's).
ifdef HB_VERSION
CPPFLAGS += -DHB_VERSION='"$(HB_VERSION)"'
endif
LDLIBS	+= $(PKG_LIBS) -pthread
# The programs load libpq when they first meet a PostgreSQL location
# (lib/db/pg.c), so they do not link it; the library and the tests, which
# call it themselves, do.
PROG_LDLIBS = $(filter-out -lpq,$(LDLIBS))

# SAN=1: the sanitizer build (ASan + UBSan), built in its own directory.
ifeq ($(SAN),1)
override O := $(BUILD)-san
OPT	 = -O1 -g
CFLAGS	+= -fsanitize=address,undefined -fno-omit-frame-pointer \
	   -fno-sanitize-recover=all
CPPFLAGS := $(filter-out -D_FORTIFY_SOURCE=2,$(CPPFLAGS))
LDFLAGS	+= -fsanitize=address,undefined
endif

# TSAN=1: the ThreadSanitizer build, in its own directory (TSan and ASan
# do not mix).  It links the system's libcjson, uninstrumented, so TSan
# does not see inside cJSON.  XXX cJSON's one shared variable,
# global_error, is written by every parse: concurrent parses race on it.
# Nothing reads it (cJSON_GetErrorPtr() is never called), so the race is
# harmless, but an instrumented cJSON would need it suppressed.
ifeq ($(TSAN),1)
ifeq ($(SAN),1)
$(error SAN=1 and TSAN=1 are two builds: make one, then the other)
endif
override O := $(BUILD)-tsan
OPT	 = -O1 -g
CFLAGS	+= -fsanitize=thread -fno-omit-frame-pointer
CPPFLAGS := $(filter-out -D_FORTIFY_SOURCE=2,$(CPPFLAGS))
LDFLAGS	+= -fsanitize=thread
endif

# The sanitizer and fuzz builds compile cJSON from Debian's source package
# with their own instrumentation, so that ASan, UBSan and libFuzzer see
# inside the JSON parser.  scripts/cjson-src.sh fetches and verifies it
# once into $(CJSON_DIR) and writes $(CJSON_MK), which sets CJSON_SRC, or
# leaves it empty with a warning saying why: then these builds link the
# system's libcjson like the others.
CJSON_DIR ?= $(BUILD)/cjson
CJSON_MK   = $(CJSON_DIR).mk
CJSON_SRC  =
CJSON_OBJ  =
ifneq ($(filter 1,$(SAN))$(filter fuzz,$(MAKECMDGOALS)),)
ifeq ($(filter clean,$(MAKECMDGOALS)),)
include $(CJSON_MK)
endif
endif
ifeq ($(SAN),1)
ifneq ($(CJSON_SRC),)
# Its header first; HB_CJSON_SOURCE tells the tests which cJSON to expect.
CPPFLAGS := -I$(dir $(CJSON_SRC)) -DHB_CJSON_SOURCE $(CPPFLAGS)
LDLIBS	:= $(filter-out -lcjson,$(LDLIBS))
CJSON_OBJ = $(O)/cjson/cJSON.o
endif
endif

# The library, by subsystem (README, Layout): each folder's sources and
# headers; scripts/includes.sh holds the folders to their order.
LIB_DIRS = base net db provider config store intake delivery status run
BASE_SRCS = lib/base/hb.c lib/base/util.c lib/base/text.c lib/base/json.c \
	    lib/base/log.c lib/base/fault.c lib/base/metrics.c
NET_SRCS = lib/net/http.c lib/net/addr.c
DB_SRCS	= lib/db/db.c lib/db/sqlite.c lib/db/pg.c lib/db/pg_schema.c \
	  lib/db/access.c
PROVIDER_SRCS = lib/provider/obs.c lib/provider/tornado.c \
	  lib/provider/mapping.c lib/provider/auth.c lib/provider/digest.c \
	  lib/provider/scheme.c lib/provider/form.c
CONFIG_SRCS = lib/config/config.c lib/config/admin.c lib/config/edit.c \
	  lib/config/bulk.c lib/config/map.c lib/config/check.c \
	  lib/config/pool.c lib/config/cache.c lib/config/registrar.c
STORE_SRCS = lib/store/store.c lib/store/flight.c lib/store/record.c \
	  lib/store/outbox.c lib/store/circuit.c lib/store/admin.c \
	  lib/store/metrics.c \
	  lib/store/tenant.c
INTAKE_SRCS = lib/intake/webhook.c lib/intake/group.c lib/intake/accept.c \
	  lib/intake/decide.c
DELIVERY_SRCS = lib/delivery/dispatch.c lib/delivery/poller.c
STATUS_SRCS = lib/status/status.c lib/status/page.c
RUN_SRCS = lib/run/settings.c lib/run/super.c lib/run/peer.c
LIB_SRCS = $(BASE_SRCS) $(NET_SRCS) $(DB_SRCS) $(PROVIDER_SRCS) \
	   $(CONFIG_SRCS) $(STORE_SRCS) $(INTAKE_SRCS) $(DELIVERY_SRCS) \
	   $(STATUS_SRCS) $(RUN_SRCS)
# Every source's header (but the backends', whose contract is db.h's),
# the private ones (_int.h), and those of types alone.
LIB_HDRS = $(filter-out lib/db/sqlite.h lib/db/pg.h,$(LIB_SRCS:.c=.h)) \
	   lib/db/db_int.h lib/config/config_int.h lib/store/store_int.h \
	   lib/config/rows.h lib/store/rows.h lib/intake/prep.h
# The headers that make the library's public contract (not db/'s
# interface and its private parts, json.h, the _int.h).
PUB_HDRS = $(filter-out lib/db/db.h lib/db/db_int.h lib/db/pg_schema.h \
	   lib/base/json.h lib/store/store_int.h lib/config/config_int.h,\
	   $(LIB_HDRS))
LIB_OBJS = $(LIB_SRCS:%.c=$(O)/%.o)
# The test build of the library: the same sources with fault points.
TLIB_OBJS = $(LIB_SRCS:%.c=$(O)/%.fault.o)

CLI_SRCS = cli/hookbox.c cli/common.c cli/cmd_config.c cli/cmd_list.c \
    cli/cmd_jobs.c cli/cmd_state.c cli/cmd_daemon.c cli/table.c \
    cli/cmd_registrar.c \
    cli/cmd_disorder.c cli/disorder.c
CLI_HDRS = cli/cli.h cli/table.h cli/disorder.h
CLI_OBJS = $(CLI_SRCS:%.c=$(O)/%.o)

FCGI_SRCS = fcgi/main.c fcgi/respond.c
FCGI_HDRS = fcgi/respond.h
FCGI_OBJS = $(FCGI_SRCS:%.c=$(O)/%.o)
FCGI_LIBS = -lfcgi

TEST_SUITES = check_util check_tornado check_auth check_config check_accept \
	      check_dispatch check_json check_respond check_store check_super \
	      check_group check_db check_decide check_mapping check_scheme \
	      check_presets
# The ThreadSanitizer build needs only the suites whose code runs
# threads: tests/check.sh runs those.
ifeq ($(TSAN),1)
TEST_SUITES := check_accept check_json check_respond check_group
endif
TEST_BINS = $(TEST_SUITES:%=$(O)/tests/%)
TEST_COMMON = $(O)/tests/testutil.o

BINS	 = $(O)/hookbox $(O)/hookbox-fcgi
MUTANT	 = $(O)/mutant
# A scriptable HTTP server: the downstream consumer in dispatcher tests.
SINK	 = $(O)/tests/sink
# An LD_PRELOAD shim that slows each COMMIT: tests/e2e/group.sh kills
# the responder inside it.
SLOWCOMMIT = $(O)/tests/slowcommit.so

all: $(O)/.banned $(O)/.includes $(BINS)

tests: all $(TEST_BINS) $(SINK) $(SLOWCOMMIT) \
    $(if $(filter 1,$(SAN) $(TSAN)),,$(O)/.exports $(MUTANT)/hookbox-fcgi)

# No banned calls (sprintf, strcpy, atoi, ...) anywhere: see the script.
C_SRCS = $(LIB_SRCS) $(CLI_SRCS) $(FCGI_SRCS) $(wildcard tests/*/*.c bench/*.c)
$(O)/.banned: scripts/banned.sh $(C_SRCS)
	@mkdir -p $(@D)
	sh scripts/banned.sh $(C_SRCS)
	@touch $@

# Each database's header in its backend's file alone, and db.h in lib/
# alone: see the script.
$(O)/.includes: scripts/includes.sh $(LIB_SRCS) $(LIB_HDRS) $(CLI_SRCS) \
    $(CLI_HDRS) $(FCGI_SRCS) $(FCGI_HDRS)
	@mkdir -p $(@D)
	sh scripts/includes.sh
	@touch $@

# Position-independent, so that the same objects make the shared library
# whose exports are checked against the headers.
$(O)/lib/%.o: lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -c -o $@ $<

$(O)/lib/%.fault.o: lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DHB_FAULT $(CFLAGS) -c -o $@ $<

$(O)/libhookbox.a: $(LIB_OBJS) $(CJSON_OBJ)
	rm -f $@
	ar rcs $@ $(LIB_OBJS) $(CJSON_OBJ)

# Built to be checked: -fvisibility=hidden leaves exported only what the
# headers mark HB_API, and scripts/exports.sh holds them to that.
$(O)/libhookbox.so: $(LIB_OBJS)
	$(CC) -shared $(LDFLAGS) -Wl,-soname,libhookbox.so -o $@ $(LIB_OBJS) \
	    $(LDLIBS)

$(O)/.exports: $(O)/libhookbox.so scripts/exports.sh $(PUB_HDRS)
	sh scripts/exports.sh $(O)/libhookbox.so $(PUB_HDRS)
	@touch $@

$(O)/libhookbox-fault.a: $(TLIB_OBJS) $(CJSON_OBJ)
	rm -f $@
	ar rcs $@ $(TLIB_OBJS) $(CJSON_OBJ)

$(CJSON_MK): scripts/cjson-src.sh
	sh scripts/cjson-src.sh $(CJSON_DIR) $@

# cJSON's own code, not held to our warnings; instrumented like the rest.
$(O)/cjson/cJSON.o: $(CJSON_SRC)
	@mkdir -p $(@D)
	$(CC) $(OPT) -fsanitize=address,undefined -fno-omit-frame-pointer \
	    -fno-sanitize-recover=all -c -o $@ $(CJSON_SRC)

$(O)/cli/%.o: cli/%.c $(CLI_HDRS) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(O)/hookbox: $(CLI_OBJS) $(O)/libhookbox.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(O)/libhookbox.a $(PROG_LDLIBS)

$(O)/fcgi/%.o: fcgi/%.c $(FCGI_HDRS) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(O)/hookbox-fcgi: $(FCGI_OBJS) $(O)/libhookbox.a
	$(CC) $(LDFLAGS) -o $@ $(FCGI_OBJS) $(O)/libhookbox.a $(FCGI_LIBS) \
	    $(PROG_LDLIBS)

# The test of the disorder tester (tests/e2e/run.sh): a demo whose responder
# compares versions wrongly on purpose (an older event taken as newer),
# which `hookbox disorder` must report.  The patch must apply: a decide.c
# that no longer reads so fails the build, not the test.
$(MUTANT)/decide.c: lib/intake/decide.c
	@mkdir -p $(@D)
	sed 's/return va < vb ? -1 : 1;/return 1;/' lib/intake/decide.c > $@.tmp
	! cmp -s lib/intake/decide.c $@.tmp
	mv $@.tmp $@

$(MUTANT)/decide.o: $(MUTANT)/decide.c $(LIB_HDRS)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(MUTANT)/hookbox-fcgi: $(FCGI_OBJS) $(MUTANT)/decide.o $(O)/libhookbox.a \
    $(O)/hookbox
	$(CC) $(LDFLAGS) -o $@ $(FCGI_OBJS) $(MUTANT)/decide.o \
	    $(O)/libhookbox.a $(FCGI_LIBS) $(PROG_LDLIBS)
	ln -sf ../hookbox $(MUTANT)/hookbox

$(O)/tests/%.o: tests/unit/%.c tests/unit/testutil.h $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DHB_FAULT $(CHECK_CFLAGS) $(CFLAGS) -Itests \
	    -Wno-missing-prototypes -c -o $@ $<

# check_respond drives fcgi/respond.c in-process, compiled like the tests;
# webhook_receive() is wrapped so that the suite can count and force results,
# and the calls that send a command to a database (libpq's as db/pg.c finds
# them, with dlsym()), so that it can count config.db's round trips per
# request.
CONFIG_TRIPS = -Wl,--wrap=dlsym,--wrap=sqlite3_step,--wrap=sqlite3_exec
$(O)/tests/respond.o: fcgi/respond.c $(FCGI_HDRS) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DHB_FAULT -Ifcgi $(CFLAGS) -c -o $@ fcgi/respond.c

$(O)/tests/check_respond.o: CPPFLAGS += -Ifcgi
$(O)/tests/check_respond.o: $(FCGI_HDRS)

$(O)/tests/check_respond: $(O)/tests/check_respond.o $(O)/tests/respond.o \
    $(TEST_COMMON) $(O)/libhookbox-fault.a
	$(CC) $(LDFLAGS) -Wl,--wrap=webhook_receive $(CONFIG_TRIPS) -o $@ $< \
	    $(O)/tests/respond.o $(TEST_COMMON) $(O)/libhookbox-fault.a \
	    $(LDLIBS) $(CHECK_LIBS)

# check_group wraps pthread_join() to see group_free() join the writer.
$(O)/tests/check_group: $(O)/tests/check_group.o $(TEST_COMMON) \
    $(O)/libhookbox-fault.a
	$(CC) $(LDFLAGS) -Wl,--wrap=pthread_join -o $@ $< $(TEST_COMMON) \
	    $(O)/libhookbox-fault.a $(LDLIBS) $(CHECK_LIBS)

# Not instrumented, whatever the build: it is loaded before the
# sanitizers' runtimes.
$(SLOWCOMMIT): tests/helpers/slowcommit.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -std=c11 $(OPT) $(WARN) -fPIC -shared -o $@ \
	    tests/helpers/slowcommit.c -ldl

$(SINK): tests/helpers/sink.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE $(CFLAGS) $(LDFLAGS) -o $@ tests/helpers/sink.c

# check_db watches what db/pg.c hands libpq to free.
$(O)/tests/check_db: LDFLAGS += -Wl,--wrap=dlsym

$(O)/tests/check_%: $(O)/tests/check_%.o $(TEST_COMMON) $(O)/libhookbox-fault.a
	$(CC) $(LDFLAGS) -o $@ $< $(TEST_COMMON) $(O)/libhookbox-fault.a \
	    $(LDLIBS) $(CHECK_LIBS)

# Everything a test run needs, then every suite: unit tests in the normal
# and the sanitizer build, then the command-line and end-to-end scripts,
# then what runs threads in the ThreadSanitizer build.
check: deps
	$(MAKE) -j2 tests
	$(MAKE) -j2 SAN=1 tests
	$(MAKE) -j2 TSAN=1 tests
	sh tests/check.sh

# Every package the build and the tests need.
deps:
	sh scripts/install-deps.sh check

# Only what the programs and the demo need (no Check): see
# scripts/install-deps.sh.
run:
	sh scripts/install-deps.sh run
	$(MAKE) all
	sh scripts/run.sh $(O)

# The Debian package, from a clean copy of the tree (scripts/deb.sh).
deb:
	sh scripts/deb.sh $(O)/deb $(HB_VERSION)

# Fuzzing (clang's libFuzzer): one target per parser, FUZZ_RUNS inputs each.
# The library (and cJSON, see CJSON_SRC above) is compiled once into
# build-fuzz/ and linked into each target; only tests/fuzz/fuzz.c differs.
FUZZ_CC	  ?= clang
FUZZ_RUNS ?= 20000
FUZZ_TARGETS = callback event poll tsig sw mapping scheme
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
	     $(if $(CJSON_SRC),-I$(dir $(CJSON_SRC))) -Ilib $(PKG_CFLAGS)
FUZZ_OBJS = $(LIB_SRCS:%.c=build-fuzz/%.o) \
	    $(if $(CJSON_SRC),build-fuzz/cjson/cJSON.o)
FUZZ_LIBS = $(if $(CJSON_SRC),$(filter-out -lcjson,$(PKG_LIBS)),$(PKG_LIBS))

build-fuzz/lib/%.o: lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -c -o $@ $<

build-fuzz/cjson/cJSON.o: $(CJSON_SRC)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -c -o $@ $(CJSON_SRC)

build-fuzz/fuzz_%: tests/fuzz/fuzz.c $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -DFUZZ_$(shell echo $* | tr a-z A-Z) -o $@ \
	    tests/fuzz/fuzz.c $(FUZZ_OBJS) $(FUZZ_LIBS)

fuzz: $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)
	for t in $(FUZZ_TARGETS); do \
		mkdir -p build-fuzz/corpus_$$t; \
		cp tests/fuzz/seeds/* build-fuzz/corpus_$$t/; \
		build-fuzz/fuzz_$$t -runs=$(FUZZ_RUNS) -max_len=4096 -seed=1 \
		    -artifact_prefix=build-fuzz/fuzz_$$t- \
		    build-fuzz/corpus_$$t > build-fuzz/fuzz_$$t.log 2>&1 || \
		    { tail -n 40 build-fuzz/fuzz_$$t.log; exit 1; }; \
		echo "fuzz_$$t: $$(tail -n 1 build-fuzz/fuzz_$$t.log)"; \
	done

# The units name the programs by @BINDIR@, replaced with $(BINDIR) (the
# path on the running system, without DESTDIR).
UNITS	= systemd/hookbox.socket systemd/hookbox.service \
	  systemd/hookbox-dispatch.service systemd/hookbox-poll.service \
	  systemd/hookbox-poll.timer systemd/hookbox-registrar.socket \
	  systemd/hookbox-registrar@.service

install: $(BINS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DATADIR)
	install -m 0755 $(BINS) $(DESTDIR)$(BINDIR)
	for u in $(UNITS); do \
		f=$(DESTDIR)$(UNITDIR)/$${u#systemd/}; \
		sed 's|@BINDIR@|$(BINDIR)|g' $$u > $$f && chmod 0644 $$f || exit 1; \
	done
	install -m 0644 nginx/hookbox.conf $(DESTDIR)$(DATADIR)/hookbox.conf
	install -m 0755 scripts/setup-server.sh $(DESTDIR)$(DATADIR)/setup-server.sh
	install -d $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR)
	install -m 0644 systemd/hookbox.sysusers $(DESTDIR)$(SYSUSERSDIR)/hookbox.conf
	install -m 0644 systemd/hookbox.tmpfiles $(DESTDIR)$(TMPFILESDIR)/hookbox.conf
	install -d $(DESTDIR)$(DATADIR)/presets
	install -m 0644 presets/*.json $(DESTDIR)$(DATADIR)/presets
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 \
	    $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(COMPDIR)
	install -m 0644 man/hookbox.1 $(DESTDIR)$(MANDIR)/man1/hookbox.1
	install -m 0644 man/hookbox.7 $(DESTDIR)$(MANDIR)/man7/hookbox.7
	install -m 0644 man/hookbox-fcgi.8 $(DESTDIR)$(MANDIR)/man8/hookbox-fcgi.8
	install -m 0644 completion/hookbox.bash $(DESTDIR)$(COMPDIR)/hookbox

# The files install puts there, by name, and hookbox's own directories
# under DATADIR once empty; the shared ones (bin, man1, ...) stay.  What
# the programs made or the operator wrote is not install's: the data
# directory, /etc/hookbox, drop-ins and nginx's own configuration stay.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/hookbox $(DESTDIR)$(BINDIR)/hookbox-fcgi
	for u in $(UNITS); do \
		rm -f $(DESTDIR)$(UNITDIR)/$${u#systemd/} || exit 1; \
	done
	rm -f $(DESTDIR)$(DATADIR)/hookbox.conf \
	    $(DESTDIR)$(DATADIR)/setup-server.sh \
	    $(DESTDIR)$(SYSUSERSDIR)/hookbox.conf \
	    $(DESTDIR)$(TMPFILESDIR)/hookbox.conf
	for p in presets/*.json; do \
		rm -f $(DESTDIR)$(DATADIR)/$$p || exit 1; \
	done
	for d in $(DESTDIR)$(DATADIR)/presets $(DESTDIR)$(DATADIR); do \
		[ ! -d $$d ] || rmdir $$d 2>/dev/null || \
		    echo "uninstall: $$d kept: not empty"; \
	done
	rm -f $(DESTDIR)$(MANDIR)/man1/hookbox.1 \
	    $(DESTDIR)$(MANDIR)/man7/hookbox.7 \
	    $(DESTDIR)$(MANDIR)/man8/hookbox-fcgi.8 $(DESTDIR)$(COMPDIR)/hookbox
	@echo "uninstall: removed the programs, units, sysusers.d and" \
	    "tmpfiles.d files, nginx snippet, set-up script, presets, man" \
	    "pages and completion under $(DESTDIR)$(PREFIX)"
	@echo "uninstall: kept the data directory (/var/lib/hookbox, or" \
	    "\$$HOOKBOX_DIR or \$$HOOKBOX_DB's database: config.db and" \
	    "state.db) and the operator's configuration (/etc/hookbox," \
	    "unit drop-ins in /etc/systemd/system, nginx's site)"
	@echo "uninstall: a unit still running goes on with the program" \
	    "it started until stopped: systemctl disable --now" \
	    "hookbox.socket hookbox.service hookbox-dispatch.service" \
	    "hookbox-poll.timer hookbox-registrar.socket, then" \
	    "systemctl daemon-reload"
	@echo "uninstall: before removing the data (rm -r DIR), back it" \
	    "up with sqlite3 DIR/state.db \".backup FILE\" (and config.db):" \
	    "a copy of state.db alone misses what its -wal holds"

clean:
	rm -rf $(BUILD) $(BUILD)-san $(BUILD)-tsan build-fuzz

.PHONY: all tests check deps run install uninstall clean fuzz deb
.SECONDARY:
