package standin

import (
	"net/http"
	"sync"
)

// statusClientClosed is the status recorded for an invoice call whose
// client went away while it was held (nginx's 499).
const statusClientClosed = 499

// invoiceHold holds the next invoice calls until released.
type invoiceHold struct {
	left     int           // calls still to hold
	held     chan string   // receives each held call's hookinbox_event
	released chan struct{} // closed by ReleaseInvoices
	once     sync.Once
}

// HoldInvoices makes the next n invoice calls hang before anything is
// created, as a Stripe that does not answer, until ReleaseInvoices or until
// their client goes away (then nothing is created and the call is recorded
// with status 499). It returns a channel that receives the
// metadata[hookinbox_event] of each call as it is held.
func (s *Stripe) HoldInvoices(n int) <-chan string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = &invoiceHold{left: n, held: make(chan string, n), released: make(chan struct{})}
	return s.hold.held
}

// ReleaseInvoices lets the held invoice calls, and every later one, go on.
func (s *Stripe) ReleaseInvoices() {
	s.mu.Lock()
	h := s.hold
	s.mu.Unlock()
	if h != nil {
		h.once.Do(func() { close(h.released) })
	}
}

// wait holds an invoice call while a hold has calls left, and reports
// whether the call should go on (false: its client went away).
func (s *Stripe) wait(r *http.Request, event string) bool {
	s.mu.Lock()
	h := s.hold
	if h == nil || h.left == 0 {
		s.mu.Unlock()
		return true
	}
	select {
	case <-h.released:
		s.mu.Unlock()
		return true
	default:
	}
	h.left--
	h.held <- event // buffered for n
	s.mu.Unlock()
	select {
	case <-h.released:
		return true
	case <-r.Context().Done():
		return false
	}
}
