package delivery

import (
	"context"
	"errors"
	"strconv"

	"github.com/acme/codescan-api/shared/emailrender"
	"github.com/acme/codescan-api/shared/store"
)

// sendEmail renders the delivery for its user and sends it.
func (d *Engine) sendEmail(ctx context.Context, del store.Delivery) error {
	userID, err := strconv.ParseInt(del.Recipient, 10, 64)
	if err != nil {
		return errNoRecipient
	}
	u, err := d.Store.GetUser(ctx, del.CompanyID, userID)
	if errors.Is(err, store.ErrNotFound) || err == nil && (!u.Active || u.Email == "") {
		return errNoRecipient
	}
	if err != nil {
		return err
	}
	if d.Mail == nil {
		return errors.New("no mail sender configured")
	}
	m, err := emailrender.Render(d.AppURL, u.Email, []byte(del.Payload))
	if err != nil {
		return err
	}
	return d.Mail.Send(ctx, m)
}
