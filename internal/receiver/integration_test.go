package receiver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/webhook"
)

// realStack is a receiver on dynalite and local-aws-sqs, with the table and
// queues made from template.yaml.
type realStack struct {
	h     *receiver.Handler
	db    *dynamodb.Client
	sqs   *sqs.Client
	table string
	queue string
}

func newRealStack(t *testing.T, sqsURL func(string) string) *realStack {
	t.Helper()
	emu := devstacktest.ForTest(t)
	st := devstacktest.NewTestStack(t)
	s := &realStack{db: emu.DynamoDB(), sqs: emu.SQS(), table: st.Tables["InboxTable"], queue: st.Queues["EventsQueue"].URL}
	url := s.queue
	if sqsURL != nil {
		url = sqsURL(url)
	}
	s.h = handlerOn(fixed, inbox.NewDynamoDB(emu.DynamoDB(), s.table), queue.New(emu.SQS(), url))
	return s
}

// items returns every item in the inbox table, as "pk sk" strings.
func (s *realStack) items(t *testing.T) []string {
	t.Helper()
	out, err := s.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: &s.table, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range out.Items {
		var pk, sk string
		_ = attrString(it["pk"], &pk)
		_ = attrString(it["sk"], &sk)
		got = append(got, pk+" "+sk)
	}
	return got
}

// messages drains the events queue and returns the envelopes on it.
func (s *realStack) messages(t *testing.T) []queue.Envelope {
	t.Helper()
	var got []queue.Envelope
	for {
		out, err := s.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: &s.queue, MaxNumberOfMessages: 10, VisibilityTimeout: 60, WaitTimeSeconds: 0,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return got
		}
		for _, m := range out.Messages {
			var env queue.Envelope
			if err := json.Unmarshal([]byte(*m.Body), &env); err != nil {
				t.Fatalf("message body %q: %v", *m.Body, err)
			}
			got = append(got, env)
		}
	}
}

func TestIntegrationNewThenDuplicate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		id    string
		size  int // 0: the checkout as it is (2.9 KB)
		items []string
	}{
		// The checkout rides in its claim: one item.
		{"payload in the claim", "evt_int_1", 0, []string{"stripe#evt_int_1 event"}},
		// 10 KiB keeps its payload item, written beside the claim.
		{"payload apart", "evt_int_2", 10 << 10, []string{"stripe#evt_int_2 event", "stripe#evt_int_2 payload"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRealStack(t, nil)
			ctx := context.Background()
			req := signedSize("checkout.session.completed", tc.id, tc.size)
			for i, want := range []string{"accepted", "duplicate"} {
				resp, _ := s.h.Handle(ctx, req)
				if resp.StatusCode != http.StatusOK || answer(t, resp) != want {
					t.Fatalf("delivery %d: %d %s, want 200 %s", i+1, resp.StatusCode, resp.Body, want)
				}
			}
			if diff := cmp.Diff(tc.items, s.items(t)); diff != "" {
				t.Errorf("inbox items (-want +got):\n%s", diff)
			}
			want := []queue.Envelope{{Key: webhook.Key("stripe#" + tc.id), Type: "checkout.session.completed"}}
			if diff := cmp.Diff(want, s.messages(t)); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIntegrationConcurrentDeliveries(t *testing.T) {
	s := newRealStack(t, nil)
	// 10 KiB: the payload has its own item, written beside each claim.
	req := signedSize("checkout.session.completed", "evt_int_50", 10<<10)
	const n = 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := s.h.Handle(context.Background(), req)
			mu.Lock()
			counts[answer(t, resp)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if diff := cmp.Diff(map[string]int{"accepted": 1, "duplicate": n - 1}, counts); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if got := len(s.messages(t)); got != 1 {
		t.Errorf("%d messages on the queue, want 1", got)
	}
	if got := len(s.items(t)); got != 2 {
		t.Errorf("%d inbox items, want 2 (status and payload)", got)
	}
}

func TestIntegrationSQSFailureKeepsTheClaim(t *testing.T) {
	// A queue URL that does not exist: SendMessage fails as it would with SQS down.
	s := newRealStack(t, func(u string) string { return u + "-missing" })
	resp, _ := s.h.Handle(context.Background(), signed("checkout.session.completed", "evt_int_down"))
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("status %d %s, want 500", resp.StatusCode, resp.Body)
	}
	if got := s.items(t); len(got) != 1 {
		t.Errorf("inbox items after a failed send: %v, want the claim (with its payload), kept", got)
	}
}

func TestIntegrationHostileRequests(t *testing.T) {
	s := newRealStack(t, nil)
	for _, tc := range hostileRequests(receiver.DefaultMaxBodyBytes) {
		t.Run(tc.name, func(t *testing.T) {
			resp, _ := s.h.Handle(context.Background(), tc.req)
			if resp.StatusCode != tc.status {
				t.Errorf("status = %d (%s), want %d", resp.StatusCode, resp.Body, tc.status)
			}
		})
	}
	if got := s.items(t); len(got) != 0 {
		t.Errorf("hostile requests wrote %v, want nothing", got)
	}
	if got := s.messages(t); len(got) != 0 {
		t.Errorf("hostile requests sent %v, want nothing", got)
	}
}

// TestIntegrationGoPayImpossibleIDsChangeNothing: a GoPay notification
// whose id GoPay cannot issue (GoPay's payment ids are positive int64s) is
// refused with 400 before any write: no inbox item, no message, so it can
// neither be fetched nor parked.
func TestIntegrationGoPayImpossibleIDsChangeNothing(t *testing.T) {
	s := newRealStack(t, nil)
	emu := devstacktest.ForTest(t)
	in := intake.New(intake.Config{Now: fixed}, inbox.NewDynamoDB(emu.DynamoDB(), s.table), queue.New(emu.SQS(), s.queue), nil)
	h := receiver.New(receiver.Config{}, allProviders(t, fixed), in, nil)
	for _, id := range []string{
		"9999999999999999999",  // 19 digits, above 2^63-1
		"9223372036854775808",  // 2^63
		"99999999999999999999", // 20 digits
		"", "0", "0123", "-1", "+1", "12a", "1.5", "1e9", " 1", "1,2", "３０００",
	} {
		resp, _ := h.Handle(context.Background(), lambdalocal.GoPayNotification(id))
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("id %q: status %d (%s), want 400", id, resp.StatusCode, resp.Body)
		}
	}
	if got := s.items(t); len(got) != 0 {
		t.Errorf("impossible GoPay ids wrote %v, want nothing", got)
	}
	if got := s.messages(t); len(got) != 0 {
		t.Errorf("impossible GoPay ids sent %v, want nothing", got)
	}
	// The largest id GoPay can issue is claimed as usual.
	resp, _ := h.Handle(context.Background(), lambdalocal.GoPayNotification("9223372036854775807"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("id 2^63-1: status %d (%s), want 200", resp.StatusCode, resp.Body)
	}
}
