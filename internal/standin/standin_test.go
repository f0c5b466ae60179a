package standin

import (
	"context"
	"net/http"
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
