package ironicapi

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzDecodeErrorBody(f *testing.F) {
	for _, s := range []string{body409Conn, body409Boot, body400PowOn, body404Bare, body406Old, "", "null", `{"error_message": 1}`, `{"error_message": "{\"faultstring\": null}"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, _ := DecodeErrorBody(body)
		if len(msg) > 303 {
			t.Fatalf("message of %d bytes", len(msg))
		}
		if strings.ContainsAny(msg, "\n\r\x00") {
			t.Fatalf("control characters in %q", msg)
		}
		if utf8.ValidString(string(body)) && !utf8.ValidString(msg) {
			t.Fatalf("truncation broke UTF-8: %q", msg)
		}
	})
}

func FuzzNextURL(f *testing.F) {
	f.Add("http://ironic/v1/volume/connectors?node=n&limit=2", "http://x/v1/volume/connectors?limit=2&marker=m")
	f.Add("http://ironic/v1/nodes/u/volume/targets", "::bad")
	f.Add("http://ironic/v1/volume/targets?marker=m", "/v1/volume/targets?marker=m")
	f.Fuzz(func(t *testing.T, cur, next string) {
		cu, err := url.Parse(cur)
		if err != nil {
			return
		}
		got, err := nextURL(*cu, next)
		if err != nil {
			return
		}
		gu, err := url.Parse(got)
		if err != nil {
			t.Fatalf("unparsable next URL %q", got)
		}
		if gu.Path != cu.Path || gu.Host != cu.Host {
			t.Fatalf("path or host changed: %q -> %q", cur, got)
		}
		cq, gq := cu.Query(), gu.Query()
		for k, v := range cq {
			if k != "marker" && strings.Join(gq[k], ",") != strings.Join(v, ",") {
				t.Fatalf("filter %s lost: %q -> %q", k, cur, got)
			}
		}
		if gq.Get("marker") == "" || gq.Get("marker") == cq.Get("marker") {
			t.Fatalf("marker not advanced: %q -> %q", cur, got)
		}
	})
}

func FuzzNormalizeConnectorID(f *testing.F) {
	for _, s := range [][2]string{{"iqn", "iqn.2004-10.com.example:a"}, {"ip", "::1"}, {"mac", "52:54:00:ab:cd:ef"}, {"wwpn", "0x2100000000000001"}, {"port", "3b6d0e34-0b0c-4e3f-9a6a-111111111111"}, {"wwnn", "-1"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, typ, id string) {
		got, err := NormalizeConnectorID(typ, id)
		if err != nil {
			return
		}
		if got == "" || strings.HasPrefix(got, "-") || strings.ContainsAny(got, "\x00\n\r /?#") && typ != ConnectorIQN {
			t.Fatalf("%s %q normalized to %q", typ, id, got)
		}
		again, err := NormalizeConnectorID(typ, got)
		if err != nil || again != got {
			t.Fatalf("not idempotent: %s %q -> %q -> %q (%v)", typ, id, got, again, err)
		}
	})
}

// FuzzQuote: what a message quotes of an identifier is valid UTF-8, one
// line and short, whatever the server or the user gave.
func FuzzQuote(f *testing.F) {
	f.Add("x" + strings.Repeat("é", 60)) // byte 80 is inside a rune
	f.Add("node\nname")
	f.Fuzz(func(t *testing.T, s string) {
		q := quote(s)
		if utf8.ValidString(s) && !utf8.ValidString(q) {
			t.Fatalf("quote(%q) = %q is not valid UTF-8", s, q)
		}
		if strings.ContainsAny(q, "\n\r") || len(q) > 4*80+8 {
			t.Fatalf("quote(%q) = %q", s, q)
		}
	})
}
