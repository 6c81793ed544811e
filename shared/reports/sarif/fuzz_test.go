package sarif

import (
	"testing"

	"github.com/acme/codescan-api/shared/reports/internal/wellformed"
)

func FuzzParse(f *testing.F) { wellformed.Fuzz(f, Parse) }
