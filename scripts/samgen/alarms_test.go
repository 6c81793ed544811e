package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/deployspec"
)

// template.yaml has the alarms of the CDK stacks (infra/alarms.go), named
// alike, each notifying the alarm topic when it fires and when it clears;
// it creates the SES configuration set the mailers name, and refuses the
// example sender in production.
func TestAlarmsAndMail(t *testing.T) {
	_, tpl := readTemplate(t)
	want := []string{"Api5xxRate", "ApiLatencyP99", "TableThrottles", "TableSystemErrors", "MailBounceRate", "MailComplaintRate"}
	for _, f := range append(deployspec.All(), deployspec.Workers()...) {
		want = append(want, f.Name()+"Errors", f.Name()+"Throttles")
	}
	for _, j := range deployspec.JobAlarms {
		want = append(want, j.ID)
	}
	for _, w := range deployspec.Workers() {
		if w.ReadsStream() {
			want = append(want, w.Name()+"FailureQueueMessages", w.Name()+"IteratorAge")
		}
	}
	var got []string
	for id, r := range tpl.Resources {
		switch r.Type {
		case "AWS::CloudWatch::Alarm":
			p := r.Properties
			name, ok := strings.CutPrefix(p.AlarmName, "${AWS::StackName}-")
			if !ok || id != name+"Alarm" {
				t.Errorf("alarm %s is named %q", id, p.AlarmName)
			}
			got = append(got, name)
			if !slices.Equal(p.AlarmActions, []string{"AlarmTopic"}) || !slices.Equal(p.OKActions, []string{"AlarmTopic"}) {
				t.Errorf("alarm %s notifies %v and %v, want the topic only", id, p.AlarmActions, p.OKActions)
			}
			if fn, ok := strings.CutSuffix(name, "Errors"); ok && p.MetricName == "Errors" {
				if len(p.Dimensions) != 1 || p.Dimensions[0].Value != fn+"Function" {
					t.Errorf("alarm %s watches %v", id, p.Dimensions)
				}
			}
		case "AWS::SES::ConfigurationSet":
			if r.Properties.Name != "SesConfigurationSet" {
				t.Errorf("configuration set %s is named %q, not the parameter the mailers read", id, r.Properties.Name)
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("alarms %v\nwant %v", got, want)
	}
	if _, ok := tpl.Resources["MailConfigurationSet"]; !ok {
		t.Error("no SES configuration set")
	}
	if r := tpl.Rules["ProductionSender"]; len(r.Assertions) != 2 {
		t.Errorf("production sender rule has %d assertions", len(r.Assertions))
	}
}
