package osauth

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/secret"
)

// TestOptionsNeverPrintSecrets: options printed whole (a debug dump, an
// error built with %+v, JSON) read the same whatever the password, token
// and application credential secret are, so nothing in them tells a
// secret, even a one-letter one or one that is part of a flag name.
func TestOptionsNeverPrintSecrets(t *testing.T) {
	render := func(pw string) []string {
		o := Options{AuthURL: "http://ks/v3", Username: "u", Password: secret.New(pw), Token: secret.New(pw),
			AppCredSecret: secret.New(pw), ProjectName: "demo"}
		js, err := json.Marshal(o)
		require.NoError(t, err)
		return []string{fmt.Sprintf("%v", o), fmt.Sprintf("%+v", o), fmt.Sprintf("%#v", o), string(js)}
	}
	want := render("another-secret-entirely")
	for _, pw := range []string{"p", "os", "password", "auth-type", "demo", "pw-SECRET-long-enough"} {
		require.Equal(t, want, render(pw), pw)
	}
}
