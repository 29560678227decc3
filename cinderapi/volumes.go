package cinderapi

import (
	"context"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/attachments"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"

	"github.com/brick-storage/brick/apierr"
)

// Volumes lists the project's volumes (with details), only those with
// exactly this name when name is set.
func (c *Client) Volumes(ctx context.Context, name string) ([]Volume, error) {
	var out []Volume
	query, err := volumes.ListOpts{Name: name}.ToVolumeListQuery()
	if err == nil {
		err = walk(ctx, c.SC, "volumes", query, func(list []volumes.Volume) {
			for _, v := range list {
				if name == "" || v.Name == name { // some releases match names as substrings
					out = append(out, v)
				}
			}
		})
	}
	return out, mapError("list", name, err)
}

// ReserveAttachment creates a v3 attachment without a connector: the
// volume is reserved, and its consumer exports and completes it later. No
// instance_uuid: Cinder asks Nova before deleting a completed attachment
// that has one, which fails where there is no Nova.
func (c *Client) ReserveAttachment(ctx context.Context, volumeID, mode string) (*Attachment, error) {
	if !c.Version.AtLeast(MVComplete) {
		return nil, &apierr.Error{Service: Service, Op: "attachment create", Volume: volumeID, Kind: apierr.ErrUnsupported,
			Message: "reserving an attachment for another host needs microversion " + MVComplete.String() + " or later, using " + c.Version.String()}
	}
	opts := AttachmentCreateOpts{VolumeID: volumeID}
	if mode != "" && c.Version.AtLeast(MVMode) {
		opts.Mode = mode
	}
	a, err := attachments.Create(ctx, c.SC, opts).Extract()
	if err != nil {
		return nil, mapError("attachment create", volumeID, err)
	}
	return &Attachment{*a}, nil
}

// DeleteAttachment deletes a v3 attachment, ending its export; one already
// gone is success.
func (c *Client) DeleteAttachment(ctx context.Context, volumeID, attachmentID string) error {
	err := mapError("attachment delete", volumeID, attachments.Delete(ctx, c.SC, attachmentID).ExtractErr())
	if isKind(err, apierr.ErrNotFound) {
		return nil
	}
	return err
}
