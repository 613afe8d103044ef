# kubesim: make run (main job on the shipped default data), make test (vet + tests).
GO ?= go
BENCHTIME ?= 1s
FUZZTIME ?= 30s
# Fuzz targets as package:Function; plain `go test` (make test) runs each
# one's seed corpus, `make fuzz` fuzzes each for FUZZTIME.
FUZZ := ./dataset:FuzzCSVRows ./dataset:FuzzArrowReader ./sweep:FuzzParseSpec ./model:FuzzCheckpoint ./serve:FuzzDecodeArgs
BIN := bin/kubesim
TRACE := data/default-trace
# The model uses OpenBLAS through cgo when Debian's libopenblas-dev is
# installed (2-3x faster training); otherwise gonum's pure-Go BLAS. Override
# with `make TAGS= ...` or `make TAGS=openblas ...`.
TAGS ?= $(if $(wildcard /usr/lib/*/libopenblas.so /usr/lib/libopenblas.so),openblas,)

.PHONY: build test e2e run bench fuzz fmt clean

build:
	$(GO) build -tags '$(TAGS)' -o $(BIN) ./cmd/kubesim

test:
	$(GO) vet -tags '$(TAGS)' ./...
	$(GO) test -tags '$(TAGS)' ./...

# The real control plane (e2e/, a module of its own so that the main module
# never depends on k8s.io/kubernetes; `make test` does not descend into it):
# embedded etcd, kube-apiserver, kube-scheduler with deploy/scheduler-config.yaml
# and kubesim serve watching the API server. README.md says how long the
# first build takes.
e2e:
	cd e2e && $(GO) test -count=1 -timeout 30m -v .

# The default trace (400 machines, 2 days) is synthesised and converted on
# first use (one to two seconds). Then the quick sweep replays its four test
# windows at 20 and 100 machines under 3 seeds, every heuristic and the
# shipped policy, and prints mean ± 95% CI tables (reference:
# results/quick/summary.md). Its cells are cached in runs/quick.
run: build
	$(BIN) data --out $(TRACE)
	$(BIN) sweep experiments/quick.yaml --out runs/quick

bench:
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

fuzz:
	@set -e; for t in $(FUZZ); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "fuzzing $$fn in $$pkg for $(FUZZTIME)"; \
		$(GO) test -tags '$(TAGS)' -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
