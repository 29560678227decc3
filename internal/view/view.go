// Package view lays out the results of brick's use cases as the records
// and tables internal/output prints: one place for each result's field
// names, which scripts and the tests parse.
package view

import (
	"fmt"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/ironicattach"
)

// Attach lays out the result of local-attach.
func Attach(r *attach.Record) output.Record {
	out := output.Record{{Name: "volume_id", Value: r.VolumeID}, {Name: "volume_name", Value: r.VolumeName}}
	if r.Device != nil {
		out = append(out, output.Field{Name: "path", Value: r.DevicePath()}, output.Field{Name: "type", Value: r.Device.Type}, output.Field{Name: "protocol", Value: r.Device.Protocol})
		if r.Crypt != nil {
			out = append(out, output.Field{Name: "encryption", Value: r.Crypt.Provider}, output.Field{Name: "ciphertext_path", Value: r.Device.Path})
		}
		if r.Device.WWN != "" {
			out = append(out, output.Field{Name: "scsi_wwn", Value: r.Device.WWN})
		}
		out = append(out, output.Field{Name: "multipath_id", Value: r.Device.MultipathID})
		if len(r.Device.Paths) > 0 {
			out = append(out, output.Field{Name: "paths", Value: r.Device.Paths})
		}
	}
	out = append(out, output.Field{Name: "attachment_id", Value: r.AttachmentID}, output.Field{Name: "flow", Value: r.Flow}, output.Field{Name: "microversion", Value: r.Microversion},
		output.Field{Name: "host_name", Value: r.HostName}, output.Field{Name: "mode", Value: r.Mode})
	if r.Mountpoint != "" {
		out = append(out, output.Field{Name: "mountpoint", Value: r.Mountpoint})
	}
	if r.Formatted != "" {
		out = append(out, output.Field{Name: "formatted", Value: r.Formatted})
	}
	if r.IronicTargetUUID != "" {
		out = append(out, output.Field{Name: "ironic_node", Value: r.IronicNode}, output.Field{Name: "ironic_target_uuid", Value: r.IronicTargetUUID})
	}
	if r.Persist {
		out = append(out, output.Field{Name: "persist", Value: true})
	}
	return out
}

// Plan lays a plan out with stable keys: protocol, action, dry_run,
// multipath, the protocol's details, steps and warnings (lists, never
// null). The table shows one row per step.
func Plan(p *connector.Plan, format string) output.Record {
	r := output.Record{{Name: "protocol", Value: p.Protocol}, {Name: "action", Value: p.Action}, {Name: "dry_run", Value: true}, {Name: "multipath", Value: p.Multipath}}
	for _, d := range p.Details {
		r = append(r, output.Field{Name: d.Key, Value: d.Value})
	}
	steps, warns := append([]string{}, p.Steps...), append([]string{}, p.Warnings...)
	if format != output.FormatTable {
		return append(r, output.Field{Name: "steps", Value: steps}, output.Field{Name: "warnings", Value: warns})
	}
	for i, s := range steps {
		r = append(r, output.Field{Name: fmt.Sprintf("step %d", i+1), Value: s})
	}
	for _, w := range warns {
		r = append(r, output.Field{Name: "warning", Value: w})
	}
	return r
}

// Device lays out a Device with the JSON names it is stored under.
func Device(d *connector.Device) output.Record {
	r := output.Record{
		{Name: "path", Value: d.Path},
		{Name: "type", Value: d.Type},
		{Name: "protocol", Value: d.Protocol},
	}
	if d.WWN != "" {
		r = append(r, output.Field{Name: "scsi_wwn", Value: d.WWN})
	}
	if d.MultipathID != "" {
		r = append(r, output.Field{Name: "multipath_id", Value: d.MultipathID})
	}
	if len(d.Paths) > 0 {
		r = append(r, output.Field{Name: "paths", Value: d.Paths})
	}
	if len(d.Extra) > 0 {
		r = append(r, output.Field{Name: "extra", Value: d.Extra})
	}
	return r
}

// Extend lays out the result of extend.
func Extend(r *attach.ExtendResult) output.Record {
	return output.Record{
		{Name: "volume_id", Value: r.VolumeID}, {Name: "device", Value: r.Device},
		{Name: "old_size", Value: gib(r.OldSize)}, {Name: "new_size", Value: gib(r.NewSize)},
		{Name: "new_size_bytes", Value: r.NewSize}, {Name: "filesystem", Value: r.Filesystem}, {Name: "mountpoint", Value: r.Mountpoint},
	}
}

// gib prints a byte count in GiB ("2 GiB", "1.50 GiB").
func gib(n int64) string { return output.Cell(output.GiB(n)) }

// Boot lays out the result of boot-from-volume.
func Boot(res *ironicattach.BootResult) output.Record {
	return output.Record{
		{Name: "node_uuid", Value: res.Node.UUID},
		{Name: "node_name", Value: res.Node.Name},
		{Name: "provision_state", Value: res.Node.ProvisionState},
		{Name: "volume_id", Value: res.VolumeID},
		{Name: "initiator", Value: res.Initiator},
		{Name: "target_uuid", Value: res.TargetUUID},
		{Name: "changes", Value: res.Changes},
		{Name: "next", Value: res.Next},
	}
}

// Properties lists the connector keys in os-brick's order, leaving
// out those the host does not have.
func Properties(p connector.Properties) output.Record {
	r := output.Record{
		{Name: "platform", Value: p.Platform},
		{Name: "os_type", Value: p.OSType},
		{Name: "ip", Value: p.IP},
		{Name: "host", Value: p.Host},
		{Name: "multipath", Value: p.Multipath},
		{Name: "enforce_multipath", Value: p.EnforceMultipath},
	}
	add := func(name string, v any, present bool) {
		if present {
			r = append(r, output.Field{Name: name, Value: v})
		}
	}
	add("initiator", p.Initiator, p.Initiator != "")
	add("wwpns", p.WWPNs, len(p.WWPNs) > 0)
	add("wwnns", p.WWNNs, len(p.WWNNs) > 0)
	add("system uuid", p.SystemUUID, p.SystemUUID != "")
	add("nqn", p.NQN, p.NQN != "")
	add("nvme_hostid", p.NVMeHostID, p.NVMeHostID != "")
	add("uuid", p.UUID, p.UUID != "")
	if p.NVMeNativeMultipath != nil {
		add("nvme_native_multipath", *p.NVMeNativeMultipath, true)
	}
	r = append(r, output.Field{Name: "do_local_attach", Value: p.DoLocalAttach})
	return r
}

// PropertyKeys are all the keys get-connector may print: those of a
// host that has every one.
func PropertyKeys() []string {
	on := true
	r := Properties(connector.Properties{Initiator: "-", WWPNs: []string{"-"}, WWNNs: []string{"-"}, SystemUUID: "-",
		NQN: "-", NVMeHostID: "-", UUID: "-", NVMeNativeMultipath: &on})
	names := make([]string, len(r))
	for i, f := range r {
		names[i] = f.Name
	}
	return names
}

// List is brick list's table: one row per record, with Cinder's status
// and size where Cinder was asked.
func List(entries []attach.Entry) output.Table {
	t := output.Table{Columns: ListColumns, Keys: listKeys,
		Empty: "brick: no volume attached by brick on this host (brick local-attach VOLUME attaches one)"}
	for _, e := range entries {
		r := e.Record
		dev, proto, mp := "", "", ""
		if r.Device != nil {
			dev, proto, mp = r.DevicePath(), r.Device.Protocol, r.Device.MultipathID
		}
		if proto == "" && r.ConnectionInfo != nil {
			proto = r.ConnectionInfo.DriverVolumeType
		}
		t.Rows = append(t.Rows, []any{r.VolumeID, r.VolumeName, dev, proto, mp, r.AttachmentID, r.Mountpoint, r.Phase, e.CinderStatus, output.GiB(e.SizeBytes)})
	}
	return t
}

// ListColumns are brick list's columns; listKeys name them in JSON and
// YAML as local-attach's record names the same fields.
var (
	ListColumns = []string{"Volume", "Name", "Device", "Protocol", "Multipath ID", "Attachment ID", "Mountpoint", "Phase", "Cinder Status", "Size"}
	listKeys    = []string{"volume_id", "volume_name", "path", "protocol", "multipath_id", "attachment_id", "mountpoint", "phase", "cinder_status", "size"}
)
