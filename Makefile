# brick — build, unit tests, the whole suite, benchmarks.
GO ?= go
E2E_TIMEOUT ?= 60m

.PHONY: build install unit e2e test bench fuzz clean

build:
	$(GO) build -trimpath -o bin/brick ./cmd/brick

install:
	$(GO) install ./cmd/brick

# Fast unit tests: fixture trees and scripted runners, no services, no guest.
unit:
	$(GO) vet ./...
	$(GO) test ./...

# Real Cinder, real Ironic and a qemu guest with Debian's kernel; installs
# what it needs first (idempotent).
e2e:
	E2E_TIMEOUT=$(E2E_TIMEOUT) bash test/e2e.sh

# The whole suite: the README's test command, what .ci/run runs.
test:
	bash test/all.sh

bench:
	bash bench/run.sh

clean:
	rm -rf bin bench/results test-e2e.log
