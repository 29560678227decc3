package fc

import (
	"github.com/brick-storage/brick/connector"
)

// HostFacts adds the WWPNs and WWNNs of the host's online FC ports to p,
// in fc_host's listing order, as os-brick's FC connector reports them. A
// port whose state cannot be read is left out; one whose node name cannot
// be read keeps its WWPN. Each problem is a warning naming the file.
func (c *Connector) HostFacts(p *connector.Properties, warn func(file string, err error)) {
	ports, err := readPorts(c.h.FS)
	if err != nil {
		warn(fcHostDir, err)
		return
	}
	for _, pt := range ports {
		h := pt.hba
		switch {
		case pt.err != nil:
			warn(pt.err.File, pt.err.Err)
			continue
		case !h.Online():
			continue
		}
		for _, u := range h.Unreadable {
			warn(u.File, u.Err)
		}
		if h.PortName != "" {
			p.WWPNs = append(p.WWPNs, h.PortName)
		}
		if h.NodeName != "" {
			p.WWNNs = append(p.WWNNs, h.NodeName)
		}
	}
}
