// Package cinderapi is brick's Cinder client, on gophercloud's own
// blockstorage/v3 volumes and attachments packages. What it adds:
//
//   - request bodies gophercloud builds wrong for brick, handed to
//     gophercloud's calls through its builder interfaces:
//     AttachmentCreateOpts (gophercloud's always sends instance_uuid, and
//     a null is a 400) and ConnectorOpts (gophercloud's types wwnns as a
//     string; Cinder drivers take a list);
//   - the calls gophercloud lacks: RollDetaching, ForceDetach;
//   - microversion negotiation (NewClient, on gophercloud's version
//     discovery): the v3 attachments flow when the server allows >= 3.44
//     (attach mode only at >= 3.54), else the legacy reserve /
//     initialize_connection / os-attach actions; both behind Flow;
//   - connection info as a normalised connector.ConnectionInfo (v3 returns
//     it flat, the legacy action nests it under "data");
//   - volume lookup by ID or by unique name (FindVolume);
//   - Cinder errors as typed errors (apierr.ErrNotFound, apierr.ErrInvalidState,
//     apierr.ErrInvalid, apierr.ErrUnreachable, ...) with one short line of message,
//     never a server traceback or a credential, that still unwrap to
//     gophercloud's error (gophercloud.ResponseCodeIs works on them).
package cinderapi
