// Package guest holds the shell side of brick's qemu test guest: the two
// init stages and the fixture scripts that e2e tests call inside the guest.
//
// The files are embedded so that the runner in internal/testbed/guest can
// copy them into each guest's share; a guest therefore always runs the
// scripts the test binary was built with, wherever the checkout lives.
package guest

import "embed"

// RDInit is the initramfs /init (busybox sh). It loads the virtio and 9p
// modules, builds the overlay root over the host's / and switch_roots into
// Init.
//
//go:embed rdinit.sh
var RDInit []byte

// Init is the second stage (bash, PID 1 on the overlay root). It prepares
// /run, /tmp, /dev/pts, configfs and the NICs, runs the test script under
// timeout, writes its output and exit code to the share and powers off.
//
//go:embed init.sh
var Init []byte

// Fixtures holds fixtures/*.sh, the in-guest helpers tests source or call.
//
//go:embed fixtures/*.sh
var Fixtures embed.FS
