// Package redact hides the secrets a storage URL may carry, for messages
// and logs.
package redact

import (
	"net/url"
	"strings"
)

// secretParams are parts of URL query parameter names whose values are
// never shown.
var secretParams = [...]string{"secret", "token", "password", "credential", "key", "signature"}

// URL returns raw with its user information and the values of
// secret-looking query parameters replaced by REDACTED. A string that does
// not parse as a URL is returned as "<unparsable URL>".
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	changed := false
	if u.User != nil {
		u.User = url.User("REDACTED")
		changed = true
	}
	q := u.Query()
	for k := range q {
		lk := strings.ToLower(k)
		for _, sp := range secretParams {
			if strings.Contains(lk, sp) {
				q.Set(k, "REDACTED")
				changed = true
				break
			}
		}
	}
	if !changed {
		return raw
	}
	u.RawQuery = q.Encode()
	return u.String()
}
