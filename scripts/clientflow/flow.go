package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// client speaks to the API as the command-line client does: its headers,
// its unencoded upload queries, its polling.
type client struct {
	base string // .../api/v1
	key  string
	http *http.Client
	logf func(format string, args ...any)
	poll time.Duration // the client polls every 1 s (scan) and 2 s (gate)
}

// call sends one request and returns the status and body; a non-2xx is
// an error unless ok lists it.
func (c *client) call(ctx context.Context, method, path, contentType string, body []byte, ok ...int) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("SERVICE-TOKEN", c.key)
	req.Header.Set("SERVICE-SOURCE", "cli")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, err
	}
	if (res.StatusCode < 200 || res.StatusCode > 299) && !slices.Contains(ok, res.StatusCode) {
		return res.StatusCode, b, fmt.Errorf("%s %s: status %d: %s", method, path, res.StatusCode, b)
	}
	return res.StatusCode, b, nil
}

func (c *client) getJSON(ctx context.Context, path string, v any) error {
	_, b, err := c.call(ctx, "GET", path, "", nil)
	if err != nil {
		return err
	}
	if err := decode(b, v); err != nil {
		return fmt.Errorf("GET %s: the client would fail to parse %s: %w", path, b, err)
	}
	return nil
}

// report is a Semgrep-style SARIF log: one critical SQL injection and one
// high XSS in Python and JavaScript files.
const report = `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"Semgrep OSS","rules":[` +
	`{"id":"sqli","shortDescription":{"text":"Raw SQL from request data"},"properties":{"security-severity":"9.3","tags":["CWE-89"]}},` +
	`{"id":"xss","shortDescription":{"text":"Reflected XSS"},"properties":{"security-severity":"7.4","tags":["external/cwe/cwe-79"]}}]}},` +
	`"results":[` +
	`{"ruleId":"sqli","message":{"text":"tainted query"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"app/db.py"},"region":{"startLine":12}}}]},` +
	`{"ruleId":"xss","message":{"text":"tainted html"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"web/view.js"},"region":{"startLine":3}}}]}],` +
	`"versionControlProvenance":[{"repositoryUri":"https://github.com/Acme-Flow/%s","branch":"main","revisionId":"9fceb02d0ae598e95dc970b74767f19372d61af8"}]}]}`

// sources are the files the report flags, each finding's line (12 and 3)
// holding the flagged code.
var sources = map[string]string{
	"app/db.py":   strings.Repeat("\n", 11) + "cur.execute(\"SELECT * FROM users WHERE name = '%s'\" % name)\n",
	"web/view.js": "\n\nel.innerHTML = location.hash;\n",
}

// multipartFile is a multipart body whose part named file holds content,
// and its content type.
func multipartFile(name, content string) (string, []byte) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write([]byte(content))
	mw.Close()
	return mw.FormDataContentType(), body.Bytes()
}

// run replays the client's flows: upload with source files, git config and CI data,
// wait, list scans and issues, inspect an issue, --fail-on HI, the report
// formats, and --block-on with a rule that blocks and one that does not.
func (c *client) run(ctx context.Context) error {
	var v verifyResponse
	if err := c.getJSON(ctx, "/verify", &v); err != nil || v["status"] != "ok" {
		return fmt.Errorf("verify: %v %v", v, err)
	}
	suffix := strings.ToLower(rand.Text()[:8])
	project := "flow-" + suffix
	scanID, err := c.upload(ctx, uuidV4(), project)
	if err != nil {
		return err
	}
	name, err := c.checkWait(ctx, scanID, project)
	if err != nil {
		return err
	}
	issues, err := c.checkIssues(ctx, scanID, name)
	if err != nil {
		return err
	}
	if err := c.checkInspect(ctx, issues[0].ID); err != nil {
		return err
	}
	if err := c.checkReports(ctx, scanID); err != nil {
		return err
	}
	return c.checkGate(ctx, scanID, suffix)
}

// upload uploads as the client does and returns the scan's id: the source
// files the report names first (the client gives up when none is
// accepted), then the report, with the client's unencoded query, then the
// git config and the CI data.
func (c *client) upload(ctx context.Context, runID, project string) (string, error) {
	for path, content := range sources {
		ct, body := multipartFile(path, content)
		if _, _, err := c.call(ctx, "POST", "/code-upload?run_id="+runID+"&path="+path, ct, body); err != nil {
			return "", err
		}
	}
	q := fmt.Sprintf("/scan-upload?engine=sarif&run_id=%s&project=%s&ci=true&ci_platform=github", runID, project)
	_, b, err := c.call(ctx, "POST", q, "application/json", fmt.Appendf(nil, report, project))
	if err != nil {
		return "", err
	}
	var up uploadResponse
	if err := decode(b, &up); err != nil {
		return "", err
	}
	scanID, err := idOf(up.SASTScanID)
	if err != nil {
		return "", fmt.Errorf("scan-upload: sast_scan_id: %w (%s)", err, b)
	}
	c.logf("uploaded scan %s of %s", scanID, project)
	ct, config := multipartFile("config", fmt.Sprintf("[remote \"origin\"]\n\turl = git@github.com:Acme-Flow/%s.git\n", project))
	if _, _, err := c.call(ctx, "POST", "/git-config-upload?run_id="+runID, ct, config); err != nil {
		return "", err
	}
	ci := `{"GITHUB_ACTIONS":"true","GITHUB_REPOSITORY":"Acme-Flow/` + project + `","GITHUB_SHA":"9fceb02d0ae598e95dc970b74767f19372d61af8"}`
	if _, _, err := c.call(ctx, "POST", "/ci-data-upload?run_id="+runID+"&platform=github", "application/json", []byte(ci)); err != nil {
		return "", err
	}
	return scanID, nil
}

// checkWait waits as the client does: polls /scan/{id} until it completes
// (a failed scan ends the wait), then, as without a scan id, resolves the
// project and checks its latest scan is this one. It returns the project's
// name.
func (c *client) checkWait(ctx context.Context, scanID, project string) (string, error) {
	sc, err := c.wait(ctx, scanID)
	if err != nil {
		return "", err
	}
	if sc.Project != project {
		return "", fmt.Errorf("scan project %q, want %q", sc.Project, project)
	}
	name, err := c.resolveProject(ctx, "acme-flow/"+project)
	if err != nil {
		return "", err
	}
	var scans scansResponse
	if err := c.getJSON(ctx, "/scans?page=1&page_size=30&project="+url.QueryEscape(name), &scans); err != nil {
		return "", err
	}
	if len(scans.Scans) == 0 || scans.Scans[0].ID != scanID {
		return "", fmt.Errorf("latest scan of %s is not %s: %+v", name, scanID, scans.Scans)
	}
	return name, nil
}

// checkIssues checks the urgency table and --fail-on HI on the scan's
// issues, and that the project lists as many; it returns the scan's
// issues.
func (c *client) checkIssues(ctx context.Context, scanID, name string) ([]issue, error) {
	issues, err := c.allIssues(ctx, "/scan/"+scanID+"/issues?")
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, i := range issues {
		counts[i.Urgency]++
	}
	if counts["CR"] != 1 || counts["HI"] != 1 {
		return nil, fmt.Errorf("urgencies %v, want one CR and one HI", counts)
	}
	if !failOn("HI", counts) || failOn("CR", map[string]int{"HI": 1}) {
		return nil, errors.New("--fail-on HI must trip, CR on a HI-only scan must not")
	}
	c.logf("--fail-on HI trips: %v", counts)
	projectIssues, err := c.allIssues(ctx, "/issues?project="+url.QueryEscape(name)+"&")
	if err != nil {
		return nil, err
	}
	if len(projectIssues) != len(issues) {
		return nil, fmt.Errorf("project lists %d issues, scan %d", len(projectIssues), len(issues))
	}
	return issues, nil
}

// checkInspect inspects an issue as the client does, and (this service's
// addition) checks it shows its line of the file sent before the report.
func (c *client) checkInspect(ctx context.Context, id string) error {
	var full fullIssueResponse
	if err := c.getJSON(ctx, "/issue/"+id, &full); err != nil {
		return err
	}
	if full.Issue.ID != id {
		return fmt.Errorf("inspect: %s", full.Issue.ID)
	}
	var shown struct {
		Issue struct {
			Details struct {
				CodeSnippet *struct {
					Code string `json:"code"`
				} `json:"code_snippet"`
			} `json:"details"`
		} `json:"issue"`
	}
	if err := c.getJSON(ctx, "/issue/"+id, &shown); err != nil {
		return err
	}
	flagged := strings.TrimSpace(sources[full.Issue.Location.File.Path])
	if s := shown.Issue.Details.CodeSnippet; s == nil || !strings.Contains(s.Code, flagged) {
		return fmt.Errorf("inspect: code snippet %+v, want the line %q", s, flagged)
	}
	return nil
}

// checkReports fetches the scan's reports (HTML by default, SARIF,
// Markdown) and checks each shows the finding.
func (c *client) checkReports(ctx context.Context, scanID string) error {
	for _, f := range []string{"", "?format=sarif", "?format=markdown"} {
		_, b, err := c.call(ctx, "GET", "/scan/"+scanID+"/report"+f, "", nil)
		if err != nil {
			return err
		}
		if !bytes.Contains(b, []byte("CWE-89")) {
			return fmt.Errorf("report%s lacks the finding", f)
		}
	}
	return nil
}

// checkGate checks --block-on with one rule that blocks (critical) and one
// that does not, an unknown slug, and the blocked issues' pages.
func (c *client) checkGate(ctx context.Context, scanID, suffix string) error {
	blocks, passes := "flow-critical-"+suffix, "flow-java-"+suffix
	for slug, cond := range map[string]string{blocks: `{"min_urgency":"CR"}`, passes: `{"paths":["**/*.java"]}`} {
		rule := fmt.Sprintf(`{"slug":%q,"name":%q,"ci":true,"conditions":%s}`, slug, slug, cond)
		if _, _, err := c.call(ctx, "POST", "/blocking-rules", "application/json", []byte(rule)); err != nil {
			return err
		}
	}
	g, err := c.gate(ctx, scanID, blocks)
	if err != nil {
		return err
	}
	if !g.Block || g.Stats == nil || g.Stats.BlockedIssues != 1 || g.BlockingIssues[0].TriggeredBySlugs[0] != blocks {
		return fmt.Errorf("--block-on %s: %+v", blocks, g)
	}
	if g, err = c.gate(ctx, scanID, passes); err != nil || g.Block {
		return fmt.Errorf("--block-on %s: %+v %v", passes, g, err)
	}
	_, b, err := c.call(ctx, "GET", "/scan/"+scanID+"/check_blocking_rules?page=1&block_on=nope-"+suffix, "", nil, http.StatusBadRequest)
	if err != nil || !bytes.Contains(b, []byte(`"unknown_slugs":["nope-`+suffix+`"]`)) {
		return fmt.Errorf("unknown slug: %s %v", b, err)
	}
	if err := c.pageBlocked(ctx, scanID); err != nil {
		return err
	}
	c.logf("gate: %s blocks, %s passes", blocks, passes)
	return nil
}

// pageBlocked lists the blocked issues as list --issues --scan-id does:
// pages while block is true, until page == total_pages.
func (c *client) pageBlocked(ctx context.Context, scanID string) error {
	for page := 1; ; page++ {
		var l blockingResponse
		if err := c.getJSON(ctx, fmt.Sprintf("/scan/%s/check_blocking_rules?page=%d", scanID, page), &l); err != nil {
			return err
		}
		if !l.Block || int(l.TotalPages) == page {
			return nil
		}
		if page > 100 {
			return errors.New("the blocked-issue pages never end")
		}
	}
}

// wait polls a scan as `wait` does, until complete (an incomplete scan is
// an error).
func (c *client) wait(ctx context.Context, id string) (scanResponse, error) {
	for {
		var sc scanResponse
		if err := c.getJSON(ctx, "/scan/"+id, &sc); err != nil {
			return sc, err
		}
		switch strings.ToLower(strings.TrimSpace(sc.Status)) {
		case "complete", "completed":
			return sc, nil
		case "incomplete", "failed", "error", "cancelled", "canceled":
			return sc, fmt.Errorf("scan %s did not complete: %v", id, sc.FailedReason)
		}
		select {
		case <-ctx.Done():
			return sc, ctx.Err()
		case <-time.After(c.poll):
		}
	}
}

// resolveProject walks /projects as the client does and re-checks the
// repository path itself.
func (c *client) resolveProject(ctx context.Context, repoPath string) (string, error) {
	var found []string
	for page := 1; page <= 20; page++ {
		var l projectsResponse
		if err := c.getJSON(ctx, fmt.Sprintf("/projects?repo_url=%s&page=%d&page_size=50", url.QueryEscape(repoPath), page), &l); err != nil {
			return "", err
		}
		for _, p := range l.Projects {
			if p.RepoURL != nil && strings.HasSuffix(strings.ToLower(*p.RepoURL), "/"+repoPath) {
				found = append(found, p.Name)
			}
		}
		total := uint32(1)
		if l.TotalPages != nil {
			total = *l.TotalPages
		}
		if len(l.Projects) == 0 || uint32(page) >= total {
			break
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("projects for %s: %v", repoPath, found)
	}
	return found[0], nil
}

// allIssues pages an issue list as get_all_issues does.
func (c *client) allIssues(ctx context.Context, prefix string) ([]issue, error) {
	var out []issue
	for page := 1; ; page++ {
		var l issuesResponse
		if err := c.getJSON(ctx, fmt.Sprintf("%spage=%d&page_size=30", prefix, page), &l); err != nil {
			return nil, err
		}
		if l.Status != "ok" {
			return nil, fmt.Errorf("%s: status %q", prefix, l.Status)
		}
		out = append(out, l.Issues...)
		if len(l.Issues) == 0 || l.TotalPages == nil || uint32(page) >= *l.TotalPages {
			return out, nil
		}
	}
}

// gate polls check_blocking_rules with page=1 until its status is complete.
func (c *client) gate(ctx context.Context, scanID, slugs string) (blockingResponse, error) {
	for {
		var g blockingResponse
		if err := c.getJSON(ctx, "/scan/"+scanID+"/check_blocking_rules?page=1&block_on="+slugs, &g); err != nil {
			return g, err
		}
		if g.Status == nil || *g.Status == "complete" {
			return g, nil
		}
		select {
		case <-ctx.Done():
			return g, ctx.Err()
		case <-time.After(2 * c.poll):
		}
	}
}

// failOn is the client's --fail-on: a severity trips when any urgency at
// or above it was found.
func failOn(token string, counts map[string]int) bool {
	order := []string{"CR", "HI", "ME", "LO"}
	at := slices.Index(order, token)
	for _, u := range order[:at+1] {
		if counts[u] > 0 {
			return true
		}
	}
	return false
}

// idOf reads an id the client accepts as a string or an integer.
func idOf(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return s, nil
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", errors.New("neither a string nor an integer")
	}
	return strconv.FormatInt(n, 10), nil
}

// uuidV4 is a run id as the client makes one.
func uuidV4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
