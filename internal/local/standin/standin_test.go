package standin

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	sestypes "github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/google/go-cmp/cmp"
)

func TestSESRecordsWhatTheSDKSends(t *testing.T) {
	ses := NewSES()
	srv, err := Serve(ses, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Errorf("stand-in listens on %s, want 127.0.0.1", srv.URL)
	}
	client := sesv2.New(sesv2.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	send := func(to string) error {
		_, err := client.SendEmail(context.Background(), &sesv2.SendEmailInput{
			FromEmailAddress: aws.String("shop@example.com"),
			Destination:      &sestypes.Destination{ToAddresses: []string{to}},
			Content: &sestypes.EmailContent{Simple: &sestypes.Message{
				Subject: &sestypes.Content{Data: aws.String("Welcome")},
				Body:    &sestypes.Body{Text: &sestypes.Content{Data: aws.String("hi")}},
			}},
			EmailTags: []sestypes.MessageTag{{Name: aws.String("k"), Value: aws.String("v")}},
		})
		return err
	}
	if err := send("a@example.com"); err != nil {
		t.Fatal(err)
	}
	ses.FailFor("b@example.com", http.StatusBadRequest)
	if err := send("b@example.com"); err == nil {
		t.Error("send to a failing recipient succeeded")
	}
	got := ses.Sent()
	if len(got) != 1 || got[0].To != "a@example.com" || got[0].From != "shop@example.com" || got[0].Subject != "Welcome" || got[0].Tags["k"] != "v" {
		t.Errorf("sent = %+v", got)
	}
}

func TestStripeInvoicesReplayIdempotencyKeys(t *testing.T) {
	s := NewStripe()
	s.Key = "sk_test_x"
	srv, err := Serve(s, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	post := func(key, customer, apiKey string) int {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/invoices", strings.NewReader("customer="+customer))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "Bearer "+apiKey)
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	s.FailNext(500)
	codes := []int{post("k1", "cus_1", "sk_test_x"), post("k1", "cus_1", "sk_test_x"), post("k1", "cus_1", "sk_test_x"), post("k2", "cus_2", "sk_test_x"), post("k3", "cus_3", "wrong")}
	if diff := cmp.Diff([]int{500, 200, 200, 200, 401}, codes); diff != "" {
		t.Errorf("status codes (-want +got):\n%s", diff)
	}
	if got := s.Invoices(); len(got) != 2 {
		t.Errorf("invoices = %v, want 2 (one per idempotency key)", got)
	}
}

// TestStripeRefusesOnceTheCustomerItDoesNotKnowYet checks RefusedOnce:
// the first invoice call of each event for that customer is refused, as
// permanently as Stripe refuses an unknown customer, and the next call of
// the same event (its replay) creates the invoice.
func TestStripeRefusesOnceTheCustomerItDoesNotKnowYet(t *testing.T) {
	s := NewStripe()
	srv, err := Serve(s, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	post := func(event, customer string) (int, string) {
		form := url.Values{"customer": {customer}, "metadata[hookinbox_event]": {event}}
		req, _ := http.NewRequest("POST", srv.URL+"/v1/invoices", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Idempotency-Key", event+"/create-invoice")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := post("stripe#evt_1", RefusedOnce)
	if code != http.StatusBadRequest || !strings.Contains(body, "No such customer") || !strings.Contains(body, "replay it") {
		t.Errorf("first call: %d %s, want 400 No such customer, saying a replay succeeds", code, body)
	}
	var codes []int
	for _, call := range [][2]string{{"stripe#evt_1", RefusedOnce}, {"stripe#evt_2", RefusedOnce}, {"stripe#evt_2", RefusedOnce}, {"stripe#evt_3", "cus_3"}} {
		code, _ := post(call[0], call[1])
		codes = append(codes, code)
	}
	if diff := cmp.Diff([]int{200, 400, 200, 200}, codes); diff != "" {
		t.Errorf("status codes (-want +got):\n%s", diff)
	}
	if got := s.Invoices(); len(got) != 3 {
		t.Errorf("invoices = %v, want 3 (one per event)", got)
	}
}

func TestStripeSubscriptionsFollowEvents(t *testing.T) {
	s := NewStripe()
	srv, err := Serve(s, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	get := func(id string) (int, string) {
		resp, err := http.Get(srv.URL + "/v1/subscriptions/" + id)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var sub struct{ Status, Customer string }
		_ = json.NewDecoder(resp.Body).Decode(&sub)
		return resp.StatusCode, sub.Status + "/" + sub.Customer
	}
	event := func(created int64, status string) []byte {
		return []byte(`{"id":"evt_1","object":"event","type":"customer.subscription.updated","created":` + strconv.FormatInt(created, 10) +
			`,"data":{"object":{"id":"sub_1","object":"subscription","customer":"cus_1","status":"` + status + `"}}}`)
	}
	if code, _ := get("sub_1"); code != http.StatusNotFound {
		t.Errorf("unknown subscription: %d, want 404", code)
	}
	s.Apply(event(200, "canceled"))
	s.Apply(event(100, "active")) // older, delivered later
	if code, got := get("sub_1"); code != 200 || got != "canceled/cus_1" {
		t.Errorf("after two events: %d %s, want 200 canceled/cus_1", code, got)
	}
	s.SetSubscription("sub_1", "cus_1", "past_due")
	if _, got := get("sub_1"); got != "past_due/cus_1" {
		t.Errorf("after SetSubscription: %s, want past_due/cus_1", got)
	}
}

func TestStripeListsInvoicesAndForgetsKeys(t *testing.T) {
	s := NewStripe()
	srv, err := Serve(s, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	post := func(key, customer string) {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/invoices", strings.NewReader("customer="+customer+"&metadata[hookinbox_event]=stripe%23evt_"+key))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	post("k1", "cus_1")
	post("k2", "cus_2")
	post("k1", "cus_1") // replayed
	s.ForgetIdempotencyKeys()
	post("k1", "cus_1") // a new invoice: the key is forgotten
	resp, err := http.Get(srv.URL + "/v1/invoices?customer=cus_1&limit=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		HasMore bool `json:"has_more"`
		Data    []struct {
			ID       string
			Metadata map[string]string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || !page.HasMore || page.Data[0].Metadata["hookinbox_event"] != "stripe#evt_k1" {
		t.Errorf("first page of cus_1's invoices = %+v, want one with metadata and has_more", page)
	}
	if got := s.Invoices(); len(got) != 3 {
		t.Errorf("invoices = %v, want 3", got)
	}
}

// The local stack adds GitHub deliveries and Shopify orders over HTTP;
// they are served as the tests' are.
func TestGitHubAndShopifyTakeTheirDataOverHTTP(t *testing.T) {
	do := func(h http.Handler, method, path, body string, header map[string]string) (int, string) {
		t.Helper()
		srv, err := Serve(h, "")
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	gh := NewGitHub("ghp_1")
	if code, body := do(gh, "POST", "/_standin/deliveries/repos/a/b/hooks/1", `{"guid":"g-1","event":"push","status_code":502,"payload":{"ref":"main"}}`, nil); code != 200 {
		t.Fatalf("add delivery: %d %s", code, body)
	}
	if code, body := do(gh, "GET", "/repos/a/b/hooks/1/deliveries/1", "", map[string]string{"Authorization": "Bearer ghp_1"}); code != 200 ||
		!strings.Contains(body, `"payload":{"ref":"main"}`) || !strings.Contains(body, `"status":"failed"`) {
		t.Errorf("record: %d %s", code, body)
	}
	sh := NewShopify("shpat_1")
	if code, body := do(sh, "PUT", "/_standin/orders", `{"id":9,"financial":"PAID","total_price":"1.00","currency":"EUR","line_items":[{"sku":"S","quantity":1}]}`, nil); code != 200 {
		t.Fatalf("set order: %d %s", code, body)
	}
	q := `{"query":"query Orders","variables":{"first":10,"q":"financial_status:paid"}}`
	if code, body := do(sh, "POST", "/admin/api/2025-07/graphql.json", q, map[string]string{"X-Shopify-Access-Token": "shpat_1"}); code != 200 ||
		!strings.Contains(body, `"legacyResourceId":"9"`) {
		t.Errorf("orders: %d %s", code, body)
	}
}
