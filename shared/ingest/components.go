package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/store"
	storecomponents "github.com/acme/codescan-api/shared/store/components"
)

// ComponentStore is what the component write of an upload reads and
// writes: the inventory's area and the outbox.
type ComponentStore interface {
	ReplaceComponents(ctx context.Context, ref storecomponents.SetRef, list []components.Component) (storecomponents.Changes, error)
	PackageVersions(ctx context.Context, companyID int64, pkg string) ([]storecomponents.VersionCount, error)
	HoldersOf(ctx context.Context, companyID int64, pkg, version string, limit int) ([]storecomponents.Holder, bool, error)
	RecordEventOnce(ctx context.Context, e store.Event) (bool, error)
}

// Bounds of the blast radius of one upload: the advisories looked up, and
// the holders one event names (its total counts them all).
const (
	MaxBlastAdvisories = 500
	MaxEventHolders    = 100
)

// TypeComponentAffected is the notification type of an advisory that
// reaches packages the company holds.
const TypeComponentAffected = "component_affected"

// WriteComponents keeps the components an upload lists as its engine's set
// on the scan's branch (engine is the canonical engine name), then finds
// the blast radius of every advisory the upload brings: the company's
// holders of an affected version, found by the package index, announced in
// one component_affected event per advisory and package (once per company:
// RecordEventOnce).
func WriteComponents(ctx context.Context, st ComponentStore, engine string, sc store.Scan, proj store.Project, inv components.Inventory) error {
	at, err := time.Parse(time.RFC3339Nano, sc.CreatedAt)
	if err != nil {
		return fmt.Errorf("scan %s: created_at: %w", sc.ID, err)
	}
	ref := storecomponents.SetRef{CompanyID: sc.CompanyID, ProjectID: proj.ID, ProjectName: proj.Name, Branch: sc.Branch,
		Engine: engine, ScanID: sc.ID, ScanAt: at}
	if _, err := st.ReplaceComponents(ctx, ref, inv.Components); err != nil {
		return err
	}
	for n, a := range inv.Advisories {
		if n == MaxBlastAdvisories {
			break
		}
		if err := blastRadius(ctx, st, sc, a); err != nil {
			return err
		}
	}
	return nil
}

// blastRadius records the event of one advisory when the company holds an
// affected version of its package.
func blastRadius(ctx context.Context, st ComponentStore, sc store.Scan, a components.Advisory) error {
	versions, err := st.PackageVersions(ctx, sc.CompanyID, a.Package)
	if err != nil {
		return err
	}
	ev := affectedEvent{AdvisoryID: a.ID, Aliases: a.Aliases, Package: a.Package, Ecosystem: a.Ecosystem,
		ScanID: sc.ID, ProjectID: sc.ProjectID, AffectedVersions: []string{}, Holders: []affectedHolder{}}
	for _, vc := range versions {
		v, err := components.ParseVersion(a.Ecosystem, vc.Version)
		if err != nil || !a.Affects(v) {
			continue
		}
		ev.AffectedVersions = append(ev.AffectedVersions, vc.Version)
		ev.TotalHolders += vc.Holders
		if room := MaxEventHolders - len(ev.Holders); room > 0 {
			hs, more, err := st.HoldersOf(ctx, sc.CompanyID, a.Package, vc.Version, room)
			if err != nil {
				return err
			}
			for _, h := range hs {
				ev.Holders = append(ev.Holders, affectedHolder{ProjectID: h.ProjectID, ProjectName: h.ProjectName, Branch: h.Branch,
					Version: h.Version, Relation: h.Relation, Engine: h.Engine})
			}
			ev.Truncated = ev.Truncated || more
		} else {
			ev.Truncated = true
		}
	}
	if len(ev.AffectedVersions) == 0 {
		return nil
	}
	data, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(a.Key()))
	_, err = st.RecordEventOnce(ctx, store.Event{ID: TypeComponentAffected + "-" + hex.EncodeToString(sum[:16]), CompanyID: sc.CompanyID,
		Type: TypeComponentAffected, Data: data})
	return err
}

// affectedEvent is a component_affected event's data.
type affectedEvent struct {
	AdvisoryID       string           `json:"advisory_id"`
	Aliases          []string         `json:"aliases,omitempty"`
	Package          string           `json:"package"`
	Ecosystem        string           `json:"ecosystem"`
	AffectedVersions []string         `json:"affected_versions"`
	TotalHolders     int64            `json:"total_holders"`
	Holders          []affectedHolder `json:"holders"`
	Truncated        bool             `json:"truncated"`
	ScanID           string           `json:"scan_id"`
	ProjectID        int64            `json:"project_id"`
}

type affectedHolder struct {
	ProjectID   int64  `json:"project_id"`
	ProjectName string `json:"project_name"`
	Branch      string `json:"branch"`
	Version     string `json:"version"`
	Relation    string `json:"relation"`
	Engine      string `json:"engine"`
}
