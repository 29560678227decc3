package ironicapi

import "errors"

// Sentinel errors; *Error unwraps to one of them so callers (and the CLI's
// exit codes) can tell the cases apart with errors.Is:
//   - ErrTooOld: the server has no volume API (its API version is < 1.32);
//   - ErrConflict: a duplicate (connector type+ID anywhere, node+boot index, UUID);
//   - ErrNotPoweredOff: Ironic changes and deletes volume resources only
//     while the node's power state is "power off";
//   - ErrNotFound: no such node, connector or target;
//   - ErrInvalid: a value brick refused before sending it, or Ironic's 400;
//   - ErrUnauthorized: Ironic refused the token (401);
//   - ErrForbidden: Ironic's policy refused the call to this user (403);
//   - ErrUnreachable: no HTTP answer (refused, timed out, TLS).
var (
	ErrTooOld        = errors.New("Ironic too old for volume resources")
	ErrConflict      = errors.New("already exists")
	ErrNotPoweredOff = errors.New("node is not powered off")
	ErrNotFound      = errors.New("not found")
	ErrInvalid       = errors.New("invalid")
	ErrUnauthorized  = errors.New("token refused")
	ErrForbidden     = errors.New("not allowed by policy")
	ErrUnreachable   = errors.New("Ironic unreachable")
)
