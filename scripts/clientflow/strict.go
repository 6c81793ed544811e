package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// decode parses a response the way the real client does: a member whose
// field is tagged client:"required" must be present and not null (Rust's
// serde fails the whole parse otherwise), and every value must have the
// field's JSON type (a number where the client reads a string fails).
func decode(data []byte, v any) error {
	if err := required(data, reflect.TypeOf(v).Elem(), "$"); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

func required(data []byte, t reflect.Type, at string) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return nil // optional values; required ones are checked by the parent
	}
	if t == reflect.TypeFor[json.RawMessage]() {
		return nil // any JSON
	}
	switch t.Kind() {
	case reflect.Pointer:
		return required(data, t.Elem(), at)
	case reflect.Slice:
		var items []json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		for n, it := range items {
			if err := required(it, t.Elem(), fmt.Sprintf("%s[%d]", at, n)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		var members map[string]json.RawMessage
		if err := json.Unmarshal(data, &members); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			raw, ok := members[name]
			if f.Tag.Get("client") == "required" && (!ok || string(bytes.TrimSpace(raw)) == "null") {
				return fmt.Errorf("%s.%s: missing required field", at, name)
			}
			if ok {
				if err := required(raw, f.Type, at+"."+name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// The shapes the command-line client reads (CLIENT-ROUTES.md), with its
// required and optional members.

type verifyResponse map[string]string // api.rs: HashMap<String,String>

type projectsResponse struct {
	Projects []struct {
		Name    string  `json:"name" client:"required"`
		RepoURL *string `json:"repo_url"`
	} `json:"projects" client:"required"`
	TotalPages *uint32 `json:"total_pages"`
}

type scanError struct {
	ScanType *string `json:"scan_type"`
	Level    *string `json:"level"`
	Location *string `json:"location"`
	Message  *string `json:"message"`
}

type scanResponse struct {
	ID            string          `json:"id" client:"required"`
	Project       string          `json:"project" client:"required"`
	Repo          *string         `json:"repo"`
	Branch        *string         `json:"branch"`
	Status        string          `json:"status" client:"required"`
	Engine        string          `json:"engine" client:"required"`
	CreatedAt     string          `json:"created_at" client:"required"`
	GitSHA        *string         `json:"git_sha"`
	WorktreeDirty *bool           `json:"worktree_dirty"`
	PullRequestID *string         `json:"pull_request_id"`
	Metadata      json.RawMessage `json:"metadata"`
	FailedReason  *string         `json:"failed_reason"`
	ScanErrors    []scanError     `json:"scan_errors"`
}

type scansResponse struct {
	Status     string         `json:"status" client:"required"`
	Page       *uint32        `json:"page"`
	TotalPages *uint32        `json:"total_pages"`
	Scans      []scanResponse `json:"scans"`
}

type issue struct {
	ID             string  `json:"id" client:"required"`
	ScanID         *string `json:"scan_id"`
	Status         string  `json:"status" client:"required"`
	Urgency        string  `json:"urgency" client:"required"`
	CreatedAt      string  `json:"created_at" client:"required"`
	Classification struct {
		ID          string  `json:"id" client:"required"`
		Name        string  `json:"name" client:"required"`
		Description *string `json:"description"`
	} `json:"classification" client:"required"`
	Location struct {
		File struct {
			Name     string `json:"name" client:"required"`
			Language string `json:"language" client:"required"`
			Path     string `json:"path" client:"required"`
		} `json:"file" client:"required"`
		LineNumber uint32 `json:"line_number" client:"required"`
		Project    struct {
			Name   string  `json:"name" client:"required"`
			Branch *string `json:"branch"`
			GitSHA *string `json:"git_sha"`
		} `json:"project" client:"required"`
	} `json:"location" client:"required"`
	Details *struct {
		Explanation *string `json:"explanation"`
	} `json:"details"`
	AutoTriage struct {
		FalsePositiveDetection struct {
			Status    string  `json:"status" client:"required"`
			Reasoning *string `json:"reasoning"`
		} `json:"false_positive_detection" client:"required"`
	} `json:"auto_triage" client:"required"`
}

type issuesResponse struct {
	Status      string  `json:"status" client:"required"`
	Issues      []issue `json:"issues" client:"required"` // get_all_issues: a missing list is an error
	Page        *uint32 `json:"page"`
	TotalPages  *uint32 `json:"total_pages"`
	TotalIssues *uint32 `json:"total_issues"`
}

type fullIssueResponse struct {
	Status string `json:"status" client:"required"`
	Issue  issue  `json:"issue" client:"required"`
}

type blockingResponse struct {
	Block          bool `json:"block" client:"required"`
	BlockingIssues []struct {
		ID               string   `json:"id" client:"required"`
		TriggeredByRules []string `json:"triggered_by_rules" client:"required"`
		TriggeredBySlugs []string `json:"triggered_by_slugs"`
	} `json:"blocking_issues" client:"required"`
	TotalPages uint32 `json:"total_pages" client:"required"`
	Stats      *struct {
		BlockedIssues uint32 `json:"blocked_issues"`
	} `json:"stats"`
	Status *string `json:"status"`
}

type uploadResponse struct {
	SASTScanID json.RawMessage `json:"sast_scan_id"`
	ProjectID  json.RawMessage `json:"project_id"`
}
