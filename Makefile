# pagecache - build, test, install.
#
#   make            the library and the pagecache command (build/release)
#   make run        the default benchmark suite, then the comparison
#   make test       the test suite (build/test: -O2, asserts, lock checks)
#   make check      the test suite, then again under ASan+UBSan and TSan
#   make soak       MINUTES=N (5): tests/exerciser.c under pagecache exec
#                   with fresh seeds for N minutes, each seed printed,
#                   stopping at the first failure (tests/soak_exerciser.sh)
#   make install    PREFIX=/usr/local: header, libraries, the preload
#                   library, pkg-config file, the command, its man pages
#
# Every source under src/, tools/ and tests/ is found by wildcard: a new
# module needs no edit here.

V        ?= release
BUILD    := build/$(V)
PREFIX   ?= /usr/local
VERSION  := 0.1.0

CC       ?= gcc
PKGS     := liburing jansson
CPPFLAGS := -Iinclude -Isrc -D_GNU_SOURCE -DPC_VERSION='"$(VERSION)"'
CFLAGS   := -std=c11 -Wall -Wextra -Wshadow -Werror -g -pthread -fPIC \
            -fvisibility=hidden $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm
HAVE_NUMA := $(shell test -f /usr/include/numa.h && echo 1)
ifeq ($(HAVE_NUMA),1)
CPPFLAGS += -DPC_HAVE_NUMA
LDLIBS   += -lnuma
endif

ifeq ($(V),release)
CFLAGS   += -O2 -DNDEBUG
else ifeq ($(V),test)
CFLAGS   += -O2 -DPC_DEBUG
else ifeq ($(V),asan)
CFLAGS   += -O1 -DPC_DEBUG -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
# pagecache exec preloads the runtime before an instrumented shim.
CPPFLAGS += -DPC_SANITIZER_RUNTIME='"$(shell $(CC) -print-file-name=libasan.so)"'
else ifeq ($(V),tsan)
CFLAGS   += -O1 -DPC_DEBUG -DPC_TSAN -fsanitize=thread -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=thread
CPPFLAGS += -DPC_SANITIZER_RUNTIME='"$(shell $(CC) -print-file-name=libtsan.so)"'
else
$(error unknown V=$(V): release, test, asan or tsan)
endif

# The tools see the public header only: no -Isrc, so none can include
# the library's internals.  The one exception, the trace file's format, is
# reached by its path (tools/trace/trace.h: "../../src/trace_fmt.h").
$(BUILD)/tools/%.o: CPPFLAGS := $(filter-out -Isrc,$(CPPFLAGS))
# The preload shim is a client of the public API like the tools.
$(BUILD)/preload/%.o: CPPFLAGS := $(filter-out -Isrc,$(CPPFLAGS))

LIB_SRC   := $(sort $(wildcard src/*.c))
TOOL_SRC  := $(sort $(wildcard tools/*.c tools/*/*.c))
TEST_SRC  := $(sort $(wildcard tests/test_*.c))
TESTUTIL  := $(sort $(wildcard tests/util*.c))
PRELOAD_SRC := $(sort $(wildcard preload/*.c))

LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
TOOL_OBJ  := $(TOOL_SRC:%.c=$(BUILD)/%.o)
TUTIL_OBJ := $(TESTUTIL:%.c=$(BUILD)/%.o)
TESTS     := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
PRELOAD_OBJ := $(PRELOAD_SRC:%.c=$(BUILD)/%.o)
PRELOAD_SO  := $(BUILD)/libpagecache-preload.so

.PHONY: all lib tools tests test check soak run deps install clean FORCE
# deps first, then the build: under -j the two would run side by side and a
# fresh machine compile before liburing's header is there.
all: deps
	@$(MAKE) --no-print-directory lib tools

deps:
	@scripts/deps.sh

lib: $(BUILD)/libpagecache.a $(BUILD)/libpagecache.so $(BUILD)/pagecache.pc \
     $(PRELOAD_SO)
tools: $(BUILD)/pagecache $(PRELOAD_SO)	# pagecache exec needs the preload library

$(BUILD)/%.o: %.c $(wildcard include/*.h src/*.h tools/*/*.h tests/*.h preload/*.h)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/libpagecache.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libpagecache.so: $(LIB_OBJ) src/libpagecache.map
	$(CC) -shared -Wl,--version-script=src/libpagecache.map \
	      -Wl,-soname,libpagecache.so.0 $(LDFLAGS) -o $@ $(LIB_OBJ) $(LDLIBS)

# libpagecache-preload.so, behind `pagecache exec`: the shim (preload/) and
# the library in one object.  The library's threads start through the
# shim's wrapper of pthread_create, so that what they call goes straight to
# libc (preload/real.c).  It exports the interposed libc names only.
$(PRELOAD_SO): $(PRELOAD_OBJ) $(LIB_OBJ) preload/preload.map
	@echo "  LD      $@"
	@$(CC) -shared -Wl,--wrap=pthread_create -Wl,-z,defs \
	      -Wl,--version-script=preload/preload.map \
	      -Wl,-soname,libpagecache-preload.so $(LDFLAGS) -o $@ \
	      $(PRELOAD_OBJ) $(LIB_OBJ) $(LDLIBS) -ldl

$(BUILD)/pagecache.pc: pagecache.pc.in
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

# Result files name the commit the tools were built from.  commit.h is
# rewritten only when `git describe` changes, so only result.o follows.
PC_COMMIT := $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
$(BUILD)/commit.h: FORCE
	@mkdir -p $(dir $@)
	@echo '#define PC_COMMIT "$(PC_COMMIT)"' | cmp -s - $@ || \
	 echo '#define PC_COMMIT "$(PC_COMMIT)"' > $@
$(BUILD)/tools/bench/result.o: $(BUILD)/commit.h
# pagecache exec's default cache is named after the library's sources: a
# build never joins one another build made (share.c checks the layout too).
SRC_HASH := $(firstword $(shell cat $(LIB_SRC) $(wildcard src/*.h) | cksum))
$(BUILD)/tools/exec.o: $(LIB_SRC) $(wildcard src/*.h)
$(BUILD)/tools/exec.o: CPPFLAGS += -DPC_SRC_HASH='"$(SRC_HASH)"'
$(BUILD)/tools/admin.o: $(LIB_SRC) $(wildcard src/*.h)
$(BUILD)/tools/admin.o: CPPFLAGS += -DPC_SRC_HASH='"$(SRC_HASH)"'
$(BUILD)/tools/bench/result.o: CPPFLAGS += -include $(BUILD)/commit.h
FORCE:

# The command links the library statically: one binary to copy around.
$(BUILD)/pagecache: $(TOOL_OBJ) $(BUILD)/libpagecache.a
	@echo "  LD      $@"
	@$(CC) $(LDFLAGS) -o $@ $(TOOL_OBJ) $(BUILD)/libpagecache.a $(LDLIBS)

# Tests see the internals: they link the objects, not the version-mapped .so.
# tests/test_NAME.c (and test_NAME_PART.c) also links tools/NAME/*.c when
# that folder exists.
.SECONDARY:
pct := %
.SECONDEXPANSION:
$(BUILD)/tests/test_%: $(BUILD)/tests/test_%.o $(TUTIL_OBJ) $(LIB_OBJ) \
		$$(filter $(BUILD)/tools/$$(firstword $$(subst _, ,$$*))/$$(pct),$(TOOL_OBJ))
	@echo "  LD      $@"
	@$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS) -lcmocka

# test_preload*.c are programs under the shim: they link the shim of its own
# flavour (so make check runs the shim under ASan and TSan), not the
# library's objects, and of tests/util only the thread-safe assertions.
PRELOAD_TESTS := $(filter $(BUILD)/tests/test_preload%,$(TESTS))
$(PRELOAD_TESTS): $(BUILD)/tests/%: $(BUILD)/tests/%.o \
		$(BUILD)/tests/util_assert.o $(PRELOAD_SO)
	@echo "  LD      $@"
	@$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) -Wl,-rpath,$(abspath $(BUILD)) \
	      $(PRELOAD_SO) -lpthread -lcmocka

# Plain programs tests/test_exec.sh, tests/test_copy.sh and
# tests/test_exerciser.sh (and make soak) run with and without the shim.
HELPERS := $(BUILD)/tests/preload_helper $(BUILD)/tests/copy_helper \
           $(BUILD)/tests/exerciser
$(HELPERS): $(BUILD)/tests/%: $(BUILD)/tests/%.o
	@echo "  LD      $@"
	@$(CC) $(LDFLAGS) -o $@ $<

tests: $(TESTS) $(BUILD)/pagecache $(PRELOAD_SO) $(HELPERS)

test: deps
	@$(MAKE) --no-print-directory V=test tests
	@tests/run.sh build/test

check: deps
	@$(MAKE) --no-print-directory V=test tests
	@tests/run.sh build/test
	@$(MAKE) --no-print-directory V=asan tests
	@PC_SANITIZER=asan tests/run.sh build/asan
	@$(MAKE) --no-print-directory V=tsan tests
	@PC_SANITIZER=tsan TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp halt_on_error=1" \
	 tests/run.sh build/tsan

MINUTES ?= 5
soak: deps
	@$(MAKE) --no-print-directory V=test build/test/pagecache \
	 build/test/libpagecache-preload.so build/test/tests/exerciser
	@tests/soak_exerciser.sh build/test $(MINUTES)

run: deps
	@$(MAKE) --no-print-directory V=release tools
	@build/release/pagecache run

install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin \
	    $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man3
	install -m 644 include/pagecache.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/libpagecache.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libpagecache.so $(DESTDIR)$(PREFIX)/lib/libpagecache.so.0
	install -m 755 $(PRELOAD_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libpagecache.so.0 $(DESTDIR)$(PREFIX)/lib/libpagecache.so
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' pagecache.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/pagecache.pc
	install -m 755 $(BUILD)/pagecache $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@VERSION@|$(VERSION)|g' man/pagecache.1 \
	    > $(DESTDIR)$(PREFIX)/share/man/man1/pagecache.1
	sed -e 's|@VERSION@|$(VERSION)|g' man/libpagecache.3 \
	    > $(DESTDIR)$(PREFIX)/share/man/man3/libpagecache.3
	-ldconfig 2>/dev/null

clean:
	rm -rf build
