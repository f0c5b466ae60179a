package stripe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

// isThin reports whether stored is a Stripe thin event notification (the
// processor's Fetch.Pointer for Stripe): such an event is always fetched.
func isThin(stored []byte) bool {
	var head struct {
		Object string `json:"object"`
	}
	return json.Unmarshal(stored, &head) == nil && head.Object == thinObject
}

// thinEvent is what the fetch reads of a thin notification and of the
// v2 event GET /v2/core/events/{id} returns.
type thinEvent struct {
	ID            string          `json:"id"`
	Object        string          `json:"object"`
	Type          string          `json:"type"`
	Created       time.Time       `json:"created"`
	Livemode      bool            `json:"livemode"`
	Context       string          `json:"context"`
	SnapshotEvent string          `json:"snapshot_event"`
	RelatedObject *relatedObject  `json:"related_object"`
	Data          json.RawMessage `json:"data"`
}

type relatedObject struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	URL  string `json:"url"`
}

// snapshotView is what the business reads for a thin event: the shape of
// a snapshot event, so stripeevent.Parse and a handler written for
// snapshot events read it alike.
type snapshotView struct {
	ID         string `json:"id"`
	Object     string `json:"object"`
	Type       string `json:"type"`
	Created    int64  `json:"created"`
	Livemode   bool   `json:"livemode"`
	APIVersion string `json:"api_version,omitempty"`
	Account    string `json:"account,omitempty"`
	Data       struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
	ThinEvent string `json:"thin_event"`
}

// fetchThin fetches the v2 event a stored thin notification names, then
// its related object, and returns the snapshot-shaped view of them under
// eventID (the claim's id: the snapshot twin's during a migration): type
// without the "v1." prefix, data.object the related object as fetched
// now (the newest state), or the v2 event's data when it has no related
// object. A connected account's event (context) is fetched with that
// Stripe-Context. A v2 event that names a snapshot twin the claim is not
// under (the notification did not carry snapshot_event) is
// webhook.ErrNoHandler: the twin's own claim runs the action, once.
func (a *api) fetchThin(ctx context.Context, eventID string, stored []byte) ([]byte, error) {
	var n thinEvent
	if err := json.Unmarshal(stored, &n); err != nil || n.ID == "" {
		return nil, webhook.Permanent(fmt.Errorf("stripe thin event %s: the stored notification has no id", eventID))
	}
	headers := http.Header{"Stripe-Version": {v2Version}}
	if n.Context != "" {
		headers.Set("Stripe-Context", n.Context)
	}
	var ev thinEvent
	body, err := a.get(ctx, "/v2/core/events/"+url.PathEscape(n.ID), headers)
	if err == nil && json.Unmarshal(body, &ev) != nil {
		ev = thinEvent{}
	}
	switch {
	case statusOf(err) == http.StatusNotFound:
		return nil, webhook.Permanent(fmt.Errorf("stripe has no v2 event %s (404): %w", n.ID, err))
	case err != nil:
		return nil, fmt.Errorf("get stripe v2 event %s: %w", n.ID, err)
	case ev.ID != n.ID || ev.Object != thinObject || ev.Type == "":
		return nil, fmt.Errorf("get stripe v2 event %s: the API answered %q %q, not that event", n.ID, ev.Object, ev.ID)
	}
	if ev.SnapshotEvent != "" && ev.SnapshotEvent != eventID {
		// The notification did not name its snapshot twin, so it was
		// claimed under its own id; the twin's claim carries the action.
		return nil, fmt.Errorf("stripe v2 event %s is the thin twin of snapshot event %s, which carries this action as stripe#%s: %w",
			n.ID, ev.SnapshotEvent, ev.SnapshotEvent, webhook.ErrNoHandler)
	}
	view := snapshotView{
		ID: eventID, Object: "event", Type: snapshotType(ev.Type),
		Created: ev.Created.Unix(), Livemode: ev.Livemode, Account: ev.Context, ThinEvent: ev.ID,
	}
	view.Data.Object = ev.Data
	if len(view.Data.Object) == 0 || string(view.Data.Object) == "null" {
		view.Data.Object = json.RawMessage(`{}`)
	}
	if rel := ev.RelatedObject; rel != nil && rel.URL != "" {
		if err := a.related(ctx, ev, &view); err != nil {
			return nil, err
		}
	}
	b, err := json.Marshal(view)
	if err != nil {
		return nil, fmt.Errorf("stripe thin event %s: %w", n.ID, err)
	}
	return b, nil
}

// related fetches the related object of the v2 event ev into view's
// data.object, as the API serves it now.
func (a *api) related(ctx context.Context, ev thinEvent, view *snapshotView) error {
	rel := ev.RelatedObject
	if !apiPath(rel.URL) {
		return webhook.Permanent(fmt.Errorf("stripe v2 event %s: related_object.url is not a Stripe API path", ev.ID))
	}
	objHeaders := http.Header{}
	if strings.HasPrefix(rel.URL, "/v2/") {
		objHeaders.Set("Stripe-Version", v2Version)
	} else {
		view.APIVersion = apiVersion
	}
	if ev.Context != "" {
		objHeaders.Set("Stripe-Context", ev.Context)
	}
	raw, err := a.get(ctx, rel.URL, objHeaders)
	var obj struct {
		ID string `json:"id"`
	}
	switch {
	case statusOf(err) == http.StatusNotFound:
		return webhook.Permanent(fmt.Errorf("stripe has no %s %s (404), the object of v2 event %s: %w", rel.Type, rel.ID, ev.ID, err))
	case err != nil:
		return fmt.Errorf("get the %s of stripe v2 event %s: %w", rel.Type, ev.ID, err)
	case json.Unmarshal(raw, &obj) != nil || (rel.ID != "" && obj.ID != rel.ID):
		return fmt.Errorf("get the %s of stripe v2 event %s: the API answered another object", rel.Type, ev.ID)
	}
	view.Data.Object = raw
	return nil
}
