package osv

import (
	"errors"
	"testing"

	"github.com/acme/codescan-api/shared/reports/internal/wellformed"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

// FuzzParse: any input gives findings that keep every promise, or one of
// the two typed errors; never a panic. Seeds are in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := Parse(data)
		if err != nil {
			var invalid *reporterr.Invalid
			var big *reporterr.TooLarge
			if !errors.As(err, &invalid) && !errors.As(err, &big) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if err := wellformed.Check(rep); err != nil {
			t.Fatal(err)
		}
	})
}
