package ironicattach

import (
	"errors"
	"fmt"

	"github.com/brick-storage/brick/ironicapi"
)

// ErrNoInitiator: a node has no connector Cinder could export a volume to.
var ErrNoInitiator = errors.New("node has no iqn, wwpn or wwnn volume connector")

// CinderConnector builds the connector dict Cinder's
// initialize_connection / attachment create expects for a node from its
// Ironic volume connectors, the way Ironic's own cinder storage interface
// does: the first iqn is the initiator, the first ip the ip, every wwpn
// and wwnn is listed, host is the node UUID. It fails with ErrNoInitiator
// when there is nothing to export to.
func CinderConnector(nodeUUID string, conns []ironicapi.VolumeConnector, multipath bool) (map[string]any, error) {
	out := map[string]any{"host": nodeUUID, "multipath": multipath, "platform": "x86_64", "os_type": "linux"}
	var wwpns, wwnns []string
	initiator := false
	for _, c := range conns {
		id, err := ironicapi.NormalizeConnectorID(c.Type, c.ConnectorID)
		if err != nil {
			continue // stored by another tool in a form Cinder could not use
		}
		switch c.Type {
		case ironicapi.ConnectorIQN:
			if _, ok := out["initiator"]; !ok {
				out["initiator"] = id
				initiator = true
			}
		case ironicapi.ConnectorIP:
			if _, ok := out["ip"]; !ok {
				out["ip"] = id
			}
		case ironicapi.ConnectorWWPN:
			wwpns = append(wwpns, id)
		case ironicapi.ConnectorWWNN:
			wwnns = append(wwnns, id)
		}
	}
	if len(wwpns) > 0 {
		out["wwpns"] = wwpns
	}
	if len(wwnns) > 0 {
		out["wwnns"] = wwnns
	}
	if !initiator && len(wwpns) == 0 && len(wwnns) == 0 {
		return nil, fmt.Errorf("node %s: %w (register them with brick ironic register or brick ironic connector create)", nodeUUID, ErrNoInitiator)
	}
	return out, nil
}
