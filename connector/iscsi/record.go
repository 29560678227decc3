package iscsi

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/brick-storage/brick/host"
)

// brick edits node records itself, so the CHAP secret never reaches a
// command line (docs/scsi-multipath.md).
//
// open-iscsi keeps records as /etc/iscsi/nodes/<iqn>/<addr>,<port> (a file,
// made by -o new) or /etc/iscsi/nodes/<iqn>/<addr>,<port>,<tpgt>/<iface> (a
// directory, made by discovery); some distributions use /var/lib/iscsi.

// nodeDBs lists where distributions keep open-iscsi's node database.
func nodeDBs() []string { return []string{"/etc/iscsi/nodes", "/var/lib/iscsi/nodes"} }

// sendTargetsDBs lists where discovery records live.
func sendTargetsDBs() []string {
	return []string{"/etc/iscsi/send_targets", "/var/lib/iscsi/send_targets"}
}

// recordFiles returns the record files for a target at a portal, for the
// open-iscsi interface iface. A record made by "-o new" is one file
// whatever its interface (the interface is a setting inside it). None is
// not an error.
func recordFiles(fsys host.FS, iqn string, p Portal, iface string) ([]string, error) {
	var out []string
	for _, db := range nodeDBs() {
		dir := db + "/" + iqn
		entries, err := fsys.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("read node records %s: %w", dir, err)
		}
		want := p.recordName()
		for _, e := range entries {
			name := e.Name()
			if name != want && !strings.HasPrefix(name, want+",") {
				continue
			}
			full := dir + "/" + name
			info, err := fsys.Stat(full)
			if err != nil {
				continue
			}
			if info.IsDir() {
				if fsys.Exists(full + "/" + iface) {
					out = append(out, full+"/"+iface)
				}
				continue
			}
			out = append(out, full)
		}
	}
	return out, nil
}

// removeRecord deletes the node record of iqn at p for the interface
// iface, as "iscsiadm -o delete" does: the record file, its portal
// directory and its target directory once empty. brick wrote the record,
// so it can take it back without a process. false: something could not
// be removed (the caller falls back to iscsiadm).
func removeRecord(fsys host.FS, iqn string, p Portal, iface string) bool {
	files, err := recordFiles(fsys, iqn, p, iface)
	if err != nil {
		return false
	}
	for _, f := range files {
		if fsys.Remove(f) != nil {
			return false
		}
		if path.Base(f) == iface {
			// <addr>,<port>,<tpgt>/<iface>: the directory goes when empty.
			_ = fsys.Remove(path.Dir(f))
		}
	}
	for _, db := range nodeDBs() {
		_ = fsys.Remove(db + "/" + iqn) // only when empty
	}
	return true
}

// recordValue is one "key = value" setting.
type recordValue struct{ key, value string }

// ParseRecord reads an open-iscsi record file ("key = value" lines, "#"
// comments) into a map. Later lines win, as in iscsiadm.
func ParseRecord(data []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		k, v, ok := splitRecordLine(sc.Text())
		if ok {
			out[k] = v
		}
	}
	return out
}

func splitRecordLine(line string) (key, value string, ok bool) {
	t := strings.TrimSpace(line)
	if t == "" || strings.HasPrefix(t, "#") {
		return "", "", false
	}
	k, v, found := strings.Cut(t, "=")
	if !found {
		return "", "", false
	}
	k = strings.TrimSpace(k)
	if k == "" {
		return "", "", false
	}
	return k, strings.TrimSpace(v), true
}

// SetRecord returns data with each key set to its value: the first line of
// a key is replaced, later duplicates dropped, missing keys appended. A
// value of "" removes the key (iscsiadm then uses its default: empty).
// Values must be single-line; callers validate them.
func SetRecord(data []byte, values []recordValue) []byte {
	want := map[string]string{}
	var order []string
	for _, v := range values {
		if _, dup := want[v.key]; !dup {
			order = append(order, v.key)
		}
		want[v.key] = v.value
	}
	done := map[string]bool{}
	var b bytes.Buffer
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" {
			continue
		}
		k, _, ok := splitRecordLine(line)
		if ok {
			if v, set := want[k]; set {
				if !done[k] && v != "" {
					fmt.Fprintf(&b, "%s = %s\n", k, v)
				}
				done[k] = true
				continue
			}
		}
		b.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			b.WriteByte('\n')
		}
	}
	for _, k := range order {
		if !done[k] && want[k] != "" {
			fmt.Fprintf(&b, "%s = %s\n", k, want[k])
		}
	}
	return b.Bytes()
}

// editRecord applies values to a record file in place.
func editRecord(fsys host.FS, file string, values []recordValue) error {
	data, err := fsys.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read iscsi record %s: %w", path.Base(file), err)
	}
	// node.session.scan exists since open-iscsi 2.0.874; an older iscsiadm
	// would reject a record carrying a key it does not know.
	current := ParseRecord(data)
	kept := values[:0:0]
	for _, v := range values {
		if v.key == keyScan {
			if _, known := current[keyScan]; !known {
				continue
			}
		}
		kept = append(kept, v)
	}
	if err := fsys.WriteFile(file, SetRecord(data, kept)); err != nil {
		return fmt.Errorf("write iscsi record %s: %w", path.Base(file), err)
	}
	return nil
}

const keyScan = "node.session.scan"

// nodeSettings are the record values brick sets for a session through the
// open-iscsi interface iface.
func nodeSettings(auth *CHAP, iface string, loginTimeoutSecs int) []recordValue {
	var v []recordValue
	if iface == IfaceISER {
		// A record left from a TCP attach of the same target would log in
		// over TCP: the interface is part of the record.
		v = append(v, recordValue{"iface.iscsi_ifacename", IfaceISER}, recordValue{"iface.transport_name", IfaceISER})
	}
	v = append(v, []recordValue{
		// Only the LUN brick scans appears, not every LUN of a shared target.
		{keyScan, "manual"},
		// A dead portal costs one login timeout, not eight.
		{"node.conn[0].timeo.login_timeout", fmt.Sprint(loginTimeoutSecs)},
		{"node.session.initial_login_retry_max", "1"},
	}...)
	if auth == nil {
		return append(v,
			recordValue{"node.session.auth.authmethod", "None"},
			recordValue{"node.session.auth.username", ""},
			recordValue{"node.session.auth.password", ""})
	}
	return append(v,
		recordValue{"node.session.auth.authmethod", "CHAP"},
		recordValue{"node.session.auth.username", auth.Username},
		recordValue{"node.session.auth.password", auth.Password.Reveal()})
}

// discoverySettings are the SendTargets record values for discovery CHAP.
func discoverySettings(auth *CHAP, loginTimeoutSecs int) []recordValue {
	v := []recordValue{{"discovery.sendtargets.timeo.login_timeout", fmt.Sprint(loginTimeoutSecs)}}
	if auth == nil {
		return append(v, recordValue{"discovery.sendtargets.auth.authmethod", "None"})
	}
	return append(v,
		recordValue{"discovery.sendtargets.auth.authmethod", "CHAP"},
		recordValue{"discovery.sendtargets.auth.username", auth.Username},
		recordValue{"discovery.sendtargets.auth.password", auth.Password.Reveal()})
}

// discoveryRecord returns the st_config file of a discovery portal.
func discoveryRecord(fsys host.FS, p Portal) (string, bool) {
	for _, db := range sendTargetsDBs() {
		f := db + "/" + p.recordName() + "/st_config"
		if fsys.Exists(f) {
			return f, true
		}
	}
	return "", false
}
