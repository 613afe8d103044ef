# kubesim: make run (main job on the shipped default data), make test (vet + tests).
GO ?= go
BENCHTIME ?= 1s

.PHONY: build test run bench fmt clean

build:
	$(GO) build ./...

test:
	$(GO) vet ./...
	$(GO) test ./...

run:
	$(GO) run ./cmd/kubesim replay --scheduler all --nodes 40 --seed 1

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
