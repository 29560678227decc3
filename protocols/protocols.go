// Package protocols builds the connector registry brick's commands use:
// every protocol brick supports (iSCSI, Fibre Channel, Ceph RBD, NFS,
// NVMe-oF), configured from one Options value, registered under the
// driver_volume_type names Cinder sends.
//
// A program that attaches volumes the way brick does builds one registry
// per process:
//
//	h := host.New("/", logger, host.NewRedactor())
//	reg := protocols.New(h, protocols.Options{Multipath: true})
//	conn, err := reg.For(info.DriverVolumeType)
//	dev, err := conn.Connect(ctx, info)
//
// and hands the same registry to attach.Manager for the Cinder flows.
package protocols

import (
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/fc"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/connector/nfs"
	"github.com/brick-storage/brick/connector/nvmeof"
	"github.com/brick-storage/brick/connector/rbd"
	"github.com/brick-storage/brick/host"
)

// ISCSI and ISER are iSCSI's driver_volume_types, over TCP and over RDMA
// (the other protocols export theirs: fc.Protocol, rbd.Protocol,
// nfs.Protocol, nvmeof.Protocol).
const (
	ISCSI = "iscsi"
	ISER  = "iser"
)

// Options configures every protocol's connector. The zero value is each
// protocol's defaults, single path.
type Options struct {
	// Multipath and EnforceMultipath apply to every protocol that has them
	// (iSCSI and FC), on top of the same switches in their own options.
	Multipath        bool
	EnforceMultipath bool

	ISCSI iscsi.Options
	FC    fc.Options
	RBD   rbd.Options
	NFS   nfs.Options
	NVMe  nvmeof.Options
}

// New returns a registry with a connector for every protocol brick
// supports, all working through h.
func New(h *host.Host, o Options) *connector.Registry {
	io := o.ISCSI
	io.Multipath = io.Multipath || o.Multipath
	io.EnforceMultipath = io.EnforceMultipath || o.EnforceMultipath
	fo := o.FC
	fo.Multipath = fo.Multipath || o.Multipath
	fo.EnforceMultipath = fo.EnforceMultipath || o.EnforceMultipath

	reg := connector.NewRegistry()
	reg.Register(iscsi.New(h, io), ISCSI, ISER)
	reg.Register(fc.New(h, fo), fc.Protocol)
	reg.Register(rbd.New(h, o.RBD), rbd.Protocol)
	reg.Register(nfs.New(h, o.NFS), nfs.Protocol)
	reg.Register(nvmeof.New(h, o.NVMe), nvmeof.Protocol)
	return reg
}
