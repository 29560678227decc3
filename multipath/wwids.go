package multipath

import (
	"context"
	"fmt"
	"strings"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// WWIDs keeps multipath's wwids file: the WWIDs multipathd may build maps
// for.
type WWIDs struct {
	*deps
}

// WWIDsFile is multipath-tools' list of WWIDs it may build maps for (its
// default wwids_file).
const WWIDsFile = "/etc/multipath/wwids"

const wwidsHeader = "# Multipath wwids, Version : 1.0\n# Maintained by multipath and multipathd; brick adds and forgets the WWIDs of the volumes it attaches.\n#\n# Valid WWIDs:\n"

// Add records the WWID in multipath's wwids file, so multipathd builds
// a map for it even with find_multipaths strict or on. brick appends the
// line under the fcntl lock multipath-tools takes on that file, saving a
// process start; if that fails it runs "multipath -a".
func (w WWIDs) Add(ctx context.Context, wwid string) error {
	return w.edit(ctx, wwidEdit{op: "add", done: "added", flag: "-a", change: host.LineFile.Append}, wwid)
}

// Remove forgets the WWID again, so a later unrelated LUN reusing it
// is not grabbed: its line in the wwids file becomes a comment, as
// "multipath -w" does it, under the same lock (that command is the
// fallback). An unknown WWID is success.
func (w WWIDs) Remove(ctx context.Context, wwid string) error {
	return w.edit(ctx, wwidEdit{op: "remove", done: "forgotten", flag: "-w", change: host.LineFile.CommentOut}, wwid)
}

// wwidEdit is one change of the wwids file: made on its line under the
// lock, else by the multipath command with flag.
type wwidEdit struct {
	op, done, flag string
	change         func(host.LineFile, context.Context, string) (bool, error)
}

func (w WWIDs) edit(ctx context.Context, e wwidEdit, wwid string) error {
	if !ident.WWID(wwid) {
		return fmt.Errorf("multipath %s wwid %q: invalid WWID", e.op, wwid)
	}
	lctx, cancel := context.WithTimeout(ctx, w.opts.CommandTimeout)
	_, err := e.change(w.fs.LineFile(WWIDsFile, wwidsHeader), lctx, "/"+wwid+"/")
	cancel()
	if err == nil {
		w.log.Debug("multipath: wwid "+e.done, "file", WWIDsFile, "wwid", wwid)
		return nil
	}
	w.log.Debug("multipath: cannot write the wwids file; running multipath "+e.flag, "err", err.Error())
	if _, err := w.run(ctx, "multipath", e.flag, wwid); err != nil {
		return fmt.Errorf("multipath %s wwid %s: %w", e.op, wwid, err)
	}
	return nil
}

// Known reports whether multipath's wwids file lists the WWID already,
// which saves a write under its lock.
func (w WWIDs) Known(wwid string) bool {
	data, err := w.fs.ReadFile(WWIDsFile)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "/"+wwid+"/" {
			return true
		}
	}
	return false
}
