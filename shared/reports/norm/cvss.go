package norm

import (
	"strings"

	gocvss20 "github.com/pandatix/go-cvss/20"
	gocvss30 "github.com/pandatix/go-cvss/30"
	gocvss31 "github.com/pandatix/go-cvss/31"
	gocvss40 "github.com/pandatix/go-cvss/40"
)

// CVSSScore computes the base score of a CVSS vector (v2, v3.0, v3.1 or
// v4.0, as OSV and CycloneDX write them), or false when it is none.
func CVSSScore(vector string) (float64, bool) {
	v := strings.TrimSpace(vector)
	switch {
	case strings.HasPrefix(v, "CVSS:3.1/"):
		if c, err := gocvss31.ParseVector(v); err == nil {
			return c.BaseScore(), true
		}
	case strings.HasPrefix(v, "CVSS:3.0/"):
		if c, err := gocvss30.ParseVector(v); err == nil {
			return c.BaseScore(), true
		}
	case strings.HasPrefix(v, "CVSS:4.0/"):
		if c, err := gocvss40.ParseVector(v); err == nil {
			return c.Score(), true
		}
	case v != "":
		if c, err := gocvss20.ParseVector(strings.TrimPrefix(v, "CVSS:2.0/")); err == nil {
			return c.BaseScore(), true
		}
	}
	return 0, false
}
