package uploads_test

import (
	"strings"
	"testing"

	"github.com/acme/codescan-api/functions/uploads"
	"github.com/acme/codescan-api/internal/testenv"
)

// A configuration the group cannot serve with is an error to end the
// process with (config.Must), never a panic: a pending quota outside its
// range in the environment, no report bucket, a quota below the largest
// report.
func TestConfigurationErrors(t *testing.T) {
	env := testenv.New(t)
	t.Setenv(uploads.EnvPendingQuota, "1")
	if h, err := uploads.FromEnv(env.Deps); err == nil || h != nil || !strings.Contains(err.Error(), uploads.EnvPendingQuota) {
		t.Fatalf("a quota below the largest report in the environment: %v %v", h, err)
	}
	t.Setenv(uploads.EnvPendingQuota, "")
	noBucket := env.Deps
	noBucket.Reports = nil
	if _, err := uploads.FromEnv(noBucket); err == nil || !strings.Contains(err.Error(), "no report bucket") {
		t.Fatalf("no report bucket: %v", err)
	}
	if _, err := uploads.Build(env.Deps, uploads.Options{PendingQuota: uploads.MaxReportBytes - 1}); err == nil {
		t.Fatal("a quota below the largest report: no error")
	}
	if h, err := uploads.FromEnv(env.Deps); err != nil || h == nil {
		t.Fatalf("the default configuration: %v", err)
	}
}
