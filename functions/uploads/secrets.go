package uploads

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"regexp"
	"strings"
)

// masked replaces every value the CI metadata must not keep.
const masked = "[masked]"

// errNotObject is a CI metadata body that is not one JSON object.
var errNotObject = errors.New("not a JSON object")

// maskCIData parses a JSON object and returns it re-encoded with secrets
// masked (see secretName and secretValue), at any depth. Numbers keep their
// text.
func maskCIData(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errNotObject
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errNotObject
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errNotObject
	}
	return json.Marshal(maskValue(obj))
}

func maskValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if secretName(k) {
				v[k] = masked
			} else {
				v[k] = maskValue(e)
			}
		}
	case []any:
		for i, e := range v {
			v[i] = maskValue(e)
		}
	case string:
		if secretValue(v) {
			return masked
		}
	}
	return v
}

// secretName: a variable is a secret when its name, upper-cased, contains
// TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL, PRIVATE or
// COOKIE, or ends in KEY or AUTH (GITHUB_TOKEN, ACTIONS_RUNTIME_TOKEN,
// AWS_SECRET_ACCESS_KEY, NPM_AUTH, apiKey, DB_PASSWORD, ...). Masking a
// harmless variable costs little; keeping a secret costs a lot.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "PRIVATE", "COOKIE"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return strings.HasSuffix(n, "KEY") || strings.HasSuffix(n, "AUTH")
}

// credentialShapes are values that are credentials whatever their name:
// GitHub tokens, AWS access key ids, Slack tokens, JWTs, PEM private keys.
var credentialShapes = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|(?:AKIA|ASIA)[A-Z0-9]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.)|-----BEGIN [A-Z ]*PRIVATE KEY-----`)

// secretValue reports a value shaped like a credential, or a URL with user
// information (`https://user:token@host/...`, `https://<token>@host/...`).
func secretValue(v string) bool {
	if credentialShapes.MatchString(v) {
		return true
	}
	if !strings.Contains(v, "://") {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(v))
	return err == nil && u.User != nil
}
