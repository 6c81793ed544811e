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
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// ComponentStore is what the component write of an upload reads and
// writes: the inventory's area and the outbox.
type ComponentStore struct {
	Components interface {
		HoldersOf(ctx context.Context, companyID int64, pkg string, version string, limit int) ([]storecomponents.Holder, bool, error)
		PackageVersions(ctx context.Context, companyID int64, pkg string) ([]storecomponents.VersionCount, error)
		ReplaceComponents(ctx context.Context, ref storecomponents.SetRef, list []components.Component) (storecomponents.Changes, error)
	}
	Ledger interface {
		RecordEventOnce(ctx context.Context, e schema.Event) (bool, error)
	}
}

// ComponentStoreOf is the areas of st that ComponentStore touches: its composition.
func ComponentStoreOf(st *store.Store) ComponentStore {
	return ComponentStore{Components: st.Components, Ledger: st.Ledger}
}

// AffectedStore is what a blast radius reads and writes: the inventory's
// package index and the outbox.
type AffectedStore struct {
	Components interface {
		HoldersOf(ctx context.Context, companyID int64, pkg string, version string, limit int) ([]storecomponents.Holder, bool, error)
		PackageVersions(ctx context.Context, companyID int64, pkg string) ([]storecomponents.VersionCount, error)
	}
	Ledger interface {
		RecordEventOnce(ctx context.Context, e schema.Event) (bool, error)
	}
}

// AffectedStoreOf is the areas of st that AffectedStore touches: its composition.
func AffectedStoreOf(st *store.Store) AffectedStore {
	return AffectedStore{Components: st.Components, Ledger: st.Ledger}
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

// What brought the advisory of a component_affected event (its data's
// trigger): an upload (WriteComponents), or the exploit import, when the
// advisory's CVE newly entered CISA's KEV catalogue (functions/scheduler).
const (
	TriggerUpload = "upload"
	TriggerKEV    = "kev"
)

// Arrival is how an advisory reached a company: the trigger, and for an
// upload its scan and project.
type Arrival struct {
	CompanyID int64
	Trigger   string // TriggerUpload or TriggerKEV
	ScanID    string // the upload's; "" for TriggerKEV
	ProjectID int64  // the upload's; 0 for TriggerKEV
}

// AffectedEventID is the id of the component_affected event of advisory a
// arriving by trigger (the outbox's once-per-company key): one per
// advisory and package for uploads, and another one per CVE and package
// for the KEV trigger, so a CVE an upload announced is announced again
// when it becomes known exploited, and once only.
func AffectedEventID(trigger string, a components.Advisory) string {
	key := a.Key()
	if trigger != TriggerUpload {
		key = trigger + " " + key
	}
	sum := sha256.Sum256([]byte(key))
	return TypeComponentAffected + "-" + hex.EncodeToString(sum[:16])
}

// WriteComponents keeps the components an upload lists as its engine's set
// on the scan's branch (engine is the canonical engine name), then finds
// the blast radius of every advisory the upload brings: the company's
// holders of an affected version, found by the package index, announced in
// one component_affected event per advisory and package (once per company:
// RecordEventOnce).
func WriteComponents(ctx context.Context, st ComponentStore, engine string, sc scans.Scan, proj schema.Project, inv components.Inventory) error {
	at, err := time.Parse(time.RFC3339Nano, sc.CreatedAt)
	if err != nil {
		return fmt.Errorf("scan %s: created_at: %w", sc.ID, err)
	}
	ref := storecomponents.SetRef{CompanyID: sc.CompanyID, ProjectID: proj.ID, ProjectName: proj.Name, Branch: sc.Branch,
		Engine: engine, ScanID: sc.ID, ScanAt: at}
	if _, err := st.Components.ReplaceComponents(ctx, ref, inv.Components); err != nil {
		return err
	}
	for n, a := range inv.Advisories {
		if n == MaxBlastAdvisories {
			break
		}
		if _, err := BlastRadius(ctx, AffectedStore{Components: st.Components, Ledger: st.Ledger}, Arrival{CompanyID: sc.CompanyID, Trigger: TriggerUpload, ScanID: sc.ID, ProjectID: sc.ProjectID}, a); err != nil {
			return err
		}
	}
	return nil
}

// BlastRadius records the event of one advisory when the company holds an
// affected version of its package (the upload's and the KEV trigger's
// lookup), and reports whether it recorded one (false: no holder of an
// affected version, or the event was recorded before).
func BlastRadius(ctx context.Context, st AffectedStore, at Arrival, a components.Advisory) (bool, error) {
	versions, err := st.Components.PackageVersions(ctx, at.CompanyID, a.Package)
	if err != nil {
		return false, err
	}
	ev := affectedEvent{AdvisoryID: a.ID, Aliases: a.Aliases, Package: a.Package, Ecosystem: a.Ecosystem, Trigger: at.Trigger,
		ScanID: at.ScanID, ProjectID: at.ProjectID, AffectedVersions: []string{}, Holders: []affectedHolder{}}
	for _, vc := range versions {
		v, err := components.ParseVersion(a.Ecosystem, vc.Version)
		if err != nil || !a.Affects(v) {
			continue
		}
		ev.AffectedVersions = append(ev.AffectedVersions, vc.Version)
		ev.TotalHolders += vc.Holders
		if room := MaxEventHolders - len(ev.Holders); room > 0 {
			hs, more, err := st.Components.HoldersOf(ctx, at.CompanyID, a.Package, vc.Version, room)
			if err != nil {
				return false, err
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
		return false, nil
	}
	data, err := json.Marshal(ev)
	if err != nil {
		return false, err
	}
	return st.Ledger.RecordEventOnce(ctx, schema.Event{ID: AffectedEventID(at.Trigger, a), CompanyID: at.CompanyID,
		Type: TypeComponentAffected, Data: data})
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
	Trigger          string           `json:"trigger"`              // TriggerUpload or TriggerKEV
	ScanID           string           `json:"scan_id,omitempty"`    // the upload's
	ProjectID        int64            `json:"project_id,omitempty"` // the upload's
}

type affectedHolder struct {
	ProjectID   int64  `json:"project_id"`
	ProjectName string `json:"project_name"`
	Branch      string `json:"branch"`
	Version     string `json:"version"`
	Relation    string `json:"relation"`
	Engine      string `json:"engine"`
}
