package secret

import "net/url"

// RedactURL is a URL fit for an error line: without the user information
// and the query, where credentials and tokens travel.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<url>"
	}
	u.User, u.RawQuery = nil, ""
	return u.String()
}
