package cinderapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
)

// Connector is the host's connector as Cinder expects it (the dict
// `brick get-connector -f json` prints). Values keep their JSON types:
// wwpns and wwnns are lists, multipath a boolean.
type Connector map[string]any

// ---- volumes ----

// Get fetches one volume.
func Get(ctx context.Context, c *gophercloud.ServiceClient, id string) (r VolumeResult) {
	resp, err := c.Get(ctx, volumeURL(c, id), (*json.RawMessage)(&r.raw), nil)
	r.setResp(resp, err)
	return
}

// ListOptsBuilder builds the query of List.
type ListOptsBuilder interface {
	ToVolumeListQuery() (string, error)
}

// ListOpts filter a volume list.
type ListOpts struct {
	// Name is an exact name filter.
	Name string
	// AllTenants lists every project's volumes (admin only).
	AllTenants bool
	// Limit caps the number returned; Cinder's default applies when 0.
	Limit int
}

// ToVolumeListQuery implements ListOptsBuilder.
func (o ListOpts) ToVolumeListQuery() (string, error) {
	q := url.Values{}
	if o.Name != "" {
		q.Set("name", o.Name)
	}
	if o.AllTenants {
		q.Set("all_tenants", "1")
	}
	if o.Limit > 0 {
		q.Set("limit", fmt.Sprint(o.Limit))
	}
	if len(q) == 0 {
		return "", nil
	}
	return "?" + q.Encode(), nil
}

// List lists volumes (summaries: id and name).
func List(ctx context.Context, c *gophercloud.ServiceClient, opts ListOptsBuilder) (r VolumesResult) {
	u := volumesURL(c)
	if opts != nil {
		q, err := opts.ToVolumeListQuery()
		if err != nil {
			r.Err = err
			return
		}
		u += q
	}
	resp, err := c.Get(ctx, u, (*json.RawMessage)(&r.raw), nil)
	r.setResp(resp, err)
	return
}

// ---- legacy volume actions ----

// action posts {"<name>": body} to /volumes/{id}/action; 202 expected
// except where noted.
func action(ctx context.Context, c *gophercloud.ServiceClient, id, name string, body map[string]any, out *json.RawMessage, ok ...int) (resp actionResp) {
	if body == nil {
		body = map[string]any{}
	}
	if len(ok) == 0 {
		ok = []int{202}
	}
	// A typed nil pointer in the interface would make gophercloud decode
	// an empty 202 body.
	var into any
	if out != nil {
		into = out
	}
	r, err := c.Post(ctx, volumeActionURL(c, id), map[string]any{name: body}, into, &gophercloud.RequestOpts{OkCodes: ok})
	resp.setResp(r, err)
	return
}

// Reserve marks the volume "attaching" (os-reserve).
func Reserve(ctx context.Context, c *gophercloud.ServiceClient, id string) (r ActionResult) {
	r.actionResp = action(ctx, c, id, "os-reserve", nil, nil)
	return
}

// Unreserve returns a reserved volume to "available" (os-unreserve).
func Unreserve(ctx context.Context, c *gophercloud.ServiceClient, id string) (r ActionResult) {
	r.actionResp = action(ctx, c, id, "os-unreserve", nil, nil)
	return
}

// BeginDetaching marks an in-use volume "detaching".
func BeginDetaching(ctx context.Context, c *gophercloud.ServiceClient, id string) (r ActionResult) {
	r.actionResp = action(ctx, c, id, "os-begin_detaching", nil, nil)
	return
}

// RollDetaching returns a "detaching" volume to "in-use".
func RollDetaching(ctx context.Context, c *gophercloud.ServiceClient, id string) (r ActionResult) {
	r.actionResp = action(ctx, c, id, "os-roll_detaching", nil, nil)
	return
}

// ConnectorOptsBuilder builds the body of initialize/terminate_connection.
type ConnectorOptsBuilder interface {
	ToConnectorMap() (map[string]any, error)
}

// ConnectionOpts carry the host connector. Unlike gophercloud's
// InitializeConnectionOpts, every value keeps its JSON type (wwnns is a
// list, as Cinder drivers expect).
type ConnectionOpts struct {
	Connector Connector
}

// ToConnectorMap implements ConnectorOptsBuilder.
func (o ConnectionOpts) ToConnectorMap() (map[string]any, error) {
	if len(o.Connector) == 0 {
		return nil, fmt.Errorf("connector is empty")
	}
	return map[string]any{"connector": map[string]any(o.Connector)}, nil
}

// InitializeConnection exports the volume to the connector's host and
// returns the connection info (os-initialize_connection, 200).
func InitializeConnection(ctx context.Context, c *gophercloud.ServiceClient, id string, opts ConnectorOptsBuilder) (r ConnectionResult) {
	body, err := opts.ToConnectorMap()
	if err != nil {
		r.Err = err
		return
	}
	r.actionResp = action(ctx, c, id, "os-initialize_connection", body, (*json.RawMessage)(&r.raw), 200)
	return
}

// TerminateConnection removes the export to the connector's host.
func TerminateConnection(ctx context.Context, c *gophercloud.ServiceClient, id string, opts ConnectorOptsBuilder) (r ActionResult) {
	body, err := opts.ToConnectorMap()
	if err != nil {
		r.Err = err
		return
	}
	r.actionResp = action(ctx, c, id, "os-terminate_connection", body, nil)
	return
}

// AttachOptsBuilder builds the body of os-attach.
type AttachOptsBuilder interface {
	ToVolumeAttachMap() (map[string]any, error)
}

// AttachOpts record where the volume is attached. Cinder requires
// Mountpoint; InstanceUUID is sent only when set (a null is rejected).
type AttachOpts struct {
	Mountpoint   string
	Mode         string // "rw" or "ro"
	HostName     string
	InstanceUUID string
}

// ToVolumeAttachMap implements AttachOptsBuilder.
func (o AttachOpts) ToVolumeAttachMap() (map[string]any, error) {
	if o.HostName == "" && o.InstanceUUID == "" {
		return nil, fmt.Errorf("os-attach needs a host name or an instance")
	}
	if o.Mountpoint == "" {
		return nil, fmt.Errorf("os-attach needs a mountpoint")
	}
	if o.Mode != "" && o.Mode != "rw" && o.Mode != "ro" {
		return nil, fmt.Errorf("attach mode %q: use rw or ro", o.Mode)
	}
	m := map[string]any{}
	if o.Mountpoint != "" {
		m["mountpoint"] = o.Mountpoint
	}
	if o.Mode != "" {
		m["mode"] = o.Mode
	}
	if o.HostName != "" {
		m["host_name"] = o.HostName
	}
	if o.InstanceUUID != "" {
		m["instance_uuid"] = o.InstanceUUID
	}
	return m, nil
}

// Attach marks the volume in-use (os-attach).
func Attach(ctx context.Context, c *gophercloud.ServiceClient, id string, opts AttachOptsBuilder) (r ActionResult) {
	body, err := opts.ToVolumeAttachMap()
	if err != nil {
		r.Err = err
		return
	}
	r.actionResp = action(ctx, c, id, "os-attach", body, nil)
	return
}

// Detach ends one attachment (os-detach).
func Detach(ctx context.Context, c *gophercloud.ServiceClient, id, attachmentID string) (r ActionResult) {
	body := map[string]any{}
	if attachmentID != "" {
		body["attachment_id"] = attachmentID
	}
	r.actionResp = action(ctx, c, id, "os-detach", body, nil)
	return
}

// ForceDetach ends an attachment whatever the volume's state
// (os-force_detach, admin only). gophercloud has no helper for it.
func ForceDetach(ctx context.Context, c *gophercloud.ServiceClient, id, attachmentID string, conn Connector) (r ActionResult) {
	body := map[string]any{}
	if attachmentID != "" {
		body["attachment_id"] = attachmentID
	}
	if conn != nil {
		body["connector"] = map[string]any(conn)
	}
	r.actionResp = action(ctx, c, id, "os-force_detach", body, nil)
	return
}

// ResetStatus sets the volume's status fields (os-reset_status, admin
// only): the last resort of a cleanup.
func ResetStatus(ctx context.Context, c *gophercloud.ServiceClient, id, status, attachStatus string) (r ActionResult) {
	body := map[string]any{"status": status}
	if attachStatus != "" {
		body["attach_status"] = attachStatus
	}
	r.actionResp = action(ctx, c, id, "os-reset_status", body, nil)
	return
}

// ---- v3 attachments (>= 3.27; os-complete >= 3.44; mode >= 3.54) ----

// AttachmentCreateOptsBuilder builds the body of POST /attachments.
type AttachmentCreateOptsBuilder interface {
	ToAttachmentCreateMap() (map[string]any, error)
}

// AttachmentCreateOpts create an attachment. Without Connector it only
// reserves the volume; InstanceUUID and Mode are sent only when set.
type AttachmentCreateOpts struct {
	VolumeID     string
	Connector    Connector
	Mode         string
	InstanceUUID string
}

// ToAttachmentCreateMap implements AttachmentCreateOptsBuilder.
func (o AttachmentCreateOpts) ToAttachmentCreateMap() (map[string]any, error) {
	if o.VolumeID == "" {
		return nil, fmt.Errorf("attachment create: volume id is empty")
	}
	a := map[string]any{"volume_uuid": o.VolumeID}
	if len(o.Connector) > 0 {
		a["connector"] = map[string]any(o.Connector)
	}
	if o.Mode != "" {
		a["mode"] = o.Mode
	}
	if o.InstanceUUID != "" {
		a["instance_uuid"] = o.InstanceUUID
	}
	return map[string]any{"attachment": a}, nil
}

// CreateAttachment creates an attachment (200).
func CreateAttachment(ctx context.Context, c *gophercloud.ServiceClient, opts AttachmentCreateOptsBuilder) (r AttachmentResult) {
	body, err := opts.ToAttachmentCreateMap()
	if err != nil {
		r.Err = err
		return
	}
	resp, err := c.Post(ctx, attachmentsURL(c), body, (*json.RawMessage)(&r.raw), &gophercloud.RequestOpts{OkCodes: []int{200, 202}})
	r.setResp(resp, err)
	return
}

// AttachmentUpdateOptsBuilder builds the body of PUT /attachments/{id}.
type AttachmentUpdateOptsBuilder interface {
	ToAttachmentUpdateMap() (map[string]any, error)
}

// AttachmentUpdateOpts hand Cinder the connector, which exports the volume.
type AttachmentUpdateOpts struct {
	Connector Connector
}

// ToAttachmentUpdateMap implements AttachmentUpdateOptsBuilder.
func (o AttachmentUpdateOpts) ToAttachmentUpdateMap() (map[string]any, error) {
	if len(o.Connector) == 0 {
		return nil, fmt.Errorf("attachment update: connector is empty")
	}
	return map[string]any{"attachment": map[string]any{"connector": map[string]any(o.Connector)}}, nil
}

// UpdateAttachment exports the volume to the connector (200).
func UpdateAttachment(ctx context.Context, c *gophercloud.ServiceClient, id string, opts AttachmentUpdateOptsBuilder) (r AttachmentResult) {
	body, err := opts.ToAttachmentUpdateMap()
	if err != nil {
		r.Err = err
		return
	}
	resp, err := c.Put(ctx, attachmentURL(c, id), body, (*json.RawMessage)(&r.raw), &gophercloud.RequestOpts{OkCodes: []int{200, 202}})
	r.setResp(resp, err)
	return
}

// CompleteAttachment marks the attachment attached and the volume in-use
// (os-complete, 204).
func CompleteAttachment(ctx context.Context, c *gophercloud.ServiceClient, id string) (r ActionResult) {
	resp, err := c.Post(ctx, attachmentActionURL(c, id), map[string]any{"os-complete": map[string]any{}}, nil,
		&gophercloud.RequestOpts{OkCodes: []int{200, 202, 204}})
	r.setResp(resp, err)
	return
}

// DeleteAttachment removes the attachment and its export (200).
func DeleteAttachment(ctx context.Context, c *gophercloud.ServiceClient, id string) (r ActionResult) {
	resp, err := c.Delete(ctx, attachmentURL(c, id), &gophercloud.RequestOpts{OkCodes: []int{200, 202, 204}})
	r.setResp(resp, err)
	return
}

// GetAttachment fetches one attachment with its connection info.
func GetAttachment(ctx context.Context, c *gophercloud.ServiceClient, id string) (r AttachmentResult) {
	resp, err := c.Get(ctx, attachmentURL(c, id), (*json.RawMessage)(&r.raw), nil)
	r.setResp(resp, err)
	return
}

// ListAttachments lists a volume's attachments with details.
func ListAttachments(ctx context.Context, c *gophercloud.ServiceClient, volumeID string) (r AttachmentsResult) {
	u := attachmentsDetailURL(c)
	if volumeID != "" {
		u += "?volume_id=" + url.QueryEscape(volumeID)
	}
	resp, err := c.Get(ctx, u, (*json.RawMessage)(&r.raw), nil)
	r.setResp(resp, err)
	return
}

// ---- versions ----

// GetVersions reads the version document at the service root (the
// endpoint with its /v3/... path cut off).
func GetVersions(ctx context.Context, c *gophercloud.ServiceClient) (r VersionsResult) {
	root := versionRoot(c.Endpoint)
	// No microversion header: the version document is unversioned.
	plain := *c
	plain.Microversion = ""
	resp, err := plain.Get(ctx, root, (*json.RawMessage)(&r.raw), &gophercloud.RequestOpts{OkCodes: []int{200, 300}})
	r.setResp(resp, err)
	return
}

// versionRoot cuts the endpoint at its last /vN path segment:
// http://h:8776/v3/abc/ -> http://h:8776/.
func versionRoot(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i := len(parts) - 1; i >= 0; i-- {
		if len(parts[i]) >= 2 && parts[i][0] == 'v' && parts[i][1] >= '0' && parts[i][1] <= '9' {
			u.Path = "/" + strings.Join(parts[:i], "/")
			if !strings.HasSuffix(u.Path, "/") {
				u.Path += "/"
			}
			u.RawQuery = ""
			return u.String()
		}
	}
	return endpoint
}
