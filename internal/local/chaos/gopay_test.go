package chaos

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestLocalDeliversGoPayNotifications: a corpus's GoPay lines reach a
// Local stack as GoPay sends them (the payment set on the stand-in, then
// GET ?id=), twice each with queue copies: the paid and the refunded
// payment end DONE with their order, the canceled one IGNORED.
func TestLocalDeliversGoPayNotifications(t *testing.T) {
	corpus := `{"object":"hookinbox.delivery","provider":"gopay","id":"3000000001","type":"notification","body":{"id":3000000001,"order_number":"o-1","state":"PAID","amount":10000,"currency":"CZK"}}
{"object":"hookinbox.delivery","provider":"gopay","id":"3000000002","type":"notification","body":{"id":3000000002,"order_number":"o-2","state":"REFUNDED","amount":20000,"currency":"CZK"}}
{"object":"hookinbox.delivery","provider":"gopay","id":"3000000003","type":"notification","body":{"id":3000000003,"order_number":"o-3","state":"CANCELED","amount":30000,"currency":"CZK"}}`
	evs, err := ReadEvents(strings.NewReader(corpus))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := samtemplate.Load(filepath.Join("..", "..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l, err := NewLocal(ctx, devstacktest.ForTest(t), tpl, "chaos-gopay-"+strings.ReplaceAll(t.Name(), "/", "-")[:12], LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	st, err := Run(ctx, l, evs, Config{Dup: 2, Concurrency: 4, QueueDups: true, Seed: 1, QuietWithin: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if st.Undelivered != 0 || len(st.Refused) != 0 {
		t.Errorf("undelivered %d, refused %v; want every delivery accepted", st.Undelivered, st.Refused)
	}
	var keys []webhook.Key
	for _, ev := range evs {
		keys = append(keys, ev.Key())
	}
	snap, err := l.Snapshot(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	want := map[webhook.Key]inbox.Status{"gopay#3000000001": inbox.Done, "gopay#3000000002": inbox.Done, "gopay#3000000003": inbox.Ignored}
	for k, s := range want {
		if snap.Status[k] != s {
			t.Errorf("%s: %s (%s), want %s", k, snap.Status[k], snap.Reason[k], s)
		}
	}
	orders := 0
	for _, r := range snap.Business {
		if strings.HasPrefix(r, "order ") && strings.Contains(r, `"gopay"`) {
			orders++
		}
	}
	if orders != 2 {
		t.Errorf("GoPay orders in the business state: %d, want 2 (paid, refunded):\n%s", orders, strings.Join(snap.Business, "\n"))
	}
	if fetches := l.Stack.GoPay.Fetches(3000000001); fetches < 1 {
		t.Errorf("payment 3000000001 fetched %d times, want at least once", fetches)
	}
}
