package cinderapi

import (
	"context"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/brick-storage/brick/apierr"
)

// SetVolumeMetadata adds or replaces the given keys of a volume's metadata
// (POST /volumes/{id}/metadata merges; other keys stay). Cinder allows it
// in every status but maintenance and uploading, in-use included.
func (c *Client) SetVolumeMetadata(ctx context.Context, volumeID string, meta map[string]string) error {
	body := map[string]any{"metadata": meta}
	_, err := c.SC.Post(ctx, c.SC.ServiceURL("volumes", volumeID, "metadata"), body, nil,
		&gophercloud.RequestOpts{OkCodes: []int{http.StatusOK}})
	return mapError("set volume metadata", volumeID, err)
}

// DeleteVolumeMetadata removes one key of a volume's metadata; a key (or
// volume) gone already is success.
func (c *Client) DeleteVolumeMetadata(ctx context.Context, volumeID, key string) error {
	_, err := c.SC.Delete(ctx, c.SC.ServiceURL("volumes", volumeID, "metadata", key),
		&gophercloud.RequestOpts{OkCodes: []int{http.StatusOK}})
	err = mapError("delete volume metadata", volumeID, err)
	if isKind(err, apierr.ErrNotFound) {
		return nil
	}
	return err
}
