package cli

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

func TestDevBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"dev", "--addr", l.Addr().String(), "--state-file", filepath.Join(t.TempDir(), "state.json")}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "pass --addr 127.0.0.1:4000") {
		t.Errorf("dev on a busy port: exit %d, stderr %q; want 1 and advice to pick another port", code, &stderr)
	}
}

func TestDevCommandLine(t *testing.T) {
	checkCommandLines(t, Options{}, []commandLine{
		{[]string{"dev", "-h"}, 0, "-rie", ""},
		{[]string{"dev", "now"}, 2, "", "dev takes no arguments"},
		{[]string{"dev", "--env", "NOEQUALS"}, 2, "", "want KEY=VALUE"},
		{[]string{"dev", "--secret", ""}, 2, "", "--secret must not be empty"},
		{[]string{"dev", "--forward-secret", "whpk_x"}, 2, "", "--forward-secret: want whsec_ secrets"},
	})
}
