// Package ironicapi is a gophercloud-shaped client for Ironic's volume
// resources, which gophercloud itself does not cover: volume connectors (a
// node's storage initiators: iqn, wwpn, wwnn, ip, mac, port, portgroup) and
// volume targets (the volumes a node boots from or uses). The node calls
// around them (get by name or UUID, power state, patch) are gophercloud's
// baremetal/v1/nodes, sent at the volume API version with errors as *apierr.Error.
// What brick does with them (register a host, export a volume to a node)
// is in package ironicattach.
//
// Every call takes a plain *gophercloud.ServiceClient for the baremetal
// service (Keystone, noauth or http_basic) and always sends
// X-OpenStack-Ironic-API-Version >= 1.32, the version that introduced the
// volume API. The endpoint may be given with or without the trailing /v1.
//
// Requests follow gophercloud's conventions: an ...Opts struct and a
// one-method ...OptsBuilder interface per request, typed results with
// Extract, and pagers. Unlike ironicclient, the pagers keep every filter
// (node, fields, detail, sort) on every page: Ironic's "next" link drops
// them and would mix other nodes' records into a node's list.
//
// Errors are *apierr.Error values (Service "ironic") that unwrap to one of
// apierr's kinds (ErrUnsupported, ErrConflict, ErrInvalidState, ErrNotFound,
// ErrInvalid, ...) and to gophercloud's own
// error (so gophercloud.ResponseCodeIs works), with Ironic's own message
// (decoded from its double-encoded error_message) and a hint saying what to
// do.
//
//	client, _ := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: "http://127.0.0.1:6385/v1"})
//	node, err := ironicapi.GetNode(ctx, client, "node-1").Extract()
//	c, err := ironicapi.CreateConnector(ctx, client, ironicapi.ConnectorCreateOpts{
//		NodeUUID: node.UUID, Type: "iqn", ConnectorID: "iqn.2004-10.com.example:node-1",
//	}).Extract()
package ironicapi
