# brick — build, unit tests, the whole suite, benchmarks.
GO ?= go
E2E_TIMEOUT ?= 60m

.PHONY: build install man deb image demo unit e2e e2e-short test bench fuzz clean

# The version from the git tag (scripts/version.sh: 1.2.0, 1.2.0-3-gabc1234,
# 0.0.0-N-gHASH before the first tag); `brick --version` prints it.
VERSION ?= $(shell scripts/version.sh)

# A static binary without debug tables starts faster (no dynamic loader,
# fewer pages to map): get-connector is mostly process start-up.
# -buildvcs=auto: `brick version` shows the commit even where GOFLAGS
# turns VCS stamping off (as on the build machines here).
BUILDFLAGS ?= -trimpath -buildvcs=auto -ldflags "-s -w -X main.version=$(VERSION)"

# Two binaries from one source: brick, and brick-csi, the same commands
# with the CSI driver (gRPC and the CSI spec) linked in. brick is built
# without it (-tags nocsi): `brick csi` runs the brick-csi beside it, and
# no other command pays the driver's package initialisers at start-up.
build:
	CGO_ENABLED=0 $(GO) build -tags nocsi $(BUILDFLAGS) -o bin/brick ./cmd/brick
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o bin/brick-csi ./cmd/brick

install: build
	install -m 0755 bin/brick bin/brick-csi $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)

# The last commit's time dates the man pages and the package's files, so
# two builds of one commit are the same.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH

# One man page per command (section 8), from the commands themselves.
# cobra's generator runs in a test (TestManPages) so the binary does not
# link it.
man:
	rm -rf bin/man
	BRICK_MAN_DIR=$(abspath bin/man) $(GO) test -count=1 -ldflags "-X github.com/brick-storage/brick/cmd/brick.version=$(VERSION)" -run '^TestManPages$$' ./cmd/brick >/dev/null

# The Debian package (packaging/deb.sh: dpkg-deb, no debhelper), then
# lintian; LINTIAN= skips the check (about 1.5 minutes here).
LINTIAN ?= lintian --fail-on error,warning --display-info
deb: build
	bash packaging/deb.sh bin/brick bin
	$(if $(LINTIAN),$(LINTIAN) bin/brick_$(shell scripts/version.sh --deb)_$(shell dpkg --print-architecture).deb)

# The CSI driver's container image (deploy/Containerfile, used by
# deploy/kubernetes). Needs a container engine; none runs on the test bed.
CONTAINER_ENGINE ?= docker
IMAGE ?= brick:$(VERSION)
image:
	$(CONTAINER_ENGINE) build -f deploy/Containerfile --build-arg VERSION=$(VERSION) -t $(IMAGE) .

# brick's main job on this machine: a real Cinder, the real-kernel guest,
# local-attach -> write -> list -> local-detach (scripts/demo.sh; as root).
demo:
	bash scripts/demo.sh

# Fast unit tests: fixture trees and scripted runners, no services, no guest.
unit:
	$(GO) vet ./...
	$(GO) test ./...

# Real Cinder, real Ironic and a qemu guest with Debian's kernel; installs
# what it needs first (idempotent).
e2e:
	E2E_TIMEOUT=$(E2E_TIMEOUT) bash test/e2e.sh

# The fast lane: one representative e2e test per protocol plus a Cinder and
# an Ironic test, under 8 minutes (docs/testing.md).
e2e-short:
	E2E_TIMEOUT=$(E2E_TIMEOUT) bash test/e2e.sh -short

# The whole suite: the README's test command, what .ci/run runs.
test:
	bash test/all.sh

bench:
	bash bench/run.sh

# Every fuzz target for FUZZTIME (default 10s) each.
fuzz:
	bash test/fuzz.sh

clean:
	rm -rf bin bench/results test-e2e.log test-e2e-times.tsv
