package trackerhost

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
)

// The excerpts load as valid OpenAPI, and they refuse what the vendors'
// descriptions refuse: an operation they do not have, and a body that
// breaks the schema.
func TestValidatorsRefuseWhatTheDescriptionsRefuse(t *testing.T) {
	gh, err := NewGitHubValidator()
	if err != nil {
		t.Fatal(err)
	}
	jira, err := NewJiraValidator()
	if err != nil {
		t.Fatal(err)
	}
	ok := httptest.NewRequest("POST", "/repos/o/r/issues", strings.NewReader(`{"title":"t","body":"b","labels":["x"]}`))
	ok.Header.Set("Content-Type", "application/json")
	if _, err := gh.Validate(ok, []byte(`{"title":"t","body":"b","labels":["x"]}`)); err != nil {
		t.Errorf("a valid issue create: %v", err)
	}
	bad := httptest.NewRequest("POST", "/repos/o/r/issues", nil)
	bad.Header.Set("Content-Type", "application/json")
	if _, err := gh.Validate(bad, []byte(`{"body":"no title"}`)); err == nil {
		t.Error("an issue without a title passed")
	}
	if _, err := gh.Validate(httptest.NewRequest("DELETE", "/repos/o/r/issues/1", nil), nil); !errors.Is(err, ErrNotDescribed) {
		t.Errorf("an undescribed operation: %v", err)
	}
	tr := httptest.NewRequest("POST", "/rest/api/3/issue/ABC-1/transitions", nil)
	tr.Header.Set("Content-Type", "application/json")
	if _, err := jira.Validate(tr, []byte(`{"transition":{"id":"31"}}`)); err != nil {
		t.Errorf("a valid transition: %v", err)
	}
	if _, err := jira.Validate(tr, []byte(`{"transition":"31"}`)); err == nil {
		t.Error("a transition that is not an object passed")
	}
	if _, err := jira.Validate(httptest.NewRequest("GET", "/rest/api/2/myself", nil), nil); !errors.Is(err, ErrNotDescribed) {
		t.Errorf("API v2: %v", err)
	}
}
