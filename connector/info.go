package connector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/secret"
)

// ConnectionInfo is Cinder's connection_info, normalised: DriverVolumeType
// names the protocol and Data holds the protocol's keys whether Cinder sent
// them nested under "data" (initialize_connection) or flat (v3 attachments).
// Data is untrusted input: read it only through the typed accessors, which
// reject wrong types with an error naming the key, and validate every value
// before it reaches a command line or a path.
type ConnectionInfo struct {
	DriverVolumeType string
	Data             map[string]any
}

// MaxConnectionInfoSize bounds what brick will parse; real ones are < 4 KiB.
const MaxConnectionInfoSize = 1 << 20

// ErrInvalid marks connection info brick refuses to use.
var ErrInvalid = errors.New("invalid connection info")

// InvalidError names the offending key. It never repeats a secret's value.
type InvalidError struct {
	Key    string
	Reason string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%s: key %q: %s", ErrInvalid, e.Key, e.Reason)
}

func (e *InvalidError) Unwrap() error { return ErrInvalid }

// Invalid builds an *InvalidError; protocol validators use it so every
// rejection reads the same way.
func Invalid(key, format string, args ...any) error {
	return &InvalidError{Key: key, Reason: fmt.Sprintf(format, args...)}
}

// ParseConnectionInfo decodes connection info in any of the shapes Cinder
// and users produce: {"driver_volume_type":..,"data":{..}},
// the flat v3 form, or either wrapped in {"connection_info": ...}.
func ParseConnectionInfo(raw []byte) (ConnectionInfo, error) {
	if len(raw) > MaxConnectionInfoSize {
		return ConnectionInfo{}, Invalid("connection_info", "larger than %d bytes", MaxConnectionInfoSize)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // LUNs and ports stay exact integers
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return ConnectionInfo{}, Invalid("connection_info", "not a JSON object: %s", jsonErr(err))
	}
	if dec.More() {
		return ConnectionInfo{}, Invalid("connection_info", "trailing data after the JSON object")
	}
	return FromMap(top)
}

// FromMap normalises an already decoded connection info object.
func FromMap(top map[string]any) (ConnectionInfo, error) {
	if top == nil {
		return ConnectionInfo{}, Invalid("connection_info", "empty")
	}
	if inner, ok := top["connection_info"]; ok {
		m, ok := inner.(map[string]any)
		if !ok {
			return ConnectionInfo{}, Invalid("connection_info", "must be an object, got %s", jsonType(inner))
		}
		top = m
	}
	dvtRaw, ok := top["driver_volume_type"]
	if !ok {
		return ConnectionInfo{}, Invalid("driver_volume_type", "missing")
	}
	dvt, ok := dvtRaw.(string)
	if !ok {
		return ConnectionInfo{}, Invalid("driver_volume_type", "must be a string, got %s", jsonType(dvtRaw))
	}
	if !validTypeName(dvt) {
		return ConnectionInfo{}, Invalid("driver_volume_type", "must be a short lowercase name, got %s", Quote(dvt))
	}
	data := map[string]any{}
	if nested, ok := top["data"]; ok && nested != nil {
		m, ok := nested.(map[string]any)
		if !ok {
			return ConnectionInfo{}, Invalid("data", "must be an object, got %s", jsonType(nested))
		}
		for k, v := range m {
			data[k] = v
		}
	}
	// Flat (v3 attachment) keys; nested values win where both exist.
	for k, v := range top {
		if k == "data" || k == "driver_volume_type" {
			continue
		}
		if _, dup := data[k]; !dup {
			data[k] = v
		}
	}
	return ConnectionInfo{DriverVolumeType: strings.ToLower(dvt), Data: data}, nil
}

// MarshalJSON writes the nested form Cinder's initialize_connection returns.
func (c ConnectionInfo) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"driver_volume_type": c.DriverVolumeType, "data": c.Data})
}

// UnmarshalJSON accepts every shape ParseConnectionInfo does.
func (c *ConnectionInfo) UnmarshalJSON(b []byte) error {
	ci, err := ParseConnectionInfo(b)
	if err != nil {
		return err
	}
	*c = ci
	return nil
}

// Redacted returns a copy of the connection info with every secret value
// replaced by "***", at any depth of nested objects and lists, safe to log,
// print or store.
func (c ConnectionInfo) Redacted() ConnectionInfo {
	data, _ := redactValue(c.Data).(map[string]any)
	return ConnectionInfo{DriverVolumeType: c.DriverVolumeType, Data: data}
}

// redactValue copies v with the values of secret-named keys masked.
func redactValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if IsSecretKey(k) && e != nil && e != "" {
				out[k] = "***"
				continue
			}
			out[k] = redactValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e)
		}
		return out
	}
	return v
}

// Secrets returns the secret values in the connection info, at any depth,
// for a Redactor.
func (c ConnectionInfo) Secrets() []string {
	var out []string
	collectSecrets(c.Data, false, &out)
	sort.Strings(out)
	return out
}

// collectSecrets appends the strings under secret-named keys in v.
func collectSecrets(v any, secretKey bool, out *[]string) {
	switch x := v.(type) {
	case string:
		if secretKey && x != "" {
			*out = append(*out, x)
		}
	case map[string]any:
		for k, e := range x {
			collectSecrets(e, secretKey || IsSecretKey(k), out)
		}
	case []any:
		for _, e := range x {
			collectSecrets(e, secretKey, out)
		}
	}
}

// IsSecretKey reports whether a connection info key holds a credential.
func IsSecretKey(key string) bool { return secret.IsKey(key) }

// Has reports whether key is present and not null.
func (c ConnectionInfo) Has(key string) bool {
	v, ok := c.Data[key]
	return ok && v != nil
}

// String returns a string value. ok is false when the key is absent or
// null. Strings with NUL bytes, invalid UTF-8 or over 4 KiB are refused.
func (c ConnectionInfo) String(key string) (s string, ok bool, err error) {
	v, present := c.Data[key]
	if !present || v == nil {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", false, Invalid(key, "must be a string, got %s", jsonType(v))
	}
	if err := checkString(key, s); err != nil {
		return "", false, err
	}
	return s, true, nil
}

// RequiredString is String for a key that must be present and non-empty.
func (c ConnectionInfo) RequiredString(key string) (string, error) {
	s, ok, err := c.String(key)
	if err != nil {
		return "", err
	}
	if !ok || s == "" {
		return "", Invalid(key, "missing")
	}
	return s, nil
}

// Int returns an integer value; JSON numbers and decimal strings are
// accepted (some drivers send LUNs as strings).
func (c ConnectionInfo) Int(key string) (n int64, ok bool, err error) {
	v, present := c.Data[key]
	if !present || v == nil {
		return 0, false, nil
	}
	n, err = toInt(key, v)
	return n, err == nil, err
}

// Bool returns a boolean; JSON booleans and the strings "true"/"false"
// (any case) are accepted, because some drivers send Python's str(bool).
func (c ConnectionInfo) Bool(key string) (b, ok bool, err error) {
	v, present := c.Data[key]
	if !present || v == nil {
		return false, false, nil
	}
	switch t := v.(type) {
	case bool:
		return t, true, nil
	case string:
		switch strings.ToLower(t) {
		case "true":
			return true, true, nil
		case "false":
			return false, true, nil
		}
	}
	return false, false, Invalid(key, "must be a boolean, got %s", jsonType(v))
}

// Strings returns a list of strings; a single string is a list of one.
func (c ConnectionInfo) Strings(key string) ([]string, bool, error) {
	v, present := c.Data[key]
	if !present || v == nil {
		return nil, false, nil
	}
	switch t := v.(type) {
	case string:
		if err := checkString(key, t); err != nil {
			return nil, false, err
		}
		return []string{t}, true, nil
	case []any:
		if len(t) > maxListLen {
			return nil, false, Invalid(key, "more than %d entries", maxListLen)
		}
		out := make([]string, len(t))
		for i, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, false, Invalid(fmt.Sprintf("%s[%d]", key, i), "must be a string, got %s", jsonType(e))
			}
			if err := checkString(fmt.Sprintf("%s[%d]", key, i), s); err != nil {
				return nil, false, err
			}
			out[i] = s
		}
		return out, true, nil
	}
	return nil, false, Invalid(key, "must be a string or a list of strings, got %s", jsonType(v))
}

// Ints returns a list of integers; a single integer is a list of one.
func (c ConnectionInfo) Ints(key string) ([]int64, bool, error) {
	v, present := c.Data[key]
	if !present || v == nil {
		return nil, false, nil
	}
	list, isList := v.([]any)
	if !isList {
		n, err := toInt(key, v)
		if err != nil {
			return nil, false, err
		}
		return []int64{n}, true, nil
	}
	if len(list) > maxListLen {
		return nil, false, Invalid(key, "more than %d entries", maxListLen)
	}
	out := make([]int64, len(list))
	for i, e := range list {
		n, err := toInt(fmt.Sprintf("%s[%d]", key, i), e)
		if err != nil {
			return nil, false, err
		}
		out[i] = n
	}
	return out, true, nil
}

// Object returns a nested object value.
func (c ConnectionInfo) Object(key string) (map[string]any, bool, error) {
	v, present := c.Data[key]
	if !present || v == nil {
		return nil, false, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false, Invalid(key, "must be an object, got %s", jsonType(v))
	}
	return m, true, nil
}

// Limits on untrusted values: far above anything Cinder sends, far below
// what could hurt.
const (
	maxStringLen = 4096
	maxListLen   = 256
)

func checkString(key, s string) error {
	switch {
	case len(s) > maxStringLen:
		return Invalid(key, "longer than %d bytes", maxStringLen)
	case strings.ContainsRune(s, 0):
		return Invalid(key, "contains a NUL byte")
	case !utf8.ValidString(s):
		return Invalid(key, "is not valid UTF-8")
	}
	return nil
}

func toInt(key string, v any) (int64, error) {
	switch t := v.(type) {
	case json.Number:
		n, err := strconv.ParseInt(t.String(), 10, 64)
		if err != nil {
			return 0, Invalid(key, "must be an integer, got %s", Quote(t.String()))
		}
		return n, nil
	case float64: // maps built by hand rather than parsed
		if t != math.Trunc(t) || math.Abs(t) > 1<<53 {
			return 0, Invalid(key, "must be an integer, got %v", t)
		}
		return int64(t), nil
	case int:
		return int64(t), nil
	case int64:
		return t, nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
		if err != nil {
			return 0, Invalid(key, "must be an integer, got %s", Quote(t))
		}
		return n, nil
	}
	return 0, Invalid(key, "must be an integer, got %s", jsonType(v))
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64, int, int64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func jsonErr(err error) string { return ident.Clip(err.Error(), 120) }

// Quote renders an untrusted value for an error message: quoted, control
// characters escaped, and cut short.
func Quote(s string) string { return strconv.Quote(ident.Clip(s, 64)) }

func validTypeName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// ReadOnly reads access_mode, which every protocol honours: "rw", empty or
// absent is read-write, "ro" read-only, anything else invalid.
func (c ConnectionInfo) ReadOnly() (bool, error) {
	mode, _, err := c.String("access_mode")
	if err != nil {
		return false, err
	}
	switch mode {
	case "", "rw":
		return false, nil
	case "ro":
		return true, nil
	}
	return false, Invalid("access_mode", "must be rw or ro, got %s", Quote(mode))
}

// VolumeID reads volume_id: "" when absent or empty, else a lowercase UUID.
func (c ConnectionInfo) VolumeID() (string, error) {
	id, _, err := c.String("volume_id")
	if err != nil || id == "" {
		return "", err
	}
	u, ok := ident.ParseUUID(id)
	if !ok {
		return "", Invalid("volume_id", "must be a UUID, got %s", Quote(id))
	}
	return u, nil
}
