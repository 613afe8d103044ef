# kubesim: make run (main job on the shipped default data), make test (vet + tests).
GO ?= go
BENCHTIME ?= 1s
BIN := bin/kubesim
TRACE := data/default-trace

.PHONY: build test run bench bench-openblas fmt clean

build:
	$(GO) build -o $(BIN) ./cmd/kubesim

test:
	$(GO) vet ./...
	$(GO) test ./...

# The default trace is synthesised and converted on first use (about a second);
# every heuristic then replays its held-out test window at load factor 1.3.
run: build
	$(BIN) data --out $(TRACE)
	$(BIN) replay --trace $(TRACE) --window test-0 --load-factor 1.3 --seed 1

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

# The model's benchmarks with OpenBLAS (apt-get install -y libopenblas-dev).
bench-openblas:
	$(GO) test -tags openblas -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./model/...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
