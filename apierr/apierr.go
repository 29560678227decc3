// Package apierr is the one error vocabulary of brick's API clients
// (cinderapi, ironicapi, keymanager, osauth): one Error type naming the
// call, the HTTP status, the server's message and the fix, one set of
// kinds to test with errors.Is, and one summariser for what a server sends
// instead of its API's JSON (a proxy's HTML page, a Python traceback).
//
//	if errors.Is(err, apierr.ErrNotFound) { ... }
//	var code gophercloud.ErrUnexpectedResponseCode
//	if errors.As(err, &code) { ... } // the cause stays reachable
package apierr

import (
	"errors"
	"fmt"
	"strings"
)

// Kinds of failure, one name per idea across the clients; an *Error
// unwraps to its kind. The CLI, the Docker plugin and the CSI driver pick
// their answers with errors.Is on these.
var (
	// ErrNotFound: no such volume, attachment, node, connector, target or key (404).
	ErrNotFound = errors.New("not found")
	// ErrConflict: a duplicate (409): a connector or target that exists.
	ErrConflict = errors.New("already exists")
	// ErrInvalidState: the resource's state refuses the step: a volume
	// in-use elsewhere, a node not powered off.
	ErrInvalidState = errors.New("invalid state")
	// ErrInvalid: a value the server (400) or brick refused.
	ErrInvalid = errors.New("invalid")
	// ErrUnauthorized: the credentials or the token were refused (401).
	ErrUnauthorized = errors.New("not authorized")
	// ErrForbidden: the service's policy refused this user the call (403).
	ErrForbidden = errors.New("not allowed by policy")
	// ErrUnreachable: no usable answer: a closed port, a timeout, TLS, a
	// server failure (5xx). Retrying later may work.
	ErrUnreachable = errors.New("unreachable")
	// ErrUnsupported: the server does not offer the API version needed.
	ErrUnsupported = errors.New("API version not supported")
	// ErrAmbiguous: a name matches more than one resource.
	ErrAmbiguous = errors.New("ambiguous name")
	// ErrUnexpected: an answer brick cannot use.
	ErrUnexpected = errors.New("unexpected response")
	// ErrNoEndpoint: the service catalog lacks the endpoint asked for.
	ErrNoEndpoint = errors.New("no such endpoint in the service catalog")
)

// Error is a failed API call as one line:
//
//	<Service> <Op> volume <Volume>: <Message> (HTTP <Status>); <Hint>
//
// with every empty part left out (the kind's text stands in for an empty
// Message).
type Error struct {
	Service string // "cinder", "ironic"; empty when Op says it
	Op      string // the call: "reserve", "create volume connector of node n1"
	Volume  string // the volume's ID or name as given, if the call has one
	Status  int    // HTTP status; 0 for no answer, or when Message words it
	Message string // one short line: the server's message or brick's reason
	Hint    string // what to do about it; may be empty
	Kind    error  // one of the Err* kinds; may be nil
	// Err is the cause: gophercloud's error (its body dropped) or the
	// network's, so errors.As finds gophercloud.ErrUnexpectedResponseCode.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Service)
	if e.Op != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(e.Op)
	}
	if e.Volume != "" {
		b.WriteString(" volume ")
		b.WriteString(e.Volume)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	switch {
	case e.Message != "":
		b.WriteString(e.Message)
	case e.Kind != nil:
		b.WriteString(e.Kind.Error())
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap gives errors.Is the kind and errors.As the cause.
func (e *Error) Unwrap() []error {
	var out []error
	for _, err := range []error{e.Kind, e.Err} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// IsKind reports whether err is an *Error of exactly that kind (not one
// that merely wraps a cause of it).
func IsKind(err, kind error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == kind
}
