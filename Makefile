# kubesim: make run (main job on the shipped default data), make test (vet + tests).
GO ?= go
BENCHTIME ?= 1s
FUZZTIME ?= 30s
# Fuzz targets as package:Function; plain `go test` (make test) runs each
# one's seed corpus, `make fuzz` fuzzes each for FUZZTIME.
FUZZ := ./dataset:FuzzCSVRows ./dataset:FuzzArrowReader ./sweep:FuzzParseSpec ./model:FuzzCheckpoint
BIN := bin/kubesim
TRACE := data/default-trace
# The model uses OpenBLAS through cgo when Debian's libopenblas-dev is
# installed (2-3x faster training); otherwise gonum's pure-Go BLAS. Override
# with `make TAGS= ...` or `make TAGS=openblas ...`.
TAGS ?= $(if $(wildcard /usr/lib/*/libopenblas.so /usr/lib/libopenblas.so),openblas,)

.PHONY: build test run bench fuzz fmt clean

build:
	$(GO) build -tags '$(TAGS)' -o $(BIN) ./cmd/kubesim

test:
	$(GO) vet -tags '$(TAGS)' ./...
	$(GO) test -tags '$(TAGS)' ./...

# The default trace (400 machines, 2 days) is synthesised and converted on
# first use (one to two seconds). Then the shipped experiment replays its
# test windows at 10 to 200 machines under 5 seeds, every heuristic and the
# policy trained by `kubesim train --config experiments/default.yaml`
# (results/default/), and prints mean ± 95% CI tables.
run: build
	$(BIN) data --out $(TRACE)
	$(BIN) experiment --config experiments/default.yaml --checkpoint results/default/best.ckpt

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
