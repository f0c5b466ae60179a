package standin

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestStripeHeldInvoiceCalls(t *testing.T) {
	s := NewStripe()
	srv, err := Serve(s, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	post := func(ctx context.Context, key, event string) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/invoices", strings.NewReader("customer=cus_1&metadata[hookinbox_event]="+event))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	held := s.HoldInvoices(2)

	// The first held call's client gives up: nothing is created.
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { _, err := post(ctx, "k1", "stripe#evt_1"); gaveUp <- err }()
	if got := <-held; got != "stripe#evt_1" {
		t.Errorf("held %q, want stripe#evt_1", got)
	}
	cancel()
	if err := <-gaveUp; err == nil {
		t.Error("a held call answered before it was released")
	}
	// The stand-in learns of it when it sees the connection close, which
	// can come after the client has returned: wait for that before
	// releasing, or the release may reach the call first.
	for deadline := time.Now().Add(5 * time.Second); !abandoned(s) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	// The second is held until released, then answered.
	answered := make(chan int, 1)
	go func() { code, _ := post(context.Background(), "k2", "stripe#evt_2"); answered <- code }()
	<-held
	s.ReleaseInvoices()
	if code := <-answered; code != 200 {
		t.Errorf("released call answered %d, want 200", code)
	}
	// Later calls are not held.
	if code, err := post(context.Background(), "k1", "stripe#evt_1"); code != 200 || err != nil {
		t.Errorf("call after release: %d %v", code, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(s.Calls()) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // the abandoned call records itself when it sees its client gone
	}
	var statuses []int
	for _, c := range s.Calls() {
		statuses = append(statuses, c.Status)
	}
	if len(s.Invoices()) != 2 || len(statuses) != 3 || !containsInt(statuses, statusClientClosed) {
		t.Errorf("invoices %v, call statuses %v; want 2 invoices and the abandoned call recorded as 499", s.Invoices(), statuses)
	}
}

// abandoned reports that s recorded a call whose client went away.
func abandoned(s *Stripe) bool {
	for _, c := range s.Calls() {
		if c.Status == statusClientClosed {
			return true
		}
	}
	return false
}

func containsInt(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}
