package localstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
)

// Checkpoint is a poller's read position kept in a file: per shard, the
// sequence number of the last record handed over, for one stream. A
// position of another stream (the table made again) is ignored, so the
// poller then reads the new stream from its start.
type Checkpoint struct {
	Path string
}

type checkpointFile struct {
	Stream string            `json:"stream"`
	Shards map[string]string `json:"shards"`
}

func (c *Checkpoint) load(stream string) (map[string]string, error) {
	b, err := os.ReadFile(c.Path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	var f checkpointFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("stream checkpoint %s: %w", c.Path, err)
	}
	if f.Stream != stream || f.Shards == nil {
		return map[string]string{}, nil
	}
	return f.Shards, nil
}

// save writes the positions to a new file that then replaces the old one,
// so a crash leaves either position whole.
func (c *Checkpoint) save(stream string, shards map[string]*shardState) error {
	b, err := json.Marshal(checkpointFile{Stream: stream, Shards: positions(shards)})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.Path), ".checkpoint-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), c.Path)
}

// positions is the last sequence number handed over per shard, for the
// shards that have one.
func positions(shards map[string]*shardState) map[string]string {
	out := make(map[string]string, len(shards))
	for id, s := range shards {
		if s.last != "" {
			out[id] = s.last
		}
	}
	return out
}

func moved(shards map[string]*shardState, saved map[string]string) bool {
	return !maps.Equal(positions(shards), saved)
}
