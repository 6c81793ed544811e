package recount

import (
	"context"
	"fmt"
	"maps"

	storepage "github.com/acme/codescan-api/shared/store/page"
	storequality "github.com/acme/codescan-api/shared/store/quality"
	storesca "github.com/acme/codescan-api/shared/store/sca"
	storescans "github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// checkLists recounts the totals of the quality and SCA lists, kept on
// write (a project's findings, the company's SCA findings, a scan's SCA
// findings and its directory of quality classifications), from the
// findings themselves.
func checkLists(ctx context.Context, st Store, companyID int64) error {
	classes := map[string]map[string]int{} // scan -> classification name -> findings
	quality, sca := map[int64]int{}, map[int64]int{}
	if err := st.Quality.EachQualityIssue(ctx, companyID, func(q storequality.Issue) error {
		if classes[q.ScanID] == nil {
			classes[q.ScanID] = map[string]int{}
		}
		classes[q.ScanID][q.Classification.Name]++
		quality[q.ProjectID]++
		return nil
	}); err != nil {
		return err
	}
	if err := st.SCA.EachSCAIssue(ctx, companyID, func(i storesca.Issue) error {
		sca[i.ProjectID]++
		sca[0]++
		return nil
	}); err != nil {
		return err
	}
	projects, err := st.Catalog.AllProjects(ctx, companyID)
	if err != nil {
		return err
	}
	for _, p := range append(projects, schema.Project{}) {
		if p.ID != 0 {
			got, err := st.Quality.ListProjectQualityIssues(ctx, companyID, p.ID, storepage.Request{Limit: 1})
			if err != nil {
				return err
			}
			if got := int(got.Count()); got != quality[p.ID] {
				return fmt.Errorf("project %d: %d quality findings counted, %d stored", p.ID, got, quality[p.ID])
			}
		}
		got, err := st.SCA.ListSCAIssues(ctx, companyID, p.ID, storepage.Request{Limit: 1})
		if err != nil {
			return err
		}
		if got := int(got.Count()); got != sca[p.ID] {
			return fmt.Errorf("project %d (0: the company): %d SCA findings counted, %d stored", p.ID, got, sca[p.ID])
		}
	}
	scans := map[string]bool{}
	for scan := range classes {
		scans[scan] = true
	}
	for token := ""; ; {
		page, err := st.Scans.ListScans(ctx, companyID, storescans.ScanQuery{}, storepage.Request{Limit: 100, Token: token})
		if err != nil {
			return err
		}
		for _, sc := range page.Items {
			scans[sc.ID] = true
			if err := checkScanSCA(ctx, st, companyID, sc.ID); err != nil {
				return err
			}
		}
		if token = page.Next; token == "" {
			break
		}
	}
	for scan := range scans {
		dir, err := st.Quality.QualityClasses(ctx, companyID, scan)
		if err != nil {
			return err
		}
		got := map[string]int{}
		for _, c := range dir {
			got[c.Name] = c.Count
		}
		if !maps.Equal(got, classes[scan]) {
			return fmt.Errorf("scan %s: quality classifications counted %v, stored %v", scan, got, classes[scan])
		}
	}
	return nil
}

// checkScanSCA compares a scan's SCA total with its findings read page by
// page.
func checkScanSCA(ctx context.Context, st Store, companyID int64, scanID string) error {
	read, total := 0, 0
	for q := (storepage.Request{Limit: 100}); ; {
		page, err := st.SCA.ListScanSCAIssues(ctx, companyID, scanID, q)
		if err != nil {
			return err
		}
		read, total = read+len(page.Items), int(page.Count())
		if q.Token = page.Next; q.Token == "" {
			break
		}
	}
	if read != total {
		return fmt.Errorf("scan %s: %d SCA findings counted, %d stored", scanID, total, read)
	}
	return nil
}
