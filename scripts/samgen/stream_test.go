package main

import (
	"encoding/json"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/acme/codescan-api/shared/deployspec"
)

// At most deployspec.MaxStreamReaders event sources read the table's
// stream in template.yaml (AWS advises two readers per shard), each the one
// of a worker deployspec says reads it, with exactly its filters.
func TestAtMostTwoStreamReaders(t *testing.T) {
	raw, _ := readTemplate(t)
	var tpl struct {
		Resources map[string]struct {
			Type       string `yaml:"Type"`
			Properties struct {
				EventSourceArn any `yaml:"EventSourceArn"`
				Events         map[string]struct {
					Type       string `yaml:"Type"`
					Properties struct {
						Stream         any `yaml:"Stream"`
						FilterCriteria struct {
							Filters []struct {
								Pattern string `yaml:"Pattern"`
							} `yaml:"Filters"`
						} `yaml:"FilterCriteria"`
					} `yaml:"Properties"`
				} `yaml:"Events"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	readers := map[string][]string{}
	for id, r := range tpl.Resources {
		if r.Type == "AWS::Lambda::EventSourceMapping" {
			t.Errorf("%s: an event source mapping outside a function's events (%v)", id, r.Properties.EventSourceArn)
		}
		for name, ev := range r.Properties.Events {
			if ev.Type != "DynamoDB" {
				continue
			}
			if s, _ := json.Marshal(ev.Properties.Stream); string(s) != `"Table.StreamArn"` {
				t.Errorf("%s.%s reads the stream %s", id, name, s)
			}
			for _, f := range ev.Properties.FilterCriteria.Filters {
				readers[id] = append(readers[id], f.Pattern)
			}
			if readers[id] == nil {
				t.Errorf("%s.%s reads the stream unfiltered", id, name)
			}
		}
	}
	if len(readers) > deployspec.MaxStreamReaders {
		t.Fatalf("%d functions read the table's stream, at most %d may: %v", len(readers), deployspec.MaxStreamReaders, readers)
	}
	want := map[string][]string{}
	for _, w := range deployspec.Workers() {
		if w.ReadsStream() {
			want[w.Name()+"Function"] = w.StreamFilters
		}
	}
	if len(readers) != len(want) {
		t.Errorf("stream readers %v, want %v", readers, want)
	}
	for id, filters := range want {
		if !slices.Equal(readers[id], filters) {
			t.Errorf("%s filters %v, want %v", id, readers[id], filters)
		}
	}
}
