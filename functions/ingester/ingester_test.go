package ingester_test

import (
	"testing"

	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/functions/ingester"
	"github.com/acme/codescan-api/shared/store/schema"
)

// JobOf selects what the event source mapping's filter selects: new scans
// of uploaded reports still processing; nothing else is a job.
func TestJobOf(t *testing.T) {
	s := func(v string) ddbtypes.AttributeValue { return &ddbtypes.AttributeValueMemberS{Value: v} }
	n := func(v string) ddbtypes.AttributeValue { return &ddbtypes.AttributeValueMemberN{Value: v} }
	scan := func(change func(map[string]ddbtypes.AttributeValue)) map[string]ddbtypes.AttributeValue {
		img := map[string]ddbtypes.AttributeValue{
			"PK": s(schema.CompanyPK(7)), "SK": s(schema.ScanSKPrefix + "0b0c3f4e-7a0e-5d7b-9c1e-2f3a4b5c6d7e"), "id": s("0b0c3f4e-7a0e-5d7b-9c1e-2f3a4b5c6d7e"),
			"company_id": n("7"), "run_id": s("5d2f0c1e-1b2a-4c3d-8e4f-5a6b7c8d9e0f"), "status": s("processing"),
		}
		if change != nil {
			change(img)
		}
		return img
	}
	job, ok := ingester.JobOfImage(scan(nil))
	if !ok || job.CompanyID != 7 || job.ScanID != "0b0c3f4e-7a0e-5d7b-9c1e-2f3a4b5c6d7e" {
		t.Fatalf("scan of an upload: %+v %v", job, ok)
	}
	for name, change := range map[string]func(map[string]ddbtypes.AttributeValue){
		"complete":          func(m map[string]ddbtypes.AttributeValue) { m["status"] = s("complete") },
		"no run id":         func(m map[string]ddbtypes.AttributeValue) { delete(m, "run_id") },
		"not a scan":        func(m map[string]ddbtypes.AttributeValue) { m["SK"] = s("SCANRUN#x") },
		"outbox event":      func(m map[string]ddbtypes.AttributeValue) { m["SK"] = s(schema.EventSK("x")) },
		"no company":        func(m map[string]ddbtypes.AttributeValue) { delete(m, "company_id") },
		"company not a num": func(m map[string]ddbtypes.AttributeValue) { m["company_id"] = n("x") },
	} {
		if job, ok := ingester.JobOfImage(scan(change)); ok {
			t.Errorf("%s: a job %+v", name, job)
		}
	}
}
