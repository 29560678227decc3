package ironicattach

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/ironicapi"
)

// Capability is one key:value of a node's properties/capabilities.
type Capability struct{ Key, Value string }

// ParseCapabilities splits Ironic's "k1:v1,k2:v2" capabilities string.
// Entries without a colon are kept with an empty value; blank entries are
// dropped. It fails only on keys Ironic could not have stored (empty or
// holding control characters).
func ParseCapabilities(s string) ([]Capability, error) {
	var out []Capability
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, ":")
		k = strings.TrimSpace(k)
		if k == "" || strings.ContainsFunc(k, ident.IsControl) {
			return nil, fmt.Errorf("capability %s has no usable key", connector.Quote(part))
		}
		out = append(out, Capability{Key: k, Value: strings.TrimSpace(v)})
	}
	return out, nil
}

// FormatCapabilities joins capabilities as Ironic stores them.
func FormatCapabilities(caps []Capability) string {
	parts := make([]string, len(caps))
	for i, c := range caps {
		parts[i] = c.Key + ":" + c.Value
	}
	return strings.Join(parts, ",")
}

// SetCapabilities sets the given capabilities on a node, keeping the
// others, and reports whether anything changed. Ironic allows this in any
// power state. Capabilities stored as a JSON object are updated as one.
func SetCapabilities(ctx context.Context, client *gophercloud.ServiceClient, nodeUUID string, set []Capability) (bool, error) {
	op := "set capabilities of node " + connector.Quote(nodeUUID)
	if !ident.IsUUID(nodeUUID) {
		return false, invalid(op, "node: "+connector.Quote(nodeUUID)+" is not a UUID")
	}
	for _, s := range set {
		if s.Key == "" || strings.ContainsAny(s.Key+s.Value, ",:\x00\n\r") {
			return false, invalid(op, fmt.Sprintf("capability: %s:%s holds ',' or ':' or is empty", connector.Quote(s.Key), connector.Quote(s.Value)))
		}
	}
	n, err := ironicapi.GetNode(ctx, client, nodeUUID).Extract()
	if err != nil {
		return false, err
	}
	value, changed, err := mergeCapabilities(n.Properties["capabilities"], set)
	if err != nil {
		return false, invalid(op, "stored capabilities: "+err.Error())
	}
	if !changed {
		return false, nil
	}
	patch := nodes.UpdateOpts{nodes.UpdateOperation{Op: nodes.AddOp, Path: "/properties/capabilities", Value: value}}
	if err := ironicapi.UpdateNode(ctx, client, nodeUUID, patch).Err; err != nil {
		return false, err
	}
	return true, nil
}

// mergeCapabilities returns the stored capabilities (a string or a JSON
// object) with set applied, in the same form.
func mergeCapabilities(cur any, set []Capability) (value any, changed bool, err error) {
	if m, ok := cur.(map[string]any); ok {
		m = maps.Clone(m)
		if m == nil {
			m = map[string]any{}
		}
		for _, s := range set {
			if old, ok := m[s.Key]; !ok || fmt.Sprint(old) != s.Value {
				m[s.Key], changed = s.Value, true
			}
		}
		return m, changed, nil
	}
	str, _ := cur.(string)
	caps, err := ParseCapabilities(str)
	if err != nil {
		return nil, false, err
	}
next:
	for _, s := range set {
		for i := range caps {
			if caps[i].Key == s.Key {
				if caps[i].Value != s.Value {
					caps[i].Value, changed = s.Value, true
				}
				continue next
			}
		}
		caps, changed = append(caps, s), true
	}
	return FormatCapabilities(caps), changed, nil
}
