package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/connector/rbd"
)

// addRBDFlags adds the RBD connector's options to a command that connects
// or disconnects volumes (config key rbd-driver, BRICK_RBD_DRIVER, ... as
// for every flag).
func addRBDFlags(f *pflag.FlagSet, o *rbd.Options) {
	o.Driver = rbd.DriverKRBD
	f.Var((*rbdDriverValue)(&o.Driver), "rbd-driver", `RBD: map with the kernel's rbd module ("krbd", /dev/rbdN) or the rbd-nbd daemon ("nbd", /dev/nbdN)`)
	f.DurationVar(&o.MapTimeout, "rbd-map-timeout", 2*time.Minute, "RBD: time limit for 'rbd device map' (monitors must answer, cephx must accept the key)")
	f.DurationVar(&o.UnmapTimeout, "rbd-unmap-timeout", time.Minute, "RBD: time limit for 'rbd device unmap'")
}

// rbdDriverValue rejects an unknown driver when the flag (or its config
// or environment value) is set, so the mistake is a usage error.
type rbdDriverValue string

func (v *rbdDriverValue) String() string { return string(*v) }
func (v *rbdDriverValue) Type() string   { return "krbd|nbd" }
func (v *rbdDriverValue) Set(s string) error {
	if !rbd.ValidDriver(s) {
		return fmt.Errorf("unknown RBD driver %q (want %s or %s)", s, rbd.DriverKRBD, rbd.DriverNBD)
	}
	*v = rbdDriverValue(s)
	return nil
}
