package osauth

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// knownKeys are the keys brick reads at each level of a clouds.yaml entry.
var (
	knownCloudKeys = yamlKeys(reflect.TypeOf(cloud{}))
	knownAuthKeys  = yamlKeys(reflect.TypeOf(cloudAuth{}))
)

func yamlKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// misspelt lists the keys of an entry (and of its auth section) that look
// like a key brick reads but are not one: `auht:` for `auth:`, so a
// typo is named instead of reported as "no credentials".
func misspelt(entry *yaml.Node) []string {
	out := nearMisses(entry, knownCloudKeys, "")
	if i := keyIndex(entry, "auth"); entry.Kind == yaml.MappingNode && i >= 0 {
		out = append(out, nearMisses(entry.Content[i+1], knownAuthKeys, "auth.")...)
	}
	return out
}

func nearMisses(m *yaml.Node, known []string, prefix string) []string {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	var out []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i].Value
		if slices.Contains(known, k) {
			continue
		}
		if near, ok := closest(k, known); ok {
			out = append(out, fmt.Sprintf("%s%s (%s%s?)", prefix, strconv.Quote(k), prefix, near))
		}
	}
	return out
}

// closest is the candidate within edit distance 2 of s (1 for words of
// four letters or fewer), if any.
func closest(s string, candidates []string) (string, bool) {
	limit := 2
	if len(s) <= 4 {
		limit = 1
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), c); d < bestD {
			best, bestD = c, d
		}
	}
	return best, best != ""
}

// editDistance is the Damerau-Levenshtein (optimal string alignment)
// distance: a swapped pair of letters ("auht") counts as one edit.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// unknownCloud says which clouds the file has, and the closest name.
func unknownCloud(name, path string, have []string) error {
	slices.Sort(have)
	var more string
	switch near, ok := closest(name, have); {
	case len(have) == 0:
		more = " (it defines no clouds)"
	case ok:
		more = fmt.Sprintf(" (did you mean %q? it has: %s)", near, strings.Join(have, ", "))
	default:
		more = " (it has: " + strings.Join(have, ", ") + ")"
	}
	return fmt.Errorf("%w: cloud %q not found in %s%s", ErrConfig, name, path, more)
}
