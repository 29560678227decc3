package osauth

import "testing"

// FuzzParseCloud feeds arbitrary clouds.yaml contents to the parser and
// the secure.yaml overlay: no panic (a YAML bomb or a wrong type is an error, not a crash).
func FuzzParseCloud(f *testing.F) {
	f.Add([]byte("clouds:\n  c:\n    auth:\n      auth_url: https://k/v3\n      password: pw\n    region_name: R\n    verify: false\n    cacert: /ca.pem\n"), "c")
	f.Add([]byte("clouds: [1, 2]\n"), "c")
	f.Add([]byte("a: &a [*a, *a]\n"), "")
	f.Add([]byte("clouds:\n  c:\n    verify: \"maybe\"\n    auth: 7\n"), "c")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		if len(data) > 1<<16 {
			return
		}
		_, _, _ = parseCloud(data, name)
		base, ok, err := findCloud(data, name)
		if err == nil && ok {
			over, _, _ := findCloud(data, name)
			overlay(&base, &over)
			_, _ = decodeCloud(&base)
		}
	})
}
