package host

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/secret"
)

// TestLogMasksByKey: an attribute named like a credential is masked
// whatever its value, even one no Redactor has seen (a password that is a
// common word, one letter, or part of a flag name); a typed secret is
// masked under any name; other attributes pass unchanged.
func TestLogMasksByKey(t *testing.T) {
	for _, pw := range []string{"p", "password", "os", "auth"} {
		var out bytes.Buffer
		log := slog.New(NewRedactingHandler(slog.NewTextHandler(&out, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}}), NewRedactor()))
		log.Info("login --os-password given",
			"auth_password", pw, "keyring", "[client.x]\n key = "+pw, "secret", pw, "token", pw,
			"node_key", pw, "secret_uuid", "457eb676", "flag", "--os-auth-type",
			"typed", secret.New(pw), slog.Group("chap", "password", pw, "username", "alice"))
		require.Equal(t, `level=INFO msg="login --os-password given" auth_password=*** keyring=*** secret=*** token=*** node_key=*** `+
			`secret_uuid=457eb676 flag=--os-auth-type typed=*** chap.password=*** chap.username=alice`+"\n", out.String(), "password %q", pw)
	}
}
