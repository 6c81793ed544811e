package notify

import (
	"encoding/json"
	"time"

	"github.com/acme/codescan-api/shared/store/schema"
)

// Payload is the JSON body of a webhook (and the data of an email).
type Payload struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	CreatedAt string          `json:"created_at"`
	CompanyID int64           `json:"company_id"`
	Data      json.RawMessage `json:"data"`
}

// PayloadOf is the payload of an outbox event.
func PayloadOf(ev schema.Event) ([]byte, error) {
	return json.Marshal(Payload{Type: ev.Type, ID: ev.ID, CreatedAt: ev.CreatedAt.UTC().Format(time.RFC3339), CompanyID: ev.CompanyID, Data: ev.Data})
}
