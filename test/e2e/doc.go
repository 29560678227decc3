// Package e2e holds brick's end-to-end tests against real services (a real
// Cinder with tgtd, a real Ironic; see internal/testbed and test/cinder,
// test/ironic) and a real kernel in a qemu guest (internal/testbed/guest).
//
// Every test file carries the e2e build tag, so `go test ./...` runs none
// of them; this file has no tag so that the package still builds and vets
// without it. Run them as root after test/install.sh:
//
//	go test -tags e2e -v ./test/e2e/
package e2e
