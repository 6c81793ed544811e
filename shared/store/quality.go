package store

import "github.com/acme/codescan-api/shared/store/quality"

// The code-quality findings area's types, for callers of the facade (see
// quality).
type (
	QualityIssue           = quality.Issue
	QualityClass           = quality.Class
	QualityClassification  = quality.Classification
	QualityLocation        = quality.Location
	QualityFile            = quality.File
	QualityProject         = quality.Project
	QualityReachability    = quality.Reachability
	AutoTriage             = quality.AutoTriage
	FalsePositiveDetection = quality.FalsePositiveDetection
	AutoFixSuggestion      = quality.AutoFixSuggestion
	FixPatch               = quality.FixPatch
	Assignee               = quality.Assignee
)
