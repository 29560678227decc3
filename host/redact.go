package host

import (
	"sort"
	"strings"
	"sync"

	"github.com/brick-storage/brick/secret"
)

// Mask replaces every secret in log lines, errors and output.
const Mask = secret.Mask

// Redactor remembers secrets as they become known (a CHAP password parsed
// from connection info, a token from auth) and masks them in any text.
// One Redactor is shared by the runner and the logger of a process, so a
// secret registered once is hidden everywhere. Safe for concurrent use.
type Redactor struct {
	mu      sync.RWMutex
	secrets []string // longest first, so a secret containing another is masked whole
}

// NewRedactor returns a Redactor that masks the given secrets.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add registers secrets; empty strings are ignored.
func (r *Redactor) Add(secrets ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range secrets {
		if s == "" || contains(r.secrets, s) {
			continue
		}
		r.secrets = append(r.secrets, s)
	}
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
}

// AddValues registers typed secrets (passwords, tokens, keys held as
// secret.Value) so their raw text is masked wherever it turns up anyway,
// e.g. echoed back inside a server's error body.
func (r *Redactor) AddValues(vs ...secret.Value) {
	for _, v := range vs {
		r.Add(v.Reveal())
	}
}

// Redact returns s with every registered secret and every extra secret
// masked. A long secret (a token, a key, a generated CHAP password) is
// masked wherever it appears; a short one only where it stands as a whole
// token (not inside a word, a flag name or a longer value): masking every
// "p" of a password "p" would shred "--os-password" and show by the gaps
// what the secret is.
func (r *Redactor) Redact(s string, extra ...string) string {
	for _, e := range extra {
		s = maskSecret(s, e)
	}
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, secret := range r.secrets {
		s = maskSecret(s, secret)
	}
	return s
}

// longSecret is the length from which a secret is masked anywhere: a
// string this long does not turn up in a message by chance.
const longSecret = 12

func maskSecret(s, secret string) string {
	switch {
	case secret == "" || !strings.Contains(s, secret):
		return s
	case s == secret:
		return Mask
	case len(secret) >= longSecret:
		return strings.ReplaceAll(s, secret, Mask)
	}
	var b strings.Builder
	done := 0 // s[:done] is written
	for from := 0; ; {
		i := strings.Index(s[from:], secret)
		if i < 0 {
			break
		}
		i += from
		j := i + len(secret)
		if (i == 0 || !wordByte(s[i-1])) && (j == len(s) || !wordByte(s[j])) {
			b.WriteString(s[done:i])
			b.WriteString(Mask)
			done = j
		}
		from = j
	}
	b.WriteString(s[done:])
	return b.String()
}

// wordByte: a byte that continues a word, flag name or dotted name
// (non-ASCII bytes are parts of letters).
func wordByte(c byte) bool {
	return c >= 0x80 || c == '_' || c == '-' || c == '.' ||
		('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// RedactArgs masks secrets in each element of argv, returning a new slice.
func (r *Redactor) RedactArgs(argv []string, extra ...string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = r.Redact(a, extra...)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
