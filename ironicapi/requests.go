package ironicapi

import (
	"context"
	"net/url"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/pagination"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/ident"
)

// volumeKind is what the requests on volume connectors and on volume
// targets share, so each request is written once and the two public APIs
// (connector_*.go, target_*.go) differ only in their types and validation.
type volumeKind struct {
	resource   string   // "volume connector", for messages
	collection string   // "connectors", the path element and the JSON list key
	fields     []string // the fields ?fields= accepts
	page       func(volumePage) pagination.Page
}

func connectorKind() volumeKind {
	return volumeKind{resource: "volume connector", collection: "connectors", fields: ConnectorFields,
		page: func(p volumePage) pagination.Page { return ConnectorPage{p} }}
}

func targetKind() volumeKind {
	return volumeKind{resource: "volume target", collection: "targets", fields: TargetFields,
		page: func(p volumePage) pagination.Page { return TargetPage{p} }}
}

// query builds the list query and checks its fields= against the
// resource's fields.
func (k volumeKind) query(opts ListOptsBuilder) (string, error) {
	q, err := opts.ToVolumeListQuery()
	if err != nil {
		return "", err
	}
	v, err := url.ParseQuery(strings.TrimPrefix(q, "?"))
	if err != nil {
		return "", err
	}
	if f := v.Get("fields"); f != "" {
		if err := checkFields(strings.Split(f, ","), k.fields); err != nil {
			return "", err
		}
	}
	return q, nil
}

// list pages through the collection, or through the node's collection
// (/v1/nodes/<uuid>/volume/..., which takes a UUID only) when nodeUUID is
// set; query (may be nil) validates and builds the filters.
func (k volumeKind) list(client *gophercloud.ServiceClient, nodeUUID string, opts ListOptsBuilder) pagination.Pager {
	u := k.collectionURL(client)
	if nodeUUID != "" {
		if !ident.IsUUID(nodeUUID) {
			return pagination.Pager{Err: invalid("list "+k.resource+"s", "node", "%s is not a UUID (resolve names with ResolveNode)", quote(nodeUUID))}
		}
		u = k.nodeURL(client, nodeUUID)
	}
	if opts != nil {
		q, err := k.query(opts)
		if err != nil {
			return pagination.Pager{Err: &apierr.Error{Service: Service, Op: "list " + k.resource + "s", Message: err.Error(), Kind: apierr.ErrInvalid}}
		}
		u += q
	}
	return pagination.NewPager(volumeClient(client), u, func(r pagination.PageResult) pagination.Page {
		return k.page(volumePage{LinkedPageBase: pagination.LinkedPageBase{PageResult: r}, key: k.collection})
	})
}

func (k volumeKind) create(ctx context.Context, client *gophercloud.ServiceClient, body func() (map[string]any, error)) (r gophercloud.Result) {
	c := call{op: "create", resource: k.resource}
	b, err := body()
	if err != nil {
		r.Err = &apierr.Error{Service: Service, Op: c.String(), Message: err.Error(), Kind: apierr.ErrInvalid}
		return r
	}
	if n, ok := b["node_uuid"].(string); ok {
		c.node = n
	}
	resp, err := volumeClient(client).Post(ctx, k.collectionURL(client), b, &r.Body, &gophercloud.RequestOpts{OkCodes: []int{201}})
	_, r.Header, r.Err = gophercloud.ParseResponse(resp, err)
	r.Err = convert(c, r.Err)
	return r
}

func (k volumeKind) get(ctx context.Context, client *gophercloud.ServiceClient, id string, opts *GetOpts) (r gophercloud.Result) {
	c := call{op: "get", resource: k.resource, ident: id}
	if !ident.IsUUID(id) {
		r.Err = invalid(c.String(), "uuid", "%s is not a UUID", quote(id))
		return r
	}
	u := k.itemURL(client, id)
	if opts != nil && len(opts.Fields) > 0 {
		if err := checkFields(opts.Fields, k.fields); err != nil {
			r.Err = &apierr.Error{Service: Service, Op: c.String(), Message: err.Error(), Kind: apierr.ErrInvalid}
			return r
		}
		q, _ := gophercloud.BuildQueryString(opts)
		u += q.String()
	}
	resp, err := volumeClient(client).Get(ctx, u, &r.Body, &gophercloud.RequestOpts{OkCodes: []int{200}})
	_, r.Header, r.Err = gophercloud.ParseResponse(resp, err)
	r.Err = convert(c, r.Err)
	return r
}

func (k volumeKind) update(ctx context.Context, client *gophercloud.ServiceClient, id string, body func() ([]map[string]any, error)) (r gophercloud.Result) {
	c := call{op: "update", resource: k.resource, ident: id}
	if !ident.IsUUID(id) {
		r.Err = invalid(c.String(), "uuid", "%s is not a UUID", quote(id))
		return r
	}
	b, err := body()
	if err != nil {
		r.Err = &apierr.Error{Service: Service, Op: c.String(), Message: err.Error(), Kind: apierr.ErrInvalid}
		return r
	}
	resp, err := volumeClient(client).Patch(ctx, k.itemURL(client, id), b, &r.Body, &gophercloud.RequestOpts{OkCodes: []int{200}})
	_, r.Header, r.Err = gophercloud.ParseResponse(resp, err)
	r.Err = convert(c, r.Err)
	return r
}

func (k volumeKind) delete(ctx context.Context, client *gophercloud.ServiceClient, id string) (r DeleteResult) {
	c := call{op: "delete", resource: k.resource, ident: id}
	if !ident.IsUUID(id) {
		r.Err = invalid(c.String(), "uuid", "%s is not a UUID", quote(id))
		return r
	}
	resp, err := volumeClient(client).Delete(ctx, k.itemURL(client, id), &gophercloud.RequestOpts{OkCodes: []int{204}})
	_, r.Header, r.Err = gophercloud.ParseResponse(resp, err)
	r.Err = convert(c, r.Err)
	return r
}
