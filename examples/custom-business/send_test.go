package custombusiness_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/hookinbox/hookinbox/webhook"

	"example.com/custom-business/warehouse"
)

// TestSendWarehouse: this module's CLI (`go tool hookinbox`, its own main
// with the warehouse provider) sends testdata/warehouse's
// shipment.dispatched with a fresh id (the warehouse's Sample), signed
// with the warehouse's signer, and the warehouse's verifier accepts it.
func TestSendWarehouse(t *testing.T) {
	v, err := warehouse.Provider{}.Verifier([]string{"whsec_local"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		got []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		evs, err := v.Verify(r.Context(), webhook.Request{Header: map[string]string{warehouse.Header: r.Header.Get(warehouse.Header)}, Body: body})
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		got = append(got, evs[0].Key().String()+" "+evs[0].Type)
		mu.Unlock()
		fmt.Fprint(w, `{"status":"accepted"}`)
	}))
	defer srv.Close()
	out, err := exec.Command("go", "tool", "hookinbox", "send", "warehouse", "shipment.dispatched",
		"--url", srv.URL, "--secret", "whsec_local", "--state-file", filepath.Join(t.TempDir(), "none.json")).CombinedOutput()
	m := regexp.MustCompile(`(warehouse#wh_evt_\w{24}) shipment.dispatched → accepted`).FindStringSubmatch(string(out))
	if err != nil || m == nil {
		t.Fatalf("go tool hookinbox send warehouse: %v\n%s", err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := m[1] + " shipment.dispatched"; len(got) != 1 || got[0] != want {
		t.Errorf("the warehouse's verifier saw %v, want %s", got, want)
	}
}
