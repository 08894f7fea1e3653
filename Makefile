# bpfprof - top-level Makefile.
#
#   make              build build/bpfprof, its plugins and the test workloads
#   make demo         install dependencies, build, profile the bundled demo
#   make check        install dependencies, build, run every test
#   make asan         the same build with AddressSanitizer + UBSan in build-asan/
#   make bench        benchmarks against perf record (tests/bench/)
#   make install      PREFIX=/usr/local DESTDIR=
#
# Layout of the build tree ($(B)):
#   vmlinux.h, profile.bpf.o, profile.skel.h   BPF object and its skeleton
#   bpfprof                                     the collector
#   plugins/NAME.so                             one per plugins/NAME/ directory
#   workloads/NAME                              test workloads (tests/workloads)
#   tests/unit/COMPONENT/test_*                 cmocka unit tests

VERSION   := 0.2.0
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
LIBDIR    ?= $(PREFIX)/lib
PLUGINDIR ?= $(LIBDIR)/bpfprof/plugins
INCDIR    ?= $(PREFIX)/include
B         ?= build

CC        ?= cc
CLANG     ?= clang
BPFTOOL   ?= bpftool
# x86_64 only for now: --call-graph dwarf reads x86-64 registers in
# bpf/profile.bpf.c and user/unwind/unwind.c unwinds x86-64 CFI only.
MACHINE   := $(shell uname -m)
ifeq ($(filter clean deps,$(MAKECMDGOALS)),)
ifneq ($(MACHINE),x86_64)
$(error bpfprof builds on x86_64 only for now (this is $(MACHINE)): --call-graph dwarf reads x86-64 registers in bpf/profile.bpf.c and user/unwind/unwind.c unwinds x86-64 CFI only)
endif
endif
ARCH      := x86

SAN_FLAGS ?=
CFLAGS    ?= -O2 -g
CFLAGS    += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Werror=implicit-function-declaration \
	     -fno-omit-frame-pointer $(SAN_FLAGS)
CPPFLAGS  += -Iinclude -I$(B) -Iuser -D_GNU_SOURCE \
	     -DBPFPROF_VERSION='"$(VERSION)"' -DBPFPROF_PLUGINDIR='"$(PLUGINDIR)"'
CXXFLAGS  ?= -O2 -g
CXXFLAGS  += -std=c++17 -fno-exceptions -fno-rtti -Wall -Wextra -fno-omit-frame-pointer $(SAN_FLAGS)
LDFLAGS   += $(SAN_FLAGS)
# libiberty: the C++ and Rust demanglers (user/symbols/demangle.c).
# libxxhash: the cache files' checksums (user/cache_file.c, XXH3).  libbpf,
# elfutils (with liblzma and libbz2, its decompressors) and these linked in
# from their static archives: each shared library costs bpfprof's start-up
# its load and relocations (~2 ms of the collector's CPU on the test VM for
# seven, docs/PERFORMANCE.md session 35; liblzma and libbz2 ~10 page faults
# more, session 36).  Only the C library is loaded at run time.
LIBS      := -Wl,-Bstatic -lbpf -ldw -lelf -lz -liberty -lxxhash -llzma -lbz2 -Wl,-Bdynamic -ldl -lm

# --- BPF object and skeleton -------------------------------------------------
BPF_SRC   := $(wildcard bpf/*.bpf.c)
BPF_OBJ   := $(patsubst bpf/%.bpf.c,$(B)/%.bpf.o,$(BPF_SRC))
BPF_SKEL  := $(patsubst bpf/%.bpf.c,$(B)/%.skel.h,$(BPF_SRC))

# --- collector ---------------------------------------------------------------
# user/main.c and user/collector.c at the top, one folder per step of the
# data flow below them (docs/ARCHITECTURE.md); headers are included by their
# path from user/ ("symbols/symbolize.h").
# One C++ file, user/symbols/fsym_sort.cc (std::sort; no C++ runtime).
USER_SRC  := $(wildcard user/*.c user/*/*.c)
USER_CXX_SRC := $(wildcard user/*/*.cc)
USER_OBJ  := $(patsubst user/%.c,$(B)/obj/user/%.o,$(USER_SRC)) \
	     $(patsubst user/%.cc,$(B)/obj/user/%.o,$(USER_CXX_SRC))
CORE_OBJ  := $(filter-out $(B)/obj/user/main.o,$(USER_OBJ)) $(B)/obj/user/kernel/core_btf_data.o
CORE_LIB  := $(B)/libbpfprof-core.a

# --- plugins: every directory plugins/NAME/ becomes $(B)/plugins/NAME.so ------
# but plugins/common/, the plugins' internal library (buffer, hash table,
# grow helper, folding), which is linked into every one of them.  Plugin
# headers are included by their path from plugins/ ("common/buf.h").
PLUGINS   := $(notdir $(patsubst %/,%,$(dir $(wildcard plugins/*/*.c))))
PLUGINS   := $(filter-out common,$(sort $(PLUGINS)))
PLUGIN_SO := $(patsubst %,$(B)/plugins/%.so,$(PLUGINS))
PLUGIN_COMMON_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(wildcard plugins/common/*.c))

# --- workloads ---------------------------------------------------------------
# tests/workloads/*_lib.c are shared libraries workloads load, built into
# $(B)/workloads/*_lib.so next to them.
WL_LIB_SRC := $(wildcard tests/workloads/*_lib.c)
# tests/workloads/mpi_*.c are MPI programs, built with mpicc where it is
# installed (Open MPI: libopenmpi-dev) and skipped elsewhere.
MPICC     ?= $(shell command -v mpicc 2>/dev/null)
WL_MPI_SRC := $(wildcard tests/workloads/mpi_*.c)
WL_SRC    := $(filter-out $(WL_LIB_SRC) $(WL_MPI_SRC),$(wildcard tests/workloads/*.c))
# nofp_paths again, linked by lld (Debian's lld), whose packed layout has a
# file page shared by two segments, as in Rust binaries (rust-lld).
LLD       ?= $(shell command -v ld.lld 2>/dev/null)
# tests/workloads/rsburn.rs, a Rust program (Rust names), built twice with
# rustc, Debian's where installed: legacy symbol names (its default), and
# v0 (rsburn_v0).
RUSTC     ?= $(firstword $(wildcard /usr/bin/rustc) $(shell command -v rustc 2>/dev/null))
# tests/workloads/*.cc are C++ programs (C++ names), built with $(CXX).
WL_CXX_SRC := $(wildcard tests/workloads/*.cc)
WL_BIN    := $(patsubst tests/workloads/%.c,$(B)/workloads/%,$(WL_SRC)) \
	     $(patsubst tests/workloads/%.cc,$(B)/workloads/%,$(WL_CXX_SRC)) \
	     $(patsubst tests/workloads/%.c,$(B)/workloads/%.so,$(WL_LIB_SRC)) \
	     $(if $(MPICC),$(patsubst tests/workloads/%.c,$(B)/workloads/%,$(WL_MPI_SRC))) \
	     $(if $(LLD),$(B)/workloads/nofp_paths_lld) \
	     $(if $(RUSTC),$(B)/workloads/rsburn $(B)/workloads/rsburn_v0)
# Frame pointers everywhere, no tail calls: see tests/workloads/README.md.
WL_CFLAGS := -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	     -fno-optimize-sibling-calls -pthread
# Workloads whose name starts with nofp_ are built the way distributions build.
WL_NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -pthread

# --- test tools: tests/tools/NAME.c, standalone readers/checkers --------------
TOOL_SRC  := $(wildcard tests/tools/*.c)
TOOL_BIN  := $(patsubst tests/tools/%.c,$(B)/tools/%,$(TOOL_SRC))

# --- unit tests: tests/unit/COMPONENT/test_*.c --------------------------------
# tests/unit/lib/*.c are helpers shared by the unit tests (the fake plugin
# host), linked into the plugin unit tests.
UT_SRC    := $(wildcard tests/unit/*/test_*.c)
UT_BIN    := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UT_SRC))
UT_LIB_OBJ := $(patsubst tests/unit/lib/%.c,$(B)/obj/tests/unit/lib/%.o,$(wildcard tests/unit/lib/*.c))
UT_LIBS   := -lcmocka

.PHONY: all demo check test check-release asan asan-check fuzz fuzz-targets bench install deps clean
all: $(B)/bpfprof $(PLUGIN_SO) $(WL_BIN) $(TOOL_BIN) $(UT_BIN)

deps:
	bash .ci/install-deps

$(B)/vmlinux.h:
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(B)/%.bpf.o: bpf/%.bpf.c bpf/*.h $(B)/vmlinux.h
	$(CLANG) -g -O2 -Wall -target bpf -D__TARGET_ARCH_$(ARCH) -I$(B) -Ibpf -c $< -o $@

$(B)/%.skel.h: $(B)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# The kernel types profile.bpf.o's CO-RE relocations use, cut from this
# machine's kernel BTF, and that kernel's identity: user/kernel/core_btf.c.
$(B)/profile.min.btf: $(B)/profile.bpf.o
	$(BPFTOOL) gen min_core_btf /sys/kernel/btf/vmlinux $@.tmp $< && mv $@.tmp $@

$(B)/core_btf_kernel.h: $(B)/profile.min.btf
	{ printf '#define CORE_BTF_RELEASE "%s"\n' "$$(uname -r | sed 's/[\\"]/\\&/g')"; \
	  printf '#define CORE_BTF_VERSION "%s"\n' "$$(uname -v | sed 's/[\\"]/\\&/g')"; \
	  printf '#define CORE_BTF_VMLINUX_SIZE %sull\n' "$$(stat -c %s /sys/kernel/btf/vmlinux)"; \
	} > $@.tmp && mv $@.tmp $@

$(B)/obj/user/kernel/core_btf_data.o: user/kernel/core_btf_data.S $(B)/profile.min.btf
	@mkdir -p $(@D)
	$(CC) -DCORE_BTF_FILE='"$(B)/profile.min.btf"' -c $< -o $@

$(B)/obj/user/kernel/core_btf.o: $(B)/core_btf_kernel.h

# -MMD: each object's header dependencies in a .d file beside it.
$(B)/obj/user/%.o: user/%.c $(BPF_SKEL)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ibpf $(CFLAGS) -MMD -MP -c $< -o $@

$(B)/obj/user/%.o: user/%.cc
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -MMD -MP -c $< -o $@

-include $(USER_OBJ:.o=.d)

# The unwind-table cache (user/unwind/cfi_cache.c) keeps tables only for
# a builder identical to the one that wrote them: its id hashes the
# sources and structs a table depends on, and the file's checksum
# (user/cache_file.c).
CFI_BUILDER_SRC := user/unwind/cfi_table.c user/unwind/cfi_fde.c user/unwind/cfi_fp.c \
		   user/unwind/cfi_lazy.c \
		   user/unwind/cfi_anon.c \
		   user/unwind/cfi_build.h \
		   user/unwind/cfi_table.h user/unwind/cfi_cache.c bpf/cfi_row.h \
		   user/symbols/elf_segments.c user/symbols/elf_segments.h user/cache_file.c
$(B)/obj/user/unwind/cfi_cache.o: $(CFI_BUILDER_SRC)
$(B)/obj/user/unwind/cfi_cache.o: CPPFLAGS += -DCFI_BUILDER_ID=0x$(shell cat $(CFI_BUILDER_SRC) | sha256sum | cut -c1-16)ull
# The same for the symbol cache (user/symbols/sym_cache.c): the function
# tables' builder, their layout and the checksum.
SYM_BUILDER_SRC := user/symbols/elf_symtab.c user/symbols/gopclntab.c \
		   user/symbols/fsym.h user/symbols/fsym_sort.cc \
		   user/symbols/symbolizer_impl.h user/symbols/sym_cache.c user/cache_file.c
$(B)/obj/user/symbols/sym_cache.o: $(SYM_BUILDER_SRC)
$(B)/obj/user/symbols/sym_cache.o: CPPFLAGS += -DSYM_BUILDER_ID=0x$(shell cat $(SYM_BUILDER_SRC) | sha256sum | cut -c1-16)ull
# The same for the facts of interpreter files (user/interp/py_cache.c):
# their inspection, the layouts a minor version selects, and the format.
PY_BUILDER_SRC := user/interp/python.c user/interp/py_layout.c user/interp/py_cache.c \
		  user/interp/interp_impl.h user/symbols/elf_segments.h user/cache_file.c
$(B)/obj/user/interp/py_cache.o: $(PY_BUILDER_SRC)
$(B)/obj/user/interp/py_cache.o: CPPFLAGS += -DPY_BUILDER_ID=0x$(shell cat $(PY_BUILDER_SRC) | sha256sum | cut -c1-16)ull

$(CORE_LIB): $(CORE_OBJ)
	rm -f $@ && ar rcs $@ $^

$(B)/bpfprof: $(B)/obj/user/main.o $(CORE_LIB)
	$(CC) $(LDFLAGS) -rdynamic $^ $(LIBS) -o $@

# Plugin objects: position independent, one archive per plugin for unit tests.
$(B)/obj/plugins/%.o: plugins/%.c $(wildcard include/bpfprof/*.h) $(wildcard plugins/*/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iplugins $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

# Keep every intermediate file (skeleton, plugin objects): no needless rebuilds.
.SECONDARY:
.SECONDEXPANSION:
# A plugin's objects: its own and those of plugins/common/.
plugin_objs = $(foreach f,$(wildcard plugins/$(1)/*.c),$(B)/obj/$(f:.c=.o)) $(PLUGIN_COMMON_OBJ)
$(B)/plugins/%.so: $$(call plugin_objs,$$*)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared $^ -lz -lm -o $@

$(B)/obj/plugins/%.a: $$(call plugin_objs,$$*)
	rm -f $@ && ar rcs $@ $^

$(B)/workloads/nofp_%: tests/workloads/nofp_%.c tests/workloads/groundtruth.h
	@mkdir -p $(@D)
	$(CC) $(WL_NOFP_CFLAGS) $< -o $@ -lm

$(B)/workloads/rsburn: tests/workloads/rsburn.rs
	@mkdir -p $(@D)
	env -u MAKEFLAGS RSBURN_MANGLING=legacy $(RUSTC) -O -g $< -o $@

$(B)/workloads/rsburn_v0: tests/workloads/rsburn.rs
	@mkdir -p $(@D)
	env -u MAKEFLAGS RSBURN_MANGLING=v0 $(RUSTC) -O -g -C symbol-mangling-version=v0 $< -o $@

# Lazy binding whatever the toolchain's default: lazy_binding.sh's calls go
# through ld.so's resolver on every call (LD_BIND_NOT=1).
$(B)/workloads/nofp_lazy: tests/workloads/nofp_lazy.c tests/workloads/groundtruth.h
	@mkdir -p $(@D)
	$(CC) $(WL_NOFP_CFLAGS) -Wl,-z,lazy $< -o $@ -lm

$(B)/workloads/nofp_paths_lld: tests/workloads/nofp_paths.c tests/workloads/groundtruth.h
	@mkdir -p $(@D)
	$(CC) $(WL_NOFP_CFLAGS) -fuse-ld=lld $< -o $@ -lm

$(B)/workloads/%: tests/workloads/%.c tests/workloads/groundtruth.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) $< -o $@ -lm

$(B)/workloads/%: tests/workloads/%.cc tests/workloads/groundtruth.h
	@mkdir -p $(@D)
	$(CXX) $(WL_CFLAGS) $< -o $@ -lm

$(B)/workloads/mpi_%: tests/workloads/mpi_%.c tests/workloads/groundtruth.h
	@mkdir -p $(@D)
	$(MPICC) $(WL_CFLAGS) $< -o $@ -lm

$(B)/workloads/%_lib.so: tests/workloads/%_lib.c tests/workloads/groundtruth.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -shared -fPIC $< -o $@

# The same library built the way distributions build (no frame pointers).
$(B)/workloads/nofp_late_lib.so: tests/workloads/late_lib.c tests/workloads/groundtruth.h
	@mkdir -p $(@D)
	$(CC) $(WL_NOFP_CFLAGS) -shared -fPIC $< -o $@

# late_dlopen dlopen()s late_lib.so (or -l LIB) from its own directory at run time.
$(B)/workloads/late_dlopen: tests/workloads/late_dlopen.c tests/workloads/groundtruth.h \
			    $(B)/workloads/late_lib.so $(B)/workloads/nofp_late_lib.so
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) $< -o $@ -ldl -lm

$(B)/tools/%: tests/tools/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ -lz -lm

$(B)/obj/tests/unit/lib/%.o: tests/unit/lib/%.c tests/unit/lib/%.h include/bpfprof/plugin.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# A unit test of component C links the core library and, when C is a
# plugin, that plugin's objects (plugins/common/ included) and the shared
# test helpers of tests/unit/lib/ ("fake_host.h"; plugin headers by their
# path from plugins/, "pprof/pb.h").
ut_plugin = $(filter $(firstword $(subst /, ,$(1))),$(PLUGINS))
$(B)/tests/unit/%: tests/unit/%.c $(CORE_LIB) $$(if $$(call ut_plugin,$$*),$(B)/obj/plugins/$$(call ut_plugin,$$*).a $(UT_LIB_OBJ)) \
		   $(wildcard tests/unit/lib/*.h) $(wildcard plugins/*/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ibpf -Iplugins -Itests/unit/lib $(CFLAGS) $(LDFLAGS) $(filter %.c %.o %.a,$^) \
		$(CORE_LIB) $(UT_LIBS) $(LIBS) -o $@

# The build runs in a make of its own after deps: variables such as MPICC
# are read when make starts, before deps has installed what they name.
demo: deps
	$(MAKE) all
	bash tests/demo.sh $(B)

# Every test once: under AddressSanitizer + UBSan (build-asan), but those
# whose header says "# Builds: release" (they measure memory, CPU or speed)
# on $(B), and those that say "# Builds: release sanitized" on both (see
# tests/run).
check test: deps
	$(MAKE) all
	$(ASAN_MAKE) all
	bash tests/run --sanitized build-asan $(B)

# Every test on the release build alone.
check-release: deps
	$(MAKE) all
	bash tests/run $(B)

ASAN_MAKE = $(MAKE) B=build-asan SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
asan:
	$(ASAN_MAKE) all

# Under the sanitizers: every test but the two that build their own binaries
# (the fuzzers are ASan builds already; the benchmark measures nothing here).
asan-check: deps
	$(ASAN_MAKE) all
	BPFPROF_SANITIZED=1 BPFPROF_TEST_EXCLUDE="fuzz_smoke bench_smoke" bash tests/run build-asan

# libFuzzer targets tests/fuzz/fuzz_NAME.c (clang, ASan + UBSan), each run for
# FUZZ_SECONDS on its seed corpus tests/fuzz/corpus/NAME/.
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_SECONDS ?= 30
FUZZ_MAKE = $(MAKE) B=build-fuzz CC=clang CXX=clang++ SAN_FLAGS="-fsanitize=fuzzer-no-link,address,undefined"
fuzz: deps
	$(FUZZ_MAKE) fuzz-targets
	bash tests/fuzz/run build-fuzz $(FUZZ_SECONDS)

fuzz-targets: $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRC))

$(B)/fuzz/%: tests/fuzz/%.c $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ibpf $(CFLAGS) -fsanitize=fuzzer $< $(CORE_LIB) $(LIBS) -o $@

bench: deps
	$(MAKE) all
	bash tests/bench/run $(B)

# The SDK: the collector, its plugins, the plugin header, bpfprof-plugin.pc
# (pkg-config), the man page, docs/PLUGINS.md and the example plugin.  The
# collector looks for plugins in the PLUGINDIR it was built with: build and
# install with the same PREFIX (or set BPFPROF_PLUGIN_PATH).
install: $(B)/bpfprof $(PLUGIN_SO)
	install -D -m 0755 $(B)/bpfprof $(DESTDIR)$(BINDIR)/bpfprof
	install -d -m 0755 $(DESTDIR)$(PLUGINDIR)
	install -m 0755 $(PLUGIN_SO) $(DESTDIR)$(PLUGINDIR)/
	install -D -m 0644 include/bpfprof/plugin.h $(DESTDIR)$(INCDIR)/bpfprof/plugin.h
	install -d -m 0755 $(DESTDIR)$(LIBDIR)/pkgconfig
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@INCDIR@|$(INCDIR)|g' \
	    -e 's|@PLUGINDIR@|$(PLUGINDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    -e "s|@ABI_VERSION@|$$(sed -n 's/^#define BPFPROF_PLUGIN_ABI_VERSION \([0-9]*\).*/\1/p' include/bpfprof/plugin.h)|g" \
	    include/bpfprof-plugin.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/bpfprof-plugin.pc
	chmod 0644 $(DESTDIR)$(LIBDIR)/pkgconfig/bpfprof-plugin.pc
	install -D -m 0644 docs/bpfprof.1 $(DESTDIR)$(or $(MANDIR),$(PREFIX)/share/man)/man1/bpfprof.1
	install -D -m 0644 docs/PLUGINS.md $(DESTDIR)$(or $(DOCDIR),$(PREFIX)/share/doc/bpfprof)/PLUGINS.md
	install -d -m 0755 $(DESTDIR)$(or $(DOCDIR),$(PREFIX)/share/doc/bpfprof)/examples/plugin
	install -m 0644 $(wildcard docs/examples/plugin/*) \
		$(DESTDIR)$(or $(DOCDIR),$(PREFIX)/share/doc/bpfprof)/examples/plugin/

clean:
	rm -rf build build-asan build-fuzz
