package store

import "encoding/base64"

// Internals exposed to the external tests (which need testenv, which
// imports this package).
var (
	QueryPage = (*Store).queryPage
	Update    = (*Store).update
	PutItem   = (*Store).putItem
)

// For FuzzListPageTokens: the lists of queryPage with a token, and a token
// sealed for a list as an attacker can (the checksum is no secret).
var (
	TeamList        = teamList
	IntegrationList = integrationList
)

func SealPageToken(l List, data []byte) string {
	return base64.RawURLEncoding.EncodeToString(data) + "." + base64.RawURLEncoding.EncodeToString(tokenSum(l, data))
}
