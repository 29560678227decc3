package cinderapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/brick-storage/brick/connector"
)

// maxBody bounds what brick decodes from Cinder.
const maxBody = 4 << 20

// actionResp is what every result shares: the error (raw from gophercloud;
// the Client maps it) and the HTTP status.
type actionResp struct {
	StatusCode int
	Header     http.Header
	Err        error
}

func (r *actionResp) setResp(resp *http.Response, err error) {
	if resp != nil {
		r.StatusCode, r.Header = resp.StatusCode, resp.Header
	}
	r.Err = err
}

// ActionResult is the result of a call with no useful body.
type ActionResult struct{ actionResp }

// ExtractErr returns the call's error.
func (r ActionResult) ExtractErr() error { return r.Err }

type rawResult struct {
	actionResp
	raw []byte
}

func (r rawResult) decode(into any) error {
	if r.Err != nil {
		return r.Err
	}
	if len(r.raw) > maxBody {
		return fmt.Errorf("response larger than %d bytes", maxBody)
	}
	dec := json.NewDecoder(bytes.NewReader(r.raw))
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	return nil
}

// VolumeAttachment is one entry of a volume's "attachments".
type VolumeAttachment struct {
	AttachmentID string  `json:"attachment_id"`
	VolumeID     string  `json:"volume_id"`
	ServerID     *string `json:"server_id"`
	HostName     string  `json:"host_name"`
	Device       string  `json:"device"`
	AttachedAt   string  `json:"attached_at"`
}

// Volume is the part of a Cinder volume brick uses.
type Volume struct {
	ID              string             `json:"id"`
	Name            string             `json:"name"`
	Status          string             `json:"status"`
	Size            int                `json:"size"`
	VolumeType      string             `json:"volume_type"`
	Multiattach     bool               `json:"multiattach"`
	Encrypted       bool               `json:"encrypted"`
	MigrationStatus *string            `json:"migration_status"`
	Attachments     []VolumeAttachment `json:"attachments"`
}

// VolumeResult is the result of Get.
type VolumeResult struct{ rawResult }

// Extract returns the volume.
func (r VolumeResult) Extract() (*Volume, error) {
	var s struct {
		Volume *Volume `json:"volume"`
	}
	if err := r.decode(&s); err != nil {
		return nil, err
	}
	if s.Volume == nil {
		return nil, fmt.Errorf("response has no volume")
	}
	return s.Volume, nil
}

// VolumesResult is the result of List.
type VolumesResult struct{ rawResult }

// Extract returns the volumes.
func (r VolumesResult) Extract() ([]Volume, error) {
	var s struct {
		Volumes []Volume `json:"volumes"`
	}
	if err := r.decode(&s); err != nil {
		return nil, err
	}
	return s.Volumes, nil
}

// ConnectionResult is the result of InitializeConnection.
type ConnectionResult struct{ rawResult }

// Extract returns the normalised connection info.
func (r ConnectionResult) Extract() (connector.ConnectionInfo, error) {
	var s struct {
		ConnectionInfo map[string]any `json:"connection_info"`
	}
	if err := r.decode(&s); err != nil {
		return connector.ConnectionInfo{}, err
	}
	if s.ConnectionInfo == nil {
		return connector.ConnectionInfo{}, fmt.Errorf("response has no connection_info")
	}
	return connector.FromMap(s.ConnectionInfo)
}

// Attachment is a v3 attachment.
type Attachment struct {
	ID         string  `json:"id"`
	Status     string  `json:"status"`
	VolumeID   string  `json:"volume_id"`
	Instance   *string `json:"instance"`
	AttachMode string  `json:"attach_mode"`
	AttachedAt string  `json:"attached_at"`
	DetachedAt string  `json:"detached_at"`
	// ConnectionInfo is the raw (flat) connection info; empty before the
	// attachment has a connector. Use Info for the normalised form.
	ConnectionInfo map[string]any `json:"connection_info"`
}

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

// AttachmentResult is the result of CreateAttachment, UpdateAttachment and
// GetAttachment.
type AttachmentResult struct{ rawResult }

// Extract returns the attachment.
func (r AttachmentResult) Extract() (*Attachment, error) {
	var s struct {
		Attachment *Attachment `json:"attachment"`
	}
	if err := r.decode(&s); err != nil {
		return nil, err
	}
	if s.Attachment == nil || s.Attachment.ID == "" {
		return nil, fmt.Errorf("response has no attachment")
	}
	return s.Attachment, nil
}

// AttachmentsResult is the result of ListAttachments.
type AttachmentsResult struct{ rawResult }

// Extract returns the attachments.
func (r AttachmentsResult) Extract() ([]Attachment, error) {
	var s struct {
		Attachments []Attachment `json:"attachments"`
	}
	if err := r.decode(&s); err != nil {
		return nil, err
	}
	return s.Attachments, nil
}

// APIVersion is one entry of the version document.
type APIVersion struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	Version    string `json:"version"`
	MinVersion string `json:"min_version"`
}

// VersionsResult is the result of GetVersions.
type VersionsResult struct{ rawResult }

// Extract returns the versions, whether the server sent a list or one.
func (r VersionsResult) Extract() ([]APIVersion, error) {
	var s struct {
		Versions json.RawMessage `json:"versions"`
		Version  *APIVersion     `json:"version"`
	}
	if err := r.decode(&s); err != nil {
		return nil, err
	}
	if s.Version != nil {
		return []APIVersion{*s.Version}, nil
	}
	var list []APIVersion
	if len(s.Versions) > 0 {
		// Some deployments wrap the list: {"versions": {"values": [...]}}.
		if err := json.Unmarshal(s.Versions, &list); err != nil {
			var wrapped struct {
				Values []APIVersion `json:"values"`
			}
			if err2 := json.Unmarshal(s.Versions, &wrapped); err2 != nil {
				return nil, fmt.Errorf("decode versions: %w", err)
			}
			list = wrapped.Values
		}
	}
	return list, nil
}
