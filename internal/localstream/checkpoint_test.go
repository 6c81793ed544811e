package localstream_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/localstream"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// seen collects the marker items a poller hands over.
type seen struct {
	mu  sync.Mutex
	got []string
}

func (s *seen) consume(_ context.Context, image map[string]ddbtypes.AttributeValue) error {
	pk, _ := image["PK"].(*ddbtypes.AttributeValueMemberS)
	if pk != nil && strings.HasPrefix(pk.Value, "CHECKPOINT#") {
		s.mu.Lock()
		s.got = append(s.got, pk.Value)
		s.mu.Unlock()
	}
	return nil
}

func (s *seen) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(slices.Values(s.got))
}

func put(t *testing.T, st *store.Store, names ...string) {
	t.Helper()
	for _, n := range names {
		_, err := st.Client().PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(st.TableName()), Item: map[string]ddbtypes.AttributeValue{
			"PK": &ddbtypes.AttributeValueMemberS{Value: "CHECKPOINT#" + n}, "SK": &ddbtypes.AttributeValueMemberS{Value: "x"}}})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// run runs a poller until want items were handed over (or 20 s pass),
// then until one more round that began after that caught up, so that its
// checkpoint is written after the last record and anything read beyond
// want shows; then stops it.
func run(t *testing.T, st *store.Store, cp *localstream.Checkpoint, want int) []string {
	t.Helper()
	streams, err := localstream.NewClient(context.Background(), testenv.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	s := &seen{}
	rounds := testenv.NewRounds()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	p := &localstream.Poller{DB: st.Client(), Table: st.TableName(), Streams: streams, Idle: 20 * time.Millisecond, Checkpoint: cp,
		Consumers: []localstream.Consumer{s.consume}, Caught: rounds.Caught}
	go func() { defer close(done); _ = p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	rounds.Until(t, fmt.Sprintf("%d items handed over", want), 20*time.Second, func() bool { return len(s.list()) >= want })
	rounds.Settled(t, 20*time.Second)
	return s.list()
}

// A restarted poller with a checkpoint hands over only what came after its
// last position, including items written while it was stopped; without a
// checkpoint it reads the stream from the start.
func TestCheckpointResumesAfterRestart(t *testing.T) {
	st := testenv.NewStreamStore(t)
	cp := &localstream.Checkpoint{Path: filepath.Join(t.TempDir(), "stream.json")}
	put(t, st, "1", "2", "3")
	if got := run(t, st, cp, 3); !slices.Equal(got, []string{"CHECKPOINT#1", "CHECKPOINT#2", "CHECKPOINT#3"}) {
		t.Fatalf("first run handed over %v", got)
	}
	put(t, st, "4", "5")
	if got := run(t, st, cp, 2); !slices.Equal(got, []string{"CHECKPOINT#4", "CHECKPOINT#5"}) {
		t.Fatalf("restart with a checkpoint handed over %v, want only 4 and 5", got)
	}
	if got := run(t, st, nil, 5); len(got) != 5 {
		t.Fatalf("a poller without a checkpoint handed over %v, want all 5", got)
	}
	// A checkpoint of another stream (the table made again) is ignored.
	other := testenv.NewStreamStore(t)
	put(t, other, "6")
	if got := run(t, other, cp, 1); !slices.Equal(got, []string{"CHECKPOINT#6"}) {
		t.Fatalf("new table with an old checkpoint handed over %v", got)
	}
}
