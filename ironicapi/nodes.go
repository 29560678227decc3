package ironicapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/brick-storage/brick/ident"
	"github.com/gophercloud/gophercloud/v2"
)

// Power states as Ironic reports them; a node whose power was never set
// has none ("").
const (
	PowerOff = "power off"
	PowerOn  = "power on"
)

// Node is the part of an Ironic node brick uses.
type Node struct {
	UUID             string         `json:"uuid"`
	Name             string         `json:"name"`
	PowerState       string         `json:"power_state"`
	TargetPowerState string         `json:"target_power_state"`
	ProvisionState   string         `json:"provision_state"`
	Properties       map[string]any `json:"properties"`
}

// Display is the node's name, or its UUID when it has none.
func (n Node) Display() string {
	if n.Name != "" {
		return n.Name
	}
	return n.UUID
}

// nodeFields are fields every Ironic >= 1.32 knows (newer ones 400 there).
const nodeFields = "uuid,name,power_state,target_power_state,provision_state,properties"

// NodeResult is the answer to GetNode.
type NodeResult struct{ gophercloud.Result }

// Extract returns the node.
func (r NodeResult) Extract() (*Node, error) {
	var n Node
	if err := r.ExtractIntoStructPtr(&n, ""); err != nil {
		return nil, err
	}
	return &n, nil
}

// GetNode fetches a node by name or UUID.
func GetNode(ctx context.Context, client *gophercloud.ServiceClient, nodeRef string) (r NodeResult) {
	c := call{op: "get", resource: "node", ident: nodeRef}
	if !ValidNodeIdent(nodeRef) {
		r.Err = invalid(c.String(), "node", "%s is not a node name or UUID", quote(nodeRef))
		return r
	}
	resp, err := volumeClient(client).Get(ctx, nodeURL(client, nodeRef)+"?fields="+nodeFields, &r.Body, &gophercloud.RequestOpts{OkCodes: []int{200}})
	_, r.Header, r.Err = gophercloud.ParseResponse(resp, err)
	r.Err = convert(c, r.Err)
	return r
}

// ResolveNode returns the UUID of the node named or identified by nodeRef.
// Node-scoped URLs and request bodies need the UUID: Ironic answers names
// there with 404 or 400.
func ResolveNode(ctx context.Context, client *gophercloud.ServiceClient, nodeRef string) (string, error) {
	n, err := GetNode(ctx, client, nodeRef).Extract()
	if err != nil {
		return "", err
	}
	if !ident.IsUUID(n.UUID) {
		return "", fmt.Errorf("ironic get node %s: answer has no node UUID", quote(nodeRef))
	}
	return n.UUID, nil
}

// SetPowerState asks Ironic to change a node's power state ("power off",
// "power on") and returns once Ironic accepted the request (202); the
// change itself is asynchronous.
func SetPowerState(ctx context.Context, client *gophercloud.ServiceClient, nodeUUID, target string) error {
	c := call{op: "set power state of", resource: "node", ident: nodeUUID}
	if !ident.IsUUID(nodeUUID) {
		return invalid(c.String(), "node", "%s is not a UUID", quote(nodeUUID))
	}
	if target != PowerOff && target != PowerOn {
		return invalid(c.String(), "target", "%s is not %q or %q", quote(target), PowerOff, PowerOn)
	}
	_, err := volumeClient(client).Put(ctx, v1URL(client, "nodes", nodeUUID, "states", "power"),
		map[string]any{"target": target}, nil, &gophercloud.RequestOpts{OkCodes: []int{202}})
	return convert(c, err)
}

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
		if k == "" || strings.ContainsFunc(k, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, fmt.Errorf("capability %s has no usable key", quote(part))
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
	c := call{op: "set capabilities of", resource: "node", ident: nodeUUID}
	if !ident.IsUUID(nodeUUID) {
		return false, invalid(c.String(), "node", "%s is not a UUID", quote(nodeUUID))
	}
	for _, s := range set {
		if s.Key == "" || strings.ContainsAny(s.Key+s.Value, ",:\x00\n\r") {
			return false, invalid(c.String(), "capability", "%s:%s holds ',' or ':' or is empty", quote(s.Key), quote(s.Value))
		}
	}
	n, err := GetNode(ctx, client, nodeUUID).Extract()
	if err != nil {
		return false, err
	}
	var value any
	changed := false
	switch cur := n.Properties["capabilities"].(type) {
	case map[string]any:
		m := make(map[string]any, len(cur)+len(set))
		for k, v := range cur {
			m[k] = v
		}
		for _, s := range set {
			if old, ok := m[s.Key]; !ok || fmt.Sprint(old) != s.Value {
				m[s.Key], changed = s.Value, true
			}
		}
		value = m
	default:
		str, _ := cur.(string)
		caps, err := ParseCapabilities(str)
		if err != nil {
			return false, &Error{Op: c.String(), Message: "stored capabilities: " + err.Error(), Kind: ErrInvalid}
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
		value = FormatCapabilities(caps)
	}
	if !changed {
		return false, nil
	}
	body := []map[string]any{{"op": "add", "path": "/properties/capabilities", "value": value}}
	_, err = volumeClient(client).Patch(ctx, nodeURL(client, nodeUUID), body, nil, &gophercloud.RequestOpts{OkCodes: []int{200}})
	if err != nil {
		return false, convert(c, err)
	}
	return true, nil
}
