package standin

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
)

// SecretsManager answers AWS Secrets Manager's GetSecretValue (JSON 1.1,
// X-Amz-Target secretsmanager.GetSecretValue) from the secrets Put gave
// it, by ARN or name: a destination's signing secret on the local stack.
// Point a client at it with AWS_ENDPOINT_URL_SECRETS_MANAGER.
type SecretsManager struct {
	mu     sync.Mutex
	values map[string]string // by ARN
	reads  int
}

// NewSecretsManager returns a Secrets Manager stand-in holding no secret.
func NewSecretsManager() *SecretsManager { return &SecretsManager{values: map[string]string{}} }

// Put sets the SecretString of the secret arn.
func (s *SecretsManager) Put(arn, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values[arn] = value
}

// Reads returns how many GetSecretValue calls were answered with a value.
func (s *SecretsManager) Reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// ServeHTTP implements http.Handler.
func (s *SecretsManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if target := r.Header.Get("X-Amz-Target"); r.Method != http.MethodPost || target != "secretsmanager.GetSecretValue" {
		awsJSONError(w, http.StatusBadRequest, "InvalidRequestException", "unexpected "+r.Method+" "+target)
		return
	}
	var in struct{ SecretId string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.SecretId == "" {
		awsJSONError(w, http.StatusBadRequest, "InvalidParameterException", "want a SecretId")
		return
	}
	s.mu.Lock()
	arn, value, ok := s.lookup(in.SecretId)
	if ok {
		s.reads++
	}
	s.mu.Unlock()
	if !ok {
		awsJSONError(w, http.StatusBadRequest, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
		return
	}
	_, name, _ := strings.Cut(arn, ":secret:")
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"ARN": arn, "Name": name, "SecretString": value,
		"VersionId": "00000000-0000-4000-8000-000000000001", "VersionStages": []string{"AWSCURRENT"},
	})
}

// lookup finds the secret id names: its ARN, or the name in an ARN.
// The caller holds s.mu.
func (s *SecretsManager) lookup(id string) (arn, value string, ok bool) {
	if v, ok := s.values[id]; ok {
		return id, v, true
	}
	for arn, v := range s.values {
		if _, name, _ := strings.Cut(arn, ":secret:"); name == id {
			return arn, v, true
		}
	}
	return "", "", false
}

// awsJSONError writes an AWS JSON-protocol error.
func awsJSONError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
}
