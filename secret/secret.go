// Package secret holds credentials as a type that never prints itself.
//
// A Value formats, marshals and logs as a fixed mask whatever the verb or
// encoder; the raw bytes come out only through Reveal, so every place that
// hands a secret to a server or a tool is a call to Reveal that a reader
// (or grep) can find. Masking text after the fact (host.Redactor) stays as
// the last line of defence for values that arrive inside server replies.
//
//	pw := secret.New(os.Getenv("OS_PASSWORD"))
//	log.Printf("auth with %v", pw)       // auth with ***
//	opts.Password = pw.Reveal()         // the one way out
package secret

import (
	"fmt"
	"log/slog"
	"strings"
)

// Mask is what every rendering of a Value prints.
const Mask = "***"

// Value is a secret string. The zero Value is empty. Values are compared
// with Equal, not ==, so a comparison is never mistaken for a use.
type Value struct {
	// p, not a plain string field: reflection-based printers (%+v of a
	// containing struct, spew, testify's diffs) stop at the pointer.
	p *string
}

// New wraps s; an empty s gives the zero Value.
func New(s string) Value {
	if s == "" {
		return Value{}
	}
	return Value{p: &s}
}

// Reveal returns the raw secret for the one call that must send it.
func (v Value) Reveal() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

// IsZero reports whether the secret is empty.
func (v Value) IsZero() bool { return v.p == nil || *v.p == "" }

// Equal reports whether both hold the same secret.
func (v Value) Equal(o Value) bool { return v.Reveal() == o.Reveal() }

// Or returns v, or o when v is empty (cmp.Or for secrets).
func (v Value) Or(o Value) Value {
	if v.IsZero() {
		return o
	}
	return v
}

// String returns Mask (or "" for an empty secret, so "is it set" stays
// visible in plans and debug output).
func (v Value) String() string {
	if v.IsZero() {
		return ""
	}
	return Mask
}

// GoString masks %#v.
func (v Value) GoString() string { return "secret.Value(" + Mask + ")" }

// Format masks every verb (%s, %v, %+v, %q, %x, %d...).
func (v Value) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", v.String())
		return
	}
	if verb == 'v' && f.Flag('#') {
		_, _ = f.Write([]byte(v.GoString()))
		return
	}
	_, _ = f.Write([]byte(v.String()))
}

// LogValue masks the value in slog records.
func (v Value) LogValue() slog.Value { return slog.StringValue(v.String()) }

// MarshalJSON writes the mask: a Value in a record, a plan or -f json
// output never carries the secret.
func (v Value) MarshalJSON() ([]byte, error) { return []byte(`"` + v.String() + `"`), nil }

// MarshalText writes the mask (YAML, TOML and other text encoders).
func (v Value) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// IsKey reports whether a field named key (in connection info, clouds.yaml
// or a log attribute) holds a credential: masking by name needs no
// knowledge of the value, so it works before any secret is registered and
// cannot be probed by guessing values.
func IsKey(key string) bool {
	k := strings.ToLower(key)
	switch {
	case strings.Contains(k, "password"), k == "keyring", strings.HasSuffix(k, "_key"), k == "key", strings.Contains(k, "token"):
		return true
	case strings.Contains(k, "secret") && k != "secret_uuid" && k != "secret_type":
		return true
	}
	return false
}
