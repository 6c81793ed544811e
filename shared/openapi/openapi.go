// Package openapi serves the service's OpenAPI 3.1 document. Its sources
// are base.yaml and one fragment per endpoint group (groups/<group>.yaml);
// go generate assembles them (internal/assemble) into openapi.json, which
// is embedded, so serving the document parses nothing. A test fails when
// openapi.json is older than its sources: after editing the YAML, run
// go generate ./shared/openapi.
package openapi

import _ "embed"

//go:generate go run ./internal/gen

//go:embed openapi.json
var doc []byte

// JSON returns the document. Callers must not modify it.
func JSON() []byte { return doc }
