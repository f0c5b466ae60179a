package devstack

import (
	"context"
	"testing"
)

// TestCreateStackWithParams: parameter values name the tables and reach
// the functions' environment, over the defaults.
func TestCreateStackWithParams(t *testing.T) {
	name := UniqueStackName()
	s, err := forTest(t).CreateStackWith(context.Background(), parseInline(t), name, map[string]string{"Suffix": "notes"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Delete(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if got := s.Tables["Items"]; got != name+"-notes" {
		t.Errorf("Tables[Items] = %q, want %q (the Suffix given)", got, name+"-notes")
	}
	env, err := s.FunctionEnv("Fn")
	if err != nil {
		t.Fatal(err)
	}
	if env["TABLE"] != name+"-notes" {
		t.Errorf("TABLE = %q, want %q", env["TABLE"], name+"-notes")
	}
}
