# distenv — build, test and install the distenv-webhook admission webhook.
#   make            build ./distenv-webhook
#   make test       unit tests, golden fixtures, HTTPS integration tier
#   make check      the same under ASan/UBSan (separate build dir)
#   make install    PREFIX=/usr/local DESTDIR= (also kubectl-distenv, the kubectl plugin)
#   make V=1        show commands

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
BUILD   ?= build
VERSION ?= $(shell cat VERSION 2>/dev/null || echo 0.0.0)
GIT_REV ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

CC      ?= cc
PKGS    := libmicrohttpd gnutls libcjson yaml-0.1 libcurl openssl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN    := -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes -Wshadow \
           -Wpointer-arith -Wsign-compare -Wformat=2 -Wno-format-nonliteral
HARDEN  := -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE
OPT     ?= -O2 -g
CFLAGS  ?=
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) $(HARDEN) -MMD -MP \
           -DDISTENV_VERSION=\"$(VERSION)\" -DDISTENV_GIT_REV=\"$(GIT_REV)\" $(PKG_CFLAGS)
# Objects that embed the version (their source includes version.h, the one
# place with the fallbacks) are rebuilt when it changes (the stamp is
# rewritten only when its content differs).
VERSION_OBJS = $(patsubst src/%.c,$(BUILD)/obj/%.o,$(shell grep -l '"version.h"' src/*/*.c))
ifeq ($(WERROR),1)
CFLAGS  += -Werror
endif
LDFLAGS += -pie -Wl,-z,relro,-z,now
LDLIBS  += $(PKG_LIBS) -lpthread

ifeq ($(V),1)
Q :=
else
Q := @
endif

# The wings of src/, lowest first (src/README.md): a file includes headers of
# its own wing or of a lower one (scripts/include-graph.py checks it), and
# every wing is on the include path, so an #include names the header alone.
WINGS    := lib core kinds frameworks obs kube http cli
INCLUDES := $(WINGS:%=-Isrc/%)
SRCS     := $(filter-out src/cli/main.c,$(foreach w,$(WINGS),$(wildcard src/$(w)/*.c)))
OBJS     := $(SRCS:src/%.c=$(BUILD)/obj/%.o)
MAIN_OBJ := $(BUILD)/obj/cli/main.o
CSRC     := $(foreach w,$(WINGS),$(wildcard src/$(w)/*.c src/$(w)/*.h))
TESTS    := $(wildcard test/unit/test_*.c)
TEST_BINS := $(TESTS:test/unit/%.c=$(BUILD)/test/%)

.PHONY: all test unit integration check valgrind install uninstall clean format format-check lint dev dev-review \
        deps e2e e2e-node conformance bench bench-cluster fuzz mutants mutation-score faults loadgen chart chart-install image manifests manifests-check FORCE
all: distenv-webhook

# Replaced by rename, so a running copy ("text file busy") never blocks a build.
distenv-webhook: $(BUILD)/distenv-webhook
	$(Q)cp $< $@.tmp && mv -f $@.tmp $@

$(BUILD)/distenv-webhook: $(OBJS) $(MAIN_OBJ)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/version.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo "$(VERSION) $(GIT_REV)" | cmp -s - $@ || echo "$(VERSION) $(GIT_REV)" > $@

$(VERSION_OBJS): $(BUILD)/version.stamp

FORCE:

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -c -o $@ $<

$(BUILD)/test/%: test/unit/%.c $(OBJS) $(wildcard test/unit/*.h) $(BUILD)/version.stamp
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Itest/unit -o $@ $< $(OBJS) $(LDFLAGS) $(LDLIBS)

unit: $(TEST_BINS)
	$(Q)fail=0; for t in $(TEST_BINS); do ./$$t || fail=1; done; exit $$fail

# The tiers run the binary of this build directory, so `make check` tests the
# sanitizer build and never replaces ./distenv-webhook.
# Then every rule of docs/testing.md's "Every rule over HTTPS" against the answers it got.
integration: $(BUILD)/distenv-webhook
	$(Q)python3 test/integration/run.py --binary $(BUILD)/distenv-webhook --answers $(BUILD)/answers.jsonl
	$(Q)python3 scripts/rules-check.py --answers $(BUILD)/answers.jsonl

test: unit integration

check:
	$(Q)$(MAKE) BUILD=build-san OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
		LDFLAGS="-fsanitize=address,undefined" WERROR=$(WERROR) unit integration

valgrind: $(BUILD)/distenv-webhook $(TEST_BINS)
	$(Q)fail=0; for t in $(TEST_BINS); do valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite ./$$t >/dev/null || fail=1; done; exit $$fail
	$(Q)python3 test/integration/run.py --binary $(BUILD)/distenv-webhook --valgrind

# kubectl-distenv is the same program: kubectl runs `kubectl-<name>` from PATH
# for `kubectl <name> ...` (its plugin convention), so `kubectl distenv doctor
# sts/ddp` is `distenv-webhook doctor sts/ddp`.
install: distenv-webhook
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 distenv-webhook $(DESTDIR)$(BINDIR)/distenv-webhook
	ln -sf distenv-webhook $(DESTDIR)$(BINDIR)/kubectl-distenv

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/distenv-webhook $(DESTDIR)$(BINDIR)/kubectl-distenv

deps:
	bash scripts/deps.sh

# The tiers beyond unit + integration (see docs/testing.md): each installs what it
# needs through scripts/deps-*.sh.
conformance: distenv-webhook
	bash test/frameworks/run.sh

e2e: distenv-webhook
	bash test/e2e/run.sh

# The control plane plus one real node (kubelet, containerd, CoreDNS, kube-proxy):
# distenv installed from its chart, training pods that start. Root only; builds
# its images itself (docs/e2e-node.md).
e2e-node:
	bash test/e2e-node/run.sh

chart: distenv-webhook
	bash test/chart/run.sh

chart-install: distenv-webhook
	bash test/chart/install.sh

manifests: distenv-webhook
	bash scripts/chart-files.sh
	bash scripts/render-manifests.sh

manifests-check: distenv-webhook
	bash scripts/chart-files.sh --check
	bash scripts/render-manifests.sh --check

image:
	bash scripts/image-build.sh

# Test tooling: the open-loop load generator (latency, per-handshake
# certificate counting) that bench and faults both drive; built here only.
LOADGEN := $(BUILD)/tools/loadgen
$(LOADGEN): bench/loadgen.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -o $@ $< \
		$(shell pkg-config --cflags --libs openssl) -lpthread

loadgen: $(LOADGEN)

bench: distenv-webhook $(LOADGEN)
	LOADGEN=$(LOADGEN) bash bench/run.sh

# What a pod webhook costs a cluster (docs/benchmarks.md); BENCH_CLUSTER_QUICK=1 for 200 pods.
bench-cluster: distenv-webhook
	bash bench/cluster.sh

fuzz:
	bash fuzz/run.sh

# The mutation tier: each mutation of test/mutants/mutants.txt applied to a
# scratch copy, built and run against the tier that must catch it; fails when
# one survives (docs/mutants.md).
mutants:
	python3 scripts/promises-check.py
	python3 scripts/rules-check.py
	python3 test/mutants/run.py

# The mutation score, measured by universalmutator (scripts/deps-mutation.sh):
# its mutants of src/core, src/kinds, src/frameworks and src/kube/lookupcache.c,
# each compiled alone and run against the unit tests that reach it, then the
# integration tier; prints the score per file and the survivors (docs/mutants.md).
#   make mutation-score MUTATION_ARGS="--sample 3 --check"   CI's form (bench)
#   make mutation-score MUTATION_ARGS="src/kinds/kind_job.c"  one file, every mutant
MUTATION_ARGS ?=
mutation-score:
	$(Q)python3 test/mutants/score.py --cc "$(CC)" \
		--cflags '$(filter-out -MMD -MP $(OPT),$(CFLAGS)) $(INCLUDES)' \
		--ldflags "$(LDFLAGS)" --ldlibs "$(LDLIBS)" $(MUTATION_ARGS)

faults: distenv-webhook $(LOADGEN)
	LOADGEN=$(LOADGEN) bash test/faults/run.sh

# Run the webhook on loopback with development certificates (certs/out/),
# without Kubernetes look-ups: POST a review with `make dev-review` in another shell.
DEV_LISTEN ?= 127.0.0.1:8443
dev: distenv-webhook
	$(Q)bash certs/dev.sh
	./distenv-webhook serve --no-lookups --listen $(DEV_LISTEN) \
		--tls-cert certs/out/tls.crt --tls-key certs/out/tls.key

DEV_REVIEW ?= test/data/sample-statefulset-pod.request.json
dev-review:
	$(Q)python3 scripts/post-review.py --url https://$(DEV_LISTEN)/mutate --ca certs/out/ca.crt $(DEV_REVIEW)

format:
	clang-format -i $(CSRC) test/unit/*.c test/unit/*.h

format-check:
	$(Q)clang-format --dry-run --Werror $(CSRC) test/unit/*.c test/unit/*.h

# The wing rule for includes, and for symbols on the built objects (nm); every
# src/... path a comment or a doc names is a file.
lint: $(OBJS) $(MAIN_OBJ)
	$(Q)python3 scripts/include-graph.py --symbols $(BUILD)/obj >/dev/null || \
		python3 scripts/include-graph.py --symbols $(BUILD)/obj
	$(Q)python3 scripts/paths-check.py >/dev/null || python3 scripts/paths-check.py
	$(Q)cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
		--inline-suppr --suppress=missingIncludeSystem $(INCLUDES) src

clean:
	rm -rf build build-san build-fuzz distenv-webhook certs/out

-include $(OBJS:.o=.d) $(MAIN_OBJ:.o=.d)
