package deliveryengine

import (
	"context"
	"errors"
	"strconv"

	"github.com/acme/codescan-api/shared/emailrender"
	"github.com/acme/codescan-api/shared/store"
)

// sendEmail renders the delivery for its user (read unless given) and
// sends it.
func (d *Engine) sendEmail(ctx context.Context, del store.Delivery, read *store.User) error {
	var u store.User
	if read != nil {
		u = *read
	} else {
		userID, err := strconv.ParseInt(del.Recipient, 10, 64)
		if err != nil {
			return errNoRecipient
		}
		if u, err = d.Store.GetUser(ctx, del.CompanyID, userID); errors.Is(err, store.ErrNotFound) {
			return errNoRecipient
		} else if err != nil {
			return err
		}
	}
	if !u.Active || u.Email == "" {
		return errNoRecipient
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
