package uploads

import (
	"strings"

	"github.com/acme/codescan-api/shared/httpapi"
)

// MaxCategoryLen bounds an upload's category (characters, all ASCII).
const MaxCategoryLen = 100

// Upload categories: a scan is the truth for its tool and category on its
// branch (docs/findings.md), so the jobs of a monorepo (a service per
// directory, or one per language) upload side by side without fixing each
// other's findings. The category is the `category` query parameter, else
// the report's own (SARIF runAutomationDetails.id up to its last "/", as
// GitHub code scanning reads it), else "" (the category of every scan
// before categories, and of the real client, which sends none).

// categoryOK is the charset of a category: letters, digits and
// "-_.:/@+=" (GitHub's categories look like "/language:go" or
// "services/api"); no space, quote or control character.
func categoryOK(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-_.:/@+=", c) >= 0
}

// normalCategory is a category as stored: without surrounding space or
// trailing "/" (GitHub's upload action writes the category "a/b" as the
// automation id "a/b/"), or a 400 naming category (from says where it
// came from).
func normalCategory(raw, from string) (string, error) {
	c := strings.TrimRight(strings.TrimSpace(raw), "/")
	if len(c) > MaxCategoryLen {
		return "", httpapi.UploadError(httpapi.KindInvalid, "category%s is longer than %d characters", from, MaxCategoryLen)
	}
	for i := 0; i < len(c); i++ {
		if !categoryOK(c[i]) {
			return "", httpapi.UploadError(httpapi.KindInvalid,
				"category%s may hold only letters, digits and - _ . : / @ + = (got %q)", from, c)
		}
	}
	return c, nil
}

// scanCategory is the category of an upload: the query parameter's when
// given, else the report's.
func scanCategory(p scanParams, reported string) (string, error) {
	if p.categorySet {
		return p.category, nil
	}
	return normalCategory(reported, " (the report's runAutomationDetails.id)")
}
