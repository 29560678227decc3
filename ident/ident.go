// Package ident owns the identifier formats brick checks before a value
// reaches a path, a command line or a server: iSCSI names, NVMe qualified
// names, UUIDs, Fibre Channel WWNs, multipath WWIDs and kernel device names,
// and how much of an untrusted text a message may quote (text.go).
// Every other package asks here instead of keeping its own pattern.
package ident

import "strings"

// The formats are checked byte by byte rather than with regexps: compiling
// the patterns cost get-connector, which checks an IQN, an NQN and a UUID,
// a tenth of its instructions. ident_test.go holds the patterns and fuzzes
// each check against its pattern.

// shellSpecial are characters no iSCSI name holds; refusing them keeps a
// hostile name harmless wherever it ends up.
const shellSpecial = " \t'\"`$\\;|&<>(){}*?!"

// IQN reports whether s is an iSCSI name in iqn., eui. or naa. form
// (RFC 3720 3.2.6) of at most 223 bytes with no shell-special characters.
func IQN(s string) bool {
	if len(s) > 223 || strings.ContainsAny(s, shellSpecial) {
		return false
	}
	return iqnName(strings.ToLower(s)) || hexName(s, "eui.", 16, 16) || hexName(s, "naa.", 16, 32)
}

// NQN reports whether s looks like an NVMe qualified name (at most 223 bytes).
func NQN(s string) bool {
	rest, ok := datedName(s, "nqn.")
	return len(s) <= 223 && ok && rest != "" && all(rest, isPrint)
}

// IsUUID reports whether s is a UUID in canonical 8-4-4-4-12 form.
func IsUUID(s string) bool { return len(s) == 36 && IsUUIDLoose(s) }

// IsUUIDLoose reports whether s is a UUID with or without its dashes, as
// Cinder accepts volume IDs.
func IsUUIDLoose(s string) bool {
	for i, n := range [...]int{8, 4, 4, 4, 12} {
		if i > 0 {
			s, _ = strings.CutPrefix(s, "-")
		}
		if len(s) < n || !all(s[:n], isHex) {
			return false
		}
		s = s[n:]
	}
	return s == ""
}

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
	if len(s) != 16 || !all(s, isLowerHex) {
		return "", false
	}
	return s, true
}

// WWID reports whether s can be a multipath WWID on a command line or in a
// path: printable ASCII, no white space, slash, backslash or quote, no
// leading "-", at most 255 bytes.
func WWID(s string) bool {
	return s != "" && len(s) <= 255 && isAlnum(s[0]) && all(s, isPrint) && !strings.ContainsAny(s, `/\'"`)
}

// DiskName reports whether name is a plain kernel block device name such
// as "sdb" or "nvme0n1" ("dm-3" is not: see DMName), safe in a path.
func DiskName(name string) bool {
	return name != "" && len(name) <= 32 && isLower(name[0]) && all(name, func(c byte) bool { return isLower(c) || isDigit(c) })
}

// DMName reports whether name is a device-mapper node name such as "dm-3".
func DMName(name string) bool {
	n, ok := strings.CutPrefix(name, "dm-")
	return ok && n != "" && len(n) <= 6 && all(n, isDigit)
}

// SubsystemNQN reports whether s can name an NVMe subsystem on a fabrics
// connect: "nqn." and printable ASCII with no "," or "=" (the kernel's
// option separators), at most 223 bytes. Looser than NQN because Cinder's
// own nvmet target names subsystems "nqn.<prefix>-<volume id>" without the
// date and domain the specification asks for.
func SubsystemNQN(s string) bool {
	return len(s) <= 223 && strings.HasPrefix(s, "nqn.") && len(s) > len("nqn.") && !strings.ContainsAny(s, ",=") && all(s, isPrint)
}

// iqnName matches a lowercased "iqn.yyyy-mm.naming-authority[:unique]".
func iqnName(s string) bool {
	rest, ok := datedName(s, "iqn.")
	if !ok {
		return false
	}
	auth, unique, hasUnique := strings.Cut(rest, ":")
	if auth == "" || !isLower(auth[0]) && !isDigit(auth[0]) {
		return false
	}
	if !all(auth, func(c byte) bool { return isLower(c) || isDigit(c) || c == '.' || c == '-' }) {
		return false
	}
	return !hasUnique || unique != "" && all(unique, isPrint)
}

// datedName cuts prefix and a "yyyy-mm." date off s.
func datedName(s, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) < 8 || !all(rest[:4], isDigit) || rest[4] != '-' || !all(rest[5:7], isDigit) || rest[7] != '.' {
		return "", false
	}
	return rest[8:], true
}

// hexName matches prefix followed by short or long hex digits.
func hexName(s, prefix string, short, long int) bool {
	h, ok := strings.CutPrefix(s, prefix)
	return ok && (len(h) == short || len(h) == long) && all(h, isHex)
}

func all(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isLower(c byte) bool    { return 'a' <= c && c <= 'z' }
func isLowerHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' }
func isHex(c byte) bool      { return isLowerHex(c) || 'A' <= c && c <= 'F' }
func isAlnum(c byte) bool    { return isDigit(c) || isLower(c) || 'A' <= c && c <= 'Z' }
func isPrint(c byte) bool    { return 0x21 <= c && c <= 0x7e }
