package lambdafn

import (
	"fmt"
	"io"
	"os"

	"github.com/hookinbox/hookinbox/internal/platform/metrics"
)

// defaultMetricsNamespace is the CloudWatch namespace when
// METRICS_NAMESPACE is unset; the template sets hookinbox/<stack name>.
const defaultMetricsNamespace = "hookinbox"

// Recorder returns the function's metrics recorder: embedded-metric-format
// lines on stdout (where Lambda ships them to CloudWatch Logs) under
// METRICS_NAMESPACE, or appended to the file METRICS_FILE when set (the
// local stack, whose `hookinbox status` reads them back).
func Recorder(getenv func(string) string) (*metrics.Recorder, error) {
	ns := getenv("METRICS_NAMESPACE")
	if ns == "" {
		ns = defaultMetricsNamespace
	}
	var w io.Writer = os.Stdout
	if path := getenv("METRICS_FILE"); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("METRICS_FILE: %w", err)
		}
		w = f // open for the life of the process, as stdout is
	}
	return metrics.New(w, ns), nil
}
