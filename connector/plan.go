package connector

import "context"

// CiphertextNote tells the user of a raw attach (brick connect) of an
// encrypted volume what the device holds.
const CiphertextNote = "volume is encrypted: brick connect hands out the ciphertext device; brick local-attach opens it with dm-crypt"

// Plan is what a connect or disconnect would do, worked out from the
// connection info and what can be read on the host, without changing it
// (no login, scan, map, mount or write). Secrets never appear in it.
type Plan struct {
	Protocol  string
	Action    string // "connect" or "disconnect"
	Multipath bool
	// Details are the protocol's facts in a fixed order, with stable keys
	// ("portals", "kernel_luns", "image", ...).
	Details []PlanDetail
	// Steps are the actions, in order, as a user would read them; a
	// command is written as its argv.
	Steps    []string
	Warnings []string
}

// PlanDetail is one named fact of a Plan.
type PlanDetail struct {
	Key   string
	Value any
}

// Add appends a detail.
func (p *Plan) Add(key string, value any) {
	p.Details = append(p.Details, PlanDetail{Key: key, Value: value})
}

// Step appends a step.
func (p *Plan) Step(s string) { p.Steps = append(p.Steps, s) }

// Planner is a Connector that can say what it would do (brick connect
// --dry-run). An error means the real call would fail the same way.
type Planner interface {
	PlanConnect(ctx context.Context, ci ConnectionInfo) (*Plan, error)
	PlanDisconnect(ctx context.Context, ci ConnectionInfo, dev *Device, opts DisconnectOptions) (*Plan, error)
}

// PlanTeardown appends the steps of the one SCSI teardown (multipath.
// Teardown) for a volume found as mapName/mapDev ("" without a map) over
// disks, hctl naming each disk's address.
func (p *Plan) PlanTeardown(mapName, mapDev string, disks []string, hctl map[string]string, wwid string, force bool) {
	if mapDev == "" && len(disks) == 0 {
		return
	}
	if !force {
		p.Step("refuse if the device is mounted or held open (--force skips this)")
	}
	if mapDev != "" {
		p.Step("flush and remove multipath map " + mapName + " (" + mapDev + ")")
	}
	for _, d := range disks {
		p.Step("flush and delete /dev/" + d + " (" + hctl[d] + ")")
	}
	if wwid != "" {
		p.Step("forget WWID " + wwid + " in multipath's wwids")
	}
}
