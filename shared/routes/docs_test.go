package routes_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/routes"
)

// docs/routes.md finds the code of every route in one step: each route of
// the table has its row, naming its group, its permission when it needs
// one, and a file that defines the handler (method or function) the row
// names.
func TestRoutesPageNamesEveryHandler(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, "docs", "routes.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(page), "\n") {
		if m := regexp.MustCompile("^\\| `([A-Z]+ [^`]+)` \\|").FindStringSubmatch(line); m != nil {
			rows[m[1]] = line
		}
	}
	handler := regexp.MustCompile("\\]\\(\\.\\./([^)]+\\.go)\\) `(\\w+)`")
	for _, r := range routes.Table {
		key := r.Method + " " + r.Path
		row, ok := rows[key]
		if !ok {
			t.Errorf("%s: no row in docs/routes.md", key)
			continue
		}
		cells := strings.Split(row, " | ")
		if len(cells) < 4 || cells[1] != r.Group {
			t.Errorf("%s: row names another group: %s", key, row)
		}
		if r.Access == routes.Permission && !strings.Contains(row, "`"+r.Permission+"`") {
			t.Errorf("%s: row does not name its permission %s", key, r.Permission)
		}
		m := handler.FindStringSubmatch(row)
		if m == nil {
			t.Errorf("%s: row names no handler", key)
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, m[1]))
		if err != nil || !regexp.MustCompile(`func (\([a-z]+ \*?[A-Za-z]+\) )?`+m[2]+`\(`).Match(src) {
			t.Errorf("%s: %s does not define %s (%v)", key, m[1], m[2], err)
		}
	}
}
