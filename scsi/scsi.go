// Package scsi is Linux SCSI over sysfs, shared by the iSCSI and Fibre
// Channel connectors: address a LUN by H:C:T:L, scan exactly that LUN, find
// and wait for its block device, read its WWID, delete it and wait until it
// is gone, and check what holds it (mounts, dm-multipath maps).
//
// Disks are named as the kernel names them ("sdb"); DevPath gives "/dev/sdb".
// Every path goes through host.FS, so tests run on a fixture sysfs tree.
package scsi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// Wildcard in an HCTL's Channel or Target scans every channel or target
// ("-" in the kernel's scan file). The LUN is never a wildcard: brick scans
// one LUN, so other volumes exported on the same target never appear.
const Wildcard = -1

// MaxLUN bounds the LUN numbers brick accepts from a driver: the 14 bits of
// SAM flat-space addressing. Kernel LUNs reach MaxKernelLUN (see lunaddr.go).
const MaxLUN = 16383

// HCTL addresses one SCSI device: host, channel, target, LUN.
type HCTL struct {
	Host, Channel, Target, LUN int
}

// String renders "H:C:T:L", the name of the device under /sys/class/scsi_device.
func (a HCTL) String() string {
	return fmt.Sprintf("%d:%d:%d:%d", a.Host, a.Channel, a.Target, a.LUN)
}

var hctlRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(0|[1-9][0-9]{0,8}):(0|[1-9][0-9]{0,8}):(0|[1-9][0-9]{0,8}):(0|[1-9][0-9]{0,11})$`)
})

// ParseHCTL parses "H:C:T:L" in the kernel's form: no leading zeros, so
// the parsed address names the same sysfs entry as the string did.
func ParseHCTL(s string) (HCTL, error) {
	m := hctlRE().FindStringSubmatch(s)
	if m == nil {
		return HCTL{}, fmt.Errorf("parse H:C:T:L %q: malformed", s)
	}
	var v [4]int
	for i := range v {
		n, err := strconv.Atoi(m[i+1])
		if err != nil {
			return HCTL{}, fmt.Errorf("parse H:C:T:L %q: %w", s, err)
		}
		v[i] = n
	}
	return HCTL{v[0], v[1], v[2], v[3]}, nil
}

// Options tune SCSI operations; the zero value means the defaults.
type Options struct {
	// DeviceTimeout bounds the wait for a scanned LUN's block device. Default 30 s.
	DeviceTimeout time.Duration
	// GoneTimeout bounds the wait for deleted devices to disappear. Default 20 s.
	GoneTimeout time.Duration
	// Backoff paces the poll behind inotify wake-ups.
	Backoff host.Backoff
}

func (o Options) withDefaults() Options {
	if o.DeviceTimeout <= 0 {
		o.DeviceTimeout = 30 * time.Second
	}
	if o.GoneTimeout <= 0 {
		o.GoneTimeout = 20 * time.Second
	}
	return o
}

// SCSI works on the host's SCSI devices.
type SCSI struct {
	fs    host.FS
	sys   host.System
	block host.BlockDevices
	log   *slog.Logger
	opts  Options
}

// New returns a SCSI over h.
func New(h *host.Host, opts Options) *SCSI {
	log := h.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &SCSI{fs: h.FS, sys: h.Sys, block: h.Block, log: log, opts: opts.withDefaults()}
}

// ErrNotFound means no block device exists (yet) for an address.
var ErrNotFound = errors.New("no such SCSI device")

// DevPath returns "/dev/<name>".
func DevPath(name string) string { return "/dev/" + name }

// DiskName turns "/dev/sdb" or "sdb" into "sdb", rejecting anything else.
func DiskName(dev string) (string, error) {
	name := strings.TrimPrefix(dev, "/dev/")
	if !ident.DiskName(name) && !ident.DMName(name) {
		return "", fmt.Errorf("device %q: not a disk name", dev)
	}
	return name, nil
}

// Scan asks the kernel to probe exactly one LUN: "C T L" written to
// /sys/class/scsi_host/hostH/scan. Channel and Target may be Wildcard.
// Scanning a LUN that is already known is harmless.
func (s *SCSI) Scan(ctx context.Context, a HCTL) error {
	if a.Host < 0 || a.LUN < 0 || a.LUN > MaxKernelLUN {
		return fmt.Errorf("scsi scan %s: invalid address", a)
	}
	field := func(n int) string {
		if n == Wildcard {
			return "-"
		}
		return strconv.Itoa(n)
	}
	file := fmt.Sprintf("/sys/class/scsi_host/host%d/scan", a.Host)
	line := fmt.Sprintf("%s %s %d", field(a.Channel), field(a.Target), a.LUN)
	s.log.Debug("scsi scan", "file", file, "value", line)
	if err := s.fs.WriteFile(file, []byte(line)); err != nil {
		return fmt.Errorf("scsi scan host%d %q: %w", a.Host, line, err)
	}
	return nil
}

// Find returns the disk names of the devices matching a (Channel and Target
// may be Wildcard), sorted. None is not an error.
func (s *SCSI) Find(a HCTL) ([]string, error) {
	field := func(n int) string {
		if n == Wildcard {
			return "*"
		}
		return strconv.Itoa(n)
	}
	pattern := fmt.Sprintf("/sys/class/scsi_device/%d:%s:%s:%d/device/block/*", a.Host, field(a.Channel), field(a.Target), a.LUN)
	matches, err := s.fs.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("find scsi device %s: %w", a, err)
	}
	out := make([]string, 0, len(matches))
	for _, m := range matches {
		if name := path.Base(m); ident.DiskName(name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// BlockDevice returns the disk name of the device at a, or ErrNotFound.
func (s *SCSI) BlockDevice(a HCTL) (string, error) {
	names, err := s.Find(a)
	if err != nil {
		return "", err
	}
	if len(names) == 0 {
		return "", fmt.Errorf("scsi device %s: %w", a, ErrNotFound)
	}
	return names[0], nil
}

// HCTLOf returns the address of a disk from /sys/block/<name>/device.
func (s *SCSI) HCTLOf(name string) (HCTL, error) {
	if !ident.DiskName(name) {
		return HCTL{}, fmt.Errorf("address of %q: not a disk name", name)
	}
	target, err := s.fs.Readlink("/sys/block/" + name + "/device")
	if err != nil {
		return HCTL{}, fmt.Errorf("address of %s: %w", name, err)
	}
	return ParseHCTL(path.Base(target))
}

// WaitForDevice waits until the device at a has a block device in sysfs
// (/sys/block/<name>/device too) and its node in /dev, and returns its disk name. It wakes on inotify events in
// /dev and polls sysfs with a growing gap in between; Options.DeviceTimeout
// (or ctx, if shorter) bounds the wait.
func (s *SCSI) WaitForDevice(ctx context.Context, a HCTL) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.DeviceTimeout)
	defer cancel()
	var found string
	err := s.fs.WaitFor(ctx, []string{"/dev"}, s.opts.Backoff, func() (bool, error) {
		names, err := s.Find(a)
		if err != nil {
			return false, err
		}
		for _, n := range names {
			// /dev/sdX comes before the /sys/block/sdX link, and
			// callers read sysfs through the link next.
			if s.fs.Exists(DevPath(n)) && s.fs.Exists("/sys/block/"+n+"/device") {
				found = n
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("wait for scsi device %s: %w", a, err)
	}
	return found, nil
}

// Exists reports whether the disk is still known to the kernel.
func (s *SCSI) Exists(name string) bool {
	if !ident.DiskName(name) {
		return false
	}
	_, err := s.fs.Lstat("/sys/block/" + name)
	return err == nil
}

// ReadOnly reports whether the kernel marks the disk read-only.
func (s *SCSI) ReadOnly(name string) (bool, error) {
	if !ident.DiskName(name) && !ident.DMName(name) {
		return false, fmt.Errorf("read-only flag of %q: not a disk name", name)
	}
	v, err := s.fs.ReadString("/sys/block/" + name + "/ro")
	if err != nil {
		return false, fmt.Errorf("read-only flag of %s: %w", name, err)
	}
	return v == "1", nil
}

// Holders lists the block devices stacked on a disk ("dm-3"), from
// /sys/block/<name>/holders. A disk that is gone has none.
func (s *SCSI) Holders(name string) ([]string, error) {
	if !ident.DiskName(name) && !ident.DMName(name) {
		return nil, fmt.Errorf("holders of %q: not a disk name", name)
	}
	entries, err := s.fs.ReadDir("/sys/block/" + name + "/holders")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("holders of %s: %w", name, err)
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out, nil
}

// Delete removes the disk from the kernel (1 > /sys/block/<name>/device/delete).
// A disk that is already gone is success.
func (s *SCSI) Delete(ctx context.Context, name string) error {
	if !ident.DiskName(name) {
		return fmt.Errorf("delete %q: not a disk name", name)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	file := "/sys/block/" + name + "/device/delete"
	s.log.Debug("scsi delete", "device", name)
	if err := s.fs.WriteFile(file, []byte("1")); err != nil {
		if errors.Is(err, fs.ErrNotExist) || !s.Exists(name) {
			return nil
		}
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}

// WaitGone waits until none of the disks exists any more in sysfs or /dev,
// bounded by Options.GoneTimeout (or ctx).
func (s *SCSI) WaitGone(ctx context.Context, names ...string) error {
	if len(names) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.GoneTimeout)
	defer cancel()
	var left []string
	err := s.fs.WaitFor(ctx, []string{"/dev"}, s.opts.Backoff, func() (bool, error) {
		left = left[:0]
		for _, n := range names {
			if s.Exists(n) || s.fs.Exists(DevPath(n)) {
				left = append(left, n)
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %s to go away: %w", strings.Join(left, ", "), err)
	}
	return nil
}

// DeleteAndWait flushes nothing: it deletes each disk and waits until all
// are gone. Use Flush first when data may be buffered.
func (s *SCSI) DeleteAndWait(ctx context.Context, names ...string) error {
	var errs []error
	for _, n := range names {
		if err := s.Delete(ctx, n); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return s.WaitGone(ctx, names...)
}
