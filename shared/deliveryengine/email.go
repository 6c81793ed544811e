package deliveryengine

import (
	"context"
	"errors"
	"strconv"

	"github.com/acme/codescan-api/shared/emailrender"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// sendEmail renders the delivery for its user (read unless given) and
// sends it.
func (d *Engine) sendEmail(ctx context.Context, del schema.Delivery, read *schema.User) error {
	var u schema.User
	if read != nil {
		u = *read
	} else {
		userID, err := strconv.ParseInt(del.Recipient, 10, 64)
		if err != nil {
			return errNoRecipient
		}
		if u, err = d.Store.Tenancy.GetUser(ctx, del.CompanyID, userID); errors.Is(err, ddb.ErrNotFound) {
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
