package main

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/acme/codescan-api/shared/deployspec"
)

// The dispatcher reads new outbox items from the table's stream, reports
// partial batch failures and sends what it gives up on to the failure
// queue; the scheduler runs each job on its rule; both may send email only
// from the configured SES identity.
func TestNotificationDelivery(t *testing.T) {
	for _, s := range synth(t, "prod") {
		assert(t, s.region+" stream", func() {
			s.template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
				"StreamSpecification": map[string]any{"StreamViewType": "NEW_IMAGE"},
			})
		})
		dispatcher := s.logicalID(s.stack.Workers[deployspec.WorkerDispatcher])
		queue := s.logicalID(s.stack.FailureQueue)
		assert(t, s.region+" event source mapping", func() {
			s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
				"FunctionName":               map[string]any{"Ref": dispatcher},
				"EventSourceArn":             map[string]any{"Fn::GetAtt": []any{s.logicalID(s.stack.Table), "StreamArn"}},
				"StartingPosition":           "TRIM_HORIZON",
				"FunctionResponseTypes":      []any{"ReportBatchItemFailures"},
				"BisectBatchOnFunctionError": true,
				"DestinationConfig": map[string]any{"OnFailure": map[string]any{
					"Destination": map[string]any{"Fn::GetAtt": []any{queue, "Arn"}},
				}},
				"FilterCriteria": map[string]any{"Filters": []any{map[string]any{"Pattern": deployspec.StreamFilter}}},
			})
		})
		scheduler := s.logicalID(s.stack.Workers[deployspec.WorkerScheduler])
		for _, sch := range deployspec.Schedules {
			assert(t, s.region+" schedule "+sch.Name, func() {
				s.template.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
					"ScheduleExpression": sch.Expression,
					"Targets": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
						"Arn":   map[string]any{"Fn::GetAtt": []any{scheduler, "Arn"}},
						"Input": sch.Input(),
					})}),
				})
			})
		}
		for _, w := range deployspec.Workers() {
			fn := s.doc.Resources[s.logicalID(s.stack.Workers[w.Group])]
			env := fn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			if env["MAIL_FROM"] != "notifications@example.com" || env["SES_CONFIGURATION_SET"] != "codescan-notifications" || env["APP_BASE_URL"] == nil {
				t.Errorf("%s %s environment %v", s.region, w.Group, env)
			}
		}
		// SES permissions name the identity and the configuration set, never "*".
		for id, r := range s.doc.Resources {
			if r.Type != "AWS::IAM::Policy" {
				continue
			}
			doc := r.Properties["PolicyDocument"].(map[string]any)
			for _, st := range doc["Statement"].([]any) {
				stm := st.(map[string]any)
				if stm["Action"] != deployspec.SESAction {
					continue
				}
				res, ok := stm["Resource"].([]any)
				if !ok || len(res) != 2 {
					t.Errorf("%s %s: SES resources %v", s.region, id, stm["Resource"])
				}
			}
		}
		assert(t, s.region+" SES scoped to the identity", func() {
			s.template.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{
				"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
					"Action": deployspec.SESAction,
					"Resource": assertions.Match_ArrayWith(&[]any{map[string]any{"Fn::Join": []any{"", []any{
						"arn:", map[string]any{"Ref": "AWS::Partition"}, ":ses:" + s.region + ":123456789012:identity/example.com",
					}}}}),
				})})},
			})
		})
	}
}
