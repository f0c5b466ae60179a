package awsapi

import (
	"encoding/json"
	"reflect"
	"testing"
)

// scalarCases are values as DynamoDB writes them (fast: scalarValue
// decodes them itself) and values it must leave to encoding/json.
var scalarCases = []struct {
	data string
	fast bool
}{
	{`{"S":"stripe#evt_1"}`, true},
	{`{"S":""}`, true},
	{`{"S":"café ✓"}`, true},
	{`{"N":"-12.5e3"}`, true},
	{`{"B":"AAEC/w=="}`, true},
	{`{"B":""}`, true},
	{`{"BOOL":true}`, true},
	{`{"BOOL":false}`, true},
	{`{"NULL":true}`, true},
	{`{"S":"a\"b"}`, false},
	{`{"S":"\u00e9"}`, false},
	{`{"S":"tab\tin"}`, false},
	{"{\"S\":\"\xff\"}", false},
	{`{ "S":"x"}`, false},
	{`{"S": "x"}`, false},
	{`{"s":"x"}`, false},
	{`{"S":"a","N":"1"}`, false},
	{`{"B":"!!"}`, false},
	{`{"NULL":false}`, false},
	{`{"BOOL":1}`, false},
	{`{"M":{"S":{"S":"x"}}}`, false},
	{`{"L":[{"S":"x"}]}`, false},
	{`{"SS":["a","b"]}`, false},
	{`{"S":`, false},
	{`{}`, false},
}

// TestScalarValueDecodesAsEncodingJSON: what scalarValue decodes is what
// encoding/json decodes, and what it leaves alone UnmarshalJSON still
// decodes as encoding/json does (or refuses alike).
func TestScalarValueDecodesAsEncodingJSON(t *testing.T) {
	for _, tc := range scalarCases {
		fast, ok := scalarValue([]byte(tc.data))
		if ok != tc.fast {
			t.Errorf("scalarValue(%s) took it: %v, want %v", tc.data, ok, tc.fast)
		}
		want, werr := decodeWire([]byte(tc.data))
		if ok && (werr != nil || !reflect.DeepEqual(fast, want)) {
			t.Errorf("scalarValue(%s) = %#v; encoding/json: %#v, %v", tc.data, fast, want, werr)
		}
		var got AttributeValue
		err := got.UnmarshalJSON([]byte(tc.data))
		if (err != nil) != (werr != nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("UnmarshalJSON(%s) = %#v, %v; encoding/json: %#v, %v", tc.data, got, err, want, werr)
		}
	}
}

// FuzzScalarValue: whatever scalarValue takes, encoding/json decodes to
// the same value.
func FuzzScalarValue(f *testing.F) {
	for _, tc := range scalarCases {
		f.Add([]byte(tc.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := scalarValue(data)
		if !ok {
			return
		}
		want, err := decodeWire(data)
		if err != nil || !reflect.DeepEqual(fast, want) {
			t.Errorf("scalarValue(%q) = %#v; encoding/json: %#v, %v", data, fast, want, err)
		}
	})
}

// BenchmarkDecodeRefusedClaim is the decoding of DynamoDB's answer to a
// refused claim: the stored status item, returned with the refusal
// (ReturnValuesOnConditionCheckFailure ALL_OLD), which every duplicate
// delivery reads.
func BenchmarkDecodeRefusedClaim(b *testing.B) {
	item, err := claimInput().Item.MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	data := []byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed","Item":` + string(item) + `}`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if body := decodeErrorBody(data); len(body.Item) != 14 {
			b.Fatal(len(body.Item))
		}
	}
}

// refusedClaim is a refused claim's body as DynamoDB writes it.
func refusedClaim(t testing.TB) string {
	item, err := claimInput().Item.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed","Item":` + string(item) + `}`
}

// errorBodyCases are error bodies fastErrorBody decodes itself, and
// bodies it must leave to encoding/json.
var errorBodyCases = []struct {
	data string
	fast bool
}{
	{`{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}`, true},
	{`{"__type":"x#ConditionalCheckFailedException","message":"m","Item":{"pk":{"S":"stripe#evt_1"},"n":{"N":"12"},"b":{"B":"AAE="},"t":{"BOOL":true},"f":{"BOOL":false},"z":{"NULL":true}}}`, true},
	{`{"__type":"T","Item":{}}`, true},
	{`{"__type":"T","Item":{"a":{"S":"1"},"a":{"S":"2"}}}`, true},
	{`{"code":"AccessDenied","Message":"no"}`, true},
	{`{}`, true},
	{`{"__type":"T","Item":null}`, false},
	{`{"__type":"T","__type":"U"}`, false},
	{`{"__type":"T","item":{}}`, false},
	{`{"__type":"T","MESSAGE":"m"}`, false},
	{`{"__type":"T","other":1}`, false},
	{`{"__type":"a"b"}`, false},
	{`{ "__type":"T"}`, false},
	{`{"__type":"T"} `, false},
	{`{"__type":"T",}`, false},
	{`{"__type":5}`, false},
	{`{"Item":{"m":{"M":{"a":{"S":"x"}}}}}`, false},
	{`{"Item":{"s":{"SS":["a"]}}}`, false},
	{`{"Item":{"s":{"S":"x","N":"1"}}}`, false},
	{`{"Item":{"b":{"B":"!!"}}}`, false},
	{"{\"message\":\"\xff\"}", false},
	{`not json`, false},
	{``, false},
}

// TestErrorBodyDecodesAsEncodingJSON: what fastErrorBody decodes is what
// encoding/json decodes, and decodeErrorBody decodes every body as
// encoding/json does, fast or not (a refused claim's included).
func TestErrorBodyDecodesAsEncodingJSON(t *testing.T) {
	cases := append(errorBodyCases, struct {
		data string
		fast bool
	}{refusedClaim(t), true})
	for _, tc := range cases {
		var want errorBody
		_ = json.Unmarshal([]byte(tc.data), &want)
		fast, ok := fastErrorBody([]byte(tc.data))
		if ok != tc.fast {
			t.Errorf("fastErrorBody(%.80s) took it: %v, want %v", tc.data, ok, tc.fast)
		}
		if ok && !reflect.DeepEqual(fast, want) {
			t.Errorf("fastErrorBody(%.80s) = %#v; encoding/json: %#v", tc.data, fast, want)
		}
		if got := decodeErrorBody([]byte(tc.data)); !reflect.DeepEqual(got, want) {
			t.Errorf("decodeErrorBody(%.80s) = %#v; encoding/json: %#v", tc.data, got, want)
		}
	}
}

// FuzzErrorBody: whatever fastErrorBody takes is valid JSON that
// encoding/json decodes to the same.
func FuzzErrorBody(f *testing.F) {
	for _, tc := range errorBodyCases {
		f.Add([]byte(tc.data))
	}
	f.Add([]byte(refusedClaim(f)))
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := fastErrorBody(data)
		if !ok {
			return
		}
		var want errorBody
		if err := json.Unmarshal(data, &want); err != nil || !reflect.DeepEqual(fast, want) {
			t.Errorf("fastErrorBody(%q) = %#v; encoding/json: %#v, %v", data, fast, want, err)
		}
	})
}
