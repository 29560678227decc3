package scsi

import "fmt"

// Addressing modes a Cinder driver may name in addressing_mode (os-brick's
// spelling). They say how the array encodes the LUN it reports, so how the
// kernel numbers it.
const (
	AddressingSAM         = "SAM"
	AddressingTransparent = "transparent"
	AddressingSAM2        = "SAM2"
	AddressingSAM3Flat    = "SAM3-flat"
)

// flatSpace is what Linux adds to a LUN reported with flat-space
// addressing (method 01b in the top bits of the first LUN byte).
const flatSpace = 16384

// MaxKernelLUN is the highest LUN brick scans: a flat-space LUN MaxLUN.
const MaxKernelLUN = flatSpace + MaxLUN

// CheckAddressingMode refuses a mode other than those above; "" is SAM.
func CheckAddressingMode(mode string) error {
	switch mode {
	case "", AddressingSAM, AddressingTransparent, AddressingSAM2, AddressingSAM3Flat:
		return nil
	}
	return fmt.Errorf("want %s, %s, %s or %s, got %q", AddressingSAM, AddressingTransparent, AddressingSAM2, AddressingSAM3Flat, mode)
}

// KernelLUN turns the LUN a driver gives into the one Linux uses in H:C:T:L
// and the scan file: SAM and transparent (the default) keep it, SAM2 uses
// flat space from 256 up (below that it is peripheral addressing), SAM3-flat
// always does. The LUN must fit the 14 bits flat space has.
func KernelLUN(lun int64, mode string) (int, error) {
	if err := CheckAddressingMode(mode); err != nil {
		return 0, fmt.Errorf("addressing_mode: %w", err)
	}
	if lun < 0 || lun > MaxLUN {
		return 0, fmt.Errorf("LUN %d out of range 0..%d", lun, MaxLUN)
	}
	n := int(lun)
	if mode == AddressingSAM3Flat || mode == AddressingSAM2 && n >= 256 {
		n += flatSpace
	}
	return n, nil
}
