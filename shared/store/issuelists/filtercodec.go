package issuelists

import (
	"encoding/json"
	"fmt"
)

// EncodeFilter is f as an export or a bulk operation keeps it (its
// query), so the worker reads exactly what the request resolved.
func EncodeFilter(f IssueFilter) (string, error) {
	b, err := json.Marshal(f)
	return string(b), err
}

// DecodeFilter reads a kept query back.
func DecodeFilter(s string) (IssueFilter, error) {
	var f IssueFilter
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		return f, fmt.Errorf("export query: %w", err)
	}
	return f, nil
}
