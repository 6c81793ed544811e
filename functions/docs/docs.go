// Package docs serves the OpenAPI document.
package docs

import (
	"net/http"
	"strconv"

	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/openapi"
	"github.com/acme/codescan-api/shared/routes"
)

// New returns the group's http.Handler.
func New(d config.Deps) http.Handler {
	return d.Server.Group(routes.GroupDocs, map[string]httpapi.HandlerFunc{
		"GET /openapi.json": serve,
	})
}

func serve(w http.ResponseWriter, _ *http.Request) error {
	doc := openapi.JSON()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(doc)
	return err
}
