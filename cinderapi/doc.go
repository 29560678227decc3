// Package cinderapi is brick's Cinder client: the few Block Storage v3
// calls a local attach and detach make, in gophercloud's shape (an Opts
// struct and a one-method OptsBuilder per request, typed results with
// Extract, URLs in urls.go), plus what brick adds on top:
//
//   - microversion negotiation (NewClient): the v3 attachments flow when
//     the server allows >= 3.44 (attach mode only at >= 3.54), else the
//     legacy reserve / initialize_connection / os-attach actions;
//   - both flows behind one interface (Flow);
//   - request bodies built here: gophercloud's attachments.CreateOpts always
//     sends instance_uuid (null is a 400) and its InitializeConnectionOpts
//     types wwnns as a string;
//   - connection info returned as a normalised connector.ConnectionInfo
//     (v3 returns it flat, the legacy action nests it under "data");
//   - volume lookup by ID or by unique name (FindVolume);
//   - Cinder errors mapped to typed errors (ErrNotFound, ErrInvalidState,
//     ErrBadRequest, ErrUnavailable, ...) with one short line of message and
//     never a server traceback or a credential.
package cinderapi
