package store

// Internals exposed to the external tests (which need testenv, which
// imports this package).
var (
	QueryPage = (*Store).queryPage
	Update    = (*Store).update
	PutItem   = (*Store).putItem
)
