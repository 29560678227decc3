package iscsi

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/brick-storage/brick/host"
)

// iscsiadm exit codes brick treats specially (open-iscsi's iscsi_err.h).
const (
	exitSessionExists = 15 // ISCSI_ERR_SESS_EXISTS: already logged in
	exitNoObjects     = 21 // ISCSI_ERR_NO_OBJS_FOUND: no such session or record
	exitLoginAuth     = 24 // ISCSI_ERR_LOGIN_AUTH_FAILED
)

// iscsiadm runs open-iscsi's iscsiadm. Every argument is validated before
// it gets here (IQNs by checkIQN, portals by ParsePortal); no secret is
// ever an argument.
type iscsiadm struct {
	runner         host.Runner
	fs             host.FS
	locks          host.Locks
	commandTimeout time.Duration
	loginTimeout   time.Duration
}

// nodeDBLock guards open-iscsi's node database between brick processes: an
// iscsiadm fails when another deletes a record under it. Whatever writes
// records takes it exclusively, the rest share it.
const nodeDBLock = "iscsi-nodedb"

func (a iscsiadm) run(ctx context.Context, timeout time.Duration, ok []int, args ...string) (host.Result, error) {
	lock := a.locks.LockShared
	if writesNodeDB(args) {
		lock = a.locks.Lock
	}
	unlock, err := lock(ctx, nodeDBLock)
	if err != nil {
		return host.Result{}, fmt.Errorf("iscsiadm %s: %w", strings.Join(args, " "), err)
	}
	defer unlock()
	return a.runner.Run(ctx, host.Command{Name: "iscsiadm", Args: args, Timeout: timeout, OKExitCodes: ok})
}

// writesNodeDB tells whether iscsiadm args create, change or delete a record.
func writesNodeDB(args []string) bool {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-o" {
			switch args[i+1] {
			case "new", "delete", "update":
				return true
			}
		}
	}
	return false
}

// editRecordLocked is editRecord under the node database lock, so no
// iscsiadm walking the database reads a record half rewritten.
func (a iscsiadm) editRecordLocked(ctx context.Context, file string, values []recordValue) error {
	unlock, err := a.locks.Lock(ctx, nodeDBLock)
	if err != nil {
		return fmt.Errorf("edit iscsi record %s: %w", path.Base(file), err)
	}
	defer unlock()
	return editRecord(a.fs, file, values)
}

// newNode creates the node record for iqn at p with iscsid.conf's defaults.
func (a iscsiadm) newNode(ctx context.Context, iqn string, p Portal, iface string) error {
	if _, err := a.run(ctx, a.commandTimeout, nil, nodeArgs(iqn, p, iface, "-o", "new")...); err != nil {
		return fmt.Errorf("iscsi create node record %s@%s: %w", iqn, p, err)
	}
	return nil
}

// login logs in to iqn at p; an existing session is fine. The command gets
// the login timeout plus a margin, since iscsiadm enforces its own.
func (a iscsiadm) login(ctx context.Context, iqn string, p Portal, iface string) (existed bool, err error) {
	res, err := a.run(ctx, a.loginTimeout+a.commandTimeout, []int{exitSessionExists}, nodeArgs(iqn, p, iface, "--login")...)
	if err != nil {
		if host.ExitCodeOf(err) == exitLoginAuth {
			return false, fmt.Errorf("iscsi login %s@%s: CHAP authentication failed: %w", iqn, p, err)
		}
		return false, fmt.Errorf("iscsi login %s@%s: %w", iqn, p, err)
	}
	return res.ExitCode == exitSessionExists, nil
}

// logout ends the session to iqn at p; none is fine.
func (a iscsiadm) logout(ctx context.Context, iqn string, p Portal, iface string) error {
	if _, err := a.run(ctx, a.commandTimeout, []int{exitNoObjects}, nodeArgs(iqn, p, iface, "--logout")...); err != nil {
		return fmt.Errorf("iscsi logout %s@%s: %w", iqn, p, err)
	}
	return nil
}

// logoutSession ends one session by its ID; gone already is fine. Logout
// by target and portal would end every session to them.
func (a iscsiadm) logoutSession(ctx context.Context, sid int) error {
	if _, err := a.run(ctx, a.commandTimeout, []int{exitNoObjects}, "-m", "session", "-r", strconv.Itoa(sid), "--logout"); err != nil {
		return fmt.Errorf("iscsi logout session %d: %w", sid, err)
	}
	return nil
}

// deleteNode removes the node record; none is fine.
func (a iscsiadm) deleteNode(ctx context.Context, iqn string, p Portal, iface string) error {
	if _, err := a.run(ctx, a.commandTimeout, []int{exitNoObjects}, nodeArgs(iqn, p, iface, "-o", "delete")...); err != nil {
		return fmt.Errorf("iscsi delete node record %s@%s: %w", iqn, p, err)
	}
	return nil
}

// newDiscovery creates a SendTargets discovery record for p.
func (a iscsiadm) newDiscovery(ctx context.Context, p Portal, iface string) error {
	if _, err := a.run(ctx, a.commandTimeout, nil, withIface(iface, "-m", "discoverydb", "-t", "sendtargets", "-p", p.String(), "-o", "new")...); err != nil {
		return fmt.Errorf("iscsi create discovery record %s: %w", p, err)
	}
	return nil
}

// deleteDiscovery removes p's discovery record; none is fine.
func (a iscsiadm) deleteDiscovery(ctx context.Context, p Portal, iface string) error {
	if _, err := a.run(ctx, a.commandTimeout, []int{exitNoObjects}, withIface(iface, "-m", "discoverydb", "-t", "sendtargets", "-p", p.String(), "-o", "delete")...); err != nil {
		return fmt.Errorf("iscsi delete discovery record %s: %w", p, err)
	}
	return nil
}

// discover runs SendTargets against p without storing node records
// ("-o nonpersistent"): brick makes the records it needs itself. With
// useRecord, the discovery record (holding discovery CHAP) is used.
func (a iscsiadm) discover(ctx context.Context, p Portal, iface string, useRecord bool) ([]DiscoveredTarget, error) {
	args := []string{"-m", "discovery", "-t", "sendtargets", "-p", p.String(), "-o", "nonpersistent"}
	if useRecord {
		args = []string{"-m", "discoverydb", "-t", "sendtargets", "-p", p.String(), "--discover", "-o", "nonpersistent"}
	}
	res, err := a.run(ctx, a.loginTimeout+a.commandTimeout, nil, withIface(iface, args...)...)
	if err != nil {
		return nil, fmt.Errorf("iscsi discovery at %s: %w", p, err)
	}
	return ParseDiscovery(res.Stdout), nil
}

// nodeArgs is "-m node -T iqn -p portal [-I iface] op...".
func nodeArgs(iqn string, p Portal, iface string, op ...string) []string {
	return append(withIface(iface, "-m", "node", "-T", iqn, "-p", p.String()), op...)
}

// withIface adds "-I iface" for any interface but the default one, whose
// commands stay as iscsiadm's users know them.
func withIface(iface string, args ...string) []string {
	if iface == "" || iface == IfaceTCP {
		return args
	}
	return append(args, "-I", iface)
}

// DiscoveredTarget is one line of SendTargets output.
type DiscoveredTarget struct {
	Portal Portal
	TPGT   int
	IQN    string
}

// ParseDiscovery parses iscsiadm's discovery output, one
// "<address>:<port>,<tpgt> <iqn>" per line ("[fd00::1]:3260,1 iqn..." for
// IPv6). Lines that do not parse or name an invalid target are skipped:
// the output comes from the network.
func ParseDiscovery(out []byte) []DiscoveredTarget {
	var res []DiscoveredTarget
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			continue
		}
		addr, tpgtStr, ok := cutLast(fields[0], ",")
		if !ok {
			continue
		}
		tpgt, err := strconv.Atoi(tpgtStr)
		if err != nil || tpgt < -1 || tpgt > 65535 {
			continue
		}
		p, err := ParsePortal(addr)
		if err != nil || p.IsName() {
			continue
		}
		if checkIQN("discovery", fields[1]) != nil {
			continue
		}
		res = append(res, DiscoveredTarget{Portal: p, TPGT: tpgt, IQN: fields[1]})
	}
	return res
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}
