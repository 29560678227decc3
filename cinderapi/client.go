package cinderapi

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/attachments"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/osauth"
)

// Volume is gophercloud's volume.
type Volume = volumes.Volume

// HostConnector is this host's connector as Cinder takes it: the dict
// `brick get-connector -f json` prints. Values keep their JSON types
// (wwpns and wwnns are lists, multipath a boolean).
type HostConnector map[string]any

// HostConnectorFrom turns the host's connector properties into the dict
// Cinder takes, with the JSON names and types get-connector prints.
func HostConnectorFrom(p connector.Properties) (HostConnector, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode connector: %w", err)
	}
	var m HostConnector
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("encode connector: %w", err)
	}
	return m, nil
}

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
	// PollGap is the first gap between status reads while brick waits for
	// Cinder to finish (a create, extend or delete); it doubles up to 2 s.
	// Zero means each wait's default (100-200 ms).
	PollGap time.Duration
}

// pollGap is PollGap, or def when it is not set.
func (c *Client) pollGap(def time.Duration) time.Duration {
	if c.PollGap > 0 {
		return c.PollGap
	}
	return def
}

// Connect builds the client from the factory's Cinder session, forcing
// the microversion the options name (--os-volume-api-version, clouds.yaml's
// volume_api_version) or negotiating one.
func Connect(ctx context.Context, clients *osauth.Clients) (*Client, error) {
	sc, err := clients.BlockStorage(ctx)
	if err != nil {
		return nil, err
	}
	o, err := clients.Options()
	if err != nil {
		return nil, err
	}
	return NewClient(ctx, sc, o.VolumeAPIVersion)
}

// NewClient negotiates the microversion. forced ("" to negotiate) must lie
// within the server's range; otherwise brick picks 3.54 (v3 flow with
// mode), 3.44 (v3 flow), or the server's maximum (legacy flow).
func NewClient(ctx context.Context, sc *gophercloud.ServiceClient, forced string) (*Client, error) {
	var want Microversion
	if forced != "" {
		mv, err := ParseMicroversion(forced)
		if err != nil {
			return nil, &apierr.Error{Service: Service, Op: "microversion", Message: err.Error(), Kind: apierr.ErrUnsupported, Err: err}
		}
		want = mv
	}
	c := &Client{}
	var err error
	if c.Min, c.Max, err = discover(ctx, sc); err != nil {
		return nil, err
	}
	if c.Version, err = pick(want, c.Min, c.Max); err != nil {
		return nil, err
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
		return nil, &apierr.Error{Service: Service, Op: "microversion", Kind: apierr.ErrUnsupported,
			Message: fmt.Sprintf("the v3 attachment flow needs >= %s, using %s", MVComplete, c.Version)}
	}
	return nil, fmt.Errorf("unknown attach flow %q", name)
}

// Volume fetches a volume by ID.
func (c *Client) Volume(ctx context.Context, id string) (*Volume, error) {
	v, err := volumes.Get(ctx, c.SC, id).Extract()
	if err != nil {
		return nil, mapError("get", id, err)
	}
	return v, nil
}

// FindVolume resolves an ID or a unique name. A missing volume is
// apierr.ErrNotFound; a name several volumes share is apierr.ErrAmbiguous, listing them.
func (c *Client) FindVolume(ctx context.Context, nameOrID string) (*Volume, error) {
	if err := checkRef(nameOrID); err != nil {
		return nil, &apierr.Error{Service: Service, Op: "find", Volume: ident.Clip(nameOrID, 64), Kind: apierr.ErrInvalid, Message: err.Error()}
	}
	if ident.IsUUIDLoose(nameOrID) {
		v, err := c.Volume(ctx, nameOrID)
		if err == nil || !isKind(err, apierr.ErrNotFound) {
			return v, err
		}
	}
	var ids []string
	query, err := volumes.ListOpts{Name: nameOrID}.ToVolumeListQuery()
	if err == nil {
		err = walk(ctx, c.SC, "volumes", query, func(list []volumes.Volume) {
			for _, v := range list {
				if v.Name == nameOrID { // some releases match names as substrings
					ids = append(ids, v.ID)
				}
			}
		})
	}
	if err != nil {
		return nil, mapError("find", nameOrID, err)
	}
	switch len(ids) {
	case 0:
		return nil, &apierr.Error{Service: Service, Op: "find", Volume: nameOrID, Kind: apierr.ErrNotFound, Message: "no volume with this ID or name", Hint: c.projectHint()}
	case 1:
		return c.Volume(ctx, ids[0])
	}
	sort.Strings(ids)
	return nil, &apierr.Error{Service: Service, Op: "find", Volume: nameOrID, Kind: apierr.ErrAmbiguous,
		Message: fmt.Sprintf("%d volumes have this name, use an ID: %s", len(ids), strings.Join(ids, ", "))}
}

// projectHint explains a volume that is not found with Keystone
// credentials: Cinder shows a user the volumes of the project in its
// endpoint (.../v3/<project>/) only, so another project's volume looks
// missing rather than forbidden. noauth requests are admin: no hint.
func (c *Client) projectHint() string {
	if c.SC.ProviderClient == nil || c.SC.IdentityEndpoint == "" {
		return ""
	}
	parts := strings.Split(strings.Trim(c.SC.Endpoint, "/"), "/")
	if len(parts) < 2 || parts[len(parts)-2] != "v3" {
		return ""
	}
	return "these credentials see the volumes of project " + parts[len(parts)-1] +
		" only: for another project's volume use credentials for that project (--os-project-name, --os-cloud) or an admin's"
}

// Attachments lists a volume's v3 attachments (needs >= 3.27).
func (c *Client) Attachments(ctx context.Context, volumeID string) ([]Attachment, error) {
	if !c.Version.AtLeast(MVAttachments) {
		return nil, &apierr.Error{Service: Service, Op: "list attachments", Volume: volumeID, Kind: apierr.ErrUnsupported,
			Message: fmt.Sprintf("needs microversion >= %s, using %s", MVAttachments, c.Version)}
	}
	var out []Attachment
	query, err := attachments.ListOpts{VolumeID: volumeID}.ToAttachmentListQuery()
	if err == nil {
		err = walk(ctx, c.SC, "attachments", query, func(list []attachments.Attachment) {
			for _, a := range list {
				out = append(out, Attachment{a})
			}
		})
	}
	return out, mapError("list attachments", volumeID, err)
}

// ForceDetach ends an attachment whatever the state (admin).
func (c *Client) ForceDetach(ctx context.Context, volumeID, attachmentID string, conn HostConnector) error {
	opts := ForceDetachOpts{AttachmentID: attachmentID, Connector: conn}
	return mapError("force_detach", volumeID, ForceDetach(ctx, c.SC, volumeID, opts).ExtractErr())
}

// ResetStatus sets a volume available/detached (admin): a last resort.
func (c *Client) ResetStatus(ctx context.Context, volumeID string) error {
	opts := volumes.ResetStatusOpts{Status: "available", AttachStatus: "detached"}
	return mapError("reset_status", volumeID, volumes.ResetStatus(ctx, c.SC, volumeID, opts).ExtractErr())
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
	if strings.ContainsFunc(s, ident.IsControl) {
		return fmt.Errorf("volume reference has control characters")
	}
	return nil
}

// Attachment is gophercloud's v3 attachment, with its connection info
// normalised.
type Attachment struct{ attachments.Attachment }

// HasConnection reports whether Cinder has exported the volume for this
// attachment.
func (a Attachment) HasConnection() bool { return len(a.ConnectionInfo) > 0 }

// Info returns the normalised connection info.
func (a Attachment) Info() (connector.ConnectionInfo, error) {
	if !a.HasConnection() {
		return connector.ConnectionInfo{}, fmt.Errorf("attachment %s has no connection info yet", a.ID)
	}
	return connector.FromMap(a.ConnectionInfo)
}
