package ironicattach

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ironicapi"
)

// HostFS is what HostConnectors reads of the host: interface addresses
// (host.System) and sysfs files (host.FS).
type HostFS interface {
	InterfaceAddrs() ([]host.IfAddr, error)
	ReadString(hostPath string) (string, error)
}

// HostView is the HostFS of a host.Host.
func HostView(h *host.Host) HostFS { return hostView{h.Sys, h.FS} }

type hostView struct {
	host.System
	host.FS
}

// HostConnectors maps this host's get-connector properties to Ironic
// volume connectors: the initiator name to an iqn, each WWPN and WWNN to a
// wwpn and wwnn, the connector IP to an ip and the MAC address of nic (or
// of the interface holding the IP) to a mac. What cannot be mapped is
// logged and left out.
func HostConnectors(fsys HostFS, p connector.Properties, nic string, log *slog.Logger) []ConnectorSpec {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var specs []ConnectorSpec
	if p.Initiator != "" {
		specs = append(specs, ConnectorSpec{Type: ironicapi.ConnectorIQN, ConnectorID: p.Initiator})
	}
	for _, w := range p.WWPNs {
		specs = append(specs, ConnectorSpec{Type: ironicapi.ConnectorWWPN, ConnectorID: w})
	}
	for _, w := range p.WWNNs {
		specs = append(specs, ConnectorSpec{Type: ironicapi.ConnectorWWNN, ConnectorID: w})
	}
	ip := net.ParseIP(p.IP)
	if ip == nil || ip.IsLoopback() {
		// get-connector falls back to 127.0.0.1: useless to a storage array.
		log.Warn("register: no routable IP address; no ip or mac connector registered", "ip", p.IP)
		return specs
	}
	specs = append(specs, ConnectorSpec{Type: ironicapi.ConnectorIP, ConnectorID: p.IP})
	if nic == "" {
		nic = interfaceOf(fsys, p.IP)
	}
	if nic == "" {
		log.Warn("register: no interface holds the IP; no mac connector registered", "ip", p.IP)
		return specs
	}
	mac, err := interfaceMAC(fsys, nic)
	if err != nil {
		log.Warn("register: no mac connector registered", "interface", nic, "reason", err.Error())
		return specs
	}
	return append(specs, ConnectorSpec{Type: ironicapi.ConnectorMAC, ConnectorID: mac})
}

// interfaceOf returns the interface holding ip, or "".
func interfaceOf(fsys HostFS, ip string) string {
	addrs, err := fsys.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if a.Addr.String() == ip {
			return a.Interface
		}
	}
	return ""
}

// interfaceMAC reads /sys/class/net/<nic>/address.
func interfaceMAC(fsys HostFS, nic string) (string, error) {
	if nic == "" || nic == "." || nic == ".." || path.Base(nic) != nic {
		return "", fmt.Errorf("bad interface name %s", connector.Quote(nic))
	}
	s, err := fsys.ReadString(path.Join("/sys/class/net", nic, "address"))
	if err != nil {
		return "", err
	}
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return "", fmt.Errorf("%s has no Ethernet address (%s)", nic, connector.Quote(s))
	}
	if hw.String() == "00:00:00:00:00:00" {
		return "", errors.New(nic + " has an all-zero MAC address")
	}
	return hw.String(), nil
}

// RegisterCapabilities are the boot capabilities matching the kinds of
// initiator the host has: iscsi_boot with an initiator name,
// fibre_channel_boot with an FC port.
func RegisterCapabilities(p connector.Properties) []Capability {
	var caps []Capability
	if p.Initiator != "" {
		caps = append(caps, Capability{Key: "iscsi_boot", Value: "True"})
	}
	if len(p.WWPNs) > 0 {
		caps = append(caps, Capability{Key: "fibre_channel_boot", Value: "True"})
	}
	return caps
}
