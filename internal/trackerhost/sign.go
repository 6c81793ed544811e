package trackerhost

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// Sign is the signature a tracker sends with a webhook body: "sha256=" and
// the hex HMAC-SHA256 of the body with the secret (GitHub's
// X-Hub-Signature-256, Jira Cloud's X-Hub-Signature).
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
