// Command gen writes openapi.json, the document assembled from the YAML
// sources, in the current directory (go generate runs it in shared/openapi).
package main

import (
	"fmt"
	"os"

	"github.com/acme/codescan-api/shared/openapi/internal/assemble"
)

func main() {
	doc, err := assemble.Document(os.DirFS("."))
	if err == nil {
		err = os.WriteFile("openapi.json", doc, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapi gen:", err)
		os.Exit(1)
	}
}
