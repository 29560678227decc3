package nvmeof

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// The host's NVMe identity, as nvme-cli keeps it.
const (
	hostNQNFile     = "/etc/nvme/hostnqn"
	hostIDFile      = "/etc/nvme/hostid"
	productUUIDFile = "/sys/class/dmi/id/product_uuid"
	hostNQNPrefix   = "nqn.2014-08.org.nvmexpress:uuid:"
)

// nvmeMultipathFile says whether nvme_core runs native multipath.
const nvmeMultipathFile = "/sys/module/nvme_core/parameters/multipath"

// hostFiles is the host's NVMe identity as nvme-cli keeps it: the one
// reader behind both get-connector's keys and every connect's.
type hostFiles struct {
	nqn, id       string
	nqnErr, idErr error // fs.ErrNotExist for a missing file
}

func readHostFiles(fsys host.FS) hostFiles {
	var f hostFiles
	f.nqn, f.nqnErr = fsys.ReadString(hostNQNFile)
	if f.nqnErr == nil && (!ident.NQN(f.nqn) || strings.ContainsAny(f.nqn, ",=")) {
		f.nqn, f.nqnErr = "", fmt.Errorf("%s: not an NVMe qualified name", hostNQNFile)
	}
	var id string
	if id, f.idErr = fsys.ReadString(hostIDFile); f.idErr == nil {
		var ok bool
		if f.id, ok = ident.ParseUUID(id); !ok {
			f.idErr = fmt.Errorf("%s: not a UUID", hostIDFile)
		}
	}
	return f
}

// HostFacts adds get-connector's NVMe keys: the host NQN and host ID
// (nqn, nvme_hostid) and whether nvme_core runs native multipath
// (nvme_native_multipath; false when the module is not loaded, as
// os-brick reports it).
func (c *Connector) HostFacts(p *connector.Properties, warn func(file string, err error)) {
	f := readHostFiles(c.h.FS)
	p.NQN, p.NVMeHostID = f.nqn, f.id
	if f.nqnErr != nil && !errors.Is(f.nqnErr, fs.ErrNotExist) {
		warn(hostNQNFile, f.nqnErr)
	}
	if f.idErr != nil && !errors.Is(f.idErr, fs.ErrNotExist) {
		warn(hostIDFile, f.idErr)
	}
	native, err := c.h.FS.ReadString(nvmeMultipathFile)
	p.NVMeNativeMultipath = new(err == nil && strings.TrimSpace(native) == "Y")
}

// hostIdentity returns the host NQN (the volume's own host_nqn when the
// driver named one) and host ID for a connect. Without them the kernel
// would use a per-boot NQN no target's ACL knows, so missing files are
// created as nvme-cli does: a UUID from DMI, else a random one.
func (c *Connector) hostIdentity(v Volume) (nqn, id string, err error) {
	f := readHostFiles(c.h.FS)
	nqn, id = f.nqn, f.id
	missing := errors.Is(f.nqnErr, fs.ErrNotExist) || errors.Is(f.idErr, fs.ErrNotExist)
	switch {
	case (f.nqnErr != nil && !errors.Is(f.nqnErr, fs.ErrNotExist)) || (f.idErr != nil && !errors.Is(f.idErr, fs.ErrNotExist)):
		return "", "", errors.Join(f.nqnErr, f.idErr)
	case missing:
		if nqn, id, err = c.createIdentity(nqn, id); err != nil {
			return "", "", err
		}
	}
	if v.HostNQN != "" {
		nqn = v.HostNQN
	}
	return nqn, id, nil
}

// createIdentity writes whichever of hostnqn and hostid is missing.
func (c *Connector) createIdentity(nqn, id string) (string, string, error) {
	uuid := id
	if uuid == "" {
		if u, ok := strings.CutPrefix(nqn, hostNQNPrefix); ok && ident.IsUUID(u) {
			uuid = strings.ToLower(u)
		} else if u, err := c.h.FS.ReadString(productUUIDFile); err == nil && ident.IsUUID(u) {
			uuid = strings.ToLower(u)
		} else {
			uuid = randomUUID()
		}
	}
	if nqn == "" {
		nqn = hostNQNPrefix + uuid
		if err := c.h.FS.WriteFileAtomic(hostNQNFile, []byte(nqn+"\n")); err != nil {
			return "", "", fmt.Errorf("create host NQN: %w", err)
		}
		c.h.Log.Info("nvmeof: created the host NQN", "file", hostNQNFile, "nqn", nqn)
	}
	if id == "" {
		id = uuid
		if err := c.h.FS.WriteFileAtomic(hostIDFile, []byte(id+"\n")); err != nil {
			return "", "", fmt.Errorf("create host ID: %w", err)
		}
	}
	return nqn, id, nil
}

// randomUUID returns a version 4 UUID.
func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
