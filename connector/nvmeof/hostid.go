package nvmeof

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/brick-storage/brick/ident"
)

// The host's NVMe identity, as nvme-cli keeps it.
const (
	hostNQNFile     = "/etc/nvme/hostnqn"
	hostIDFile      = "/etc/nvme/hostid"
	productUUIDFile = "/sys/class/dmi/id/product_uuid"
	hostNQNPrefix   = "nqn.2014-08.org.nvmexpress:uuid:"
)

// hostIdentity returns the host NQN (the volume's own host_nqn when the
// driver named one) and host ID for a connect. Without them the kernel
// would use a per-boot NQN no target's ACL knows, so missing files are
// created as nvme-cli does: a UUID from DMI, else a random one.
func (c *Connector) hostIdentity(v Volume) (nqn, id string, err error) {
	nqn, nqnErr := c.h.FS.ReadString(hostNQNFile)
	id, idErr := c.h.FS.ReadString(hostIDFile)
	if nqnErr == nil && (!ident.NQN(nqn) || strings.ContainsAny(nqn, ",=")) {
		return "", "", fmt.Errorf("%s: not an NVMe qualified name", hostNQNFile)
	}
	if idErr == nil {
		if id, _ = ident.ParseUUID(id); id == "" {
			return "", "", fmt.Errorf("%s: not a UUID", hostIDFile)
		}
	}
	if errors.Is(nqnErr, fs.ErrNotExist) || errors.Is(idErr, fs.ErrNotExist) {
		if nqn, id, err = c.createIdentity(nqn, id); err != nil {
			return "", "", err
		}
	} else if nqnErr != nil || idErr != nil {
		return "", "", errors.Join(nqnErr, idErr)
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
