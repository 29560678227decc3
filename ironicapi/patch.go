package ironicapi

import (
	"errors"
	"fmt"
	"strings"

	"github.com/brick-storage/brick/ident"
)

// PatchOp is one JSON-patch (RFC 6902) operation on a connector or target.
type PatchOp struct {
	Op    string // "add", "replace" or "remove"
	Path  string // "/extra/KEY", "/properties/KEY", "/boot_index", ...
	Value any    // ignored for "remove"
}

// Replace sets path to value.
func Replace(path string, value any) PatchOp { return PatchOp{Op: "replace", Path: path, Value: value} }

// Add sets path to value, creating it.
func Add(path string, value any) PatchOp { return PatchOp{Op: "add", Path: path, Value: value} }

// Remove deletes path.
func Remove(path string) PatchOp { return PatchOp{Op: "remove", Path: path} }

// ExtraPath is the patch path of an extra key. Ironic allows only letters,
// digits, '_' and '-' in keys it patches; others are refused when the
// patch is built.
func ExtraPath(key string) string { return patchPath("/extra", key) }

// PropertyPath is the patch path of a target property key.
func PropertyPath(key string) string { return patchPath("/properties", key) }

func patchBody(ops []PatchOp) ([]map[string]any, error) {
	if len(ops) == 0 {
		return nil, fmt.Errorf("nothing to change")
	}
	out := make([]map[string]any, len(ops))
	for i, op := range ops {
		switch op.Op {
		case "add", "replace":
			out[i] = map[string]any{"op": op.Op, "path": op.Path, "value": op.Value}
		case "remove":
			out[i] = map[string]any{"op": op.Op, "path": op.Path}
		default:
			return nil, fmt.Errorf("patch %d: op %s is not add, replace or remove", i, quote(op.Op))
		}
		if !pathRE().MatchString(op.Path) {
			return nil, fmt.Errorf("patch %d: path %s: keys may hold only letters, digits, '_' and '-'", i, quote(op.Path))
		}
	}
	return out, nil
}

// checkKeyPath checks that /extra/KEY or /properties/KEY names one key
// Ironic can patch.
func checkKeyPath(path string) error {
	_, key, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if !keyRE().MatchString(key) {
		return fmt.Errorf("path %s: keys may hold only letters, digits, '_' and '-'", quote(path))
	}
	return nil
}

// checkNodeUUIDOp: a connector or target moves to another node by UUID
// and cannot lose its node.
func checkNodeUUIDOp(op PatchOp) error {
	if s, _ := op.Value.(string); op.Op == "remove" || !ident.IsUUID(s) {
		return errors.New("node_uuid must be replaced by a node UUID")
	}
	return nil
}
