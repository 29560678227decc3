// Package ident owns the identifier formats brick checks before a value
// reaches a path, a command line or a server: iSCSI names, NVMe qualified
// names, UUIDs, Fibre Channel WWNs, multipath WWIDs and kernel device names.
// Every other package asks here instead of keeping its own pattern.
package ident

import (
	"regexp"
	"strings"
	"sync"
)

var (
	iqnRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^iqn\.[0-9]{4}-[0-9]{2}\.[a-z0-9][a-z0-9.-]*(:[\x21-\x7e]+)?$`)
	})
	euiRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^eui\.[0-9A-Fa-f]{16}$`) })
	naaRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^naa\.[0-9A-Fa-f]{16}([0-9A-Fa-f]{16})?$`) })
	uuidRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)
	})
	nqnRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^nqn\.[0-9]{4}-[0-9]{2}\.[\x21-\x7e]+$`) })
	wwnRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{16}$`) })
	wwidRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9A-Za-z][\x21-\x7e]{0,254}$`) })
	diskRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]{0,31}$`) })
	dmRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^dm-[0-9]{1,6}$`) })
)

// shellSpecial are characters no iSCSI name holds; refusing them keeps a
// hostile name harmless wherever it ends up.
const shellSpecial = " \t'\"`$\\;|&<>(){}*?!"

// IQN reports whether s is an iSCSI name in iqn., eui. or naa. form
// (RFC 3720 3.2.6) of at most 223 bytes with no shell-special characters.
func IQN(s string) bool {
	if len(s) > 223 || strings.ContainsAny(s, shellSpecial) {
		return false
	}
	return iqnRE().MatchString(strings.ToLower(s)) || euiRE().MatchString(s) || naaRE().MatchString(s)
}

// NQN reports whether s looks like an NVMe qualified name (at most 223 bytes).
func NQN(s string) bool { return len(s) <= 223 && nqnRE().MatchString(s) }

// IsUUID reports whether s is a UUID in canonical 8-4-4-4-12 form.
func IsUUID(s string) bool { return len(s) == 36 && uuidRE().MatchString(s) }

// IsUUIDLoose reports whether s is a UUID with or without its dashes, as
// Cinder accepts volume IDs.
func IsUUIDLoose(s string) bool { return uuidRE().MatchString(s) }

// ParseUUID trims s and returns it lowercased when it is a canonical UUID.
func ParseUUID(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if !IsUUID(s) {
		return "", false
	}
	return strings.ToLower(s), true
}

// NormalizeWWN turns "0x21:00:00:24:FF:5A:7B:3C" or "2100..." into the 16
// lowercase hex digits Cinder and sysfs compare.
func NormalizeWWN(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "0x")
	s = strings.ReplaceAll(s, ":", "")
	if !wwnRE().MatchString(s) {
		return "", false
	}
	return s, true
}

// WWID reports whether s can be a multipath WWID on a command line or in a
// path: printable ASCII, no white space, slash, backslash or quote, no
// leading "-", at most 255 bytes.
func WWID(s string) bool { return wwidRE().MatchString(s) && !strings.ContainsAny(s, `/\'"`) }

// DiskName reports whether name is a plain kernel block device name such
// as "sdb" or "nvme0n1" ("dm-3" is not: see DMName), safe in a path.
func DiskName(name string) bool { return diskRE().MatchString(name) }

// DMName reports whether name is a device-mapper node name such as "dm-3".
func DMName(name string) bool { return dmRE().MatchString(name) }

// SubsystemNQN reports whether s can name an NVMe subsystem on a fabrics
// connect: "nqn." and printable ASCII with no "," or "=" (the kernel's
// option separators), at most 223 bytes. Looser than NQN because Cinder's
// own nvmet target names subsystems "nqn.<prefix>-<volume id>" without the
// date and domain the specification asks for.
func SubsystemNQN(s string) bool {
	if len(s) > 223 || !strings.HasPrefix(s, "nqn.") || len(s) == len("nqn.") || strings.ContainsAny(s, ",=") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
