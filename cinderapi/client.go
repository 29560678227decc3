package cinderapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
)

// Microversion is a Block Storage API version "3.N".
type Microversion struct{ Major, Minor int }

// Microversions that change what brick does.
var (
	// MVAttachments: /attachments exists.
	MVAttachments = Microversion{3, 27}
	// MVComplete: os-complete exists; brick's v3 flow needs it.
	MVComplete = Microversion{3, 44}
	// MVMode: attachment create accepts "mode".
	MVMode = Microversion{3, 54}
	// MVBase is the lowest v3 version.
	MVBase = Microversion{3, 0}
)

var mvRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]{1,3})\.([0-9]{1,4})$`) })

// ParseMicroversion parses "3.44"; "latest" is refused (brick pins the
// versions whose behaviour it knows).
func ParseMicroversion(s string) (Microversion, error) {
	m := mvRE().FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Microversion{}, fmt.Errorf("%w: %q is not MAJOR.MINOR (e.g. 3.44)", ErrMicroversion, truncate(s, 32))
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major != 3 {
		return Microversion{}, fmt.Errorf("%w: %s: brick speaks the Block Storage API v3 only", ErrMicroversion, s)
	}
	return Microversion{major, minor}, nil
}

func (m Microversion) String() string { return fmt.Sprintf("%d.%d", m.Major, m.Minor) }

// AtLeast reports m >= o.
func (m Microversion) AtLeast(o Microversion) bool {
	return m.Major > o.Major || (m.Major == o.Major && m.Minor >= o.Minor)
}

// IsZero reports an unknown version.
func (m Microversion) IsZero() bool { return m == Microversion{} }

// Flow names.
const (
	FlowV3     = "v3"
	FlowLegacy = "legacy"
)

// Client is a Cinder client pinned to one negotiated microversion.
type Client struct {
	// SC sends every request with Version's header.
	SC *gophercloud.ServiceClient
	// Version is the microversion in use.
	Version Microversion
	// Min and Max are the server's range (zero when it did not say).
	Min, Max Microversion
}

// NewClient negotiates the microversion. forced ("" to negotiate) must lie
// within the server's range; otherwise brick picks 3.54 (v3 flow with
// mode), 3.44 (v3 flow), or the server's maximum (legacy flow).
func NewClient(ctx context.Context, sc *gophercloud.ServiceClient, forced string) (*Client, error) {
	c := &Client{}
	var want Microversion
	if forced != "" {
		mv, err := ParseMicroversion(forced)
		if err != nil {
			return nil, &Error{Step: "microversion", Message: err.Error(), Kind: ErrMicroversion, Err: err}
		}
		want = mv
	}
	versions, err := GetVersions(ctx, sc).Extract()
	if err != nil {
		return nil, mapError("version discovery", "", err)
	}
	for _, v := range versions {
		if !strings.HasPrefix(v.ID, "v3") {
			continue
		}
		if mv, err := ParseMicroversion(v.Version); err == nil {
			c.Max = mv
		}
		if mv, err := ParseMicroversion(v.MinVersion); err == nil {
			c.Min = mv
		}
	}
	switch {
	case !want.IsZero():
		if !c.Max.IsZero() && (!want.AtLeast(c.Min) || !c.Max.AtLeast(want)) {
			return nil, &Error{Step: "microversion", Kind: ErrMicroversion,
				Message: fmt.Sprintf("this Cinder supports %s to %s, not %s", c.Min, c.Max, want)}
		}
		c.Version = want
	case c.Max.IsZero():
		// No microversion support advertised: plain v3.
		c.Version = MVBase
	case c.Max.AtLeast(MVMode):
		c.Version = MVMode
	case c.Max.AtLeast(MVComplete):
		c.Version = MVComplete
	default:
		c.Version = c.Max
	}
	cp := *sc
	cp.Microversion = c.Version.String()
	c.SC = &cp
	return c, nil
}

// Flow returns the attach flow the version allows.
func (c *Client) Flow() Flow {
	if c.Version.AtLeast(MVComplete) {
		return &v3Flow{c: c}
	}
	return &legacyFlow{c: c}
}

// FlowNamed returns the named flow (FlowV3 or FlowLegacy), so a detach or
// cleanup uses the flow the volume was attached with. The v3 flow needs
// microversion >= 3.44.
func (c *Client) FlowNamed(name string) (Flow, error) {
	switch name {
	case FlowLegacy:
		return &legacyFlow{c: c}, nil
	case FlowV3:
		if c.Version.AtLeast(MVComplete) {
			return &v3Flow{c: c}, nil
		}
		return nil, &Error{Step: "microversion", Kind: ErrMicroversion,
			Message: fmt.Sprintf("the v3 attachment flow needs >= %s, using %s", MVComplete, c.Version)}
	}
	return nil, fmt.Errorf("unknown attach flow %q", name)
}

// Volume fetches a volume by ID.
func (c *Client) Volume(ctx context.Context, id string) (*Volume, error) {
	v, err := Get(ctx, c.SC, id).Extract()
	return v, mapError("get", id, err)
}

// FindVolume resolves an ID or a unique name. A missing volume is
// ErrNotFound; a name several volumes share is ErrAmbiguous, listing them.
func (c *Client) FindVolume(ctx context.Context, nameOrID string) (*Volume, error) {
	if err := checkRef(nameOrID); err != nil {
		return nil, &Error{Step: "find", Volume: truncate(nameOrID, 64), Kind: ErrBadRequest, Message: err.Error()}
	}
	if ident.IsUUIDLoose(nameOrID) {
		v, err := c.Volume(ctx, nameOrID)
		if err == nil || !isKind(err, ErrNotFound) {
			return v, err
		}
	}
	list, err := List(ctx, c.SC, ListOpts{Name: nameOrID}).Extract()
	if err != nil {
		return nil, mapError("find", nameOrID, err)
	}
	var ids []string
	for _, v := range list {
		if v.Name == nameOrID { // some releases match names as substrings
			ids = append(ids, v.ID)
		}
	}
	switch len(ids) {
	case 0:
		return nil, &Error{Step: "find", Volume: nameOrID, Kind: ErrNotFound, Message: "no volume with this ID or name"}
	case 1:
		return c.Volume(ctx, ids[0])
	}
	sort.Strings(ids)
	return nil, &Error{Step: "find", Volume: nameOrID, Kind: ErrAmbiguous,
		Message: fmt.Sprintf("%d volumes have this name, use an ID: %s", len(ids), strings.Join(ids, ", "))}
}

// Attachments lists a volume's v3 attachments (needs >= 3.27).
func (c *Client) Attachments(ctx context.Context, volumeID string) ([]Attachment, error) {
	if !c.Version.AtLeast(MVAttachments) {
		return nil, &Error{Step: "list attachments", Volume: volumeID, Kind: ErrMicroversion,
			Message: fmt.Sprintf("needs microversion >= %s, using %s", MVAttachments, c.Version)}
	}
	list, err := ListAttachments(ctx, c.SC, volumeID).Extract()
	return list, mapError("list attachments", volumeID, err)
}

// ForceDetach ends an attachment whatever the state (admin).
func (c *Client) ForceDetach(ctx context.Context, volumeID, attachmentID string, conn Connector) error {
	return mapError("force_detach", volumeID, ForceDetach(ctx, c.SC, volumeID, attachmentID, conn).ExtractErr())
}

// ResetStatus sets a volume available/detached (admin): a last resort.
func (c *Client) ResetStatus(ctx context.Context, volumeID string) error {
	return mapError("reset_status", volumeID, ResetStatus(ctx, c.SC, volumeID, "available", "detached").ExtractErr())
}

// checkRef refuses volume references that cannot be an ID or a name:
// empty, control characters, very long.
func checkRef(s string) error {
	if s == "" {
		return fmt.Errorf("empty volume reference")
	}
	if len(s) > 255 {
		return fmt.Errorf("volume reference longer than 255 bytes")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("volume reference has control characters")
		}
	}
	return nil
}

// isKind reports whether err is an *Error of that kind.
func isKind(err, kind error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == kind
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// CompleteOpts describe the finished attachment.
type CompleteOpts struct {
	HostName string
	// Mountpoint is recorded as the attachment's device (legacy flow;
	// Cinder requires one, "na" when empty).
	Mountpoint string
	Mode       string // "rw" (default) or "ro"
}

// Flow is one way of attaching a volume to a host; both Cinder flows fit.
// A local attach calls Reserve, Export, (connect), Complete; a failure
// undoes newest first with Uncomplete, (disconnect), Unexport, Unreserve.
// A local detach calls BeginDetach, (disconnect; RollDetach if it fails),
// Detach. Every undo and Detach treat "already done" as success.
type Flow interface {
	// Name is FlowV3 or FlowLegacy.
	Name() string
	// Reserve claims the volume; v3 returns the new attachment's ID.
	Reserve(ctx context.Context, volumeID, mode string) (attachmentID string, err error)
	// Unreserve gives the volume back (v3: deletes the attachment).
	Unreserve(ctx context.Context, volumeID, attachmentID string) error
	// Export exports the volume to the connector's host.
	Export(ctx context.Context, volumeID, attachmentID string, conn Connector) (connector.ConnectionInfo, error)
	// Unexport removes the export (legacy: terminate_connection).
	Unexport(ctx context.Context, volumeID, attachmentID string, conn Connector) error
	// Complete marks the volume in-use and returns the attachment ID.
	Complete(ctx context.Context, volumeID, attachmentID string, o CompleteOpts) (string, error)
	// Uncomplete undoes Complete (legacy: os-detach).
	Uncomplete(ctx context.Context, volumeID, attachmentID string, o CompleteOpts) error
	// BeginDetach marks the volume detaching (legacy only).
	BeginDetach(ctx context.Context, volumeID string) error
	// RollDetach undoes BeginDetach (legacy only).
	RollDetach(ctx context.Context, volumeID string) error
	// Detach ends the attachment and removes the export.
	Detach(ctx context.Context, volumeID, attachmentID string, conn Connector) error
	// ConnectionInfo returns the connection info of an existing
	// attachment (v3: from the attachment; legacy: initialize_connection
	// again, which returns the same export).
	ConnectionInfo(ctx context.Context, volumeID, attachmentID string, conn Connector) (connector.ConnectionInfo, error)
}

// ---- v3 ----

type v3Flow struct{ c *Client }

func (f *v3Flow) Name() string { return FlowV3 }

func (f *v3Flow) Reserve(ctx context.Context, volumeID, mode string) (string, error) {
	opts := AttachmentCreateOpts{VolumeID: volumeID}
	if mode != "" && f.c.Version.AtLeast(MVMode) {
		opts.Mode = mode
	}
	a, err := CreateAttachment(ctx, f.c.SC, opts).Extract()
	if err != nil {
		return "", mapError("attachment create", volumeID, err)
	}
	return a.ID, nil
}

func (f *v3Flow) Unreserve(ctx context.Context, volumeID, attachmentID string) error {
	if attachmentID == "" {
		return nil
	}
	err := DeleteAttachment(ctx, f.c.SC, attachmentID).ExtractErr()
	if err = mapError("attachment delete", volumeID, err); isKind(err, ErrNotFound) {
		return nil
	}
	return err
}

func (f *v3Flow) Export(ctx context.Context, volumeID, attachmentID string, conn Connector) (connector.ConnectionInfo, error) {
	a, err := UpdateAttachment(ctx, f.c.SC, attachmentID, AttachmentUpdateOpts{Connector: conn}).Extract()
	if err != nil {
		return connector.ConnectionInfo{}, mapError("attachment update", volumeID, err)
	}
	info, err := a.Info()
	if err != nil {
		return connector.ConnectionInfo{}, &Error{Step: "attachment update", Volume: volumeID, Kind: ErrUnexpected, Message: err.Error(), Err: err}
	}
	return info, nil
}

func (f *v3Flow) Unexport(context.Context, string, string, Connector) error { return nil }

func (f *v3Flow) Complete(ctx context.Context, volumeID, attachmentID string, _ CompleteOpts) (string, error) {
	return attachmentID, mapError("attachment complete", volumeID, CompleteAttachment(ctx, f.c.SC, attachmentID).ExtractErr())
}

func (f *v3Flow) Uncomplete(context.Context, string, string, CompleteOpts) error { return nil }

func (f *v3Flow) BeginDetach(context.Context, string) error { return nil }

func (f *v3Flow) RollDetach(context.Context, string) error { return nil }

func (f *v3Flow) Detach(ctx context.Context, volumeID, attachmentID string, _ Connector) error {
	return f.Unreserve(ctx, volumeID, attachmentID)
}

func (f *v3Flow) ConnectionInfo(ctx context.Context, volumeID, attachmentID string, _ Connector) (connector.ConnectionInfo, error) {
	a, err := GetAttachment(ctx, f.c.SC, attachmentID).Extract()
	if err != nil {
		return connector.ConnectionInfo{}, mapError("attachment show", volumeID, err)
	}
	info, err := a.Info()
	if err != nil {
		return connector.ConnectionInfo{}, &Error{Step: "attachment show", Volume: volumeID, Kind: ErrUnexpected, Message: err.Error(), Err: err}
	}
	return info, nil
}

// ---- legacy ----

type legacyFlow struct{ c *Client }

func (f *legacyFlow) Name() string { return FlowLegacy }

func (f *legacyFlow) Reserve(ctx context.Context, volumeID, _ string) (string, error) {
	return "", mapError("reserve", volumeID, Reserve(ctx, f.c.SC, volumeID).ExtractErr())
}

func (f *legacyFlow) Unreserve(ctx context.Context, volumeID, _ string) error {
	v, err := f.c.Volume(ctx, volumeID)
	if err != nil {
		if isKind(err, ErrNotFound) {
			return nil
		}
		return err
	}
	// Only a volume still reserved by us goes back; one that is in-use
	// belongs to an attachment Uncomplete handles.
	if v.Status != "attaching" && v.Status != "reserved" {
		return nil
	}
	return mapError("unreserve", volumeID, Unreserve(ctx, f.c.SC, volumeID).ExtractErr())
}

func (f *legacyFlow) Export(ctx context.Context, volumeID, _ string, conn Connector) (connector.ConnectionInfo, error) {
	info, err := InitializeConnection(ctx, f.c.SC, volumeID, ConnectionOpts{Connector: conn}).Extract()
	return info, mapError("initialize_connection", volumeID, err)
}

func (f *legacyFlow) Unexport(ctx context.Context, volumeID, _ string, conn Connector) error {
	err := mapError("terminate_connection", volumeID, TerminateConnection(ctx, f.c.SC, volumeID, ConnectionOpts{Connector: conn}).ExtractErr())
	if isKind(err, ErrNotFound) {
		return nil
	}
	return err
}

func (f *legacyFlow) Complete(ctx context.Context, volumeID, _ string, o CompleteOpts) (string, error) {
	mode := o.Mode
	if mode == "" {
		mode = "rw"
	}
	// os-attach requires a mountpoint; "na" is what Cinder itself records
	// for attachments without one.
	mp := o.Mountpoint
	if mp == "" {
		mp = "na"
	}
	err := Attach(ctx, f.c.SC, volumeID, AttachOpts{Mountpoint: mp, Mode: mode, HostName: o.HostName}).ExtractErr()
	if err != nil {
		return "", mapError("attach", volumeID, err)
	}
	// os-attach answers 202 with no body; the attachment ID is on the volume.
	id, err := f.attachmentFor(ctx, volumeID, o.HostName)
	if err != nil {
		return "", err
	}
	return id, nil
}

// attachmentFor finds the attachment of this host, newest first.
func (f *legacyFlow) attachmentFor(ctx context.Context, volumeID, hostName string) (string, error) {
	v, err := f.c.Volume(ctx, volumeID)
	if err != nil {
		return "", err
	}
	var found []VolumeAttachment
	for _, a := range v.Attachments {
		if a.HostName == hostName {
			found = append(found, a)
		}
	}
	if len(found) == 0 {
		return "", &Error{Step: "attach", Volume: volumeID, Kind: ErrUnexpected,
			Message: fmt.Sprintf("no attachment for host %q after os-attach (status %s)", hostName, v.Status)}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].AttachedAt > found[j].AttachedAt })
	return found[0].AttachmentID, nil
}

func (f *legacyFlow) Uncomplete(ctx context.Context, volumeID, attachmentID string, o CompleteOpts) error {
	if attachmentID == "" {
		id, err := f.attachmentFor(ctx, volumeID, o.HostName)
		if err != nil {
			if isKind(err, ErrNotFound) || isKind(err, ErrUnexpected) {
				return nil // nothing attached: nothing to undo
			}
			return err
		}
		attachmentID = id
	}
	return f.detach(ctx, volumeID, attachmentID)
}

func (f *legacyFlow) detach(ctx context.Context, volumeID, attachmentID string) error {
	err := mapError("detach", volumeID, Detach(ctx, f.c.SC, volumeID, attachmentID).ExtractErr())
	if err == nil || isKind(err, ErrNotFound) {
		return nil
	}
	// A second os-detach answers 409/400; gone is success.
	if v, verr := f.c.Volume(ctx, volumeID); verr == nil && !hasAttachment(v, attachmentID) {
		return nil
	}
	return err
}

func hasAttachment(v *Volume, id string) bool {
	for _, a := range v.Attachments {
		if a.AttachmentID == id {
			return true
		}
	}
	return false
}

func (f *legacyFlow) BeginDetach(ctx context.Context, volumeID string) error {
	return mapError("begin_detaching", volumeID, BeginDetaching(ctx, f.c.SC, volumeID).ExtractErr())
}

func (f *legacyFlow) RollDetach(ctx context.Context, volumeID string) error {
	return mapError("roll_detaching", volumeID, RollDetaching(ctx, f.c.SC, volumeID).ExtractErr())
}

func (f *legacyFlow) Detach(ctx context.Context, volumeID, attachmentID string, conn Connector) error {
	if err := f.Unexport(ctx, volumeID, attachmentID, conn); err != nil {
		return err
	}
	return f.detach(ctx, volumeID, attachmentID)
}

func (f *legacyFlow) ConnectionInfo(ctx context.Context, volumeID, attachmentID string, conn Connector) (connector.ConnectionInfo, error) {
	return f.Export(ctx, volumeID, attachmentID, conn)
}

// ConnectorFrom turns the host's connector properties into the dict Cinder
// takes, with the JSON names and types get-connector prints.
func ConnectorFrom(p connector.Properties) (Connector, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode connector: %w", err)
	}
	var m Connector
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("encode connector: %w", err)
	}
	return m, nil
}
